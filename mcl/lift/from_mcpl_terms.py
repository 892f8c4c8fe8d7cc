"""The terms of the MCPL-to-Lift derivation (:mod:`mcl.lift.from_mcpl`): the symbolic
values MCPL expressions evaluate to (array reads with affine indices, scalar
parameters, operators, reductions), the index variables and arrays they refer to,
and the walks over them that both phases (evaluation and building Lift) use."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace

import sympy

from mcl.diagnostics import Span
from mcl.lift import ir

#: Operators a sequential loop may accumulate with, as ``reduce`` operators; the
#: second item is the identity (None: there is none that a literal can write).
ASSOCIATIVE = {"+": "0", "*": "1", "max": None, "min": None, "fmax": None, "fmin": None}

_ARITH = ("+", "-", "*", "/", "%")
_COMPARE = ("<", "<=", ">", ">=", "==", "!=", "&&", "||")
_RANK = {"bool": 0, "int": 1, "float": 2, "double": 3}


@dataclass(frozen=True)
class Var:
    """An index variable: of a foreach (mapped over) or of a sequential loop (reduced)."""

    name: str
    size: sympy.Expr
    kind: str                                  # "foreach" | "loop"
    symbol: sympy.Symbol
    span: Span | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Arr:
    """An array as Lift sees it at one point of the derivation: the expression that
    denotes it (a program parameter, a lambda parameter or a view of one), its
    remaining dimensions, its element type and the MCPL array it comes from."""

    expr: ir.Expr
    dims: tuple[sympy.Expr, ...]
    elem: str
    name: str


class Term:
    """The value of an MCPL expression during symbolic evaluation; every term has a
    C ``type`` ('float', 'int', 'double', 'bool')."""

    type: str


@dataclass(frozen=True)
class TLit(Term):
    text: str
    type: str


@dataclass(frozen=True)
class TScalar(Term):
    """A scalar parameter of the kernel (a size, when used as a value, is one too)."""

    name: str
    type: str


@dataclass(frozen=True)
class TIndexVar(Term):
    var: Var
    type: str = "int"


@dataclass(frozen=True)
class TIndex(Term):
    """Integer arithmetic on indices, sizes and integer literals: ``expr`` for index
    positions, ``value`` (a term) where it is used as a value."""

    expr: sympy.Expr
    value: Term
    type: str = "int"


@dataclass(frozen=True)
class TRead(Term):
    arr: Arr
    idx: tuple[sympy.Expr, ...]
    type: str
    span: Span | None = field(default=None, compare=False)


@dataclass(frozen=True)
class TOp(Term):
    """An operator (``+``, ``neg``, ``!``, ``?:``, ``tofloat``) or a math function."""

    op: str
    args: tuple[Term, ...]
    type: str


@dataclass(frozen=True)
class TReduce(Term):
    """``init op body(v1..vk) op ...`` over all values of ``vars``."""

    op: str
    init: Term
    vars: tuple[Var, ...]
    body: Term
    type: str
    name: str                                   # the accumulating MCPL variable
    span: Span | None = field(default=None, compare=False)


@dataclass(frozen=True)
class TAcc(Term):
    """The value an accumulator had when the current loop iteration began."""

    name: str
    type: str


@dataclass(frozen=True)
class TError(Term):
    """Stands for a value whose derivation already failed (no further messages), or,
    with a ``reason``, a variable that has no value yet (a message when it is read)."""

    type: str = "float"
    reason: str = ""


def _subterms(t: Term) -> tuple[Term, ...]:
    if isinstance(t, TOp):
        return t.args
    if isinstance(t, TReduce):
        return (t.init, t.body)
    if isinstance(t, TIndex):
        return (t.value,)
    return ()


def _walk(t: Term) -> Iterator[Term]:
    yield t
    for s in _subterms(t):
        yield from _walk(s)


def _rebuild(t: Term, fn) -> Term:
    """``t`` with ``fn`` applied bottom-up to every subterm."""
    if isinstance(t, TOp):
        t = replace(t, args=tuple(_rebuild(a, fn) for a in t.args))
    elif isinstance(t, TReduce):
        t = replace(t, init=_rebuild(t.init, fn), body=_rebuild(t.body, fn))
    elif isinstance(t, TIndex):
        t = replace(t, value=_rebuild(t.value, fn))
    return fn(t)


def _promote(*types: str) -> str:
    return max(types, key=lambda s: _RANK.get(s, 2))


class _Failed(Exception):
    """Raised to stop deriving one statement after its problem was recorded."""

