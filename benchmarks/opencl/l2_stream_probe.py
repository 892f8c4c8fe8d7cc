"""How many bytes a second the L2 delivers to the SMs when it holds the data (the
description's ``l2_link`` bandwidth, the time model's ``l2 bandwidth`` part): a buffer
of --mb megabytes, smaller than the L2, read again and again by every work-group of a
grid that fills the device, each warp a 512-B run of float4 a request, in two ways:

* ``apart``: a grid-stride loop over the buffer, each pass reading every element once,
  --passes passes (an SM's share of a pass is larger than its L1, so a pass reads it
  from the L2 again);
* ``together``: one work-group of 1024 an SM, each reading the whole buffer from its
  start, as matmul perfect's blocks read the same rows of b at about the same time (the
  L2's request coalescer merges what neighbouring SMs ask for together; one group an
  SM, so that no other group of its SM has fetched the lines into its L1).

The sums are checked against numpy, then each launch is timed with OpenCL profiling
events (median of --repeats after warm-up); bytes delivered = elements read x 4 over
the time.

    python benchmarks/opencl/l2_stream_probe.py --out DIR
    python benchmarks/opencl/l2_stream_probe.py --device cpu   # checks the kernels

Exits 2 without the device asked for.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from probe_timing import median_time, probe_setup, save  # noqa: E402

SOURCE = r"""
__kernel void apart(__global const float4* a, __global float* out, int n4, int passes) {
  size_t g = get_global_id(0), stride = get_global_size(0);
  float4 s = (float4)(0.0f);
  for (int p = 0; p < passes; p++)
    for (size_t i = g; i < (size_t)n4; i += stride) s += a[i];
  out[g] = s.x + s.y + s.z + s.w;
}
__kernel void together(__global const float4* a, __global float* out, int n4) {
  size_t l = get_local_id(0), size = get_local_size(0);
  float4 s = (float4)(0.0f);
  for (size_t i = l; i < (size_t)n4; i += size) s += a[i];
  out[get_global_id(0)] = s.x + s.y + s.z + s.w;
}
"""

LOCAL = 256


def main() -> int:
    def extra(ap):
        ap.add_argument("--mb", type=int, nargs="+", default=[16, 32],
                        help="buffer sizes in MB (default 16 32)")
        ap.add_argument("--passes", type=int, default=8, help="passes of apart (default 8)")
    found = probe_setup(__doc__, "l2_stream_probe", 10, extra=extra, cpu_twin=True)
    if found is None:
        return 2
    args, dev, ctx, q = found
    import pyopencl as cl

    sms = dev.max_compute_units
    prg = cl.Program(ctx, SOURCE).build()
    apart, together = cl.Kernel(prg, "apart"), cl.Kernel(prg, "together")
    result: dict = {"device": dev.name, "driver": dev.driver_version, "sms": sms,
                    "runs": []}
    sizes = args.mb if args.device == "nvidia" else [1]
    for mb in sizes:
        n4 = mb * (1 << 20) // 16
        host = np.ones(4 * n4, np.float32)
        a = cl.Buffer(ctx, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR, hostbuf=host)
        for name, local, groups in (("apart", LOCAL, 4 * sms), ("apart", LOCAL, 8 * sms),
                                    ("together", 1024, sms)):
            n = groups * local
            out = cl.Buffer(ctx, cl.mem_flags.WRITE_ONLY, 4 * n)
            if name == "apart":
                knl, argv = apart, [a, out, np.int32(n4), np.int32(args.passes)]
                elements = 4 * n4 * args.passes
            else:
                knl, argv, elements = together, [a, out, np.int32(n4)], 4 * n4 * groups
            knl(q, (n,), (local,), *argv).wait()
            got = np.empty(n, np.float32)
            cl.enqueue_copy(q, got, out)
            if not np.isclose(got.sum(), elements, rtol=1e-3):
                print(f"{name}: the sums add to {got.sum()}, not {elements}",
                      file=sys.stderr)
                return 1
            row = {"kernel": name, "mb": mb, "groups": groups, "local": local,
                   "bytes": 4 * elements}
            if args.device == "nvidia":
                t = median_time(q, knl, (n,), (local,), argv, args.repeats)
                row.update(seconds=t, bytes_per_s=4 * elements / t)
                print(f"{name:8s} {mb:3d} MB, {groups:5d} groups: {t * 1e6:9.1f} us, "
                      f"{row['bytes_per_s'] / 1e12:6.2f} TB/s", flush=True)
            else:
                print(f"{name:8s} {mb:3d} MB, {groups:5d} groups: checked", flush=True)
            result["runs"].append(row)
            out.release()
        a.release()
    save(args.out, "l2_stream_probe.json", result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
