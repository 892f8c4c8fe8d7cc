"""The 2-D stencil macro rules, for every fh x fw window of a 2-D input (the
convolution Lift derives from MCPL): overlapped tiles in local memory and register
blocking (seed 002's "register blocking as a macro rule").

``stencil-2d-tiling``: overlapped tiles (Hagedorn et al., CGO 2018):
``slide(fh, 1) = join o map(slide(fh, 1)) o slide(th + fh - 1, th)`` in both
dimensions; one work-group of th x tw work-items per th x tw outputs copies its
(th + fh - 1) x (tw + fw - 1) input tile with halo into local memory
(``toLocal(mapLcl(1, mapLcl(0, id)))``, several elements per work-item, one
barrier), then each work-item computes its output from the tile (the window's
function as given; the direct lowering fuses its reduction into registers).
Choices (at most 8): tiles from ``STENCIL_TILES`` that divide the output, whose
group and tile fit the limits.

``stencil-2d-register-blocking`` rewrites every weighted fh x fw window of a 2-D input,

    map(join o map(g) o transpose o map(slide(fw, 1))) o slide(fh, 1) $ X
    g = win => map(h) o reduce(f, z) o join o map(row => map(m) $ zip(row._0, row._1))
                 $ zip(F, win)

(``F`` the weights, e.g. the filter; ``m`` multiplies a weight and an input, ``f`` adds,
``h`` the final scaling), into the form a fast hand-written convolution has:

* the weights in constant memory (``toConstant(id) $ F`` where ``F`` is a small input of
  the program, which the code generator passes by value where it fits the kernel's
  arguments): with every loop over the filter unrolled, each weight is an operand of its
  multiply-add, read from the arguments' bank without a load;
* each work-item computes a c x r block of outputs (c rows, r adjacent columns) in
  private memory (register blocking): per filter row y it copies the c input rows it
  needs (r + fw - 1 elements each) into private memory, as w-wide vectors where the
  width divides the row (128-bit loads for float4), and adds ``F[y][x] * in[y + i][x + j]``
  to its c x r accumulators for every x (a ``reduceSeq`` over the filter rows whose
  step is a ``reduceSeq`` over the filter columns of ``mapSeq``s over the block);
* work-groups of l1 x l0 work-items cover (l1 c) x (l0 r) outputs; a work-group's
  input tile (with halo) is read through the cache by neighbouring work-items.

The tiles come from overlapped tiling (``slide(n, 1) = join o map(slide(n, 1)) o
slide(t + n - 1, t)``, Hagedorn et al., CGO 2018) in both dimensions, twice (work-group
tile, work-item block). Where the blocks do not divide the output, the input is padded
(``pad(0, k)``, its edge repeated) to whole blocks and the result cropped (``pad(0, -k)``
drops the last k elements; the code generator guards the stores past the end).

``stencil-2d-register-blocking-local`` is the same with each work-group's input tile
copied into local memory first (``toLocal(mapLcl(1, mapLcl(0, id)))``, one barrier); the
work-items then load their rows from there as vectors.

Choices (at most ``limits.max_choices``): (c, r, l1, l0, w) from ``BLOCKS`` and
``GROUPS`` whose private memory (and local tile) fits, the default first."""

from __future__ import annotations

from mcl.lift.codegen_patterns import CONSTANT_BYTES
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
    apply,
    compose,
    free_params,
)
from mcl.lift.macros import _apply_pair, _get, _i, _lcl2
from mcl.lift.rules import Limits, Rule, Site, rule
from mcl.lift.types import ArrayType, ScalarType

#: (c, r): outputs per work-item, c rows of r adjacent columns; the default first
BLOCKS = ((4, 4), (2, 8), (4, 8), (2, 4), (8, 4), (1, 8), (1, 4), (4, 2), (2, 2), (1, 2),
          (1, 1))
#: (l1, l0): work-items per work-group (rows, columns); the default first
GROUPS = ((4, 32), (8, 32), (2, 64), (8, 16), (1, 128), (4, 16), (2, 32), (4, 8), (2, 16),
          (1, 32), (2, 8), (1, 8))
#: bytes of private arrays a choice may declare (``Options.private_memory``)
PRIVATE_BYTES = 4096


def _zip(*xs: Expr) -> Expr:
    return Call(Prim("zip"), tuple(xs))


def _slide(size: int, step: int) -> Prim:
    return Prim("slide", (_i(size), _i(step)))


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


# --- 2-D stencils with register blocks ---------------------------------------------------------

# ----------------------------------------------------------------------------- the window

def window_parts(g: Fun):
    """The parts of a weighted window function
    ``win => [map(h) o] reduce(f, z) o join o map(row => map(m) $ zip(row._0, row._1))
    $ zip(F, win)`` (or ``zip(win, F)``): (f, z, m, h, F, weights_first); None when ``g``
    has another shape."""
    if not (isinstance(g, Lambda) and len(g.params) == 1):
        return None
    (win,) = g.params
    e = g.body
    h: Fun | None = None
    if isinstance(e, Call) and _prim_named(e.fun, "map"):
        h, e = e.fun.args[0], e.args[0]
    if not (isinstance(e, Call) and _prim_named(e.fun, "reduce")):
        return None
    f, z = e.fun.args[0], e.fun.args[1]
    e = e.args[0]
    if not (isinstance(e, Call) and e.fun == JOIN):
        return None
    e = e.args[0]
    if not (isinstance(e, Call) and _prim_named(e.fun, "map")
            and isinstance(e.fun.args[0], Lambda)):
        return None
    rowf, zipped = e.fun.args[0], e.args[0]
    if not (len(rowf.params) == 1 and isinstance(rowf.body, Call)
            and _prim_named(rowf.body.fun, "map")):
        return None
    (row,) = rowf.params
    inner = rowf.body.args[0]
    if inner != _zip(_get(row, 0), _get(row, 1)):
        return None
    m = rowf.body.fun.args[0]
    if not (isinstance(zipped, Call) and _prim_named(zipped.fun, "zip") and len(zipped.args) == 2):
        return None
    a, b = zipped.args
    if b == win and win not in free_params(a):
        weights, first = a, True
    elif a == win and win not in free_params(b):
        weights, first = b, False
    else:
        return None
    if not isinstance(z, Literal) or (h is not None and win in free_params(h)):
        return None
    return f, z, m, h, weights, first


# ----------------------------------------------------------------------------- the rule

def _shape(s: Site):
    """(f, z, m, h, F, weights_first, X, fh, fw, h_out, w_out) of a weighted 2-D stencil at
    the program's top level; None otherwise."""
    if s.arg_types is None or s.enclosing:
        return None
    st = _stencil_shape(s)
    if st is None:
        return None
    g, x, fh, fw = st
    parts = window_parts(g)
    if parts is None:
        return None
    t = s.arg_types[0]                         # [h][fh][W]
    rows, big_w = int(t.size), int(t.elem.elem.size)
    return (*parts, x, fh, fw, rows, big_w - fw + 1)


def _private_bytes(c: int, r: int, fh: int, fw: int) -> int:
    """Private arrays the code generator declares for one work-item (every unrolled step's
    copy of the input rows and of the accumulators, as ``Options.private_memory`` counts)."""
    return 4 * (fh * c * (r + fw - 1) + fh * c * r + c * r)


def _width(r: int, fw: int, limits: Limits) -> int:
    """The widest vector width of the limits dividing a block's rows and r (aligned
    vectors where the input's rows are whole vectors), else 1."""
    for w in sorted(limits.vector_widths, reverse=True):
        if r % w == 0 and (r + fw - 1) % w == 0:
            return w
    return 1


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def blocking_choices(h: int, w: int, fh: int, fw: int, limits: Limits) -> list[tuple]:
    """(c, r, l1, l0, vector width) in preference order: blocks and groups of ``BLOCKS``
    and ``GROUPS`` whose work-group fits the limits, whose private arrays fit
    ``PRIVATE_BYTES``, and which waste at most a quarter of the work-items' outputs on
    padding (blocks need not divide the output). Each block with its first group that
    fits comes first (in the order of ``BLOCKS``), then each with its second, ...: the
    choices differ in the block before they differ in the group."""
    per_block = []
    for c, r in BLOCKS:
        if _private_bytes(c, r, fh, fw) > PRIVATE_BYTES:
            continue
        groups = []
        for l1, l0 in GROUPS:
            th, tw = l1 * c, l0 * r
            if l1 * l0 > limits.max_work_group or \
                    _ceil(h, th) * th * _ceil(w, tw) * tw > 1.25 * h * w:
                continue
            groups.append((c, r, l1, l0, _width(r, fw, limits)))
        per_block.append(groups)
    out = [g[k] for k in range(len(GROUPS)) for g in per_block if k < len(g)]
    return out[:limits.max_choices]


def _constant(weights: Expr, s: Site) -> Expr:
    """The weights through constant memory when they are a small input of the program."""
    t = s.env.get(weights) if isinstance(weights, Param) else None
    if isinstance(t, ArrayType):
        n, u = 1, t
        while isinstance(u, ArrayType):
            n, u = n * int(u.size), u.elem
        if isinstance(u, ScalarType) and n * 4 <= CONSTANT_BYTES:
            return apply(Prim("toConstant", (Prim("id"),)), weights)
    return weights


def _block(parts, weights: Expr, block: Expr, c: int, r: int, fh: int, fw: int,
           width: int) -> Expr:
    """One work-item's c x r outputs from its [c + fh - 1][r + fw - 1] input block."""
    f, z, m, h, _, first = parts
    acc, q, acc2, t, regs = (Param(n) for n in ("acc", "q", "accX", "t", "rows"))
    acc_row, in_row, a, v = (Param(n) for n in ("accRow", "inRow", "a", "v"))
    product = _apply_pair(m, _get(t, 0), v) if first else _apply_pair(m, v, _get(t, 0))
    update = Lambda((a, v), apply(f, a, product))
    row_update = Lambda((acc_row, in_row), apply(Prim("mapSeq", (update,)),
                                                 _zip(acc_row, in_row)))
    # per filter column x: acc[i][j] = f(acc[i][j], m(F[y][x], rows[i][j + x]))
    x_step = Lambda((acc2, t), apply(Prim("mapSeq", (row_update,)), _zip(acc2, _get(t, 1))))
    shifted = apply(Prim("transpose"), apply(Prim("map", (_slide(r, 1),)), regs))
    per_row = apply(JOIN, apply(Prim("reduceSeq", (x_step, acc)), _zip(_get(q, 0), shifted)))
    # the c input rows of filter row y into private memory (as vectors where they divide)
    copy = Prim("toPrivate", (Prim("mapSeq", (Prim("mapSeq", (Prim("id"),)),)),))
    if width > 1:
        load = apply(compose(Prim("map", (Prim("asScalar"),)), copy,
                             Prim("map", (Prim("asVector", (width,)),))), _get(q, 1))
    else:
        load = apply(copy, _get(q, 1))
    y_step = Lambda((acc, q), apply(Lambda((regs,), per_row), load))
    zeros = Literal(z.text, ArrayType(ArrayType(z.type, _i(r)), _i(c)))
    accs = apply(JOIN, apply(Prim("reduceSeq", (y_step, zeros)),
                             _zip(weights, apply(_slide(c, 1), block))))
    final = h if h is not None else Prim("id")
    if width == 1:
        return apply(Prim("toGlobal", (Prim("mapSeq", (Prim("mapSeq", (final,)),)),)), accs)
    # the results (h of the accumulators) in private memory, written as w-wide vectors
    results = apply(Prim("toPrivate", (Prim("mapSeq", (Prim("mapSeq", (final,)),)),)), accs)
    write = compose(Prim("map", (Prim("asScalar"),)),
                    Prim("toGlobal", (Prim("mapSeq", (Prim("mapSeq", (Prim("id"),)),)),)),
                    Prim("map", (Prim("asVector", (width,)),)))
    return apply(write, results)


def _tiles(inner: Fun, rows: int, cols: int, fh: int, fw: int, dims: tuple[str, str]) -> Fun:
    """``map(join) o transpose o dims[0](inner) o transpose o map(slide(cols + fw - 1, cols))
    o slide(rows + fh - 1, rows)`` joined: ``inner`` applied to every overlapped
    (rows + fh - 1) x (cols + fw - 1) tile of a 2-D input, the results ([rows][cols] each)
    laid out as one 2-D array. dims: the patterns of the two levels (outer, inner)."""
    outer_kind, inner_kind = dims
    per_row = compose(Prim("map", (JOIN,)), Prim("transpose"),
                      Prim(inner_kind, (inner,), 0), Prim("transpose"),
                      Prim("map", (_slide(cols + fw - 1, cols),)))
    return compose(JOIN, Prim(outer_kind, (per_row,), 1), _slide(rows + fh - 1, rows))


def _pad2(x: Expr, rows: int, cols: int) -> Expr:
    """``x`` with ``rows`` more rows and ``cols`` more columns (edges repeated)."""
    if cols:
        x = apply(Prim("map", (Prim("pad", (_i(0), _i(cols))),)), x)
    if rows:
        x = apply(Prim("pad", (_i(0), _i(rows))), x)
    return x


def _crop2(e: Expr, rows: int, cols: int) -> Expr:
    """``e`` without its last ``rows`` rows and ``cols`` columns."""
    if rows:
        e = apply(Prim("pad", (_i(0), _i(-rows))), e)
    if cols:
        e = apply(Prim("map", (Prim("pad", (_i(0), _i(-cols))),)), e)
    return e


def blocked_expr(shape, s: Site, c: int, r: int, l1: int, l0: int, width: int,
                 local: bool = False) -> Expr:
    """The blocked stencil; with ``local`` each work-group first copies its input tile
    (with halo) into local memory, ``toLocal(mapLcl(1, mapLcl(0, id)))``, and its
    work-items load their rows from there."""
    f, z, m, h, weights, first, x, fh, fw, h_out, w_out = shape
    parts = (f, z, m, h, weights, first)
    block = Param("block")
    per_item = Lambda((block,), _block(parts, _constant(weights, s), block, c, r, fh, fw, width))
    tile = Param("tile")
    src: Expr = tile
    if local:
        src = apply(Prim("toLocal", (Prim("mapLcl", (Prim("mapLcl", (Prim("id"),), 0),), 1),)),
                    tile)
    per_group = Lambda((tile,), apply(_tiles(per_item, c, r, fh, fw, ("mapLcl", "mapLcl")),
                                      src))
    th, tw = l1 * c, l0 * r
    ph, pw = _ceil(h_out, th) * th - h_out, _ceil(w_out, tw) * tw - w_out
    body = apply(_tiles(per_group, th, tw, fh, fw, ("mapWrg", "mapWrg")), _pad2(x, ph, pw))
    return _crop2(body, ph, pw)


def register_blocked(s: Site) -> list[Expr]:
    shape = _shape(s)
    fh, fw, h_out, w_out = shape[-4:]
    return [blocked_expr(shape, s, *ch)
            for ch in blocking_choices(h_out, w_out, fh, fw, s.limits)]


def local_blocking_choices(h: int, w: int, fh: int, fw: int, limits: Limits) -> list[tuple]:
    """The choices of ``blocking_choices`` whose input tile (with halo) fits local memory."""
    return [(c, r, l1, l0, v) for c, r, l1, l0, v in blocking_choices(h, w, fh, fw, limits)
            if (l1 * c + fh - 1) * (l0 * r + fw - 1) * 4 <= limits.local_memory]


def register_blocked_local(s: Site) -> list[Expr]:
    shape = _shape(s)
    fh, fw, h_out, w_out = shape[-4:]
    return [blocked_expr(shape, s, *ch, local=True)
            for ch in local_blocking_choices(h_out, w_out, fh, fw, s.limits)]


rule(Rule("stencil-2d-register-blocking", "macro",
          "map(join o map(win => map(h) o reduce(f, z) o join o map(map(m) o zip) $ zip(F, win))"
          " o transpose o map(slide(fw, 1))) o slide(fh, 1) $ X -> join o mapWrg(1)(... "
          "mapWrg(0)(join o mapLcl(1)(... mapLcl(0)(block => toGlobal(mapSeq(mapSeq(h))) o "
          "join o reduceSeq((acc, (Fy, rows)) => join o reduceSeq((acc, (Fyx, in)) => "
          "acc[i][j] = f(acc[i][j], m(Fyx, in[i][j])), acc) $ zip(Fy, transpose o map(slide(r, "
          "1)) $ map(asScalar) o toPrivate(mapSeq(mapSeq(id))) o map(asVector(w)) $ rows), 0) $ "
          "zip(toConstant(id) $ F, slide(c, 1) $ block)) ...) ...) o slide(l1 c + fh - 1, l1 c)"
          " $ X: filter in constant memory, c x r outputs per work-item in registers, input "
          "rows loaded as vectors",
          match=lambda s: _shape(s) is not None,
          rhs=register_blocked, exact=True))

rule(Rule("stencil-2d-register-blocking-local", "macro",
          "stencil-2d-register-blocking with each work-group's input tile (with halo) copied "
          "into local memory first (toLocal(mapLcl(1, mapLcl(0, id))), one barrier): the "
          "work-items load their rows as vectors from local memory",
          match=lambda s: _shape(s) is not None,
          rhs=register_blocked_local, exact=True))

__all__ = ["window_parts", "blocking_choices", "local_blocking_choices", "blocked_expr",
           "BLOCKS", "GROUPS"]
