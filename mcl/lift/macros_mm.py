"""The double-buffered matrix-multiplication macro rule ``mm-tiling-double-buffered``:
the form of the fastest hand-written and hand-refined OpenCL matmuls
(benchmarks/opencl/matmul_hand/vec4.cl, examples/matmul/hopper_v5.mcpl) reached by
rewriting.

It is ``mm-tiling-vectorised`` (tm x tn tiles of C per work-group; each work-item
owns runs of w adjacent rows and columns of its rm x rn register block, reads its
parts of the k-th rows of the tiles as w-wide (128-bit for float4) vectors from
local memory; A's tile transposed in local memory; C written as vectors) with the
k-tiles double-buffered in local memory:

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

from mcl.lift.ir import JOIN, Lambda, Param, Prim, compose
from mcl.lift.macros import (
    _block_zeros,
    _get,
    _i,
    _lcl2,
    _mm_at_top,
    _mm_problem,
    _mm_work_groups,
    _registers_to_local,
    _tile_to_registers,
    _vectorised_k_tile,
    _write_vector_blocks,
)
from mcl.lift.rules import Limits, Rule, Site, rule


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


def mm_double_buffered(s: Site) -> list:
    p = _mm_problem(s)
    if p is None:
        return []
    *expr, m, n, k = p
    return [_mm_double_buffered_expr(*expr, *c)
            for c in mm_double_buffered_choices(m, n, k, s.limits)]


rule(Rule("mm-tiling-double-buffered", "macro",
          "mm-tiling-vectorised with the k-tiles double-buffered in local memory: "
          "reduceSeq(step, 0) $ zip(prefetchLocal(toLocal(h) o g) $ tiles of A, "
          "prefetchLocal(toLocal(h) o g) $ tiles of B), g loading a work-item's share of the "
          "next k-tile into registers as vectors before the step, h writing it into the other "
          "local buffer after it (one barrier per k-step); requires M % tm = N % tn = K % tk "
          "= 0",
          match=_mm_at_top, rhs=mm_double_buffered, exact=True))
