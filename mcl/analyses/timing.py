"""A predicted time per kernel: the roofline bound refined by what the other analyses
found. Each part is the time one resource needs at its full rate; the prediction is
the largest, and its name says what limits the kernel:

* ``memory``: the compulsory traffic (each element of the parameters' arrays once)
  at the bandwidth a kernel reaches from device memory (the target file's
  ``sustained_bandwidth``, measured; else the description's), combined with the
  ``latency`` part below as (T_b^q + T_l^q)^(1/q): a request waits for the memory's
  latency and for its turn on the interface (the target file's
  ``memory_queue_exponent`` q, 2 on the H100 where its reads were timed against the
  warps keeping them in flight; 1, the sum of the two, without one);
* ``arithmetic``: the floating-point operations at the peak rate, a call of a built-in
  function or a float division at what it costs in multiply-adds with the target's
  compiler (its target file's ``function_costs``: with NVIDIA's precise math on the
  H100 a log 26, an exp 10, a division 9; :func:`_function_extra`);
* ``memory instructions``: the accesses to addressable memory at the load-store
  units' rate (a warp's request a cycle; to cached memory a cycle per cache line
  its lanes touch; a store of many lines more, the target file's
  ``store_line_cycles``: on the H200 3.8 cycles a line for a warp's store to 32
  lines, so that transpose_naive's column writes take 4 times what its loads do);
* ``<cache> bandwidth`` (``l2 bandwidth``): the sectors the global loads take from
  the last-level cache at the bandwidth of its link to the execution units: per
  block, the union of the sectors its warps touch in an iteration of the outermost
  sequential loop inside it, and in later iterations only those the previous one
  did not touch, or each sector once where the block's lines fit in its share of
  the first-level cache (mcl.analyses.block_reuse; within 20% of the sectors ncu
  counts as missing in the L1 for 56 of the 58 examples). The L2 itself may look up
  fewer: its request coalescer merges the requests of SMs near each other for the
  same sector at the same time (benchmarks/opencl/coalescer_probe.py: up to about 4
  to 1), which depends on how closely the blocks keep pace and is not predicted, so
  this counts at most what the L2 serves (its lookups within 20% for 47 of 58;
  matmul's tiled versions 52-96% of their misses); a load that model cannot evaluate, per
  warp request the sectors its lanes touch, and in the iterations of the innermost
  sequential loop around it after the first only those it did not touch before; a
  gather (addresses data choose) a sector per lane, less the share of its array the
  first-level caches hold;
* ``shared memory``: accesses to banked on-chip memory, one word per bank and cycle
  on every holder: a warp's access takes the banks once per word one bank serves in
  turn (lanes reading the same word share it); a 128-bit access half a warp at a
  time; reads that the vendor compiler merges into 128-bit ones across a completely
  unrolled loop count as such;
* ``issue``: on a GPU, the arithmetic's instructions and the memory instructions
  share the schedulers' issue slots (one warp instruction per lock-step group of
  lanes and cycle);
* ``barrier waits``: a sequential loop whose iterations load device memory into an
  on-chip tile and wait at a barrier (or a tile filled once before a barrier: one
  phase) exposes the memory latency once per phase and round of resident blocks
  (they run in step), and the tiles' reads cross the memory interface while the
  warps wait: at least the arrays they read, once, at the memory's bandwidth (no
  calibration: the description's latency and bandwidth). The execution units idle
  meanwhile, so the wait adds to ``arithmetic``, ``issue``, ``memory instructions``
  and ``shared memory`` (on the H100, convolution hopper_v2's shared tile against
  hopper_v3's loads through the L1: 0.107 against 0.089 ms measured);
* ``latency``: the device-memory traffic that the resident warps can keep in flight
  (Little's law: warps x bytes each has outstanding / the memory's latency), with
  the residency of the occupancy analysis: few resident warps cannot cover latency.
  Where the grid takes more than one round of resident blocks, a block holds its
  warp slots until its last warp has its data: the memory serves a holder's
  requests about in the order its blocks issued them, so the warps of a block get
  the data of their last pass over their loads (of P, the iterations of the
  sequential loops around them) over 1/(R P) of the block's life with R resident
  blocks, and the slots of its finished warps idle meanwhile, half of them on
  average: the warps in flight are fewer by 1/(2 R P) (no calibration; ncu on the
  H100, vector_add: achieved occupancy 68% with R = 2 blocks of 1024 threads
  making one pass, 76% with R = 8 of 256, 82% where a grid-stride loop keeps
  every block resident). A load that only fills a register array in a loop the
  generated code unrolls completely (``v[u] = input[i + u * T]``, used after the
  loop) has all the loop's iterations in flight at once; a loop the compiler unrolls
  of its own accord (by the target's ``partial_unroll``, 4 on the H100 and H200), with
  no store to device memory, atomic or barrier inside, has as many of its iterations'
  loads in flight as the factor and the registers beyond the kernel's need let it
  (held-out rowsum and transpose_padded on the H200: 18.9 and 36.3 µs measured, 46.5
  and 56.0 predicted with one iteration in flight, 22.7 and 37.6 now). Where a grid-stride loop
  takes its threads round unequally often (n / stride = 15.5: 15 or 16 times), all
  warps make the full rounds together and a part of them the last one, in which each
  still waits its round trip: the memory part is the sum over the rounds (on the
  H100 vector_add's 1056 blocks of 256 threads over 2^24 elements measure 0.5%
  slower than 1024 blocks that go round 16 times each, though more warps are in
  flight);
* ``atomics``: the serialised updates of the most contended atomic element
  (mcl.analyses.atomics.queued_seconds: integer ones back to back in the L2, float
  compare-and-swap loops at the target's measured time per update with that many
  pending: reduction's versions within 12% on the H100 but hopper_v3, whose 132
  updates follow its reads, -27%);
* ``block dispatch``: the blocks at the rate the device starts them (the target
  file's ``block_dispatch_rate``, measured: on the H100 about 1.65 blocks per ns up to
  640 threads a block, 0.88 at 1024), which bounds a grid of many blocks that each do
  little (vector_add with one element per thread in blocks of 64 threads: 262144
  blocks, 165 µs measured where its traffic takes 60 µs).

The predicted time is the largest part plus what any launch takes from its start to
its end (the target file's ``launch_seconds``, measured with an empty kernel; the H200:
2.7 µs, with cold reads of 4 to 512 MB on 4.3 µs + bytes / 4.54 TB/s).

A grid of fewer blocks than holders (SMs) leaves the other holders idle: the parts
that each holder contributes to (arithmetic, issue, memory instructions, shared memory,
the cache link) take longer by the ratio; the memory interface and the atomics' units
are the device's, and the latency part counts the warps there are (nbody's 64 blocks
on the H200's 132 SMs: issue bound at 481 µs, 211 µs before the arithmetic was
scaled too).

Loads whose address or trip count depends on data count as mcl.analyses.sectors
estimates them (mcl.analyses.datadep); the prediction names them.

An estimate, stated as such; benchmarks/fidelity compares it with measured times.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import sympy

from mcl.analyses.kernel_syntax import at_first_units
from mcl.analyses.stats import viewed_arrays
from mcl.analyses.target_settings import device_settings

if TYPE_CHECKING:
    from mcl.analyses.functions import KernelView
    from mcl.analyses.sectors import Requests

#: the parts the barrier waits add to: the execution units idle while the warps wait
WAITED = ("arithmetic", "issue", "memory instructions", "shared memory")
#: the parts of the device as a whole, which a grid of fewer blocks than holders does not
#: slow (its memory interface, the latency its warps wait, its atomics' units, its block
#: dispatcher) or that count the grid's rounds already (the barrier waits)
DEVICE_PARTS = ("memory", "latency", "atomics", "block dispatch", "barrier waits")

#: bytes a warp has outstanding per global load site at once (a 128 B request; a run
#: of 4 elements per lane is one 512 B request) and the most load sites counted
_REQUEST = 128
_MAX_SITES = 8


@dataclass
class PredictedTime:
    seconds: float
    limiter: str
    parts: dict[str, float] = field(default_factory=dict)
    #: loads whose address or trip count depends on data, counted as estimated
    estimated: list[str] = field(default_factory=list)
    #: seconds of the arithmetic part that built-in functions (and float divisions)
    #: take beyond one operation each, by name (the target file's function_costs)
    functions: dict[str, float] = field(default_factory=dict)
    #: the same with relaxed math (the target file's function_costs_relaxed)
    functions_relaxed: dict[str, float] = field(default_factory=dict)
    #: seconds of ``seconds`` that any launch takes from its start to its end (the
    #: target file's launch_seconds)
    launch: float = 0.0
    #: what the description gives no figure for, so that a part is missing: the
    #: memory's bandwidth (mic's ring), the bandwidth of the link from a cache to the
    #: execution units (fermi's and xeon_phi's caches)
    missing: list[str] = field(default_factory=list)
    #: (blocks, holders) where the grid has fewer blocks than holders, else None
    idle: tuple[int, int] | None = None
    #: the parts not counted because a count is not a number at these sizes (a loop
    #: whose trip count the counts do not follow: ``offset *= 2``)
    uncounted: list[str] = field(default_factory=list)


def _num(e) -> float | None:
    try:
        v = sympy.sympify(e)
        return float(v) if v.is_number and v.is_finite else None
    except (TypeError, ValueError, sympy.SympifyError):
        return None


def instances(hw, block) -> int | None:
    """How many instances of a device block the device has (None: not a number)."""
    pos = hw.position(block)
    n = pos.instances if pos is not None else None
    return n if isinstance(n, int) and n > 0 else None


def _dispatch_rate(hw, threads: int) -> float | None:
    """Blocks per second the device starts, for blocks of ``threads`` executing units:
    the target file's ``block_dispatch_rate`` for the smallest size listed that holds
    ``threads`` (None without a table)."""
    table = device_settings(hw).get("block_dispatch_rate") or {}
    try:
        rates = sorted((int(size), float(rate)) for size, rate in table.items())
    except (TypeError, ValueError):
        return None
    return next((rate for size, rate in rates if threads <= size),
                rates[-1][1] if rates else None)


def _store_line_cycles(hw, lines: float) -> float:
    """Cycles per cache line that a warp's store request touching ``lines`` lines takes
    on the load-store path: the target file's ``store_line_cycles`` (by lines per
    request, linear between the sizes listed, the last beyond them; 1 below the first
    and without a table). On the H200 a store of 32 lines takes 3.8 cycles a line,
    whatever bytes a lane writes into it (4, 8 or 16), where a load of as many takes
    about one (benchmarks/opencl/store_probe.py)."""
    table = device_settings(hw).get("store_line_cycles") or {}
    try:
        points = sorted((float(n), float(c)) for n, c in table.items())
    except (TypeError, ValueError):
        return 1.0
    if not points or lines <= points[0][0]:
        return 1.0
    for (n0, c0), (n1, c1) in zip(points, points[1:], strict=False):
        if lines <= n1:
            return c0 + (c1 - c0) * (lines - n0) / (n1 - n0)
    return points[-1][1]


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


def _issue_rate(hw, width: int) -> float | None:
    """Warp instructions per second the execution units issue: a group of ``width``
    lanes that runs a warp in lock-step takes one instruction of it per cycle. Only
    where the load-store units are fewer than the lanes (a GPU's multiprocessor): they
    are then a pipe beside the lanes, and a memory instruction takes an issue slot of
    its own; where every lane has one (a vector core), a load is an operand of the
    vector instruction (None)."""
    clock = hw.clock_frequency()
    lanes = sum(s.holders for s in hw.execution_lanes() if isinstance(s.holders, int))
    lsu = _load_store_rate(hw)
    if not (lanes and clock and width and lsu) or lsu >= lanes * clock:
        return None
    return lanes * clock / width


def _barrier_phases(view: KernelView, space: str, lane) -> tuple[float, set[str]]:
    """Iterations, per block, of the phases in which the block's warps wait at a
    barrier for the loads of ``space`` that fill its on-chip tile, and the arrays those
    loads read. A phase is an iteration of a sequential loop inside the lock-step loop
    whose body loads ``space`` and waits at a barrier; a load stored into the tile
    before a barrier that no such loop encloses (a tile filled once, then computed
    on) is one phase. A load that only feeds registers before a barrier (a
    reduction's accumulation) is none: its warps compute while it is in flight."""
    from mcl.mcpl import ast
    order = {id(n): i for i, n in enumerate(ast.walk(lane.node))}
    barriers = [order[id(x)] for x in ast.walk(lane.node) if isinstance(x, ast.Barrier)]
    fills = _tile_fills(view, lane)
    most, arrays = 0.0, set()
    for nacc, inner in _lane_loads(view, space, lane):
        phases, mine = 1.0, 0.0
        for lp in inner:
            trips = _trips(lp)
            if trips is None:
                break
            phases *= trips
            if any(isinstance(x, ast.Barrier) for x in ast.walk(lp.node)):
                mine = max(mine, phases)
        at = order.get(id(nacc.node))
        if not mine and id(nacc.node) in fills and any(b > at for b in barriers):
            mine = 1.0
        if mine:
            arrays.add(nacc.name)
            most = max(most, mine)
    return most, viewed_arrays(view.num, arrays)


def _tile_fills(view: KernelView, lane) -> set[int]:
    """The loads (by node) whose value a statement in the lock-step loop stores into
    banked on-chip memory: the loads that fill a tile."""
    from mcl.analyses.banks import banked_memory
    from mcl.mcpl import ast
    banked = {id(a.node) for a in view.num.accesses
              if a.write and banked_memory(view.hardware, a) is not None}
    out: set[int] = set()
    for st in ast.walk(lane.node):
        if isinstance(st, ast.Assign) and id(st.target) in banked:
            out.update(id(n) for n in ast.walk(st.value))
    return out


def _passes(view: KernelView, space: str, lane) -> float | None:
    """How many times a warp goes round its loads of ``space``: the iterations of the
    sequential loops inside the lock-step loop around them (the most of any load).
    A loop the generator unrolls counts too: its iterations' loads still come one
    after the other, as far as the registers let the compiler hoist them (ncu on the
    H100: gesummv hopper_v2, 4 unrolled passes of 8 runs per lane, keeps 24.3% of its
    25% occupancy over two rounds of blocks). None where a trip count has no value
    or there is no load."""
    most = None
    for _, inner in _lane_loads(view, space, lane):
        passes = 1.0
        for lp in inner:
            trips = _trips(lp)
            if trips is None:
                return None
            passes *= max(trips, 1.0)
        most = max(most or 0.0, passes)
    return most


def _uneven_trips(view: KernelView, space: str, lane) -> float | None:
    """The mean iterations of a grid-stride loop around the loads of ``space`` (a
    sequential loop inside ``lane`` whose start depends on the block and thread
    indices: ``for (i = bi * T + ti; i < n; i += stride)``) where the threads do not
    all go round it equally often: n / stride, of which the threads starting first
    take the ceiling and the others the floor. None where every thread goes round
    equally often, or there is no such loop."""
    parallel = {lp.var for lp in view.num.foreach_loops() if lp.var}
    for _, inner in _lane_loads(view, space, lane):
        for lp in inner:
            if (lp.kind != "for" or not lp.depends & parallel or lp.start is None
                    or lp.step is None or lp.bound is None):
                continue
            first = at_first_units(lp.start, parallel)
            if first is None:
                continue
            mean, most = _num((lp.bound - first) / lp.step), _trips(lp)
            if mean is not None and most is not None and 1 <= mean < most:
                return mean
    return None


def _filled_together(view: KernelView, lane, registers: int | None = None) -> dict[int, int]:
    """How many iterations' loads a warp keeps in flight at once, by load node, for the
    loads in ``lane`` that only fill a register array (``v[u] = input[i + u * T]``) in
    loops the generated code unrolls completely, each iteration filling another
    element: the compiler issues all of them before their values are used, the
    product of those loops' trip counts (histogram hopper_v1's 4 loads of ``input``).
    Any other load counts 1: a load whose value the same iteration computes with comes
    one iteration at a time (black_scholes gpu_v1's 4 options a thread, each behind its
    own ``if (i < n)``: in its SASS on the H100 each option's 3 loads follow the
    previous option's stores)."""
    from mcl.analyses.stats import register_spaces
    from mcl.analyses.unrolled import build_time_sizes, unrolled
    from mcl.mcpl import ast
    spaces = register_spaces(view.hardware)
    by_node = {id(a.node): a for a in view.num.accesses}
    sizes = build_time_sizes(view.sym)
    sym_loops = {id(lp.node): lp for lp in view.sym.loops}
    out: dict[int, int] = {}
    for st in ast.walk(lane.node):
        if not isinstance(st, ast.Assign) or st.op != "=":
            continue
        load, target = by_node.get(id(st.value)), by_node.get(id(st.target))
        if load is None or target is None or target.space not in spaces \
                or lane not in load.loops:
            continue
        together = 1
        for lp in reversed(load.loops[load.loops.index(lane) + 1:]):
            trips = _trips(lp)
            if (lp.var not in target.depends or trips is None
                    or not unrolled(sym_loops.get(id(lp.node)), lp, sizes)):
                break
            together *= int(trips)
        out[id(load.node)] = together
    out.update(_unrolled_by_factor(view, lane, out, registers))
    return out


def _unrolled_by_factor(view: KernelView, lane, counted: dict[int, int],
                        registers: int | None) -> dict[int, int]:
    """The loads of device memory in a loop that the compiler unrolls of its own accord
    (mcl.analyses.register_unrolling.compiler_unrolled: by the target's factor,
    partial_unroll, 4 on the H100 and H200), where no store to device memory, no atomic
    update and no barrier inside the loop orders its iterations: the copies' loads are issued
    together, as many as the factor or the loop's iterations (rowsum's ``s +=
    mat[i, j]`` over a row: 4; transpose_padded's ``tile[r, t] = a[i, j]``, 4 rows a
    warp, its stores to shared memory, which the loads cannot alias: 4). A load that
    another rule counts already keeps that count (``counted``). Each load in flight
    holds a register for its value until it is used: the copies beyond the first are
    as many as the ``registers`` a thread has (the compiler's, or the estimate) beyond
    what the kernel needs without the unrolling (mcl.analyses.registers.register_demand)
    give the loop's loads of an iteration (gesummv nvidia_v1, 9 loads an iteration in
    40 registers: 2 iterations)."""
    from mcl.analyses.register_unrolling import compiler_unrolled, partial_unroll
    from mcl.analyses.stats import main_space
    from mcl.mcpl import ast
    k = view.num
    factor = partial_unroll(k)
    device = main_space(k)
    if factor == 1 or device is None:
        return {}
    unrolled = {id(lp.node) for lp in compiler_unrolled(k, view.sym)}
    spare = None
    if registers is not None:
        from mcl.analyses.occupancy import estimated_demand
        spare = max(0, registers - estimated_demand(view))
    out: dict[int, int] = {}
    for load in k.accesses:
        if load.write or load.space != device or lane not in load.loops \
                or counted.get(id(load.node), 1) > 1:
            continue
        inner = load.loops[load.loops.index(lane) + 1:]
        lp = inner[-1] if inner else None
        if lp is None or id(lp.node) not in unrolled or lp.kind == "foreach":
            continue
        if any(a.write and a.space == device and lp in a.loops for a in k.accesses) or \
                any(lp in site.loops for site in k.atomics) or \
                any(isinstance(x, ast.Barrier) for x in ast.walk(lp.node)):
            continue
        trips = _num(lp.mean) if lp.mean is not None else _trips(lp)
        if trips is None or trips < 1:
            continue
        copies = min(factor, int(trips))
        if spare is not None:
            loads = sum(_num(k.executions(a.loops[a.loops.index(lp) + 1:])[0]) or 1
                        for a in k.accesses if not a.write and a.space == device
                        and lp in a.loops)
            copies = min(copies, 1 + int(spare // max(loads, 1)))
        out[id(load.node)] = max(1, copies)
    return out


def _sustained_bandwidth(hw, space: str) -> float | None:
    """The bandwidth of ``space`` that the time model moves traffic at: what the
    target file measured a kernel to reach (``sustained_bandwidth``: on the H100
    2.88 TB/s of the description's 3.35, benchmarks/opencl/inflight_probe.py, round
    35), else the description's."""
    bw = hw.memory_bandwidth(space)
    sustained = device_settings(hw).get("sustained_bandwidth")
    if bw and isinstance(sustained, int | float) and 0 < sustained <= float(bw):
        return float(sustained)
    return bw


def _launch_seconds(hw) -> float:
    """What a launch takes from its start to its end beside its work: the target file's
    ``launch_seconds``, measured (an empty kernel, benchmarks/opencl/launch_probe.py),
    where the memory part's bandwidth was fitted with it subtracted; 0 elsewhere (the
    H100's sustained bandwidth was fitted with it in the times)."""
    t = device_settings(hw).get("launch_seconds")
    return float(t) if isinstance(t, int | float) and t > 0 else 0.0


def _queue_exponent(hw) -> float:
    """How the traffic's time at the bandwidth (T_b) and the time its latency takes
    with the bytes in flight (T_l) make the memory part: (T_b^q + T_l^q)^(1/q). q = 1,
    their sum, has every request wait for the latency and for all others ahead of it;
    the target file's ``memory_queue_exponent`` is what fits the device (the H100's
    reads against the warps that keep them in flight: 2, inflight_probe.py)."""
    q = device_settings(hw).get("memory_queue_exponent")
    return float(q) if isinstance(q, int | float) and q >= 1 else 1.0


def memory_time(at_bandwidth: float, for_latency: float, q: float) -> float:
    """The memory part from the traffic's time at the bandwidth and the time its
    latency takes with the bytes in flight: (T_b^q + T_l^q)^(1/q) (:func:`_queue_exponent`;
    benchmarks/opencl/inflight_probe.py fits q with it)."""
    return (at_bandwidth ** q + for_latency ** q) ** (1 / q)


def _lane_loads(view: KernelView, space: str, lane):
    """The loads of ``space`` inside the lock-step loop ``lane``, each with the
    sequential loops inside ``lane`` around it (outermost first)."""
    for nacc in view.num.accesses:
        if not nacc.write and nacc.space == space and lane in nacc.loops:
            yield nacc, [lp for lp in nacc.loops[nacc.loops.index(lane) + 1:]
                         if lp.kind != "foreach"]


def _function_extra(view: KernelView) -> tuple[dict[str, float], dict[str, float]]:
    """The multiply-adds that the kernel's calls of built-in functions and its float
    divisions cost beyond the one operation each counts for, over all their
    executions, by function: with the target file's ``function_costs`` (its compiler's
    default, precise math) and with its ``function_costs_relaxed`` (relaxed math;
    mcl.analyses.target_settings). Empty where the target file gives no costs."""
    from mcl.analyses.stats import site_executions
    settings = device_settings(view.hardware)
    tables = [settings.get("function_costs") or {}, settings.get("function_costs_relaxed") or {}]
    out: tuple[dict[str, float], dict[str, float]] = ({}, {})
    k = view.num
    for site in k.ops:
        if site.kind != "compute" or not any(t.get(site.name, 1) > 1 for t in tables):
            continue
        times = _num(site_executions(k, site)[0] * site.count)
        if not times:
            continue
        for costs, extra in zip(tables, out, strict=True):
            cost = costs.get(site.name)
            if cost is not None and cost > 1:
                extra[site.name] = extra.get(site.name, 0.0) + times * (float(cost) - 1)
    return out


def _trips(lp) -> float | None:
    """A loop's trip count as a number (None where it has none)."""
    return _num(lp.trips) if lp.trips is not None else None


def estimated_loads(view: KernelView, loads: Requests | None = None) -> dict[int, object]:
    """The global loads whose address or trip count depends on data, as
    mcl.analyses.sectors estimates them (mcl.analyses.datadep), by their node;
    ``loads``: its ``global_loads(view)`` where the caller has them already."""
    from mcl.analyses.sectors import global_loads
    if loads is None:
        loads = global_loads(view)
    if loads is None or not loads.estimated:
        return {}
    return {id(ld.access.node): ld for ld in loads.loads
            if ld.lines_per_request is not None}


def _memory_instructions(view: KernelView, register_spaces,
                         estimated: dict | None = None, lines: bool = True) -> float | None:
    """Accesses to addressable memory by all units, in lanes' accesses (the load-store
    units take one warp's request per cycle); a run of 4 adjacent elements that the
    generator makes one 128-bit access counts once, and so do 4 reads of banked
    on-chip memory that the vendor compiler merges into one (mcl.analyses.banks.
    unrolled_run: matmul gpu_v3..hopper, whose memory-instructions part was 18-23%
    above their measured times while it counted each read of ``l_a[ei][k]``). A warp's
    request to cached memory takes a cycle per cache line its lanes touch (the
    first-level cache's tag stage).
    Reads of read-only memory that are constants of the generated code
    (:func:`_constant_operand`) are not counted. A load whose address or trip count
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
    total = 0.0
    for sacc, nacc in view.accesses():
        if sacc.space is None or sacc.space in register_spaces or nacc.name in operands:
            continue
        if sacc.space in read_only and not sacc.write and _constant_operand(nacc, found):
            continue
        est = (estimated or {}).get(id(nacc.node)) if not nacc.write else None
        if est is not None and found:
            total += est.requests * found[1] * (est.lines_per_request if lines else 1)
            continue
        execs = _num(view.num.executions(nacc.loops)[0])
        if execs is None:
            return None
        run = per = None
        if found and found[0] in nacc.loops:
            execs *= _issued(view, nacc, found)
            run = _run(view, nacc, found[0], found[1], banked_memory(hw, sacc) is not None)
            line = min((c.cache_line_size for c in hw.caches_for(sacc.space)
                        if c.cache_line_size), default=None)
            if line and lines:
                per = _lines_per_request(view, nacc, found, run, int(line))
                if per and nacc.write:
                    per *= _store_line_cycles(hw, per)
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


def _lines_per_request(view: KernelView, nacc, found, run, line: int) -> float | None:
    """Cache lines a warp's request touches, averaged over 8 consecutive iterations of
    the innermost sequential loop around it (a window that moves by one element
    straddles two lines in most of them)."""
    from mcl.analyses.warp_lanes import RUN, lane_offsets, run_offsets
    lane, width = found
    loops = nacc.loops[:-1] if run is not None else nacc.loops
    inner = next((lp for lp in reversed(loops) if lp.kind != "foreach" and lp.var), None)
    trips = view.value(inner.trips) if inner is not None and inner.trips is not None \
        else None
    step = (view.value(inner.step) if inner is not None and inner.step is not None
            else 1) or 1
    counts = []
    for i in range(min(8, trips) if trips and nacc.offset is not None else 1):
        acc = replace(nacc, offset=nacc.offset.subs(inner.symbol, inner.symbol + i * step)) \
            if i else nacc
        offs = run_offsets(view, acc, lane, width) if run is not None else \
            lane_offsets(view, acc, lane, width)
        if not offs:
            return None
        n = len({o * acc.element_bytes // line for o in offs})
        counts.append(max(1, n // RUN) if run is not None else n)
    return sum(counts) / len(counts)


def cache_link(hw, cache):
    """The link from ``cache`` to the execution units with the highest bandwidth."""
    best, best_bw = None, 0.0
    for ic in hw.links_of(cache):
        others = [b for b in hw.connected(ic) if b is not cache]
        bw = _num(ic.bandwidth) if ic.bandwidth is not None else None
        if bw and bw > best_bw and others and all(
                getattr(b, "kind", None) == "execution_unit" for b in others):
            best, best_bw = ic, bw
    return best


def cache_link_bandwidth(hw, cache) -> float | None:
    """Bytes per second of that link (None without one)."""
    link = cache_link(hw, cache)
    return _num(link.bandwidth) if link is not None else None


def _runs(sectors: set[int]) -> int:
    return sum(1 for s in sectors if s - 1 not in sectors)


def cache_bytes(view: KernelView, space: str, estimated: dict | None = None,
                occupancy=None) -> float | None:
    """Bytes the global loads in ``space`` take from the last-level cache (the
    ``cache`` part of the module docstring); None without a lock-step loop. The loads
    of one array inside the same loops fetch, per block, the union of their warps'
    sectors (mcl.analyses.block_reuse); a load that the block model cannot evaluate,
    the sectors of its warps' requests. A load whose address or trip count depends on
    data takes the sectors ``estimated`` gives it. ``occupancy``: the kernel's
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
    for first, sectors in gathers.values():
        total += gather_sectors(view, first, l1, occupancy, sectors, size) * size
    return total


def _warp_sectors(view: KernelView, nacc, lane, width: int, size: int) -> float:
    """The sectors a load's warp requests fetch over the kernel: per request the
    sectors its lanes touch, and in the iterations of the innermost sequential loop
    around it after the first only those it did not touch in the previous one."""
    from mcl.analyses.warp_lanes import RUN, lane_offsets, run_offsets

    run = run_offsets(view, nacc, lane, width)
    offs = run if run is not None else lane_offsets(view, nacc, lane, width)
    execs = _num(view.num.executions(nacc.loops)[0])
    if offs is None or execs is None or nacc.offset is None:
        return 0.0
    eb = nacc.element_bytes
    first = {o * eb // size for o in offs}
    per = float(len(first))
    loops = nacc.loops[:-1] if run is not None else nacc.loops
    inner = next((lp for lp in reversed(loops) if lp.kind != "foreach" and lp.var), None)
    trips = _num(inner.trips) if inner is not None and inner.trips is not None else None
    if inner is not None and trips and trips > 1:
        step = view.value(inner.step) if inner.step is not None else 1
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
    """Words all accesses to banked memory take from the banks: a warp's access takes
    the banks once per word that one bank serves in turn (the bank-conflict degree over
    the iterations of the loops around it, mcl.analyses.banks.profile; lanes that read
    the same word share it); a 128-bit access (a run of 4 elements per
    lane) is served half a warp at a time (mcl.analyses.banks.run_wavefronts). A warp
    none of whose lanes takes the ``if`` around an access does not issue it
    (:func:`_issued`: a tree's ``if (tid < s)``)."""
    from mcl.analyses.banks import banked_memory, conflict_degree, profile, run_wavefronts
    from mcl.analyses.warp_lanes import RUN, lockstep_loop
    found = lockstep_loop(view)
    hw = view.hardware
    total, mem = 0.0, None
    for sacc, nacc in view.accesses():
        banked = banked_memory(hw, sacc)
        if banked is None:
            continue
        mem = banked
        execs = _num(view.num.executions(nacc.loops)[0])
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
                conflict_degree(view, nacc, lane, width, mem) or 1
        total += execs * degree
    return (total, mem) if mem is not None else None


def predicted_time(view: KernelView, occupancy=None,
                   atomics_s: float | None = None) -> PredictedTime | None:
    """The predicted time of the numeric kernel of ``view`` (None without numbers)."""
    from mcl.analyses.stats import compulsory_bytes, counts_of_kernel, main_space
    from mcl.analyses.traffic import grid_units
    from mcl.analyses.warp_lanes import RUN, lockstep_loop, run_offsets

    k, hw = view.num, view.hardware
    if hw is None:
        return None
    space = main_space(k)
    peak = hw.peak_flops()
    bw = _sustained_bandwidth(hw, space) if space else None
    parts: dict[str, float] = {}
    c = counts_of_kernel(k)
    cb = _num(compulsory_bytes(k, space)) if space and bw else None
    if cb is not None and bw:
        parts["memory"] = cb / bw
    flops = _num(c.flops)
    functions: dict[str, float] = {}
    relaxed: dict[str, float] = {}
    if flops is not None and peak:
        # a multiply-add is two operations of the peak rate
        functions, relaxed = ({name: 2 * n / peak for name, n in extra.items()}
                              for extra in _function_extra(view))
        parts["arithmetic"] = flops / peak + sum(functions.values())
    lsu = _load_store_rate(hw)
    estimated = estimated_loads(view)
    accesses = _memory_instructions(view, c.register_spaces, estimated)
    if lsu and accesses is not None:
        parts["memory instructions"] = accesses / lsu
    missing: list[str] = []
    if space and not bw:
        missing.append(f"the bandwidth of '{space}'")
    if space:
        from mcl.analyses.traffic import write_back_cache
        cache = write_back_cache(hw, space)
        cbw = cache_link_bandwidth(hw, cache) if cache is not None else None
        if cache is not None and not cbw:
            missing.append(f"the bandwidth of {cache.name}'s link to the execution units")
        through = cache_bytes(view, space, estimated, occupancy) if cbw else None
        if through:
            parts[f"{cache.name} bandwidth"] = through / cbw
    clock = hw.clock_frequency()
    shared = _banked_accesses(view)
    if shared is not None and clock:
        words, mem = shared
        copies = instances(hw, mem)
        if copies:
            parts["shared memory"] = words / (mem.nr_banks * copies * clock)
    if occupancy is not None and occupancy.resident and cb is not None and clock:
        latency = hw.memory_latency(space)
        found = lockstep_loop(view)
        holders = instances(hw, occupancy.holder)
        threads = occupancy.threads
        if latency and holders and threads and found:
            lane, width = found
            blocks = grid_units(view, occupancy.unit)
            warps = min(occupancy.resident * holders, blocks or holders * occupancy.resident) \
                * max(1, threads // width)
            inflight = 0
            together = _filled_together(view, lane, occupancy.registers)
            for sacc, nacc in view.accesses():
                if nacc.write or sacc.space != space or lane not in nacc.loops:
                    continue
                run = run_offsets(view, nacc, lane, width)
                inflight += _REQUEST * (RUN if run is not None else 1) \
                    * together.get(id(nacc.node), 1)
            inflight = min(inflight, _REQUEST * RUN * _MAX_SITES) or _REQUEST
            passes = _passes(view, space, lane)
            if blocks and blocks > occupancy.resident * holders and passes:
                warps *= 1 - 1 / (2 * occupancy.resident * passes)
            rate = warps * inflight / (float(latency) / clock)
            parts["latency"] = cb / rate
            q = _queue_exponent(hw)
            mean = _uneven_trips(view, space, lane)
            if "memory" in parts and mean is not None:
                # a grid-stride loop whose threads go round it unequally often: all
                # warps make the first floor(mean) rounds together, a part of them
                # the last one, in which each still waits its round trip
                tb, tl = parts["memory"], parts["latency"]
                full, last = divmod(mean, 1.0)
                parts["memory"] = (full * memory_time(tb, tl, q)
                                   + memory_time(last * tb, tl, q)) / mean
            elif "memory" in parts:
                # a request waits for the latency and for its turn on the interface
                parts["memory"] = memory_time(parts["memory"], parts["latency"], q)

    found = lockstep_loop(view)
    issue = _issue_rate(hw, found[1]) if found else None
    instructions = _memory_instructions(view, c.register_spaces, estimated, lines=False) \
        if issue else None
    if instructions is not None and "arithmetic" in parts:
        # the arithmetic's instructions and the memory instructions share the issue slots
        # (the arithmetic part counts a multiply-add as one instruction of two operations)
        parts["issue"] = parts["arithmetic"] + instructions / (issue * found[1])
    if atomics_s:
        parts["atomics"] = atomics_s
    # a grid of fewer blocks than holders leaves the other holders idle
    blocks = grid_units(view, occupancy.unit) if occupancy is not None else None
    holders = instances(hw, occupancy.holder) if occupancy is not None else None
    if blocks and holders and blocks < holders:
        # what runs on the holders (their arithmetic, issue slots, load-store units,
        # banks and cache links) runs on the busy ones only; the memory interface and
        # the atomics' units are the device's, and the latency part counts the warps
        for key in parts:
            if key not in DEVICE_PARTS:
                parts[key] *= holders / blocks
        for extra in (functions, relaxed):
            for name in extra:
                extra[name] *= holders / blocks
    # the device starts blocks at a rate of its own
    starts = _dispatch_rate(hw, occupancy.threads) if blocks and occupancy.threads else None
    if starts:
        parts["block dispatch"] = blocks / starts
    latency = hw.memory_latency(space) if space else None
    if found and latency and clock and blocks and holders and occupancy.resident:
        phases, tiled = _barrier_phases(view, space, found[0])
        if phases:
            # the resident blocks start together and run at the same pace, so they wait
            # at their barriers at the same time: each phase exposes the memory latency
            # once per round of resident blocks, and the tiles' reads cross the memory
            # interface (at least the arrays they read once, at its bandwidth) while the
            # execution units idle
            rounds = -(-blocks // (occupancy.resident * holders))
            waits = rounds * phases * float(latency) / clock
            fill = _num(compulsory_bytes(k, space, tiled)) if bw else None
            if fill:
                waits += fill / bw
            parts["barrier waits"] = waits
            for key in WAITED:
                if key in parts:
                    parts[key] += waits
    if not parts:
        return None
    limiter = max(parts, key=parts.get)
    launch = _launch_seconds(hw)
    idle = (int(blocks), int(holders)) if blocks and holders and blocks < holders else None
    uncounted = [name for name, known in (
        ("arithmetic", flops is not None or not peak),
        ("issue", issue is None or "issue" in parts),
        ("memory instructions", accesses is not None or not lsu),
        ("shared memory", shared is not None or not _has_banked(view))) if not known]
    return PredictedTime(parts[limiter] + launch, limiter, parts,
                         sorted({ld.access.text for ld in estimated.values()}), functions,
                         relaxed, launch, missing, idle, uncounted)


def _has_banked(view: KernelView) -> bool:
    """Whether the kernel accesses banked on-chip memory (a shared-memory part)."""
    from mcl.analyses.banks import banked_memory
    return any(banked_memory(view.hardware, sacc) is not None for sacc, _ in view.accesses())
