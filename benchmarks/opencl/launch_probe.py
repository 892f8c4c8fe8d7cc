"""What a launch costs from its start to its end beside the bytes it moves, as OpenCL
profiling events see it: an empty kernel of 1 to 4224 work-groups of 256 work-items,
and inflight_probe.py's kernel that reads 4 to 512 MB as runs of 4 floats in a
grid-stride loop (8 work-groups of 256 per SM, 4 loads in flight per work-item), each
launch cold (mcl.opencl.conditions.cache_flush: a write and then a read of 256 MB before it leave
none of its data in the L2 and no dirty line). The reads' times against their bytes:
the straight line through them, whose value at 0 is the fixed cost and whose slope the
bandwidth, through all sizes and from 64 MB up (written to launch.json with the times).

    python benchmarks/opencl/launch_probe.py --out DIR

Exits 2 without an NVIDIA OpenCL device.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from inflight_probe import SOURCE as READS  # noqa: E402
from probe_timing import line_fit, median_time, probe_setup, save  # noqa: E402

#: an empty kernel; the reads are inflight_probe.py's with 4 loads in flight a work-item
EMPTY = "__kernel void empty(__global float* out) { }"
IN_FLIGHT = 4


def main() -> int:
    found = probe_setup(__doc__, "launch_probe", 10)
    if found is None:
        return 2
    args, dev, ctx, q = found
    import pyopencl as cl

    empty = cl.Program(ctx, EMPTY).build().empty
    reads = cl.Program(ctx, READS).build(options=[f"-DU={IN_FLIGHT}"]).reads
    sms = dev.max_compute_units
    out = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 * max(4224, sms * 8) * 256)
    from mcl.opencl.conditions import cache_flush  # written, then read
    flush = cache_flush(ctx, q)

    def cold(knl, glob, argv) -> float:
        return median_time(q, knl, (glob,), (256,), argv, args.repeats, warmup=0,
                           before=flush)

    rows = []
    for groups in (1, 132, 1056, 4224):
        t = cold(empty, groups * 256, [out])
        rows.append({"kernel": "empty", "groups": groups, "median_s": t})
        print(f"empty, {groups:5d} work-groups: {t * 1e6:7.2f} us", flush=True)
    rng = np.random.default_rng(1)
    points = []
    for mb in (4, 8, 16, 32, 64, 128, 256, 512):
        n4 = mb * (1 << 20) // 16
        host = rng.random(n4 * 4, dtype=np.float32)
        a = cl.Buffer(ctx, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR, hostbuf=host)
        glob = sms * 8 * 256
        argv = [a, out, np.int32(n4)]
        reads(q, (glob,), (256,), *argv).wait()
        got = np.empty(glob, np.float32)
        cl.enqueue_copy(q, got, out)
        want = float(host.astype(np.float64).sum())
        if abs(float(got.astype(np.float64).sum()) - want) > 1e-3 * want:
            print(f"reads of {mb} MB: wrong sum", file=sys.stderr)
            return 1
        t = cold(reads, glob, argv)
        rows.append({"kernel": "reads", "bytes": n4 * 16, "median_s": t})
        points.append((n4 * 16, t))
        print(f"reads, {mb:4d} MB: {t * 1e6:8.1f} us, {n4 * 16 / t / 1e9:6.0f} GB/s",
              flush=True)
        a.release()
    slope, fixed = line_fit(points)
    big_slope, big_fixed = line_fit([p for p in points if p[0] >= 64 << 20])
    result = {"device": dev.name, "driver": dev.driver_version, "rows": rows,
              "fit": {"fixed_s": fixed, "bandwidth": 1 / slope},
              "fit_from_64MB": {"fixed_s": big_fixed, "bandwidth": 1 / big_slope}}
    print(result["fit"], result["fit_from_64MB"])
    save(args.out, "launch.json", result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
