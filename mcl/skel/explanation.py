"""What a skeleton program moves over which link and computes on which device, on a
node described in HDL (devices, their memory and peak, the links between them).

``explain(fn, *args, node="h200x2")`` runs ``fn`` and records every skeleton call
and every transfer (the ones the host's reads cause too); each transfer is timed on
the node's link between its ends (device to device over a link connecting two
devices, e.g. NVLink, else through the host; host to device over the host link,
e.g. PCIe), and each call's work on each device gets a roofline: its operations
over the device's peak against its compulsory bytes over the memory bandwidth.
The devices of the run are the node's devices in order (device g is unit g)."""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass, field
from pathlib import Path

from mcl.analyses.values import time_text
from mcl.skel.context import Transfer
from mcl.skel.errors import skel_error

NODES = Path(__file__).resolve().parent / "nodes"

_recording: list[Explanation] = []


def recording() -> bool:
    return bool(_recording)


@dataclass
class Link:
    name: str
    bandwidth: float | None         # bytes/s
    latency_s: float


@dataclass
class Node:
    """The facts explain needs from a node description."""

    name: str
    devices: int
    unit: str                       # "gpus.gpu": the device_group of devices
    peak_flops: float | None        # per device
    bandwidth: float | None         # device memory, bytes/s
    host_link: Link | None
    device_link: Link | None

    def link(self, t: Transfer) -> tuple[str, float | None]:
        """The link a transfer uses and its time on it (None where unknown)."""
        if t.kind == "device" and self.device_link is not None and not t.via_host:
            return self.device_link.name, _time(t.nbytes, self.device_link)
        host = self.host_link
        name = host.name if host else "host link"
        seconds = _time(t.nbytes, host) if host else None
        if t.kind in ("device", "mpi") and seconds is not None:
            return f"{name} (through the host)", 2 * seconds
        return name, seconds


def _time(nbytes: int, link: Link) -> float | None:
    if not link.bandwidth:
        return None
    return link.latency_s + nbytes / link.bandwidth


def load_node(name: str = "h200x2", search_path=()) -> Node:
    """The node description ``name`` (the bundled ones in mcl/skel/nodes, or a
    directory of ``search_path``)."""
    from mcl.diagnostics import McplError
    from mcl.hdl import HardwareLibrary
    from mcl.hdl.blocks import DeviceGroup, Interconnect
    lib = HardwareLibrary([NODES, *search_path])
    if name not in lib:
        # a file NAME.hdl that does not parse names no description: its errors say why
        unread = [d for d in lib.load_diagnostics if d.is_error and d.span is not None
                  and Path(d.span.file).stem == name]
        if unread:
            raise McplError(unread)
        bundled = ", ".join(p.stem for p in NODES.glob("*.hdl"))
        p = Path(name)
        if p.suffix == ".hdl" or len(p.parts) > 1 or p.is_dir():
            raise skel_error("unknown-node", f"--node takes the name of a node description, "
                             f"not a path: '{name}'",
                             hint=f"bundled nodes: {bundled}; one of your own: --node NAME "
                                  "--hwd-path DIR, DIR the folder of NAME.hdl")
        raise skel_error("unknown-node", f"no node description '{name}'",
                         hint=f"bundled nodes: {bundled}; one of your own: --node NAME "
                              "--hwd-path DIR, DIR the folder of NAME.hdl")
    diags = [d for d in lib.diagnostics(name) if d.is_error]
    if diags:
        raise McplError(diags)
    hw = lib.get(name)
    blocks = [p.block for p in hw.device_positions()]
    groups = [b for b in blocks if isinstance(b, DeviceGroup) and b.unit is not None
              and any(c.kind in ("memory", "execution_group") for c in b.unit.children)]
    if not groups:
        raise skel_error("bad-node", f"'{name}' has no device_group of devices with memory "
                         "and execution units", hint="see mcl/skel/nodes/h200x2.hdl")
    gpus = groups[0]
    count = gpus.size if isinstance(gpus.size, int) else 1
    clock = hw.clock_frequency() or 1e9
    host_link = device_link = None
    for b in blocks:
        if not isinstance(b, Interconnect):
            continue
        ends = [e.text for e in b.endpoints]
        unit = f"{gpus.name}.{gpus.unit.name}"
        on_units = [e for e in ends if e.startswith(unit)]
        latency = b.latency
        lat_s = float(latency) / clock if isinstance(latency, int | float) else 0.0
        bw = float(b.bandwidth) if isinstance(b.bandwidth, int | float) else None
        if len(on_units) == len(ends) == 2:
            device_link = Link(b.name, bw, lat_s)
        elif len(on_units) == 1:
            host_link = Link(b.name, bw, lat_s)
    peak = hw.peak_flops()
    bandwidth = max((b for b in (hw.memory_bandwidth(ms.name) for ms in hw.memory_spaces())
                     if b), default=None)
    return Node(name, count, f"{gpus.name}.{gpus.unit.name}", peak / count if peak else None,
                bandwidth, host_link, device_link)


@dataclass
class Call:
    skeleton: str
    function: str
    transfers: list[Transfer]
    #: device -> (elements computed, operations, compulsory bytes)
    work: dict[int, tuple[int, float, float]] = field(default_factory=dict)


@dataclass
class Explanation:
    node: Node
    calls: list[Call] = field(default_factory=list)
    other: list[tuple[int, Transfer]] = field(default_factory=list)   # (after call i, t)
    run_devices: int | None = None      # the devices the run had (the node's: all of them)
    _log_start: int = 0
    _seen: int = 0

    def lines(self) -> list[str]:
        out = [f"on node '{self.node.name}' ({self.node.devices} devices"
               + (f", {self.node.peak_flops / 1e12:.1f} TFLOP/s" if self.node.peak_flops
                  else "")
               + (f" and {self.node.bandwidth / 1e9:.0f} GB/s each" if self.node.bandwidth
                  else "") + "):"]
        if self.run_devices is not None and self.run_devices != self.node.devices:
            out.append(f"note: the run had {self.run_devices} device(s), so the data went to "
                       f"{self.place(0)}"
                       + (f" .. {self.place(self.run_devices - 1)}" if self.run_devices > 1
                          else "")
                       + " only; mcl.skel.init(num_devices=N) gives it more where the "
                         "platform has them")
        for i, c in enumerate(self.calls):
            out += self._between(i - 1)
            out.append(f"{c.skeleton} '{c.function}':")
            out += ["  " + line for line in self._moves(c.transfers)]
            for g, (elements, ops, nbytes) in sorted(c.work.items()):
                out.append("  " + self._roofline(g, elements, ops, nbytes))
        out += self._between(len(self.calls) - 1)
        return out

    def _between(self, after: int) -> list[str]:
        moves = [t for j, t in self.other if j == after]
        if not moves:
            return []
        return ["host reads and writes:"] + ["  " + line for line in self._moves(moves)]

    def __str__(self) -> str:
        return "\n".join(self.lines())

    def _moves(self, transfers: list[Transfer]) -> list[str]:
        groups: dict[tuple, list[Transfer]] = {}
        for t in transfers:
            groups.setdefault((t.what, t.src_device, t.dst_device), []).append(t)
        out = []
        for (what, _, _), ts in groups.items():
            src, dst = self.place(ts[0].src_device), self.place(ts[0].dst_device)
            link, _ = self.node.link(ts[0])
            times = [self.node.link(t)[1] for t in ts]
            when = f" ({time_text(sum(times))})" if None not in times else ""
            out.append(f"{what}: moves {_fmt_bytes(sum(t.nbytes for t in ts))} {src} -> "
                       f"{dst} over {link}{when}")
        return out

    def place(self, g: int | None) -> str:
        return "host" if g is None else f"{self.node.unit}[{g}]"

    def _roofline(self, g, elements, ops, nbytes) -> str:
        n = self.node
        t_ops = ops / n.peak_flops if n.peak_flops else None
        t_mem = nbytes / n.bandwidth if n.bandwidth else None
        times = [t for t in (t_ops, t_mem) if t is not None]
        bound = ""
        if t_ops is not None and t_mem is not None:
            bound = ", compute bound" if t_ops > t_mem else ", memory bound"
        need = f"; needs {time_text(max(times))}{bound}" if times else ""
        return (f"{self.place(g)}: {elements} elements, {ops:.3g} operations, "
                f"{_fmt_bytes(nbytes)} of memory traffic{need}")


def _fmt_bytes(n: float) -> str:
    for unit in ("B", "kB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.3g} {unit}"
        n /= 1000
    return f"{n} B"


_OPS = re.compile(r"(?<![+\-*/=<>!&|])([+\-*/])(?![+\-=])")


def operations_per_call(func) -> int:
    """Operations per call of a customising function: mcl's operation statistics for
    an MCPL function; for OpenCL C the arithmetic operators of its text (each loop
    body counted once, so a lower bound)."""
    if func.flops is not None:
        return max(1, func.flops)
    source = func.source
    body = source[source.find("{") + 1:] if "{" in source else source
    body = re.sub(r"for\s*\([^)]*\)", " ", body)
    body = re.sub(r"//[^\n]*|/\*.*?\*/", " ", body, flags=re.S)
    return max(1, len(_OPS.findall(body)))


def record(sk, args, kwargs, out, transfers) -> None:
    ex = _recording[-1]
    devs = next(a._devs for a in args if hasattr(a, "_devs"))
    _collect_other(ex, devs, len(devs.log) - len(transfers))
    ops = operations_per_call(sk.func)
    if getattr(sk, "zip", None) is not None:
        ops = operations_per_call(sk.zip) + operations_per_call(sk.reduce)
    call = Call(sk.name, sk.func.name, list(transfers))
    # a deferred Map or Zip (Reduce computes it): its inputs are what the call reads
    for a in args:
        if hasattr(a, "compute"):
            ops += operations_per_call(a.skeleton.func)
    args = [y for a in args for y in (a.inputs if hasattr(a, "compute") else (a,))]
    containers = [a for a in args if hasattr(a, "_parts")]
    item_bytes = sum(a.dtype.itemsize for a in containers if a.kind != "IndexVector")
    iterations = kwargs.get("iterations", 1)
    if hasattr(out, "_parts"):
        item_bytes += out.dtype.itemsize
        inner = containers[0].cols if sk.name == "AllPairs" else 1
        for p in out._parts:
            s = p.spec
            if s.own_hi > s.own_lo:
                elements = (s.own_hi - s.own_lo) * out.row_size
                if sk.name == "Reduce":
                    continue
                nbytes = elements * item_bytes * max(1, iterations)
                if sk.name == "AllPairs":
                    b = containers[1]
                    nbytes = elements * out.dtype.itemsize + (s.own_hi - s.own_lo) * \
                        containers[0].row_size * containers[0].dtype.itemsize + b.nbytes
                call.work[s.device] = (elements, float(elements * ops * inner
                                                       * max(1, iterations)), float(nbytes))
    if sk.name == "Reduce":
        x = containers[0]
        read = sum(c.dtype.itemsize for c in containers if c.kind != "IndexVector")
        for p in x._parts:
            s = p.spec
            n = (s.own_hi - s.own_lo) * x.row_size
            if n:
                call.work[s.device] = (n, float(n * ops), float(n * read))
            if x.distribution.kind == "copy":
                break
    ex.calls.append(call)
    ex._seen = len(devs.log)


def _collect_other(ex: Explanation, devs, upto: int) -> None:
    for t in devs.log[max(ex._seen, ex._log_start):upto]:
        ex.other.append((len(ex.calls) - 1, t))
    ex._seen = max(ex._seen, upto)


@contextlib.contextmanager
def explaining(node: str = "h200x2", search_path=()):
    """Record the skeleton calls and transfers made inside the ``with`` block."""
    from mcl.skel.context import current
    devs = current()
    ex = Explanation(load_node(node, search_path), run_devices=devs.count)
    ex._log_start = ex._seen = len(devs.log)
    _recording.append(ex)
    try:
        yield ex
    finally:
        _recording.pop()
        devs = current()
        _collect_other(ex, devs, len(devs.log))


def explain(fn, *args, node: str = "h200x2", search_path=(), **kwargs) -> Explanation:
    """Run ``fn(*args, **kwargs)`` and explain its skeleton calls on ``node``."""
    with explaining(node, search_path) as ex:
        fn(*args, **kwargs)
    return ex
