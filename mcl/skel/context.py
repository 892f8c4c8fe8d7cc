"""The devices mcl.skel runs on: one OpenCL context over the devices of a platform,
a queue per device, and (under MPI) the ranks that each drive their own devices.

``init(num_devices=None, platform=None, device_type=None)`` chooses them; every
container and skeleton made afterwards uses them. Without a call, the first use
initialises with every device of the platform that ``mcl devices`` would pick."""

from __future__ import annotations

import numbers
import os
from dataclasses import dataclass, field

from mcl.opencl import device as cldevice
from mcl.skel.errors import skel_error


@dataclass
class Transfer:
    """One data movement: ``kind`` is upload, download, device (between devices of this
    process) or mpi (between ranks); ``src``/``dst`` name the places."""

    kind: str
    src: str
    dst: str
    nbytes: int
    what: str = ""
    #: global device numbers of the ends (None: the host)
    src_device: int | None = None
    dst_device: int | None = None
    #: a copy between devices staged through host memory (not peer to peer)
    via_host: bool = False


@dataclass
class Devices:
    """The devices of this process and, under MPI, the global numbering of all ranks'
    devices: global device g is local device g % per_rank of rank g // per_rank."""

    context: object
    devices: list
    queues: list
    rank: int = 0
    ranks: int = 1
    comm: object = None
    #: every transfer performed, in order (benchmarks and explain read it)
    log: list[Transfer] = field(default_factory=list)
    generation: int = 0
    #: copies between devices as OpenCL commands between device buffers (True) or
    #: staged through pinned host memory (False). Either way a copy moves only its
    #: rows: the peer path copies them into a small buffer first (see transfer.py)
    peer_copies: bool = False
    #: pinned host memory and small device buffers for copies between devices, kept
    #: for reuse (transfer.py), by size
    staging: dict = field(default_factory=dict)
    #: per device: (largest buffer, memory, largest work-group), asked once
    limits: dict = field(default_factory=dict)
    #: per device: a small buffer passed where a kernel has a pointer but no data
    empty: dict = field(default_factory=dict)
    #: the queues time every command (OpenCL profiling; see init)
    profiling: bool = False
    #: per device: its name in messages and logs, asked once
    names: dict = field(default_factory=dict)
    #: per local device: a second queue for the copies of halo exchanges, made on first
    #: use (they then overlap the device's kernels; see stencil.py)
    copy_queues: dict = field(default_factory=dict)

    @property
    def per_rank(self) -> int:
        return len(self.devices)

    @property
    def count(self) -> int:
        """Devices over all ranks."""
        return len(self.devices) * self.ranks

    def is_local(self, g: int) -> bool:
        return g // self.per_rank == self.rank

    def local(self, g: int) -> int:
        return g % self.per_rank

    def owner(self, g: int) -> int:
        return g // self.per_rank

    def queue(self, g: int):
        return self.queues[self.local(g)]

    def copy_queue(self, g: int):
        """Device ``g``'s queue for copies that run beside its kernels (ordered against
        them by events only)."""
        q = self.copy_queues.get(self.local(g))
        if q is None:
            import pyopencl as cl
            q = self.copy_queues[self.local(g)] = cl.CommandQueue(
                self.context, self.device(g),
                properties=cl.command_queue_properties.PROFILING_ENABLE
                if self.profiling else 0)
        return q

    def device(self, g: int):
        return self.devices[self.local(g)]

    def name(self, g: int) -> str:
        known = self.names.get(g)
        if known is None:       # a driver query each time otherwise (in every log entry)
            where = f"rank {self.owner(g)} " if self.ranks > 1 else ""
            known = self.names[g] = \
                f"{where}device {g} ({self.devices[self.local(g)].name.strip()})"
        return known

    def check_index(self, g: int) -> int:
        if not isinstance(g, int) or not 0 <= g < self.count:
            raise skel_error("no-such-device", f"there is no device {g}: mcl.skel runs on "
                             f"{self.count} device(s), numbered 0 to {self.count - 1}",
                             hint="mcl.skel.init(num_devices=...) chooses how many")
        return g

    def limit(self, g: int) -> tuple[int, int, int]:
        """(largest buffer, global memory, largest work-group) of device ``g``."""
        lim = self.limits.get(g)
        if lim is None:
            d = self.device(g)
            lim = self.limits[g] = (d.max_mem_alloc_size, d.global_mem_size,
                                    d.max_work_group_size)
        return lim

    def flush(self) -> None:
        """Submit what every queue holds: a driver may keep enqueued commands until a
        flush, and a device must not wait for another device's queue to be finished
        before its own work starts."""
        for q in self.queues:
            q.flush()
        for q in self.copy_queues.values():
            q.flush()

    def finish(self) -> None:
        """Wait for every device (all queues flushed first, so that they run together)."""
        self.flush()
        for q in self.queues:
            q.finish()
        for q in self.copy_queues.values():
            q.finish()


_current: Devices | None = None
_generation = 0


def _platform_devices(platform: str | None, device_type: str | None) -> list:
    devices = cldevice.all_devices()
    if not devices:
        cldevice.select_device()  # raises the "no device" diagnostic with its hint
    if platform is None and device_type is None:
        best = cldevice.select_device()
        kind = cldevice.describe(best).kind
        return [d for d in best.platform.get_devices()
                if cldevice.describe(d).kind == kind]
    chosen = [d for d in devices
              if (platform is None or platform.lower() in d.platform.name.lower()
                  or platform.lower() in d.name.lower())
              and (device_type is None or cldevice.describe(d).kind == device_type.upper())]
    chosen = [d for d in chosen if cldevice.build_problem(d) is None]
    if not chosen:
        listing = ", ".join(f"'{cldevice.describe(d).spec}'" for d in devices)
        raise skel_error("no-such-device", f"no working OpenCL device matches platform="
                         f"{platform!r} device_type={device_type!r}",
                         hint=f"available devices: {listing}")
    first = chosen[0].platform
    return [d for d in chosen if d.platform == first]


def init(num_devices: int | None = None, platform: str | None = None,
         device_type: str | None = None, mpi: bool | None = None,
         peer_copies: bool | None = None, profiling: bool | None = None) -> Devices:
    """Choose the devices (of one platform) that containers and skeletons use.

    ``num_devices``: how many of the platform's devices (default all; the environment
    variable ``MCL_SKEL_DEVICES`` gives a default). ``platform``/``device_type``
    ("GPU", "CPU") narrow the choice. ``mpi``: combine with the other MPI ranks
    (default: when started by mpiexec with more than one rank). ``peer_copies``: copy
    rows between devices with OpenCL commands between device buffers (default for CPU
    devices, which share memory) rather than through pinned host memory (default for
    GPUs, as SkelCL). Either way only the rows move: the peer path copies them into a
    small buffer that alone goes to the other device, never a container's buffer,
    which a GPU driver would migrate whole. Whether the peer path is faster than
    pinned host memory on a GPU node depends on how its driver moves that small
    buffer (not measured on NVIDIA's OpenCL yet). The environment variable
    ``MCL_SKEL_PEER_COPIES`` (0 or 1) gives a default. ``profiling``: queues that
    time every command (OpenCL profiling events; default off, or
    ``MCL_SKEL_PROFILING=1``): on an H100 they made each enqueue 5 us dearer and a
    kernel then its read 8 us longer."""
    import pyopencl as cl

    global _current, _generation
    if num_devices is None and os.environ.get("MCL_SKEL_DEVICES"):
        text = os.environ["MCL_SKEL_DEVICES"].strip()
        if not text.isdigit():
            raise skel_error("no-such-device", f"MCL_SKEL_DEVICES={text!r:.40}: give the "
                             "number of devices (1 or more)")
        num_devices = int(text)
    if num_devices is not None and (isinstance(num_devices, bool) or
                                    not isinstance(num_devices, numbers.Integral)):
        raise skel_error("no-such-device", f"num_devices={num_devices!r:.40}: give the number "
                         "of devices (1 or more), or None for all")
    found = _platform_devices(platform, device_type)
    if num_devices is not None:
        num_devices = int(num_devices)
        if num_devices < 1:
            raise skel_error("no-such-device", f"{num_devices} device(s) asked for: give 1 "
                             f"or more (the platform '{found[0].platform.name.strip()}' has "
                             f"{len(found)})")
        if num_devices > len(found):
            raise skel_error("no-such-device", f"{num_devices} device(s) asked for, but the "
                             f"platform '{found[0].platform.name.strip()}' has {len(found)}",
                             hint="PoCL gives several CPU devices with "
                                  "POCL_DEVICES=\"pthread pthread\" (set before the start)")
        found = found[:num_devices]
    ctx = cl.Context(found)
    if profiling is None:
        profiling = os.environ.get("MCL_SKEL_PROFILING") == "1"
    props = cl.command_queue_properties.PROFILING_ENABLE if profiling else 0
    queues = [cl.CommandQueue(ctx, d, properties=props) for d in found]
    _generation += 1
    from mcl.skel import transfer
    transfer.clear_pool()       # buffers of the devices chosen before
    if peer_copies is None and os.environ.get("MCL_SKEL_PEER_COPIES") in ("0", "1"):
        peer_copies = os.environ["MCL_SKEL_PEER_COPIES"] == "1"
    if peer_copies is None:
        peer_copies = all(cldevice.describe(d).kind == "CPU" for d in found)
    devs = Devices(ctx, found, queues, generation=_generation, peer_copies=peer_copies,
                   profiling=profiling)
    from mcl.skel import mpi as skel_mpi
    skel_mpi.attach(devs, mpi)
    _current = devs
    return devs


def current() -> Devices:
    """The devices chosen by :func:`init` (initialising with the defaults if needed)."""
    if _current is None:
        init()
    return _current
