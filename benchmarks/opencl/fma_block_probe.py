"""How often an SM's schedulers issue in multiply-add code of the shapes the issue-bound
examples have, with no device memory in the loop: the share of the cycles in which a
scheduler issues an instruction (warp instructions over 4 schedulers an SM times the
clock times the seconds an iteration takes, from two loop lengths).

* ``stream8``: 8 independent chains of multiply-adds a work-item (overlap_probe.py's
  ``fma_alone`` issued in 98% of the cycles);
* ``outer``: an 8 x 8 outer product of two register fragments into 64 accumulators,
  the fragments scaled after each (matmul's inner step without its shared memory):
  64 FFMA and 16 FMUL an iteration; ``outer_RxC``, the same with R x C accumulators
  (4 x 4 to 16 x 8: the blocks of matmul's versions);
* ``outer_lds``: the same with the fragments read from local memory each iteration,
  4 128-bit reads (matmul hopper_v5..v12's step): 64 FFMA and 4 LDS.128;
* ``conv_like``: 4 outputs of a row from 12 register values and a 9 x 9 filter passed
  by value, each weight an operand from the arguments' constant bank (convolution
  hopper_v4's step): 324 FFMA and 12 FMUL an iteration.

The issue-bound examples issue in 63-78% of their cycles (ncu on the H200,
benchmarks/results/fidelity/raw/h200_2026-11-30_issue/), which the time model takes as
100%: this says whether the shapes themselves, compiled by NVIDIA's compiler, issue
less than a stream does.

    python benchmarks/opencl/fma_block_probe.py --out DIR [--device cpu]

Exits 2 without an NVIDIA OpenCL device (``--device cpu``: PoCL, each kernel's results
checked against numpy at a few iterations).
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
__kernel void stream8(__global float* out, int k, float s) {
  int g = get_global_id(0);
  float acc[8];
  for (int i = 0; i < 8; i++) acc[i] = g * 1e-6f + i;
  for (int it = 0; it < k; it++) {
    #pragma unroll
    for (int i = 0; i < 8; i++) acc[i] = acc[i] * s + 1.0f;
  }
  float t = 0.0f;
  for (int i = 0; i < 8; i++) t += acc[i];
  out[g] = t;
}

__kernel void outer(__global float* out, int k, float s) {
  int g = get_global_id(0);
  float a[8], b[8], acc[64];
  #pragma unroll
  for (int i = 0; i < 8; i++) { a[i] = g * 1e-6f + i; b[i] = 0.5f * i + 1.0f; }
  #pragma unroll
  for (int i = 0; i < 64; i++) acc[i] = 0.0f;
  for (int it = 0; it < k; it++) {
    #pragma unroll
    for (int i = 0; i < 8; i++) {
      #pragma unroll
      for (int j = 0; j < 8; j++) acc[i * 8 + j] += a[i] * b[j];
    }
    #pragma unroll
    for (int i = 0; i < 8; i++) { a[i] *= s; b[i] *= s; }
  }
  float t = 0.0f;
  #pragma unroll
  for (int i = 0; i < 64; i++) t += acc[i];
  out[g] = t;
}

#define OUTER_RC(R, C) \
__kernel void outer_##R##x##C(__global float* out, int k, float s) { \
  int g = get_global_id(0); \
  float a[R], b[C], acc[R * C]; \
  _Pragma("unroll") for (int i = 0; i < R; i++) a[i] = g * 1e-6f + i; \
  _Pragma("unroll") for (int j = 0; j < C; j++) b[j] = 0.5f * j + 1.0f; \
  _Pragma("unroll") for (int i = 0; i < R * C; i++) acc[i] = 0.0f; \
  for (int it = 0; it < k; it++) { \
    _Pragma("unroll") for (int i = 0; i < R; i++) { \
      _Pragma("unroll") for (int j = 0; j < C; j++) acc[i * C + j] += a[i] * b[j]; } \
    _Pragma("unroll") for (int i = 0; i < R; i++) a[i] *= s; \
    _Pragma("unroll") for (int j = 0; j < C; j++) b[j] *= s; \
  } \
  float t = 0.0f; \
  _Pragma("unroll") for (int i = 0; i < R * C; i++) t += acc[i]; \
  out[g] = t; \
}
OUTER_RC(4, 4)
OUTER_RC(4, 8)
OUTER_RC(8, 4)
OUTER_RC(8, 16)
OUTER_RC(16, 8)

__kernel __attribute__((reqd_work_group_size(256, 1, 1)))
void outer_lds(__global float* out, int k, float s) {
  __local float4 frag[512];
  int g = get_global_id(0), lid = get_local_id(0);
  frag[lid] = (float4)(lid * 1e-3f, 1.0f, 0.5f, 0.25f);
  frag[lid + 256] = (float4)(0.125f, lid * 2e-3f, 1.0f, 0.75f);
  barrier(CLK_LOCAL_MEM_FENCE);
  float acc[64];
  #pragma unroll
  for (int i = 0; i < 64; i++) acc[i] = 0.0f;
  for (int it = 0; it < k; it++) {
    int w = (lid + it) & 255;
    float4 a0 = frag[w], a1 = frag[w ^ 1], b0 = frag[256 + w], b1 = frag[256 + (w ^ 2)];
    float a[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
    float b[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
    #pragma unroll
    for (int i = 0; i < 8; i++) {
      #pragma unroll
      for (int j = 0; j < 8; j++) acc[i * 8 + j] += a[i] * b[j];
    }
  }
  float t = 0.0f;
  #pragma unroll
  for (int i = 0; i < 64; i++) t += acc[i];
  out[g] = t * s;
}

typedef struct { float v[81]; } filter_value;

__kernel void conv_like(__global float* out, int k, float s, const filter_value f) {
  int g = get_global_id(0);
  float line[12], acc[4];
  #pragma unroll
  for (int i = 0; i < 12; i++) line[i] = g * 1e-6f + 0.1f * i;
  #pragma unroll
  for (int c = 0; c < 4; c++) acc[c] = 0.0f;
  for (int it = 0; it < k; it++) {
    #pragma unroll
    for (int y = 0; y < 9; y++) {
      #pragma unroll
      for (int x = 0; x < 9; x++) {
        #pragma unroll
        for (int c = 0; c < 4; c++) acc[c] += f.v[y * 9 + x] * line[c + x];
      }
    }
    #pragma unroll
    for (int i = 0; i < 12; i++) line[i] *= s;
  }
  out[g] = acc[0] + acc[1] + acc[2] + acc[3];
}
"""

#: kernel -> (warp instructions an iteration of a work-item, of them multiply-adds)
WORK = {"stream8": (8, 8), "outer": (80, 64), "outer_lds": (68, 64),
        "conv_like": (336, 324),
        **{f"outer_{r}x{c}": (r * c + r + c, r * c)
           for r, c in ((4, 4), (4, 8), (8, 4), (8, 16), (16, 8))}}
LOCAL = 256
#: iterations of the short and the long run: their difference is what an iteration takes
K = (256, 1280)


def expected(name: str, items: int, k: int, s: float, filt: np.ndarray) -> np.ndarray:
    """What each work-item of ``name`` writes after ``k`` iterations (numpy, float64)."""
    g = np.arange(items, dtype=np.float64)
    if name == "stream8":
        acc = g[:, None] * 1e-6 + np.arange(8)
        for _ in range(k):
            acc = acc * s + 1.0
        return acc.sum(1)
    if name.startswith("outer") and name != "outer_lds":
        r, c = (8, 8) if name == "outer" else map(int, name[6:].split("x"))
        a = g[:, None] * 1e-6 + np.arange(r)
        b = np.broadcast_to(0.5 * np.arange(c) + 1.0, (items, c))
        scale = sum(s ** (2 * it) for it in range(k))
        return a.sum(1) * b.sum(1) * scale
    if name == "outer_lds":
        # the group's fragments in local memory, as each of its work-items writes its own
        t = np.arange(LOCAL, dtype=np.float64)
        one = np.ones(LOCAL)
        frag_a = np.stack([t * 1e-3, one, 0.5 * one, 0.25 * one], 1)
        frag_b = np.stack([0.125 * one, t * 2e-3, one, 0.75 * one], 1)
        lid = (g % LOCAL).astype(int)
        total = np.zeros(items)
        for it in range(k):
            w = (lid + it) & 255
            a = np.concatenate([frag_a[w], frag_a[w ^ 1]], 1)
            b = np.concatenate([frag_b[w], frag_b[w ^ 2]], 1)
            total += a.sum(1) * b.sum(1)
        return total * s
    line = g[:, None] * 1e-6 + 0.1 * np.arange(12)
    acc = np.zeros((items, 4))
    weights = filt.reshape(9, 9).astype(np.float64)
    for _ in range(k):
        for c in range(4):
            acc[:, c] += sum(weights[y, x] * line[:, c + x] for y in range(9) for x in range(9))
        line = line * s
    return acc.sum(1)


def main() -> int:
    found = probe_setup(__doc__, "fma_block_probe", 10, cpu_twin=True)
    if found is None:
        return 2
    args, dev, ctx, q = found
    import pyopencl as cl

    from mcl.opencl.by_value import packed

    cpu = args.device == "cpu"
    prg = cl.Program(ctx, SOURCE).build()
    items = LOCAL * 4 if cpu else dev.max_compute_units * 2048
    out = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 * items)
    s = np.float32(0.999)
    filt = (np.arange(81, dtype=np.float32) % 7) * np.float32(0.01)
    schedulers = dev.max_compute_units * 4
    clock = dev.max_clock_frequency * 1e6
    result = {"device": dev.name, "work_items": items, "local": LOCAL, "k": K,
              "schedulers": schedulers, "clock_hz": clock, "kernels": {}}
    bad = 0
    for name, (instructions, fmas) in WORK.items():
        knl = cl.Kernel(prg, name)

        def argv(k, knl=knl, name=name):
            extra = (packed(filt, np.float32),) if name == "conv_like" else ()
            return (out, np.int32(k), s, *extra)
        if cpu:
            k = 3
            knl.set_args(*argv(k))
            cl.enqueue_nd_range_kernel(q, knl, (items,), (LOCAL,))
            got = np.empty(items, np.float32)
            cl.enqueue_copy(q, got, out)
            want = expected(name, items, k, float(s), filt)
            ok = np.allclose(got, want, rtol=1e-4, atol=1e-4)
            bad += not ok
            print(f"{name}: {'ok' if ok else 'WRONG'} (max |error| "
                  f"{np.max(np.abs(got - want)):.3g})", flush=True)
            continue
        short, long = (median_time(q, knl, (items,), (LOCAL,), argv(k), args.repeats)
                       for k in K)
        per_iteration = (long - short) / (K[1] - K[0])
        warps = items / 32
        share = instructions * warps / (schedulers * clock * per_iteration)
        fma_rate = 2 * fmas * items / per_iteration
        result["kernels"][name] = {"instructions_an_iteration": instructions,
                                   "fma_an_iteration": fmas, "short_s": short, "long_s": long,
                                   "seconds_an_iteration": per_iteration,
                                   "issue_share": share, "fma_flops": fma_rate}
        print(f"{name:10s} {per_iteration * 1e9:8.2f} ns an iteration: issue share "
              f"{share:.3f}, {fma_rate / 1e12:.1f} TFLOP/s in multiply-adds", flush=True)
    if cpu:
        return 1 if bad else 0
    save(args.out, "fma_block_probe.json", result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
