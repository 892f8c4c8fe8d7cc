"""What a warp's store costs by the sectors it touches: kernels that write (or read)
2^24 floats once, each work-item one element, a warp's 32 lanes spread over R rows of
the array (R = 1 .. 32: row g % R, column g / R of an R x N/R layout), so that a warp's
request touches max(R, 4) sectors of 32 B while the kernel moves the same bytes. The
times (median of --repeats launches, OpenCL events) show how the load-store path
serves a request of many sectors: a store of 32 sectors of 4 B each (a transpose
written naively) against a load of as many, and against the sectors' bytes at the
memory's bandwidth. mcl.analyses.timing's ``memory instructions`` part counts a
request's cost from them (the target file's ``store_sector_cycles``).

    python benchmarks/opencl/store_probe.py --out DIR

Exits 2 without an NVIDIA OpenCL device.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from probe_timing import median_time, probe_setup, save  # noqa: E402

SOURCE = r"""
__kernel void store_rows(__global float* out, int rows, int cols) {
  int g = get_global_id(0);
  out[(g % rows) * cols + g / rows] = (float)g;
}
__kernel void store_rows2(__global float2* out, int rows, int cols) {
  int g = get_global_id(0);
  out[(g % rows) * cols + g / rows] = (float2)(g, g);
}
__kernel void store_rows4(__global float4* out, int rows, int cols) {
  int g = get_global_id(0);
  out[(g % rows) * cols + g / rows] = (float4)(g, g, g, g);
}
__kernel void load_rows(__global float* out, __global const float* in, int rows, int cols) {
  int g = get_global_id(0);
  out[g] = in[(g % rows) * cols + g / rows];
}
__kernel void copy(__global float* out, __global const float* in) {
  int g = get_global_id(0);
  out[g] = in[g];
}
"""

#: elements written (and read)
N = 1 << 24
#: work-items per work-group
LOCAL = 256
#: elements a padded row is longer than N / R (its rows not a power of 2 apart)
PAD = 40


def main() -> int:
    found = probe_setup(__doc__, "store_probe", 20)
    if found is None:
        return 2
    args, dev, ctx, q = found
    import pyopencl as cl

    prg = cl.Program(ctx, SOURCE).build()
    store, load, copy, store2, store4 = (
        cl.Kernel(prg, k) for k in ("store_rows", "load_rows", "copy", "store_rows2",
                                    "store_rows4"))
    # room for rows padded by PAD elements and for 16 B a work-item
    a, b = (cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 16 * N + 4 * 32 * PAD) for _ in range(2))
    for buf in (a, b):
        cl.enqueue_fill_buffer(q, buf, np.float32(1.0), 0, 16 * N + 4 * 32 * PAD)
    rows = []

    def timed(knl, argv):
        return median_time(q, knl, (N,), (LOCAL,), argv, args.repeats)

    t = timed(copy, (a, b))
    rows.append({"kernel": "copy", "median_s": t})
    print(f"copy: {t * 1e6:7.1f} us", flush=True)
    requests = N // 32
    for r in (1, 2, 4, 8, 16, 32):
        sectors = max(r, 4)
        for name, knl, argv in (("store", store, (a, np.int32(r), np.int32(N // r))),
                                ("load", load, (a, b, np.int32(r), np.int32(N // r)))):
            t = timed(knl, argv)
            rows.append({"kernel": name, "rows": r, "sectors_per_request": sectors,
                         "requests": requests, "median_s": t})
            print(f"{name} over {r:2d} rows ({sectors:2d} sectors a request): "
                  f"{t * 1e6:7.1f} us, {requests * sectors / t / 1e9:6.1f} sectors per ns",
                  flush=True)
    # the same 32 sectors a request with rows PAD elements longer (not 2^k bytes apart:
    # other DRAM banks and L2 slices), and with 8 and 16 B a lane (whole runs a sector)
    for width, knl in ((1, store), (2, store2), (4, store4)):
        for r in (16, 32):
            for pad in (0, PAD):
                cols = N // r + pad
                t = timed(knl, (a, np.int32(r), np.int32(cols)))
                sectors = r * max(1, 32 // r * width * 4 // 32)
                rows.append({"kernel": f"store{width * 4}B", "rows": r, "pad": pad,
                             "sectors_per_request": sectors, "requests": requests,
                             "bytes": N * width * 4, "median_s": t})
                print(f"store of {width * 4:2d} B a lane over {r:2d} rows, pad {pad:2d}: "
                      f"{t * 1e6:7.1f} us, {sectors} sectors a request", flush=True)
    save(args.out, "store_probe.json", {"device": dev.name, "n": N, "local": LOCAL,
                                        "rows": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
