"""Does the end of a grid cost in proportion to a work-group's life? The same 128 MB read
(gesummv's matrices at n = 4096) by work-groups of 256 work-items that each read
``k`` float4 of their own chunk (coalesced: element ``chunk + i * 256 + t``), summing
them and writing one float a work-item. With k from 1 to 256 the grid goes from 31
rounds of the device's resident work-groups (8 an SM) to a quarter of one, and a
work-group's life from a fraction of a microsecond to the whole kernel. Where the
grid's last work-groups drain in proportion to their life, the time grows with k at
a few rounds; the block-life probe (block_life_probe.py) measured 15 to 400 rounds
only. Each launch is timed queued behind mcl.opencl.conditions.keep_awake (the median
of ``--repeats``), and, for comparison, behind the cache flush (cold).

    python benchmarks/opencl/drain_probe.py --out DIR

Exits 2 without an NVIDIA OpenCL device.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from probe_timing import median_time, probe_setup, save  # noqa: E402

SOURCE = r"""
__kernel void walk(__global const float4 *in, __global float *out, int k) {
  int t = get_local_id(0), n = get_local_size(0);
  __global const float4 *chunk = in + (long)get_group_id(0) * n * k;
  float4 acc = (float4)(0.0f);
  for (int i = 0; i < k; i++) acc += chunk[i * n + t];
  out[get_global_id(0)] = acc.x + acc.y + acc.z + acc.w;
}
"""

#: float4 elements read (128 MB)
VECS = 1 << 23
LOCAL = 256
KS = (1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 128, 256)


def main() -> int:
    found = probe_setup(__doc__, "drain_probe", 10)
    if found is None:
        return 2
    args, dev, ctx, q = found
    import pyopencl as cl

    from mcl.opencl.conditions import cache_flush, keep_awake
    src = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 16 * VECS)
    cl.enqueue_fill_buffer(q, src, np.float32(1.0), 0, 16 * VECS).wait()
    out = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 * VECS)
    knl = cl.Program(ctx, SOURCE).build().walk
    slots = dev.max_compute_units * 2048 // LOCAL
    awake, cold = keep_awake(ctx, q), cache_flush(ctx, q)
    rows = []
    for k in KS:
        groups = VECS // (LOCAL * k)
        argv = (src, out, np.int32(k))
        got = np.empty(groups * LOCAL, np.float32)
        knl(q, (groups * LOCAL,), (LOCAL,), *argv).wait()
        cl.enqueue_copy(q, got, out).wait()
        ok = bool(np.all(got == 4.0 * k))
        t = median_time(q, knl, (groups * LOCAL,), (LOCAL,), argv, args.repeats,
                        before=awake)
        tc = median_time(q, knl, (groups * LOCAL,), (LOCAL,), argv, args.repeats,
                         before=cold)
        rounds = groups / slots
        rows.append({"k": k, "groups": groups, "rounds": rounds, "awake_s": t, "cold_s": tc,
                     "life_s": t / max(rounds, 1.0), "correct": ok})
        print(f"k {k:3d}: {groups:6d} groups, {rounds:6.2f} rounds, {t * 1e6:6.1f} us awake, "
              f"{tc * 1e6:6.1f} cold, life {t / max(rounds, 1.0) * 1e6:5.1f} us, "
              f"correct {ok}", flush=True)
    save(args.out, "drain_probe.json", {"device": dev.name, "bytes": 16 * VECS,
                                        "local": LOCAL, "slots": slots, "rows": rows})
    return 0 if all(r["correct"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
