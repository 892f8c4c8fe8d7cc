"""A predicted time per kernel: the roofline bound refined by what the other analyses
found. Each part is the time one resource needs at its full rate; the prediction is
the largest, and its name says what limits the kernel:

* ``memory``: the compulsory traffic (each element of the parameters' arrays once)
  at the description's bandwidth to device memory;
* ``instructions``: every operation the kernel executes (arithmetic, index and
  control operations, loads and stores) at the peak operation rate of the lanes;
* ``shared memory``: accesses to banked on-chip memory, one word per bank and cycle
  on every holder, times the worst bank-conflict degree;
* ``latency``: the device-memory traffic that the resident warps can keep in flight
  (Little's law: warps x bytes each has outstanding / the memory's latency), with
  the residency of the occupancy analysis: few resident warps cannot cover latency;
* ``atomics``: the serialised updates of the most contended atomic element.

An estimate, stated as such; benchmarks/fidelity compares it with measured times.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import sympy

if TYPE_CHECKING:
    from mcl.analyses.functions import KernelView

#: bytes a warp has outstanding per global load site at once (a 128 B request; a run
#: of 4 elements per lane is one 512 B request) and the most load sites counted
_REQUEST = 128
_MAX_SITES = 8


@dataclass
class PredictedTime:
    seconds: float
    limiter: str
    parts: dict[str, float] = field(default_factory=dict)


def _num(e) -> float | None:
    try:
        v = sympy.sympify(e)
        return float(v) if v.is_number and v.is_finite else None
    except (TypeError, ValueError, sympy.SympifyError):
        return None


def _instances(hw, block) -> int | None:
    """How many instances of a device block the device has (None: not a number)."""
    pos = hw.position(block)
    n = pos.instances if pos is not None else None
    return n if isinstance(n, int) and n > 0 else None


def _load_store_rate(hw) -> float | None:
    """Accesses per second the load-store units issue (one per unit and cycle)."""
    unit = hw.executing_unit()
    clock = hw.clock_frequency()
    if unit is None or not clock:
        return None
    total = 0
    for s in hw.slots(unit.name):
        if s.holder.kind in ("load_store_unit", "load_store_group") and \
                isinstance(s.total, int):
            total += s.total
    return total * clock if total else None


def _memory_instructions(view: KernelView, register_spaces) -> float | None:
    """Accesses to addressable memory by all units; a run of 4 adjacent elements that
    the generator makes one 128-bit access counts once. Reads of read-only memory
    that are constants of the generated code (:func:`_constant_operand`) are not
    counted."""
    from mcl.analyses.functions import RUN, lockstep_loop, run_offsets
    found = lockstep_loop(view)
    read_only = {ms.name for ms in view.hardware.read_only_spaces()}
    total = 0.0
    for sacc, nacc in view.accesses():
        if sacc.space is None or sacc.space in register_spaces:
            continue
        if sacc.space in read_only and not sacc.write and _constant_operand(nacc, found):
            continue
        execs = _num(view.num.executions(nacc.loops)[0])
        if execs is None:
            return None
        run = run_offsets(view, nacc, found[0], found[1]) if found and \
            found[0] in nacc.loops else None
        total += execs / (RUN if run is not None else 1)
    return total


def _constant_operand(nacc, found) -> bool:
    """Whether a read is at the same element in every lane of a warp and its index
    depends only on loops that the OpenCL generator unrolls completely (counted loops
    of at most vectorize.MAX_UNROLL iterations): its address is then a constant of
    the program, so the compiler loads it once and keeps it in a register, or reads
    it from the constant cache as an operand of the arithmetic (a filter in constant
    memory) -- no load-store instruction per read."""
    from mcl.opencl.vectorize import MAX_UNROLL
    if not found or found[0].var in nacc.depends:
        return False
    loops = {lp.var: lp for lp in nacc.loops if lp.var}
    for name in nacc.depends:
        lp = loops.get(name)
        if lp is None or lp.kind == "foreach":
            continue
        trips = _num(lp.trips) if lp.trips is not None else None
        if lp.kind != "for" or trips is None or trips > MAX_UNROLL:
            return False
    return True


def _banked_accesses(view: KernelView) -> tuple[float, object] | None:
    """Words all accesses to banked memory take from the banks: each element once, times
    the bank-conflict degree of its warp access (a 128-bit run moves 4 words per lane
    in phases of lanes: the same number of words)."""
    from mcl.analyses.functions import conflict_degree, lockstep_loop
    found = lockstep_loop(view)
    hw = view.hardware
    total, mem = 0.0, None
    for sacc, nacc in view.accesses():
        banked = [m for m in hw.memories_holding(sacc.space) if m.nr_banks] \
            if sacc.space else []
        if not banked:
            continue
        mem = banked[0]
        execs = _num(view.num.executions(nacc.loops)[0])
        if execs is None:
            return None
        degree = 1
        if found and found[0] in nacc.loops:
            degree = conflict_degree(view, nacc, found[0], found[1], mem) or 1
        total += execs * degree
    return (total, mem) if mem is not None else None


def predicted_time(view: KernelView, occupancy=None,
                   atomics_s: float | None = None) -> PredictedTime | None:
    """The predicted time of the numeric kernel of ``view`` (None without numbers)."""
    from mcl.analyses.functions import RUN, lockstep_loop, run_offsets
    from mcl.analyses.stats import compulsory_bytes, counts_of_kernel, main_space

    k, hw = view.num, view.hardware
    if hw is None:
        return None
    space = main_space(k)
    peak = hw.peak_flops()
    bw = hw.memory_bandwidth(space) if space else None
    parts: dict[str, float] = {}
    c = counts_of_kernel(k)
    cb = _num(compulsory_bytes(k, space)) if space and bw else None
    if cb is not None and bw:
        parts["memory"] = cb / bw
    flops = _num(c.flops)
    if flops is not None and peak:
        parts["arithmetic"] = flops / peak
    lsu = _load_store_rate(hw)
    accesses = _memory_instructions(view, c.register_spaces)
    if lsu and accesses is not None:
        parts["memory instructions"] = accesses / lsu
    clock = hw.clock_frequency()
    shared = _banked_accesses(view)
    if shared is not None and clock:
        words, mem = shared
        copies = _instances(hw, mem)
        if copies:
            parts["shared memory"] = words / (mem.nr_banks * copies * clock)
    if occupancy is not None and occupancy.resident and cb is not None and clock:
        latency = hw.memory_latency(space)
        found = lockstep_loop(view)
        holders = _instances(hw, occupancy.holder)
        threads = occupancy.threads
        if latency and holders and threads and found:
            lane, width = found
            warps = occupancy.resident * max(1, threads // width) * holders
            inflight = 0
            for sacc, nacc in view.accesses():
                if nacc.write or sacc.space != space or lane not in nacc.loops:
                    continue
                run = run_offsets(view, nacc, lane, width)
                inflight += _REQUEST * (RUN if run is not None else 1)
            inflight = min(inflight, _REQUEST * RUN * _MAX_SITES) or _REQUEST
            rate = warps * inflight / (float(latency) / clock)
            parts["latency"] = cb / rate
    if atomics_s:
        parts["atomics"] = atomics_s
    if not parts:
        return None
    limiter = max(parts, key=parts.get)
    return PredictedTime(parts[limiter], limiter, parts)
