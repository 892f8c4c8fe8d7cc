"""Units that pass values to each other through an array they share with no barrier
between the write and the read: an array declared in the kernel in memory they share,
or a parameter the kernel both writes and reads (an in-place update of device memory,
which every unit shares and whose elements only barriers of its own memory order
within a block, and nothing across blocks).

Threads of a block that exchange values through shared memory must meet at a barrier
between the write and the read; without one the reader may see the element before or
after it is written (a race), at every level. One case is the description's own: the
lanes of a ``simd_group`` execute each statement together, so a warp's last steps of
a tree reduction (``l[t] += l[t + 16]; l[t] += l[t + 8]; ...``) are correct there:
every lane reads before any lane writes. NVIDIA's GPUs since Volta do not guarantee
that (independent thread scheduling: the lanes of a warp may run apart); where the
leaf's target file says so (``independent_thread_scheduling``), that code is warned
of too.

The check: the barrier intervals of the units' code (:class:`_Intervals`: a barrier
starts one; the interval before a loop with barriers goes on into its first
iteration, and its last interval into its next iteration's start); the accesses of an
array declared outside some of the foreach loops around them (the units of those
loops share it), in a memory space the description lets those units share; for
every unit (up to :data:`MOST_UNITS`, the first ones) that the ifs around an access
let run, the elements it touches over every iteration of the loops around it that
hold no barrier (up to :data:`MOST_ITERATIONS`), the loops with barriers at their
first value (or next, across an iteration's end); a read by one unit of an element
that another unit writes in the same interval. Elements that data choose (a
histogram's atomic updates) are not compared.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import sympy

from mcl.analyses.block_reuse import grid_function, loop_range, on_grid
from mcl.analyses.functions import KernelView
from mcl.analyses.kernel import Access, Loop
from mcl.analyses.reuse import shared_spaces
from mcl.analyses.target_settings import device_settings, target_file
from mcl.diagnostics import Diagnostic, Related, warning
from mcl.mcpl import ast

#: the most units (combinations of the sharing loops' indices) compared
MOST_UNITS = 4096
#: the most iterations of the barrier-free loops around an access enumerated per unit,
#: and the most (unit, iteration) points in all
MOST_ITERATIONS = 256
MOST_POINTS = 1 << 18


@dataclass(frozen=True)
class Exchange:
    """A read of an element that another unit writes between the same barriers."""

    read: Access            # of the kernel with symbolic sizes (for the message)
    written: Access
    reader: dict[str, int]  # the sharing loops' indices of the reader
    writer: dict[str, int]
    reader_at: str          # the iterations of the loops around the read ("" where none)
    writer_at: str
    lanes: bool             # the two are lanes of one lock-step group
    lane: Loop | None       # the lock-step loop
    after: Loop | None = None   # the read in the iteration of this loop after the write's
    write_after: bool = False   # the write in the iteration after the read's (`after`)


class _Intervals:
    """The barrier intervals of a statement list: for each Index node, the intervals
    (ids) it is in, each with the loop whose next iteration it is in there (None: the
    same iteration). A barrier starts a new interval; an ``if`` that holds one joins
    the intervals its branches end in; a loop that holds one continues the interval
    before it into its first iteration, and the interval its body ends in into its
    next iteration's start (the accesses there at the loop's next index)."""

    def __init__(self, loops_by_node: dict[int, Loop], space: str | None = None):
        self.member: dict[int, list[tuple[int, Loop | None]]] = {}
        self.loops_by_node = loops_by_node
        self.space = space      # only barriers of this memory order (None: every one)
        self.count = 0

    def new(self) -> list[tuple[int, Loop | None]]:
        self.count += 1
        return [(self.count, None)]

    def walk(self, stmts, current):
        for s in stmts:
            if isinstance(s, ast.Barrier) and self.space in (None, s.space):
                current = self.new()
            elif not ast.contains_barrier(s, self.space):
                self.add(s, current)
            elif isinstance(s, ast.If):
                self.add(s.cond, current)
                then = self.walk(ast.statements_of(s.then), current)
                other = self.walk(ast.statements_of(s.orelse), current) \
                    if s.orelse is not None else current
                current = list(dict.fromkeys(then + other))
            elif isinstance(s, ast.For | ast.While | ast.ForEach | ast.Block):
                body = ast.statements_of(s if isinstance(s, ast.Block) else s.body)
                end = self.walk(body, current)
                lp = self.loops_by_node.get(id(s))
                if lp is not None and lp.kind != "foreach":
                    # the next iteration's first interval continues this one's last (a
                    # copy of it: the loop goes on or ends, never both)
                    self.walk(body, [(rid, lp) for rid, _ in self.copy(end)])
                current = end
            else:
                current = self.new()
        return current

    def copy(self, current):
        """New intervals holding what ``current``'s hold so far."""
        out = []
        for rid, tag in current:
            self.count += 1
            for member in self.member.values():
                member.extend((self.count, a) for r, a in list(member) if r == rid)
            out.append((self.count, tag))
        return out

    def add(self, node, current) -> None:
        for n in ast.walk(node):
            if isinstance(n, ast.Index):
                self.member.setdefault(id(n), []).extend(current)


def _units(loops: list[Loop]) -> list[tuple[int, ...]] | None:
    """The first :data:`MOST_UNITS` index combinations of ``loops`` (foreach loops from
    0 in steps of 1), or None where a trip count is no number."""
    sizes = []
    for lp in loops:
        if not getattr(lp.trips, "is_Integer", False) or lp.trips < 1:
            return None
        sizes.append(int(lp.trips))
    return list(itertools.islice(itertools.product(*map(range, sizes)), MOST_UNITS))


@dataclass(frozen=True)
class _Touched:
    """The elements an access touches, a row a unit and a column an iteration of the
    loops enumerated (``labels``: those loops' values, "" where none)."""

    elements: np.ndarray
    labels: list[str]


def _elements(view: KernelView, acc: Access, loops: list[Loop],
              units: list[tuple[int, ...]], at: dict | None = None,
              space: str | None = None) -> _Touched | None:
    """The flat elements ``acc`` touches, a row for each unit and a column for each
    iteration of the sequential loops around it inside the units' loops that hold no
    barrier (all of them happen between the same barriers), -1 where the ifs around it
    keep the unit out; other loops at their first values, or at ``at``'s (loop ->
    value). None where not a number."""
    if acc.offset is None or not units:
        return None
    inner = acc.loops[acc.loops.index(loops[-1]) + 1:] if loops[-1] in acc.loops else ()
    spread = []
    points = 1
    for lp in inner:
        if lp.kind == "foreach" or (at and lp in at) or ast.contains_barrier(lp.node, space):
            continue
        r = loop_range(view, lp, MOST_ITERATIONS)
        if r is None or points * len(r.values) > min(MOST_ITERATIONS,
                                                     MOST_POINTS // len(units)):
            continue            # compared at its first value
        spread.append((lp, r))
        points *= len(r.values)
    fixed = {lp.symbol: lp.start if lp.start is not None else sympy.Integer(0)
             for lp in acc.loops if lp.var and lp not in loops}
    for lp, r in spread:
        fixed.pop(lp.symbol, None)
        fixed.update(r.substitution)
    fixed.update({lp.symbol: v for lp, v in (at or {}).items()})
    varying = [lp.symbol for lp in loops] + [r.symbol for _, r in spread]
    combos = list(itertools.product(*(r.values for _, r in spread)))
    rows = [u + c for u in units for c in combos]
    grid = [np.asarray(col) for col in zip(*rows, strict=True)]
    fn = grid_function(acc.offset, fixed, varying)
    offsets = on_grid(fn, grid) if fn is not None else None
    if offsets is None:
        return None
    runs = np.ones(len(rows), dtype=bool)
    tests = [c.expr for c in acc.conditions if c.expr is not None] + \
        [r.bound for _, r in spread if r.bound is not None]
    for expr in tests:
        test = grid_function(expr, fixed, varying)
        ok = on_grid(test, grid, boolean=True) if test is not None else None
        if ok is not None:
            runs &= ok
    labels = [", ".join(f"{lp.var} = {v}" if r.symbol == lp.symbol
                        else f"iteration {v + 1} of loop {lp.var}"
                        for (lp, r), v in zip(spread, c, strict=True)) for c in combos]
    return _Touched(np.where(runs, offsets.astype(np.int64), -1)
                    .reshape(len(units), len(combos)), labels)


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
    # arrays declared in the kernel, and parameters it both writes and reads (every
    # unit of the kernel shares those: an in-place update of device memory)
    arrays = [(d.symbol, d.space, d.loops) for d in k.decls
              if d.symbol is not None and d.elements != 1 and d.space is not None]
    for p in k.function.params:
        mine = [a for a in k.accesses if a.symbol is not None and a.name == p.name
                and a.symbol.kind == "param"]
        if p.type.is_array and any(a.write for a in mine) and \
                any(not a.write for a in mine):
            arrays.append((mine[0].symbol, mine[0].space, ()))
    for symbol, space, around in arrays:
        accesses = [(n, s) for n, s in zip(k.accesses, sym.accesses, strict=True)
                    if n.symbol is symbol]
        # the units that share the array: the foreach loops around its accesses that
        # are not around its declaration, in a memory space all their units share
        # (the description's: hopper's `shared`, gpu's `local`; not one a unit owns)
        first = accesses[0][0] if accesses else None
        loops = [lp for lp in (first.loops if first else ())
                 if lp.kind == "foreach" and lp not in around]
        if not loops or any(tuple(lp for lp in n.loops if lp in loops) != tuple(loops)
                            for n, _ in accesses) \
                or space not in {ms.name for ms in shared_spaces(view.hardware,
                                                                  loops[-1].group)}:
            continue
        # a parameter's elements are ordered only by barriers of its own memory
        hit = _first_exchange(view, loops, accesses, lane, width,
                              space if symbol.kind == "param" else None)
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


def _first_exchange(view: KernelView, loops: list[Loop], accesses, lane: Loop | None,
                    width: int, space: str | None = None) -> Exchange | None:
    """The first read among ``accesses`` of an element another unit writes between the
    same barriers: in the same iteration of the loops around both, or in the next
    iteration of a loop whose barriers leave the end of one iteration and the start
    of the next in one interval (no barrier in it at all: any two of its accesses)."""
    units = _units(loops)
    if not units:
        return None
    by_node = {id(lp.node): lp for n, _ in accesses for lp in n.loops}
    spans = _Intervals(by_node, space)
    spans.walk(ast.statements_of(loops[-1].node.body), spans.new())
    at = loops.index(lane) if lane in loops else None
    cache: dict = {}
    lanes_found = None

    def elements(acc: Access, nxt: Loop | None):
        key = (id(acc), id(nxt))
        if key not in cache:
            value = _second_value(nxt) if nxt is not None else None
            cache[key] = None if nxt is not None and value is None else _elements(
                view, acc, loops, units, {nxt: value} if nxt is not None else None, space)
        return cache[key]

    for w, w_sym in accesses:
        if not w.write:
            continue
        for r, r_sym in accesses:
            if r.write:
                continue
            # (the loop of the write's next iteration, of the read's) in a shared interval
            pairs = {(aw, ar) for rw, aw in spans.member.get(id(w.node), [])
                     for rr, ar in spans.member.get(id(r.node), []) if rw == rr}
            for aw, ar in sorted(pairs, key=lambda p: (p[0] is not None, p[1] is not None)):
                written, read = elements(w, aw), elements(r, ar)
                if written is None or read is None:
                    continue
                # each element's writers (three at most, each another unit)
                writers: dict[int, list[tuple[int, str]]] = {}
                for u, row in enumerate(written.elements):
                    for c, e in enumerate(row.tolist()):
                        got = writers.setdefault(e, [])
                        if e >= 0 and len(got) < 3 and all(x != u for x, _ in got):
                            got.append((u, written.labels[c]))
                hit = _exchange(read, writers, units, loops, at, width)
                if hit is not None:
                    reader, writer, lanes = hit
                    after = ar or aw
                    sym_after = None if after is None else next(
                        (x for x in r_sym.loops + w_sym.loops if x.var == after.var), None)
                    found = Exchange(r_sym, w_sym, reader[0], writer[0], reader[1],
                                     writer[1], lanes, lane, sym_after,
                                     ar is None and aw is not None)
                    if not lanes:
                        return found        # a race wherever it runs
                    lanes_found = lanes_found or found
    return lanes_found


def _exchange(read: _Touched, writers: dict[int, list[tuple[int, str]]], units, loops,
              at, width):
    """A unit that reads an element another unit writes: (reader, writer, each the
    units' indices and the iterations' label, whether the two are lanes of one
    lock-step group), the first of two units that are no such lanes where there is
    one (a race wherever it runs), else the first of lanes; None where none reads
    another's element."""
    names = [lp.var for lp in loops]
    lanes_hit = None
    for u, row in enumerate(read.elements):
        for c, e in enumerate(row.tolist()):
            if e < 0:
                continue
            for v, label in writers.get(e, ()):
                if v == u:
                    continue
                a, b = units[u], units[v]
                lanes = at is not None and all(
                    x == y for i, (x, y) in enumerate(zip(a, b, strict=True)) if i != at) \
                    and a[at] // width == b[at] // width
                hit = ((dict(zip(names, a, strict=True)), read.labels[c]),
                       (dict(zip(names, b, strict=True)), label), lanes)
                if not lanes:
                    return hit
                lanes_hit = lanes_hit or hit
    return lanes_hit


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
        if x.reader_at:
            reader += f" ({x.reader_at})"
        if x.writer_at:
            writer += f" ({x.writer_at})"
        if x.after is not None and x.write_after:
            writer += f" in the next iteration of loop {x.after.var}"
        elif x.after is not None:
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
                f"put a barrier({x.read.space}) between the write and the read"
                if x.read.symbol is None or x.read.symbol.kind != "param" else
                "read one array and write another (swap the two between launches): no "
                "barrier orders the units of different blocks",
                related)
        d.data.update(array=x.read.name, reader=x.reader, writer=x.writer)
        out.append(d)
    return out
