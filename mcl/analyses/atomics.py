"""Atomic updates and their contention.

An atomic read-modify-write (the built-in ``atomicAdd``, the functions of
``lib.atomics``) on one element is serialised by the memory that holds it: the
updates of every unit that hits the same element wait for each other. The
analysis finds, for each atomic call, the loops around it whose index the updated
element does not depend on (and that no enclosing ``if (tid == 0)`` fixes): each
of their iterations updates the same element again. Their product is the number
of updates per element; each costs at least one latency of the memory holding
the element, so ``updates × latency / clock`` is a lower bound on the time the
updates take, one after the other. The float ``atomicAdd`` of OpenCL 1.2
devices is a compare-and-swap loop whose retries make contended updates far
slower than that (2^20 updates of one float take about 40 s on an H100), so the
message states the bound as a bound; the time model (:func:`queued_seconds`) takes
the target's measured time per update with as many updates of the element pending
at once as the resident blocks hold, where the target file has it. Integer updates
that the L2 performs queue, all of an array's, in the few units of its atomics the
array's bytes fall in (:func:`unit_queue`): a small histogram's updates take the L2
far longer than those of its most updated bin alone.

Where that bound is a sizeable part of the kernel's least time (its roofline),
the message is a warning that proposes combining values first: a tree in faster
memory per block, one atomic update per block. Updates of elements chosen by
data (a histogram) are reported with the number of updates and what decides
their contention.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import sympy

from mcl.analyses.kernel import AtomicSite, Kernel, Loop
from mcl.analyses.target_settings import device_settings, positive_setting
from mcl.analyses.values import number_text, time_text
from mcl.diagnostics import Diagnostic, info, warning

#: Above this fraction of the kernel's least time (roofline), serialised updates
#: are a warning; below it they are stated as information.
SIGNIFICANT = 0.25


@dataclass
class AtomicFinding:
    site: AtomicSite
    sharing: tuple[Loop, ...]          # loops whose iterations update the same element
    updates: sympy.Expr | None         # updates per element (None: chosen by data)
    num_updates: sympy.Expr | None     # the same with the parameter values
    total: sympy.Expr                  # updates in all
    num_total: sympy.Expr
    seconds: float | None              # lower bound of the serialised updates
    least_s: float | None              # the kernel's least time (roofline)
    element_s: float | None = None     # the most updated element's bound alone
    #: all its updates in the L2's atomic units (:func:`_with_units`)
    queue: UnitQueue | None = None


@dataclass(frozen=True)
class UnitQueue:
    """All the updates of an atomic call in the units of the L2's atomics its array
    falls in (:func:`unit_queue`)."""

    operations: float   # the L2's operations a warp request takes
    units: int          # the units the array's bytes fall in
    array_bytes: float
    sector: int         # bytes an operation updates (a transaction unit)
    seconds: float      # what all the updates take there


def _number(e: sympy.Expr | None) -> float | None:
    if e is None:
        return None
    try:
        return float(e)
    except TypeError:
        return None


class AtomicsAnalysis:
    """Updates per element of every atomic call, and a lower bound on their time."""

    name = "atomics"

    def analyze(self, sym: Kernel, num: Kernel | None, view: Any = None
                ) -> list[AtomicFinding]:
        """The findings of every atomic call; with the kernel's ``view`` (and numbers),
        each bound at least what the L2's atomic units take for all its updates
        (:func:`_with_units`)."""
        from mcl.analyses.stats import least_time

        num = num if num is not None and len(num.atomics) == len(sym.atomics) else None
        least = least_time(num) if num is not None and sym.atomics else None
        out = []
        for i, site in enumerate(sym.atomics):
            nloops = {lp.var: lp for lp in (num.atomics[i] if num else site).loops}
            loops = tuple(lp for lp in site.loops if lp.var not in site.pinned)
            total = sym.executions(loops)[0]
            # all the updates: a grid-stride loop at its threads' average rounds
            ntotal = sym.executions(tuple(nloops.get(lp.var, lp) for lp in loops),
                                    mean=True)[0]
            if site.target is None or not site.target.predictable:
                out.append(AtomicFinding(site, (), None, None, total, ntotal,
                                         self._chosen_seconds(num, i, ntotal), least))
                continue
            sharing = tuple(lp for lp in loops if lp.var not in site.target.depends
                            and lp.trips != 1)
            updates = sym.executions(sharing)[0]
            nupdates = sym.executions(tuple(nloops.get(lp.var, lp) for lp in sharing))[0]
            if updates == 1 or nupdates == 1:
                continue
            out.append(AtomicFinding(site, sharing, updates, nupdates, total, ntotal,
                                     self._seconds(sym.hardware, site, nupdates), least))
        if view is not None and num is not None:
            _with_units(out, view)
        return out

    @staticmethod
    def _seconds(hw: Any, site: AtomicSite, updates: sympy.Expr) -> float | None:
        n = _number(updates)
        if hw is None or n is None or site.target is None or site.target.space is None:
            return None
        each = update_seconds(hw, site.target)
        return n * each[0] if each is not None else None

    def _chosen_seconds(self, num: Kernel | None, i: int, total: sympy.Expr) -> float | None:
        """Elements chosen by data: some element takes at least its share of the
        updates (all updates over the elements of every copy of the array: a shared
        array has one per block), one after the other."""
        site = num.atomics[i] if num is not None else None
        size, copies = _array_elements(num, site) if site is not None else (None, 1.0)
        n = _number(total)
        if not size or n is None:
            return None
        return self._seconds(num.hardware, site, sympy.Float(n / (size * copies)))

    def report(self, findings: list[AtomicFinding], hw: Any) -> list[Diagnostic]:
        out = []
        for f in findings:
            call = f.site.node
            target = f.site.target.text if f.site.target is not None else "its first argument"
            if f.updates is None:
                if bound_by_units(f):
                    bound = (f"; {_units_text(f, hw)} where the data spread the values at "
                             "random (more where values repeat)")
                elif f.seconds:
                    bound = (f"; the most updated element takes at least its share, at "
                             f"least {time_text(f.seconds)} one after the other")
                else:
                    bound = ""
                out.append(info(
                    "feedback-atomics",
                    f"{f.site.name}({target}, ...): {_amount(f.total, f.num_total)} atomic "
                    f"updates of elements chosen by the data; updates of the same element are "
                    f"serialised, so their time depends on how often values repeat" + bound,
                    call.span, "where few elements take most updates, combine updates "
                    "in faster memory per block first (a private copy of the elements "
                    "per block or warp) and update each element once per block"))
                continue
            who = ", ".join(lp.label for lp in f.sharing)
            amount = _amount(_written(f.sharing, f.updates), f.num_updates)
            msg = (f"{f.site.name}({target}, ...): each element is updated by each of "
                   f"{who}: {amount} updates of one element, serialised")
            space = f.site.target.space if f.site.target is not None else None
            each = update_seconds(hw, f.site.target) if hw is not None and space else None
            element = f.element_s if f.element_s is not None else f.seconds
            if element is not None and each is not None:
                msg += f"; at least {time_text(element)} ({each[1]})"
            if bound_by_units(f):
                msg += f"; all {_amount(f.total, f.num_total)} updates: {_units_text(f, hw)}"
            significant = f.seconds is None or f.least_s is None or \
                f.seconds >= SIGNIFICANT * f.least_s
            if f.seconds is not None and f.least_s is not None:
                msg += f", against a least kernel time of {time_text(f.least_s)}"
            if f.site.pinned:   # already one update per group (if (tid == 0))
                groups = " and ".join(f"{lp.node.group}" for lp in f.sharing
                                      if lp.kind == "foreach") or "iterations"
                hint = (f"the values are already combined before the update: use fewer "
                        f"{groups}, each combining more values")
            else:
                hint = ("combine the values of a block first (a tree in faster memory) and "
                        "let one unit per block update the element: fewer updates of it")
            d = (warning if significant else info)("feedback-atomics", msg, call.span,
                                                   hint if significant else None)
            d.data.update(updates=str(f.updates), seconds=f.seconds, least_seconds=f.least_s,
                          loops=[lp.var for lp in f.sharing])
            out.append(d)
        return out


def unreturned_updates(k: Kernel) -> set[int]:
    """The elements (by their access's node) that atomic calls of ``k`` update without
    using the result, each call a statement of its own: the memory performs the update
    and returns nothing a warp waits for."""
    from mcl.mcpl import ast
    alone = {id(st.expr) for st in ast.walk(k.function) if isinstance(st, ast.ExprStmt)}
    return {id(a.target.node) for a in k.atomics if a.target is not None and id(a.node) in alone}


def bound_by_units(f: AtomicFinding) -> bool:
    """Whether the L2's units bound the finding's updates more than its most updated
    element does."""
    return f.queue is not None and f.queue.seconds > (f.element_s or 0.0)


def _units_text(f: AtomicFinding, hw: Any) -> str:
    """What the L2's atomic units take for all of ``f``'s updates, for the messages."""
    from mcl.analyses.traffic import write_back_cache
    from mcl.analyses.values import bytes_text
    cache = write_back_cache(hw, f.site.target.space)
    each = update_seconds(hw, f.site.target)
    q = f.queue
    units = f"{q.units} unit{'s' if q.units != 1 else ''}"
    return (f"the {cache.name} performs them in the {units} of its atomics that the "
            f"array's {bytes_text(q.array_bytes)} falls in, about {q.operations:.3g} "
            f"operations a warp request (one per {q.sector}-B sector it updates, lanes that "
            f"update the same word each in turn), {time_text(each[0])} an operation: at "
            f"least {time_text(q.seconds)}")


def _array_elements(num: Kernel, site: AtomicSite) -> tuple[float | None, float]:
    """(elements, copies) of the array ``site`` updates: a declaration's elements and
    how many copies of it the kernel has (a shared array one per block), else a
    parameter's extents and one copy; (None, 1) where unknown."""
    if site.target is None or site.target.symbol is None:
        return None, 1.0
    decl = next((d for d in num.decls if d.symbol is site.target.symbol), None)
    size = _number(decl.elements) if decl is not None else None
    copies = 1.0
    if decl is not None:
        copies = _number(num.executions(tuple(lp for lp in decl.loops
                                              if lp.kind == "foreach"))[0]) or 1.0
    if size is None:
        size = 1.0
        for x in (_number(e) for e in site.target.sizes):
            size = size * x if x is not None and size is not None else None
    return size, copies


def _with_units(findings: list[AtomicFinding], view: Any) -> None:
    """Each finding's ``seconds`` at least what the L2's atomic units take for all its
    updates (:func:`unit_queue`), where the target file measured them."""
    for f in findings:
        f.queue = unit_queue(f, view)
        if f.queue is None:
            continue
        f.element_s = f.seconds
        if f.seconds is None or f.queue.seconds > f.seconds:
            f.seconds = f.queue.seconds


def unit_queue(finding: AtomicFinding, view: Any) -> UnitQueue | None:
    """The queue in the L2's atomic units (:class:`UnitQueue`) of the integer
    updates of ``finding`` that the cache holding device memory performs (an H100's L2),
    where the target file has ``atomic_update_interval`` and ``atomic_unit_bytes``.

    A warp's request takes the L2 an operation per 32-B sector it updates: lanes that
    update different words of the sector together, lanes that update the same word one
    after the other (a warp-uniform element the compiler merges into one update). The
    operations on an array queue in the units its bytes fall in, one per
    ``atomic_unit_bytes``, an operation per ``atomic_update_interval`` each
    (benchmarks/opencl/atomic_spread_probe.py: histogram perfect's 256 ints take two
    units; its 2^26 updates 17.3 ms on the H200 where the values are drawn at random,
    21.4 on reference.py's, half of them in 8 bins, whose updates alone take 3.2 ms one
    after the other). Elements the data choose are taken as drawn at random over the
    array (:func:`chosen_operations`). None where this does not apply or a figure is
    missing."""
    from mcl.analyses.sectors import access_requests
    from mcl.analyses.traffic import write_back_cache
    from mcl.analyses.warp_lanes import lockstep_loop, transaction_size

    hw = view.hardware
    target = finding.site.target
    if hw is None or target is None or target.space is None or not _integer(target) \
            or write_back_cache(hw, target.space) is None:
        return None
    interval = positive_setting(hw, "atomic_update_interval")
    unit = positive_setting(hw, "atomic_unit_bytes")
    found = lockstep_loop(view)
    site = next((a for a in view.num.atomics if a.node is finding.site.node), None)
    if not (interval and unit and found is not None and site is not None
            and site.target is not None):
        return None
    lane, width = found
    elements, copies = _array_elements(view.num, site)
    if not elements or copies != 1.0:
        return None
    sector = transaction_size(view, target.space)[0]
    if finding.updates is None:
        total = _number(finding.num_total)
        if total is None:
            return None
        lanes = width if lane in site.loops else 1
        requests = total / lanes
        operations = chosen_operations(int(elements),
                                       max(1, sector // max(1, target.element_bytes)), lanes)
    else:
        got = access_requests(view.num, site.target, lane, width, sector)
        if got is None:
            return None
        requests, operations = got
    size = elements * target.element_bytes
    units = max(1, math.ceil(size / unit))
    return UnitQueue(operations, units, size, sector,
                     requests * operations * interval / units)


def chosen_operations(elements: int, words: int, lanes: int, samples: int = 4096) -> float:
    """The L2's operations a warp's request of ``lanes`` atomic updates takes on average
    where the data choose each lane's element at random among ``elements`` (``words``
    to a 32-B sector): per sector it touches, the most lanes updating one of its words
    (a fixed sample of ``samples`` warps)."""
    import numpy as np

    rng = np.random.default_rng(0)
    chosen = rng.integers(0, max(1, elements), size=(samples, lanes), dtype=np.int64)
    rows = np.repeat(np.arange(samples, dtype=np.int64), lanes)
    keys, counts = np.unique(rows * elements + chosen.ravel(), return_counts=True)
    row, word = np.divmod(keys, elements)
    sectors, at = np.unique(row * (elements // words + 1) + word // words,
                            return_inverse=True)
    most = np.zeros(len(sectors), dtype=np.int64)
    np.maximum.at(most, at, counts)
    return float(most.sum()) / samples


def queued_seconds(findings: list[AtomicFinding], view: Any, occ: Any) -> float | None:
    """What the updates of the most updated element take in the time model: for a float
    atomicAdd that the target makes a compare-and-swap loop (``float_atomic_add =
    "cas"``), the device's measured time per update with as many updates of the element
    pending at once as the resident blocks hold (:func:`cas_seconds`); else the
    serialised updates' bound of the finding (integer updates back to back, elements
    chosen by data at least their share, all the updates of an array in the L2's units
    it falls in: :func:`_with_units`). They overlap the rest of the kernel, except those
    made at the blocks' end (:func:`end_seconds`)."""
    return _most_seconds(findings, view, occ)


def _most_seconds(findings: list[AtomicFinding], view: Any, occ: Any) -> float | None:
    """The longest of the findings' times in the time model (:func:`queued_seconds`)."""
    times = [cas_seconds(f, view, occ) or f.seconds for f in findings]
    return max((t for t in times if t), default=None)


def end_seconds(findings: list[AtomicFinding], view: Any, occ: Any) -> float | None:
    """What the updates a block makes at its end take, of :func:`queued_seconds`'s: those
    of the calls that follow every load of device memory in the lock-step loop and that
    no loop around a load encloses (histogram's merges of each block's bins into hist,
    after the barrier that ends its stream; a reduction's one update a block). The time
    model queues them after the streams the blocks end at about the same time
    (mcl.analyses.timing: ``block_end_spread``). None where there are none."""
    from mcl.analyses.stats import main_space
    from mcl.analyses.timing_overlap import lane_loads
    from mcl.analyses.warp_lanes import lockstep_loop
    from mcl.mcpl import ast

    found = lockstep_loop(view)
    space = main_space(view.num)
    if found is None or space is None:
        return None
    lane = found[0]
    order = {id(n): i for i, n in enumerate(ast.walk(lane.node))}
    targets = {id(a.target) for a in view.num.atomics if a.target is not None}
    loads = [(a, inner) for a, inner in lane_loads(view, space, lane) if id(a) not in targets]
    if not loads:
        return None
    last = max(order.get(id(a.node), -1) for a, _ in loads)
    around = {id(lp) for _, inner in loads for lp in inner}
    at_end = []
    for f in findings:
        site = next((a for a in view.num.atomics if a.node is f.site.node), None)
        if site is None or lane not in site.loops or order.get(id(site.node), -1) < last \
                or any(id(lp) in around for lp in site.loops[site.loops.index(lane) + 1:]):
            continue
        at_end.append(f)
    return _most_seconds(at_end, view, occ)


def cas_seconds(finding: AtomicFinding, view: Any, occ: Any) -> float | None:
    """The compare-and-swap updates of one float element, where the target's code makes
    them so and measured them: each update retries until no other came in between, so
    an update takes longer the more are pending. ``P`` pending: the work-items of a
    block that update the element (those its loops inside the block give, 1 where an
    ``if (tid == 0)`` picks one) times the blocks resident at once. Updates that start
    together (no more than ``P``) take the target's ``cas_update_seconds`` for that
    many each; where blocks replace each other in the queue (more updates than ``P``),
    the first ``P`` so and every further one ``cas_stream_seconds`` for ``P``
    (benchmarks/opencl/cas_rate.py). None where this does not apply."""
    from mcl.analyses.timing_rates import instances
    from mcl.analyses.traffic import grid_units, write_back_cache

    hw = view.hardware
    target = finding.site.target
    settings = device_settings(hw) if hw is not None else {}
    n = _number(finding.num_updates)
    if target is None or _integer(target) or settings.get("float_atomic_add") != "cas" \
            or n is None or occ is None or not occ.resident or target.space is None:
        return None
    if write_back_cache(hw, target.space) is None:
        return None   # measured for device memory, which the L2 holds: not shared memory
    together, stream = settings.get("cas_update_seconds"), settings.get("cas_stream_seconds")
    if not isinstance(together, dict) or not isinstance(stream, dict):
        return None
    per_block = 1.0
    for lp in finding.sharing:
        unit = getattr(getattr(lp.group, "unit", None), "name", None)
        if lp.kind == "foreach" and unit != occ.unit:
            per_block *= _number(lp.trips) or 1.0
    blocks, holders = grid_units(view, occ.unit), instances(hw, occ.holder)
    if not blocks or not holders:
        return None
    pending = per_block * min(blocks, occ.resident * holders)
    each = update_seconds(hw, target)      # one memory latency: the least an update takes
    floor = each[0] if each is not None else 0.0
    first = min(n, pending)
    seconds = first * max(floor, _interpolated(together, first))
    if n > pending:
        seconds += (n - pending) * max(floor, _interpolated(stream, pending))
    return seconds


def _interpolated(table: dict, x: float) -> float:
    """The table's value (keys: counts, as strings) at ``x``: straight lines between its
    points on logarithmic axes, the last line beyond them, and below the first point
    its value scaled by ``x`` (fewer pending updates, proportionally less waiting)."""
    pts = sorted((float(k), float(v)) for k, v in table.items())
    if x <= pts[0][0]:
        return pts[0][1] * x / pts[0][0]
    if len(pts) == 1:
        return pts[0][1]
    i = next((i for i in range(1, len(pts)) if x <= pts[i][0]), len(pts) - 1)
    (x0, y0), (x1, y1) = pts[i - 1], pts[i]
    slope = math.log(y1 / y0) / math.log(x1 / x0)
    return y0 * (x / x0) ** slope


def update_seconds(hw: Any, target: Any) -> tuple[float, str] | None:
    """Seconds between two updates of one element of ``target`` that queue, and how the
    message says so. Integer updates of memory that a cache holds run in that cache
    (an H100's L2): where the target file measures how far apart the cache performs
    them (``atomic_update_interval``: 0.74 ns on the H100, benchmarks/opencl/
    atomic_rate.py), that interval; else the latency of the cache's link to the
    execution units (:func:`update_latency`; the H100's 200 cycles are 100 ns, which
    histogram hopper_v1's 1056 updates of each bin would take 107 µs: the whole kernel
    takes 92). A float atomicAdd of OpenCL 1.2 (a compare-and-swap loop) and other
    memories: the memory's latency."""
    from mcl.analyses.traffic import write_back_cache
    latency, clock = update_latency(hw, target), hw.clock_frequency()
    space = target.space
    cache = write_back_cache(hw, space) if space else None
    interval = positive_setting(hw, "atomic_update_interval")
    if _integer(target) and cache is not None and interval:
        return interval, (f"{time_text(interval)} apart: the {cache.name} "
                          f"performs integer updates of one element back to back")
    if latency is None or not clock:
        return None
    seconds = float(latency) / float(clock)
    if latency == hw.memory_latency(space):
        return seconds, f"one {space} memory latency of {number_text(latency)} cycles each"
    return seconds, (f"{number_text(latency)} cycles each: integer updates run in the "
                     f"{cache.name}")


def _integer(target: Any) -> bool:
    return getattr(getattr(target.symbol, "type", None), "name", None) in ("int", "long")


def update_latency(hw: Any, target: Any) -> float | None:
    """Cycles one atomic update of ``target`` takes: an integer update runs in the
    cache that holds the memory (an H100's L2 performs atomics: the latency of its link
    to the SMs); a float atomicAdd of OpenCL 1.2 is a compare-and-swap loop (a read and
    a compare-and-swap: the memory's latency)."""
    from mcl.analyses.timing_rates import cache_link
    from mcl.analyses.traffic import write_back_cache
    latency = hw.memory_latency(target.space)
    if _integer(target):
        cache = write_back_cache(hw, target.space)
        link = cache_link(hw, cache) if cache is not None else None
        if link is not None and link.latency is not None:
            try:
                return min(float(latency or math.inf), float(link.latency))
            except TypeError:
                pass
    return latency


def _written(loops: tuple[Loop, ...], e: sympy.Expr) -> str:
    """The number of iterations as the kernel writes the sizes (``nrBlocks``)."""
    texts = [lp.size_text for lp in loops]
    return " * ".join(texts) if loops and all(texts) else str(e)


def _amount(e: sympy.Expr | str, value: sympy.Expr | None) -> str:
    """``n (= 268435456)``: the expression, with its value where it has one."""
    n = _number(value)
    if n is None:
        return str(e)
    if str(e) == number_text(n) or str(e) == str(int(n)):
        return number_text(n)
    return f"{e} (= {number_text(n)})"
