"""Warp-synchronous code: lanes of a lock-step group that pass values to each other
through an on-chip array with no barrier between the write and the read.

A warp's last steps of a tree reduction (``l[t] += l[t + 16]; l[t] += l[t + 8]; ...``)
are correct where the 32 lanes execute each statement together: every lane reads
before any lane writes. The description says so for the lanes of a ``simd_group``;
NVIDIA's GPUs since Volta do not guarantee it (independent thread scheduling: the
lanes of a warp may run apart, and a lane may read an element before or after another
lane has updated it). Where the leaf's target file says its device schedules lanes
independently (``independent_thread_scheduling``), this pass names each read of an
element that another lane of the same group writes between the same two barriers.

The check, per statement list inside the lock-step loop (barriers split it; a
statement holding a barrier is a boundary with its own lists inside): the accesses of
an array declared outside the lanes' loop (shared by them), each at the first values
of the other loops and for every pair of lanes of the first group (the lanes the ifs
around each access let run): a read by one lane of an element that another lane
writes. Iterations of a loop without a barrier are compared at the loop's first
value only, so a race across iterations is not seen.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from mcl.analyses.functions import KernelView
from mcl.analyses.kernel import Access, Loop
from mcl.analyses.target_settings import device_settings, target_file
from mcl.diagnostics import Diagnostic, Related, warning
from mcl.mcpl import ast


@dataclass(frozen=True)
class Exchange:
    """A read of an element that another lane of the lock-step group writes between
    the same barriers: ``reader`` reads what ``writer_lane`` writes at ``written``."""

    read: Access            # of the kernel with symbolic sizes (for the message)
    written: Access
    reader_lane: int
    writer_lane: int
    lane: Loop


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


def _offset(view: KernelView, acc: Access, lane: Loop, at: int) -> int | None:
    """The flat element ``acc`` touches for lane ``at`` (the other loops at their first
    values), or None where it is no number or the ifs around it keep the lane out."""
    view._cursor.clear()
    view._cursor[lane.var] = at
    try:
        if not view.runs(acc) or acc.offset is None:
            return None
        e = view._at_cursor(acc, acc.offset)
        return int(e) if isinstance(e, sympy.Integer) else None
    finally:
        view._cursor.clear()


def exchanges(view: KernelView) -> list[Exchange]:
    """The reads of elements that another lane of the lock-step group writes with no
    barrier between (one per array: the first found)."""
    from mcl.analyses.warp_lanes import lockstep_loop
    found = lockstep_loop(view)
    if not found:
        return []
    lane, width = found
    regions: list[list[int]] = []
    _regions(_statements(lane.node.body), regions)
    region_of = {node: i for i, ids in enumerate(regions) for node in ids}
    k, sym = view.num, view.sym
    if len(sym.accesses) != len(k.accesses):
        return []
    # arrays declared outside the lanes' loop, in memory the lanes share
    shared = {id(d.symbol) for d in k.decls
              if d.symbol is not None and d.elements != 1 and lane not in d.loops
              and d.space not in (None, "reg", "local")}
    by_array: dict[int, list[tuple[int, Access, Access]]] = {}
    for nacc, sacc in zip(k.accesses, sym.accesses, strict=True):
        if nacc.symbol is not None and id(nacc.symbol) in shared and lane in nacc.loops \
                and id(nacc.node) in region_of:
            by_array.setdefault(id(nacc.symbol), []).append(
                (region_of[id(nacc.node)], nacc, sacc))
    out = []
    for accesses in by_array.values():
        hit = _first_exchange(view, accesses, lane, width)
        if hit is not None:
            out.append(hit)
    return out


def _first_exchange(view: KernelView, accesses, lane: Loop, width: int) -> Exchange | None:
    """The first read of ``accesses`` (region, numeric access, symbolic access) of an
    element another lane writes in the same region."""
    elements = {id(n): [_offset(view, n, lane, t) for t in range(width)]
                for _, n, _ in accesses}
    for region, w, w_sym in accesses:
        if not w.write:
            continue
        writers = {e: t for t, e in enumerate(elements[id(w)]) if e is not None}
        for r_region, r, r_sym in accesses:
            if r.write or r_region != region:
                continue
            for t, e in enumerate(elements[id(r)]):
                if e is not None and e in writers and writers[e] != t:
                    return Exchange(r_sym, w_sym, t, writers[e], lane)
    return None


def report(view: KernelView) -> list[Diagnostic]:
    """A warning per array whose lanes exchange values without a barrier, where the
    target file says its device schedules the lanes of a group independently."""
    hw = view.hardware
    if hw is None or not device_settings(hw).get("independent_thread_scheduling"):
        return []
    out = []
    for x in exchanges(view):
        lane = x.lane.var
        d = warning(
            "feedback-lockstep",
            f"{x.read.text}: {lane} = {x.reader_lane} reads the element that {lane} = "
            f"{x.writer_lane} writes at {x.written.text}, with no barrier between: this "
            f"relies on the lanes running in lock-step, which '{hw.name}' does not "
            f"guarantee ({target_file(hw).name}: independent_thread_scheduling), so the "
            f"lane may read the element before or after it is written",
            x.read.node.span,
            "separate the steps by barriers (the barrier-separated tree of the rest), "
            "or let each lane keep its own value",
            [Related(x.written.node.span, f"written by {lane} = {x.writer_lane} here"),
             Related(x.lane.node.span, "the lock-step loop")])
        d.data.update(array=x.read.name, reader=x.reader_lane, writer=x.writer_lane)
        out.append(d)
    return out
