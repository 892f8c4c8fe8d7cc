"""Whether a block's barrier keeps its traffic and its arithmetic from overlapping:
work-groups of 256 work-items, each loading 4 float4 (a row of 1024 float4 a
work-group, coalesced), then k multiply-adds on each value and a store of it, with
and without a barrier between the loads and the multiply-adds, over 1, 2, 4 and 16
waves of work-groups (8 resident per SM); and the same rows reduced by a tree of 8
to 128 steps in local memory, a barrier after each (softmax's 8, again and again),
against the tree alone and the traffic alone. Each launch cold
(mcl.opencl.conditions.cache_flush). With T_m the traffic alone (k = 0), T_c the steps
alone (values made, not loaded; a store no work-item takes) and T both (each less an
empty kernel's cold time), the exponent q of T =
(T_m^q + T_c^q)^(1/q) fitted where neither is more than 3 times the other, per
family and waves: infinity is the roofline's max, 1 their sum (overlap_probe.py's
law, there with a grid that fills the device once and no barrier).

    python benchmarks/opencl/phase_probe.py --out DIR

Exits 2 without an NVIDIA OpenCL device.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from overlap_probe import comparable, fit_exponent  # noqa: E402
from probe_timing import median_time, probe_setup, save  # noqa: E402

SOURCE = r"""
#define PER 4
#define LOCAL 256
#define LOADED(g) in[g]
#define MADE(g) ((float4)((g) * 1e-9f, (g) * 2e-9f, (g) * 3e-9f, (g) * 4e-9f))
#define STORED(g, val) out[g] = val;
#define DROPPED(g, val) if ((val).s0 == -12345.0f) out[g] = val;
#define WAIT barrier(CLK_LOCAL_MEM_FENCE);
#define NO_WAIT

__kernel void empty(__global float4* out) { }

#define PHASED(name, VALUE, BETWEEN, STORE) \
__kernel void name(__global float4* out, __global const float4* in, int k) { \
  int base = get_group_id(0) * (PER * LOCAL) + get_local_id(0); \
  float4 v[PER]; \
  _Pragma("unroll") \
  for (int e = 0; e < PER; e++) v[e] = VALUE(base + e * LOCAL); \
  BETWEEN \
  _Pragma("unroll") \
  for (int e = 0; e < PER; e++) { \
    float4 acc = v[e]; \
    _Pragma("unroll 8") \
    for (int i = 0; i < k; i++) acc = acc * 0.999f + v[e]; \
    STORE(base + e * LOCAL, acc) \
  } \
}
PHASED(barrier_both, LOADED, WAIT, STORED)
PHASED(barrier_alone, MADE, WAIT, DROPPED)
PHASED(free_both, LOADED, NO_WAIT, STORED)
PHASED(free_alone, MADE, NO_WAIT, DROPPED)

#define TREE(name, VALUE, STORE) \
__kernel void name(__global float4* out, __global const float4* in, int k) { \
  __local float red[LOCAL]; \
  int lid = get_local_id(0); \
  int base = get_group_id(0) * (PER * LOCAL) + lid; \
  float4 v[PER]; \
  float s = 0.0f; \
  _Pragma("unroll") \
  for (int e = 0; e < PER; e++) { v[e] = VALUE(base + e * LOCAL); s += v[e].x + v[e].y; } \
  red[lid] = s; \
  barrier(CLK_LOCAL_MEM_FENCE); \
  for (int step = 0; step < k; step++) { \
    int h = (LOCAL / 2) >> (step % 8); \
    if (lid < h) red[lid] = red[lid] + red[lid + h]; \
    barrier(CLK_LOCAL_MEM_FENCE); \
  } \
  float total = red[0]; \
  _Pragma("unroll") \
  for (int e = 0; e < PER; e++) STORE(base + e * LOCAL, v[e] / total) \
}
TREE(tree_both, LOADED, STORED)
TREE(tree_alone, MADE, DROPPED)
__kernel void copy(__global float4* out, __global const float4* in, int k) {
  int base = get_group_id(0) * (PER * LOCAL) + get_local_id(0);
  float4 v[PER];
  _Pragma("unroll")
  for (int e = 0; e < PER; e++) v[e] = in[base + e * LOCAL];
  _Pragma("unroll")
  for (int e = 0; e < PER; e++) out[base + e * LOCAL] = v[e];
}
"""

#: work-items per work-group, float4 elements per work-item, work-groups resident per SM
LOCAL, PER, RESIDENT = 256, 4, 8
#: waves of work-groups timed
WAVES = (1, 2, 4, 16)
#: multiply-adds per value timed
STEPS = (0, 16, 32, 48, 64, 96, 128, 192, 256)
#: steps of the reduction tree timed (a barrier after each)
TREE_STEPS = (8, 16, 32, 48, 64, 96, 128)


def main() -> int:
    found = probe_setup(__doc__, "phase_probe", 10)
    if found is None:
        return 2
    args, dev, ctx, q = found
    import pyopencl as cl

    prg = cl.Program(ctx, SOURCE).build()
    sms = dev.max_compute_units
    most = max(WAVES) * sms * RESIDENT * LOCAL * PER
    a, b = (cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 16 * most) for _ in range(2))
    for buf in (a, b):
        cl.enqueue_fill_buffer(q, buf, np.float32(1.0), 0, 16 * most)
    from mcl.opencl.conditions import cache_flush  # written, then read
    flush = cache_flush(ctx, q)

    def cold(name, groups, k=0) -> float:
        knl = cl.Kernel(prg, name)
        return median_time(q, knl, (groups * LOCAL,), (LOCAL,), (a, b, np.int32(k)),
                           args.repeats, warmup=1, before=flush)

    empty = median_time(q, prg.empty, (LOCAL,), (LOCAL,), (a,), args.repeats, warmup=1,
                        before=flush)
    print(f"empty kernel, cold: {empty * 1e6:.2f} us", flush=True)
    result = {"device": dev.name, "local": LOCAL, "per_item": PER, "resident": RESIDENT,
              "sms": sms, "empty_s": empty, "waves": {}}
    for waves in WAVES:
        groups = waves * sms * RESIDENT
        memory = cold("copy", groups) - empty
        entry = {"groups": groups, "bytes": 2 * 16 * groups * LOCAL * PER,
                 "memory_s": memory, "families": {}}
        print(f"{waves} waves ({groups} work-groups): traffic alone {memory * 1e6:.2f} us",
              flush=True)
        for family in ("barrier", "free"):
            rows, points = [], []
            for k in STEPS:
                both = cold(f"{family}_both", groups, k) - empty
                alone = cold(f"{family}_alone", groups, k) - empty
                rows.append({"k": k, "both_s": both, "alone_s": alone})
                if k and comparable(memory, alone):
                    points.append((memory, alone, both))
                print(f"  {family} k = {k:3d}: both {both * 1e6:7.2f} us, steps alone "
                      f"{alone * 1e6:7.2f} us, both / longer "
                      f"{both / max(alone, memory):5.3f}", flush=True)
            fit = fit_exponent(points)
            print(f"  {family}: q = {fit} over {len(points)} points", flush=True)
            entry["families"][family] = {"rows": rows, "q": fit, "points": len(points)}
        rows, points = [], []
        for k in TREE_STEPS:
            both = cold("tree_both", groups, k) - empty
            alone = cold("tree_alone", groups, k) - empty
            rows.append({"steps": k, "both_s": both, "alone_s": alone})
            if comparable(memory, alone):
                points.append((memory, alone, both))
            print(f"  tree of {k:3d} steps: both {both * 1e6:7.2f} us, tree alone "
                  f"{alone * 1e6:7.2f} us, both / longer {both / max(alone, memory):5.3f}",
                  flush=True)
        fit = fit_exponent(points)
        print(f"  tree: q = {fit} over {len(points)} points", flush=True)
        entry["tree"] = {"rows": rows, "q": fit, "points": len(points)}
        result["waves"][str(waves)] = entry
    save(args.out, "phase_probe.json", result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
