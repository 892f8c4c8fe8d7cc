"""How a kernel's execution and its memory traffic overlap: kernels that stream 2^22
float4 (64 MB read, 64 MB written) in a grid that fills the device once (2048
work-items an SM, each going round the elements: block dispatch takes no part), and
compute k steps on each (a multiply-add on each of the 4 lanes, or a read of local
memory and an add), timed three ways: the traffic alone (k = 0), the steps alone (no
load, and a store no work-item takes), and both. Where both take about as long
alone, the kernel takes longer than the longer of them: the warps that wait on a load
do not issue, and those that issue do not keep loads in flight. With T_m and T_c the
times alone and T the time of both (each less the launch of an empty kernel of one
work-group), the exponent q of T = (T_m^q + T_c^q)^(1/q) is fitted over the points
where neither is more than 3 times the other: q = infinity is perfect overlap (the
roofline's max), 1 none (their sum). The same for block dispatch: the copy by
work-groups of 64 work-items, k elements each (65536 work-groups down to 4096),
against the grid that fills the device once and against the work-groups doing
nothing. mcl.analyses.timing combines its execution parts and its block dispatch with
its memory parts so (the target file's ``overlap_exponent``).

    python benchmarks/opencl/overlap_probe.py --out DIR

Exits 2 without an NVIDIA OpenCL device.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from probe_timing import median_time, probe_setup, save  # noqa: E402

SOURCE = r"""
#define STEP_FMA acc = acc * 0.999f + v;
#define STEP_LOCAL acc += l[(lid + i) & 255];
#define LOADED in[g]
#define MADE ((float4)(g * 1e-9f, g * 2e-9f, g * 3e-9f, g * 4e-9f))
#define STORED out[g] = acc;
#define DROPPED if (acc.x == -12345.0f) out[g] = acc;

__kernel void empty(__global float4* out) { }

#define NO_SETUP
#define SETUP_LOCAL \
  __local float4 l[256]; \
  int lid = get_local_id(0); \
  l[lid] = (float4)(lid, 1.0f, 2.0f, 3.0f); \
  barrier(CLK_LOCAL_MEM_FENCE);

#define STREAM(name, SETUP, STEP, VALUE, STORE) \
__kernel void name(__global float4* out, __global const float4* in, int n, int k) { \
  SETUP \
  for (int g = get_global_id(0); g < n; g += get_global_size(0)) { \
    float4 v = VALUE, acc = v; \
    _Pragma("unroll 8") \
    for (int i = 0; i < k; i++) { STEP } \
    STORE \
  } \
}
STREAM(fma_both, NO_SETUP, STEP_FMA, LOADED, STORED)
STREAM(fma_alone, NO_SETUP, STEP_FMA, MADE, DROPPED)
STREAM(local_both, SETUP_LOCAL, STEP_LOCAL, LOADED, STORED)
STREAM(local_alone, SETUP_LOCAL, STEP_LOCAL, MADE, DROPPED)

__kernel void copy_rounds(__global float4* out, __global const float4* in, int n, int k) {
  for (int g = get_global_id(0); g < n; g += get_global_size(0)) out[g] = in[g];
}
__kernel void copy_blocks(__global float4* out, __global const float4* in, int n, int k) {
  int g = get_global_id(0), s = get_global_size(0);
  for (int j = 0; j < k; j++) out[g + j * s] = in[g + j * s];
}
__kernel void no_copy_blocks(__global float4* out, __global const float4* in, int n, int k) {
  int g = get_global_id(0), s = get_global_size(0);
  for (int j = 0; j < k; j++) if (g == -1) out[g + j * s] = in[g + j * s];
}
"""

#: float4 elements read and written
N = 1 << 22
#: work-items per work-group
LOCAL = 256
#: the steps per element timed (k)
STEPS = (0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 128, 160, 192, 256, 384)
#: work-items per work-group and elements per work-item of the block-dispatch family
#: (2^22 / 64 = 65536 work-groups of one element each down to 4096 of 16)
DISPATCH_LOCAL = 64
PER_ITEM = (1, 2, 4, 8, 16)


#: the points an exponent is fitted over: neither time more than this many times the other
FIT_RATIO = 3


def comparable(memory: float, alone: float) -> bool:
    """Whether the traffic alone and the steps alone take about as long (neither more
    than :data:`FIT_RATIO` times the other): a point the exponent is fitted over."""
    return 1 / FIT_RATIO <= alone / memory <= FIT_RATIO


def fit_exponent(points) -> float | None:
    """The q of T = (T_m^q + T_c^q)^(1/q) that fits ``points`` (T_m, T_c, T) best in
    the relative error (a scan of q from 1 to 16); None without points."""
    if not points:
        return None
    qs = np.arange(1.0, 16.001, 0.05)
    errs = [sum((((m ** q + c ** q) ** (1 / q)) / t - 1) ** 2 for m, c, t in points)
            for q in qs]
    return float(qs[int(np.argmin(errs))])


def main() -> int:
    found = probe_setup(__doc__, "overlap_probe", 20)
    if found is None:
        return 2
    args, dev, ctx, q = found
    import pyopencl as cl

    prg = cl.Program(ctx, SOURCE).build()
    a, b = (cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 16 * N) for _ in range(2))
    for buf in (a, b):
        cl.enqueue_fill_buffer(q, buf, np.float32(1.0), 0, 16 * N)

    items = dev.max_compute_units * 2048

    def timed(name, k=None):
        knl = cl.Kernel(prg, name)
        if k is None:
            return median_time(q, knl, (LOCAL,), (LOCAL,), (a,), args.repeats)
        return median_time(q, knl, (items,), (LOCAL,), (a, b, np.int32(N), np.int32(k)),
                           args.repeats)

    empty = timed("empty")
    print(f"empty kernel: {empty * 1e6:.2f} us", flush=True)
    result = {"device": dev.name, "n_float4": N, "local": LOCAL, "work_items": items,
              "empty_s": empty,
              "families": {}}
    for family in ("fma", "local"):
        memory = timed(f"{family}_both", 0) - empty
        rows, points = [], []
        for k in STEPS:
            both = timed(f"{family}_both", k) - empty
            alone = timed(f"{family}_alone", k) - empty
            rows.append({"k": k, "both_s": both, "alone_s": alone})
            q_here = None
            if k and comparable(memory, alone):
                points.append((memory, alone, both))
                q_here = fit_exponent([(memory, alone, both)])
            print(f"{family} k = {k:3d}: both {both * 1e6:7.2f} us, steps alone "
                  f"{alone * 1e6:7.2f} us, traffic alone {memory * 1e6:7.2f} us, "
                  f"both / longer {both / max(alone, memory):5.3f}"
                  + (f", q {q_here:.2f}" if q_here else ""), flush=True)
        q_fit = fit_exponent(points)
        print(f"{family}: q = {q_fit} over {len(points)} points", flush=True)
        result["families"][family] = {"memory_s": memory, "rows": rows, "q": q_fit,
                                      "points": len(points)}
    # block dispatch: the same copy by work-groups of 64 that start one after the other
    # (k elements a work-item), against the grid that fills the device once and the
    # work-groups alone (a copy no work-item takes)
    memory = timed("copy_rounds", 1) - empty
    rows, points = [], []
    for k in PER_ITEM:
        knl = cl.Kernel(prg, "copy_blocks")
        argv = (a, b, np.int32(N), np.int32(k))
        both = median_time(q, knl, (N // k,), (DISPATCH_LOCAL,), argv, args.repeats) - empty
        knl = cl.Kernel(prg, "no_copy_blocks")
        alone = median_time(q, knl, (N // k,), (DISPATCH_LOCAL,), argv, args.repeats) - empty
        rows.append({"per_item": k, "blocks": N // k // DISPATCH_LOCAL, "both_s": both,
                     "alone_s": alone})
        q_here = None
        if comparable(memory, alone):
            points.append((memory, alone, both))
            q_here = fit_exponent([(memory, alone, both)])
        print(f"dispatch {N // k // DISPATCH_LOCAL:6d} blocks: both {both * 1e6:7.2f} us, "
              f"blocks alone {alone * 1e6:7.2f} us, traffic alone {memory * 1e6:7.2f} us, "
              f"both / longer {both / max(alone, memory):5.3f}"
              + (f", q {q_here:.2f}" if q_here else ""), flush=True)
    q_fit = fit_exponent(points)
    print(f"dispatch: q = {q_fit} over {len(points)} points", flush=True)
    result["families"]["dispatch"] = {"memory_s": memory, "rows": rows, "q": q_fit,
                                      "points": len(points)}
    save(args.out, "overlap_probe.json", result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
