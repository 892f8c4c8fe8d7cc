"""Matmul on the H100 through OpenCL: the stepwise-refined hopper versions against
cuBLAS SGEMM (torch.matmul, no TF32) and the generated perfect-level matmul against
a hand-written naive OpenCL kernel of the same structure, all in one run.

    python benchmarks/opencl/matmul_bench.py --out benchmarks/results/opencl_matmul

Every result is checked against a reference before it is timed. Kernel times
come from OpenCL profiling events (best of --repeat after a warm-up); cuBLAS is
timed with CUDA events the same way. Writes results.json and results.md.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import mcl  # noqa: E402
from mcl.opencl import device  # noqa: E402

EXAMPLES = ROOT / "examples" / "matmul"
VERSIONS = ("hopper", "hopper_v1", "hopper_v2", "hopper_v3", "hopper_v4", "hopper_v5", "hopper_v6")

NAIVE = """
__kernel void matmul_naive(const int n, const int m, const int p,
                           __global float* restrict c,
                           __global const float* restrict a,
                           __global const float* restrict b)
{
    const int j = get_global_id(0);
    const int i = get_global_id(1);
    if (i < n && j < m) {
        float sum = 0.0f;
        for (int k = 0; k < p; k++) {
            sum += a[i * p + k] * b[k * m + j];
        }
        c[i * m + j] = sum;
    }
}
"""


def event_seconds(ev) -> float:
    import pyopencl as cl
    ev.wait()
    return (ev.get_profiling_info(cl.profiling_info.END)
            - ev.get_profiling_info(cl.profiling_info.START)) * 1e-9


def check(name: str, got: np.ndarray, want: np.ndarray, rtol=1e-3, atol=1e-2) -> dict:
    err = float(np.max(np.abs(got.astype(np.float64) - want))) if want.size else 0.0
    ok = bool(np.allclose(got, want, rtol=rtol, atol=atol))
    print(f"  {name}: {'ok' if ok else 'WRONG'} (max abs error {err:.3g})", flush=True)
    return {"verified": ok, "max_abs_error": err}


def cublas(a: np.ndarray, b: np.ndarray, repeat: int) -> dict:
    try:
        import torch
    except ImportError:
        return {"skipped": "torch is not installed"}
    if not torch.cuda.is_available():
        return {"skipped": "no CUDA device for torch"}
    torch.backends.cuda.matmul.allow_tf32 = False
    ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
    tc = torch.matmul(ta, tb)
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(repeat + 2):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        torch.matmul(ta, tb, out=tc)
        end.record()
        torch.cuda.synchronize()
        best = min(best, start.elapsed_time(end) * 1e-3)
    return {"seconds": best, "result": tc.cpu().numpy()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--device", default=None, help="PLATFORM:DEVICE (default: a GPU)")
    ap.add_argument("--out", default="benchmarks/results/opencl_matmul")
    ap.add_argument("--versions", nargs="+", default=list(VERSIONS),
                    help=f"versions of examples/matmul to time (default: {' '.join(VERSIONS)})")
    ap.add_argument("--watchdog", type=float, default=0,
                    help="after this many seconds, print every thread's stack and exit")
    args = ap.parse_args()
    if args.watchdog:
        import faulthandler
        faulthandler.dump_traceback_later(args.watchdog, exit=True)

    rt = device.runtime(args.device)
    info = device.describe(rt.device)
    print(f"device: {info.spec} ({info.kind})", flush=True)
    if info.kind != "GPU":
        hint = device.registration_hint()
        print("warning: not a GPU" + (f"; {hint}" if hint else ""), flush=True)
    n = m = p = args.size
    flops = 2.0 * n * m * p
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (n, p)).astype(np.float32)
    b = rng.uniform(-1, 1, (p, m)).astype(np.float32)
    results: dict = {"device": info.spec, "size": [n, m, p], "repeat": args.repeat,
                     "date": time.strftime("%Y-%m-%d %H:%M:%S"), "kernels": {}}

    # OpenCL kernels first, cuBLAS last: every output is kept on the host and checked
    # against the cuBLAS product at the end; timings of a wrong result are dropped.
    import pyopencl as cl
    import pyopencl.array as cla
    da, db = cla.to_device(rt.queue, a), cla.to_device(rt.queue, b)
    outputs: dict[str, np.ndarray] = {}

    def measure(name: str, kernel) -> dict:
        print(name, flush=True)
        entry: dict = {}
        try:
            dc = cla.zeros(rt.queue, (n, m), np.float32)
            kernel(n=n, m=m, p=p, a=da, b=db, c=dc)
            outputs[name] = dc.get()
            entry["seconds"] = kernel.time(repeat=args.repeat, n=n, m=m, p=p, a=da, b=db, c=dc)
            entry["gflops"] = flops / entry["seconds"] / 1e9
            print(f"  {entry['seconds'] * 1e3:.3f} ms, {entry['gflops']:.0f} GFLOP/s", flush=True)
        except mcl.diagnostics.McplError as e:
            entry["error"] = str(e)
            print(f"  error: {e}", flush=True)
        return entry

    for v in args.versions:
        results["kernels"][v] = measure(v, mcl.compile(EXAMPLES / f"{v}.mcpl", context=rt.context,
                                                       queue=rt.queue))
    # the perfect-level matmul, translated to hopper and generated, against naive OpenCL
    perfect = mcl.compile(EXAMPLES / "perfect.mcpl", target="hopper", context=rt.context,
                          queue=rt.queue)
    from mcl.opencl.plan import evaluate
    local = tuple(evaluate(e, {"n": n, "m": m, "p": p}) for e in perfect.plan.local_size)
    results["kernels"]["perfect"] = {**measure("perfect", perfect), "local_size": list(local)}

    print("naive hand-written OpenCL (same local size)", flush=True)
    if len(local) < 2:
        local = (local[0], 1)
    prog = cl.Program(rt.context, NAIVE).build()
    dc = cla.zeros(rt.queue, (n, m), np.float32)
    glob = (-(-m // local[0]) * local[0], -(-n // local[1]) * local[1])
    knl = cl.Kernel(prog, "matmul_naive")
    run = lambda: knl(rt.queue, glob, local[:2], np.int32(n), np.int32(m),  # noqa: E731
                      np.int32(p), dc.data, da.data, db.data)
    naive: dict = {"local_size": list(local[:2])}
    try:
        run().wait()
        outputs["naive_opencl"] = dc.get()
        for _ in range(2):
            run().wait()
        naive["seconds"] = min(event_seconds(run()) for _ in range(args.repeat))
        naive["gflops"] = flops / naive["seconds"] / 1e9
    except cl.Error as e:
        naive["error"] = str(e)
    results["kernels"]["naive_opencl"] = naive

    print("cuBLAS SGEMM (torch.matmul, allow_tf32=False)", flush=True)
    cb = cublas(a, b, args.repeat)
    want = cb.pop("result", None)
    if want is None:
        want = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)
        results["reference"] = "numpy float64"
    else:
        results["reference"] = "cuBLAS"
        cb["gflops"] = flops / cb["seconds"] / 1e9
    results["kernels"]["cublas"] = cb
    for name, got in outputs.items():
        entry = results["kernels"][name]
        entry.update(check(name, got, want))
        if not entry["verified"]:
            entry.pop("seconds", None)
            entry.pop("gflops", None)

    ks = results["kernels"]
    ratios = {}
    if "gflops" in ks["cublas"]:
        for v in args.versions:
            if "gflops" in ks[v]:
                ratios[f"{v}/cublas"] = ks[v]["gflops"] / ks["cublas"]["gflops"]
    if "gflops" in ks["perfect"] and "gflops" in naive:
        ratios["perfect/naive"] = ks["perfect"]["gflops"] / naive["gflops"]
    results["ratios"] = ratios

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    lines = [f"# OpenCL matmul {n}x{m}x{p} on {info.spec}", "",
             f"{results['date']}; best of {args.repeat}; verified against "
             f"{results['reference']} before timing.", "",
             "| kernel | verified | ms | GFLOP/s | ratio |", "| --- | --- | --- | --- | --- |"]
    for name, e in ks.items():
        ratio = ratios.get(f"{name}/cublas") or (ratios.get("perfect/naive")
                                                 if name == "perfect" else None)
        lines.append(f"| {name} | {e.get('verified', '-')} | "
                     f"{e['seconds'] * 1e3:.3f} | {e['gflops']:.0f} | "
                     f"{'' if ratio is None else f'{ratio:.2f}'} |" if "seconds" in e else
                     f"| {name} | {e.get('verified', '-')} | - | - | "
                     f"{e.get('error', e.get('skipped', ''))[:80]} |")
    lines += ["", "Targets (issue 5): best hopper version >= 0.60 of cuBLAS; perfect within "
              "10% of naive (ratio >= 0.90)."]
    (out / "results.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
