"""What a chain of barriers costs a block whose warps have nothing else to do: S
steps of a reduction tree in local memory (``if (lid < h) red[lid] += red[lid + h]``,
then a barrier: softmax's and a block reduction's), and S bare barriers (a local
write, then a barrier), in work-groups of 64 to 1024 work-items filling every thread
slot of every SM, over 1 and 4 waves of work-groups; and one wave of 1, 2, 4 or 8 work-groups of
256 per SM (a latency costs them alike, a throughput in proportion); no device-memory
traffic (the one store is taken by no work-item). Then blocks that do move device
memory, and so fall out of step: a Hillis-Steele scan of S steps (a read, a barrier,
an add to what was read, a barrier: scan_blocks') of one float a work-item over 4, 16
and 64 waves. The time a step adds, per wave:
the slope of the cold times over S, divided by the waves. mcl.analyses.timing counts a block's
barriers as a chain each round of resident blocks waits through (the target file's
``barrier_seconds``).

    python benchmarks/opencl/barrier_probe.py --out DIR

Exits 2 without an NVIDIA OpenCL device.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from probe_timing import line_fit, median_time, probe_setup, save  # noqa: E402

SOURCE = r"""
__kernel void tree(__global float* out, int steps) {
  __local float red[LOCAL];
  int lid = get_local_id(0);
  red[lid] = lid * 1e-3f;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int step = 0; step < steps; step++) {
    int h = (LOCAL / 2) >> (step % LOG2);
    if (lid < h) red[lid] = red[lid] + red[lid + h];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (red[0] == -12345.0f) out[get_global_id(0)] = red[lid];
}
__kernel void bare(__global float* out, int steps) {
  __local float red[LOCAL];
  int lid = get_local_id(0);
  red[lid] = 0.0f;
  for (int step = 0; step < steps; step++) {
    red[lid] = step;
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (red[(lid + 1) % LOCAL] == -12345.0f) out[get_global_id(0)] = red[lid];
}
__kernel void scan(__global float* out, __global const float* in, int steps) {
  __local float buf[LOCAL];
  int lid = get_local_id(0), g = get_global_id(0);
  buf[lid] = in[g];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int step = 0; step < steps; step++) {
    int offset = 1 << (step % LOG2);
    float tmp = lid >= offset ? buf[lid - offset] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    buf[lid] += tmp;
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  out[g] = buf[lid];
}
"""

#: work-items per work-group timed, and barrier steps
LOCALS = (64, 128, 256, 512, 1024)
STEPS = (0, 8, 16, 32, 64)
WAVES = (1, 4)
#: steps of the scan timed
SCAN_STEPS = (0, 2, 4, 8, 16)


def main() -> int:
    found = probe_setup(__doc__, "barrier_probe", 10)
    if found is None:
        return 2
    args, dev, ctx, q = found
    import pyopencl as cl

    sms = dev.max_compute_units
    out = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 * 2048 * sms * max(WAVES))
    from mcl.opencl.conditions import cache_flush  # written, then read
    flush = cache_flush(ctx, q)
    result = {"device": dev.name, "sms": sms, "rows": []}
    for local in LOCALS:
        log2 = local.bit_length() - 1
        prg = cl.Program(ctx, SOURCE).build(options=[f"-DLOCAL={local}", f"-DLOG2={log2}"])
        resident = 2048 // local
        for kernel in ("tree", "bare"):
            knl = cl.Kernel(prg, kernel)
            for waves in WAVES:
                groups = waves * resident * sms
                times = [median_time(q, knl, (groups * local,), (local,), (out, np.int32(s)),
                                     args.repeats, warmup=1, before=flush) for s in STEPS]
                slope, _ = line_fit(list(zip(STEPS, times, strict=True)))
                per_step = slope / waves
                result["rows"].append({"kernel": kernel, "local": local, "waves": waves,
                                       "groups": groups, "steps": list(STEPS),
                                       "times_s": times, "step_s_per_wave": per_step})
                print(f"{kernel} local {local:4d}, {waves} waves: "
                      + " ".join(f"{t * 1e6:6.2f}" for t in times)
                      + f" us; a step {per_step * 1e9:6.1f} ns a wave", flush=True)
    # latency or throughput: one wave of 1, 2, 4 and 8 work-groups of 256 per SM
    prg = cl.Program(ctx, SOURCE).build(options=["-DLOCAL=256", "-DLOG2=8"])
    result["per_sm"] = []
    for kernel in ("tree", "bare"):
        knl = cl.Kernel(prg, kernel)
        for per_sm in (1, 2, 4, 8):
            groups = per_sm * sms
            times = [median_time(q, knl, (groups * 256,), (256,), (out, np.int32(s)),
                                 args.repeats, warmup=1, before=flush) for s in STEPS]
            slope, _ = line_fit(list(zip(STEPS, times, strict=True)))
            result["per_sm"].append({"kernel": kernel, "local": 256, "per_sm": per_sm,
                                     "groups": groups, "steps": list(STEPS),
                                     "times_s": times, "step_s": slope})
            print(f"{kernel}, {per_sm} work-groups of 256 per SM: "
                  + " ".join(f"{t * 1e6:6.2f}" for t in times)
                  + f" us; a step {slope * 1e9:6.1f} ns", flush=True)
    # blocks that load and store device memory, and so fall out of step: a
    # Hillis-Steele scan of S steps (two barriers each) in work-groups of 256, 8 per SM
    scan = prg.scan
    result["scan"] = []
    for waves in (4, 16, 64):
        groups = waves * 8 * sms
        src = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 * groups * 256)
        dst = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 * groups * 256)
        cl.enqueue_fill_buffer(q, src, np.float32(1.0), 0, 4 * groups * 256)
        times = [median_time(q, scan, (groups * 256,), (256,), (dst, src, np.int32(s)),
                             args.repeats, warmup=1, before=flush) for s in SCAN_STEPS]
        slope, _ = line_fit(list(zip(SCAN_STEPS, times, strict=True)))
        result["scan"].append({"waves": waves, "groups": groups, "steps": list(SCAN_STEPS),
                               "times_s": times, "step_s_per_wave": slope / waves})
        print(f"scan, {waves} waves: " + " ".join(f"{t * 1e6:6.2f}" for t in times)
              + f" us; a step (two barriers) {slope / waves * 1e9:6.1f} ns a wave", flush=True)
    save(args.out, "barrier_probe.json", result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
