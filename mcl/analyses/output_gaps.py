"""Elements of an output that no store reaches, where the stores' offsets are too many to
enumerate whole (mcl.analyses.validity.unwritten_outputs: a 4096 x 4096 output of
blocks of 64 columns whose 32 threads write a column each leaves columns 32-63 of every
block). Found in two steps (:func:`proven_gaps`), and only what is proven is said:

1. Candidates, cheaply (:func:`_candidates`): the stores of a few blocks along each
   block loop (the foreach loops of the outermost par_group) are enumerated
   (mcl.analyses.loop_points) where their ifs' conditions hold: the first two, the last
   two and the middle three (with a third block next to each pair, whose writes only
   rule candidates out). The elements inside the box each of these writes span (per
   dimension, from the smallest index to the largest) that they skip are candidates (a
   block in the middle that writes nothing, a guard that leaves part of the last
   block), and so are the array's corners (a grid that rounds down leaves its last
   elements), the elements just past the last blocks' box (the remainder rows between
   them and a last row written apart) and the centres of the array's faces: the first
   :data:`CANDIDATES` of them that the enumerated blocks do not write.
2. Proof: a candidate counts only where no store of the whole kernel reaches it
   (:func:`_reaches`): a branch-and-bound search over each store's loop iterations
   that halves one loop's range of iterations at a time (the one that widens the
   offset's bounds most), drops the ranges where the bounds of the offset (interval
   arithmetic, exact in integers and fractions: :func:`_compiled`) exclude the
   candidate or where a condition of the store's ifs is false throughout
   (:func:`_condition`), and reaches single iterations, where the offset is exact, only
   where they include it. Anything it cannot bound (an expression other than sums,
   products, powers, floors, remainders, min and max; a loop whose range is not known
   or not whole; more than :data:`NODES` ranges) leaves the candidate unproven (a
   condition it cannot bound is taken to hold), and the check silent: no false
   warning, at the price of gaps it does not find (one that none of the blocks looked
   at shows, or one it cannot prove).

A conditional expression (a Piecewise: matmul cpu_v2's ``nrFull = j0 + y * nrVectors <=
m ? rows / x : 0``, the start and end of its loops over r) is bounded by the branches
whose conditions may hold in the box, up to the first that surely holds. Its ``rows / x``
is a floor since sympy no longer takes an even quantity over 6 for an integer
(mcl.sympy_integers): a fraction (the last thread's 32/6 where the program has 5) would
have over-stated the start of the second loop over r, dropping real iterations."""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import replace
from fractions import Fraction

import numpy as np
import sympy

from mcl.analyses.kernel import Access, Kernel, Loop
from mcl.analyses.loop_points import MOST, enumerated, fractional

#: the most candidates put to the proof
CANDIDATES = 24
#: the most elements that one box of blocks skips taken as candidates
SKIPPED = 8
#: the most ranges the proof that one store misses one element visits
NODES = 4000


class _Unknown(Exception):
    """The proof cannot bound an expression or a loop's range: nothing is proven."""


def proven_gaps(num: Kernel, writes: list[Access], total: int) -> tuple[int, int] | None:
    """(how many of the candidates no store of ``writes`` reaches, the smallest one's flat
    offset) of an output of ``total`` elements, by the method of the module's docstring;
    None where none is proven."""
    groups = num.hardware.par_groups() if num.hardware is not None else []
    if not groups:
        return None
    sizes = tuple(int(s) for s in writes[0].sizes)
    candidates = _candidates(writes, groups[0], sizes, total)
    proven = [c for c in candidates if all(_reaches(a, c) is False for a in writes)]
    return (len(proven), min(proven)) if proven else None


def _candidates(writes: list[Access], blocks, sizes: tuple[int, ...],
                total: int) -> list[int]:
    """Flat offsets perhaps unwritten, the first :data:`CANDIDATES` of, in turn: the
    elements that the first two blocks along each block loop (foreach over the par_group
    ``blocks``) skip in the box their writes span (at most :data:`SKIPPED`); the array's
    corners; those the last two blocks and the middle three skip in theirs; the elements
    just outside the first and the last blocks' boxes (a remainder strip that a grid
    which rounds down leaves, between the last blocks and a border written apart); the
    centres of the array's faces. An element that the enumerated blocks (a third block
    next to each pair too) write is none."""
    windows = [_window(writes, blocks, w, sizes) for w in ("first", "last", "middle")]
    windows = [w for w in windows if w is not None]
    written = _distinct(np.concatenate([w[0] for w in windows])) if windows else \
        np.zeros(0, dtype=np.int64)
    skipped = [_skipped(box, sizes) for _, box, _ in windows]
    corners = sorted(int(np.ravel_multi_index(c, sizes))
                     for c in itertools.product(*((0, s - 1) for s in sizes)))
    faces = [int(np.ravel_multi_index(tuple(i if e == d else s // 2
                                            for e, s in enumerate(sizes)), sizes))
             for d, n in enumerate(sizes) for i in (0, n - 1)]
    outside = [c for _, box, side in windows if side for c in _outside(box, sizes, side)]
    out: list[int] = []
    for c in [*(skipped[0] if skipped else []), *corners, *(x for s in skipped[1:] for x in s),
              *outside, *faces]:
        if 0 <= c < total and c not in out:
            out.append(c)
    at = np.minimum(np.searchsorted(written, out), max(written.size - 1, 0))
    return [c for c, i in zip(out, at, strict=True)
            if not (written.size and written[i] == c)][:CANDIDATES]


def _distinct(x: np.ndarray) -> np.ndarray:
    """The distinct values of ``x``, sorted (by a sort: numpy's unique by hashing took
    a tenth of a second for 190,000 offsets)."""
    x = np.sort(x, kind="stable")
    return x[np.concatenate(([True], x[1:] != x[:-1]))] if x.size else x


def _window(writes: list[Access], blocks, where: str,
            sizes: tuple[int, ...]) -> tuple | None:
    """The flat offsets the ``writes`` reach in the blocks ``where`` ("first", "last",
    "middle") along each block loop of more than 3 (those around a pair of the first or
    the last, and the middle three), with the box of their indices (low, high per
    dimension, None where they reach none inside) in the pair (the three), and whether
    the elements just outside the box are candidates (a pair's); None where a store
    cannot be enumerated there."""
    parts, inner = [], []
    for a in writes:
        loops, keep = [], {}
        for lp in a.loops:
            t = lp.trips
            if lp.kind == "foreach" and lp.group is blocks and t is not None and t.is_Integer \
                    and t > 3 and lp.var:
                t = int(t)
                first = {"first": 0, "last": t - 3, "middle": t // 2 - 1}[where]
                lp = replace(lp, start=lp.start + lp.step * first, trips=sympy.Integer(3))
                pair = {"first": (0, 1), "last": (1, 2), "middle": (0, 1, 2)}[where]
                keep[lp.var] = (lp, pair)
            loops.append(lp)
        # where the stores' conditions hold, where all are known (else everywhere)
        known = tuple(c.expr for c in a.conditions if c.expr is not None and c.whole)
        found = enumerated((a.offset,), tuple(loops), known) \
            if len(known) == len(a.conditions) else None
        found = found if found is not None else enumerated((a.offset,), tuple(loops))
        if found is None or fractional(found):
            return None     # (a model's fraction where the program rounds: not enumerated)
        (offset,), at = found
        offset = np.asarray(offset, dtype=np.int64)
        mask = np.ones(offset.shape, dtype=bool)
        for var, (lp, pair) in keep.items():
            if var in at:
                number = (at[var] - int(lp.start)) // int(lp.step)
                mask &= np.isin(number, pair)
        parts.append(offset)
        inner.append(offset[mask])
    total = math.prod(sizes)
    reached = _distinct(np.concatenate(parts))
    pair = _distinct(np.concatenate(inner))
    pair = pair[(pair >= 0) & (pair < total)]
    box = None
    if pair.size:
        index = np.unravel_index(pair, sizes)
        box = ([int(x.min()) for x in index], [int(x.max()) for x in index], pair)
    return reached, box, {"first": -1, "last": 1}.get(where, 0)


def _skipped(box, sizes: tuple[int, ...]) -> list[int]:
    """The first :data:`SKIPPED` elements of ``box`` (low, high, the offsets written in it)
    not written there; none where it holds more than :data:`MOST` elements."""
    if box is None:
        return []
    low, high, written = box
    shape = tuple(hi - lo + 1 for lo, hi in zip(low, high, strict=True))
    if math.prod(shape) > MOST:
        return []
    hit = np.zeros(shape, dtype=bool)
    hit[tuple(i - lo for i, lo in zip(np.unravel_index(written, sizes), low, strict=True))] \
        = True
    gaps = np.flatnonzero(~hit)[:SKIPPED]
    return [int(np.ravel_multi_index(tuple(g + lo for g, lo in zip(
        np.unravel_index(x, shape), low, strict=True)), sizes)) for x in gaps]


def _outside(box, sizes: tuple[int, ...], side: int) -> list[int]:
    """The elements next to ``box`` outside it, along each dimension, before it (``side``
    -1) or after it (1), at the box's least and at its greatest indices in the other
    dimensions."""
    if box is None:
        return []
    low, high, _ = box
    out = []
    for d, n in enumerate(sizes):
        for i in ((low[d] - 1,) if side < 0 else (high[d] + 1,)):
            if 0 <= i < n:
                for ends in (low, high):
                    out.append(int(np.ravel_multi_index(
                        tuple(i if e == d else ends[e] for e in range(len(sizes))), sizes)))
    return out


def _reaches(a: Access, target: int) -> bool | None:
    """Whether some iteration of the loops around store ``a`` gives its flat offset the
    value ``target`` (whatever its conditions): True where one is found, False where the
    search proves none does, None where it cannot tell. Each loop variable is its start
    plus its step times an iteration number (``i = 1024 * bi + t + i#k * 1081344`` of a
    grid-stride loop); the search keeps a range of iteration numbers per loop (a box),
    drops a box where the offset's bounds exclude ``target``, and halves the range that
    widens them most. A box of single iterations that :func:`_tightened` keeps is a
    point of the loops, where the offset is exact."""
    order = _loop_order(a)
    if order is None or not _whole(a.offset):
        return None
    # each variable as start + step * (its iteration number), outermost first
    number: dict[sympy.Symbol, sympy.Expr] = {}
    loops = []
    for lp in order:
        k = sympy.Symbol(f"{lp.var}#k", integer=True, nonnegative=True)
        start, step, end = (x.xreplace(number) for x in (lp.start, lp.step, _end(lp)))
        loops.append((k.name, _compiled(start), _compiled(step), _compiled(end),
                      lp.kind == "for" and lp.bound is not None))
        number[lp.symbol] = start + step * k
    offset = _compiled(a.offset.xreplace(number))
    bound = {lp.var for lp in order}
    conditions = [_condition(c.expr.xreplace(number)) for c in a.conditions
                  if c.expr is not None and {s.name for s in c.expr.free_symbols} <= bound]

    def excluded(box) -> bool:
        """Whether a condition of the store's ifs is false throughout ``box``."""
        for c in conditions:
            try:
                if not c(box)[0]:
                    return True
            except (_Unknown, KeyError, ZeroDivisionError, TypeError, ValueError):
                pass
        return False
    try:
        first = _tightened(loops, {})
        boxes = [first] if first is not None else []
        # how much each loop's range widens the offset's bounds per iteration
        whole = _width(offset(first)) if first is not None else 0
        weight = {k: Fraction(whole - _width(offset({**first, k: (lo, lo)})), hi - lo + 1)
                  for k, (lo, hi) in (first or {}).items()}
        for _ in range(NODES):
            if not boxes:
                return False
            box = boxes.pop()
            low, high = offset(box)
            if not low <= target <= high or excluded(box):
                continue
            wide = [k for k, *_ in loops if box[k][0] != box[k][1]]
            if not wide:
                if low != high:
                    raise _Unknown
                return True         # low == high == target, at an iteration
            # the loop whose range widens the offset's bounds most, as weighed in the
            # first box, for the part of that range left
            k = max(wide, key=lambda k: weight[k] * (box[k][1] - box[k][0]))
            lo, hi = box[k]
            middle = (lo + hi) // 2
            for part in ((middle + 1, hi), (lo, middle)):
                child = _tightened(loops, {**box, k: part})
                if child is not None:
                    boxes.append(child)
        return None
    except (_Unknown, KeyError, ZeroDivisionError, TypeError, ValueError):
        return None


def _width(bounds: tuple) -> Fraction | int:
    return bounds[1] - bounds[0]


def _end(lp: Loop) -> sympy.Expr:
    """A for loop's bound (its variable stays below it), else the loop's trip count."""
    return lp.bound if lp.kind == "for" and lp.bound is not None else lp.trips


def _tightened(loops: list[tuple], box: dict[str, tuple]) -> dict[str, tuple] | None:
    """``box`` with the iteration number of each of ``loops`` (its name, start, step,
    end, whether the end is a bound: compiled, outermost first) in its range (from 0
    where ``box`` gives none) cut to the iterations the loop may run given the ranges of
    the loops around it (exactly those where they are single iterations); None where a
    loop has none left."""
    out = dict(box)
    for k, start, step, end, bounded in loops:
        (s_lo, _), (d_lo, _), (_, e_hi) = start(out), step(out), end(out)
        if d_lo <= 0:
            raise _Unknown
        last = (e_hi - 1 - s_lo) // d_lo if bounded else e_hi - 1
        lo, hi = out.get(k, (0, last))
        lo, hi = max(lo, 0), min(hi, last)
        if lo > hi:
            return None
        out[k] = (lo, hi)
    return out


@functools.lru_cache(maxsize=1024)
def _compiled(e: sympy.Basic):
    """``e`` as a function of a box (each variable's least and greatest value) to the
    least and the greatest value of ``e`` there (interval arithmetic: bounds, exact
    where every variable is a single value; integers as ints, fractions as Fractions)."""
    if e.is_Integer:
        v = int(e)
        return lambda box: (v, v)
    if e.is_Rational:
        f = Fraction(int(e.p), int(e.q))
        return lambda box: (f, f)
    if e.is_Symbol:
        name = e.name
        return lambda box: box[name]
    if isinstance(e, sympy.Piecewise):
        # the value of the first branch whose condition holds: the hull of the branches
        # that may be it (up to the first whose condition surely holds in the box)
        branches = [(_compiled(x.expr), _condition(x.cond)) for x in e.args]

        def hull(box):
            ends = []
            for value, condition in branches:
                may_hold, may_fail = condition(box)
                if may_hold:
                    ends.append(value(box))
                if not may_fail:
                    break
            if not ends:
                raise _Unknown
            return min(lo for lo, _ in ends), max(hi for _, hi in ends)
        return hull
    parts = [_compiled(x) for x in e.args]
    if isinstance(e, sympy.Add):
        def add(box):
            low = high = 0
            for part in parts:
                lo, hi = part(box)
                low, high = low + lo, high + hi
            return low, high
        return add
    if isinstance(e, sympy.Mul):
        def mul(box):
            low = high = 1
            for part in parts:
                lo, hi = part(box)
                ends = (low * lo, low * hi, high * lo, high * hi)
                low, high = min(ends), max(ends)
            return low, high
        return mul
    if isinstance(e, (sympy.floor, sympy.ceiling)):
        rounded = math.floor if isinstance(e, sympy.floor) else math.ceil
        inner = parts[0]

        def rounding(box):
            lo, hi = inner(box)
            return rounded(lo), rounded(hi)
        return rounding
    if isinstance(e, (sympy.Min, sympy.Max)):
        pick = min if isinstance(e, sympy.Min) else max

        def extreme(box):
            ends = [part(box) for part in parts]
            return pick(lo for lo, _ in ends), pick(hi for _, hi in ends)
        return extreme
    if isinstance(e, sympy.Pow) and e.exp.is_Integer and e.exp != 0:
        base, n = parts[0], int(e.exp)

        def power(box):
            lo, hi = base(box)
            if n < 0:       # (a division: by a range of one sign)
                if lo <= 0 <= hi:
                    raise _Unknown
                lo, hi = Fraction(1) / hi, Fraction(1) / lo
            ends = (lo ** abs(n), hi ** abs(n))
            if abs(n) % 2 == 0 and lo < 0 < hi:
                return 0, max(ends)
            return min(ends), max(ends)
        return power
    if isinstance(e, sympy.Mod):
        x, modulus = parts

        def remainder(box):
            lo, hi = x(box)
            m, m_hi = modulus(box)
            if m != m_hi or m <= 0:
                raise _Unknown
            k = lo // m
            return (lo - k * m, hi - k * m) if hi // m == k else (0, m)
        return remainder

    def unknown(box):
        raise _Unknown
    return unknown


def _condition(e: sympy.Basic):
    """``e`` (an if's condition) as a function of a box to (whether it may hold there,
    whether it may not), by the bounds of :func:`_compiled`; a comparison of a side that
    is not whole (a fraction where the program rounds) may do either."""
    if e is sympy.true or e is sympy.false:
        v = bool(e)
        return lambda box: (v, not v)
    if isinstance(e, (sympy.And, sympy.Or, sympy.Not)):
        parts = [_condition(x) for x in e.args]
        if isinstance(e, sympy.Not):
            return lambda box: parts[0](box)[::-1]

        def logic(box):
            ends = [part(box) for part in parts]
            holds, fails = [h for h, _ in ends], [f for _, f in ends]
            return (all(holds), any(fails)) if isinstance(e, sympy.And) else \
                (any(holds), all(fails))
        return logic
    if isinstance(e, sympy.core.relational.Relational) and \
            e.rel_op in ("<", "<=", ">", ">=", "==", "!="):
        difference = e.lhs - e.rhs
        if _whole(difference):
            d, op = _compiled(difference), e.rel_op

            def compare(box):
                lo, hi = d(box)
                holds = {"<": lo < 0, "<=": lo <= 0, ">": hi > 0, ">=": hi >= 0,
                         "==": lo <= 0 <= hi, "!=": not lo == hi == 0}[op]
                fails = {"<": hi >= 0, "<=": hi > 0, ">": lo <= 0, ">=": lo < 0,
                         "==": not lo == hi == 0, "!=": lo <= 0 <= hi}[op]
                return holds, fails
            return compare
    return lambda box: (True, True)


def _loop_order(a: Access) -> list[Loop] | None:
    """The loops around ``a`` whose variables its offset names, and those their ranges
    name, outermost first (the innermost loop of a name binds it); None where a name is
    no loop variable or a loop's range is not a whole expression of the loops around it
    (a geometric loop, a while loop, a trip count that is an estimate)."""
    if a.offset is None:
        return None
    by_var = {lp.var: lp for lp in a.loops if lp.var}
    names = {s.name for s in a.offset.free_symbols}
    todo = list(names)
    while todo:
        lp = by_var.get(todo.pop())
        if lp is None or lp.values is not None or lp.start is None or lp.step is None \
                or _end(lp) is None or (lp.approximate and lp.kind != "for"):
            return None
        if not all(_whole(x) for x in (lp.start, lp.step, _end(lp))):
            return None
        for x in (lp.start, lp.step, _end(lp)):
            for s in x.free_symbols:
                if s.name not in names:
                    names.add(s.name)
                    todo.append(s.name)
    order = [lp for lp in a.loops if lp.var in names and by_var[lp.var] is lp]
    seen: set[str] = set()
    for lp in order:
        if not {s.name for x in (lp.start, lp.step, _end(lp)) for s in x.free_symbols} <= seen:
            return None
        seen.add(lp.var)
    return order


def _whole(e: sympy.Basic) -> bool:
    """Whether ``e`` takes only whole values where its variables are whole: no fraction
    but inside a floor or a ceiling (the model keeps some integer divisions as
    fractions, ``rows / x``, where the program rounds)."""
    if isinstance(e, (sympy.floor, sympy.ceiling)):
        return True
    if e.is_Rational:
        return e.is_Integer
    if e.is_Symbol:
        return bool(e.is_integer)
    if isinstance(e, (sympy.Add, sympy.Mul, sympy.Min, sympy.Max, sympy.Mod)):
        return all(_whole(x) for x in e.args)
    if isinstance(e, sympy.Piecewise):
        return all(_whole(x.expr) for x in e.args)
    return False
