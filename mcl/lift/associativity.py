"""Whether the functions a program reduces with are associative: Lift's rewrite rules
split a ``reduce`` into partial reductions (``reduce(f, z) -> reduce(f, z) o
join o map(reduceSeq(f, z)) o split(n)``) and combine them in another order, which
computes the same only for an associative ``f`` (``x + y``, ``max``; not ``x - y``).
The function is tried on sample values with the interpreter's evaluation of its C
body: where grouping three values differently changes the result beyond rounding, the
program gets a warning (its derived implementations may compute something else; the
search's verification rejects most of them, not all)."""

from __future__ import annotations

import numpy as np

from mcl.diagnostics import Diagnostic, warning
from mcl.lift.ir import Prim, Program, UserFun, walk
from mcl.lift.types import ScalarType

#: reductions whose function the rules regroup
_REDUCTIONS = ("reduce",)


def nonassociative_reductions(prog: Program) -> list[Diagnostic]:
    """A warning for each user function a ``reduce`` of ``prog`` combines with that is
    not associative on sample values (once per function)."""
    out: list[Diagnostic] = []
    seen: set[str] = set()
    for _, node in walk(prog.body):
        if not (isinstance(node, Prim) and node.name in _REDUCTIONS and node.args):
            continue
        f = node.args[0]
        if not isinstance(f, UserFun) or f.name in seen or len(f.params) != 2:
            continue
        seen.add(f.name)
        found = _regrouped(f)
        if found is not None:
            a, b, c, left, right = (f"{float(v):.4g}" for v in found)
            out.append(warning(
                "lift-not-associative",
                f"'{f.name}' is not associative: {f.name}({f.name}({a}, {b}), {c}) = {left} "
                f"but {f.name}({a}, {f.name}({b}, {c})) = {right}; the rewrites split a "
                "reduce into partial reductions combined in another order, so derived "
                "implementations may compute something else", getattr(f, "span", None),
                "reduce with an associative function (x + y, x * y, max, min), or write "
                "the loop as reduceSeq, which the rules keep in order"))
    return out


def _regrouped(f: UserFun) -> tuple | None:
    """Three sample values that ``f`` groups to different results, with both results;
    None where it agrees on all of them (or cannot be evaluated on them)."""
    from mcl.lift import cexpr as C
    types = [t for _, t in f.params]
    if not all(isinstance(t, ScalarType) and t == f.ret for t in types):
        return None      # an accumulator of another type than the elements: not regrouped
    dtype = np.dtype(f.ret.dtype)
    rng = np.random.default_rng(0)
    if dtype.kind == "f":
        samples = rng.uniform(0.5, 2.0, (16, 3)).astype(dtype)
    else:
        samples = rng.integers(1, 9, (16, 3)).astype(dtype)
    (x, _), (y, _) = f.params

    def call(u, v):
        with np.errstate(all="ignore"):
            return dtype.type(C.evaluate(f.body, {x: u, y: v}, dtype))

    for a, b, c in samples:
        try:
            left, right = call(call(a, b), c), call(a, call(b, c))
        except Exception:   # noqa: BLE001 - a body the interpreter cannot evaluate here
            return None
        if not np.isclose(left, right, rtol=1e-3, atol=1e-6, equal_nan=True):
            return a, b, c, left, right
    return None
