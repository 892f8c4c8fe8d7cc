"""How fast the device issues multiply-adds whose operands are register arrays, as a
tiled matmul's or convolution's inner loop has them: each work-item keeps a TM x TN
array of sums and a TM and a TN array of factors, and each step adds the outer product
of the factors to the sums (TM * TN multiply-adds) and moves the factors on (TM + TN
more), with no memory access in the loop. Against a stream of independent
multiply-adds on one float4 (the overlap probe's), this says whether the 74-78% of the
issue slots that matmul's and convolution's issue-bound versions fill on the H200
(benchmarks/results/fidelity/raw/h200_2026-11-30_issue/) is the register-array
arithmetic's own rate or their loads' and barriers' doing. The multiply-adds per second
over 132 SMs x 4 schedulers x the clock, each warp instruction a lane's multiply-add x 32.

    python benchmarks/opencl/outer_product_probe.py --out DIR

Exits 2 without an NVIDIA OpenCL device.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from probe_timing import median_time, probe_setup, save  # noqa: E402

SOURCE = r"""
__kernel void outer(__global float* out, int steps, float s) {
  float a[TM], b[TN], acc[TM][TN];
  int g = get_global_id(0);
  #pragma unroll
  for (int i = 0; i < TM; i++) a[i] = g * 1e-7f + i;
  #pragma unroll
  for (int j = 0; j < TN; j++) b[j] = g * 2e-7f - j;
  #pragma unroll
  for (int i = 0; i < TM; i++)
    #pragma unroll
    for (int j = 0; j < TN; j++) acc[i][j] = 0.0f;
  #pragma unroll 1
  for (int k = 0; k < steps; k++) {
    #pragma unroll
    for (int i = 0; i < TM; i++)
      #pragma unroll
      for (int j = 0; j < TN; j++) acc[i][j] = fma(a[i], b[j], acc[i][j]);
    #pragma unroll
    for (int i = 0; i < TM; i++) a[i] = fma(a[i], s, 0.5f);
    #pragma unroll
    for (int j = 0; j < TN; j++) b[j] = fma(b[j], s, -0.25f);
  }
  float total = 0.0f;
  #pragma unroll
  for (int i = 0; i < TM; i++)
    #pragma unroll
    for (int j = 0; j < TN; j++) total += acc[i][j];
  out[g] = total;
}
__kernel void stream(__global float* out, int steps, float s) {
  int g = get_global_id(0);
  float4 acc = (float4)(g, g + 1, g + 2, g + 3) * 1e-7f;
  #pragma unroll 8
  for (int k = 0; k < steps; k++) acc = fma(acc, (float4)(s), (float4)(0.5f));
  out[g] = acc.x + acc.y + acc.z + acc.w;
}
"""

#: (TM, TN, work-items a work-group, work-groups an SM)
SHAPES = [(4, 4, 256, 8), (8, 8, 256, 2), (8, 8, 256, 3), (8, 16, 256, 1), (16, 8, 128, 2)]
STEPS = 2048


def main() -> int:
    found = probe_setup(__doc__, "outer_product_probe", 10)
    if found is None:
        return 2
    args, dev, ctx, q = found
    import pyopencl as cl

    sms = dev.max_compute_units
    clock = dev.max_clock_frequency * 1e6
    peak = sms * 4 * clock * 32                  # lane multiply-adds per second
    rows = []
    out = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 * sms * 2048)
    for tm, tn, local, per_sm in [(None, None, 256, 8)] + SHAPES:
        if tm is None:
            prg = cl.Program(ctx, SOURCE.replace("TM", "1").replace("TN", "1")).build()
            knl, per_step, name = prg.stream, 4, "stream (float4)"
        else:
            prg = cl.Program(ctx, SOURCE).build(options=[f"-DTM={tm}", f"-DTN={tn}"])
            knl, per_step, name = prg.outer, tm * tn + tm + tn, f"{tm} x {tn}"
        items = sms * per_sm * local
        argv = (out, np.int32(STEPS), np.float32(0.999))
        t = median_time(q, knl, (items,), (local,), argv, args.repeats)
        fmas = items * STEPS * per_step
        share = fmas / t / peak
        regs = knl.get_work_group_info(cl.kernel_work_group_info.PRIVATE_MEM_SIZE, dev)
        rows.append({"shape": name, "local": local, "groups_per_sm": per_sm, "seconds": t,
                     "fma_per_s": fmas / t, "share_of_peak": share, "private_bytes": regs})
        print(f"{name:16s} {local:4d} x {per_sm} an SM: {t * 1e6:8.1f} us, "
              f"{fmas / t / 1e12:6.2f} T multiply-adds/s, {share:.1%} of the issue peak",
              flush=True)
    save(args.out, "outer_product_probe.json", {"device": dev.name, "clock_hz": clock,
                                                "steps": STEPS, "rows": rows})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
