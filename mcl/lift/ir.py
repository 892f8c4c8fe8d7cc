"""The Lift intermediate representation: immutable expression trees of data
expressions (parameters, literals, calls) and functions (patterns, user
functions, lambdas, compositions), plus the Python API that builds them.

A call ``Call(f, args)`` applies a function to data; ``f o g $ x`` is the chain
``Call(f, (Call(g, (x,)),))``. A composition only survives where a function is
needed, e.g. as the argument of ``map``."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace

import sympy

from mcl.diagnostics import Span
from mcl.lift.cexpr import CExpr
from mcl.lift.types import Type, size_symbol

_uids = itertools.count(1)


# ----------------------------------------------------------------------------- nodes

class Node:
    """Base of expressions and functions. ``span`` never takes part in equality."""


class Expr(Node):
    """A data expression."""


class Fun(Node):
    """A function (applied to data by ``Call``)."""


@dataclass(frozen=True, eq=True)
class Param(Expr):
    """A parameter of the program or of a lambda. Identity is (name, uid)."""

    name: str
    uid: int = field(default_factory=lambda: next(_uids))
    type: Type | None = field(default=None, compare=False)
    span: Span | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Literal(Expr):
    """A scalar constant such as ``0.0f``; its type adapts to vector accumulators."""

    text: str
    type: Type
    span: Span | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Call(Expr):
    fun: Fun
    args: tuple[Expr, ...]
    span: Span | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Lambda(Fun):
    params: tuple[Param, ...]
    body: Expr
    span: Span | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class UserFun(Fun):
    """A scalar function with a C-like body, e.g. ``add(x: float, y: float): float = x + y``."""

    name: str
    params: tuple[tuple[str, Type], ...]
    ret: Type
    body: CExpr
    span: Span | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Compose(Fun):
    """``f o g o h``: applies ``h`` first. At least two parts, never nested."""

    funs: tuple[Fun, ...]
    span: Span | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Prim(Fun):
    """A built-in pattern. ``args`` holds its parameters (functions, sizes, init
    values) in the order of ``PATTERNS[name].params``; ``dim`` is the OpenCL
    dimension of ``mapGlb``/``mapWrg``/``mapLcl``."""

    name: str
    args: tuple = ()
    dim: int = 0
    span: Span | None = field(default=None, compare=False, repr=False)

    @property
    def f(self) -> Fun:
        """The function parameter of a pattern that has one."""
        for a in self.args:
            if isinstance(a, Fun):
                return a
        raise AttributeError(f"{self.name} has no function parameter")


# ----------------------------------------------------------------------------- patterns

@dataclass(frozen=True)
class PatternSpec:
    """What a pattern takes: ``params`` kinds are 'fun', 'size', 'int', 'init';
    ``arity`` is the number of data arguments (None: any number >= 1)."""

    name: str
    params: tuple[str, ...]
    arity: int | None = 1
    lowered: bool = True       # known to the code generator
    hardware: bool = False     # a hardware pattern (table 2 of seed 001)
    has_dim: bool = False
    doc: str = ""


_MAPS = {
    "map": (False, False, "apply f to every element"),
    "mapSeq": (True, True, "map sequentially in one work-item"),
    "mapGlb": (True, True, "each work-item (global id) applies f to an element"),
    "mapWrg": (True, True, "each work-group applies f to an element"),
    "mapLcl": (True, True, "each work-item of a work-group applies f to an element"),
    "mapWarp": (True, True, "each warp applies f to an element"),
    "mapLane": (True, True, "each lane of a warp applies f to an element"),
    "mapVec": (True, True, "apply a scalar function to OpenCL vectors"),
}

PATTERNS: dict[str, PatternSpec] = {}
for _n, (_low, _hw, _doc) in _MAPS.items():
    PATTERNS[_n] = PatternSpec(_n, ("fun",), None if _n == "mapVec" else 1, _low, _hw,
                               _n in ("mapGlb", "mapWrg", "mapLcl"), _doc)
for _spec in [
    PatternSpec("id", (), 1, True, False, doc="identity"),
    PatternSpec("reduce", ("fun", "init"), 1, False, doc="reduce with f from init: T[n] -> A[1]"),
    PatternSpec("reduceSeq", ("fun", "init"), 1, True, True, doc="sequential reduction"),
    PatternSpec("partRed", ("fun", "init", "size"), 1, False,
                doc="partial reduction: chunks of the given size reduced, T[n] -> T[n/k]"),
    PatternSpec("iterate", ("int", "fun"), 1, True, doc="apply f n times"),
    PatternSpec("split", ("size",), 1, True, doc="outer split: T[n] -> T[n/k][k]"),
    PatternSpec("join", (), 1, True, doc="outer join: T[m][k] -> T[m*k]"),
    PatternSpec("innerSplit", ("size",), 1, True, doc="split the innermost dimension"),
    PatternSpec("innerJoin", (), 1, True, doc="join the two innermost dimensions"),
    PatternSpec("transpose", (), 1, True, doc="T[m][n] -> T[n][m]"),
    PatternSpec("reorder", (), 1, False, doc="any permutation (the program does not care)"),
    PatternSpec("reorderStride", ("size",), 1, True, True,
                doc="out[i] = in[(i mod (n/s))*s + i div (n/s)]"),
    PatternSpec("zip", (), None, True, doc="arrays of equal length -> array of tuples"),
    PatternSpec("get", ("int",), 1, True, doc="component of a tuple"),
    PatternSpec("asVector", ("int",), 1, True, True, doc="T[n] -> T<w>[n/w]"),
    PatternSpec("asScalar", (), 1, True, True, doc="T<w>[n] -> T[n*w]"),
    PatternSpec("toLocal", ("fun",), 1, True, True,
                doc="results of f in local memory (laid out as f's result: toLocal(transpose o "
                    "mapLcl(g)) writes g's results transposed)"),
    PatternSpec("toGlobal", ("fun",), 1, True, True, doc="results of f in global memory"),
    PatternSpec("toPrivate", ("fun",), 1, True, True, doc="results of f in private memory"),
    PatternSpec("toConstant", ("fun",), 1, True, True,
                doc="an input of the program (f: id or layout patterns) read through constant "
                    "memory: small read-only data every work-item reads (a filter)"),
    PatternSpec("prefetch", ("fun",), 1, True, True,
                doc="map(f), the input of a reduceSeq: f of the next element is computed "
                    "while the reduceSeq works on the current one (software pipelining)"),
    PatternSpec("prefetchLocal", ("fun", "size"), 1, True, True,
                doc="prefetchLocal(toLocal(h) o g, p) = map(toLocal(h) o g), the input of a "
                    "reduceSeq run by a whole work-group: g of the next element (its loads "
                    "into private memory) is computed before the reduceSeq's step on the "
                    "current one and toLocal(h) of it (the copy into local memory) after the "
                    "step, into the other of two local buffers (double buffering: one barrier "
                    "per step) whose rows are padded by p elements (a layout without bank "
                    "conflicts; the values are not changed)"),
    PatternSpec("slide", ("size", "size"), 1, True, doc="windows: slide(size, step)"),
    PatternSpec("pad", ("size", "size"), 1, True,
                doc="pad(l, r): repeat the edge values (a negative amount drops elements)"),
]:
    PATTERNS[_spec.name] = _spec

PARALLEL_MAPS = ("mapGlb", "mapWrg", "mapLcl", "mapWarp", "mapLane")
ALL_MAPS = tuple(_MAPS)
LAYOUT = ("split", "join", "innerSplit", "innerJoin", "transpose", "reorderStride", "zip",
          "get", "asVector", "asScalar", "slide", "pad", "reorder")


# ----------------------------------------------------------------------------- Python API

def apply(f: Fun, *args: Expr) -> Expr:
    """``f $ args``; a composition becomes a chain of calls."""
    if isinstance(f, Compose):
        out: Expr = apply(f.funs[-1], *args)
        for g in reversed(f.funs[:-1]):
            out = apply(g, out)
        return out
    return Call(f, tuple(args))


def compose(*funs: Fun) -> Fun:
    """``compose(f, g)`` is ``f o g`` (``g`` first); nested compositions are flattened."""
    flat: list[Fun] = []
    for f in funs:
        flat.extend(f.funs if isinstance(f, Compose) else [f])
    return flat[0] if len(flat) == 1 else Compose(tuple(flat))


def size(e) -> sympy.Expr:
    """A size: an int, a sympy expression or a string such as ``'N/4'``."""
    if isinstance(e, str):
        names = {n: size_symbol(n) for n in _identifiers(e)}
        return sympy.sympify(e.replace("^", "**"), locals=names)
    return sympy.sympify(e)


def _identifiers(text: str) -> set[str]:
    import re
    return set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text))


def param(name: str, type: Type | None = None) -> Param:
    return Param(name, type=type)


def fun(*names_or_params, body: Callable[..., Expr] | None = None, types=None) -> Lambda:
    """``fun('x', 'y', body=lambda x, y: ...)`` builds a lambda with fresh parameters."""
    params = tuple(p if isinstance(p, Param) else Param(p, type=(types or {}).get(p))
                   for p in names_or_params)
    if body is None:
        raise ValueError("fun() needs a body")
    return Lambda(params, body(*params))


def lit(text: str | float, type: Type | None = None) -> Literal:
    from mcl.lift.types import FLOAT, INT
    text = str(text)
    if type is None:
        type = INT if text.lstrip("-").isdigit() else FLOAT
    return Literal(text, type)


def mk(name: str, *args, dim: int = 0) -> Prim:
    """A pattern by name: ``mk('split', 4)``, ``mk('map', f)``, ``mk('mapWrg', f, dim=1)``."""
    spec = PATTERNS[name]
    conv = []
    for kind, a in zip(spec.params, args, strict=True):
        if kind == "size":
            conv.append(size(a))
        elif kind == "int":
            conv.append(int(a))
        elif kind == "init" and not isinstance(a, Expr):
            conv.append(lit(a))
        else:
            conv.append(a)
    return Prim(name, tuple(conv), dim)


def map_(f: Fun) -> Prim:
    return mk("map", f)


def reduce_(f: Fun, init) -> Prim:
    return mk("reduce", f, init)


def split(n) -> Prim:
    return mk("split", n)


JOIN = Prim("join")
TRANSPOSE = Prim("transpose")
ID = Prim("id")
ASSCALAR = Prim("asScalar")
REORDER = Prim("reorder")


def zip_(*args: Expr) -> Call:
    return Call(Prim("zip"), tuple(args))


def get(e: Expr, i: int) -> Call:
    return Call(Prim("get", (i,)), (e,))


@dataclass(frozen=True)
class Program:
    """A named top-level lambda plus the user functions it may call by name."""

    name: str
    body: Lambda
    userfuns: dict = field(default_factory=dict, compare=False, hash=False)
    source: str | None = field(default=None, compare=False)

    @property
    def params(self) -> tuple[Param, ...]:
        return self.body.params

    def with_body(self, body: Lambda) -> Program:
        return replace(self, body=body)


# ----------------------------------------------------------------------------- traversal

def children(n: Node) -> list[Node]:
    """Sub-nodes in a fixed order (the positions rules rewrite at)."""
    if isinstance(n, Call):
        return [n.fun, *n.args]
    if isinstance(n, Lambda):
        return [n.body]
    if isinstance(n, Compose):
        return list(n.funs)
    if isinstance(n, Prim):
        return [a for a in n.args if isinstance(a, Node)]
    return []


def with_children(n: Node, new: list[Node]) -> Node:
    """``n`` with its children (as ``children`` lists them) replaced."""
    if isinstance(n, Call):
        f = new[0]
        if isinstance(f, Compose):
            return apply(f, *new[1:])
        return Call(f, tuple(new[1:]), n.span)
    if isinstance(n, Lambda):
        return Lambda(n.params, new[0], n.span)
    if isinstance(n, Compose):
        return compose(*new)
    if isinstance(n, Prim):
        it = iter(new)
        args = tuple(next(it) if isinstance(a, Node) else a for a in n.args)
        return Prim(n.name, args, n.dim, n.span)
    return n


Path = tuple[int, ...]


def walk(n: Node, path: Path = ()) -> Iterator[tuple[Path, Node]]:
    """Every node with its path of child indices, parents before children."""
    yield path, n
    for i, c in enumerate(children(n)):
        yield from walk(c, path + (i,))


def at(n: Node, path: Path) -> Node:
    for i in path:
        n = children(n)[i]
    return n


def replace_at(n: Node, path: Path, new: Node) -> Node:
    if not path:
        return new
    kids = children(n)
    kids[path[0]] = replace_at(kids[path[0]], path[1:], new)
    return with_children(n, kids)


def substitute(n: Node, mapping: dict[Param, Expr]) -> Node:
    """Replace free parameters (used to inline lambdas)."""
    if isinstance(n, Param):
        return mapping.get(n, n)
    kids = children(n)
    if not kids:
        return n
    new = [substitute(c, mapping) for c in kids]
    if all(a is b for a, b in zip(new, kids, strict=True)):
        return n
    return with_children(n, new)


def bind_sizes(n, values: dict):
    """``n`` (a node or a Program) with size symbols replaced by numbers: sizes in
    pattern parameters and in parameter types. ``values`` maps symbols (or their
    names) to ints."""
    from mcl.lift.types import subst
    if not isinstance(n, Node | Program) or not isinstance(values, dict):
        from mcl.lift.arguments import program_argument, sizes_argument
        if not isinstance(n, Node):
            program_argument(n, "bind_sizes", "n")
        sizes_argument(values, "bind_sizes", "values")
    vals = {(size_symbol(k) if isinstance(k, str) else k): v for k, v in values.items()}
    if isinstance(n, Program):
        from mcl.lift.arguments import sizes_argument
        body = bind_sizes(n.body, sizes_argument(vals))
        return replace(n, body=body)
    if isinstance(n, Param):
        return replace(n, type=subst(n.type, vals)) if n.type is not None else n
    if isinstance(n, Lambda):
        return Lambda(tuple(bind_sizes(p, vals) for p in n.params), bind_sizes(n.body, vals),
                      n.span)
    if isinstance(n, Prim):
        args = tuple(bind_sizes(a, vals) if isinstance(a, Node) else
                     (sympy.sympify(a).subs(vals) if isinstance(a, sympy.Basic) else a)
                     for a in n.args)
        return Prim(n.name, args, n.dim, n.span)
    kids = children(n)
    if not kids:
        return n
    return with_children(n, [bind_sizes(c, vals) for c in kids])


def size_names(prog: Program) -> list[str]:
    """The names of the size symbols of a program, sorted: those of its parameters'
    types and of its patterns' parameters (``split(N/4)``)."""
    from mcl.lift.types import free_sizes
    names = {s.name for p in prog.params if p.type is not None for s in free_sizes(p.type)}
    for prim in prims(prog.body):
        for a in prim.args:
            if isinstance(a, sympy.Basic):
                names |= {s.name for s in a.free_symbols}
    return sorted(names)


def free_params(n: Node) -> set[Param]:
    if isinstance(n, Param):
        return {n}
    if isinstance(n, Lambda):
        return free_params(n.body) - set(n.params)
    out: set[Param] = set()
    for c in children(n):
        out |= free_params(c)
    return out


def count_uses(n: Node, p: Param) -> int:
    if n == p:
        return 1
    return sum(count_uses(c, p) for c in children(n))


def prims(n: Node) -> Iterator[Prim]:
    for _, m in walk(n):
        if isinstance(m, Prim):
            yield m


def is_lowered(n: Node) -> bool:
    """True when every pattern in ``n`` is known to the code generator."""
    return all(PATTERNS[p.name].lowered for p in prims(n))
