"""How long contended float atomicAdds of one element take on the GPU machine, as MCL
generates them for OpenCL 1.2 (hopper.target's ``float_atomic_add = "cas"``: a read,
then atomic_cmpxchg on the float's bits until no other update came in between).

Kernels in which one work-item per work-group (``leader``) or every work-item
(``every``) adds 1.0 to the same float, for work-groups of 64, 256 and 1024
work-items (so that 4224, 1056 or 264 work-groups are resident at once on 132 SMs,
each with its update pending), over 2^10 to 2^16 work-groups; and ``stream``:
one update per work-group after each work-item has read 64 floats, on 1024 groups
of 256 (the grid-stride reductions, whose groups all arrive at their update at the
end). The result is checked (the updates add up) before a time is kept. The loop
compares the bits it swapped, as the generator does since 2026-12-01 (it compared the
floats before: a NaN sum never ended); the rates recorded before were measured with
that form.

    python benchmarks/opencl/cas_rate.py --out DIR [--long]

Exits 2 without an NVIDIA OpenCL device.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from probe_timing import launch_times, line_fit, median_time, probe_setup, save  # noqa: E402

SOURCE = r"""
inline void cas_add(volatile __global float *p, float v) {
  volatile __global unsigned int *bits = (volatile __global unsigned int *)p;
  unsigned int old = *bits;
  unsigned int seen;
  while ((seen = atomic_cmpxchg(bits, old, as_uint(as_float(old) + v))) != old) {
    old = seen;
  }
}
__kernel void leader(__global float *x, __global const float *data, int reads) {
  if (get_local_id(0) == 0) cas_add(x, 1.0f);
}
__kernel void every(__global float *x, __global const float *data, int reads) {
  cas_add(x, 1.0f);
}
__kernel void stream(__global float *x, __global const float *data, int reads) {
  float s = 0.0f;
  for (int r = 0; r < reads; r++) s += data[r * get_global_size(0) + get_global_id(0)];
  x[1 + get_global_id(0) % 64] = s;   // keep the reads
  if (get_local_id(0) == 0) cas_add(x, 1.0f);
}
"""

#: (kernel, work-items per group, groups, reads per work-item)
RUNS = [("leader", local, g, 0) for local in (64, 256, 1024)
        for g in (1 << 10, 1 << 12, 1 << 14, 1 << 16)] + \
       [("every", local, g, 0) for local in (256, 1024) for g in (4, 16, 64)] + \
       [("stream", 256, g, 64) for g in (1 << 10,)] + [("leader", 256, 1 << 10, 0)]
#: --long: every work-item of more work-groups than are resident (2^19 and 2^20 updates,
#: 270336 pending; the last is reduction perfect at n = 2^20), each launched once
LONG = [("every", 256, 2048, 0), ("every", 256, 4096, 0), ("every", 1024, 1024, 0)]


def main() -> int:
    found = probe_setup(__doc__, "cas_rate", 3, lambda ap: ap.add_argument(
        "--long", action="store_true", help="only the long runs (LONG), once each"))
    if found is None:
        return 2
    args, dev, ctx, q = found
    import pyopencl as cl

    prg = cl.Program(ctx, SOURCE).build()
    x = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 * 65)
    most = max(local * g * reads for _, local, g, reads in RUNS)
    data = cl.Buffer(ctx, cl.mem_flags.READ_ONLY, 4 * max(1, most))
    result: dict = {"device": dev.name, "driver": dev.driver_version, "rows": []}
    for name, local, groups, reads in (LONG if args.long else RUNS):
        knl = cl.Kernel(prg, name)
        argv = [x, data, np.int32(reads)]
        cl.enqueue_copy(q, x, np.zeros(65, np.float32))
        knl(q, (groups * local,), (local,), *argv).wait()
        got = np.empty(65, np.float32)
        cl.enqueue_copy(q, got, x)
        updates = groups * local if name == "every" else groups
        if got[0] != updates:
            print(f"{name}: {got[0]} updates counted, {updates} made", file=sys.stderr)
            return 1
        t = launch_times(q, knl, (groups * local,), (local,), argv, 1, warmup=0)[0] \
            if args.long else median_time(q, knl, (groups * local,), (local,), argv, args.repeats)
        row = {"kernel": name, "local": local, "groups": groups, "reads": reads,
               "updates": updates, "seconds": t, "per_update_s": t / updates}
        result["rows"].append(row)
        print(f"{name:6s} local {local:4d} groups {groups:6d} reads {reads:3d}: "
              f"{t * 1e6:10.1f} us, {t / updates * 1e9:8.1f} ns per update", flush=True)
    for name, local in {(r["kernel"], r["local"]) for r in result["rows"]
                        if r["kernel"] != "stream"}:
        pts = [(r["updates"], r["seconds"]) for r in result["rows"]
               if (r["kernel"], r["local"], r["reads"]) == (name, local, 0)]
        if len(pts) > 2:
            per, fixed = line_fit(pts)
            result[f"{name}_{local}"] = {"seconds_per_update": per, "fixed_seconds": fixed}
            print(f"{name} local {local}: {per * 1e9:.1f} ns per update", flush=True)
    save(args.out, "cas_rate_long.json" if args.long else "cas_rate.json", result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
