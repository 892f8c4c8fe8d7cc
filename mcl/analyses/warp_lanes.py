"""What the lanes of a warp (the units of a lock-step group) access together: the
lock-step loop and the memory transaction, the offsets of an access across the lanes,
the runs of 4 adjacent elements that the generator makes one 128-bit access (asked of
the generator's own rule, mcl.opencl.vectorize, so that what the analyses claim is what
the generated code does), and the lanes an ``if`` lets run."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import sympy

from mcl.analyses.functions import KernelView
from mcl.analyses.kernel import Access, Loop


def lockstep_loop(view: KernelView) -> tuple[Loop, int] | None:
    """The foreach over the lock-step par_group (warp lanes) and its width."""
    groups = view.hardware.lockstep_par_groups()
    for g in groups:
        size = g.size
        if not isinstance(size, int):
            continue
        for lp in view.num.foreach_loops():
            if lp.node.group == g.name:
                return lp, size
    return None


def transaction_size(view: KernelView, space: str | None) -> tuple[int, str]:
    """The unit of a memory transaction for ``space``: the caches' sectors where the
    description has them (32 B on an H100), else their lines; 128 B lines without a
    cache. With the word the messages use for it."""
    hw = view.hardware
    if space is not None:
        caches = hw.caches_for(space)
        sectors = [c.sector_size for c in caches if c.sector_size]
        if sectors:
            return int(min(sectors)), "sectors"
        sizes = [c.cache_line_size for c in caches if c.cache_line_size]
        if sizes:
            return int(min(sizes)), "memory segments"
    return 128, "memory segments"


def lane_offsets(view: KernelView, acc: Access, lane: Loop, width: int,
                 at: Mapping[str, int] | None = None) -> list[int] | None:
    """The element offsets of ``acc`` for the first ``width`` lanes of loop ``lane``,
    the loops ``at`` names at those values and every other loop at its first
    iteration; None where one cannot be evaluated, or
    where the access moves with a loop whose start is read from memory (``k`` of
    ``for (k = rowPtr[r]; ...)``: mcl.analyses.datadep knows more)."""
    if acc.offset is not None and any(
            lp.start is None and lp.var and lp is not lane and lp.var not in (at or {})
            and lp.symbol in acc.offset.free_symbols for lp in acc.loops):
        return None
    view._cursor.clear()
    view._cursor.update(at or {})
    view.reset(lane.var)
    out = _across_lanes(view, acc, lane, width)
    view._cursor.clear()
    return out


def _across_lanes(view: KernelView, acc: Access, lane: Loop, width: int) -> list[int] | None:
    """The offsets of ``acc`` for ``width`` consecutive lanes of loop ``lane`` from the
    view's cursor as it is (None where one cannot be evaluated)."""
    out = []
    for _ in range(width):
        off = view.evaluate(acc)
        if off is None:
            return None
        out.append(off)
        view.increment(lane.var)
    return out


#: Elements of the runs the OpenCL generator turns into one 128-bit access per unit
#: (mcl.opencl.vectorize.WIDTH).
RUN = 4


@dataclass
class _Variable:
    """A variable as :func:`mcl.opencl.vectorize.analyse` asks the generator about it
    (its ``lookup``): the type, the OpenCL address space, the variable a view views."""

    name: str
    type: Any
    qualifier: str
    base: _Variable | None = None
    tiled: bool = False

    @property
    def root(self) -> _Variable:
        v = self
        while v.base is not None:
            v = v.base
        return v


def _qualifiers(view: KernelView) -> dict[str, str]:
    """The OpenCL address space of each memory space: the ``[spaces]`` table of the
    target file beside the description (what the generator declares); without one,
    as the description's memories hold them (banked: local; addressable: global)."""
    if "qualifiers" not in view.memo:
        import tomllib

        from mcl.analyses.target_settings import target_file
        table: dict[str, Any] = {}
        file = target_file(view.hardware)
        try:
            if file is not None and file.is_file():
                table = tomllib.loads(file.read_text()).get("spaces") or {}
        except (OSError, tomllib.TOMLDecodeError):
            table = {}
        view.memo["qualifiers"] = {k: v.get("qualifier", "__private") for k, v in table.items()
                                   if isinstance(v, dict)}
    return view.memo["qualifiers"]


def _qualifier(view: KernelView, space: str | None) -> str:
    if space is None:
        return "__private"
    table = _qualifiers(view)
    if table:
        return table.get(space, "__private")
    mems = view.hardware.memories_holding(space) if view.hardware is not None else []
    if mems and any(m.nr_banks for m in mems):
        return "__local"
    return "__global" if mems and all(m.addressable for m in mems) else "__private"


def _generator_variable(view: KernelView, sym: Any, depth: int = 0) -> _Variable | None:
    """The generator's view of the variable declared as ``sym`` (mcl.mcpl Symbol), as
    mcl.opencl.emit_statements declares it: an array declared in global memory inside
    an innermost foreach is one per unit (private); a view keeps its array's address
    space and is tiled where it splits a one-dimensional array into levels."""
    if sym is None or depth > 8:
        return None
    from mcl.mcpl import ast

    qualifier = _qualifier(view, sym.space)
    if sym.kind == "view":
        name = getattr(sym.init, "id", None)
        base = _generator_variable(view, _declared(view, name), depth + 1) \
            if name is not None else None
        if base is None:
            return None
        bt, vt = base.type, sym.type
        tiled = (len(bt.dims) == 1 and len(vt.dims) > 1
                 and all(len(level) == len(bt.dims[0]) for level in vt.dims))
        return _Variable(sym.name, vt, base.qualifier,
                         base.root if not base.tiled else base, tiled)
    if sym.kind == "local" and qualifier == "__global":
        loops = view.num.checked.foreach_around(sym.node)
        if loops and not any(isinstance(n, ast.ForEach) for n in ast.walk(loops[-1].body)):
            qualifier = "__private"
    return _Variable(sym.name, sym.type, qualifier)


def _declared(view: KernelView, name: str) -> Any:
    """The symbol of the parameter, declaration or view named ``name`` in the kernel."""
    from mcl.mcpl import ast

    f, checked = view.num.function, view.num.checked
    for p in f.params:
        if p.name == name:
            return checked.symbol(p)
    for n in ast.walk(f.body):
        if isinstance(n, ast.Declaration):
            if n.name == name:
                return checked.symbol(n)
            for v in n.views:
                if v.name == name:
                    return checked.symbol(v)
    return None


def vector_loop(view: KernelView, acc: Access) -> Loop | None:
    """The innermost loop around ``acc`` where the OpenCL generator turns 4 of its
    iterations into one 128-bit access of ``acc``, else None: the question
    mcl.opencl.emit_statements asks of a ``for`` loop, by the same functions -- a
    counted loop (:func:`mcl.opencl.vectorize.counted_loop`) whose bounds are
    constants of the program, whose body copies runs of adjacent elements between
    memory and registers (:func:`mcl.opencl.vectorize.analyse`), ``acc`` one of the
    copies' accesses to memory. A loop that reduces (``sum += A[i, j0 + k] * xs[k]``)
    or has a trip count that is not a multiple of 4 or not a constant stays scalar."""
    if not acc.loops or acc.loops[-1].kind != "for":
        return None
    run = acc.loops[-1]
    found = view.memo.setdefault("vector_loops", {})
    key = id(run.node)
    if key not in found:
        found[key] = _vector_form(view, run)
    vec = found[key]
    if vec is None or not any(a.index is acc.node for a in vec.memory_accesses()):
        return None
    return run


def _vector_form(view: KernelView, run: Loop) -> Any:
    """mcl.opencl.vectorize.analyse of loop ``run`` as the generator calls it (None
    where the loop is not counted or its bounds are not constants)."""
    from mcl.mcpl import ast
    from mcl.opencl import vectorize

    node = run.node
    if not isinstance(node, ast.For):
        return None
    counted = vectorize.counted_loop(node)
    sym = next((lp for lp in view.sym.loops if lp.node is node), None)
    if counted is None or sym is None or sym.trips is None:
        return None
    # the generator's bounds: constants of the program, whatever the parameters
    start, trips = sympy.sympify(sym.start if sym.start is not None else 0), \
        sympy.sympify(sym.trips)
    if not (start.is_Integer and trips.is_Integer) or sym.approximate:
        return None
    checked = view.num.checked
    variables: dict[str, _Variable | None] = {}
    for n in ast.walk(node.body):
        if isinstance(n, ast.Name) and n.id not in variables:
            variables[n.id] = _generator_variable(view, checked.declaration_of(n))
    return vectorize.analyse(node, counted[0], int(trips), variables.get, set())


def run_offsets(view: KernelView, acc: Access, lane: Loop, width: int,
                at: Mapping[str, int] | None = None) -> list[int] | None:
    """The element offsets a warp accesses in one run where the generator makes ``acc``
    one 128-bit access per lane (:func:`vector_loop`); None otherwise. The loops ``at``
    names at those values."""
    if vector_loop(view, acc) is None or acc.loops[-1] is lane:
        return None
    run = acc.loops[-1]
    trips = view.value(run.trips)
    step = view.value(run.constant_step) if run.constant_step is not None else None
    start = view.value(run.start) if run.start is not None else 0
    if trips is None or trips % RUN or step != 1 or start is None:
        return None
    rows = run_rows(view, acc, run, start, lane, width, at)
    if rows is None or any(rows[j][k] != rows[0][k] + j for j in range(RUN)
                           for k in range(width)):
        return None
    return [off for row in rows for off in row]


def run_rows(view: KernelView, acc: Access, run: Loop, start: int, lane: Loop,
             width: int, at: Mapping[str, int] | None = None) -> list[list[int]] | None:
    """The element offsets of ``acc`` for the first RUN iterations of loop ``run`` (from
    ``start``), each a row over ``width`` consecutive lanes of loop ``lane``; None where
    an offset cannot be evaluated."""
    rows = []
    try:
        for j in range(RUN):
            view._cursor.clear()
            view._cursor.update(at or {})
            view._cursor[run.var] = start + j
            view._cursor[lane.var] = 0
            row = _across_lanes(view, acc, lane, width)
            if row is None:
                return None
            rows.append(row)
    finally:
        view._cursor.clear()
    return rows



def _stride(offsets: list[int]) -> int:
    return offsets[1] - offsets[0] if len(offsets) > 1 else 0


def active_lanes(view: KernelView, acc: Access, lane: Loop, width: int,
                 at: Mapping[str, int] | None = None) -> list[bool]:
    """For ``width`` consecutive lanes of loop ``lane`` (the loops ``at`` names at those
    values), whether the ``if``s around ``acc`` let it run (``if (tid < rows)``: the
    first ``rows`` lanes of a warp)."""
    view._cursor.clear()
    view._cursor.update(at or {})
    view.reset(lane.var)
    out = []
    for _ in range(width):
        out.append(view.runs(acc))
        view.increment(lane.var)
    view._cursor.clear()
    return out
