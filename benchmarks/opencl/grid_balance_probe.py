"""Does an SM that holds one work-group more than the others finish last? A grid-stride
read of 256 MB (float4, summed, one float written a work-item) by G work-groups of 256
work-items, every one of them resident at once (G at most 8 an SM). Where the memory
serves the SMs alike, an SM's share of the bandwidth is the same whatever it holds, so
the kernel takes as long as the SM with the most work-groups needs:
ceil(G / SMs) / (G / SMs) times a balanced grid's time (925 work-groups on 132 SMs, one
SM holding 8 and the others 7: 1.14); where it serves the warps alike, the time does
not depend on how the work-groups fall (vector_add nvidia_v1, 1024 work-groups, runs
1.6% slower than hopper_v1's 1056 on the H200, where the time model predicts them
level). Each launch is queued behind mcl.opencl.conditions.keep_awake (the median of
``--repeats``); each result is checked.

    python benchmarks/opencl/grid_balance_probe.py --out DIR

Exits 2 without an NVIDIA OpenCL device.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from probe_timing import median_time, probe_setup, save  # noqa: E402

SOURCE = r"""
__kernel void stride(__global const float4 *in, __global float *out, int n) {
  float4 acc = (float4)(0.0f);
  for (int i = get_global_id(0); i < n; i += get_global_size(0)) acc += in[i];
  out[get_global_id(0)] = acc.x + acc.y + acc.z + acc.w;
}
"""

#: float4 elements read (256 MB)
VECS = 1 << 24
LOCAL = 256


def main() -> int:
    found = probe_setup(__doc__, "grid_balance_probe", 10)
    if found is None:
        return 2
    args, dev, ctx, q = found
    import pyopencl as cl

    from mcl.opencl.conditions import keep_awake
    sms = dev.max_compute_units
    per_sm = 2048 // LOCAL
    counts = sorted({6 * sms, 6 * sms + 1, 7 * sms - 66, 7 * sms, 7 * sms + 1, 7 * sms + 66,
                     1000, 1024, 8 * sms})
    src = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 16 * VECS)
    cl.enqueue_fill_buffer(q, src, np.float32(1.0), 0, 16 * VECS).wait()
    out = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 * per_sm * sms * LOCAL)
    knl = cl.Program(ctx, SOURCE).build().stride
    awake = keep_awake(ctx, q)
    rows = []
    for g in counts:
        argv = (src, out, np.int32(VECS))
        got = np.empty(g * LOCAL, np.float32)
        knl(q, (g * LOCAL,), (LOCAL,), *argv).wait()
        cl.enqueue_copy(q, got, out).wait()
        ok = abs(float(got.astype(np.float64).sum()) - 4.0 * VECS) < 1e-6 * VECS
        t = median_time(q, knl, (g * LOCAL,), (LOCAL,), argv, args.repeats, before=awake)
        most = math.ceil(g / sms)
        rows.append({"groups": g, "most_per_sm": most, "imbalance": most * sms / g,
                     "seconds": t, "correct": ok})
        print(f"{g:5d} groups ({g / sms:.2f} an SM, at most {most}): {t * 1e6:7.1f} us, "
              f"imbalance {most * sms / g:.3f}, correct {ok}", flush=True)
    save(args.out, "grid_balance_probe.json", {"device": dev.name, "bytes": 16 * VECS,
                                               "local": LOCAL, "sms": sms, "rows": rows})
    return 0 if all(r["correct"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
