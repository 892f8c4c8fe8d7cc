"""AllPairs: a function of every pair (row i of A, column j of B), C[i, j].

The generic form takes a function of two ``<type>_matrix_t`` values and reads them
with ``getElementFromRow(a, k)``, ``getElementFromCol(b, k)`` and ``width(a)``. The
specialised zip-reduce form, ``AllPairs(zip=..., reduce=...)``, knows the access
pattern and stages tiles of A and B in local memory (matrix multiplication is
``zip = *``, ``reduce = +``). On several devices A and C are block distributed
and B is copied to every device (SkelCL)."""

from __future__ import annotations

import numpy as np

from mcl.skel.container import Matrix
from mcl.skel.distribution import block, copy
from mcl.skel.errors import skel_error
from mcl.skel.functions import ctype_of, from_source
from mcl.skel.kernel import Skeleton, cname, matrix_type, round_up
from mcl.skel.skeletons import _new_like

_HELPERS = """#define getElementFromRow(m, k) ((m).data[((m).row - (m).lo) * (m).cols + (k)])
#define getElementFromCol(m, k) ((m).data[(k) * (m).cols + (m).col])
#define width(m) ((m).len)
"""

#: the specialised kernel: a work-group computes a TM x TN block of C from TK-wide
#: slices of A and B staged in local memory; each of its (TN/RN) x (TM/RM) work-items
#: computes RM x RN elements in registers (strided, so local reads do not conflict)
TM, TN, TK, RM, RN = 64, 64, 16, 4, 4

_ZIP_REDUCE = """
__kernel void skel_allpairs_zr(__global const TA* A, const int a_lo, __global const TB* B,
                               __global TO* C, const int c_lo, const int first,
                               const int count, const int d, const int m)
{
  __local TA As[TK][TM];
  __local TB Bs[TK][TN];
  const int tx = get_local_id(0), ty = get_local_id(1);
  const int threads = (TM / RM) * (TN / RN);
  const int tid = ty * (TN / RN) + tx;
  const int row0 = get_group_id(1) * TM, col0 = get_group_id(0) * TN;
  TO acc[RM][RN];
  INIT
  for (int t = 0; t < d; t += TK) {
    for (int e = tid; e < TM * TK; e += threads) {
      int r = e / TK, k = e % TK;
      As[k][r] = (row0 + r < count && t + k < d)
          ? A[(first + row0 + r - a_lo) * d + t + k] : (TA)0;
    }
    for (int e = tid; e < TK * TN; e += threads) {
      int k = e / TN, c = e % TN;
      Bs[k][c] = (t + k < d && col0 + c < m) ? B[(t + k) * m + col0 + c] : (TB)0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const int kmax = min(TK, d - t);
    for (int k = 0; k < kmax; ++k) {
      TA a[RM];
      TB b[RN];
      for (int i = 0; i < RM; ++i) a[i] = As[k][ty + i * (TM / RM)];
      for (int j = 0; j < RN; ++j) b[j] = Bs[k][tx + j * (TN / RN)];
      for (int i = 0; i < RM; ++i)
        for (int j = 0; j < RN; ++j) {
          TO v = ZIP(a[i], b[j]);
          acc[i][j] = COMBINE;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  for (int i = 0; i < RM; ++i) {
    int r = row0 + ty + i * (TM / RM);
    for (int j = 0; j < RN; ++j) {
      int c = col0 + tx + j * (TN / RN);
      if (r < count && c < m) C[(first + r - c_lo) * m + c] = acc[i][j];
    }
  }
}
"""


class AllPairs(Skeleton):
    """``AllPairs(f)(A, B, *extras)`` with ``f(a, b)`` over row i of A and column j of
    B; or ``AllPairs(zip=z, reduce=r, identity=None)(A, B)``: ``C[i, j] = r``-reduction
    of ``z(A[i, k], B[k, j])`` over k (``identity`` needed when A has no columns)."""

    name = "AllPairs"
    inputs = 2

    def __init__(self, func=None, *, zip=None, reduce=None, identity=None):
        self.identity = identity
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
        bparts = {p.device: p for p in pb}
        for p, o in zip(pa, out._parts, strict=True):
            s = p.spec
            count = s.own_hi - s.own_lo
            if not devs.is_local(s.device) or count == 0 or m == 0:
                continue
            bp = bparts[s.device]
            if self.zip is not None:
                self.run_zip_reduce(devs, s.device, p, bp, o, a, b, out_dtype, count, d, m)
            else:
                self.run_generic(devs, s.device, p, bp, o, a, b, out_dtype, count, d, m,
                                 extras)
        out._written(out._parts)
        return out

    def extras_none(self, args):
        if args:
            raise skel_error("bad-arguments", "the zip-reduce AllPairs takes no additional "
                             "arguments")
        return []

    def run_generic(self, devs, g, p, bp, o, a, b, out_dtype, count, d, m, extras):
        ta, tb, to = a.ctype, b.ctype, ctype_of(out_dtype)
        prelude = matrix_type(ta) + (matrix_type(tb) if tb != ta else "") + _HELPERS
        body = (f"__kernel void skel_allpairs(__global const {ta}* A, const int a_lo, "
                f"__global const {tb}* B, __global {to}* C, const int c_lo, const int first, "
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
        tile = 16 if devs.device(g).max_work_group_size >= 256 else 8
        s = p.spec
        self.launch(devs, g, k, (round_up(m, tile), round_up(count, tile)), (tile, tile),
                    [p.buffer, np.int32(s.lo), bp.buffer, o.buffer, np.int32(o.spec.lo),
                     np.int32(s.own_lo), np.int32(count), np.int32(d), np.int32(m),
                     *self.extra_values(extras, devs, g)],
                    f"running AllPairs '{self.func.name}'")

    def run_zip_reduce(self, devs, g, p, bp, o, a, b, out_dtype, count, d, m):
        ta, tb, to = a.ctype, b.ctype, ctype_of(out_dtype)
        if self.identity is not None:
            init = (f"for (int i = 0; i < RM; ++i) for (int j = 0; j < RN; ++j) "
                    f"acc[i][j] = ({to})({self.identity!r});")
            combine = f"{cname(self.reduce)}(acc[i][j], v)"
        else:
            init = ""
            combine = f"(t > 0 || k > 0) ? {cname(self.reduce)}(acc[i][j], v) : v"
        body = (_ZIP_REDUCE.replace("TA", ta).replace("TB", tb).replace("TO", to)
                .replace("INIT", init).replace("COMBINE", combine)
                .replace("ZIP(", f"{cname(self.zip)}("))
        tm, tn, tk, rm, rn = TM, TN, TK, RM, RN
        if devs.device(g).max_work_group_size < (tm // rm) * (tn // rn):
            tm, tn, rm, rn = 16, 16, 2, 2       # 64 work-items
        prelude = "".join(f"#define {k} {v}\n" for k, v in
                          (("TM", tm), ("TN", tn), ("TK", tk), ("RM", rm), ("RN", rn)))
        k = self.kernel(devs, g, prelude, body, "skel_allpairs_zr")
        s = p.spec
        groups = ((m + tn - 1) // tn, (count + tm - 1) // tm)
        self.launch(devs, g, k, (groups[0] * (tn // rn), groups[1] * (tm // rm)),
                    (tn // rn, tm // rm),
                    [p.buffer, np.int32(s.lo), bp.buffer, o.buffer, np.int32(o.spec.lo),
                     np.int32(s.own_lo), np.int32(count), np.int32(d), np.int32(m)],
                    f"running AllPairs '{self.zip.name}'/'{self.reduce.name}'")
