"""Rewrite rules as first-class objects (seed 001 figures "Algorithmic rules" and
"Lowering rules", seed 002 for macro rules).

A rule has a name, a left-hand side (``match``: does the node have the rule's
shape?), a side condition (``condition``: sizes divide, the pre-conditions of
the lowering rules hold) and a right-hand side (``rhs``: the replacements, one
per choice of numeric parameter). ``rewrites(program)`` enumerates every
applicable (position, rule, choice); ``apply`` performs one.

``exact`` rules preserve the value of the expression they rewrite. The others
(reordering a partial reduction) preserve it only under the final reduction,
as seed 001 says: "the result of a partial reduction is always composed with
the reduction"."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import sympy

from mcl.diagnostics import McplError, error
from mcl.lift import cexpr as C
from mcl.lift.ir import (
    JOIN,
    PARALLEL_MAPS,
    Call,
    Compose,
    Expr,
    Fun,
    Lambda,
    Literal,
    Node,
    Param,
    Path,
    Prim,
    Program,
    UserFun,
    apply,
    at,
    children,
    compose,
    replace_at,
)
from mcl.lift.nesting import is_layout_map, layout_expr, layout_fun, nesting_problem
from mcl.lift.typecheck import LiftTypeError, check_program, fun_type, type_of
from mcl.lift.types import ArrayType, ScalarType, TupleType, Type, VectorType

# ----------------------------------------------------------------------------- context

@dataclass
class Site:
    """What a rule sees at a position: the node, the types of a call's arguments,
    the patterns enclosing it and the search limits."""

    node: Node
    path: Path
    env: dict
    enclosing: tuple[str, ...]
    arg_types: list[Type] | None
    limits: Limits


@dataclass(frozen=True)
class Limits:
    """Bounds on numeric parameters (from the device in an exploration)."""

    max_work_group: int = 1024
    local_memory: int = 48 * 1024
    vector_widths: tuple[int, ...] = (2, 4)
    max_choices: int = 12
    warp_size: int = 32


def typed_walk(prog: Program, limits: Limits | None = None) -> Iterator[Site]:
    """Every node of the program's body with its typing context."""
    limits = limits or Limits()
    env0 = {p: p.type for p in prog.params}

    def expr(e: Expr, path: Path, env, stack):
        if isinstance(e, Call):
            try:
                ats = [type_of(a, env) for a in e.args]
            except LiftTypeError:
                ats = None
            yield Site(e, path, env, stack, ats, limits)
            yield from fun(e.fun, path + (0,), env, stack, ats)
            for i, a in enumerate(e.args):
                yield from expr(a, path + (i + 1,), env, stack)
        else:
            yield Site(e, path, env, stack, None, limits)

    def fun(f: Fun, path: Path, env, stack, ins):
        yield Site(f, path, env, stack, ins, limits)
        if isinstance(f, Lambda):
            inner = dict(env)
            if ins is not None:
                inner.update(zip(f.params, ins, strict=False))
            yield from expr(f.body, path + (0,), inner, stack)
        elif isinstance(f, Compose):
            t = ins
            parts = list(enumerate(f.funs))
            for i, g in reversed(parts):
                yield from fun(g, path + (i,), env, stack, t)
                try:
                    t = [fun_type(g, t, env)] if t is not None else None
                except LiftTypeError:
                    t = None
        elif isinstance(f, Prim):
            inner_stack = stack + (f.name,)
            idx = 0
            for a in f.args:
                if not isinstance(a, Node):
                    continue
                if isinstance(a, Fun):
                    yield from fun(a, path + (idx,), env, inner_stack, _fun_inputs(f, ins, env))
                else:
                    yield from expr(a, path + (idx,), env, stack)
                idx += 1

    yield from expr(prog.body.body, (), env0, ())


def _fun_inputs(p: Prim, ins, env) -> list[Type] | None:
    if ins is None:
        return None
    try:
        if p.name in ("map", "mapSeq", "mapGlb", "mapWrg", "mapLcl", "mapWarp", "mapLane",
                      "prefetch", "prefetchLocal"):
            return [ins[0].elem]
        if p.name in ("reduce", "reduceSeq", "partRed"):
            r = fun_type(p, ins, env)
            return [r.elem, ins[0].elem]
        if p.name in ("iterate", "toLocal", "toGlobal", "toPrivate", "toConstant"):
            return ins
        if p.name == "mapVec":
            return [t.scalar if isinstance(t, VectorType) else t for t in ins]
    except (LiftTypeError, AttributeError):
        return None
    return None


# ----------------------------------------------------------------------------- rules

@dataclass(frozen=True)
class Rule:
    name: str
    kind: str                                   # algorithmic, lowering, simplification, ...
    doc: str                                    # "lhs -> rhs" as the seeds write it
    match: Callable[[Site], bool]
    rhs: Callable[[Site], list[Node]]
    condition: Callable[[Site], bool] = field(default=lambda s: True)
    exact: bool = True
    explore: bool = True                        # offered to the search strategies

    def candidates(self, site: Site) -> list[Node]:
        """Replacements for the node at ``site`` (empty when the rule does not apply)."""
        try:
            if not self.match(site) or not self.condition(site):
                return []
            return self.rhs(site)
        except (LiftTypeError, AttributeError, IndexError, TypeError, ValueError,
                ZeroDivisionError):
            return []


def _call_of(site: Site, name: str | tuple) -> Prim | None:
    n = site.node
    names = (name,) if isinstance(name, str) else name
    if isinstance(n, Call) and isinstance(n.fun, Prim) and n.fun.name in names:
        return n.fun
    return None


def _prim(site: Site, name: str | tuple) -> Prim | None:
    n = site.node
    names = (name,) if isinstance(name, str) else name
    return n if isinstance(n, Prim) and n.name in names else None


def _size(site: Site, k: int = 0):
    t = site.arg_types[k]
    return t.size if isinstance(t, ArrayType) else None


def divisors(n, limits: Limits, low: int = 2, high: int | None = None) -> list[int]:
    """Power-of-two divisors of ``n`` (powers of two when ``n`` is symbolic)."""
    n = sympy.sympify(n)
    out = []
    k = low
    top = high or (int(n) if n.is_number else 1 << 16)
    while k <= top:
        if not n.is_number or int(n) % k == 0:
            out.append(k)
        k *= 2
    if len(out) > limits.max_choices:
        step = len(out) / limits.max_choices
        out = [out[int(i * step)] for i in range(limits.max_choices)]
    return out


def _is_assoc(f: Fun, elem: Type, z: Expr | None = None) -> bool:
    """f : (T, T) -> T, associative, and ``z`` neutral for it: partial reductions of it
    (each from ``z``) can be combined in another order. The condition of every rule
    that regroups a reduce (reduce-partial, the work-group trees of the macros); where
    it fails the reduce stays sequential (reduce-sequential, reduce-to-reduceSeq)."""
    from mcl.lift.associativity import regroupable
    try:
        return isinstance(f, UserFun) and len(f.params) == 2 and \
            fun_type(f, [elem, elem]) == elem and regroupable(f, z)
    except LiftTypeError:
        return False


def _param_like(t: Type, name: str) -> Param:
    return Param(name, type=None)


RULES: dict[str, Rule] = {}


def rule(r: Rule) -> Rule:
    RULES[r.name] = r
    return r


# --- identity, iterate, reorder ------------------------------------------------------

rule(Rule("id-intro", "algorithmic", "f $ x -> f $ id $ x",
          match=lambda s: isinstance(s.node, Call) and len(s.node.args) == 1,
          rhs=lambda s: [Call(s.node.fun, (Call(Prim("id"), s.node.args),))], explore=False))
rule(Rule("id-elim", "simplification", "id $ x -> x",
          match=lambda s: _call_of(s, "id") is not None,
          rhs=lambda s: [s.node.args[0]]))
rule(Rule("iterate-decompose", "algorithmic",
          "iterate(m+n, f) -> iterate(m, f) o iterate(n, f)",
          match=lambda s: (p := _call_of(s, "iterate")) is not None and p.args[0] >= 2,
          rhs=lambda s: [Call(Prim("iterate", (s.node.fun.args[0] - k, s.node.fun.args[1])),
                              (Call(Prim("iterate", (k, s.node.fun.args[1])), s.node.args),))
                         for k in range(1, s.node.fun.args[0])]))
rule(Rule("iterate-one", "simplification", "iterate(1, f) $ x -> f $ x",
          match=lambda s: (p := _call_of(s, "iterate")) is not None and p.args[0] == 1,
          rhs=lambda s: [apply(s.node.fun.args[1], *s.node.args)]))


def _map_over(s: Site, inner: str) -> bool:
    return _call_of(s, "map") is not None and isinstance(s.node.args[0], Call) and \
        isinstance(s.node.args[0].fun, Prim) and s.node.args[0].fun.name == inner


rule(Rule("reorder-commute-out", "algorithmic", "map(f) o reorder -> reorder o map(f)",
          match=lambda s: _map_over(s, "reorder"),
          rhs=lambda s: [Call(Prim("reorder"), (Call(s.node.fun, s.node.args[0].args),))]))
rule(Rule("reorder-commute-in", "algorithmic", "reorder o map(f) -> map(f) o reorder",
          match=lambda s: _call_of(s, "reorder") is not None and isinstance(s.node.args[0], Call)
          and isinstance(s.node.args[0].fun, Prim) and s.node.args[0].fun.name == "map",
          rhs=lambda s: [Call(s.node.args[0].fun, (Call(Prim("reorder"), s.node.args[0].args),))]))

# --- split-join -------------------------------------------------------------------------

rule(Rule("split-join", "algorithmic", "map(f) -> join o map(map(f)) o split(n)",
          match=lambda s: _call_of(s, "map") is not None and s.arg_types is not None,
          rhs=lambda s: [apply(JOIN, apply(Prim("map", (s.node.fun,)),
                                           apply(Prim("split", (sympy.Integer(k),)),
                                                 s.node.args[0])))
                         for k in divisors(_size(s), s.limits, high=int(_size(s)) // 2
                                           if _size(s).is_number else None)]))

# --- reductions -------------------------------------------------------------------------


def _partred(f, z, k) -> Prim:
    return Prim("partRed", (f, z, sympy.Integer(k)))


rule(Rule("reduce-partial", "algorithmic", "reduce(f, z) -> reduce(f, z) o partRed(f, z, k)",
          match=lambda s: (p := _call_of(s, "reduce")) is not None and s.arg_types is not None
          and _is_assoc(p.args[0], s.arg_types[0].elem, p.args[1]),
          rhs=lambda s: [Call(s.node.fun, (Call(_partred(s.node.fun.args[0], s.node.fun.args[1],
                                                         k), s.node.args),))
                         for k in divisors(_size(s), s.limits, high=int(_size(s)) // 2
                                           if _size(s).is_number else None)]))
# A reduce outside every map whose function the rules may not regroup (above) is
# folded by one work-item: a map of one chunk, which map-to-mapGlb and
# reduce-to-reduceSeq lower. (An associative one has the partial reductions and trees.)
rule(Rule("reduce-sequential", "lowering",
          "reduce(f, z) $ x -> join o map(reduce(f, z)) o split(n) $ x (x of n elements, "
          "f not associative: one work-item combines them in order)",
          match=lambda s: (p := _call_of(s, "reduce")) is not None and s.arg_types is not None
          and not s.enclosing and not _is_assoc(p.args[0], s.arg_types[0].elem, p.args[1]),
          rhs=lambda s: [apply(JOIN, apply(Prim("map", (s.node.fun,)),
                                           apply(Prim("split", (_size(s),)), s.node.args[0])))]))
rule(Rule("partRed-reorder", "algorithmic", "partRed(f, z, k) -> partRed(f, z, k) o reorder",
          match=lambda s: _call_of(s, "partRed") is not None and not (
              isinstance(s.node.args[0], Call) and isinstance(s.node.args[0].fun, Prim)
              and s.node.args[0].fun.name in ("reorder", "reorderStride")),
          rhs=lambda s: [Call(s.node.fun, (Call(Prim("reorder"), s.node.args),))],
          exact=False))
rule(Rule("partRed-split", "algorithmic",
          "partRed(f, z, k) -> join o map(partRed(f, z, k)) o split(m)",
          match=lambda s: _call_of(s, "partRed") is not None and s.arg_types is not None,
          rhs=lambda s: [apply(JOIN, apply(Prim("map", (s.node.fun,)),
                                           apply(Prim("split", (sympy.Integer(m),)),
                                                 s.node.args[0])))
                         for m in divisors(_size(s), s.limits)
                         if m % int(s.node.fun.args[2]) == 0 and m < int(_size(s))]))


def _iterate_choices(s: Site) -> list[Node]:
    p = s.node.fun
    k = int(p.args[2])
    out = []
    for r in (2, 4, 8, 16):
        j, q = 0, k
        while q % r == 0 and q > 1:
            q //= r
            j += 1
        if q == 1 and j >= 2:
            out.append(Call(Prim("iterate", (j, _partred(p.args[0], p.args[1], r))), s.node.args))
    return out


rule(Rule("partRed-iterate", "algorithmic",
          "partRed(f, z, r^j) -> iterate(j, partRed(f, z, r))",
          match=lambda s: _call_of(s, "partRed") is not None,
          rhs=_iterate_choices))
rule(Rule("partRed-to-reduce", "algorithmic", "partRed(f, z, n) $ x -> reduce(f, z) $ x "
          "when x has n elements",
          match=lambda s: (p := _call_of(s, "partRed")) is not None and s.arg_types is not None
          and sympy.simplify(_size(s) - p.args[2]) == 0,
          rhs=lambda s: [Call(Prim("reduce", s.node.fun.args[:2]), s.node.args)]))
rule(Rule("partRed-lower", "algorithmic",
          "partRed(f, z, k) -> join o map(reduce(f, z)) o split(k)",
          match=lambda s: _call_of(s, "partRed") is not None,
          rhs=lambda s: [apply(JOIN, apply(Prim("map", (Prim("reduce", s.node.fun.args[:2]),)),
                                           apply(Prim("split", (s.node.fun.args[2],)),
                                                 s.node.args[0])))]))



def _map_of_partred(s: Site) -> bool:
    p = s.node
    return isinstance(p, Prim) and p.name in ("map", "mapSeq", "mapGlb", "mapWrg", "mapLcl") \
        and isinstance(p.args[0], Prim) and p.args[0].name == "partRed"


# partRed-split leaves partRed as the function of a map (no call of it that
# partRed-lower could match): lower it there, or the map can never be lowered
rule(Rule("map-partRed-lower", "algorithmic",
          "map(partRed(f, z, k)) -> map(join o map(reduce(f, z)) o split(k))",
          match=_map_of_partred,
          rhs=lambda s: [Prim(s.node.name, (compose(
              JOIN, Prim("map", (Prim("reduce", s.node.args[0].args[:2]),)),
              Prim("split", (s.node.args[0].args[2],))),), s.node.dim)]))

# --- vectorisation ------------------------------------------------------------------------


def _vectorisable(f: Fun) -> bool:
    return isinstance(f, UserFun) and not C.has_branches(f.body) and all(
        isinstance(t, ScalarType) for _, t in f.params) and isinstance(f.ret, ScalarType)


rule(Rule("map-vectorise", "algorithmic",
          "map(f) -> asScalar o map(mapVec(f)) o asVector(w)",
          match=lambda s: (p := _call_of(s, "map")) is not None and _vectorisable(p.args[0])
          and s.arg_types is not None and isinstance(s.arg_types[0].elem, ScalarType),
          rhs=lambda s: [apply(Prim("asScalar"), apply(Prim("map", (Prim("mapVec", (
              s.node.fun.args[0],)),)), apply(Prim("asVector", (w,)), s.node.args[0])))
              for w in s.limits.vector_widths
              if not _size(s).is_number or int(_size(s)) % w == 0]))
rule(Rule("partRed-vectorise", "algorithmic",
          "partRed(f, z, k) -> asScalar o partRed(mapVec(f), z, k) o asVector(w)",
          match=lambda s: (p := _call_of(s, "partRed")) is not None and _vectorisable(p.args[0])
          and s.arg_types is not None and isinstance(s.arg_types[0].elem, ScalarType),
          rhs=lambda s: [apply(Prim("asScalar"), apply(
              Prim("partRed", (Prim("mapVec", (s.node.fun.args[0],)), s.node.fun.args[1],
                               s.node.fun.args[2])),
              apply(Prim("asVector", (w,)), s.node.args[0])))
              for w in s.limits.vector_widths
              if not _size(s).is_number or int(_size(s)) % (w * int(s.node.fun.args[2])) == 0],
          exact=False))

# --- simplification ---------------------------------------------------------------------


def _inner_call(s: Site, outer: str, inner: str) -> bool:
    return _call_of(s, outer) is not None and isinstance(s.node.args[0], Call) and \
        isinstance(s.node.args[0].fun, Prim) and s.node.args[0].fun.name == inner


rule(Rule("join-split", "simplification", "join o split(k) -> id",
          match=lambda s: _inner_call(s, "join", "split"),
          rhs=lambda s: [s.node.args[0].args[0]]))
rule(Rule("split-join-elim", "simplification", "split(k) o join -> id (inner length k)",
          match=lambda s: _inner_call(s, "split", "join") and s.arg_types is not None,
          condition=lambda s: (t := type_of(s.node.args[0].args[0], s.env)) is not None and
          sympy.simplify(t.elem.size - s.node.fun.args[0]) == 0,
          rhs=lambda s: [s.node.args[0].args[0]]))
rule(Rule("transpose-transpose", "simplification", "transpose o transpose -> id",
          match=lambda s: _inner_call(s, "transpose", "transpose"),
          rhs=lambda s: [s.node.args[0].args[0]]))
rule(Rule("asScalar-asVector", "simplification", "asScalar o asVector(w) -> id",
          match=lambda s: _inner_call(s, "asScalar", "asVector"),
          rhs=lambda s: [s.node.args[0].args[0]]))

# --- fusion -------------------------------------------------------------------------------


def _in_compose(s: Site, outer: tuple, inner: tuple, make) -> list[Node]:
    """The rule's pair of patterns adjacent inside a composition ``... o f o g o ...``."""
    n = s.node
    if not isinstance(n, Compose):
        return []
    out = []
    for i in range(len(n.funs) - 1):
        f, g = n.funs[i], n.funs[i + 1]
        if isinstance(f, Prim) and isinstance(g, Prim) and f.name in outer and g.name in inner:
            fused = make(f, g)
            if fused is not None:
                out.append(compose(*n.funs[:i], fused, *n.funs[i + 2:]))
    return out


def _fused_map(outer: Prim, inner: Prim) -> Prim | None:
    if outer.name != inner.name or outer.dim != inner.dim:
        return None
    return Prim(outer.name, (compose(outer.args[0], inner.args[0]),), outer.dim)


def _fuse_maps(s: Site) -> list[Node]:
    if isinstance(s.node, Compose):
        return _in_compose(s, ("map", "mapSeq"), ("map", "mapSeq"), _fused_map)
    outer, inner = s.node.fun, s.node.args[0].fun
    return [Call(_fused_map(outer, inner), s.node.args[0].args)]


rule(Rule("map-fusion", "fusion", "map(f) o map(g) -> map(f o g)",
          match=lambda s: (any(_inner_call(s, k, k) for k in ("map", "mapSeq"))
                           and s.node.fun.dim == s.node.args[0].fun.dim)
          or bool(_in_compose(s, ("map", "mapSeq"), ("map", "mapSeq"), _fused_map)),
          rhs=_fuse_maps))


def _fused_reduce(red: Prim, m: Prim) -> Prim:
    f, z, g = red.args[0], red.args[1], m.args[0]
    acc, y = Param("acc"), Param("y")
    return Prim("reduceSeq", (Lambda((acc, y), apply(f, acc, apply(g, y))), z))


def _fuse_reduce(s: Site) -> list[Node]:
    if isinstance(s.node, Compose):
        return _in_compose(s, ("reduceSeq",), ("mapSeq",), _fused_reduce)
    return [Call(_fused_reduce(s.node.fun, s.node.args[0].fun), s.node.args[0].args)]


rule(Rule("reduceSeq-mapSeq-fusion", "fusion",
          "reduceSeq(f, z) o mapSeq(g) -> reduceSeq(fun(acc, y) => f(acc, g(y)), z)",
          match=lambda s: _inner_call(s, "reduceSeq", "mapSeq")
          or bool(_in_compose(s, ("reduceSeq",), ("mapSeq",), _fused_reduce)),
          rhs=_fuse_reduce))


def _row_map(h: Fun) -> tuple[Fun, Fun | None] | None:
    """``h`` maps each row with one sequential map after layout only: ``mapSeq(g)``,
    ``mapSeq(g) o L`` or ``fun(r) => mapSeq(g) $ L(r)`` with ``L`` a view. Returns
    ``(g, L)`` (``L`` None for a bare ``mapSeq(g)``)."""
    if isinstance(h, Prim) and h.name == "mapSeq":
        return h.args[0], None
    if isinstance(h, Compose) and isinstance(h.funs[0], Prim) and h.funs[0].name == "mapSeq":
        rest = compose(*h.funs[1:])
        if layout_fun(rest):
            return h.funs[0].args[0], rest
        return None
    if isinstance(h, Lambda) and len(h.params) == 1 and isinstance(h.body, Call) and \
            isinstance(h.body.fun, Prim) and h.body.fun.name == "mapSeq" and \
            len(h.body.args) == 1 and layout_expr(h.body.args[0]):
        return h.body.fun.args[0], Lambda(h.params, h.body.args[0])
    return None


def _fused_join_reduce(red: Prim, m: Prim) -> Fun | None:
    """``reduceSeq(f, z) o join o mapSeq(h)`` (``h`` = ``mapSeq(g)`` after a view ``L``)
    as ``reduceSeq(fun(acc, y) => f(acc, g(y)), z) o join o map(L)``: the rows' maps
    commute with the join (``join o map(map(g)) = map(g) o join``), then the elements'
    function fuses into the left fold, which is sequential, so no reassociation."""
    rm = _row_map(m.args[0])
    if rm is None:
        return None
    g, lay = rm
    red2 = _fused_reduce(red, Prim("mapSeq", (g,)))
    return compose(red2, JOIN) if lay is None else compose(red2, JOIN, Prim("map", (lay,)))


def _join_fusion_sites(s: Site) -> list[Node]:
    n = s.node
    out: list[Node] = []
    if isinstance(n, Compose):
        for i in range(len(n.funs) - 2):
            r, j, m = n.funs[i:i + 3]
            if isinstance(r, Prim) and r.name == "reduceSeq" and isinstance(j, Prim) and \
                    j.name == "join" and isinstance(m, Prim) and m.name == "mapSeq":
                fused = _fused_join_reduce(r, m)
                if fused is not None:
                    out.append(compose(*n.funs[:i], fused, *n.funs[i + 3:]))
        return out
    if _inner_call(s, "reduceSeq", "join"):
        inner = n.args[0].args[0]
        if isinstance(inner, Call) and isinstance(inner.fun, Prim) and \
                inner.fun.name == "mapSeq" and len(inner.args) == 1:
            fused = _fused_join_reduce(n.fun, inner.fun)
            if fused is not None:
                out.append(apply(fused, *inner.args))
    return out


rule(Rule("reduceSeq-join-mapSeq-fusion", "fusion",
          "reduceSeq(f, z) o join o mapSeq(mapSeq(g) o L) -> "
          "reduceSeq(fun(acc, y) => f(acc, g(y)), z) o join o map(L)",
          match=lambda s: bool(_join_fusion_sites(s)),
          rhs=_join_fusion_sites))


def _fission(s: Site) -> list[Node]:
    p = s.node
    f = p.args[0]
    if isinstance(f, Compose):
        return [compose(Prim(p.name, (f.funs[0],), p.dim),
                        Prim(p.name, (compose(*f.funs[1:]),), p.dim))]
    return []


rule(Rule("map-fission", "fusion", "map(f o g) -> map(f) o map(g)",
          match=lambda s: _prim(s, "map") is not None and isinstance(s.node.args[0], Compose),
          rhs=_fission))

# --- lowering -----------------------------------------------------------------------------


def _lower_map(target: str, pre: Callable[[tuple[str, ...]], bool], dims=(0,),
               warp: bool = False):
    def rhs(s: Site) -> list[Node]:
        p = s.node
        return [Prim(target, p.args, d) for d in dims]
    # warp-synchronous patterns only where the device runs warps in lock-step
    return Rule(f"map-to-{target}", "lowering", f"map(f) -> {target}(f)",
                match=lambda s: _prim(s, "map") is not None and not is_layout_map(s.node),
                condition=lambda s: pre(s.enclosing) and (not warp or s.limits.warp_size > 1),
                rhs=rhs)


def _par(stack) -> set[str]:
    return {x for x in stack if x in PARALLEL_MAPS or x == "mapSeq"}


# mapGlb/mapWrg only outside every map still to lower: once an inner map is a mapGlb
# or mapWrg, no rule can lower the map around it (it cannot become a mapGlb/mapWrg
# of the same dimension nor a mapSeq around them), so the program could never be
# fully lowered (a two-level derived program such as gesummv's ended there).
rule(_lower_map("mapGlb", lambda st: not _par(st) and "map" not in st))
rule(_lower_map("mapWrg", lambda st: not _par(st) and "map" not in st))
# likewise mapLcl/mapWarp only where no map between them and the mapWrg is still to
# lower: that map could only become a mapLcl (around a mapLcl of the same dimension)
# or a mapSeq (which cannot hold a mapLcl)
rule(_lower_map("mapLcl", lambda st: "mapWrg" in st and "map" not in st and not (
    _par(st) & {"mapLcl", "mapWarp", "mapLane", "mapSeq"})))
rule(_lower_map("mapWarp", lambda st: "mapWrg" in st and "map" not in st and not (
    _par(st) & {"mapLcl", "mapWarp", "mapLane", "mapSeq"}), warp=True))
rule(_lower_map("mapLane", lambda st: "mapWarp" in st and "mapLane" not in st))
rule(_lower_map("mapSeq", lambda st: bool(_par(st) & {"mapLcl", "mapLane", "mapGlb",
                                                       "mapSeq"})))


# --- two-dimensional lowering ---------------------------------------------------------------
# map(g o map(f) o h) -> mapGlb(1, g o mapGlb(0, f) o h): one work-item per element of a
# 2-D result (matmul, convolution) instead of one per row. map-to-mapGlb cannot do it in
# two steps (an inner map only becomes mapSeq once the outer one is a mapGlb), so the
# rule lowers both maps at once. The inner map must be the only computation of the outer
# map's function: g and h only rearrange data (join, transpose, map(slide(..)), ...) and,
# in a lambda, the inner map's inputs are views of the lambda's parameter and the
# program's inputs. Anything else (a reduction feeding the inner map, gesummv's row
# results) would be computed again by every work-item of dimension 0, or read what other
# work-items write without a barrier; the rule does not apply there.


def _computing_map(f: Fun) -> bool:
    return isinstance(f, Prim) and f.name == "map" and not layout_fun(f.args[0])


def inner_map_path(f: Fun) -> Path | None:
    """The path, within ``f``, of the one map that ``f`` computes with: ``f`` is that
    map, a composition of it with layout functions, or a lambda whose body applies
    layout functions to that map applied to views (None: ``f`` has no such map)."""
    if _computing_map(f):
        return ()
    if isinstance(f, Compose):
        comp = [i for i, g in enumerate(f.funs) if not layout_fun(g)]
        return (comp[0],) if len(comp) == 1 and _computing_map(f.funs[comp[0]]) else None
    if isinstance(f, Lambda):
        e, path = f.body, (0,)
        while isinstance(e, Call):
            if _computing_map(e.fun):
                return path + (0,) if all(layout_expr(a) for a in e.args) else None
            if len(e.args) != 1 or not layout_fun(e.fun):
                return None
            e, path = e.args[0], path + (1,)
    return None


def _lower_2d(s: Site) -> list[Node]:
    f = s.node.args[0]
    path = inner_map_path(f)
    inner = at(f, path)
    return [Prim("mapGlb", (replace_at(f, path, Prim("mapGlb", inner.args, 0)),), 1)]


rule(Rule("map-map-to-mapGlb2d", "lowering",
          "map(g o map(f) o h) -> mapGlb(1, g o mapGlb(0, f) o h) (g, h layout only)",
          match=lambda s: _prim(s, "map") is not None and inner_map_path(s.node.args[0])
          is not None,
          condition=lambda s: not _par(s.enclosing) and "map" not in s.enclosing,
          rhs=_lower_2d))
rule(Rule("reduce-to-reduceSeq", "lowering", "reduce(f, z) -> reduceSeq(f, z)",
          match=lambda s: _prim(s, "reduce") is not None,
          condition=lambda s: bool(_par(s.enclosing) & {"mapLcl", "mapLane", "mapGlb",
                                                        "mapSeq"}),
          rhs=lambda s: [Prim("reduceSeq", s.node.args)]))
for _space in ("Local", "Global"):
    rule(Rule(f"mapLcl-to{_space}", "lowering", f"mapLcl(f) -> to{_space}(mapLcl(f))",
              match=lambda s: _prim(s, "mapLcl") is not None and not (
                  s.enclosing and s.enclosing[-1] in ("toLocal", "toGlobal")),
              rhs=lambda s, sp=_space: [Prim(f"to{sp}", (s.node,))]))
rule(Rule("mapSeq-toPrivate", "lowering", "mapSeq(f) -> toPrivate(mapSeq(f))",
          match=lambda s: _prim(s, "mapSeq") is not None and not (
              s.enclosing and s.enclosing[-1].startswith("to")),
          rhs=lambda s: [Prim("toPrivate", (s.node,))]))
rule(Rule("reorder-to-stride", "lowering", "reorder -> reorderStride(s)",
          match=lambda s: _call_of(s, "reorder") is not None and s.arg_types is not None,
          rhs=lambda s: [Call(Prim("reorderStride", (sympy.Integer(k),)), s.node.args)
                         for k in divisors(_size(s), s.limits, high=int(_size(s)) // 2
                                           if _size(s).is_number else None)]))
rule(Rule("reorder-to-id", "lowering", "reorder -> id",
          match=lambda s: _call_of(s, "reorder") is not None,
          rhs=lambda s: [s.node.args[0]]))


# ----------------------------------------------------------------------------- driver

@dataclass(frozen=True)
class Rewrite:
    rule: str
    path: Path
    choice: int
    result: Program

    def describe(self) -> str:
        return f"{self.rule} at {'.'.join(map(str, self.path)) or 'root'} (choice {self.choice})"


def rewrites(prog: Program, rules: list[Rule] | None = None, limits: Limits | None = None,
             explore_only: bool = False) -> list[Rewrite]:
    """Every well-typed one-step rewrite of ``prog``."""
    from mcl.lift.arguments import program_argument
    prog = program_argument(prog, "rewrites")
    rules = rules if rules is not None else list(RULES.values())
    if explore_only:
        rules = [r for r in rules if r.explore]
    out = []
    for site in typed_walk(prog, limits):
        for r in rules:
            for i, new in enumerate(r.candidates(site)):
                body = replace_at(prog.body.body, site.path, new)
                cand = prog.with_body(Lambda(prog.body.params, body, prog.body.span))
                if nesting_problem(body):
                    continue
                try:
                    check_program(cand)
                except (LiftTypeError, McplError):
                    continue
                out.append(Rewrite(r.name, site.path, i, cand))
    return out


def apply_rule(prog: Program, name: str, path: Path | None = None, choice: int = 0,
               limits: Limits | None = None) -> Program:
    """Apply rule ``name`` at ``path`` (default: the first position where it applies).
    Raises McplError (``lift-rule``) when the rule does not apply there."""
    from mcl.lift.arguments import LiftArgumentError, program_argument
    prog = program_argument(prog, "apply_rule")
    if not isinstance(name, str):
        raise LiftArgumentError("apply_rule", "name", "is the name of a rule (a str such as "
                                f"'map-to-mapGlb'), not {type(name).__name__} {name!r}")
    if name not in RULES:
        import difflib
        close = difflib.get_close_matches(name, list(RULES), n=1)
        raise McplError(error("lift-rule", f"unknown rule '{name}'",
                              hint=f"did you mean '{close[0]}'?" if close else
                              "every rule: `mcl lift rewrite --rules`; those that "
                              "apply: `mcl lift rewrite --list FILE`"))
    r = RULES[name]
    sites = [s for s in typed_walk(prog, limits) if path is None or s.path == tuple(path)]
    if path is not None and not sites:
        raise McplError(error("lift-rule", f"there is no position {'.'.join(map(str, path))}"))
    for s in sites:
        cands = r.candidates(s)
        if not cands:
            continue
        if not 0 <= choice < len(cands):
            raise McplError(error("lift-rule", f"rule '{name}' has {len(cands)} choice(s) here; "
                                               f"choice {choice} does not exist"))
        body = replace_at(prog.body.body, s.path, cands[choice])
        new = prog.with_body(Lambda(prog.body.params, body, prog.body.span))
        check_program(new)
        return new
    where = f" at {'.'.join(map(str, path))}" if path is not None else ""
    node = at(prog.body.body, tuple(path)) if path is not None and sites else None
    raise McplError(error("lift-rule", f"rule '{name}' ({r.doc}) does not apply{where}: its "
                                       "left-hand side does not match or its condition fails",
                          getattr(node, "span", None),
                          hint="`mcl lift rewrite FILE --list` shows the rules that apply"))


__all__ = ["RULES", "Rule", "Rewrite", "Limits", "Site", "rewrites", "apply_rule", "typed_walk",
           "divisors", "children", "Literal", "TupleType", "field"]
