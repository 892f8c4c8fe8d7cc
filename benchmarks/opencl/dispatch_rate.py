"""How fast the H100 starts work-groups: kernels that do (almost) nothing, launched
with 2^14 to 2^20 work-groups of 32 to 1024 work-items, timed with OpenCL profiling
events (median of --repeats after warm-up). The slope of time over work-groups is
the dispatch rate, the time at few work-groups the launch's fixed cost; a kernel
whose work-groups do less than the dispatch takes is bound by it
(mcl.analyses.timing's ``block dispatch`` part, hopper.target's
``block_dispatch_rate``). One more kernel, vector_add with one element per
work-item (16 M elements), shows the rate against real work.

    python benchmarks/opencl/dispatch_rate.py --out DIR

Exits 2 without an NVIDIA OpenCL device.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from probe_timing import line_fit, median_time, probe_setup, save  # noqa: E402

SOURCE = r"""
__kernel void empty(__global float* o, int never) {
  if (get_global_id(0) == never) o[0] = 1.0f;
}
__kernel void add(__global float* c, __global const float* a, __global const float* b, int n) {
  int i = get_global_id(0);
  if (i < n) c[i] = a[i] + b[i];
}
"""


def main() -> int:
    found = probe_setup(__doc__, "dispatch_rate", 20)
    if found is None:
        return 2
    args, dev, ctx, q = found
    import pyopencl as cl

    prg = cl.Program(ctx, SOURCE).build()
    empty, add = cl.Kernel(prg, "empty"), cl.Kernel(prg, "add")
    out = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4)
    rows = []

    def timed(knl, groups, local, argv):
        return median_time(q, knl, (groups * local,), (local,), argv, args.repeats)

    for local in (32, 64, 128, 256, 384, 512, 640, 768, 1024):
        points = []
        for log2 in range(14, 21):
            groups = 1 << log2
            t = timed(empty, groups, local, (out, np.int32(-1)))
            points.append((groups, t))
            rows.append({"kernel": "empty", "local": local, "groups": groups, "median_s": t})
        slope, fixed = line_fit(points)
        rows.append({"kernel": "empty", "local": local, "fit": True,
                     "groups_per_s": 1 / slope, "fixed_s": fixed})
        print(f"empty, {local:4d} work-items: {1 / slope / 1e9:6.3f} work-groups per ns, "
              f"fixed {fixed * 1e6:5.2f} us; at 2^20 groups {points[-1][1] * 1e6:8.1f} us",
              flush=True)
    n = 1 << 24
    bufs = [cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 * n) for _ in range(3)]
    for b in bufs:
        cl.enqueue_fill_buffer(q, b, np.float32(1.0), 0, 4 * n)
    for local in (32, 64, 128, 256, 1024):
        t = timed(add, n // local, local, (*bufs, np.int32(n)))
        rows.append({"kernel": "vector_add", "local": local, "groups": n // local, "median_s": t})
        print(f"vector_add 2^24, {local:4d} work-items: {t * 1e6:8.1f} us "
              f"({n // local} work-groups)", flush=True)
    save(args.out, "dispatch_rate.json", {"device": dev.name, "rows": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
