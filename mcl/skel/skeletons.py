"""The element-wise and collective skeletons: Map, Zip, Reduce, Scan.

Map and Zip run on every device that holds a part of their input, each on its own
rows; the output has the input's distribution (block by default; Zip moves
mismatched inputs to block). Reduce reduces each part on its device, gathers the
partial results on the host and combines them in device order; the output is a
one-element Vector on a single device; it also takes a deferred Map or Zip
(``Zip(f).lazy(X, Y)``) and computes its elements in the same kernel (reduce.py).
Scan scans each part on its device, then an implicit map adds the combined totals
of the preceding parts (block output)."""

from __future__ import annotations

import math

import numpy as np

from mcl.skel.container import (
    Container,
    IndexVector,
    Part,
    Vector,
    check_zip_inputs,
    container_class,
)
from mcl.skel.context import Transfer
from mcl.skel.distribution import block, copy
from mcl.skel.errors import skel_error
from mcl.skel.functions import ctype_of
from mcl.skel.kernel import Skeleton, cname, empty_buffer, group_size, round_up
from mcl.skel.reduce import Deferred, Reduce  # noqa: F401  (Reduce lives in reduce.py)
from mcl.skel.transfer import allocate


def _new_like(shape, dtype, dist, devs, specs, what) -> Container:
    """An output container whose parts (``specs``) are allocated on the devices."""
    out = container_class(shape)._blank(devs, tuple(shape), dtype)
    if dist.kind == "copy" and dist.merge is not None:
        dist = copy()       # an output's copies are equal: nothing to merge
    out._dist = out._placed = dist
    row_bytes = math.prod(shape[1:]) * out.dtype.itemsize
    buffers = allocate(devs, specs, row_bytes, what)
    out._parts = [Part(s, b) for s, b in zip(specs, buffers, strict=True)]
    out._host_valid = False
    return out


def _output_dtype(sk: Skeleton, fallback):
    dt = sk.func.return_dtype
    if dt is None:
        raise skel_error("bad-function", f"the {sk.name} function '{sk.func.name}' returns "
                         f"'{sk.func.return_type}', which is not an element type",
                         hint="return float, double, int, ...")
    return dt if dt is not None else fallback


class Map(Skeleton):
    """``Map(f)(X, *extras)``: ``f(x, *extras)`` for every element of a Vector, Matrix
    or IndexVector (whose elements are the indices)."""

    name = "Map"
    inputs = 1

    def lazy(self, *args, **kwargs) -> Deferred:
        """``lazy(x, *extras)``: the call ``self(x, *extras)`` not yet computed: Reduce
        computes it in its own kernel (``Reduce(f)(Map(g).lazy(X))``, no temporary
        container)."""
        self._check_lazy(args, kwargs)
        return Deferred(self, args[:1], args[1:])

    def _call(self, x: Container, *args) -> Container:
        if not isinstance(x, Container):
            raise skel_error("bad-arguments", f"Map takes a Vector or Matrix, not "
                             f"{type(x).__name__}")
        devs = x._devs
        extras = self.extras(args)
        out_dtype = _output_dtype(self, x.dtype)
        self.check_elements(x)
        parts = x._ensure()         # block unless distributed (no block() made per call)
        self.ensure_extras(extras)
        out = _new_like(x.shape, out_dtype, x.distribution, devs, [p.spec for p in parts],
                        f"the output of Map '{self.func.name}'")
        index = isinstance(x, IndexVector)
        key = ("map", devs.generation, index, x.dtype, out_dtype, x.rows, x.row_size,
               x._dist.layout())
        plan = self.plan(key, lambda: self._map_plan(devs, x, parts, out, out_dtype, index,
                                                     extras))
        ipart, opart = parts, out._parts
        self.run_plan(devs, plan, lambda i: (ipart[i].buffer or empty_buffer(
            devs, ipart[i].device), opart[i].buffer), extras, f"running Map '{self.func.name}'")
        out._written(out._parts)
        return out

    def _map_plan(self, devs, x, parts, out, out_dtype, index, extras) -> list:
        tin = "int" if index else x.ctype
        tout = ctype_of(out_dtype)
        elem = "(int)(offset + i)" if index else "in[skip + i]"
        body = (f"__kernel void skel_map(__global const {tin}* in, __global {tout}* out, "
                f"const uint n, const uint skip, const int offset{self.extra_params()})\n"
                f"{{ size_t i = get_global_id(0);\n"
                f"  if (i < n) out[skip + i] = {cname(self.func)}({elem}"
                f"{self.extra_names()}); }}\n")
        rs = x.row_size
        plan = []
        for i, (p, o) in enumerate(zip(parts, out._parts, strict=True)):
            s = p.spec
            n = (s.own_hi - s.own_lo) * rs
            if not devs.is_local(s.device) or n == 0:
                continue
            k = self.kernel(devs, s.device, "", body, "skel_map")
            wg = group_size(devs, s.device)
            plan.append(self.part_launch(
                devs, i, s.device, k, (round_up(n, wg),), (wg,),
                [p.buffer or empty_buffer(devs, s.device), o.buffer],
                [np.uint32(n), np.uint32((s.own_lo - s.lo) * rs), np.int32(s.own_lo * rs)],
                extras))
        return plan


def _zip_distribution(a: Container, b: Container):
    da, db = a.distribution, b.distribution
    if da is None and db is None:
        return block()
    if da is None:
        return db if db.kind != "overlap" else block()
    if db is None or da.same_layout(db):
        return da
    return block()


class Zip(Skeleton):
    """``Zip(f)(X, Y, *extras)``: ``f(x, y, *extras)`` element-wise; X and Y have the
    same shape. Inputs with different distributions are both made block."""

    name = "Zip"
    inputs = 2

    def lazy(self, *args, **kwargs) -> Deferred:
        """``lazy(a, b, *extras)``: the call ``self(a, b, *extras)`` not yet computed:
        Reduce computes it in its own kernel (the dot product
        ``Reduce(add)(Zip(mult).lazy(X, Y))`` reads X and Y once and writes no temporary
        container)."""
        self._check_lazy(args, kwargs)
        return Deferred(self, args[:2], args[2:])

    def _call(self, a: Container, b: Container, *args) -> Container:
        check_zip_inputs(a, b)
        devs = a._devs
        extras = self.extras(args)
        out_dtype = _output_dtype(self, a.dtype)
        self.check_elements(a, b)
        dist = _zip_distribution(a, b)
        for v in (a, b):
            if v.distribution is None or not v.distribution.same_layout(dist):
                v.distribution = dist
        pa, pb = a._ensure(), b._ensure()
        self.ensure_extras(extras)
        out = _new_like(a.shape, out_dtype, dist, devs, [p.spec for p in pa],
                        f"the output of Zip '{self.func.name}'")
        run_zip(self, devs, pa, pb, out._parts, a.row_size, a.ctype, b.ctype,
                ctype_of(out_dtype), extras)
        out._written(out._parts)
        return out


def run_zip(sk: Skeleton, devs, pa, pb, po, row_size, ta, tb, tout, extras) -> None:
    key = ("zip", devs.generation, ta, tb, tout, row_size, tuple(p.spec for p in pa))

    def build():
        body = (f"__kernel void skel_zip(__global const {ta}* a, __global const {tb}* b, "
                f"__global {tout}* out, const uint n, const uint skip{sk.extra_params()})\n"
                f"{{ size_t i = get_global_id(0);\n"
                f"  if (i < n) out[skip + i] = {cname(sk.func)}(a[skip + i], b[skip + i]"
                f"{sk.extra_names()}); }}\n")
        plan = []
        for i, (p, q, o) in enumerate(zip(pa, pb, po, strict=True)):
            s = p.spec
            n = (s.own_hi - s.own_lo) * row_size
            if not devs.is_local(s.device) or n == 0:
                continue
            k = sk.kernel(devs, s.device, "", body, "skel_zip")
            wg = group_size(devs, s.device)
            plan.append(sk.part_launch(
                devs, i, s.device, k, (round_up(n, wg),), (wg,),
                [p.buffer, q.buffer, o.buffer],
                [np.uint32(n), np.uint32((s.own_lo - s.lo) * row_size)], extras))
        return plan

    sk.run_plan(devs, sk.plan(key, build),
                lambda i: (pa[i].buffer, pb[i].buffer, po[i].buffer), extras,
                f"running Zip '{sk.func.name}'")


def merge_into(c: Container, merge, keep: Part, others: list[Part]) -> None:
    """Combine the copies ``others`` into ``keep`` with ``merge`` (leaving copy)."""
    from mcl.skel.transfer import _Source, allocate, fill
    sk = Zip(merge)
    devs = c._devs
    g = keep.device
    rb = c.row_size * c.dtype.itemsize
    for p in others:
        tmp = allocate(devs, [keep.spec], rb, "merging copies")[0]
        fill(c, devs, g, tmp, 0, 0, c.rows,
             [_Source(p.device, 0, c.rows, p.buffer, 0)], "merging copies")
        if devs.is_local(g):
            run_zip(sk, devs, [keep], [Part(keep.spec, tmp)], [keep], c.row_size, c.ctype,
                    c.ctype, c.ctype, [])
            devs.queue(g).finish()


_SCAN = """
__kernel void skel_scan(__global const T* in, const uint skip_in, __global T* out,
                        const uint skip_out, const uint n, __global T* sums, __local T* tmp)
{
  uint lid = get_local_id(0), gid = get_global_id(0), wg = get_local_size(0);
  int ok = gid < n;
  if (ok) tmp[lid] = in[skip_in + gid];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint d = 1; d < wg; d <<= 1) {
    int take = ok && lid >= d;
    T v;
    if (take) v = FUNC(tmp[lid - d], tmp[lid]);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (take) tmp[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (ok) out[skip_out + gid] = tmp[lid];
  if (ok && (lid == wg - 1 || gid == n - 1)) sums[get_group_id(0)] = tmp[lid];
}

__kernel void skel_scan_add(__global T* out, const uint skip, const uint n,
                            __global const T* sums, const uint per)
{
  uint gid = get_global_id(0);
  uint g = gid / per;
  if (gid < n && g > 0) out[skip + gid] = FUNC(sums[g - 1], out[skip + gid]);
}

__kernel void skel_scan_prefix(__global T* out, const uint skip, const uint n, const T before)
{
  uint gid = get_global_id(0);
  if (gid < n) out[skip + gid] = FUNC(before, out[skip + gid]);
}
"""


class Scan(Skeleton):
    """``Scan(f)(X)``: the inclusive prefix combination of a Vector with the associative
    ``f`` (``y[i] = x[0] f ... f x[i]``); the output is block distributed."""

    name = "Scan"
    inputs = 2

    def __init__(self, func):
        super().__init__(func)
        if len(self.func.params) != 2:
            raise skel_error("bad-function", f"the Scan function '{self.func.name}' must "
                             f"take exactly two elements (it takes {len(self.func.params)})")

    def body(self, t: str) -> str:
        return (_SCAN.replace("FUNC", cname(self.func)).replace("T*", f"{t}*")
                .replace("T v", f"{t} v").replace("const T before", f"const {t} before"))

    def _call(self, x: Vector) -> Vector:
        if not isinstance(x, Vector) or isinstance(x, IndexVector):
            raise skel_error("needs-vector", f"Scan takes a Vector, not "
                             f"{type(x).__name__}", hint="scan a Matrix row by row with Map")
        self.check_elements(x, x, exact=True)
        devs = x._devs
        if x.distribution is None or x.distribution.kind not in ("block", "single"):
            x.distribution = block()
        parts = x._ensure()
        out = _new_like(x.shape, x.dtype, x.distribution, devs, [p.spec for p in parts],
                        f"the output of Scan '{self.func.name}'")
        import pyopencl as cl
        reads = []
        # every device's scan is enqueued before the host waits for any part's total
        for p, o in zip(parts, out._parts, strict=True):
            s = p.spec
            n = s.own_hi - s.own_lo
            if n == 0 or not devs.is_local(s.device):
                continue
            self.scan_buffer(devs, s.device, p.buffer, s.own_lo - s.lo, o.buffer,
                             s.own_lo - s.lo, n, x.dtype)
            last = np.empty(1, x.dtype)
            ev = cl.enqueue_copy(devs.queue(s.device), last, o.buffer,
                                 src_offset=(s.own_hi - s.lo - 1) * x.dtype.itemsize,
                                 is_blocking=False)
            devs.log.append(Transfer("download", devs.name(s.device), "host",
                                     x.dtype.itemsize, f"Scan '{self.func.name}': part total",
                                     s.device, None))
            reads.append((s.device, last, ev))
        devs.flush()
        lasts = []
        for g, last, ev in reads:
            ev.wait()
            lasts.append((g, last[0]))
        from mcl.skel.mpi import allgather_values
        lasts = sorted(allgather_values(devs, lasts), key=lambda t: t[0])
        if len(lasts) > 1:
            # the implicit maps: each part combined with the total of all parts before it
            before = self.prefix_totals(devs, [v for _, v in lasts], x.dtype)
            totals = dict(zip([d for d, _ in lasts[1:]], before[:-1], strict=True))
            for o in out._parts:
                s = o.spec
                if s.device in totals and devs.is_local(s.device):
                    k = self.kernel(devs, s.device, "", self.body(x.ctype), "skel_scan_prefix")
                    n = s.own_hi - s.own_lo
                    wg = group_size(devs, s.device)
                    self.launch(devs, s.device, k, (round_up(n, wg),), (wg,),
                                [o.buffer, np.uint32(s.own_lo - s.lo), np.uint32(n),
                                 x.dtype.type(totals[s.device])],
                                f"running Scan '{self.func.name}'")
        out._written(out._parts)
        return out

    def prefix_totals(self, devs, values, dtype) -> list:
        """Inclusive scan of the parts' totals, computed on this rank's first device."""
        import pyopencl as cl
        arr = np.array(values, dtype=dtype)
        g = devs.rank * devs.per_rank
        buf = cl.Buffer(devs.context, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR,
                        hostbuf=arr)
        self.scan_buffer(devs, g, buf, 0, buf, 0, len(arr), dtype)
        cl.enqueue_copy(devs.queue(g), arr, buf, is_blocking=True)
        return list(arr)

    def scan_buffer(self, devs, g, src, skip_in, dst, skip_out, n, dtype) -> None:
        import pyopencl as cl
        t = ctype_of(dtype)
        k = self.kernel(devs, g, "", self.body(t), "skel_scan")
        wg = group_size(devs, g)
        groups = (n + wg - 1) // wg
        item = np.dtype(dtype).itemsize
        sums = cl.Buffer(devs.context, cl.mem_flags.READ_WRITE, groups * item)
        what = f"running Scan '{self.func.name}'"
        self.launch(devs, g, k, (groups * wg,), (wg,),
                    [src, np.uint32(skip_in), dst, np.uint32(skip_out), np.uint32(n), sums,
                     cl.LocalMemory(wg * item)], what)
        if groups > 1:
            self.scan_buffer(devs, g, sums, 0, sums, 0, groups, dtype)
            add = self.kernel(devs, g, "", self.body(t), "skel_scan_add")
            self.launch(devs, g, add, (groups * wg,), (wg,),
                        [dst, np.uint32(skip_out), np.uint32(n), sums, np.uint32(wg)], what)
