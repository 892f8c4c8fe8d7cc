"""What a chain of barriers costs a block whose warps have nothing else to do: S
steps of a reduction tree in local memory (``if (lid < h) red[lid] += red[lid + h]``,
then a barrier: softmax's and a block reduction's), and S bare barriers (a local
write, then a barrier), in work-groups of 64 to 1024 work-items filling every thread
slot of every SM, over 1 and 4 waves of work-groups; no device-memory traffic (the
one store is taken by no work-item). The time a step adds, per wave: the slope of
the cold times over S, divided by the waves. mcl.analyses.timing counts a block's
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
sys.path.insert(0, str(HERE.parents[0] / "fidelity"))
from measure import cold_flush  # noqa: E402  (the fidelity harness's: written, then read)
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
"""

#: work-items per work-group timed, and barrier steps
LOCALS = (64, 128, 256, 512, 1024)
STEPS = (0, 8, 16, 32, 64)
WAVES = (1, 4)


def main() -> int:
    found = probe_setup(__doc__, "barrier_probe", 10)
    if found is None:
        return 2
    args, dev, ctx, q = found
    import pyopencl as cl

    sms = dev.max_compute_units
    out = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 * 2048 * sms * max(WAVES))
    flush = cold_flush(ctx, q)
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
    save(args.out, "barrier_probe.json", result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
