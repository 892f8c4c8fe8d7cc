"""How a kernel's loads overlap, for the time model (mcl.analyses.timing): how many
iterations' loads a warp keeps in flight at once (a register array filled in an
unrolled loop, the copies of an unrolled loop whose body the compiler predicates, a
loop the compiler unrolls of its own accord), how often it goes round
its loads, a grid-stride loop that takes its threads round unequally often, the
phases in which a block's warps wait at a barrier for a tile's loads, and a grid of few
rounds that ends while its warps progress unevenly (named by the time message, not
counted in the time)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from mcl.analyses.kernel import Access, Loop
from mcl.analyses.kernel_syntax import at_first_units
from mcl.analyses.stats import viewed_arrays
from mcl.analyses.timing_rates import number

if TYPE_CHECKING:
    from mcl.analyses.functions import KernelView


def lane_loads(view: KernelView, space: str, lane):
    """The loads of ``space`` inside the lock-step loop ``lane``, each with the
    sequential loops inside ``lane`` around it (outermost first)."""
    for nacc in view.num.accesses:
        if not nacc.write and nacc.space == space and lane in nacc.loops:
            yield nacc, [lp for lp in nacc.loops[nacc.loops.index(lane) + 1:]
                         if lp.kind != "foreach"]


def trip_number(lp) -> float | None:
    """A loop's trip count as a number (None where it has none)."""
    return number(lp.trips) if lp.trips is not None else None


def barrier_phases(view: KernelView, space: str, lane) -> tuple[float, set[str]]:
    """Iterations, per block, of the phases in which the block's warps wait at a
    barrier for the loads of ``space`` that fill its on-chip tile, and the arrays those
    loads read. A phase is an iteration of a sequential loop inside the lock-step loop
    whose body loads ``space`` and waits at a barrier; a load stored into the tile
    before a barrier that no such loop encloses (a tile filled once, then computed
    on) ends a phase at that barrier. So do the loads of an array that a warp makes
    only in passes it has in flight together (no loop around them, or loops of at most
    the compiler's unroll factor, mcl.analyses.register_unrolling.partial_unroll) and
    that only feed registers before a barrier: the warps have nothing to compute while
    they wait for them (held-out softmax_rows on the H200, a block per row of 1024
    floats making three such passes over it, two ending at a barrier's tree: 17.1 µs
    measured, 11.3 predicted without these phases, 14.0 with). A load in a loop of more
    passes (a reduction's accumulation) ends none: its warps compute while its next
    passes are in flight. The phases of a block are the most of a loop's iterations and
    the barriers that end phases of their own."""
    from mcl.analyses.register_unrolling import partial_unroll
    from mcl.mcpl import ast
    order = {id(n): i for i, n in enumerate(ast.walk(lane.node))}
    barriers = [order[id(x)] for x in ast.walk(lane.node) if isinstance(x, ast.Barrier)]
    fills = _tile_fills(view, lane)
    unroll = partial_unroll(view.num)
    most, arrays, ends = 0.0, set(), set()
    # per array, the barrier each of its loads in flight together reaches (None: none),
    # and the arrays also loaded in loops of more passes
    waited: dict[str, list[int | None]] = {}
    streamed: set[str] = set()
    for nacc, inner in lane_loads(view, space, lane):
        phases, mine = 1.0, 0.0
        for lp in inner:
            trips = trip_number(lp)
            if trips is None:
                break
            phases *= trips
            if ast.contains_barrier(lp.node):
                mine = max(mine, phases)
        if mine:
            arrays.add(nacc.name)
            most = max(most, mine)
            continue
        at = order.get(id(nacc.node))
        after = next((b for b in barriers if b > at), None)
        passes = _passes(inner)
        if id(nacc.node) in fills:
            if after is not None:           # a tile filled once, then computed on
                arrays.add(nacc.name)
                ends.add(after)
        elif passes is not None and passes <= unroll:
            waited.setdefault(nacc.name, []).append(after)
        else:
            streamed.add(nacc.name)
    # an array that a warp loads only in loops the compiler unrolls (its loads of a loop
    # in flight together): the warps wait for them at the next barrier
    for name, at in waited.items():
        if name not in streamed and any(b is not None for b in at):
            arrays.add(name)
            ends.update(b for b in at if b is not None)
    return max(most, float(len(ends))), viewed_arrays(view.num, arrays)


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


def load_passes(view: KernelView, space: str, lane) -> float | None:
    """How many times a warp goes round its loads of ``space``: the iterations of the
    sequential loops inside the lock-step loop around them (the most of any load).
    A loop the generator unrolls counts too: its iterations' loads still come one
    after the other, as far as the registers let the compiler hoist them (ncu on the
    H100: gesummv hopper_v2, 4 unrolled passes of 8 runs per lane, keeps 24.3% of its
    25% occupancy over two rounds of blocks). None where a trip count has no value
    or there is no load."""
    found = _passes_by_load(view, space, lane)
    return max((passes for _, passes in found), default=None) if found is not None else None


def _passes_by_load(view: KernelView, space: str, lane, counted=None):
    """Per load of ``space`` inside ``lane``, the product of the trip counts (each at
    least 1) of the sequential loops inside ``lane`` around it, of those ``counted``
    accepts where given; None where one of them has no value."""
    out = []
    for nacc, inner in lane_loads(view, space, lane):
        passes = _passes(inner, counted)
        if passes is None:
            return None
        out.append((nacc, passes))
    return out


def _passes(loops, counted=None) -> float | None:
    """The product of the trip counts, each at least 1, of ``loops`` (those ``counted``
    accepts where given); None where one of them has no value."""
    passes = 1.0
    for lp in loops:
        if counted is not None and not counted(lp):
            continue
        trips = trip_number(lp)
        if trips is None:
            return None
        passes *= max(trips, 1.0)
    return passes


def uneven_trips(view: KernelView, space: str, lane) -> float | None:
    """The mean iterations of a grid-stride loop around the loads of ``space`` (a
    sequential loop inside ``lane`` whose start depends on the block and thread
    indices: ``for (i = bi * T + ti; i < n; i += stride)``) where the threads do not
    all go round it equally often: n / stride, of which the threads starting first
    take the ceiling and the others the floor. None where every thread goes round
    equally often, or there is no such loop."""
    parallel = {lp.var for lp in view.num.foreach_loops() if lp.var}
    for _, inner in lane_loads(view, space, lane):
        for lp in inner:
            if (lp.kind != "for" or not lp.depends & parallel or lp.start is None
                    or lp.step is None or lp.bound is None):
                continue
            first = at_first_units(lp.start, parallel)
            if first is None:
                continue
            mean, most = number((lp.bound - first) / lp.step), trip_number(lp)
            if mean is not None and most is not None and 1 <= mean < most:
                return mean
    return None


def filled_together(view: KernelView, lane, registers: int | None = None
                    ) -> tuple[dict[int, int], list[UnrolledCopies]]:
    """How many iterations' loads a warp keeps in flight at once, by load node, for the
    loads in ``lane`` that only fill a register array (``v[u] = input[i + u * T]``) in
    loops the generated code unrolls completely, each iteration filling another
    element: the compiler issues all of them before their values are used, the
    product of those loops' trip counts (histogram hopper_v1's 4 loads of ``input``).
    A load whose value the same iteration computes with counts its loop's iterations
    where the compiler predicates the body (:func:`unrolled_copies`: vector_add's
    ``if (k < n) c[k] = a[k] + b[k]``), else 1: one iteration at a time (black_scholes
    gpu_v1's 4 options a thread, each behind its own ``if (i < n)``: in its SASS on the
    H100 each option's 3 loads follow the previous option's stores). Returned with
    those copies that load one at a time."""
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
            trips = trip_number(lp)
            if (lp.var not in target.depends or trips is None
                    or not unrolled(sym_loops.get(id(lp.node)), lp, sizes)):
                break
            together *= int(trips)
        out[id(load.node)] = together
    copies = unrolled_copies(view, lane, out)
    out.update({id(u.load.node): u.trips for u in copies if u.together})
    out.update(_unrolled_by_factor(view, lane, out, registers))
    return out, [u for u in copies if not u.together]


def _uncounted_loads(view: KernelView, lane, counted: dict[int, int]):
    """The loads of device memory inside ``lane`` that no rule counts more than once in
    flight yet (``counted``), each with the innermost loop inside ``lane`` around it
    (None where there is none)."""
    from mcl.analyses.stats import main_space
    k = view.num
    device = main_space(k)
    for load in k.accesses:
        if device is None or load.write or load.space != device \
                or lane not in load.loops or counted.get(id(load.node), 1) > 1:
            continue
        inner = load.loops[load.loops.index(lane) + 1:]
        yield load, (inner[-1] if inner else None)


def _ordered(k, lp) -> bool:
    """Whether an atomic update or a barrier inside loop ``lp`` orders its iterations."""
    from mcl.mcpl import ast
    return any(lp in site.loops for site in k.atomics) or \
        ast.contains_barrier(lp.node)


def _body_cost(view: KernelView, lp) -> float:
    """The multiply-adds one iteration of loop ``lp`` computes: half a one for each
    operation (a multiply-add is two), a built-in function or a division at its cost in
    the target file's ``function_costs``."""
    from mcl.analyses.target_settings import device_settings
    costs = device_settings(view.hardware).get("function_costs") or {}
    k = view.num
    total = 0.0
    for site in k.ops:
        if site.kind != "compute" or lp not in site.loops:
            continue
        inner = site.loops[site.loops.index(lp) + 1:]
        times = number(k.executions(inner)[0]) if inner else 1.0
        cost = costs.get(site.name)
        each = float(cost) if isinstance(cost, int | float) and cost > 1 else 0.5
        total += (times or 1.0) * site.count * each
    return total


@dataclass
class UnrolledCopies:
    """A load of device memory in a loop the generated code unrolls completely, used in
    the same copy of the body: its copies, the body's cost in multiply-adds where an
    ``if`` inside the loop guards the load (None: unguarded), and whether the compiler
    issues the copies' loads together (:func:`unrolled_copies`)."""

    load: Access
    loop: Loop
    trips: int
    cost: float | None
    together: bool


def predicated_body(view: KernelView) -> float | None:
    """The target file's ``predicated_body``: the multiply-adds up to which its compiler
    predicates a guarded loop body (None where it was not measured)."""
    from mcl.analyses.target_settings import device_settings
    limit = device_settings(view.hardware).get("predicated_body")
    return float(limit) if isinstance(limit, int | float) else None


def unrolled_copies(view: KernelView, lane, counted: dict[int, int]) -> list[UnrolledCopies]:
    """The loads of device memory in a loop the generated code unrolls completely, used in
    the copy that loads them (``counted``: the loads another rule counts in flight
    already), and whether the compiler issues all copies' loads before their work:
    where the body is one block of straight code, with no ``if`` around the load inside
    the loop, or an ``if`` whose body is short enough to predicate: at most
    :func:`predicated_body` multiply-adds (:func:`_body_cost`). A longer guarded body
    becomes a branch, and each copy loads after the previous one's stores (black_scholes
    gpu_v1's options, 69 operations and five calls). Measured with NVIDIA's compiler
    (benchmarks/opencl/unrolled_loads_probe.py): 4 copies of ``if (k < n) {v = a[k]; M
    multiply-adds; c[k] = v;}`` load together up to M = 16 and one at a time from 24.
    Empty where the target file has no ``predicated_body``; a load of an array the loop
    also writes keeps its order and is not listed."""
    from mcl.analyses.unrolled import build_time_sizes, unrolled
    limit = predicated_body(view)
    if limit is None:
        return []
    k = view.num
    sizes = build_time_sizes(view.sym)
    sym_loops = {id(lp.node): lp for lp in view.sym.loops}
    out: list[UnrolledCopies] = []
    for load, lp in _uncounted_loads(view, lane, counted):
        trips = trip_number(lp) if lp is not None else None
        if trips is None or trips < 2 or lp.kind != "for" \
                or not unrolled(sym_loops.get(id(lp.node)), lp, sizes):
            continue
        if any(a.write and a.name == load.name and lp in a.loops for a in k.accesses) or \
                _ordered(k, lp):
            continue
        depth = load.loops.index(lp)
        guarded = any(c.depth > depth for c in load.conditions)
        cost = _body_cost(view, lp) if guarded else None
        out.append(UnrolledCopies(load, lp, int(trips), cost, cost is None or cost <= limit))
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
    for load, lp in _uncounted_loads(view, lane, counted):
        if lp is None or id(lp.node) not in unrolled or lp.kind == "foreach":
            continue
        if any(a.write and a.space == device and lp in a.loops for a in k.accesses) or \
                _ordered(k, lp):
            continue
        trips = number(lp.mean) if lp.mean is not None else trip_number(lp)
        if trips is None or trips < 1:
            continue
        copies = min(factor, int(trips))
        if spare is not None:
            loads = sum(number(k.executions(a.loops[a.loops.index(lp) + 1:])[0]) or 1
                        for a in k.accesses if not a.write and a.space == device
                        and lp in a.loops)
            copies = min(copies, 1 + int(spare // max(loads, 1)))
        out[id(load.node)] = max(1, copies)
    return out


def round_trips(view: KernelView, space: str, lane, together: dict[int, int]) -> float | None:
    """How many times a warp waits for its loads of ``space`` from device memory: the
    iterations of the sequential loops inside ``lane`` around them that the generated
    code keeps rolled, over the iterations' loads a warp has in flight together
    (``together``: :func:`filled_together`); the loads of a loop unrolled completely
    are issued together, one wait. The most of any load; None where a trip count has
    no value or there is no load."""
    from mcl.analyses.unrolled import build_time_sizes, unrolled
    sizes = build_time_sizes(view.sym)
    sym_loops = {id(lp.node): lp for lp in view.sym.loops}
    found = _passes_by_load(view, space, lane,
                            lambda lp: not unrolled(sym_loops.get(id(lp.node)), lp, sizes))
    if found is None:
        return None
    return max((passes / max(1, together.get(id(nacc.node), 1)) for nacc, passes in found),
               default=None)


@dataclass(frozen=True)
class UnevenRound:
    """A grid that ends while its warps progress unevenly (:func:`uneven_round`)."""

    #: resident rounds of the grid's blocks
    rounds: float
    #: seconds: a block's life (the time over the rounds, at least one round), the issue
    #: part and the kernel's time without the launch
    life: float
    issue: float
    time: float
    #: the target file's ``uneven_progress_measured``: the least and most a round's end
    #: was measured to add, as shares of a block's life
    low: float
    high: float


#: the least share of the time the issue part takes, and the most rounds of resident
#: blocks, where the sequence probe measured the last round's uneven end
#: (benchmarks/opencl/sequence_probe.py on the H200: none with 32 multiply-adds an
#: element, the issue part about a fifth of the time; from 96 on, about half; at 2
#: rounds and fewer, not at 4)
UNEVEN_ISSUE_SHARE = 0.5
UNEVEN_ROUNDS = 2.0


def uneven_round(view: KernelView, occupancy, predicted) -> UnevenRound | None:
    """Where the warps of a grid of at most :data:`UNEVEN_ROUNDS` rounds of resident
    blocks go round their loads of device memory several times with no barrier between
    them, and the issue part takes at least :data:`UNEVEN_ISSUE_SHARE` of the predicted
    time: the schedulers then favour some warps, which finish early, and the last round
    ends with the slots of the rest idle. Measured (benchmarks/opencl/sequence_probe.py,
    benchmarks/results/perf/h200_2026-12-01_sequence/: black_scholes' traffic and
    arithmetic with 2 to 16 elements a work-item in sequence, ncu's warps active 86% to
    66%) as a share of a block's life, the target file's ``uneven_progress_measured``;
    not in the predicted time, which would need the cost of one element a work-item
    too (benchmarks/fidelity/CALIBRATION.md). None elsewhere."""
    from mcl.analyses.stats import main_space
    from mcl.analyses.target_settings import share_range
    from mcl.analyses.timing_rates import instances
    from mcl.analyses.traffic import grid_units
    from mcl.analyses.warp_lanes import lockstep_loop
    hw = view.hardware
    measured = share_range(hw, "uneven_progress_measured") if hw else None
    found = lockstep_loop(view)
    space = main_space(view.num)
    if measured is None or predicted is None or occupancy is None \
            or not occupancy.resident or not found or not space:
        return None
    # no barrier phases (so no barrier waits in the issue part): the probe had none
    issue = predicted.parts.get("issue", 0.0)
    time = predicted.seconds - predicted.launch
    blocks = grid_units(view, occupancy.unit)
    holders = instances(hw, occupancy.holder)
    if time <= 0 or issue < UNEVEN_ISSUE_SHARE * time or not blocks or not holders \
            or barrier_phases(view, space, found[0])[0]:
        return None
    rounds = blocks / (occupancy.resident * holders)
    passes = load_passes(view, space, found[0])
    if rounds > UNEVEN_ROUNDS or passes is None or passes < 2:
        return None
    return UnevenRound(rounds, time / max(1.0, rounds), issue, time, *measured)
