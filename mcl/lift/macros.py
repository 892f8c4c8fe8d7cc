"""Macro rules: fixed sequences of the basic rules that reach an optimisation
goal in one step (seed 002, "register blocking as a macro rule"), each with
numeric parameters chosen within the device's limits. This module holds the
reductions and the helpers the other macro modules share; importing it registers
every macro rule (the matrix multiplications of ``macros_mm``, the 2-D stencils of
``stencil_blocking``).

* ``reduce-to-workgroup-tree``: reduce -> partial reductions per work-group,
  each thread reducing a strided (coalesced), optionally vectorised chunk
  sequentially, then a tree in local memory whose last steps are unrolled over
  one warp without barriers: the structure of reduce6 (seed 000), derived as
  in seed 002's walkthrough; a second, one-work-group kernel finishes.
* ``map-reduce-to-workgroups``: ``map(row => reduce o map(g) $ row)`` (gemv,
  dot products) with one work-group per element and the same tree per row.
  Also a row body combining k >= 1 row reductions with a final function,
  ``map(row => map(h) $ zip(R1, ..., Rk))`` or ``map(row => map(h) $ R1)`` (gesummv:
  ``h`` = y_f(alpha, A_i.x, beta, B_i.x)): the whole work-group does each reduction
  in turn (strided first stage, tree whose T[1] stays in local memory), then one
  work-item applies h to the k results and writes the row's output,
  ``join o toGlobal(mapLcl(mapSeq(h))) o split(1) $ zip(T1, ..., Tk)``. Its choices
  (at most 12): scalar or the widest vectors of the limits, with or without the warp
  tail, the three largest work-group sizes up to 512 that divide the row and whose k
  trees fit in local memory.

Each is checked against the interpreter like every other rule."""

from __future__ import annotations

import itertools

import sympy

from mcl.lift.ir import (
    JOIN,
    Call,
    Expr,
    Fun,
    Lambda,
    Literal,
    Param,
    Prim,
    UserFun,
    apply,
    compose,
    substitute,
    walk,
)
from mcl.lift.rules import Limits, Rule, Site, _call_of, _is_assoc, rule
from mcl.lift.types import ScalarType, TupleType


def _i(k: int) -> sympy.Integer:
    return sympy.Integer(int(k))


def _get(e: Expr, i: int) -> Expr:
    return Call(Prim("get", (i,)), (e,))


def _lcl2(f: Fun) -> Prim:
    return Prim("mapLcl", (Prim("mapLcl", (f,), 0),), 1)


def _apply_pair(g: Fun | None, a: Expr, b: Expr) -> Expr:
    """``g`` applied to the pair (a, b), with ``p._0``/``p._1`` replaced in its body."""
    if g is None:
        raise ValueError("mm needs the multiplication")
    if isinstance(g, UserFun) and len(g.params) == 2:
        return apply(g, a, b)
    if not (isinstance(g, Lambda) and len(g.params) == 1):
        raise ValueError("unsupported multiplication function")
    (q,) = g.params

    def go(e: Expr) -> Expr:
        if isinstance(e, Call) and isinstance(e.fun, Prim) and e.fun.name == "get" \
                and e.args[0] == q:
            return (a, b)[e.fun.args[0]]
        if isinstance(e, Call):
            return Call(e.fun, tuple(go(x) for x in e.args))
        if e == q:
            raise ValueError("the pair is used as a whole")
        return e
    return go(g.body)



def tree(f: Fun, z: Expr, size: int, warp: bool, warp_size: int = 32,
         to_global: bool = True) -> Fun:
    """Reduce ``T[size]`` (in local memory) to ``T[1]`` in global memory: halving
    steps by ``mapLcl`` with barriers, the last ones in one warp without. With
    ``to_global`` False the ``T[1]`` stays in local memory (for a consumer in the
    same work-group)."""
    rs = Prim("reduceSeq", (f, z))
    steps: list[Fun] = []        # applied first to last
    s = size
    stop = 2 * warp_size if warp and size >= 2 * warp_size else 1
    while s > stop:
        steps.append(compose(JOIN, Prim("toLocal", (Prim("mapLcl", (rs,)),)),
                             Prim("split", (_i(2),)), Prim("reorderStride", (_i(s // 2),))))
        s //= 2
    if s > 1:
        lanes: list[Fun] = []
        t = s
        while t > 1:
            lanes.append(compose(JOIN, Prim("mapLane", (rs,)), Prim("split", (_i(2),)),
                                 Prim("reorderStride", (_i(t // 2),))))
            t //= 2
        steps.append(compose(JOIN, Prim("mapWarp", (compose(*reversed(lanes)),)),
                             Prim("split", (_i(s),))))
    if not to_global:
        return compose(*reversed(steps))
    steps.append(compose(JOIN, Prim("toGlobal", (Prim("mapLcl", (Prim("mapSeq", (Prim("id"),)),
                                                                      )),)),
                         Prim("split", (_i(1),))))
    return compose(*reversed(steps))


def first_stage(f: Fun, z: Expr, g: Fun | None, threads: int, chunk: int, width: int) -> Fun:
    """Each of ``threads`` work-items reduces ``chunk`` elements read with stride
    ``threads`` (coalesced); with ``width`` > 1 the elements are vectors."""
    if g is None:
        seq: Fun = Prim("reduceSeq", (f, z))
        vseq: Fun = Prim("reduceSeq", (Prim("mapVec", (f,)), z))
    else:
        acc, y = Param("acc"), Param("y")
        seq = Prim("reduceSeq", (Lambda((acc, y), apply(f, acc, apply(g, y))), z))
        acc2, y2 = Param("acc"), Param("y")
        vseq = Prim("reduceSeq", (Lambda((acc2, y2), apply(Prim("mapVec", (f,)), acc2,
                                                             apply(vectorise(g), y2))), z))
    # with vectors, g is applied in the vector loop: the lanes are then combined by f alone
    per_thread = seq if width == 1 else compose(Prim("reduceSeq", (f, z)), Prim("asScalar"),
                                                vseq)
    return compose(JOIN, Prim("toLocal", (Prim("mapLcl", (per_thread,)),)),
                   Prim("split", (_i(chunk),)), Prim("reorderStride", (_i(threads),)))


def vectorise(g: Fun) -> Fun:
    """``g`` with every user function call made lane-wise (``mapVec``)."""
    if isinstance(g, UserFun):
        return Prim("mapVec", (g,))
    if isinstance(g, Lambda):
        return Lambda(g.params, _vec_expr(g.body))
    raise ValueError("cannot vectorise")


def _vec_expr(e: Expr) -> Expr:
    if isinstance(e, Call):
        args = tuple(_vec_expr(a) for a in e.args)
        f = e.fun
        if isinstance(f, UserFun):
            f = Prim("mapVec", (f,))
        elif isinstance(f, Prim) and f.name not in ("get",):
            raise ValueError("cannot vectorise")
        return Call(f, args)
    if isinstance(e, Literal):
        raise ValueError("cannot vectorise literals")
    return e


def _vectorisable(g: Fun | None) -> bool:
    if g is None:
        return True
    for _, n in walk(g):
        if isinstance(n, UserFun):
            from mcl.lift import cexpr
            if cexpr.has_branches(n.body) or not isinstance(n.ret, ScalarType):
                return False
        if isinstance(n, Literal):
            return False
        if isinstance(n, Prim) and n.name not in ("get",):
            return False
    return True


def _vector_input(x: Expr, width: int) -> Expr:
    """``asVector`` on the input (inside a zip, on every zipped array)."""
    if isinstance(x, Call) and isinstance(x.fun, Prim) and x.fun.name == "zip":
        return Call(x.fun, tuple(apply(Prim("asVector", (width,)), a) for a in x.args))
    return apply(Prim("asVector", (width,)), x)


def workgroup_reduction(f: Fun, z: Expr, g: Fun | None, x: Expr, n: int, threads: int,
                        width: int, warp: bool, warp_size: int = 32,
                        to_global: bool = True) -> Expr:
    """One work-group reduces all ``n`` elements of ``x`` (after ``g``) to ``T[1]``
    (in global memory, or with ``to_global`` False in local memory)."""
    chunk = n // (threads * width)
    stage = first_stage(f, z, g, threads, chunk, width)
    src = x if width == 1 else _vector_input(x, width)
    return apply(compose(tree(f, z, threads, warp, warp_size, to_global), stage), src)


def _powers(lo: int, hi: int) -> list[int]:
    out, k = [], lo
    while k <= hi:
        out.append(k)
        k *= 2
    return out


def _warp_tails(limits: Limits) -> tuple[bool, ...]:
    """Whether a tree may end in a warp without barriers (lock-step warps only)."""
    return (True, False) if limits.warp_size > 1 else (False,)


def reduction_choices(n: int, limits: Limits, elem_ok_vector: bool) -> list[tuple]:
    """(elements per work-group, threads, vector width, warp tail) within the limits."""
    out = []
    widths = [1] + ([w for w in limits.vector_widths] if elem_ok_vector else [])
    # work-groups of 1024 elements or more, 32 work-items or more; an array shorter than
    # 1024 (sum of 64 floats) is one work-group of its largest power-of-two divisor
    low = 1024 if n >= 1024 else n & -n
    for bs, threads, w, warp in itertools.product(
            _powers(low, n), _powers(min(32, low), limits.max_work_group), widths,
            _warp_tails(limits)):
        if n % bs or bs % (threads * w) or bs // (threads * w) < 1:
            continue
        if warp and threads < 2 * limits.warp_size:
            continue
        if threads * 4 * 2 * max(w, 1) > limits.local_memory:
            continue
        groups = n // bs
        if groups > 1 and groups > 65536:
            continue
        out.append((bs, threads, w, warp))
    return out


def _tail_threads(m: int, limits: Limits) -> int:
    t = 1
    while t * 2 <= min(m, 256, limits.max_work_group) and m % (t * 2) == 0:
        t *= 2
    return t


def reduce_tree(s: Site) -> list[Expr]:
    p = s.node.fun
    f, z = p.args[0], p.args[1]
    x = s.node.args[0]
    n = int(s.arg_types[0].size)
    out = []
    for bs, threads, w, warp in reduction_choices(n, s.limits, True):
        groups = n // bs
        body = workgroup_reduction(f, z, None, Param("chunk"), bs, threads, w, warp,
                                   s.limits.warp_size)
        chunk = _find_param(body, "chunk")
        stage1 = apply(JOIN, apply(Prim("mapWrg", (Lambda((chunk,), body),)),
                                   apply(Prim("split", (_i(bs),)), x)))
        if groups == 1:
            out.append(stage1)
            continue
        t2 = _tail_threads(groups, s.limits)
        body2 = workgroup_reduction(f, z, None, Param("chunk"), groups, t2, 1,
                                    s.limits.warp_size > 1 and t2 >= 2 * s.limits.warp_size,
                                    s.limits.warp_size)
        c2 = _find_param(body2, "chunk")
        out.append(apply(JOIN, apply(Prim("mapWrg", (Lambda((c2,), body2),)),
                                     apply(Prim("split", (_i(groups),)), stage1))))
    return out


def _find_param(e: Expr, name: str) -> Param:
    for _, n in walk(e):
        if isinstance(n, Param) and n.name == name:
            return n
    raise ValueError(name)


rule(Rule("reduce-to-workgroup-tree", "macro",
          "reduce(f, z) -> join o mapWrg(tree o join o toLocal(mapLcl(reduceSeq(f, z))) o "
          "split(c) o reorderStride(t) [o asVector(w)]) o split(b), twice",
          match=lambda s: (p := _call_of(s, "reduce")) is not None and s.arg_types is not None
          and not s.enclosing and _is_assoc(p.args[0], s.arg_types[0].elem, p.args[1])
          and s.arg_types[0].size.is_number,
          rhs=reduce_tree, exact=False))


# --- map of reductions (gemv, gesummv: one work-group per row) ------------------------------

def _row_reduction(lam: Lambda):
    """``row => reduce(f, z) $ map(g) $ X`` or ``row => reduce(f, z) $ X``: (f, z, g, X)."""
    return _reduction_parts(lam.body)


def _reduction_parts(b: Expr):
    """``reduce(f, z) $ map(g) $ X`` or ``reduce(f, z) $ X``: (f, z, g, X), else None."""
    if not (isinstance(b, Call) and isinstance(b.fun, Prim) and b.fun.name == "reduce"):
        return None
    f, z = b.fun.args[0], b.fun.args[1]
    x = b.args[0]
    g = None
    if isinstance(x, Call) and isinstance(x.fun, Prim) and x.fun.name == "map":
        g, x = x.fun.args[0], x.args[0]
    return f, z, g, x


def _row_reductions(lam: Lambda):
    """The body of a map over rows as k >= 1 row reductions and a final function:
    ``row => R`` (gemv: final None), ``row => map(h) $ zip(R1, ..., Rk)`` (gesummv:
    ``h`` on the tuple of the k results) or ``row => map(h) $ R1``, each ``Ri`` a
    ``reduce(f, z) [o map(g)] $ X``. Returns ([(f, z, g, X), ...], h, zipped) or None."""
    one = _reduction_parts(lam.body)
    if one is not None:
        return [one], None, False
    b = lam.body
    if not (isinstance(b, Call) and isinstance(b.fun, Prim) and b.fun.name == "map"
            and isinstance(b.fun.args[0], Lambda | UserFun)):
        return None
    x = b.args[0]
    zipped = isinstance(x, Call) and isinstance(x.fun, Prim) and x.fun.name == "zip"
    parts = [_reduction_parts(a) for a in (x.args if zipped else (x,))]
    if not parts or any(p is None for p in parts):
        return None
    return parts, b.fun.args[0], zipped


def _rows_match(s: Site) -> bool:
    p = _call_of(s, "map")
    if p is None or s.arg_types is None or s.enclosing:
        return False
    lam = p.args[0]
    if not (isinstance(lam, Lambda) and len(lam.params) == 1):
        return False
    shape = _row_reductions(lam)
    if shape is None:
        return False
    from mcl.lift.typecheck import type_of
    return all(_is_assoc(f, type_of(z, {}), z) for f, z, _, _ in shape[0])


def _scalar_input(xt) -> bool:
    return isinstance(xt.elem, ScalarType) or (
        isinstance(xt.elem, TupleType) and all(isinstance(t, ScalarType) for t in xt.elem.elems))


def rows_choices(n: int, k: int, limits: Limits, vector_ok: bool) -> list[tuple]:
    """(threads, vector width, warp tail) for k reductions of n elements per work-group:
    scalar and the widest vectors of the limits, per (width, tail) the three largest
    work-group sizes up to 512 that divide the row and whose k trees fit in local memory
    (at most 12 choices)."""
    widths = [1] + ([max(limits.vector_widths)] if vector_ok and limits.vector_widths else [])
    out = []
    for w, warp in itertools.product(widths, _warp_tails(limits)):
        ts = [t for t in _powers(32, min(512, limits.max_work_group))
              if n % (t * w) == 0 and not (warp and t < 2 * limits.warp_size)
              and k * t * 4 * 2 * w <= limits.local_memory]
        out.extend((t, w, warp) for t in reversed(ts[-3:]))
    return out


def map_reduce_workgroups(s: Site) -> list[Expr]:
    lam = s.node.fun.args[0]
    reds, h, zipped = _row_reductions(lam)
    (row,) = lam.params
    elem = s.arg_types[0].elem
    from mcl.lift.typecheck import type_of
    env = dict(s.env)
    env[row] = elem
    xts = [type_of(x, env) for _, _, _, x in reds]
    n = int(xts[0].size)
    if any(int(t.size) != n for t in xts):
        return []
    vector_ok = all(_scalar_input(t) and _vectorisable(g)
                    for t, (_, _, g, _) in zip(xts, reds, strict=True))
    if h is None:
        # one reduction (gemv): every work-group size, vector width and tail
        choices = [(t, w, warp) for t, w, warp in itertools.product(
                       _powers(32, s.limits.max_work_group), [1, *s.limits.vector_widths],
                       _warp_tails(s.limits))
                   if not (n % (t * w) or (w > 1 and not vector_ok)
                           or (warp and t < 2 * s.limits.warp_size))]
    else:
        choices = rows_choices(n, len(reds), s.limits, vector_ok)
    out = []
    for threads, w, warp in choices:
        r = Param(row.name)
        results = [workgroup_reduction(f, z, g, substitute(x, {row: r}), n, threads, w, warp,
                                       s.limits.warp_size, to_global=h is None)
                   for f, z, g, x in reds]
        if h is None:
            body = results[0]
        else:
            # the k results (each T[1] in local memory) combined by one work-item
            final = Prim("toGlobal", (Prim("mapLcl", (Prim("mapSeq", (substitute(h, {row: r}),
                                                                      )),)),))
            arg = Call(Prim("zip"), tuple(results)) if zipped else results[0]
            body = apply(compose(JOIN, final, Prim("split", (_i(1),))), arg)
        out.append(Call(Prim("mapWrg", (Lambda((r,), body),)), s.node.args))
    return out


rule(Rule("map-reduce-to-workgroups", "macro",
          "map(row => reduce(f, z) o map(g) $ row) -> mapWrg(row => tree o "
          "join o toLocal(mapLcl(reduceSeq(f o g))) o split(c) o reorderStride(t) $ row); "
          "map(row => map(h) $ zip(R1, ..., Rk)) with each Ri such a reduction -> "
          "mapWrg(row => join o toGlobal(mapLcl(mapSeq(h))) o split(1) $ zip(T1, ..., Tk)), "
          "Ti the work-group's tree of Ri left in local memory",
          match=_rows_match, rhs=map_reduce_workgroups, exact=True))


# rules in modules of their own register themselves with these: the matrix
# multiplications and the 2-D stencils
from mcl.lift import macros_mm  # noqa: E402, F401
from mcl.lift import stencil_blocking as _stencil_blocking  # noqa: E402,F401
