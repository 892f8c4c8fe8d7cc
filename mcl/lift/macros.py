"""Macro rules: fixed sequences of the basic rules that reach an optimisation
goal in one step (seed 002, "register blocking as a macro rule"), each with
numeric parameters chosen within the device's limits.

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
* ``mm-register-blocking``: matrix multiplication with each work-item
  computing a block of C in private memory (register blocking) and coalesced
  reads of B.
* ``mm-tiling``: the tiling macro rule of the Lift papers: per work-group a
  tm x tn tile of C; tiles of A (tm x tk) and B (tk x tn) copied to local memory
  by the whole group each k-step; each work-item accumulating an rm x rn register
  block (strided over the tile) in private memory; work-group (tn/rn) x (tm/rm).
* ``mm-tiling-vectorised``: the same tiling vectorised (seed 002's asVector /
  asScalar / mapVec patterns): the tiles are copied with w-wide vector loads
  (A's transposed in local memory), each work-item owns runs of w adjacent rows
  and columns of the C tile, loads its parts of the tiles into registers as
  vectors and writes C as vectors. The sizes divide by construction, so every
  vector access is aligned (the code generator emits 128-bit accesses for float4).
* ``stencil-2d-tiling``: every fh x fw window of a 2-D input (the convolution derived
  from MCPL) with overlapped tiles (Hagedorn et al., CGO 2018):
  ``slide(fh, 1) = join o map(slide(fh, 1)) o slide(th + fh - 1, th)`` in both
  dimensions; one work-group of th x tw work-items per th x tw outputs copies its
  (th + fh - 1) x (tw + fw - 1) input tile with halo into local memory
  (``toLocal(mapLcl(1, mapLcl(0, id)))``, several elements per work-item, one
  barrier), then each work-item computes its output from the tile (the window's
  function as given; the direct lowering fuses its reduction into registers).
  Choices (at most 8): tiles from ``STENCIL_TILES`` that divide the output, whose
  group and tile fit the limits.

Each is checked against the interpreter like every other rule."""

from __future__ import annotations

import itertools

import sympy

from mcl.lift.ir import (
    JOIN,
    Call,
    Compose,
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
from mcl.lift.types import ArrayType, ScalarType, TupleType


def _i(k: int) -> sympy.Integer:
    return sympy.Integer(int(k))


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
    for bs, threads, w, warp in itertools.product(
            _powers(1024, n), _powers(32, limits.max_work_group), widths, _warp_tails(limits)):
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
          and not s.enclosing and _is_assoc(p.args[0], s.arg_types[0].elem)
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
    return all(_is_assoc(f, type_of(z, {})) for f, z, _, _ in shape[0])


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


# --- matrix multiplication ---------------------------------------------------------------------

def _mm_shape(s: Site):
    """``map(rowA => map(colB => reduce(+) o map(*) $ zip(rowA, colB)) o transpose $ B) $ A``."""
    n = s.node
    if not (isinstance(n, Call) and isinstance(n.fun, Prim) and n.fun.name == "map"):
        return None
    outer = n.fun.args[0]
    if not (isinstance(outer, Lambda) and len(outer.params) == 1):
        return None
    body = outer.body
    # strip a join around the inner map (join o map(...) o transpose $ B)
    while isinstance(body, Call) and isinstance(body.fun, Prim) and body.fun.name == "join":
        body = body.args[0]
    if not (isinstance(body, Call) and isinstance(body.fun, Prim) and body.fun.name == "map"):
        return None
    inner = body.fun.args[0]
    bt = body.args[0]
    if not (isinstance(bt, Call) and isinstance(bt.fun, Prim) and bt.fun.name == "transpose"
            and isinstance(bt.args[0], Param)):
        return None
    if not isinstance(inner, Lambda) or _row_reduction(inner) is None:
        return None
    f, z, g, x = _row_reduction(inner)
    if not (isinstance(x, Call) and isinstance(x.fun, Prim) and x.fun.name == "zip"
            and x.args == (outer.params[0], inner.params[0])):
        return None
    return f, z, g, n.args[0], bt.args[0]


def _mm_at_top(s: Site) -> bool:
    """A whole matrix multiplication: the program's top level, types known."""
    return s.arg_types is not None and not s.enclosing and _mm_shape(s) is not None


def mm_blocked(s: Site) -> list[Expr]:
    f, z, g, a_expr, b_param = _mm_shape(s)
    at = s.arg_types[0]
    m, k = int(at.size), int(at.elem.size)
    bt = s.env.get(b_param, b_param.type)
    n = int(bt.elem.size)
    out = []
    for bm, bn in itertools.product((2, 4, 8), (2, 4, 8)):
        if m % bm or n % bn:
            continue
        out.append(_mm_expr(f, z, g, a_expr, b_param, m, n, k, bm, bn))
    return out


def _mm_expr(f, z, g, a_expr, b_param, m, n, k, bm, bn) -> Expr:
    # per block: acc[bm][bn] += a[i] * b[j] for every k
    acc, p = Param("acc"), Param("p")
    step = Lambda((acc, p), _block_update(f, g, acc, _get(p, 0), _get(p, 1)))
    rows_a, cols_b = Param("rowsA"), Param("colsB")
    zeros = Literal(z.text, ArrayType(ArrayType(z.type, _i(bn)), _i(bm))) \
        if isinstance(z, Literal) else z
    block = apply(Prim("toPrivate", (Prim("reduceSeq", (step, zeros)),)),
                  Call(Prim("zip"), (apply(Prim("transpose"), rows_a),
                                     apply(Prim("transpose"), cols_b))))
    # [1][bm][bn] -> [bm][bn]
    per_col_block = Lambda((cols_b,), apply(JOIN, block))
    cols = apply(Prim("split", (_i(bn),)),
                 apply(Prim("reorderStride", (_i(n // bn),)), apply(Prim("transpose"), b_param)))
    # [N/bn][bm][bn] -> [bm][N/bn][bn] -> [bm][N] (permuted) -> [bm][N]
    per_row_block = Lambda((rows_a,), apply(
        Prim("map", (compose(Prim("reorderStride", (_i(bn),)), JOIN),)),
        apply(Prim("transpose"), apply(Prim("mapGlb", (per_col_block,), 0), cols))))
    return apply(JOIN, apply(Prim("mapGlb", (per_row_block,), 1),
                             apply(Prim("split", (_i(bm),)), a_expr)))


def _block_update(f: Fun, g: Fun, acc: Expr, a_part: Expr, b_part: Expr) -> Expr:
    """``acc[i][j] = f(acc[i][j], g(a_part[i], b_part[j]))``: one step of a register
    block's reduction (one k), sequentially in one work-item."""
    acc_row, a, c, b = (Param(n) for n in ("accRow", "a", "c", "b"))
    inner = Lambda((c, b), apply(f, c, _apply_pair(g, a, b)))
    row_update = Lambda((acc_row, a), apply(Prim("mapSeq", (inner,)),
                                            Call(Prim("zip"), (acc_row, b_part))))
    return apply(Prim("mapSeq", (row_update,)), Call(Prim("zip"), (acc, a_part)))


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


def _get(e: Expr, i: int) -> Expr:
    return Call(Prim("get", (i,)), (e,))


rule(Rule("mm-register-blocking", "macro",
          "map(rowA => map(colB => reduce o map(*) $ zip(rowA, colB)) o transpose $ B) $ A -> "
          "join o mapGlb(1)(rowsA => ... mapGlb(0)(colsB => toPrivate(reduceSeq(acc[bm][bn] += "
          "a*b)) ...) o split(bn) o reorderStride(N/bn) o transpose $ B) o split(bm) $ A",
          match=_mm_at_top,
          rhs=mm_blocked, exact=True))


__all__ = ["tree", "first_stage", "workgroup_reduction", "reduction_choices", "Compose",
           "ArrayType"]


# --- matrix multiplication with local-memory tiles (Lift's tiling macro rule) -------------

def _lcl2(f: Fun) -> Prim:
    return Prim("mapLcl", (Prim("mapLcl", (f,), 0),), 1)


def _to_local_tile(tile: Expr, rows: int, cols: int, l1: int, l0: int) -> Expr:
    """Copy a [rows][cols] tile into local memory, all work-items of the (l1 x l0)
    group together, consecutive work-items reading consecutive elements; the
    result is viewed as [rows][cols] again."""
    n = rows * cols
    chunk = n // (l1 * l0)
    # work-item t copies elements t*chunk ... t*chunk + chunk-1: local memory keeps the
    # tile's own (row-major) layout
    per_item = apply(Prim("split", (_i(l0),)), apply(Prim("split", (_i(chunk),)),
                                                     apply(JOIN, tile)))
    copied = apply(Prim("toLocal", (_lcl2(Prim("mapSeq", (Prim("id"),))),)), per_item)
    return apply(Prim("split", (_i(cols),)), apply(JOIN, apply(JOIN, copied)))


def _block_zeros(z: Literal, l1: int, l0: int, rm: int, rn: int) -> Literal:
    """The initial value of a work-group's accumulators: [l1][l0] blocks of rm x rn."""
    return Literal(z.text, ArrayType(ArrayType(ArrayType(ArrayType(z.type, _i(rn)), _i(rm)),
                                               _i(l0)), _i(l1)))


def _mm_work_groups(a_expr: Expr, b_param: Param, tm: int, tn: int, tk: int, step: Lambda,
                    zeros: Literal, write, prefetch: tuple[Prim, Prim] | None = None) -> Expr:
    """One work-group per tm x tn tile of C: ``reduceSeq(step, zeros)`` over the pairs
    of k-tiles (tm x tk of A, tk x tn of B) gives the work-items' blocks
    [l1][l0][rm][rn]; ``write`` takes them (an expression) to the C tile [tm][tn].
    With ``prefetch`` (patterns applied to the arrays of k-tiles of A and of B:
    ``prefetch(f)``, or ``prefetchLocal(f, p)`` in ``macros_mm``), the step receives
    their results, computed one k-step ahead."""
    rows_a, cols_b = Param("rowsA"), Param("colsB")
    tiles_a = apply(Prim("transpose"), apply(Prim("map", (Prim("split", (_i(tk),)),)), rows_a))
    tiles_b = apply(Prim("split", (_i(tk),)), cols_b)
    if prefetch is not None:
        tiles_a = apply(prefetch[0], tiles_a)
        tiles_b = apply(prefetch[1], tiles_b)
    reduced = apply(JOIN, apply(Prim("reduceSeq", (step, zeros)),
                                Call(Prim("zip"), (tiles_a, tiles_b))))
    per_col_tile = Lambda((cols_b,), write(reduced))
    b_tiles = apply(Prim("transpose"), apply(Prim("map", (Prim("split", (_i(tn),)),)), b_param))
    per_row_tile = Lambda((rows_a,), apply(
        Prim("map", (JOIN,)), apply(Prim("transpose"),
                                    apply(Prim("mapWrg", (per_col_tile,), 0), b_tiles))))
    return apply(JOIN, apply(Prim("mapWrg", (per_row_tile,), 1),
                             apply(Prim("split", (_i(tm),)), a_expr)))


def _mm_tiled_expr(f, z, g, a_expr, b_param, tm, tn, tk, rm, rn) -> Expr:
    l1, l0 = tm // rm, tn // rn
    # per work-item: acc[rm][rn] += a[i] * b[j] for every k of the tile
    acc2, q = Param("acc"), Param("q")
    kstep = Lambda((acc2, q), _block_update(f, g, acc2, _get(q, 0), _get(q, 1)))
    acc_blk, b_cols, acc_row, a_rows = (Param(n) for n in ("accBlock", "bCols", "accRows",
                                                           "aRows"))
    block = apply(JOIN, apply(Prim("reduceSeq", (kstep, acc_blk)),
                              Call(Prim("zip"), (apply(Prim("transpose"), a_rows),
                                                 apply(Prim("transpose"), b_cols)))))
    la, lb = Param("tileA"), Param("tileB")
    # work-item (l1, l0) computes rows i*l1 + l1 and columns j*l0 + l0 of the C tile:
    # neighbouring work-items read neighbouring local memory (no bank conflicts) and
    # write neighbouring elements of C
    a_blocks = apply(Prim("split", (_i(rm),)), apply(Prim("reorderStride", (_i(l1),)), la))
    b_blocks = apply(Prim("split", (_i(rn),)), apply(Prim("reorderStride", (_i(l0),)),
                                                     apply(Prim("transpose"), lb)))
    per_row = Lambda((acc_row, a_rows), apply(
        Prim("mapLcl", (Lambda((acc_blk, b_cols), block),), 0),
        Call(Prim("zip"), (acc_row, b_blocks))))
    acc, p = Param("acc"), Param("p")
    compute = apply(Prim("mapLcl", (per_row,), 1), Call(Prim("zip"), (acc, a_blocks)))
    step = Lambda((acc, p), apply(Lambda((la, lb), compute),
                                  _to_local_tile(_get(p, 0), tm, tk, l1, l0),
                                  _to_local_tile(_get(p, 1), tk, tn, l1, l0)))

    def write(reduced: Expr) -> Expr:
        written = apply(Prim("toGlobal", (_lcl2(Prim("mapSeq", (Prim("mapSeq", (Prim("id"),)),
                                                                 ))),)), reduced)
        return apply(Prim("map", (compose(Prim("reorderStride", (_i(rn),)), JOIN),)),
                     apply(Prim("reorderStride", (_i(rm),)),
                           apply(JOIN, apply(Prim("map", (Prim("transpose"),)), written))))
    return _mm_work_groups(a_expr, b_param, tm, tn, tk, step, _block_zeros(z, l1, l0, rm, rn),
                           write)


def _tilings(m: int, n: int, k: int, limits: Limits) -> list[tuple]:
    """(tm, tn, tk, rm, rn): tiles of A (tm x tk) and B (tk x tn) in local memory,
    register blocks rm x rn, a work-group of (tn/rn) x (tm/rm) work-items."""
    out = []
    for tm, tn, tk, rm, rn in itertools.product((128, 64, 32), (128, 64, 32), (16, 8),
                                                (8, 4, 2), (8, 4, 2)):
        l1, l0 = tm // rm, tn // rn
        threads = l1 * l0
        if m % tm or n % tn or k % tk or tm % rm or tn % rn:
            continue
        if not 32 <= threads <= min(256, limits.max_work_group):
            continue
        if (tm * tk) % threads or (tk * tn) % threads or l0 < 8:
            continue
        if (tm + tn) * tk * 4 > limits.local_memory:
            continue
        out.append((tm, tn, tk, rm, rn))
    return out


def mm_tiling_choices(m: int, n: int, k: int, limits: Limits) -> list[tuple]:
    """The tilings (``_tilings``) the rule offers."""
    out = _tilings(m, n, k, limits)
    # the most work per work-item and per tile first (what fast SGEMMs do)
    out.sort(key=lambda c: (-(c[3] * c[4]), -(c[0] * c[1]), -c[2]))
    return out[:limits.max_choices]


def _mm_problem(s: Site):
    """``(f, z, g, A, B, m, n, k)`` of a matrix multiplication whose initial value is a
    literal (the tiled rules fill register blocks with it); None otherwise."""
    f, z, g, a_expr, b_param = _mm_shape(s)
    if not isinstance(z, Literal):
        return None
    at = s.arg_types[0]
    n = int(s.env.get(b_param, b_param.type).elem.size)
    return f, z, g, a_expr, b_param, int(at.size), n, int(at.elem.size)


def mm_tiled(s: Site) -> list[Expr]:
    p = _mm_problem(s)
    if p is None:
        return []
    *expr, m, n, k = p
    return [_mm_tiled_expr(*expr, *c) for c in mm_tiling_choices(m, n, k, s.limits)]


rule(Rule("mm-tiling", "macro",
          "map(rowA => map(colB => reduce o map(*) $ zip(rowA, colB)) o transpose $ B) $ A -> "
          "join o mapWrg(1)(rowsA => mapWrg(0)(colsB => toGlobal(copy) o reduceSeq((acc, "
          "(tA, tB)) => mapLcl(1)(mapLcl(0)(acc[rm][rn] += a*b over the k-tile)) $ "
          "(toLocal(copy) tA, toLocal(copy) tB), 0) $ zip(k-tiles of rowsA, colsB)) ...) o "
          "split(tm) $ A",
          match=_mm_at_top,
          rhs=mm_tiled, exact=True))


# --- matrix multiplication with vectorised tiles --------------------------------------------

def _tile_to_registers(rows: int, cols: int, l1: int, l0: int, w: int) -> Fun:
    """A [rows][cols] tile -> [l1][l0][c] vectors in private memory: each work-item's
    share of the tile, ``w``-wide vectors along its rows, consecutive work-items
    reading consecutive vectors of global memory."""
    chunk = rows * cols // (w * l1 * l0)
    return compose(Prim("toPrivate", (_lcl2(Prim("mapSeq", (Prim("id"),))),)),
                   Prim("split", (_i(l0),)), Prim("split", (_i(chunk),)), JOIN,
                   Prim("map", (Prim("asVector", (w,)),)))


def _registers_to_local(rows: int, cols: int, w: int, transposed: bool) -> Fun:
    """The work-items' shares of a tile (``_tile_to_registers``) -> the tile in local
    memory as [rows][cols], or as [cols][rows] when ``transposed``: the layout
    patterns inside ``toLocal`` after the copy say where the copy writes."""
    layout = [Prim("transpose")] if transposed else []
    layout += [Prim("map", (Prim("asScalar"),)), Prim("split", (_i(cols // w),)), JOIN, JOIN]
    return Prim("toLocal", (compose(*layout, _lcl2(Prim("mapSeq", (Prim("id"),)))),))


def _runs(tile: Expr, items: int, runs: int, w: int) -> Expr:
    """[k][n] -> [items][k][runs] vectors: work-item i's ``runs`` vectors of each row
    are vectors i, items + i, 2*items + i, ...: runs of ``w`` adjacent elements, so
    that neighbouring work-items read neighbouring vectors of local memory."""
    return apply(Prim("transpose"), apply(Prim("map", (compose(
        Prim("split", (_i(runs),)), Prim("reorderStride", (_i(items),)),
        Prim("asVector", (w,))),)), tile))


def _private_vectors(x: Expr) -> Expr:
    """Vectors copied into private memory (registers), seen as scalars."""
    return apply(Prim("asScalar"), apply(Prim("toPrivate", (Prim("mapSeq", (Prim("id"),)),)), x))


def _vectorised_k_tile(f: Fun, g: Fun | None, acc: Param, tile_a: Expr, tile_b: Expr,
                       l1: int, l0: int, rm: int, rn: int, w: int) -> Expr:
    """One k-step of a vectorised tiling: the (l1 x l0) work-items' blocks ``acc``
    [l1][l0][rm][rn] updated with the k-tiles in local memory, ``tile_a`` A's tile
    transposed ([tk][tm]: a work-item's rows are adjacent there) and ``tile_b`` [tk][tn].
    For every k, each work-item loads its parts of the k-th rows of the tiles into
    registers as rm/w and rn/w vectors and adds a[i] * b[j] to acc[i][j]."""
    ra, rb = rm // w, rn // w
    acc2, q, fa, fb = (Param(n) for n in ("acc", "q", "aFrag", "bFrag"))
    kstep = Lambda((acc2, q), apply(Lambda((fa, fb), _block_update(f, g, acc2, fa, fb)),
                                    _private_vectors(_get(q, 0)), _private_vectors(_get(q, 1))))
    acc_blk, b_runs, acc_rows, a_runs = (Param(n) for n in ("accBlock", "bRuns", "accRows",
                                                            "aRuns"))
    block = apply(JOIN, apply(Prim("reduceSeq", (kstep, acc_blk)),
                              Call(Prim("zip"), (a_runs, b_runs))))
    per_row = Lambda((acc_rows, a_runs), apply(
        Prim("mapLcl", (Lambda((acc_blk, b_runs), block),), 0),
        Call(Prim("zip"), (acc_rows, _runs(tile_b, l0, rb, w)))))
    return apply(Prim("mapLcl", (per_row,), 1), Call(Prim("zip"), (acc, _runs(tile_a, l1, ra, w))))


def _write_vector_blocks(rm: int, rn: int, w: int):
    """The ``write`` of ``_mm_work_groups`` for vectorised tilings: the work-items'
    blocks [l1][l0][rm][rn] written to global memory as w-wide vectors, then viewed as
    the C tile [tm][tn] (each work-item's runs of rows and columns back in place)."""
    ra, rb = rm // w, rn // w

    def write(reduced: Expr) -> Expr:
        vectors = apply(Prim("map", (Prim("map", (Prim("map", (Prim("asVector", (w,)),)),)),)),
                        reduced)
        written = apply(Prim("toGlobal", (_lcl2(Prim("mapSeq", (Prim("mapSeq", (Prim("id"),)),
                                                                 ))),)), vectors)
        # [l1][l0][rm][rb] vectors -> the C tile: the work-items' runs back in place
        return apply(Prim("map", (compose(Prim("asScalar"), Prim("reorderStride", (_i(rb),)),
                                          JOIN),)),
                     apply(JOIN, apply(Prim("reorderStride", (_i(ra),)), apply(JOIN, apply(
                         Prim("map", (compose(Prim("split", (_i(w),)), Prim("transpose")),)),
                         written)))))
    return write


def _mm_tiled_vectorised_expr(f, z, g, a_expr, b_param, tm, tn, tk, rm, rn, w) -> Expr:
    l1, l0 = tm // rm, tn // rn
    # tileA holds A's tile transposed ([tk][tm]): a work-item's rows are adjacent there
    la, lb, acc, p = Param("tileA"), Param("tileB"), Param("acc"), Param("p")
    compute = _vectorised_k_tile(f, g, acc, la, lb, l1, l0, rm, rn, w)
    # p: the work-items' shares of the k-step's tiles, loaded one k-step ahead
    step = Lambda((acc, p), apply(Lambda((la, lb), compute),
                                  apply(_registers_to_local(tm, tk, w, True), _get(p, 0)),
                                  apply(_registers_to_local(tk, tn, w, False), _get(p, 1))))
    return _mm_work_groups(a_expr, b_param, tm, tn, tk, step, _block_zeros(z, l1, l0, rm, rn),
                           _write_vector_blocks(rm, rn, w),
                           (Prim("prefetch", (_tile_to_registers(tm, tk, l1, l0, w),)),
                            Prim("prefetch", (_tile_to_registers(tk, tn, l1, l0, w),))))


def mm_vectorised_choices(m: int, n: int, k: int, limits: Limits) -> list[tuple]:
    """(tm, tn, tk, rm, rn, w): tilings (``_tilings``) with w-wide vectors, where the
    runs of w rows and columns of a work-item and its share of each tile copy are
    whole vectors."""
    out = []
    for (tm, tn, tk, rm, rn), w in itertools.product(_tilings(m, n, k, limits),
                                                     limits.vector_widths):
        threads = (tm // rm) * (tn // rn)
        if rm % w or rn % w or tk % w or (tm * tk) % (threads * w) or (tk * tn) % (threads * w):
            continue
        out.append((tm, tn, tk, rm, rn, w))
    # the most work per work-item and per tile, the widest vectors, then k-tiles of 8
    # first (the hand-written SGEMM this derivation follows uses 128x128 tiles, 8x8
    # blocks, float4 and k-tiles of 8)
    out.sort(key=lambda c: (-(c[3] * c[4]), -(c[0] * c[1]), -c[5], c[2]))
    return out[:limits.max_choices]


def mm_tiled_vectorised(s: Site) -> list[Expr]:
    p = _mm_problem(s)
    if p is None:
        return []
    *expr, m, n, k = p
    return [_mm_tiled_vectorised_expr(*expr, *c)
            for c in mm_vectorised_choices(m, n, k, s.limits)]


rule(Rule("mm-tiling-vectorised", "macro",
          "mm-tiling with w-wide vectors: tiles copied to local memory by vectors "
          "(asVector(w); A's tile transposed), each work-item owning runs of w adjacent rows "
          "and columns whose k-th parts it loads into private memory as vectors "
          "(asScalar o toPrivate(mapSeq(id))), C written as vectors",
          match=_mm_at_top,
          rhs=mm_tiled_vectorised, exact=True))


# --- 2-D stencils with overlapped tiles in local memory (Hagedorn et al., CGO 2018) -------

def _prim_named(f, name: str) -> bool:
    return isinstance(f, Prim) and f.name == name


def _slide_1(f, size=None) -> bool:
    """``f`` is ``slide(size, 1)`` (any size when ``size`` is None)."""
    return _prim_named(f, "slide") and int(f.args[1]) == 1 and (
        size is None or int(f.args[0]) == int(size))


def _chain(f: Fun) -> list[Fun] | None:
    """``f`` as the functions it applies, last first: a composition, or a lambda whose
    body applies one function after another to its parameter (None: neither)."""
    if isinstance(f, Compose):
        return list(f.funs)
    if not (isinstance(f, Lambda) and len(f.params) == 1):
        return None
    out, e = [], f.body
    while isinstance(e, Call) and len(e.args) == 1:
        out.append(e.fun)
        e = e.args[0]
    return out if e == f.params[0] else None


def _stencil_shape(s: Site):
    """``map(join o map(g) o transpose o map(slide(fw, 1))) o slide(fh, 1) $ X`` (every
    fh x fw window of the 2-D ``X``, ``g`` applied to each): returns (g, X, fh, fw)."""
    n = s.node
    if not (isinstance(n, Call) and _prim_named(n.fun, "map") and len(n.args) == 1):
        return None
    slid = n.args[0]
    if not (isinstance(slid, Call) and _slide_1(slid.fun) and len(slid.args) == 1):
        return None
    funs = _chain(n.fun.args[0])
    if funs is None or len(funs) != 4:
        return None
    j, m, t, ms = funs
    if not (j == JOIN and _prim_named(m, "map") and _prim_named(t, "transpose")
            and _prim_named(ms, "map") and _slide_1(ms.args[0])):
        return None
    return m.args[0], slid.args[0], int(slid.fun.args[0]), int(ms.args[0].args[0])


#: (th, tw) offered, the first the default: rows of 32 work-items (a warp reads 32
#: adjacent elements of the tile), then squarer tiles
STENCIL_TILES = ((8, 32), (16, 32), (16, 16), (4, 32), (32, 32), (32, 8), (8, 16), (8, 8))


def stencil_tiling_choices(h: int, w: int, fh: int, fw: int, limits: Limits) -> list[tuple]:
    """Output tiles th x tw (one work-item per output element) that divide the output,
    whose group fits the limits and whose input tile with halo fits local memory."""
    out = []
    for th, tw in STENCIL_TILES:
        if h % th or w % tw or th * tw > limits.max_work_group:
            continue
        if (th + fh - 1) * (tw + fw - 1) * 4 > limits.local_memory:
            continue
        out.append((th, tw))
    return out[:min(8, limits.max_choices)]


def _stencil_tiled_expr(g: Fun, x: Expr, fh: int, fw: int, th: int, tw: int) -> Expr:
    rows, cols = th + fh - 1, tw + fw - 1
    # the input tile (with halo) in local memory, each work-item copying the elements
    # (l1 + i*th, l0 + j*tw) of it; then the tile's windows, as the program slid them
    copy = Prim("toLocal", (_lcl2(Prim("id")),))
    windows = compose(JOIN, Prim("mapLcl", (g,), 0), Prim("transpose"),
                      Prim("map", (Prim("slide", (_i(fw), _i(1))),)))
    tile = compose(Prim("mapLcl", (windows,), 1), Prim("slide", (_i(fh), _i(1))), copy)
    # overlapped tiling: slide(fh, 1) = join o map(slide(fh, 1)) o slide(th + fh - 1, th)
    # in each dimension: [h/th][w/tw] tiles of [rows][cols]
    per_row = compose(Prim("map", (JOIN,)), Prim("transpose"),
                      Prim("mapWrg", (tile,), 0), Prim("transpose"),
                      Prim("map", (Prim("slide", (_i(cols), _i(tw))),)))
    return apply(JOIN, apply(Prim("mapWrg", (per_row,), 1),
                             apply(Prim("slide", (_i(rows), _i(th))), x)))


def stencil_tiled(s: Site) -> list[Expr]:
    g, x, fh, fw = _stencil_shape(s)
    t = s.arg_types[0]                         # [h][fh][W]
    h, big_w = int(t.size), int(t.elem.elem.size)
    w = big_w - fw + 1
    return [_stencil_tiled_expr(g, x, fh, fw, th, tw)
            for th, tw in stencil_tiling_choices(h, w, fh, fw, s.limits)]


rule(Rule("stencil-2d-tiling", "macro",
          "map(join o map(g) o transpose o map(slide(fw, 1))) o slide(fh, 1) $ X -> "
          "join o mapWrg(1)(map(join) o transpose o mapWrg(0)(mapLcl(1)(join o mapLcl(0)(g) "
          "o transpose o map(slide(fw, 1))) o slide(fh, 1) o toLocal(mapLcl(1)(mapLcl(0)(id))))"
          " o transpose o map(slide(tw + fw - 1, tw))) o slide(th + fh - 1, th) $ X: "
          "overlapped tiling, th x tw outputs per work-group from its input tile in local "
          "memory",
          match=lambda s: s.arg_types is not None and not s.enclosing
          and _stencil_shape(s) is not None,
          rhs=stencil_tiled, exact=True))


# rules in modules of their own register themselves with these: the register blocking
# of 2-D stencils and the double-buffered matrix multiplication
from mcl.lift import macros_mm  # noqa: E402, F401
from mcl.lift import stencil_blocking as _stencil_blocking  # noqa: E402,F401
