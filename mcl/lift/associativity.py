"""Whether the functions a program reduces with are associative: Lift's rewrite rules
split a ``reduce`` into partial reductions (``reduce(f, z) -> reduce(f, z) o
join o map(reduceSeq(f, z)) o split(n)``, a work-group's tree) and combine them in
another order, which computes the same only for an associative ``f`` (``x + y``,
``max``; not ``x - y``) whose start value ``z`` is neutral (``0`` for ``x + y``).
The function is tried on sample values with the interpreter's evaluation of its C
body: where grouping three values differently changes the result beyond rounding,
the rules keep the reduction sequential (:func:`regroupable` is their condition) and
the program gets a warning saying so."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from mcl.diagnostics import Diagnostic, warning
from mcl.lift.ir import Expr, Fun, Literal, Prim, Program, UserFun, walk
from mcl.lift.types import ScalarType

#: reductions whose function the rules regroup; a partRed is one by definition (its
#: partial results are combined in an order the rules and the lowering choose)
_REDUCTIONS = ("reduce", "partRed")


def nonassociative_reductions(prog: Program) -> list[Diagnostic]:
    """A warning for each user function a ``reduce`` of ``prog`` combines with that is
    not associative on sample values (once per function), and for each start value
    that is not neutral for an associative one: the rules keep those reductions
    sequential."""
    out: list[Diagnostic] = []
    seen: set = set()
    for _, node in walk(prog.body):
        if not (isinstance(node, Prim) and node.name in _REDUCTIONS and node.args):
            continue
        f = node.args[0]
        if not isinstance(f, UserFun) or len(f.params) != 2:
            continue
        if f.name not in seen:
            seen.add(f.name)
            found = _regrouped(f)
            if found is not None:
                a, b, c, left, right = (f"{float(v):.4g}" for v in found)
                what = ("the rewrite rules keep this reduce sequential (its elements are "
                        "combined in order, never split into partial reductions combined in "
                        "another order), so it is not parallelised") \
                    if node.name == "reduce" else \
                    ("a partRed combines its elements in an order the rewrite rules choose, "
                     "so its result depends on the implementation: use reduce (kept "
                     "sequential) or reduceSeq")
                out.append(warning(
                    "lift-not-associative",
                    f"'{f.name}' is not associative: {f.name}({f.name}({a}, {b}), {c}) = "
                    f"{left} but {f.name}({a}, {f.name}({b}, {c})) = {right}; {what}",
                    getattr(f, "span", None), _HINT))
                continue
            swapped = _commuted(f)
            if swapped is not None:
                a, b, ab, ba = (f"{float(v):.4g}" for v in swapped)
                what = ("the rewrite rules keep this reduce sequential (they would reorder "
                        "its elements), so it is not parallelised") \
                    if node.name == "reduce" else \
                    ("a partRed may combine its elements in another order, so its result "
                     "depends on the implementation: use reduce (kept sequential) or "
                     "reduceSeq")
                out.append(warning(
                    "lift-not-commutative",
                    f"'{f.name}' is not commutative: {f.name}({a}, {b}) = {ab} but "
                    f"{f.name}({b}, {a}) = {ba}; {what}", getattr(f, "span", None), _HINT))
                continue
        z = node.args[1] if len(node.args) > 1 else None
        if isinstance(z, Literal) and (f.name, z.text) not in seen:
            seen.add((f.name, z.text))
            if _sampled(f) and _regrouped(f) is None and not _neutral(f, z):
                out.append(warning(
                    "lift-not-neutral",
                    f"{z.text} is not a neutral start value for '{f.name}' "
                    f"({f.name}({z.text}, a) or {f.name}(a, {z.text}) is not a); the rewrite "
                    "rules keep this reduce sequential (split into partial reductions, "
                    "each would start from it), so it is not parallelised",
                    getattr(z, "span", None) or getattr(node, "span", None),
                    f"start from the neutral value of '{f.name}' (0 for x + y, 1 for x * y) "
                    "and combine the result with this one afterwards"))
    return out


_HINT = ("to have it parallelised, reduce with an associative and commutative function "
         "(x + y, x * y, max, min); to state the sequential order, write reduceSeq (not "
         "warned of)")


def regroupable(f: Fun, z: Expr | None = None) -> bool:
    """Whether a reduction with ``f`` (from ``z``) may be split into partial reductions
    combined in another order: ``f`` is a user function of two values of its result's
    scalar type, associative on the sample values, and ``z``, where it is a literal,
    is neutral (``f(z, a) = a = f(a, z)``; every partial reduction starts from it).
    False where that is not known (a body the samples cannot evaluate, an accumulator
    of another type, a start value that is not a literal): the rules then keep the
    reduction sequential."""
    if not (isinstance(f, UserFun) and len(f.params) == 2):
        return False
    if z is not None and not isinstance(z, Literal):
        return False
    return _regroupable(f, z)


@lru_cache(maxsize=256)
def _regroupable(f: UserFun, z: Literal | None) -> bool:
    if not _sampled(f) or _regrouped(f) is not None or _commuted(f) is not None:
        return False
    return z is None or _neutral(f, z)


def _sampled(f: UserFun) -> bool:
    """``f`` combines two values of its result's scalar type (what the samples try)."""
    return all(isinstance(t, ScalarType) and t == f.ret for _, t in f.params)


def _samples(dtype: np.dtype) -> np.ndarray:
    rng = np.random.default_rng(0)
    if dtype.kind == "f":
        return rng.uniform(0.5, 2.0, (16, 3)).astype(dtype)
    return rng.integers(1, 9, (16, 3)).astype(dtype)


def _caller(f: UserFun):
    from mcl.lift import cexpr as C
    dtype = np.dtype(f.ret.dtype)
    (x, _), (y, _) = f.params

    def call(u, v):
        with np.errstate(all="ignore"):
            return dtype.type(C.evaluate(f.body, {x: u, y: v}, dtype))
    return call


def _neutral(f: UserFun, z: Literal) -> bool:
    """``z`` leaves every sample value unchanged on either side of ``f``."""
    from mcl.lift import cexpr as C
    dtype = np.dtype(f.ret.dtype)
    call = _caller(f)
    try:
        zero = dtype.type(C.evaluate(C.CNum(z.text), {}, dtype))
        for a in _samples(dtype)[:, 0]:
            if not (np.isclose(call(zero, a), a, rtol=1e-6, atol=0)
                    and np.isclose(call(a, zero), a, rtol=1e-6, atol=0)):
                return False
    except Exception:   # noqa: BLE001 - a literal or body the samples cannot evaluate
        return False
    return True


def _commuted(f: UserFun) -> tuple | None:
    """Two sample values whose order changes what ``f`` gives, with both results; None
    where it agrees on all of them (or cannot be evaluated on them). The rules reorder
    the elements of a partial reduction (partRed-reorder, a work-group's tree by
    strides): only a commutative ``f`` gives the same there."""
    if not _sampled(f):
        return None
    call = _caller(f)
    for a, b, _ in _samples(np.dtype(f.ret.dtype)):
        try:
            ab, ba = call(a, b), call(b, a)
        except Exception:   # noqa: BLE001 - a body the interpreter cannot evaluate here
            return None
        if not np.isclose(ab, ba, rtol=1e-3, atol=1e-6, equal_nan=True):
            return a, b, ab, ba
    return None


def _regrouped(f: UserFun) -> tuple | None:
    """Three sample values that ``f`` groups to different results, with both results;
    None where it agrees on all of them (or cannot be evaluated on them)."""
    if not _sampled(f):
        return None      # an accumulator of another type than the elements: not regrouped
    call = _caller(f)
    for a, b, c in _samples(np.dtype(f.ret.dtype)):
        try:
            left, right = call(call(a, b), c), call(a, call(b, c))
        except Exception:   # noqa: BLE001 - a body the interpreter cannot evaluate here
            return None
        if not np.isclose(left, right, rtol=1e-3, atol=1e-6, equal_nan=True):
            return a, b, c, left, right
    return None
