"""What the H100's memory delivers at the sizes of the memory-bound case studies:
hand-written probe kernels (exploration, not product code) that move exactly the
compulsory bytes of black_scholes (3 arrays read, 2 written, 4·10⁶ floats each)
and of gesummv (two 4096² matrices and a vector read, a vector written; the two
matrices alone, a copy of as many bytes, and 1 GiB read alone), in
several shapes (one element or a float4 per work-item, grid-stride loops with one
wave of groups, loads in flight per work-item). Each is timed with OpenCL
profiling events (median of --repeats after warm-up) beside the 1 GiB copy that
defines the copy ceiling, so the ratios say how far a generated kernel can get
at that size.

    python benchmarks/opencl/stream_probe.py --out DIR

Exits 2 without an NVIDIA OpenCL device.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from probe_timing import launch_times, probe_setup, save  # noqa: E402

SOURCE = r"""
// black_scholes-shaped traffic: 3 reads, 2 writes per element
__kernel void bs1(__global float* o1, __global float* o2, __global const float* a,
                  __global const float* b, __global const float* c, int n) {
  int i = get_global_id(0);
  if (i < n) { float x = a[i], y = b[i], z = c[i]; o1[i] = x * y + z; o2[i] = x - y * z; }
}
__kernel void bs_stride(__global float* o1, __global float* o2, __global const float* a,
                        __global const float* b, __global const float* c, int n) {
  for (int i = get_global_id(0); i < n; i += get_global_size(0)) {
    float x = a[i], y = b[i], z = c[i]; o1[i] = x * y + z; o2[i] = x - y * z; }
}
__kernel void bs_vec4(__global float4* o1, __global float4* o2, __global const float4* a,
                      __global const float4* b, __global const float4* c, int n4) {
  for (int i = get_global_id(0); i < n4; i += get_global_size(0)) {
    float4 x = a[i], y = b[i], z = c[i]; o1[i] = x * y + z; o2[i] = x - y * z; }
}
__kernel void bs_vec4_2(__global float4* o1, __global float4* o2, __global const float4* a,
                        __global const float4* b, __global const float4* c, int n4) {
  int g = get_global_size(0);
  for (int i = get_global_id(0); i < n4; i += 2 * g) {
    float4 x = a[i], y = b[i], z = c[i];
    int k = i + g; bool two = k < n4;
    float4 x2 = two ? a[k] : 0, y2 = two ? b[k] : 0, z2 = two ? c[k] : 0;
    o1[i] = x * y + z; o2[i] = x - y * z;
    if (two) { o1[k] = x2 * y2 + z2; o2[k] = x2 - y2 * z2; } }
}
// its two halves: the 3 reads alone (48 MB), the 2 writes alone (32 MB)
__kernel void bs_read(__global float* o1, __global float* o2, __global const float4* a,
                      __global const float4* b, __global const float4* c, int n4) {
  float4 s = 0;
  for (int i = get_global_id(0); i < n4; i += get_global_size(0)) s += a[i] * b[i] + c[i];
  if (s.x == -1.0f) o1[get_global_id(0)] = s.y;   // never true: keeps the loads
}
__kernel void bs_write(__global float4* o1, __global float4* o2, __global const float* a,
                       __global const float* b, __global const float* c, int n4) {
  for (int i = get_global_id(0); i < n4; i += get_global_size(0)) {
    float4 v = (float4)(i, i + 1, i + 2, i + 3); o1[i] = v; o2[i] = v + 1.0f; }
}
// gesummv-shaped traffic: y[i] = sum_j A[i,j] x[j] + B[i,j] x[j]; a warp per row
__kernel void gs_warp(__global float* y, __global const float4* A, __global const float4* B,
                      __global const float4* x, int n, __local float* scratch) {
  int w = get_local_id(1), t = get_local_id(0);
  int i = get_group_id(0) * get_local_size(1) + w;
  float s = 0.0f;
  if (i < n) {
    int n4 = n / 4;
    for (int j = t; j < n4; j += 32 * UNROLL) {
      float4 av[UNROLL], bv[UNROLL], xv[UNROLL];
      for (int u = 0; u < UNROLL; u++) { int k = j + 32 * u;
        av[u] = k < n4 ? A[(size_t)i * n4 + k] : 0; bv[u] = k < n4 ? B[(size_t)i * n4 + k] : 0;
        xv[u] = k < n4 ? x[k] : 0; }
      for (int u = 0; u < UNROLL; u++) s += dot(av[u] + bv[u], xv[u]);
    }
  }
  __local float* r = scratch + 32 * w; r[t] = s;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int h = 16; h > 0; h >>= 1) { if (t < h) r[t] += r[t + h]; barrier(CLK_LOCAL_MEM_FENCE); }
  if (t == 0 && i < n) y[i] = r[0];
}
// gesummv's two matrices read and nothing else (what a kernel that only reads them
// reaches at this size), a grid-stride loop over runs of 4
__kernel void gs_read(__global float* y, __global const float4* A, __global const float4* B,
                      int n4) {
  float4 s = 0;
  for (int i = get_global_id(0); i < n4; i += get_global_size(0)) s += A[i] + B[i];
  if (s.x == -1.0f) y[get_global_id(0) % 4096] = s.y;   // never true: keeps the loads
}
__kernel void copy4(__global float4* o, __global const float4* a, int n4) {
  for (int i = get_global_id(0); i < n4; i += get_global_size(0)) o[i] = a[i];
}
"""


CS_SOURCE = r"""
// the same with stores that bypass L2 residency (inline PTX: st.global.cs)
__kernel void bs_vec4_cs(__global float4* o1, __global float4* o2, __global const float4* a,
                         __global const float4* b, __global const float4* c, int n4) {
  for (int i = get_global_id(0); i < n4; i += get_global_size(0)) {
    float4 x = a[i], y = b[i], z = c[i]; float4 r = x * y + z, s = x - y * z;
    asm volatile("st.global.cs.v4.f32 [%0], {%1, %2, %3, %4};" :: "l"(o1 + i),
                 "f"(r.x), "f"(r.y), "f"(r.z), "f"(r.w) : "memory");
    asm volatile("st.global.cs.v4.f32 [%0], {%1, %2, %3, %4};" :: "l"(o2 + i),
                 "f"(s.x), "f"(s.y), "f"(s.z), "f"(s.w) : "memory"); }
}
"""


def main() -> int:
    found = probe_setup(__doc__, "stream_probe", 30)
    if found is None:
        return 2
    args, dev, ctx, q = found
    import pyopencl as cl

    sms = dev.max_compute_units
    mf = cl.mem_flags
    rows: list[dict] = []

    def buf(nbytes):
        b = cl.Buffer(ctx, mf.READ_WRITE, nbytes)
        cl.enqueue_fill_buffer(q, b, np.float32(1.0), 0, nbytes)
        return b

    def timed(name, knl, gsize, lsize, argv, nbytes, note=""):
        ts = launch_times(q, knl, gsize, lsize, argv, args.repeats)
        med = statistics.median(ts)
        row = {"probe": name, "note": note, "global": gsize, "local": lsize,
               "bytes": nbytes, "median_us": med * 1e6, "min_us": min(ts) * 1e6,
               "GBps": nbytes / med / 1e9}
        rows.append(row)
        print(f"{name:28s} {note:24s} {med * 1e6:9.2f} us  {row['GBps']:7.0f} GB/s", flush=True)

    builds = {u: cl.Program(ctx, SOURCE).build(options=[f"-DUNROLL={u}"]) for u in (1, 2, 4, 8)}
    try:  # inline PTX: not every OpenCL compiler takes it
        cs = cl.Program(ctx, CS_SOURCE).build()
    except cl.Error as e:
        print(f"st.global.cs probe left out: {str(e)[:200]}", flush=True)
        cs = None
    prg = builds[1]
    kernels = {}
    for name in ("copy4", "gs_read", "bs1", "bs_stride", "bs_vec4", "bs_vec4_2", "bs_read",
                 "bs_write"):
        kernels[name] = cl.Kernel(prg, name)
    if cs is not None:
        kernels["bs_vec4_cs"] = cl.Kernel(cs, "bs_vec4_cs")
    gs = {u: cl.Kernel(p, "gs_warp") for u, p in builds.items()}
    big = 1 << 28
    a, o = buf(4 * big), buf(4 * big)
    for groups in (sms * 8, sms * 16, sms * 32):
        timed("copy 1 GiB", kernels["copy4"], (groups * 256,), (256,), (o, a, np.int32(big // 4)),
              8 * big, f"{groups} groups")
    del a, o

    n = 4_000_000
    bufs = [buf(4 * n) for _ in range(5)]
    nbytes = 20 * n
    timed("bs 1/work-item", kernels["bs1"], (-(-n // 256) * 256,), (256,),
          (*bufs, np.int32(n)), nbytes)
    for groups in (sms * 4, sms * 8, sms * 16):
        timed("bs grid-stride", kernels["bs_stride"], (groups * 256,), (256,), (*bufs, np.int32(n)),
              nbytes, f"{groups} groups")
    for groups in (sms * 2, sms * 4, sms * 8, -(-n // 4 // 256)):
        timed("bs float4", kernels["bs_vec4"], (groups * 256,), (256,), (*bufs, np.int32(n // 4)),
              nbytes, f"{groups} groups")
        timed("bs float4 x2", kernels["bs_vec4_2"], (groups * 256,), (256,),
              (*bufs, np.int32(n // 4)),
              nbytes, f"{groups} groups")
    for groups in (sms * 4, sms * 8):
        timed("bs reads only", kernels["bs_read"], (groups * 256,), (256,),
              (*bufs, np.int32(n // 4)), 12 * n, f"{groups} groups")
        timed("bs writes only", kernels["bs_write"], (groups * 256,), (256,),
              (*bufs, np.int32(n // 4)), 8 * n, f"{groups} groups")
    if "bs_vec4_cs" in kernels:
        for groups in (sms * 4, -(-n // 4 // 256)):
            timed("bs float4 st.cs", kernels["bs_vec4_cs"], (groups * 256,), (256,),
                  (*bufs, np.int32(n // 4)), nbytes, f"{groups} groups")
    # the driver's own copy of the same traffic (40 MB read, 40 MB written)
    src, dst = buf(8 * n), buf(8 * n)
    for _ in range(3):
        cl.enqueue_copy(q, dst, src)
    ts = []
    for _ in range(args.repeats):
        e = cl.enqueue_copy(q, dst, src)
        e.wait()
        ts.append((e.profile.end - e.profile.start) * 1e-9)
    med = statistics.median(ts)
    rows.append({"probe": "driver copy", "note": "40 MB", "bytes": 16 * n, "median_us": med * 1e6,
                 "GBps": 16 * n / med / 1e9})
    print(f"{'driver copy 40 MB':28s} {'':24s} {med * 1e6:9.2f} us  {16 * n / med / 1e9:7.0f} GB/s")
    del bufs, src, dst

    m = 4096
    y, A, B, x = buf(4 * m), buf(4 * m * m), buf(4 * m * m), buf(4 * m)
    nbytes = 8 * m * m + 8 * m
    for u in (1, 2, 4, 8):
        for warps in (4, 8):
            scratch = cl.LocalMemory(4 * 32 * warps)
            timed("gesummv warp/row float4", gs[u], (32 * (m // warps), warps),
                  (32, warps), (y, A, B, x, np.int32(m), scratch), nbytes,
                  f"unroll {u}, {warps} warps")
    for groups in (sms * 4, sms * 8, sms * 16):
        timed("gesummv reads only", kernels["gs_read"], (groups * 256,), (256,),
              (y, A, B, np.int32(m * m // 4)), 8 * m * m, f"{groups} groups")
    del y, A, B, x
    # a copy of the same bytes (half read, half written) and 1 GiB read alone
    a, o = buf(4 * m * m), buf(4 * m * m)
    for groups in (sms * 8, sms * 16):
        timed("copy 128 MiB", kernels["copy4"], (groups * 256,), (256,),
              (o, a, np.int32(m * m // 4)), 8 * m * m, f"{groups} groups")
    del a, o
    a, b, y = buf(2 * big), buf(2 * big), buf(4 * 4096)
    for groups in (sms * 8, sms * 16):
        timed("read 1 GiB", kernels["gs_read"], (groups * 256,), (256,),
              (y, a, b, np.int32(big // 8)), 4 * big, f"{groups} groups")
    save(args.out, "stream_probe.json", {"device": dev.name, "rows": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
