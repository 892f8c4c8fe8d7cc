"""AllPairs: a function of every pair (row i of A, column j of B), C[i, j].

The generic form takes a function of two ``<type>_matrix_t`` values and reads them
with ``getElementFromRow(a, k)``, ``getElementFromCol(b, k)`` and ``width(a)``. The
specialised zip-reduce form, ``AllPairs(zip=..., reduce=...)``, knows the access
pattern and stages tiles of A and B in local memory (matrix multiplication is
``zip = *``, ``reduce = +``). On several devices A and C are block distributed
and B is copied to every device (SkelCL)."""

from __future__ import annotations

import dataclasses
import functools
import os
import re
from dataclasses import dataclass

import numpy as np

from mcl.opencl import device as cldevice
from mcl.skel.allpairs_lift import lift_pad, lift_source
from mcl.skel.container import Matrix
from mcl.skel.distribution import block, copy
from mcl.skel.errors import skel_error
from mcl.skel.functions import ctype_of, from_source
from mcl.skel.kernel import (
    Skeleton,
    check_identity_number,
    check_parameters,
    cname,
    identity_value,
    matrix_type,
    round_up,
)
from mcl.skel.skeletons import _new_like

_HELPERS = """#define getElementFromRow(m, k) ((m).data[((m).row - (m).lo) * (m).cols + (k)])
#define getElementFromCol(m, k) ((m).data[(k) * (m).cols + (m).col])
#define width(m) ((m).len)
"""

@dataclass(frozen=True)
class Tiling:
    """The register-blocked zip-reduce kernel's tiles: a work-group computes a BM x BN
    block of C from BK-deep slices of A and B staged in local memory (double buffered
    through registers); each of its (BM/TM) x (BN/TN) work-items computes TM x TN
    elements of C in registers."""

    bm: int
    bn: int
    bk: int
    tm: int
    tn: int
    #: work-items along the first dimension of the work-group (the rest along the
    #: second); 0: one dimension. The NVIDIA compiler's registers depend on the shape
    lx: int = 0
    #: the kernel's code shape: "r", "i" or "d" (see :func:`zip_reduce_source`),
    #: or "l" (the default's; Lift's structure, :mod:`mcl.skel.allpairs_lift`: its
    #: work-group is always (BN/TN) x (BM/TM), local id 0 along the columns)
    shape: str = ""

    @property
    def threads(self) -> int:
        return (self.bm // self.tm) * (self.bn // self.tn)

    @property
    def pad(self) -> int:
        """The padding of A's transposed tile rows: :data:`PAD`, or in code shape l
        only where it spares bank conflicts (:func:`mcl.skel.allpairs_lift.lift_pad`)."""
        if self.shape == "l":
            return lift_pad(self.bm, self.bn, self.bk, self.tm, self.tn, PAD)
        return PAD

    def local_bytes(self, ia: int, ib: int) -> int:
        return 2 * self.bk * ((self.bm + self.pad) * ia + self.bn * ib)

    @property
    def local_shape(self) -> tuple[int, int]:
        if self.shape == "l":
            return (self.bn // self.tn, self.bm // self.tm)
        return (self.lx, self.threads // self.lx) if self.lx else (self.threads, 1)

    def __str__(self) -> str:
        shape = f",{self.lx}x{self.threads // self.lx}" if self.lx else ""
        code = f"@{self.shape}" if self.shape else ""
        return f"{self.bm}x{self.bn}x{self.bk}/{self.tm}x{self.tn}{shape}{code}"


def parse_tiling(text: str) -> Tiling:
    """``"128x128x16/8x8"``: BM x BN x BK / TM x TN, optionally followed by the shape
    of the work-group (``"128x128x16/8x8,32x8"``; default one dimension) and the code
    shape of the kernel (``"128x128x16/8x8,32x8@d"``: ``r``, ``i``, ``d`` or ``l``; ``l``
    takes only the work-group (BN/TN) x (BM/TM), e.g. ``"128x128x8/8x8,16x16@l"``)."""
    m = re.fullmatch(r"\s*(\d+)x(\d+)x(\d+)\s*/\s*(\d+)x(\d+)\s*(?:,\s*(\d+)x(\d+)\s*)?"
                     r"(?:@([ridl]))?\s*", str(text))
    if m is None:
        raise skel_error("bad-arguments", f"AllPairs tile '{text}' is not BMxBNxBK/TMxTN",
                         hint="e.g. 128x128x16/8x8 or 128x128x16/8x8,32x8@r "
                              "(MCL_SKEL_ALLPAIRS_TILE or tile=)")
    t = Tiling(*(int(g) for g in m.groups()[:5]), lx=int(m.group(6) or 0),
               shape=m.group(8) or "")
    ok = (t.tm in (1, 2, 4, 8) and t.tn in (1, 2, 4, 8) and t.bm % (4 * t.tm) == 0
          and t.bn % (4 * t.tn) == 0 and t.bk % 4 == 0 and t.bk > 0)
    if m.group(6) and int(m.group(6)) * int(m.group(7)) != t.threads:
        raise skel_error("bad-arguments", f"AllPairs tile '{text}': the work-group shape "
                         f"must have {t.threads} work-items", hint="e.g. 128x128x16/8x8,32x8")
    if t.shape == "l" and t.lx and t.lx != t.bn // t.tn:
        raise skel_error("bad-arguments", f"AllPairs tile '{text}': code shape l runs on a "
                         f"work-group of {t.bn // t.tn}x{t.bm // t.tm} (BN/TN x BM/TM)",
                         hint="e.g. 128x128x8/8x8,16x16@l")
    if not ok:
        raise skel_error("bad-arguments", f"AllPairs tile '{text}': TM and TN must be 1, 2, "
                         "4 or 8, BM a multiple of 4 TM, BN of 4 TN, BK of 4",
                         hint="e.g. 128x128x16/8x8 or 64x64x16/4x4")
    return t


#: the default: the tiling and code shape of Lift's fastest mm at 4096^3 (rule
#: mm-tiling-double-buffered 128,128,16,8,8,4; benchmarks/opencl/matmul_hand/
#: lift_best_4096.cl). On an H100 (identity 0, NVIDIA's OpenCL) its kernel takes 127
#: registers and runs in the time of Lift's own text: 0.963-0.968 of cuBLAS (kernel
#: alone), 0.958-0.959 per call at 4096, 0.92 at 4000; 128x128x8/8x8 in the same shape
#: 0.943-0.945 and 0.931-0.934 (benchmarks/results/skel/allpairs_bisect/). Then smaller
#: tilings (in the same code shape) for devices with less local memory or smaller groups.
DEFAULT_TILE = "128x128x16/8x8@l"
FALLBACK_TILES = ("128x128x8/8x8,32x8", "64x64x16/4x4", "64x64x8/4x4", "32x32x8/2x2",
                  "16x16x4/1x1")
#: padding of A's transposed tile rows (its stores do not all hit one bank)
PAD = 4
#: block rows numbered together (the blocks resident at once share panels of A and B)
GROUP = 8

_TILE_DEFINES = """
#define NT ((BM / TM) * (BN / TN))
#define RA (TM < 4 ? TM : 4)
#define RB (TN < 4 ? TN : 4)
#define A_RUNS (BM * BK / 4)
#define B_RUNS (BK * BN / 4)
#define A_PER ((A_RUNS + NT - 1) / NT)
#define B_PER ((B_RUNS + NT - 1) / NT)
#define NBN ((M + BN - 1) / BN)
"""


def _store(buf: str) -> str:
    """The registers of the next phase into local buffer ``buf`` (A transposed)."""
    return f"""  {{
  #pragma unroll
  for (int s = 0; s < A_PER; ++s) {{
    const int e = tid + s * NT;
    if (A_PER * NT == A_RUNS || e < A_RUNS) {{
      const int r = e / (BK / 4), k = (e % (BK / 4)) * 4;
      #pragma unroll
      for (int u = 0; u < 4; ++u) l_a[{buf}][k + u][r] = an[s][u];
    }}
  }}
  #pragma unroll
  for (int s = 0; s < B_PER; ++s) {{
    const int e = tid + s * NT;
    if (B_PER * NT == B_RUNS || e < B_RUNS) {{
      const int k = e / (BN / 4), c = (e % (BN / 4)) * 4;
      *(__local TB4*)&l_b[{buf}][k][c] = (TB4)(bn[s][0], bn[s][1], bn[s][2], bn[s][3]);
    }}
  }}
  }}
"""


def _step(buf: str, q: str, first: bool) -> str:
    """One k of the phase in local buffer ``buf``: fragments of A and B in registers,
    then ``acc = REDUCE(acc, ZIP(a, b))`` (``first``: the k that starts the reduction)."""
    update = "START(v)" if first else "REDUCE(acc[i][j], v)"
    return f"""      {{
        TA af[TM];
        TB bf[TN];
        #pragma unroll
        for (int i = 0; i < TM; ++i)
          af[i] = l_a[{buf}][{q}][(i / RA) * (BM * RA / TM) + RA * ti + i % RA];
        #pragma unroll
        for (int j = 0; j < TN; ++j)
          bf[j] = l_b[{buf}][{q}][(j / RB) * (BN * RB / TN) + RB * tj + j % RB];
        #pragma unroll
        for (int i = 0; i < TM; ++i) {{
          #pragma unroll
          for (int j = 0; j < TN; ++j) {{
            const TO v = ZIP(af[i], bf[j]);
            acc[i][j] = {update};
          }}
        }}
      }}
"""


# ---- the kernel, in three code shapes (r, i, d): sizes as compile-time constants, the
# accumulators start at the neutral element (or the first phase is peeled), one body per
# phase, the load offsets within a tile fixed per thread

_KERNEL = _TILE_DEFINES + """#define NBM ((COUNT + BM - 1) / BM)
#define PHASES ((D + BK - 1) / BK)
#define KREM (D - (PHASES - 1) * BK)
/* run s of a thread (4 consecutive elements): row and column within the tile */
#if NT % (BK / 4) == 0
#define A_ROW(s) (tid / (BK / 4) + (s) * (NT / (BK / 4)))
#define A_COL(s) ((tid % (BK / 4)) * 4)
#else
#define A_ROW(s) ((tid + (s) * NT) / (BK / 4))
#define A_COL(s) (((tid + (s) * NT) % (BK / 4)) * 4)
#endif
#if NT % (BN / 4) == 0
#define B_ROW(s) (tid / (BN / 4) + (s) * (NT / (BN / 4)))
#define B_COL(s) ((tid % (BN / 4)) * 4)
#else
#define B_ROW(s) ((tid + (s) * NT) / (BN / 4))
#define B_COL(s) (((tid + (s) * NT) % (BN / 4)) * 4)
#endif
#define A_OK(s) (A_PER * NT == A_RUNS || tid + (s) * NT < A_RUNS)
#define B_OK(s) (B_PER * NT == B_RUNS || tid + (s) * NT < B_RUNS)

#if REQD
__attribute__((reqd_work_group_size(LX, NT / LX, 1)))
#endif
__kernel void skel_allpairs_zr(__global const TA* restrict A, __global const TB* restrict B,
                               __global TO* restrict C, const int a_off, const int c_off,
                               const int count_arg)
{
  __local TA l_a[2][BK][BM + PAD] __attribute__((aligned(32)));
  __local TB l_b[2][BK][BN] __attribute__((aligned(32)));
#if LX == NT
  const int tid = get_local_id(0);
#else
  const int tid = get_local_id(1) * LX + get_local_id(0);
#endif
  const int bid = get_group_id(0);     /* one group along the second dimension */
  const int per_group = GROUP * NBN;
  const int first_row = (bid / per_group) * GROUP;
  const int rows = min(NBM - first_row, GROUP);
  const int bi = first_row + (bid % per_group) % rows;
  const int bj = (bid % per_group) / rows;
  const int row0 = bi * BM, col0 = bj * BN;
  const int ti = tid / (BN / TN), tj = tid % (BN / TN);
  C += c_off;
  TO acc[TM][TN];
#if D == 0 || HAS_ID
  #pragma unroll
  for (int i = 0; i < TM; ++i)
    #pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = IDENTITY;
#endif
#if D > 0
#if EXACT
  /* each thread's first run; the others at fixed offsets from it */
  A += a_off + (row0 + A_ROW(0)) * D + A_COL(0);
  B += B_ROW(0) * M + col0 + B_COL(0);
#else
  A += a_off;
#endif
  TA an[A_PER][4];
  TB bn[B_PER][4];
@@PROLOGUE@@
@@PHASES@@
#endif
  #pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int r = row0 + (i / RA) * (BM * RA / TM) + RA * ti + i % RA;
    #pragma unroll
    for (int h = 0; h < TN / RB; ++h) {
      const int c = col0 + h * (BN * RB / TN) + RB * tj;
#if VEC_STORE
      if (EXACT || (r < COUNT && c < M))
        *(__global TO4*)&C[r * M + c] = (TO4)(acc[i][h * 4], acc[i][h * 4 + 1],
                                              acc[i][h * 4 + 2], acc[i][h * 4 + 3]);
#else
      #pragma unroll
      for (int u = 0; u < RB; ++u)
        if (EXACT || (r < COUNT && c + u < M)) C[r * M + c + u] = acc[i][h * RB + u];
#endif
    }
  }
}
"""


def _load(kt: str, index: bool) -> str:
    """Registers ``an``/``bn`` from the k-tile ``kt``; ``index``: A and B have not been
    advanced (the k-tile's offset is added to every load), else they point at it."""
    ka = f" + ({kt}) * BK" if index else ""
    kb = f" + ({kt}) * (BK * M)" if index else ""
    # non-dividing: rows and columns clamped (their results are not stored); k clamped
    # only where the last k-tile is partial (relative to the k-tile's start)
    kk = f"(({kt}) * BK)"
    return f"""  {{
  #pragma unroll
  for (int s = 0; s < A_PER; ++s) {{
    if (A_OK(s)) {{
#if EXACT
      const TA4 v = *(__global const TA4*)&A[(A_ROW(s) - A_ROW(0)) * D + A_COL(s) - A_COL(0){ka}];
      an[s][0] = v.s0; an[s][1] = v.s1; an[s][2] = v.s2; an[s][3] = v.s3;
#else
      const int r = min(row0 + A_ROW(s), COUNT - 1) * D{ka};
#if A_VEC
#if KREM == BK
      const int k = A_COL(s);
#else
      const int k = min(A_COL(s), D - 4 - {kk});
#endif
      const TA4 v = *(__global const TA4*)&A[r + k];
      an[s][0] = v.s0; an[s][1] = v.s1; an[s][2] = v.s2; an[s][3] = v.s3;
#else
      #pragma unroll
      for (int u = 0; u < 4; ++u) an[s][u] = A[r + min(A_COL(s) + u, D - 1 - {kk})];
#endif
#endif
    }}
  }}
  #pragma unroll
  for (int s = 0; s < B_PER; ++s) {{
    if (B_OK(s)) {{
#if EXACT
      const TB4 v = *(__global const TB4*)&B[(B_ROW(s) - B_ROW(0)) * M + B_COL(s) - B_COL(0){kb}];
      bn[s][0] = v.s0; bn[s][1] = v.s1; bn[s][2] = v.s2; bn[s][3] = v.s3;
#else
#if KREM == BK
      const int k = (B_ROW(s){ka}) * M;
#else
      const int k = (min(B_ROW(s), D - 1 - {kk}){ka}) * M;
#endif
#if B_VEC
      const TB4 v = *(__global const TB4*)&B[k + min(col0 + B_COL(s), M - 4)];
      bn[s][0] = v.s0; bn[s][1] = v.s1; bn[s][2] = v.s2; bn[s][3] = v.s3;
#else
      #pragma unroll
      for (int u = 0; u < 4; ++u) bn[s][u] = B[k + min(col0 + B_COL(s) + u, M - 1)];
#endif
#endif
    }}
  }}
  }}
"""


def _phase(shape: str, first: bool) -> str:
    """The body of phase ``l`` (local buffer ``cur``): the next k-tile's loads, the
    k-steps of this one, the next k-tile's stores, one barrier."""
    index = shape == "i"
    advance = "" if index else "      A += BK; B += BK * M;\n"
    load = advance + _load("l + 1", index)
    store = _store("1 - cur")
    steps = []
    if first:
        steps.append(_step("cur", "0", True))
    q0 = "1" if first else "0"
    unrolled = (f"      #pragma unroll\n      for (int q = {q0}; q < BK; ++q)\n"
                + _step("cur", "q", False))
    tail = f"      for (int q = {q0}; q < KREM; ++q)\n" + _step("cur", "q", False)
    steps.append(f"#if KREM == BK\n{unrolled}#else\n    if (l + 1 < PHASES) {{\n"
                 f"{unrolled}    }} else {{\n{tail}    }}\n#endif\n")
    compute = "".join(steps)
    if shape == "d":      # loaded and stored before the k-steps: nothing held across them
        return (f"    if (l + 1 < PHASES) {{\n{load}{store}    }}\n{compute}"
                "    barrier(CLK_LOCAL_MEM_FENCE);\n")
    return (f"    if (l + 1 < PHASES) {{\n{load}    }}\n{compute}"
            f"    if (l + 1 < PHASES) {{\n{store}    }}\n    barrier(CLK_LOCAL_MEM_FENCE);\n")


@functools.cache
def zip_reduce_source(shape: str, has_identity: bool) -> str:
    """The kernel of ``shape`` (``r``: the next k-tile held in registers
    across the k-steps, A and B advanced once per k-tile; ``i``: the same with the
    k-tile's offset added to every load; ``d``: the next k-tile loaded and stored to
    local memory before the k-steps). Shape ``l`` (Lift's structure) is written out per
    tiling by :func:`mcl.skel.allpairs_lift.lift_source`."""
    prologue = _load("0", True) + _store("0") + "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    if has_identity:
        phases = ("  for (int l = 0; l < PHASES; ++l) {\n    const int cur = l & 1;\n"
                  + _phase(shape, False) + "  }\n")
    else:   # the first phase peeled: its first k starts the reduction
        phases = ("  {\n    const int l = 0, cur = 0;\n" + _phase(shape, True) + "  }\n"
                  "  for (int l = 1; l < PHASES; ++l) {\n    const int cur = l & 1;\n"
                  + _phase(shape, False) + "  }\n")
    return _KERNEL.replace("@@PROLOGUE@@", prologue).replace("@@PHASES@@", phases)


#: the zip-reduce as a plain kernel, an element of C a work-item: what AllPairs runs where
#: the compiler builds the register-blocked kernel wrong
#: (:func:`mcl.opencl.device.miscompiles_tiled_kernels`)
PLAIN_KERNEL = r"""
__kernel void skel_allpairs_plain(__global const TA* A, __global const TB* B,
                                  __global TO* C, const int a_off, const int c_off,
                                  const int count)
{
  const int col = get_global_id(0), r = get_global_id(1);
  if (r >= count || col >= M)
    return;
  A += a_off + r * D;
#if HAS_ID
  TO acc = IDENTITY;
  for (int k = 0; k < D; ++k)
    acc = REDUCE(acc, ZIP(A[k], B[k * M + col]));
#elif D > 0
  TO acc = ZIP(A[0], B[col]);
  for (int k = 1; k < D; ++k)
    acc = REDUCE(acc, ZIP(A[k], B[k * M + col]));
#endif
#if HAS_ID || D > 0
  C[c_off + r * M + col] = acc;
#endif
}
"""


def _square_group(devs, g: int) -> int:
    """The side of the square work-group of the plain kernels: 16, 8 where device ``g``
    takes fewer than 256 work-items."""
    return 16 if devs.device(g).max_work_group_size >= 256 else 8


def _literal(value) -> str:
    """``value`` (a Python or numpy number) as an OpenCL C literal."""
    if isinstance(value, (bool, np.bool_)):
        return str(int(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    v = float(value)
    if v != v:
        return "NAN"
    if v in (float("inf"), float("-inf")):
        return "INFINITY" if v > 0 else "(-INFINITY)"
    return repr(v)


class AllPairs(Skeleton):
    """``AllPairs(f)(A, B, *extras)`` with ``f(a, b)`` over row i of A and column j of
    B; or ``AllPairs(zip=z, reduce=r, identity=None, tile=None)(A, B)``: ``C[i, j] =
    r``-reduction of ``z(A[i, k], B[k, j])`` over k (``identity`` needed when A has no
    columns; ``tile``: the register-blocked kernel's tiles, e.g. "128x128x16/8x8",
    see :class:`Tiling`; ``options``: its OpenCL build options, by default those of the
    environment variable ``MCL_SKEL_ALLPAIRS_OPTIONS``)."""

    name = "AllPairs"
    inputs = 2

    def __init__(self, func=None, *, zip=None, reduce=None, identity=None, tile=None,
                 options=None):
        check_identity_number(identity, "AllPairs")
        self.identity = identity
        self.tile = tile or os.environ.get("MCL_SKEL_ALLPAIRS_TILE") or DEFAULT_TILE
        parse_tiling(self.tile)
        if options is None:
            options = os.environ.get("MCL_SKEL_ALLPAIRS_OPTIONS", "").split()
        elif isinstance(options, str):      # "-cl-mad-enable -cl-fast-relaxed-math"
            options = options.split()
        #: OpenCL build options of the zip-reduce kernel (e.g. -cl-mad-enable)
        self.options = tuple(options)
        if func is not None:
            if zip is not None or reduce is not None:
                raise skel_error("bad-arguments", "give AllPairs either a function or "
                                 "zip= and reduce=, not both")
            super().__init__(func)
            self.zip = self.reduce = None
            return
        if zip is None or reduce is None:
            raise skel_error("bad-arguments", "AllPairs needs a function, or both zip= and "
                             "reduce=")
        self.zip = from_source(getattr(zip, "func", zip), "AllPairs zip")
        self.reduce = from_source(getattr(reduce, "func", reduce), "AllPairs reduce")
        for f in (self.zip, self.reduce):
            if len(f.params) != 2:
                raise skel_error("bad-function", f"the AllPairs function '{f.name}' must "
                                 "take two elements")
            check_parameters(f, "AllPairs", 2)
        self.func = self.zip
        self.funcs = [self.zip] + ([self.reduce] if self.reduce.name != self.zip.name else [])
        self._kernels = {}

    def _call(self, a: Matrix, b: Matrix, *args) -> Matrix:
        for x in (a, b):
            if not isinstance(x, Matrix):
                raise skel_error("needs-matrix", f"AllPairs takes two matrices, not "
                                 f"{type(x).__name__}")
        if a.cols != b.rows:
            raise skel_error("size-mismatch", f"AllPairs pairs the rows of A {a.shape} with "
                             f"the columns of B {b.shape}: A's columns and B's rows differ")
        b._same_devices(a._devs)
        devs = a._devs
        extras = self.extras(args) if self.zip is None else self.extras_none(args)
        if self.zip is not None:
            out_dtype = self.reduce.return_dtype
        else:
            out_dtype = self.func.return_dtype
        if out_dtype is None:
            raise skel_error("bad-function", "the AllPairs function must return an element "
                             "type (float, int, ...)")
        if self.zip is not None:
            self.check_elements(a, b, func=self.zip)
            if self.identity is not None:
                identity_value(self.identity, out_dtype, "AllPairs reduce", self.reduce)
        if a.cols == 0 and self.zip is not None and self.identity is None and a.rows \
                and b.cols:
            raise skel_error("empty-reduce", "AllPairs zip-reduce over rows of no element "
                             "has no result", hint="give AllPairs(..., identity=...)")
        if a.distribution is None or a.distribution.kind not in ("block", "single"):
            a.distribution = block()
        single_on = a.distribution.device if a.distribution.kind == "single" else None
        if b.distribution is None or not (b.distribution.kind == "copy" or (
                single_on is not None and b.distribution.kind == "single"
                and b.distribution.device == single_on)):
            b.distribution = copy()
        pa, pb = a._ensure(), b._ensure()
        self.ensure_extras(extras)
        n, d, m = a.rows, a.cols, b.cols
        out = _new_like((n, m), out_dtype, a.distribution, devs,
                        [p.spec for p in pa], f"the output of AllPairs '{self.func.name}'")
        key = ("allpairs", devs.generation, a.dtype, b.dtype, out_dtype, n, d, m,
               a._dist.layout(), b._dist.layout())
        plan = self.plan(key, lambda: self._plan(devs, pa, pb, out, a, b, out_dtype, extras))
        bparts = {p.device: p for p in pb}
        self.run_plan(devs, plan, lambda i: (pa[i].buffer, bparts[pa[i].device].buffer,
                                             out._parts[i].buffer), extras,
                      f"running AllPairs '{self.func.name}'")
        out._written(out._parts)
        return out

    def _plan(self, devs, pa, pb, out, a, b, out_dtype, extras) -> list:
        """The launches of a call: per part of A on this process's devices, the kernel
        (generic or zip-reduce) with its grid and the part's offsets (the buffers come
        at each call)."""
        bparts = {p.device: p for p in pb}
        d, m = a.cols, b.cols
        plan = []
        for i, (p, o) in enumerate(zip(pa, out._parts, strict=True)):
            s = p.spec
            count = s.own_hi - s.own_lo
            if not devs.is_local(s.device) or count == 0 or m == 0:
                continue
            run = self.zip_reduce_launch if self.zip is not None else self.generic_launch
            k, size, local, scalars = run(devs, s.device, s, o.spec, a, b, out_dtype,
                                          count, d, m)
            plan.append(self.part_launch(devs, i, s.device, k, size, local,
                                         [p.buffer, bparts[s.device].buffer, o.buffer],
                                         scalars, extras))
        return plan

    def extras_none(self, args):
        if args:
            raise skel_error("bad-arguments", "the zip-reduce AllPairs takes no additional "
                             "arguments")
        return []

    def generic_launch(self, devs, g, s, os_, a, b, out_dtype, count, d, m):
        """The generic kernel on device ``g`` for the part ``s`` of A (C's part
        ``os_``): kernel, grid, work-group and scalar arguments."""
        ta, tb, to = a.ctype, b.ctype, ctype_of(out_dtype)
        prelude = matrix_type(ta) + (matrix_type(tb) if tb != ta else "") + _HELPERS
        body = (f"__kernel void skel_allpairs(__global const {ta}* A, __global const {tb}* B, "
                f"__global {to}* C, const int a_lo, const int c_lo, const int first, "
                f"const int count, const int d, const int m{self.extra_params()})\n{{\n"
                "  int col = get_global_id(0), r = get_global_id(1);\n"
                "  if (r < count && col < m) {\n"
                f"    {ta}_matrix_t am; am.data = A; am.rows = 0; am.cols = d; "
                "am.row = first + r; am.col = 0; am.lo = a_lo; am.len = d;\n"
                f"    {tb}_matrix_t bm; bm.data = B; bm.rows = d; bm.cols = m; bm.row = 0; "
                "bm.col = col; bm.lo = 0; bm.len = d;\n"
                f"    C[(first + r - c_lo) * m + col] = {cname(self.func)}(am, bm"
                f"{self.extra_names()});\n  }}\n}}\n")
        k = self.kernel(devs, g, prelude, body, "skel_allpairs")
        tile = _square_group(devs, g)
        return (k, (round_up(m, tile), round_up(count, tile)), (tile, tile),
                [np.int32(s.lo), np.int32(os_.lo), np.int32(s.own_lo), np.int32(count),
                 np.int32(d), np.int32(m)])

    def tiling(self, devs, g: int, ia: int, ib: int) -> Tiling:
        """The tiles for device ``g``: the one asked for (``tile=``, else the environment
        variable ``MCL_SKEL_ALLPAIRS_TILE``, else :data:`DEFAULT_TILE`) if the device's
        work-group size and local memory allow it, else the first fallback that fits."""
        dev = devs.device(g)
        code = parse_tiling(self.tile).shape
        for text in (self.tile, *FALLBACK_TILES):
            t = dataclasses.replace(parse_tiling(text), shape=code)
            if code == "l":     # the work-group shape follows from the tiles
                t = dataclasses.replace(t, lx=0)
            if t.threads <= dev.max_work_group_size and \
                    t.local_bytes(ia, ib) <= dev.local_mem_size:
                return t
        raise skel_error("out-of-memory", f"no AllPairs tiling fits the local memory of "
                         f"{devs.name(g)}")

    def zip_reduce_launch(self, devs, g, s, os_, a, b, out_dtype, count, d, m):
        """The register-blocked zip-reduce kernel on device ``g`` for the part ``s`` of A
        (C's part ``os_``): kernel, grid, work-group and scalar arguments."""
        ta, tb, to = a.ctype, b.ctype, ctype_of(out_dtype)
        a_off = (s.own_lo - s.lo) * d
        c_off = (s.own_lo - os_.lo) * m
        if cldevice.miscompiles_tiled_kernels(devs.device(g)):
            return self.plain_launch(devs, g, (ta, tb, to), a_off, c_off, count, d, m)
        t = self.tiling(devs, g, a.dtype.itemsize, b.dtype.itemsize)
        red = cname(self.reduce)
        a_vec = int(d % 4 == 0 and a_off % 4 == 0)
        identity = self.identity_text(to)
        start = f"{red}({identity}, v)" if self.identity is not None else "v"
        macros = {"BM": t.bm, "BN": t.bn, "BK": t.bk, "TM": t.tm, "TN": t.tn,
                  "LX": t.local_shape[0], "PAD": t.pad, "GROUP": GROUP, "D": d, "M": m,
                  "A_VEC": a_vec, "B_VEC": int(m % 4 == 0),
                  # no bounds to test, every load and store a vector
                  "EXACT": int(count % t.bm == 0 and m % t.bn == 0 and d % t.bk == 0
                               and a_vec == 1),
                  "VEC_STORE": int(min(t.tn, 4) == 4 and m % 4 == 0 and c_off % 4 == 0),
                  "TA": ta, "TB": tb, "TO": to, "TA4": f"{ta}4", "TB4": f"{tb}4",
                  "TO4": f"{to}4", "TA2": f"{ta}2", "TB2": f"{tb}2", "ZIP": cname(self.zip),
                  "REDUCE": red, "IDENTITY": identity, "START(v)": start}
        # the row count a compile-time constant too (a program per size anyway)
        macros.update(COUNT=count, HAS_ID=int(self.identity is not None),
                      # NVIDIA's compiler ignores a register limit (-cl-nv-maxrregcount)
                      # for a kernel that requires its work-group size
                      REQD=int(not any(o.startswith("-cl-nv-maxrregcount")
                                       for o in self.options)))
        if t.shape == "l":
            source = lift_source(t.bm, t.bn, t.bk, t.tm, t.tn, t.pad, self.identity is not None)
        else:
            source = zip_reduce_source(t.shape or "r", self.identity is not None)
        # after the user's functions, so that these names cannot change their text
        defines = "".join(f"#define {k} {v}\n" for k, v in macros.items())
        k = self.kernel(devs, g, "", defines + source, "skel_allpairs_zr", self.options)
        lx, ly = t.local_shape
        if t.shape == "l":      # group (column block, row block)
            size = (-(-m // t.bn) * lx, -(-count // t.bm) * ly)
        else:
            size = (-(-count // t.bm) * -(-m // t.bn) * lx, ly)
        return k, size, (lx, ly), [np.int32(a_off), np.int32(c_off), np.int32(count)]

    def identity_text(self, to: str) -> str:
        """The reduction's identity as OpenCL text of the result type ``to`` (0 where
        there is none: the first k starts the reduction)."""
        return f"(({to})({_literal(self.identity)}))" if self.identity is not None \
            else f"(({to})0)"

    def plain_launch(self, devs, g, types, a_off, c_off, count, d, m):
        """The zip-reduce as :data:`PLAIN_KERNEL` on device ``g``: an element of C a
        work-item, in work-groups of 16 x 16 (8 x 8 where a device takes fewer)."""
        ta, tb, to = types
        identity = self.identity_text(to)
        macros = {"TA": ta, "TB": tb, "TO": to, "D": d, "M": m, "ZIP": cname(self.zip),
                  "REDUCE": cname(self.reduce), "IDENTITY": identity,
                  "HAS_ID": int(self.identity is not None)}
        defines = "".join(f"#define {k} {v}\n" for k, v in macros.items())
        k = self.kernel(devs, g, "", defines + PLAIN_KERNEL, "skel_allpairs_plain",
                        self.options)
        tile = _square_group(devs, g)
        return (k, (round_up(m, tile), round_up(count, tile)), (tile, tile),
                [np.int32(a_off), np.int32(c_off), np.int32(count)])
