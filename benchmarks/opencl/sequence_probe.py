"""Does a work-item that handles its elements one after the other cost more the more it
handles? black_scholes' shape: per element 3 floats read, K multiply-adds on them in two
chains (or, K = -1, black_scholes' own option: exp, log, sqrt, divisions), 2 floats
written, the next element's loads after this one's stores (a loop the compiler keeps
rolled: its stores may alias the next loads). 2^22 elements (80 MB moved in all),
work-groups of 256, each work-item P elements of its work-group's chunk (coalesced: element
``chunk + j * 256 + t``), so the grid goes from 15.5 rounds of the device's resident
work-groups (P = 1) to half a round (P = 32); and the persistent form (one round, a
grid-stride loop: black_scholes hopper_v1's). The drain probe (drain_probe.py) found a
streaming read's time independent of a work-group's life where its loads are
independent; black_scholes' versions and variants on the H100 and the H200 take about
0.12 of a work-group's life more each time the life doubles
(benchmarks/fidelity/CALIBRATION.md): this says whether the elements in sequence, and
the arithmetic between their round trips, are what costs. Each launch is timed cold
(mcl.opencl.conditions.cache_flush before it, as the fidelity harness times) and queued
behind keep_awake (median of ``--repeats`` each); each result is checked.

    python benchmarks/opencl/sequence_probe.py --out DIR

`--device cpu` runs the same kernels on PoCL, checked (their times say nothing);
`--cuda` launches each configuration once through the CUDA driver (the OpenCL program's
PTX, as the fidelity harness launches kernels), checked, and times nothing: for ncu,
which does not see OpenCL kernels (benchmarks/runs/sequence_probe.sh).

Exits 2 without an NVIDIA OpenCL device.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT / "benchmarks" / "fidelity"))   # ptx_driver, for --cuda
from probe_timing import median_time, probe_setup, save  # noqa: E402

SOURCE = r"""
#if K < 0
// black_scholes' option (the CUDA SDK's): S = x + 5, X = y + 1, T = z + 0.25
float cnd(float d) {
  float k = 1.0f / (1.0f + 0.2316419f * fabs(d));
  float c = 0.3989422804f * exp(-0.5f * d * d) * (k * (0.31938153f + k * (-0.356563782f
            + k * (1.781477937f + k * (-1.821255978f + k * 1.330274429f)))));
  return d > 0 ? 1.0f - c : c;
}
#endif
inline void one(__global float *o1, __global float *o2, __global const float *a,
                __global const float *b, __global const float *c, int i) {
  float x = a[i], y = b[i], z = c[i];
#if K < 0
  float S = x + 5.0f, X = y + 1.0f, T = z + 0.25f, R = 0.02f, V = 0.3f;
  float sq = sqrt(T), d1 = (log(S / X) + (R + 0.5f * V * V) * T) / (V * sq), d2 = d1 - V * sq;
  float n1 = cnd(d1), n2 = cnd(d2), e = exp(-R * T);
  o1[i] = S * n1 - X * e * n2; o2[i] = X * e * (1.0f - n2) - S * (1.0f - n1);
#else
  float s = x, u = y;
  for (int r = 0; r < K; r++) { s = fma(s, 0.999f, z); u = fma(u, 0.999f, x); }
  o1[i] = s; o2[i] = u;
#endif
}
__kernel void chunk(__global float *o1, __global float *o2, __global const float *a,
                    __global const float *b, __global const float *c, int per) {
  int t = get_local_id(0), l = get_local_size(0);
  int base = get_group_id(0) * l * per;
  #pragma unroll 1
  for (int j = 0; j < per; j++) one(o1, o2, a, b, c, base + j * l + t);
}
__kernel void stride(__global float *o1, __global float *o2, __global const float *a,
                     __global const float *b, __global const float *c, int n, int step) {
  // step: the grid's work-items (an argument: a launch through the CUDA driver leaves
  // the OpenCL global size undefined)
  #pragma unroll 1
  for (int i = get_global_id(0); i < n; i += step) one(o1, o2, a, b, c, i);
}
"""

N = 1 << 22
LOCAL = 256
PERS = (1, 2, 4, 8, 16, 32)
#: multiply-adds in each of two chains an element; -1: black_scholes' option instead
KS = (0, 16, 48, 96, -1)


def _cnd(d: np.ndarray) -> np.ndarray:
    k = 1.0 / (1.0 + 0.2316419 * np.abs(d))
    c = 0.3989422804 * np.exp(-0.5 * d * d) * (k * (0.31938153 + k * (-0.356563782 + k * (
        1.781477937 + k * (-1.821255978 + k * 1.330274429)))))
    return np.where(d > 0, 1.0 - c, c)


def expected(a: np.ndarray, b: np.ndarray, c: np.ndarray, k: int):
    if k < 0:
        S, X, T = a + 5.0, b + 1.0, c + 0.25
        sq = np.sqrt(T)
        d1 = (np.log(S / X) + (0.02 + 0.5 * 0.09) * T) / (0.3 * sq)
        n1, n2, e = _cnd(d1), _cnd(d1 - 0.3 * sq), np.exp(-0.02 * T)
        return S * n1 - X * e * n2, X * e * (1.0 - n2) - S * (1.0 - n1)
    s, u = a.copy(), b.copy()
    for _ in range(k):
        s = (s * np.float32(0.999) + c).astype(np.float32)
        u = (u * np.float32(0.999) + a).astype(np.float32)
    return s, u


def _cuda_launch(prg, form: str, groups: int, scalars, host, want) -> bool:
    """One launch of ``form`` from the OpenCL program's PTX through the CUDA driver
    (benchmarks/fidelity/ptx_driver.py), its outputs checked."""
    from ptx_driver import DeviceArrays, for_cuda, launch

    from mcl.opencl.vendor import load
    loaded = load(for_cuda(prg.binaries[0]), form, None)
    bufs = DeviceArrays()
    try:
        outs = [bufs.zeros(4 * N) for _ in range(2)]
        ins = [bufs.upload(h) for h in host]
        launch(loaded, (groups,), (LOCAL,),
               [(p, None) for p in (*outs, *ins)] + [(int(v), "int32") for v in scalars])
        return all(bool(np.allclose(DeviceArrays.download(o, w.astype(np.float32)), w,
                                    rtol=1e-3, atol=1e-4)) for o, w in zip(outs, want,
                                                                           strict=True))
    finally:
        bufs.free()
        loaded.unload()


def main() -> int:
    found = probe_setup(__doc__, "sequence_probe", 10, cpu_twin=True, extra=lambda ap:
                        ap.add_argument("--cuda", action="store_true",
                                        help="launch each configuration once through the "
                                        "CUDA driver, untimed (for ncu)"))
    if found is None:
        return 2
    args, dev, ctx, q = found
    import pyopencl as cl

    from mcl.opencl.conditions import cache_flush, keep_awake
    rng = np.random.default_rng(1)
    host = [rng.random(N, dtype=np.float32) for _ in range(3)]
    mf = cl.mem_flags
    ins = [cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=h) for h in host]
    outs = [cl.Buffer(ctx, mf.READ_WRITE, 4 * N) for _ in range(2)]
    slots = dev.max_compute_units * 2048 // LOCAL
    awake, cold = keep_awake(ctx, q), cache_flush(ctx, q)
    rows = []
    for k in KS:
        prg = cl.Program(ctx, SOURCE).build(options=[f"-DK={k}"])
        kernels = {form: cl.Kernel(prg, form) for form in ("chunk", "stride")}
        want = expected(*host, k)
        shapes = [("chunk", per, N // (LOCAL * per)) for per in PERS] + [("stride", None, slots)]
        for form, per, groups in shapes:
            knl = kernels[form]
            argv = (*outs, *ins, np.int32(per)) if form == "chunk" else \
                (*outs, *ins, np.int32(N), np.int32(groups * LOCAL))
            gsize, lsize = (groups * LOCAL,), (LOCAL,)
            for o in outs:
                cl.enqueue_fill_buffer(q, o, np.float32(0), 0, 4 * N)
            knl(q, gsize, lsize, *argv).wait()
            ok = True
            for o, w in zip(outs, want, strict=True):
                got = np.empty(N, np.float32)
                cl.enqueue_copy(q, got, o).wait()
                ok = ok and bool(np.allclose(got, w, rtol=1e-3, atol=1e-4))
            if args.cuda:
                ok = _cuda_launch(prg, form, groups, argv[5:], host, want)
                print(f"K {k:3d} {form:6s} per {per}: through the CUDA driver, correct {ok}",
                      flush=True)
                rows.append({"k": k, "form": form, "groups": groups, "correct": ok})
                continue
            tc = median_time(q, knl, gsize, lsize, argv, args.repeats, before=cold)
            ta = median_time(q, knl, gsize, lsize, argv, args.repeats, before=awake)
            rounds = groups / slots
            trips = per if form == "chunk" else N / (groups * LOCAL)
            rows.append({"k": k, "form": form, "per": trips, "groups": groups,
                         "rounds": rounds, "cold_s": tc, "awake_s": ta, "correct": ok})
            print(f"K {k:3d} {form:6s} per {trips:5.1f}: {groups:6d} groups, {rounds:6.2f} "
                  f"rounds, {tc * 1e6:6.1f} us cold, {ta * 1e6:6.1f} awake, correct {ok}",
                  flush=True)
    if not args.cuda:
        save(args.out, "sequence_probe.json", {"device": dev.name, "elements": N,
                                               "local": LOCAL, "slots": slots, "rows": rows})
    return 0 if all(r["correct"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
