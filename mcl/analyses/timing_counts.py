"""What a kernel's warps ask of each part of the device, for the time model
(mcl.analyses.timing): the memory instructions the load-store units take (a cycle per
cache line a request touches), the bytes the global loads take from the last-level
cache, the words banked on-chip memory serves, the multiply-adds built-in functions
cost beyond one operation, and the bytes the compiler's spills store."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from mcl.analyses.target_settings import builds_for_nvidia, device_settings
from mcl.analyses.timing_rates import (
    first_level_banks,
    load_line_cycles,
    number,
    store_line_cycles,
)

if TYPE_CHECKING:
    from mcl.analyses.functions import KernelView


def function_extra(view: KernelView) -> tuple[dict[str, float], dict[str, float]]:
    """The multiply-adds that the kernel's calls of built-in functions and its float
    divisions cost beyond the one operation each counts for, over all their
    executions, by function: with the target file's ``function_costs`` (its compiler's
    default, precise math) and with its ``function_costs_relaxed`` (relaxed math;
    mcl.analyses.target_settings). Empty where the target file gives no costs. Counted
    once per view (the roofline and the time model both ask)."""
    if "function_extra" not in view.memo:
        view.memo["function_extra"] = _function_extra(view)
    return view.memo["function_extra"]


def _function_extra(view: KernelView) -> tuple[dict[str, float], dict[str, float]]:
    from mcl.analyses.stats import site_executions
    settings = device_settings(view.hardware)
    tables = [settings.get("function_costs") or {}, settings.get("function_costs_relaxed") or {}]
    out: tuple[dict[str, float], dict[str, float]] = ({}, {})
    k = view.num
    for site in k.ops:
        if site.kind != "compute" or not any(t.get(site.name, 1) > 1 for t in tables):
            continue
        times = number(site_executions(k, site)[0] * site.count)
        if not times:
            continue
        for costs, extra in zip(tables, out, strict=True):
            cost = costs.get(site.name)
            if cost is not None and cost > 1:
                extra[site.name] = extra.get(site.name, 0.0) + times * (float(cost) - 1)
    return out


@dataclass(frozen=True)
class Spills:
    """What a thread keeps in local memory for want of registers, as the time model
    counts its traffic (:func:`spill_traffic`)."""

    per_thread: float       # bytes
    passes: float           # passes of the loops around the kernel's loads
    threads: float          # of the grid
    source: str             # whose figure: "NVIDIA compiler", "estimated"

    @property
    def bytes(self) -> float:
        """Bytes the spills store to local memory in all (and load back as many)."""
        return self.per_thread * self.passes * self.threads


def spill_traffic(view: KernelView, occupancy, space: str) -> Spills | None:
    """The bytes a thread's spills store to local memory: the vendor compiler's local
    bytes a thread (mcl.analyses.resources.spilled_bytes), or where no compiler was
    asked and the level's target builds for NVIDIA's driver, the registers the estimate
    needs beyond the most a thread of the block may have (4 B each; the register arrays
    whole where they alone are more: occupancy.arrays_beyond_cap), each stored once
    and loaded once per pass of the loops the generated code keeps around the kernel's
    loads (:func:`_rolled_passes`).

    On the H200 (ncu, benchmarks/results/fidelity/raw/h200_2026-11-30_spills/):
    gesummv hopper_v2 with 32 warps a block, 280 B a thread over its 4 passes, stores
    149 MB, loads as many (45% of them from the L1), and writes 114 MB back to device
    memory; with 4 rows a warp, 472 B: 66 MB stored, 35 MB written back. The time
    model takes the stores to cross to device memory (what the L2 keeps of them, a half
    to three quarters, depends on what else streams through it). None without spills,
    or where a count is missing."""
    from mcl.analyses.occupancy import arrays_beyond_cap, estimated_demand
    from mcl.analyses.resources import max_registers, spilled_bytes
    from mcl.analyses.traffic import grid_units
    from mcl.analyses.warp_lanes import lockstep_loop
    threads = occupancy.threads if occupancy is not None else None
    blocks = grid_units(view, occupancy.unit) if occupancy is not None else None
    found = lockstep_loop(view)
    if not threads or not blocks or found is None:
        return None
    res = view.resources
    if res is not None:
        per, source = spilled_bytes(res), res.source
    elif not builds_for_nvidia(view.hardware.name):
        return None     # the estimate's spills: measured with NVIDIA's compiler only
    else:
        cap = max_registers(view.hardware, threads)
        need = estimated_demand(view)
        if not cap or need <= cap:
            return None
        per, source = 4 * (arrays_beyond_cap(view, cap) or need - cap), "estimated"
    if not per:
        return None
    passes = _rolled_passes(view, space, found[0])
    return Spills(float(per), passes, float(blocks * threads), source)


def _rolled_passes(view: KernelView, space: str, lane) -> float:
    """How many times a thread goes round its loads of ``space`` in the loops the
    generated code keeps (not those it unrolls: mcl.analyses.unrolled), the most of any
    load; at least 1."""
    from mcl.analyses.timing_overlap import lane_loads, trip_number
    from mcl.analyses.unrolled import build_time_sizes, unrolled
    sizes = build_time_sizes(view.sym)
    sym_loops = {id(lp.node): lp for lp in view.sym.loops}
    most = 1.0
    for _, inner in lane_loads(view, space, lane):
        passes = 1.0
        for lp in inner:
            if not unrolled(sym_loops.get(id(lp.node)), lp, sizes):
                passes *= max(1.0, trip_number(lp) or 1.0)
        most = max(most, passes)
    return most


def estimated_loads(view: KernelView) -> dict[int, object]:
    """The global loads whose address or trip count depends on data, as
    mcl.analyses.sectors estimates them (mcl.analyses.datadep), by their node."""
    from mcl.analyses.sectors import global_loads
    loads = global_loads(view)
    if loads is None or not loads.estimated:
        return {}
    return {id(ld.access.node): ld for ld in loads.loads
            if ld.lines_per_request is not None}


def memory_instructions(view: KernelView, register_spaces,
                         estimated: dict | None = None, lines: bool = True) -> float | None:
    """Accesses to addressable memory by all units, in lanes' accesses (the load-store
    units take one warp's request per cycle); a run of 4 adjacent elements that the
    generator makes one 128-bit access counts once, and so do 4 reads of banked
    on-chip memory that the vendor compiler merges into one (mcl.analyses.banks.
    unrolled_run: matmul gpu_v3..hopper, whose memory-instructions part was 18-23%
    above their measured times while it counted each read of ``l_a[ei][k]``). A warp's
    request to cached memory takes a cycle per cache line its lanes touch (the
    first-level cache's tag stage); a load's, where the target file has
    ``load_line_cycles`` (:func:`_lines_per_request`), the most words one bank of the
    cache's storage serves for it or that many cycles per line, whichever is more.
    A read of read-only memory at the same element in every lane, in loops the
    generator unrolls completely (:func:`_uniform_unrolled`: a filter in constant
    memory), counts the warp requests of mcl.analyses.sectors: each distinct element
    once per run of the unrolled nest, a request of one line. A load whose address or trip count
    depends on data counts as ``estimated`` gives it: its warp requests, each a cycle
    per cache line its lanes touch. ``lines=False``: the instructions only, a warp's
    request once however many lines it touches (what the warp's scheduler issues).
    Reads of an array passed by value (mcl.opencl.by_value) are operands."""
    from mcl.analyses.banks import banked_memory
    from mcl.analyses.warp_lanes import RUN, lockstep_loop
    from mcl.opencl.by_value import passed_by_value
    found = lockstep_loop(view)
    hw = view.hardware
    read_only = {ms.name for ms in hw.read_only_spaces()}
    operands = passed_by_value(view.num.function, hw, view.num.specialized)
    uniform: dict[int, float] | None = None
    # a load of several lines: cycles by the banks its lanes' words fall in
    tau = load_line_cycles(hw) if lines else None
    banks: dict[str, object] = {}
    total = 0.0
    for sacc, nacc in view.accesses():
        if sacc.space is None or sacc.space in register_spaces or nacc.name in operands:
            continue
        if sacc.space in read_only and not sacc.write and _uniform_unrolled(nacc, found):
            if uniform is None:
                uniform = _sector_requests(view)
            if id(nacc) in uniform:         # else (not predicted there) as written
                total += uniform[id(nacc)] * found[1]
                continue
        est = (estimated or {}).get(id(nacc.node)) if not nacc.write else None
        if est is not None and found:
            # lanes at addresses the data choose: their words spread over the banks
            per = _load_cycles(est.lines_per_request, tau) if lines else 1
            total += est.requests * found[1] * per
            continue
        execs = number(view.num.executions(nacc.loops)[0])
        if execs is None:
            return None
        run = per = None
        if found and found[0] in nacc.loops:
            execs *= _issued(view, nacc, found)
            run = _run(view, nacc, found[0], found[1], banked_memory(hw, sacc) is not None)
            line = min((c.cache_line_size for c in hw.caches_for(sacc.space)
                        if c.cache_line_size), default=None)
            if line and lines:
                if tau and sacc.space not in banks:
                    banks[sacc.space] = first_level_banks(hw, sacc.space)
                mem = banks.get(sacc.space) if not nacc.write and run is None else None
                per = _lines_per_request(view, nacc, found, run, int(line), mem,
                                         tau if mem is not None else None)
                if per and nacc.write:
                    per *= store_line_cycles(hw, per)
        total += execs / (RUN if run is not None else 1) * (per or 1)
    return total


def _issued(view: KernelView, nacc, found) -> float:
    """The share of a warp's passes over ``nacc`` in which it issues the access: where
    an ``if`` around it lets no lane take it, the warp skips the instruction
    (mcl.analyses.sectors.issued_share: the else branch of ``if (j < m)`` with m a
    multiple of the warp; a tree's ``if (tid < s)`` for the warps above s); 1 where it
    cannot be told."""
    from mcl.analyses.sectors import issued_share
    if not nacc.conditions:
        return 1.0
    memo = view.memo.setdefault("issued_share", {})
    if id(nacc) not in memo:
        share = issued_share(nacc, found[0], found[1])
        memo[id(nacc)] = 1.0 if share is None else share
    return memo[id(nacc)]


def _run(view: KernelView, nacc, lane, width: int, banked: bool) -> list[int] | None:
    """The offsets of a warp's 128-bit access of ``nacc`` (mcl.analyses.functions.
    run_offsets: a run of 4 the generator vectorises), or, for a read of banked on-chip
    memory, of the 4 reads the vendor compiler merges into one (mcl.analyses.banks.
    unrolled_run); None where the access is not one."""
    from mcl.analyses.banks import unrolled_run
    from mcl.analyses.warp_lanes import run_offsets
    run = run_offsets(view, nacc, lane, width)
    if run is None and banked and not nacc.write:
        merged = unrolled_run(view, nacc, lane, width)
        run = merged[0] if merged is not None else None
    return run


def _lines_per_request(view: KernelView, nacc, found, run, line: int, banks=None,
                       tau: float | None = None) -> float | None:
    """Cache lines a warp's request touches, averaged over 8 consecutive iterations of
    the innermost sequential loop around it (a window that moves by one element
    straddles two lines in most of them). With the banked memory ``banks`` whose storage
    the cache shares and ``tau`` cycles a line: the cycles a load of several lines takes,
    the most distinct words one bank holds for its lanes (mcl.analyses.banks: each bank
    serves one word a cycle), ``tau`` a line or two, whichever is most. On the H200
    (benchmarks/opencl/lane_rows_probe.py, each request's cycles beyond a coalesced
    one's): 32 lines in 31.8 cycles where every lane's word is in one bank (rows a
    multiple of 128 B apart: gesummv perfect's ``A[i, j]``), in 15.7 where each bank
    holds one (16.5 lines 16.0 and 8.3, 8.75 lines 7.7 and 4.1, 4.9 lines 3.8 and 2.6,
    2.9 lines 2.8 and 2.2), 16.7 with CSR's rows (spmv_csr perfect's ``values[k]``)."""
    from mcl.analyses.banks import degree
    from mcl.analyses.warp_lanes import RUN, lane_offsets, run_offsets
    lane, width = found
    loops = nacc.loops[:-1] if run is not None else nacc.loops
    inner = next((lp for lp in reversed(loops) if lp.kind != "foreach" and lp.var), None)
    stepping = inner is not None and inner.constant_step is not None
    trips = view.value(inner.trips) if stepping and inner.trips is not None else None
    step = (view.value(inner.constant_step) if stepping else 1) or 1
    counts = []
    for i in range(min(8, trips) if trips and nacc.offset is not None else 1):
        acc = replace(nacc, offset=nacc.offset.subs(inner.symbol, inner.symbol + i * step)) \
            if i else nacc
        offs = run_offsets(view, acc, lane, width) if run is not None else \
            lane_offsets(view, acc, lane, width)
        if not offs:
            return None
        n = len({o * acc.element_bytes // line for o in offs})
        if run is not None:
            n = max(1, n // RUN)
        elif banks is not None and tau and n > 1:
            n = _load_cycles(n, tau, degree([offs], acc.element_bytes, banks))
        counts.append(n)
    return sum(counts) / len(counts)


def _load_cycles(lines: float, tau: float | None, depth: float = 1.0) -> float:
    """Cycles a warp's load of ``lines`` cache lines takes on the load-store path where
    the target file says ``tau`` cycles a line (load_line_cycles): the ``depth`` words
    one bank serves in turn, ``tau`` a line or two, whichever is most; a cycle a line
    without ``tau`` or for one line."""
    if not tau or lines <= 1:
        return lines
    return max(depth, tau * lines, min(lines, 2))


def _runs(sectors: set[int]) -> int:
    return sum(1 for s in sectors if s - 1 not in sectors)


def cache_bytes(view: KernelView, space: str, estimated: dict | None = None,
                occupancy=None) -> float | None:
    """Bytes the global loads in ``space`` take from the last-level cache (the
    ``cache`` part of the module docstring); None without a lock-step loop
    (:func:`cache_traffic`'s bytes)."""
    traffic = cache_traffic(view, space, estimated, occupancy)
    return traffic.bytes if traffic is not None else None


@dataclass(frozen=True)
class CacheTraffic:
    """What the global loads take from the last-level cache: ``bytes``, and the read
    ``requests`` it serves for them (a gather's sectors one each, the other loads' bytes
    a line a request: a lower bound where their lanes touch parts of lines)."""

    bytes: float
    requests: float
    #: the requests of them that gathers make (lanes at addresses data choose, a sector
    #: each, less what the first-level caches hold)
    gathered: float = 0.0


def cache_traffic(view: KernelView, space: str, estimated: dict | None = None,
                  occupancy=None) -> CacheTraffic | None:
    """What the global loads in ``space`` take from the last-level cache (the ``cache``
    part of the module docstring); None without a lock-step loop. The loads of one
    array inside the same loops fetch, per block, the union of their warps' sectors
    (mcl.analyses.block_reuse); a load that the block model cannot evaluate, the
    sectors of its warps' requests. A load whose address or trip count depends on data
    takes the sectors ``estimated`` gives it; a gather's (lanes at addresses data
    choose) are each a request of their own. ``occupancy``: the kernel's
    (mcl.analyses.occupancy; computed where not given)."""
    from mcl.analyses.block_reuse import (
        block_load,
        first_level_cache,
        gather_sectors,
        is_gather,
        kernel_sectors,
    )
    from mcl.analyses.warp_lanes import lockstep_loop, transaction_size

    found = lockstep_loop(view)
    if found is None:
        return None
    lane, width = found
    hw = view.hardware
    size, _ = transaction_size(view, space)
    l1 = first_level_cache(hw, space)
    line = int(l1.cache_line_size or size) if l1 is not None else size
    if occupancy is None and l1 is not None:
        from mcl.analyses.occupancy import occupancy as occupancy_of
        occupancy = occupancy_of(view)
    total = 0.0
    together: dict[tuple, list] = {}
    gathers: dict[str, tuple] = {}
    warps = occupancy.threads // width if occupancy is not None and occupancy.threads else 0
    # lines of a block that its loads read again in their next iterations (a lane's own
    # row), which the L1 keeps beside a gathered array
    kept_lines = 0.0
    for _sacc, nacc in view.accesses():
        if nacc.write or nacc.space != space or lane not in nacc.loops:
            continue
        est = (estimated or {}).get(id(nacc.node))
        if est is not None:
            sectors = est.requests * est.fetched_per_request
            if is_gather(view, nacc, lane):    # one array's gathers share the L1
                first, before = gathers.get(nacc.name, (nacc, 0.0))
                gathers[nacc.name] = (first, before + sectors)
            else:
                total += sectors * size
                if est.lines_per_request and est.sectors_per_request:
                    # the share of its sectors a request finds from the iteration before
                    again = 1.0 - est.fetched_per_request / est.sectors_per_request
                    kept_lines += est.lines_per_request * max(0.0, again) * warps
            continue
        together.setdefault((nacc.name, tuple(map(id, nacc.loops))), []).append(nacc)
    found = []
    for loads in together.values():
        block = block_load(view, loads, lane, size, line) if l1 is not None else None
        if block is not None:
            found.append((loads, block))
            continue
        total += sum(_warp_sectors(view, nacc, lane, width, size) for nacc in loads) * size
    if found:
        total += kernel_sectors(view, found, size, line, l1, occupancy) * size
        kept_lines += sum(b.lines for _, b in found if b.new < b.first)
    gathered = sum(gather_sectors(view, first, l1, occupancy, sectors, size,
                                  kept_lines * line)
                   for first, sectors in gathers.values())
    return CacheTraffic(total + gathered * size, gathered + total / line, gathered)


def _warp_sectors(view: KernelView, nacc, lane, width: int, size: int) -> float:
    """The sectors a load's warp requests fetch over the kernel: per request the
    sectors its lanes touch, and in the iterations of the innermost sequential loop
    around it after the first only those it did not touch in the previous one."""
    from mcl.analyses.warp_lanes import RUN, lane_offsets, run_offsets

    run = run_offsets(view, nacc, lane, width)
    offs = run if run is not None else lane_offsets(view, nacc, lane, width)
    execs = number(view.num.executions(nacc.loops)[0])
    if offs is None or execs is None or nacc.offset is None:
        return 0.0
    eb = nacc.element_bytes
    first = {o * eb // size for o in offs}
    per = float(len(first))
    loops = nacc.loops[:-1] if run is not None else nacc.loops
    inner = next((lp for lp in reversed(loops) if lp.kind != "foreach" and lp.var), None)
    trips = number(inner.trips) if inner is not None and inner.trips is not None else None
    if inner is not None and inner.constant_step is not None and trips and trips > 1:
        step = view.value(inner.constant_step)
        shifted = replace(nacc, offset=nacc.offset.subs(inner.symbol,
                                                        inner.symbol + (step or 1)))
        offs2 = run_offsets(view, shifted, lane, width) if run is not None else \
            lane_offsets(view, shifted, lane, width)
        if offs2 is not None:
            moved = {b - a for a, b in zip(offs, offs2, strict=True)}
            if len(moved) == 1 and abs(next(iter(moved))) * eb < size:
                new = min(len(first), _runs(first) * abs(next(iter(moved))) * eb / size)
            else:
                new = len({o * eb // size for o in offs2} - first)
            per = (len(first) + (trips - 1) * new) / trips
    return execs / width / (RUN if run is not None else 1) * per


def _uniform_unrolled(nacc, found) -> bool:
    """Whether a read is at the same element in every lane of a warp and its index
    depends only on loops that the OpenCL generator unrolls completely (counted loops
    of at most vectorize.MAX_UNROLL iterations): the compiler then loads each distinct
    element once per run of the unrolled nest and keeps it in a register. Not an
    operand of the arithmetic: NVIDIA's OpenCL compiler reads a ``__constant``
    argument with a global load (``LDG.E.CONSTANT``), one per distinct element and
    per iteration of a loop whose ``if`` around the read it cannot share
    (convolution nvidia_v1: 324 for its 81 filter elements and 4 guarded outputs;
    hopper_v1 and hopper_v2 81 each: benchmarks/results/fidelity/raw/
    h200_2026-11-30_constant_reads/summary.txt), the warp requests mcl.analyses.sectors
    counts."""
    from mcl.opencl.vectorize import MAX_UNROLL
    if not found or found[0].var in nacc.depends:
        return False
    loops = {lp.var: lp for lp in nacc.loops if lp.var}
    for name in nacc.depends:
        lp = loops.get(name)
        if lp is None or lp.kind == "foreach":
            continue
        trips = number(lp.trips) if lp.trips is not None else None
        if lp.kind != "for" or trips is None or trips > MAX_UNROLL or lp.constant_step is None:
            return False
    return True


def _sector_requests(view: KernelView) -> dict[int, float]:
    """The warp requests of each global load (by its numeric access) that
    mcl.analyses.sectors counts; empty where it counts none."""
    from mcl.analyses.sectors import global_loads
    loads = global_loads(view)
    return {id(ld.access): ld.requests for ld in loads.loads} if loads is not None else {}


def banked_accesses(view: KernelView) -> tuple[float, object] | None:
    """Words all accesses to banked memory take from the banks: a warp's access takes
    the banks once per word that one bank serves in turn (the bank-conflict degree over
    the iterations of the loops around it, mcl.analyses.banks.profile; lanes that read
    the same word share it); a 128-bit access (a run of 4 elements per
    lane) is served half a warp at a time (mcl.analyses.banks.run_wavefronts). A warp
    none of whose lanes takes the ``if`` around an access does not issue it
    (:func:`_issued`: a tree's ``if (tid < s)``). An access whose words the data choose
    (a histogram's ``lhist[data[i]]``) takes the banks as often as words drawn at random
    from its array would (mcl.analyses.bank_data)."""
    from mcl.analyses.bank_data import random_passes
    from mcl.analyses.banks import banked_memory, conflict_degree, profile, run_wavefronts
    from mcl.analyses.warp_lanes import RUN, lockstep_loop
    found = lockstep_loop(view)
    hw = view.hardware
    total, mem = 0.0, None
    chosen = random_passes(view)
    for sacc, nacc in view.accesses():
        banked = banked_memory(hw, sacc)
        if banked is None:
            continue
        mem = banked
        execs = number(view.num.executions(nacc.loops)[0])
        if execs is None:
            return None
        degree = 1
        if found and found[0] in nacc.loops:
            lane, width = found
            execs *= _issued(view, nacc, found)
            run = _run(view, nacc, lane, width, banked=True)
            waves = run_wavefronts(nacc, run, width, mem) if run is not None else None
            if waves is not None:
                # execs / (RUN * width) warp accesses, each taking the banks `waves` times
                total += execs / (RUN * width) * waves * mem.nr_banks
                continue
            judged = profile(view, nacc, lane, width, mem)
            degree = 1 + judged.extra / judged.requests if judged is not None and \
                judged.extra is not None and judged.requests else \
                conflict_degree(view, nacc, lane, width, mem) or \
                chosen.get(id(sacc)) or 1
        total += execs * degree
    return (total, mem) if mem is not None else None


def has_banked(view: KernelView) -> bool:
    """Whether the kernel accesses banked on-chip memory (a shared-memory part)."""
    from mcl.analyses.banks import banked_memory
    return any(banked_memory(view.hardware, sacc) is not None for sacc, _ in view.accesses())
