"""What makes a kernel wrong whatever its speed, found from its constants: a loop that
never runs (its bound rounds down to nothing: what it writes is never written) and an
index that leaves its dimension (a tile or work-per-thread size the kernel's index
arithmetic is not written for: ``c3[ci, bj, eh * (bn / 2) + 4 * tj + e]`` of a
128-wide ``bn`` with tn = 16 reaches column 223). Both are warnings of every
``feedback`` run, whatever passes ``only`` selects.

An index is checked only where the analyses know every value it takes: each loop
variable it names has a numeric start, step and trip count that no other loop variable
decides, and the sizes have values. Inside ``if`` statements, only the values at which
every condition around the access holds count, where the analyses can compute the
conditions from the same loop variables (``if (i < n && k < p) l_a[0, aq + u, ar] =
a[i, k]`` with a row ``ar`` of up to 255 in a tile of 132 rows: ``i < n`` holds for
it); an access under a condition they cannot compute (one on data, or on a variable a
``while`` loop changes) is not checked, unless its index is a constant, which no test
keeps inside (``(ta[0] + ta[1]) + (ta[2] + ta[3])`` of a ``reg float[unroll] ta`` with
unroll = 2).
The values are enumerated (up to :data:`_MOST` points per index), and the
warning names the loop variables' values of one that leaves: a proof, not an estimate."""

from __future__ import annotations

import functools

import numpy as np
import sympy

from mcl.analyses.kernel import Kernel, Loop
from mcl.diagnostics import Diagnostic, warning
from mcl.mcpl.printer import print_expr

#: the most index values enumerated for one index (beyond, the index is not checked)
_MOST = 1 << 20


def report(sym: Kernel, num: Kernel) -> list[Diagnostic]:
    """The warnings of the symbolic kernel ``sym`` (loops that never run) and of the
    numeric one ``num`` (indices beyond their dimension, with the sizes' values)."""
    return empty_loops(sym) + out_of_bounds(num)


def empty_loops(sym: Kernel) -> list[Diagnostic]:
    """A warning at each ``for`` loop that never runs whatever the sizes: its trip
    count is 0 with the kernel's constants (``for (v = 0; v < cols / 4; v++)`` with
    ``cols = 2``), so what it writes is never written; at the outermost such loop."""
    out: list[Diagnostic] = []
    for lp in sym.loops:
        if lp.kind != "for" or lp.trips is None or lp.approximate or lp.trips != 0:
            continue
        if any(outer.trips == 0 for outer in _loops_around(sym, lp)):
            continue
        written = sorted({a.name for a in sym.accesses if a.write and lp in a.loops})
        cond = print_expr(lp.node.cond) if lp.node.cond is not None else "its condition"
        what = (f": nothing is written to {', '.join(repr(w) for w in written)} there"
                if written else "")
        out.append(warning(
            "feedback-empty-loop",
            f"{lp.label} never runs: '{cond}' is false from its start with this kernel's "
            f"constants{what}", lp.node.span,
            "a tile or work-per-thread size that this loop's bound rounds down to nothing "
            "(an integer division); choose sizes the kernel is written for"))
    return out


def _loops_around(k: Kernel, lp: Loop) -> tuple[Loop, ...]:
    """The loops around ``lp``, as an access or operation inside it records them."""
    for site in list(k.accesses) + list(k.ops):
        for i, x in enumerate(site.loops):
            if x is lp:
                return tuple(site.loops[:i])
    return ()


def out_of_bounds(num: Kernel) -> list[Diagnostic]:
    """A warning at each access whose index, over every value the loops around it
    give, leaves its dimension (below 0 or at or past the extent); once per array
    dimension and source access."""
    out: list[Diagnostic] = []
    seen: set[int] = set()
    for a in num.accesses:
        if id(a.node) in seen:
            continue
        guarded = a.guarded or bool(a.conditions)
        # the conditions around the access, where every one can be computed
        known = tuple(c.expr for c in a.conditions) if a.conditions and all(
            c.expr is not None and c.whole for c in a.conditions) else None
        for d, (index, size) in enumerate(zip(a.indices, a.sizes, strict=False)):
            # a bounds test may keep an index that varies inside; none keeps a constant
            constant = index is not None and not index.free_symbols
            if guarded and not constant and known is None:
                continue
            found = _outside(index, size, a.loops, () if constant else known or ())
            if found is None:
                continue
            seen.add(id(a.node))
            value, extent, at = found
            which = f"index {d + 1} of {a.name}" if len(a.indices) > 1 else \
                f"the index of {a.name}"
            written = [e for group in a.node.groups for e in group]
            text = print_expr(written[d]) if d < len(written) else str(index)
            where = f" (at {', '.join(f'{v} = {x}' for v, x in at)})" if at else ""
            out.append(warning(
                "feedback-out-of-bounds",
                (f"{which} is {value}" if constant else
                 f"{which} ({text}) reaches {value}{where}")
                + f", outside its {extent} element{'s' if extent != 1 else ''} "
                f"(0 .. {extent - 1})", a.node.span,
                (f"the index is a constant: element {value} of {a.name} does not exist "
                 "whatever guards the access; a size the code around it is not written "
                 "for (it names elements one by one)") if constant else
                "a tile or work-per-thread size the index arithmetic is not written for; "
                "choose sizes the kernel is written for, or guard the access"))
            break
    return out


def _outside(index: sympy.Expr | None, size: sympy.Expr | None, loops: tuple[Loop, ...],
             conditions: tuple[sympy.Basic, ...] = ()
             ) -> tuple[int, int, list[tuple[str, int]]] | None:
    """(a value of ``index`` outside ``[0, size)`` at loop variables' values where all
    ``conditions`` hold, the extent, those values); None where every such value stays
    inside or not every value (or condition) is known."""
    if index is None or size is None or not size.is_Integer:
        return None
    extent = int(size)
    if not index.free_symbols:
        value = index
        return None if not value.is_Integer or 0 <= int(value) < extent else \
            (int(value), extent, [])
    by_var = {lp.var: lp for lp in loops if lp.var}
    axes, names = [], []
    total = 1
    free = set(index.free_symbols).union(*(c.free_symbols for c in conditions))
    for s in sorted(free, key=lambda x: x.name):
        lp = by_var.get(s.name)
        if lp is None or lp.approximate or lp.depends or not all(
                x is not None and x.is_Integer for x in (lp.start, lp.step, lp.trips)):
            return None
        total *= max(1, int(lp.trips))
        if total > _MOST or int(lp.trips) <= 0:
            return None
        names.append(s)
        axes.append(int(lp.start) + int(lp.step) * np.arange(int(lp.trips)))
    f = _numpy_function(tuple(names), index)
    grids = np.meshgrid(*axes, indexing="ij")
    try:
        values = np.broadcast_to(np.asarray(f(*grids), dtype=float), grids[0].shape)
        holds = np.ones(values.shape, dtype=bool)
        for c in conditions:
            holds &= np.broadcast_to(np.asarray(_numpy_function(tuple(names), c)(*grids),
                                                dtype=bool), values.shape)
    except Exception:  # noqa: BLE001 - an index numpy cannot evaluate is not checked
        return None
    if values.size == 0 or not np.all(np.isfinite(values)):
        return None
    if conditions:
        # only the values at which the access runs
        values = np.where(holds, values, 0.0)
        if not holds.any():
            return None
    if values.max() >= extent:
        flat = int(np.argmax(values))
    elif values.min() < 0:
        flat = int(np.argmin(values))
    else:
        return None
    point = np.unravel_index(flat, values.shape)
    at = [(s.name, int(g[point])) for s, g in zip(names, grids, strict=True)]
    return int(values[point]), extent, at


@functools.lru_cache(maxsize=4096)
def _numpy_function(names: tuple, index: sympy.Expr):
    """``index`` as a numpy function of ``names`` (compiled once per index)."""
    return sympy.lambdify(list(names), index,
                          modules=[{"floor": np.floor, "Mod": np.mod}, "numpy"])
