"""The values of index expressions at every point of the loops around them, enumerated
with numpy (:func:`enumerated`), for the checks of mcl.analyses.validity: which elements
an access reaches, where a loop runs no iteration, which points an ``if`` around it
admits. Exact where it answers: integers stay integers (a floor of a fraction of whole
numbers is a floor division, :func:`_exact_floors`), and where it cannot know every
value (a name that is no loop variable, a range it cannot evaluate, more than
:data:`MOST` points) it says None rather than guess."""

from __future__ import annotations

import functools
import math

import numpy as np
import sympy

from mcl.analyses.kernel import Loop, var_symbol

#: the most index values enumerated for one index (beyond, the index is not checked)
MOST = 1 << 20


def enumerated(exprs: tuple[sympy.Expr | None, ...], loops: tuple[Loop, ...],
                conditions: tuple[sympy.Basic, ...] = (), sample: bool = False,
                huge: bool = False) -> tuple[list[np.ndarray], dict[str, np.ndarray]] | None:
    """:func:`_points` without the points where a loop around the expressions runs no
    iteration, or, where those loops' ranges cannot be evaluated, with them."""
    found = _points(exprs, loops, conditions, sample, True, huge)
    return found if found is not None else \
        _points(exprs, loops, conditions, sample, False, huge)


def fractional(found: tuple[list[np.ndarray], dict[str, np.ndarray]]) -> bool:
    """Whether an :func:`enumerated` result has a value that is no whole number, of its
    expressions or its loop variables: the model keeps some integer divisions as
    fractions where the program rounds, and such points are none the program visits."""
    values, at = found
    return any(np.any(np.asarray(x, dtype=float) % 1 != 0) for x in (*values, *at.values()))


def _points(exprs: tuple[sympy.Expr | None, ...], loops: tuple[Loop, ...],
            conditions: tuple[sympy.Basic, ...], sample: bool, skip_empty: bool,
            huge: bool = False) -> tuple[list[np.ndarray], dict[str, np.ndarray]] | None:
    """The values of ``exprs`` at every point of the loops around them where all
    ``conditions`` hold (the loops that the expressions, the conditions or the ranges
    of those loops name, outermost first; a ``for`` loop's variable up to its bound
    where it has one), with the loop variables' values there; None where a name is no
    loop variable, a loop's range is not known, or the points are more than
    :data:`MOST`. With ``sample``, where they would be more, the longest loops take
    only their first two, middle and last iterations (what is found there is found:
    a proof of a value that occurs, not of one that does not). ``skip_empty``: also the
    loops around whose range those variables give, and only the points where each of
    them runs an iteration. ``huge``: the expressions' values beyond 2^53 as floats
    (:func:`_at`)."""
    if any(e is None for e in exprs):
        return None
    by_var: dict[str, Loop] = {}
    for lp in loops:
        if lp.var:
            by_var[lp.var] = lp         # the innermost loop of a name binds it
    needed = set().union(*(e.free_symbols for e in exprs),
                         *(c.free_symbols for c in conditions))
    names = {s.name for s in needed}
    # the loops around the expressions whose range the other loops' variables give: at
    # a point where one runs no iteration (matmul cpu_v4's `r < nrFull`, 0 for the
    # threads whose columns are not whole) the expressions are not evaluated
    empty: list[Loop] = []
    for lp in loops if skip_empty else ():
        if lp.var and lp.var not in names and by_var.get(lp.var) is lp \
                and _range_names(lp) and _range_names(lp) <= set(by_var) - {lp.var}:
            empty.append(lp)
            names |= _range_names(lp)
    grew = True
    while grew:
        grew = False
        for name in list(names):
            lp = by_var.get(name)
            if lp is None:
                return None
            for part in (lp.start, lp.step, lp.bound if lp.bound is not None else lp.trips):
                extra = {s.name for s in part.free_symbols} if part is not None else set()
                if not extra <= names:
                    names |= extra
                    grew = True
    order = [lp for lp in loops if lp.var in names and by_var[lp.var] is lp]
    ranges = {x for lp in order for x in (lp.start, lp.step, lp.bound, lp.trips)
              if x is not None}
    sampled = _sampled(order) if sample else set()
    point: dict[str, np.ndarray] = {}
    count = 1
    for lp in order:
        start = _at(lp.start, point, count)
        step = _at(lp.step, point, count)
        if start is None or step is None or np.any(step <= 0):
            return None
        if lp.kind == "for" and lp.bound is not None:
            bound = _at(lp.bound, point, count)
            if bound is None:
                return None
            trips = np.maximum(0, -((start - bound) // step))
        elif not lp.approximate and lp.trips is not None:
            trips = _at(lp.trips, point, count)
            if trips is None:
                return None
        else:
            return None
        trips = trips.astype(np.int64)
        period = _period(lp, exprs + conditions, ranges)
        if period is not None:
            trips = np.minimum(trips, period)
        if lp.var in sampled:
            # iterations 0, 1, the middle and the last of each point's trips
            picks = np.stack([np.zeros_like(trips), np.ones_like(trips), trips // 2,
                              trips - 1], axis=1)
            keep = (picks < trips[:, None]) & (picks >= 0)
            keep[:, 2] &= picks[:, 2] > 1
            keep[:, 3] &= picks[:, 3] > np.maximum(picks[:, 2], 1)
            counts = keep.sum(axis=1)
            iteration = picks[keep]
        else:
            counts = trips
        if np.any(counts > MOST):
            return None
        # the count before the points: a size of billions would otherwise be
        # materialised (gigabytes, minutes) only to be refused
        total = int(counts.sum())
        if total > MOST or total == 0:
            return None
        if lp.var not in sampled:
            iteration = np.arange(total) - np.repeat(np.cumsum(trips) - trips, trips)
        point = {v: np.repeat(x, counts) for v, x in point.items()}
        point[lp.var] = np.repeat(start, counts) + np.repeat(step, counts) * iteration
        count = total
    values = [_at(e, point, count, huge=huge) for e in exprs]
    if any(v is None for v in values):
        return None
    holds = np.ones(count, dtype=bool)
    for c in conditions:
        h = _at(c, point, count, dtype=bool)
        if h is None:
            return None
        holds &= h
    for lp in empty:
        runs = _runs_at(lp, point, count)
        if runs is not None:
            holds &= runs
    return [v[holds] for v in values], {n: x[holds] for n, x in point.items()}


def _range_names(lp: Loop) -> set[str]:
    """The names a loop's start, step and bound (or trip count) name."""
    parts = (lp.start, lp.step, lp.bound if lp.bound is not None else lp.trips)
    return {s.name for p in parts if p is not None for s in p.free_symbols}


def _runs_at(lp: Loop, point: dict[str, np.ndarray], count: int) -> np.ndarray | None:
    """Whether ``lp`` runs an iteration at each point (None where its range is not
    known there). A bound the model keeps as a fraction (``rows / x``) is compared as
    it is: the loop runs where the start is below it."""
    start, step = _at(lp.start, point, count, float), _at(lp.step, point, count, float)
    if start is None or step is None or np.any(step <= 0):
        return None
    if lp.kind == "for" and lp.bound is not None:
        bound = _at(lp.bound, point, count, float)
        return None if bound is None else start < bound
    if lp.trips is not None:
        trips = _at(lp.trips, point, count, float)
        return None if trips is None else trips > 0
    return None


def _sampled(order: list[Loop]) -> set[str]:
    """The variables of the loops to sample (longest first, by the analyses' trip
    counts) so that the points are at most :data:`MOST`."""
    trips = {lp.var: int(lp.trips) if lp.trips is not None and lp.trips.is_Integer
             and lp.trips > 0 else MOST for lp in order}
    out: set[str] = set()
    total = math.prod(trips.values())
    for var in sorted(trips, key=trips.get, reverse=True):
        if total <= MOST:
            break
        if trips[var] > 4:
            total = total // trips[var] * 4
            out.add(var)
    return out


def _period(lp: Loop, exprs: tuple[sympy.Basic, ...], ranges: set) -> int | None:
    """Iterations of ``lp`` after which ``exprs`` repeat their values, where its
    variable appears in them only through a remainder (``Mod(l, 2)``: the buffer a
    double-buffered phase ``l`` reads) and in no other loop's range; None elsewhere."""
    v = lp.symbol
    if v is None or lp.step is None or not lp.step.is_Integer or \
            any(v in x.free_symbols for x in ranges):
        return None
    moduli = [m.args[1] for e in exprs for m in e.atoms(sympy.Mod)
              if v in m.args[0].free_symbols]
    if not moduli or not all(m.is_Integer and m > 0 for m in moduli):
        return None
    period = math.lcm(*(int(m) for m in moduli))
    shift = {v: v + period * lp.step}
    # (a remainder of the shifted variable simplifies as it is built: Mod(l + 2, 2) is
    # Mod(l, 2))
    if any(e.subs(shift) != e if isinstance(e, sympy.logic.boolalg.Boolean)
           else sympy.expand(e.subs(shift) - e) != 0 for e in exprs):
        return None
    return period


#: the largest integer every float value up to it represents exactly
EXACT = 2.0 ** 53


def _at(e: sympy.Basic | None, point: dict[str, np.ndarray], count: int,
        dtype=np.int64, huge: bool = False) -> np.ndarray | None:
    """``e`` at each of ``count`` points of the loop variables ``point`` (None where it
    names another symbol or is no integer; ``dtype`` float: any finite number).
    ``huge``: integers beyond 2^53 in magnitude as floats (an index that far leaves
    every array, though its value is no longer exact) instead of None."""
    if e is None:
        return None
    names = tuple(sorted(point))
    if not {s.name for s in e.free_symbols} <= set(names):
        return None
    symbols = tuple(var_symbol(n) for n in names)
    try:
        f = _numpy_function(symbols, e) if e.free_symbols else None
        # (with ``huge``, in floats: int64 arithmetic would wrap round past 2^63)
        args = (point[n].astype(float) if huge else point[n] for n in names)
        raw = f(*args) if f is not None else \
            (bool(e) if dtype is bool else float(e))
        value = np.broadcast_to(np.asarray(raw), (count,))
    except Exception:  # noqa: BLE001 - an expression numpy cannot evaluate
        return None
    if dtype is bool:
        return value.astype(bool)
    value = value.astype(float)
    if not np.all(np.isfinite(value)):
        return None
    if dtype is float:
        return value
    if not np.all(value == np.round(value)):
        return None
    if np.any(np.abs(value) > EXACT):
        # beyond 2^53 a float no longer tells one integer from the next
        return value if huge else None
    return value.astype(np.int64)


#: floor(n / d) of an integer n and a whole number d, exactly (:func:`_exact_floors`)
_IFLOOR = sympy.Function("mcl_ifloor")


def _ifloor(n, d):
    n = np.asarray(n)
    if n.dtype.kind == "f":        # whole values in floats (a Min of them, say)
        n = np.round(n)
    return np.floor_divide(n, d)


def _exact_floors(e: sympy.Expr) -> sympy.Expr:
    """``e`` with each floor of a fraction of whole numbers (the model's ``(rows + x -
    1) / x``: floor(rows/6 + 5/6)) as a floor division of whole numbers, which floats
    get wrong: 37/6 + 5/6 is 6.999... in them, and floor(7) came out 6."""
    def exact(arg):
        num, den = sympy.fraction(sympy.together(arg))
        # whole numbers of whole numbers: every number in the numerator whole
        if den.is_Integer and den > 1 and \
                all(r.is_Integer for r in num.atoms(sympy.Rational)) and \
                not num.atoms(sympy.Float):
            return _IFLOOR(num, den)
        return sympy.floor(arg)
    try:
        return e.replace(sympy.floor, exact)
    except Exception:  # noqa: BLE001 - a form sympy cannot take apart: as it was
        return e


@functools.lru_cache(maxsize=4096)
def _numpy_function(names: tuple, index: sympy.Expr):
    """``index`` as a numpy function of ``names`` (compiled once per index), its floors
    of fractions exact (:func:`_exact_floors`)."""
    return sympy.lambdify(list(names), _exact_floors(index),
                          modules=[{"floor": np.floor, "Mod": np.mod,
                                    "mcl_ifloor": _ifloor}, "numpy"])
