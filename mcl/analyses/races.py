"""Units that pass values to each other through an array they share with no barrier
between the write and the read.

Threads of a block that exchange values through shared memory must meet at a barrier
between the write and the read; without one the reader may see the element before or
after it is written (a race), at every level. One case is the description's own: the
lanes of a ``simd_group`` execute each statement together, so a warp's last steps of
a tree reduction (``l[t] += l[t + 16]; l[t] += l[t + 8]; ...``) are correct there:
every lane reads before any lane writes. NVIDIA's GPUs since Volta do not guarantee
that (independent thread scheduling: the lanes of a warp may run apart); where the
leaf's target file says so (``independent_thread_scheduling``), that code is warned
of too.

The check, per statement list inside the units' loops (barriers split it; a statement
that holds a barrier is a boundary, with its own lists inside): the accesses of an
array declared outside some of the foreach loops around them (the units of those
loops share it), every other loop at its first value, for every unit of those loops
(up to :data:`MOST_UNITS`, the first ones) that the ifs around each access let run: a
read by one unit of an element that another unit writes in the same list, in the same
iteration of the loops around both or, for a loop around both with no barrier in it,
in its next iteration (a tree whose steps lack their barrier); iterations further
apart are not compared.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import sympy

from mcl.analyses.block_reuse import grid_function, on_grid
from mcl.analyses.functions import KernelView
from mcl.analyses.kernel import Access, Loop
from mcl.analyses.reuse import shared_spaces
from mcl.analyses.target_settings import device_settings, target_file
from mcl.diagnostics import Diagnostic, Related, warning
from mcl.mcpl import ast

#: the most units (combinations of the sharing loops' indices) compared
MOST_UNITS = 4096


@dataclass(frozen=True)
class Exchange:
    """A read of an element that another unit writes between the same barriers."""

    read: Access            # of the kernel with symbolic sizes (for the message)
    written: Access
    reader: dict[str, int]  # the sharing loops' indices of the reader
    writer: dict[str, int]
    lanes: bool             # the two are lanes of one lock-step group
    lane: Loop | None       # the lock-step loop
    after: Loop | None = None   # the read in the iteration of this loop after the write's


def _has_barrier(s: ast.Node) -> bool:
    return any(isinstance(n, ast.Barrier) for n in ast.walk(s))


def _statements(s: ast.Stmt) -> tuple[ast.Stmt, ...]:
    return s.statements if isinstance(s, ast.Block) else (s,)


def _regions(stmts: tuple[ast.Stmt, ...], out: list[list[int]]) -> None:
    """The ids of the Index nodes of each barrier-free region of ``stmts`` into
    ``out``: a barrier ends a region, and so does a statement that holds one (the
    lists inside it are regions of their own)."""
    current: list[int] = []
    for s in stmts:
        if isinstance(s, ast.Barrier):
            out.append(current)
            current = []
        elif _has_barrier(s):
            out.append(current)
            current = []
            for child in ("then", "orelse", "body"):
                inner = getattr(s, child, None)
                if isinstance(inner, ast.Stmt):
                    _regions(_statements(inner), out)
        else:
            current.extend(id(n) for n in ast.walk(s) if isinstance(n, ast.Index))
    out.append(current)


def _units(loops: list[Loop]) -> list[tuple[int, ...]] | None:
    """The first :data:`MOST_UNITS` index combinations of ``loops`` (foreach loops from
    0 in steps of 1), or None where a trip count is no number."""
    sizes = []
    for lp in loops:
        if not getattr(lp.trips, "is_Integer", False) or lp.trips < 1:
            return None
        sizes.append(int(lp.trips))
    return list(itertools.islice(itertools.product(*map(range, sizes)), MOST_UNITS))


def _elements(acc: Access, loops: list[Loop], units: list[tuple[int, ...]],
              at: dict | None = None) -> np.ndarray | None:
    """The flat element ``acc`` touches for each unit, -1 where the ifs around it keep
    the unit out (other loops at their first values, or at ``at``'s: loop -> value);
    None where not a number."""
    if acc.offset is None or not units:
        return None
    fixed = {lp.symbol: lp.start if lp.start is not None else sympy.Integer(0)
             for lp in acc.loops if lp.var and lp not in loops}
    fixed.update({lp.symbol: v for lp, v in (at or {}).items()})
    varying = [lp.symbol for lp in loops]
    grid = [np.asarray(col) for col in zip(*units, strict=True)]
    fn = grid_function(acc.offset, fixed, varying)
    offsets = on_grid(fn, grid) if fn is not None else None
    if offsets is None:
        return None
    runs = np.ones(len(units), dtype=bool)
    for c in acc.conditions:
        if c.expr is None:
            continue                    # data decide: taken to run
        test = grid_function(c.expr, fixed, varying)
        ok = on_grid(test, grid, boolean=True) if test is not None else None
        if ok is not None:
            runs &= ok
    return np.where(runs, offsets.astype(np.int64), -1)


def exchanges(view: KernelView) -> list[Exchange]:
    """The reads of elements that another unit writes with no barrier between (one
    per array: the first found)."""
    from mcl.analyses.warp_lanes import lockstep_loop
    k, sym = view.num, view.sym
    if len(sym.accesses) != len(k.accesses):
        return []
    found = lockstep_loop(view)
    lane, width = found if found else (None, 0)
    out = []
    for d in k.decls:
        if d.symbol is None or d.elements == 1 or d.space is None:
            continue
        accesses = [(n, s) for n, s in zip(k.accesses, sym.accesses, strict=True)
                    if n.symbol is d.symbol]
        # the units that share the array: the foreach loops around its accesses that
        # are not around its declaration, in a memory space all their units share
        # (the description's: hopper's `shared`, gpu's `local`; not one a unit owns)
        first = accesses[0][0] if accesses else None
        loops = [lp for lp in (first.loops if first else ())
                 if lp.kind == "foreach" and lp not in d.loops]
        if not loops or any(tuple(lp for lp in n.loops if lp in loops) != tuple(loops)
                            for n, _ in accesses) \
                or d.space not in {ms.name for ms in shared_spaces(view.hardware,
                                                                    loops[-1].group)}:
            continue
        hit = _first_exchange(loops, accesses, lane, width)
        if hit is not None:
            out.append(hit)
    return out


def _second_value(lp: Loop):
    """The index of a sequential loop in its second iteration, or None."""
    if lp.values is not None:
        return sympy.Integer(lp.values[1]) if len(lp.values) > 1 else None
    if lp.start is None or lp.step is None or not getattr(lp.trips, "is_Integer", False) \
            or lp.trips < 2:
        return None
    return lp.start + lp.step


def _first_exchange(loops: list[Loop], accesses, lane: Loop | None,
                    width: int) -> Exchange | None:
    """The first read among ``accesses`` of an element another unit writes between the
    same barriers: in the same iteration of the loops around both, or, for a loop
    around both with no barrier in it, the read in the iteration after the write's."""
    units = _units(loops)
    if not units:
        return None
    regions: list[list[int]] = []
    _regions(_statements(loops[-1].node.body), regions)
    region_of = {node: i for i, ids in enumerate(regions) for node in ids}
    elements = {id(n): _elements(n, loops, units) for n, _ in accesses}
    at = loops.index(lane) if lane in loops else None
    for w, w_sym in accesses:
        if not w.write or elements[id(w)] is None or id(w.node) not in region_of:
            continue
        writers: dict[int, int] = {}
        for u, e in enumerate(elements[id(w)]):
            writers.setdefault(int(e), u)
        writers.pop(-1, None)
        for r, r_sym in accesses:
            if r.write or region_of.get(id(r.node)) != region_of[id(w.node)]:
                continue
            # the read in the same iteration, then in the next one of each sequential
            # loop around both that no barrier separates the iterations of
            tries = [(None, elements[id(r)])]
            for lp in r.loops:
                if lp.kind != "foreach" and lp in w.loops and not _has_barrier(lp.node) \
                        and (nxt := _second_value(lp)) is not None:
                    tries.append((lp, _elements(r, loops, units, {lp: nxt})))
            for after, read in tries:
                hit = _exchange(read, writers, units, loops, at, width) \
                    if read is not None else None
                if hit is not None:
                    reader, writer, lanes = hit
                    sym_after = next((x for x in r_sym.loops if after is not None
                                      and x.var == after.var), None)
                    return Exchange(r_sym, w_sym, reader, writer, lanes, lane, sym_after)
    return None


def _exchange(read: np.ndarray, writers: dict[int, int], units, loops, at, width):
    """The first unit whose read element another unit writes: (reader, writer, whether
    the two are lanes of one lock-step group), or None."""
    names = [lp.var for lp in loops]
    for u, e in enumerate(read):
        v = writers.get(int(e))
        if e < 0 or v is None or v == u:
            continue
        a, b = units[u], units[v]
        lanes = at is not None and all(
            x == y for i, (x, y) in enumerate(zip(a, b, strict=True)) if i != at) \
            and a[at] // width == b[at] // width
        return dict(zip(names, a, strict=True)), dict(zip(names, b, strict=True)), lanes
    return None


def _unit_text(unit: dict[str, int]) -> str:
    return ", ".join(f"{var} = {value}" for var, value in unit.items())


def report(view: KernelView) -> list[Diagnostic]:
    """A warning per array whose units exchange values without a barrier: always
    between units that do not run in lock-step, between the lanes of a lock-step
    group where the target file says its device schedules them independently."""
    hw = view.hardware
    if hw is None:
        return []
    apart = bool(device_settings(hw).get("independent_thread_scheduling"))
    out = []
    for x in exchanges(view):
        reader, writer = _unit_text(x.reader), _unit_text(x.writer)
        if x.after is not None:
            reader += f" in the next iteration of loop {x.after.var}"
        related = [Related(x.written.node.span, f"written by {writer} here")]
        if x.after is not None:
            related.append(Related(x.after.node.span, f"no barrier in loop {x.after.var}"))
        if x.lanes:
            if not apart:
                continue        # the description's lock-step: valid warp-synchronous code
            d = warning(
                "feedback-lockstep",
                f"{x.read.text}: {reader} reads the element that {writer} writes at "
                f"{x.written.text}, with no barrier between: this relies on the lanes "
                f"running in lock-step, which '{hw.name}' does not guarantee "
                f"({target_file(hw).name}: independent_thread_scheduling), so the lane "
                f"may read the element before or after it is written",
                x.read.node.span,
                "separate the steps by barriers (the barrier-separated tree of the "
                "rest), or let each lane keep its own value",
                related + [Related(x.lane.node.span, "the lock-step loop")])
        else:
            d = warning(
                "feedback-race",
                f"{x.read.text}: {reader} reads the element that {writer} writes at "
                f"{x.written.text}, with no barrier between: the two run apart, so the "
                f"read may come before or after the write",
                x.read.node.span,
                f"put a barrier({x.read.space}) between the write and the read",
                related)
        d.data.update(array=x.read.name, reader=x.reader, writer=x.writer)
        out.append(d)
    return out
