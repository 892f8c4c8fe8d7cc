"""Which counted loops the OpenCL generator unrolls, and which it turns into
128-bit vector loads and stores.

A loop ``for (int u = 0; u < T; u++)`` whose trip count ``T`` is a constant is
unrolled (``#pragma unroll``): the private arrays it indexes with ``u`` then live
in registers. When ``T`` is a multiple of 4 and the body copies *runs* — array
elements at consecutive addresses for consecutive ``u`` — between memory and
registers, four iterations become one vector access::

    for (int u = 0; u < 4; u++) {             if (i < n && k1 + aq + 0 < p && ... + 3 < p
      int k = k1 + aq + u;                        && (((size_t)&a[i * p + k]) & 15) == 0) {
      if (i < n && k < p) {          ==>          aNext[0..3] = *(__global const float4*)&a[..];
        aNext[u] = a[i, k];                   } else {
      } else {                                    the four iterations one by one
        aNext[u] = 0.0;                       }
      }
    }

The vector path runs only when every condition holds for all four iterations
and every vector address is aligned (checked at run time, so the result never
depends on sizes or offsets); otherwise the four iterations run as written. The
analysis is conservative: a body with anything but declarations of integers,
plain assignments of array elements and ``if`` statements around them is only
unrolled. Assignments may be reordered across iterations only when no array
written in the body is accessed at another index in it.

This module decides; :mod:`mcl.opencl.generate` prints.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import sympy

from mcl.mcpl import ast
from mcl.mcpl.symbolic import symbol, to_sympy

#: lanes of a vector access (128 bits of 32-bit elements)
WIDTH = 4
#: loops with a constant trip count up to this are unrolled
MAX_UNROLL = 32
#: element types with OpenCL vector types of WIDTH lanes
VECTOR_TYPES = ("float", "int", "double", "long")


@dataclass(frozen=True)
class Access:
    """An array element in the loop body: its variable and whether it lies in
    memory (global/local/constant: one vector access) or in private registers
    (one scalar per lane)."""

    index: ast.Index
    name: str
    memory: bool


@dataclass(frozen=True)
class Copy:
    """``target = value`` of the vectorised body, with what each side is: an
    :class:`Access` at consecutive elements, or (values only) an expression that
    is the same in every lane."""

    stmt: ast.Assign
    target: Access
    value: Access | ast.Expr


@dataclass
class VectorLoop:
    """A counted loop of 4k iterations whose body vectorises."""

    var: str
    trip: int
    #: the body's integer declarations, in order (they depend on the loop variable)
    decls: list[ast.Declaration] = field(default_factory=list)
    #: conditions that must hold in every lane for the vector path
    conditions: list[ast.Expr] = field(default_factory=list)
    #: the copies the vector path does, in program order
    copies: list[Copy] = field(default_factory=list)

    def memory_accesses(self) -> list[Access]:
        out = []
        for c in self.copies:
            out += [a for a in (c.target, c.value) if isinstance(a, Access) and a.memory]
        return out


# ---------------------------------------------------------------------------- counting


def counted_loop(s: ast.For) -> tuple[str, ast.Expr, ast.Expr, bool] | None:
    """``(var, start, bound, inclusive)`` of ``for (int var = start; var < bound;
    var++)`` (or ``<=``, ``++var``, ``var += 1``) whose body does not assign ``var``."""
    init = s.init
    if not (isinstance(init, ast.Declaration) and not init.type.is_array
            and init.type.name == "int" and init.init is not None):
        return None
    var = init.name
    cond = s.cond
    if not (isinstance(cond, ast.Binary) and cond.op in ("<", "<=")
            and isinstance(cond.left, ast.Name) and cond.left.id == var):
        return None
    upd = s.update
    step_one = (isinstance(upd, ast.IncDec) and upd.op == "++"
                or isinstance(upd, ast.Assign) and upd.op == "+="
                and isinstance(upd.value, ast.Literal) and upd.value.value == 1)
    if not (step_one and isinstance(upd.target, ast.Name) and upd.target.id == var):
        return None
    if var in _assigned_names(s.body):
        return None
    return var, init.init, cond.right, cond.op == "<="


def _assigned_names(body: ast.Stmt) -> set[str]:
    out = set()
    for n in ast.walk(body):
        if isinstance(n, ast.Assign | ast.IncDec) and isinstance(n.target, ast.Name):
            out.add(n.target.id)
    return out


# ---------------------------------------------------------------------------- analysis


def analyse(s: ast.For, var: str, trip: int, lookup: Callable[[str], object],
            volatile: set[str]) -> VectorLoop | None:
    """The vector form of the counted loop ``s`` (variable ``var`` from 0, ``trip``
    iterations), or None if its body does not vectorise. ``lookup(name)`` gives the
    generator's variable (with ``type``, ``qualifier`` and ``base``) or None."""
    if trip % WIDTH or trip <= 0:
        return None
    loop = VectorLoop(var, trip)
    stmts = s.body.statements if isinstance(s.body, ast.Block) else (s.body,)
    defs: dict[str, ast.Expr] = {}
    executed: list[ast.Assign] = []
    for st in stmts:
        if isinstance(st, ast.Declaration):
            if (st.type.is_array or st.type.name != "int" or st.init is None or st.views
                    or st.space is not None or not _pure(st.init)):
                return None
            defs[st.name] = st.init
            loop.decls.append(st)
        elif isinstance(st, ast.Assign):
            executed.append(st)
        elif isinstance(st, ast.If) and not isinstance(st.orelse, ast.If):
            if not _pure(st.cond):
                return None
            then = _assignments(st.then)
            if then is None or (st.orelse is not None and _assignments(st.orelse) is None):
                return None
            loop.conditions.append(st.cond)
            executed += then
        else:
            return None
    # a declared name assigned later would change what the conditions and indices mean
    if set(defs) & {n for a in executed for n in _assigned_names(a)}:
        return None

    def resolve(e: ast.Expr) -> ast.Expr:
        return substitute(e, {}, defs)

    writes: dict[str, ast.Index] = {}
    for a in executed:
        copy = _copy(a, var, resolve, lookup, volatile)
        if copy is None:
            return None
        prev = writes.setdefault(copy.target.name, resolve(copy.target.index))
        if not ast.same(prev, resolve(copy.target.index)):
            return None
        loop.copies.append(copy)
    # iterations are reordered: a written array may be touched at its written index only
    for a in executed:
        for n in ast.walk(a.value):
            if isinstance(n, ast.Index) and _root(n) in writes:
                if not ast.same(resolve(n), writes[_root(n)]):
                    return None
    for c in loop.conditions:
        if any(isinstance(n, ast.Name) and n.id in writes for n in ast.walk(c)):
            return None
    return loop if loop.memory_accesses() else None


def _assignments(s: ast.Stmt) -> list[ast.Assign] | None:
    stmts = s.statements if isinstance(s, ast.Block) else (s,)
    if all(isinstance(x, ast.Assign) for x in stmts):
        return list(stmts)
    return None


def _pure(e: ast.Expr) -> bool:
    """No calls (which may have effects) and no array reads (which a reordered write
    may change)."""
    return not any(isinstance(n, ast.Call | ast.Index) for n in ast.walk(e))


def _root(e: ast.Index) -> str | None:
    return e.base.id if isinstance(e.base, ast.Name) else None


def _copy(a: ast.Assign, var: str, resolve: Callable[[ast.Expr], ast.Expr],
          lookup: Callable[[str], object], volatile: set[str]) -> Copy | None:
    if a.op != "=" or not isinstance(a.target, ast.Index):
        return None
    target = _run(a.target, var, resolve, lookup, volatile)
    if target is None:
        return None
    if isinstance(a.value, ast.Index) and _mentions(resolve(a.value), var):
        value: Access | ast.Expr | None = _run(a.value, var, resolve, lookup, volatile)
        if value is None or _element(lookup, value.name) != _element(lookup, target.name):
            return None
    elif _mentions(resolve(a.value), var) or any(isinstance(n, ast.Call)
                                                 for n in ast.walk(a.value)):
        return None
    else:
        value = a.value
    return Copy(a, target, value)


def _element(lookup: Callable[[str], object], name: str) -> str:
    return lookup(name).type.name  # type: ignore[attr-defined]


def _run(e: ast.Index, var: str, resolve: Callable[[ast.Expr], ast.Expr],
         lookup: Callable[[str], object], volatile: set[str]) -> Access | None:
    """``e`` as an access whose flat index grows by exactly 1 with ``var``."""
    name = _root(e)
    v = lookup(name) if name is not None else None
    # a view that only reshapes its array (one group of sizes, not tiled) is laid out
    # row-major over the same memory: its last index is contiguous as the array's is
    if v is None or not v.type.is_array or getattr(v, "tiled", False) or name in volatile:
        return None
    if v.base is not None and v.root.name in volatile:
        return None
    if v.type.name not in VECTOR_TYPES:
        return None
    idx = [resolve(i) for grp in e.groups for i in grp]
    if any(_mentions(i, var) for i in idx[:-1]):
        return None
    last = idx[-1]
    for n in ast.walk(last):   # C's / and % are not linear in var
        if isinstance(n, ast.Binary) and n.op in ("/", "%") and _mentions(n, var):
            return None
    expr = to_sympy(last)
    if expr is None:
        return None
    u = symbol(var)
    if sympy.expand(sympy.diff(expr, u)) != 1:
        return None
    return Access(e, name, v.qualifier in ("__global", "__local", "__constant"))


def _mentions(e: ast.Node, var: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == var for n in ast.walk(e))


# ---------------------------------------------------------------------------- alignment


def flat_index(index: ast.Index, sizes: Sequence[ast.Expr]) -> ast.Expr:
    """The row-major element offset of ``index`` into an array of ``sizes``."""
    idx = [i for grp in index.groups for i in grp]
    flat = idx[0]
    for i, size in zip(idx[1:], sizes[1:], strict=True):
        flat = ast.Binary("+", ast.Binary("*", flat, size), i)
    return flat


def multiple_of(e: ast.Expr, k: int, resolve: Callable[[ast.Name], ast.Expr | None],
                constant: Callable[[ast.Expr], int | None]) -> bool:
    """Whether the integer expression ``e`` is a multiple of ``k`` whatever the values
    of its names: ``resolve`` gives the definition of a name whose value never
    changes after its declaration (or None), ``constant`` the value of a constant
    expression (or None). C's ``/`` and ``%`` of non-constants are unknown integers."""
    opaque: dict[str, sympy.Symbol] = {}

    def convert(x: ast.Expr, depth: int = 0) -> sympy.Expr | None:
        if depth > 50:
            return None
        value = constant(x)
        if value is not None:
            return sympy.Integer(value)
        if isinstance(x, ast.Name):
            definition = resolve(x)
            return symbol(x.id) if definition is None else convert(definition, depth + 1)
        if isinstance(x, ast.Binary) and x.op in ("+", "-", "*"):
            left, right = convert(x.left, depth + 1), convert(x.right, depth + 1)
            if left is None or right is None:
                return None
            return left + right if x.op == "+" else left - right if x.op == "-" else left * right
        if isinstance(x, ast.Binary) and x.op in ("/", "%"):
            key = repr(ast.strip_spans(x))
            return opaque.setdefault(key, sympy.Symbol(f"_q{len(opaque)}", integer=True))
        if isinstance(x, ast.Unary) and x.op == "-":
            inner = convert(x.operand, depth + 1)
            return None if inner is None else -inner
        return None

    expr = convert(e)
    if expr is None:
        return False
    expr = sympy.expand(expr)
    coefficients = (sympy.Poly(expr, *sorted(expr.free_symbols, key=str)).coeffs()
                    if expr.free_symbols else [expr])
    return all(c.is_integer and int(c) % k == 0 for c in coefficients)


# ---------------------------------------------------------------------------- lanes


def substitute(e: ast.Expr, names: dict[str, ast.Expr], defs: dict[str, ast.Expr]) -> ast.Expr:
    """``e`` with ``names`` replaced and the body's declarations ``defs`` inlined
    (their definitions substituted the same way)."""

    def rewrite(n: ast.Node) -> ast.Node | None:
        if isinstance(n, ast.Name):
            if n.id in names:
                return names[n.id]
            if n.id in defs:
                return substitute(defs[n.id], names, defs)
        return None
    return ast.transform(e, rewrite)


def lane(var: str, base: ast.Expr, j: int) -> dict[str, ast.Expr]:
    """The substitution of lane ``j``: ``var`` → ``base + j``."""
    if isinstance(base, ast.Literal):
        return {var: ast.Literal(base.value + j)}
    return {var: base if j == 0 else ast.Binary("+", base, ast.Literal(j))}


def lane_conditions(loop: VectorLoop, base: ast.Expr) -> Sequence[ast.Expr]:
    """The conjuncts that must hold for the vector path: each condition of the body
    in each lane, split at ``&&``, without repeats (``i < n`` of four lanes is one)."""
    defs = {d.name: d.init for d in loop.decls}
    out: list[ast.Expr] = []
    for c in loop.conditions:
        for part in _conjuncts(c):
            # a bound on an expression that grows with var holds in every lane if it
            # holds in the last (``k < p``), one on a shrinking expression if in the first
            slope = _slope(part, loop.var, defs)
            lanes = range(WIDTH) if slope is None else [WIDTH - 1] if slope else [0]
            for j in lanes:
                x = substitute(part, lane(loop.var, base, j), defs)
                if not any(ast.same(x, seen) for seen in out):
                    out.append(x)
    return out


def _slope(cond: ast.Expr, var: str, defs: dict[str, ast.Expr]) -> bool | None:
    """For ``x < y`` or ``x <= y`` (or ``>``, ``>=``) where exactly one side depends on
    ``var``, linearly: True if the condition can only become false as ``var`` grows,
    False if only as it shrinks; None otherwise."""
    if not (isinstance(cond, ast.Binary) and cond.op in ("<", "<=", ">", ">=")):
        return None
    sides = [substitute(x, {}, defs) for x in (cond.left, cond.right)]
    if any(isinstance(n, ast.Binary) and n.op in ("/", "%") and _mentions(n, var)
           for x in sides for n in ast.walk(x)):
        return None
    exprs = [to_sympy(x) for x in sides]
    if any(e is None for e in exprs):
        return None
    u = symbol(var)
    slopes = [sympy.diff(e, u) for e in exprs]
    if not all(d.is_number for d in slopes) or (slopes[0] != 0) == (slopes[1] != 0):
        return None
    grows = slopes[0] > 0 if slopes[0] != 0 else slopes[1] < 0   # x - y grows with var
    return bool(grows) if cond.op in ("<", "<=") else not grows


def _conjuncts(e: ast.Expr) -> list[ast.Expr]:
    if isinstance(e, ast.Binary) and e.op == "&&":
        return _conjuncts(e.left) + _conjuncts(e.right)
    return [e]
