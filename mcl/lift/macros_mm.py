"""The matrix-multiplication macro rules (seed 002's "register blocking as a macro
rule" and the tiling macro rule of the Lift papers), from
``map(rowA => map(colB => reduce o map(*) $ zip(rowA, colB)) o transpose $ B) $ A``
at the program's top level:

* ``mm-register-blocking``: each work-item computing a block of C in private memory
  (register blocking) and coalesced reads of B.
* ``mm-tiling``: per work-group a tm x tn tile of C; tiles of A (tm x tk) and B
  (tk x tn) copied to local memory by the whole group each k-step; each work-item
  accumulating an rm x rn register block (strided over the tile) in private memory;
  work-group (tn/rn) x (tm/rm).
* ``mm-tiling-vectorised``: the same tiling vectorised (seed 002's asVector /
  asScalar / mapVec patterns): the tiles are copied with w-wide vector loads
  (A's transposed in local memory), each work-item owns runs of w adjacent rows
  and columns of the C tile, loads its parts of the tiles into registers as
  vectors and writes C as vectors. The sizes divide by construction, so every
  vector access is aligned (the code generator emits 128-bit accesses for float4).
* ``mm-tiling-double-buffered``: the form of the fastest hand-written and
  hand-refined OpenCL matmuls (benchmarks/opencl/matmul_hand/vec4.cl,
  examples/matmul/hopper_v5.mcpl) reached by rewriting, described below.

``mm-tiling-double-buffered`` is ``mm-tiling-vectorised`` (tm x tn tiles of C per
work-group; each work-item owns runs of w adjacent rows and columns of its rm x rn
register block, reads its parts of the k-th rows of the tiles as w-wide (128-bit for
float4) vectors from local memory; A's tile transposed in local memory; C written as
vectors) with the k-tiles double-buffered in local memory:

    reduceSeq(step, 0) $ zip(prefetchLocal(toLocal(h_A) o g_A, pad) $ k-tiles of A,
                             prefetchLocal(toLocal(h_B) o g_B, 0) $ k-tiles of B)

``g`` loads a work-item's share of a k-tile into registers as vectors (issued one
k-step ahead, so the loads are in flight during the step's multiply-adds), ``h``
writes those registers into the other of two local buffers after the step, and the
step itself only computes: one barrier per k-step instead of two, and no wait for
the copy before computing. B's tile is loaded with work-item t taking vectors t,
t + T, t + 2T, ... (T work-items: every load instruction of a warp reads adjacent
vectors, and the vector stores into local memory are conflict-free). A's tile is
stored transposed lane by lane; its load order and row padding are chosen to free
those stores of bank conflicts: adjacent vectors of a row per work-item (whole
32-byte sectors per warp) with rows padded by w where that suffices (128 x 8 tiles:
rows of 132 words, as vec4.cl), else by columns of vectors, the 32 work-items of a
warp taking the same vector column of 32 adjacent rows.

The rule requires the tiles to divide the matrices (M % tm, N % tn, K % tk) and the
register blocks to divide into vectors; for sizes where no tiling divides, it offers
nothing, so the exploration never generates a kernel that would read or write outside
the matrices. Its choices (``mm_double_buffered_choices``) are the vectorised tilings
whose two buffers fit in local memory. A's tile is loaded and laid out as
``a_layout`` says: the layout with the fewest bank conflicts in its transposed stores
(``store_conflicts`` counts them), padded rows where that removes them
(``prefetchLocal(f, p)``)."""

from __future__ import annotations

import itertools

from mcl.lift.ir import JOIN, Call, Expr, Fun, Lambda, Literal, Param, Prim, apply, compose
from mcl.lift.macros import _apply_pair, _get, _i, _lcl2, _row_reduction
from mcl.lift.rules import Limits, Rule, Site, rule
from mcl.lift.types import ArrayType

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


rule(Rule("mm-register-blocking", "macro",
          "map(rowA => map(colB => reduce o map(*) $ zip(rowA, colB)) o transpose $ B) $ A -> "
          "join o mapGlb(1)(rowsA => ... mapGlb(0)(colsB => toPrivate(reduceSeq(acc[bm][bn] += "
          "a*b)) ...) o split(bn) o reorderStride(N/bn) o transpose $ B) o split(bm) $ A",
          match=_mm_at_top,
          rhs=mm_blocked, exact=True))



# --- matrix multiplication with local-memory tiles (Lift's tiling macro rule) -------------

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
    ``prefetch(f)``, or ``prefetchLocal(f, p)`` for ``mm-tiling-double-buffered``), the
    step receives their results, computed one k-step ahead."""
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


def _tiled_rhs(expr, choices):
    """The right-hand side of a tiled rule: ``expr(f, z, g, A, B, *choice)`` for each of
    ``choices(m, n, k, limits)`` (none where the problem's initial value is no literal)."""
    def rhs(s: Site) -> list[Expr]:
        p = _mm_problem(s)
        if p is None:
            return []
        *problem, m, n, k = p
        return [expr(*problem, *c) for c in choices(m, n, k, s.limits)]
    return rhs


mm_tiled = _tiled_rhs(_mm_tiled_expr, mm_tiling_choices)


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


mm_tiled_vectorised = _tiled_rhs(_mm_tiled_vectorised_expr, mm_vectorised_choices)


rule(Rule("mm-tiling-vectorised", "macro",
          "mm-tiling with w-wide vectors: tiles copied to local memory by vectors "
          "(asVector(w); A's tile transposed), each work-item owning runs of w adjacent rows "
          "and columns whose k-th parts it loads into private memory as vectors "
          "(asScalar o toPrivate(mapSeq(id))), C written as vectors",
          match=_mm_at_top,
          rhs=mm_tiled_vectorised, exact=True))


# --- matrix multiplication with double-buffered k-tiles ---------------------------------------

def _tile_to_registers_strided(rows: int, cols: int, l1: int, l0: int, w: int):
    """A [rows][cols] tile -> [l1][l0][c] vectors in private memory, work-item t of the
    T = l1 * l0 taking vectors t, t + T, t + 2T, ... of the tile (each load instruction
    of a warp reads adjacent vectors)."""
    threads = l1 * l0
    chunk = rows * cols // (w * threads)
    return compose(Prim("toPrivate", (_lcl2(Prim("mapSeq", (Prim("id"),))),)),
                   Prim("split", (_i(l0),)), Prim("split", (_i(chunk),)),
                   Prim("reorderStride", (_i(threads),)), JOIN,
                   Prim("map", (Prim("asVector", (w,)),)))


def _strided_registers_to_local(rows: int, cols: int, l1: int, l0: int, w: int) -> Prim:
    """The shares of ``_tile_to_registers_strided`` -> the [rows][cols] tile in local
    memory: the layout after the copy puts vector t*c + u of the work-items' order
    back at u*T + t (``reorderStride(c)`` inverts ``reorderStride(T)``)."""
    chunk = rows * cols // (w * l1 * l0)
    layout = [Prim("map", (Prim("asScalar"),)), Prim("split", (_i(cols // w),)),
              Prim("reorderStride", (_i(chunk),)), JOIN, JOIN]
    return Prim("toLocal", (compose(*layout, _lcl2(Prim("mapSeq", (Prim("id"),)))),))


def _tile_to_registers_by_rows(rows: int, cols: int, l1: int, l0: int, w: int):
    """A [rows][cols] tile -> [l1][l0][c] vectors in private memory, the w-wide vectors
    of the tile taken column of vectors by column of vectors: work-item t takes
    vectors t, t + T, ... of that order (T = l1 * l0 work-items), so the 32 work-items
    of a warp take the same vector column of 32 different rows."""
    threads = l1 * l0
    chunk = rows * cols // (w * threads)
    return compose(Prim("toPrivate", (_lcl2(Prim("mapSeq", (Prim("id"),))),)),
                   Prim("split", (_i(l0),)), Prim("split", (_i(chunk),)),
                   Prim("reorderStride", (_i(threads),)), JOIN, Prim("transpose"),
                   Prim("map", (Prim("asVector", (w,)),)))


def _rows_registers_to_local_transposed(rows: int, cols: int, l1: int, l0: int,
                                        w: int) -> Prim:
    """The shares of ``_tile_to_registers_by_rows`` -> the tile transposed in local
    memory ([cols][rows]): lane c of the vector of row r and vector column q lands at
    (q*w + c)*rows + r. For one store instruction the work-items of a warp write 32
    adjacent rows of one column: 32 different banks."""
    chunk = rows * cols // (w * l1 * l0)
    layout = [JOIN, Prim("map", (compose(Prim("transpose"), Prim("split", (_i(w),)),
                                         Prim("asScalar")),)),
              Prim("split", (_i(rows),)), Prim("reorderStride", (_i(chunk),)), JOIN, JOIN]
    return Prim("toLocal", (compose(*layout, _lcl2(Prim("mapSeq", (Prim("id"),)))),))


def store_conflicts(tm: int, tk: int, threads: int, w: int, by_columns: bool,
                    pad: int, banks: int = 32, warp: int = 32) -> int:
    """The most work-items of a warp whose stores of one lane of their A vectors into
    the transposed tile ([tk][tm + pad] in local memory) hit one bank: 1 is free of
    conflicts. Work-item t holds vectors t*c .. t*c + c-1 of the tile's vectors in row
    order (rows of tk/w vectors), or with ``by_columns`` vectors t, t + T, ... in
    column order."""
    chunk = tm * tk // (w * threads)
    worst = 1
    for first in range(0, threads, warp):
        for u in range(chunk):
            for c in range(w):
                count: dict[int, int] = {}
                for t in range(first, min(first + warp, threads)):
                    if by_columns:
                        q, r = divmod(u * threads + t, tm)
                    else:
                        r, q = divmod(t * chunk + u, tk // w)
                    bank = ((q * w + c) * (tm + pad) + r) % banks
                    count[bank] = count.get(bank, 0) + 1
                worst = max(worst, max(count.values()))
    return worst


def a_layout(tm: int, tk: int, threads: int, w: int) -> tuple[bool, int]:
    """How A's tile is loaded and laid out: (by_columns, row padding) with the fewest
    bank conflicts in the transposed stores; on a tie, loading by rows (adjacent
    vectors of a row per work-item: whole 32-byte sectors per warp) and less padding."""
    options = [(by_columns, pad) for by_columns in (False, True) for pad in (0, w, 2 * w)
               if not (by_columns and pad)]
    return min(options, key=lambda o: (store_conflicts(tm, tk, threads, w, *o), o[0], o[1]))


def _mm_double_buffered_expr(f, z, g, a_expr, b_param, tm, tn, tk, rm, rn, w):
    l1, l0 = tm // rm, tn // rn
    # p: this k-step's tiles, already in local memory (A's transposed: [tk][tm])
    acc, p = Param("acc"), Param("p")
    step = Lambda((acc, p), _vectorised_k_tile(f, g, acc, _get(p, 0), _get(p, 1),
                                               l1, l0, rm, rn, w))
    by_columns, pad = a_layout(tm, tk, l1 * l0, w)
    stage_a = compose(_rows_registers_to_local_transposed(tm, tk, l1, l0, w),
                      _tile_to_registers_by_rows(tm, tk, l1, l0, w)) if by_columns else \
        compose(_registers_to_local(tm, tk, w, True), _tile_to_registers(tm, tk, l1, l0, w))
    stage_b = compose(_strided_registers_to_local(tk, tn, l1, l0, w),
                      _tile_to_registers_strided(tk, tn, l1, l0, w))
    return _mm_work_groups(a_expr, b_param, tm, tn, tk, step, _block_zeros(z, l1, l0, rm, rn),
                           _write_vector_blocks(rm, rn, w),
                           (Prim("prefetchLocal", (stage_a, _i(pad))),
                            Prim("prefetchLocal", (stage_b, _i(0)))))


#: tile sides of C, k-tile depths and register-block sides the rule offers
TILES = (256, 128, 64, 32)
K_TILES = (16, 8)
BLOCKS = (16, 8, 4, 2)


def mm_double_buffered_choices(m: int, n: int, k: int, limits: Limits) -> list[tuple]:
    """(tm, tn, tk, rm, rn, w): tiles that divide the matrices, a work-group of
    (tn/rn) x (tm/rm) work-items (64 to 256, rows of at least 8), register blocks of
    at most 128 values whose runs of rows and columns are w-wide vectors, each tile's
    copy whole vectors per work-item, both buffers of both tiles in local memory.
    Ordered by closeness to the fastest measured OpenCL SGEMM of this shape
    (benchmarks/opencl/matmul_hand/vec4.cl, 0.88 of cuBLAS on the H100: 8 x 8 blocks,
    128 x 128 x 8 tiles, float4; with k-tiles of 16 it reached 0.75,
    benchmarks/results/opencl_matmul/matmul_variants_4096.json): blocks of 64 values
    first, square blocks, larger and squarer tiles, wider vectors, k-tiles of 8 before
    16."""
    out = []
    for tm, tn, tk, rm, rn, w in itertools.product(TILES, TILES, K_TILES, BLOCKS, BLOCKS,
                                                   limits.vector_widths):
        if m % tm or n % tn or k % tk or tm % rm or tn % rn or rm * rn > 128:
            continue
        l1, l0 = tm // rm, tn // rn
        threads = l1 * l0
        if not 64 <= threads <= min(256, limits.max_work_group) or l0 < 8:
            continue
        if rm % w or rn % w or tk % w or (tm * tk) % (threads * w) or (tk * tn) % (threads * w):
            continue
        if 2 * (tm + a_layout(tm, tk, threads, w)[1] + tn) * tk * 4 > limits.local_memory:
            continue
        out.append((tm, tn, tk, rm, rn, w))
    def log2(x: int) -> int:
        return x.bit_length() - 1
    out.sort(key=lambda c: (abs(log2(c[3] * c[4]) - 6), abs(log2(c[3]) - log2(c[4])),
                            -(c[0] * c[1]), abs(log2(c[0]) - log2(c[1])), -c[5], c[2]))
    return out[:limits.max_choices]


mm_double_buffered = _tiled_rhs(_mm_double_buffered_expr, mm_double_buffered_choices)


rule(Rule("mm-tiling-double-buffered", "macro",
          "mm-tiling-vectorised with the k-tiles double-buffered in local memory: "
          "reduceSeq(step, 0) $ zip(prefetchLocal(toLocal(h) o g) $ tiles of A, "
          "prefetchLocal(toLocal(h) o g) $ tiles of B), g loading a work-item's share of the "
          "next k-tile into registers as vectors before the step, h writing it into the other "
          "local buffer after it (one barrier per k-step); requires M % tm = N % tn = K % tk "
          "= 0",
          match=_mm_at_top, rhs=mm_double_buffered, exact=True))
