"""Lift on the GPU machine, everything in one run (issue 8's numbers):

* sum of 2^28 floats: exploration (MCTS) vs torch.sum, the seven baseline
  kernels reduce0..reduce6 (reduce_baselines.cl) and an OpenCL device copy;
* gemv 8192x8192: exploration vs torch.addmv (cuBLAS gemv);
* mm 4096^3: exploration vs torch.matmul (cuBLAS SGEMM, TF32 off); the search
  first measures the derivations expected to be fastest, each reported on its own
  as well: mm-tiling-double-buffered (128x128 tiles, 8x8 results per work-item in
  runs of 4, k-tiles of 16 double-buffered in local memory, float4 loads of the
  next k-tiles into registers during each k-step, one barrier per k-step: the
  shape of examples/matmul/hopper_v5.mcpl) and mm-tiling-vectorised (the same
  with k-tiles of 8 in one local buffer, two barriers per k-step).
  benchmarks/lift/mm_candidates.py times more of their parameters.

Every candidate and every reference is checked before it is timed; times are
medians of profiled runs (OpenCL events, CUDA events for torch) after a
warm-up. Writes results.json, results.md, the exploration files and a plot of
best-so-far time against candidates tried into --out.

    python benchmarks/lift/run_all.py --out benchmarks/results/lift
    python benchmarks/lift/run_all.py --only mm --out /tmp/lift_mm    # mm alone
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT))

from mcl.lift import macros  # noqa: E402, F401  (registers the macro rules)
from mcl.lift.explore import explore  # noqa: E402
from mcl.lift.ir import bind_sizes  # noqa: E402
from mcl.lift.parser import parse_file  # noqa: E402
from mcl.lift.printer import key  # noqa: E402
from mcl.lift.rules import apply_rule  # noqa: E402

PROGRAMS = ROOT / "mcl" / "lift" / "programs"


def torch_time(fn, repeat: int = 20) -> float:
    import torch
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeat):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1e-3)
    return float(np.median(times))


def cl_copy_time(rt, nbytes: int, repeat: int = 20) -> float:
    import pyopencl as cl
    src = cl.Buffer(rt.context, cl.mem_flags.READ_WRITE, nbytes)
    dst = cl.Buffer(rt.context, cl.mem_flags.READ_WRITE, nbytes)
    for _ in range(3):
        cl.enqueue_copy(rt.queue, dst, src)
    rt.queue.finish()
    times = []
    for _ in range(repeat):
        ev = cl.enqueue_copy(rt.queue, dst, src)
        ev.wait()
        times.append((ev.profile.end - ev.profile.start) * 1e-9)
    return float(np.median(times))


def baseline_reductions(rt, x: np.ndarray, wg: int = 256, repeat: int = 20) -> dict:
    """reduce0..reduce6 of seed 000 on the OpenCL device: a full reduction by
    repeated passes; checked against numpy, then timed (all passes)."""
    import pyopencl as cl

    from mcl.opencl.device import build_program
    src = (HERE / "reduce_baselines.cl").read_text()
    prog = build_program(rt.context, src, [f"-DWG_SIZE={wg}"], "reduce_baselines.cl")
    mf = cl.mem_flags
    n = x.size
    xbuf = cl.Buffer(rt.context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
    ref = float(x.astype(np.float64).sum())
    cus = rt.device.max_compute_units
    out = {}
    for k in range(7):
        kern = getattr(prog, f"reduce{k}")
        per_group = wg * (1 if k < 3 else 2)

        def passes(kern=kern, per_group=per_group, k=k):
            plan, m = [], n
            while m > 1:
                groups = -(-m // per_group)
                if k == 6:
                    groups = min(groups, cus * 8)
                plan.append((m, groups))
                m = groups
            return plan
        plan = passes()
        bufs = [cl.Buffer(rt.context, mf.READ_WRITE, max(4, g * 4)) for _, g in plan]

        def run(kern=kern, plan=plan, bufs=bufs):
            evs, src_buf = [], xbuf
            for (m, groups), dst in zip(plan, bufs, strict=True):
                kern.set_args(src_buf, dst, np.uint32(m), cl.LocalMemory(4 * wg))
                evs.append(cl.enqueue_nd_range_kernel(rt.queue, kern, (groups * wg,), (wg,)))
                src_buf = dst
            return evs
        run()
        res = np.empty(1, np.float32)
        cl.enqueue_copy(rt.queue, res, bufs[-1])
        rt.queue.finish()
        ok = abs(float(res[0]) - ref) <= 1e-3 * max(1.0, abs(ref))
        times = []
        for _ in range(3):
            run()
        rt.queue.finish()
        for _ in range(repeat):
            evs = run()
            evs[-1].wait()
            times.append((evs[-1].profile.end - evs[0].profile.start) * 1e-9)
        out[f"reduce{k}"] = {"time_s": float(np.median(times)), "correct": bool(ok),
                             "value": float(res[0]), "expected": ref}
    return out


def best_so_far_plot(results, path: Path, title: str) -> None:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    xs = [c[0] for c in results.curve if c[1] is not None]
    ys = [c[1] * 1e3 for c in results.curve if c[1] is not None]
    if not xs:
        return
    plt.figure(figsize=(6, 4))
    plt.step(xs, ys, where="post")
    plt.xlabel("candidates tried")
    plt.ylabel("best time so far (ms)")
    plt.yscale("log")
    plt.title(title)
    plt.grid(True, alpha=0.3)
    plt.tight_layout()
    plt.savefig(path, dpi=120)
    plt.close()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="directory for the results")
    ap.add_argument("--device", default="NVIDIA", help="OpenCL device (PLATFORM:DEVICE)")
    ap.add_argument("--sum-budget", type=int, default=200)
    ap.add_argument("--gemv-budget", type=int, default=60)
    ap.add_argument("--mm-budget", type=int, default=30)
    ap.add_argument("--log2n", type=int, default=28, help="sum of 2^log2n floats")
    ap.add_argument("--gemv-n", type=int, default=8192)
    ap.add_argument("--mm-n", type=int, default=4096)
    ap.add_argument("--only", choices=("sum", "gemv", "mm"), action="append")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    from mcl.diagnostics import McplError
    from mcl.opencl.device import registration_hint, runtime
    try:
        rt = runtime(args.device)
    except McplError as e:
        print(f"error: {e}", file=sys.stderr)
        hint = registration_hint()
        if hint:
            print(hint, file=sys.stderr)
        return 1
    try:
        import torch
        assert torch.cuda.is_available()
    except (ImportError, AssertionError):
        print("error: torch with CUDA is needed for the reference timings", file=sys.stderr)
        return 1
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    # Parts run with --only accumulate in one results file; each part is saved as soon
    # as it is measured, so a run cut short keeps what it has.
    results_file = out / "results.json"
    report: dict = json.loads(results_file.read_text()) if results_file.exists() else {}
    report.update({"device": rt.info.spec, "date": time.strftime("%Y-%m-%d %H:%M")})

    def save() -> None:
        results_file.write_text(json.dumps(report, indent=2))
        (out / "results.md").write_text(markdown(report))

    todo = args.only or ["sum", "gemv", "mm"]

    if "sum" in todo:
        n = 1 << args.log2n
        t0 = time.time()
        res = explore(parse_file(PROGRAMS / "sum.lift"), {"N": n}, "mcts", args.sum_budget,
                      args.device, out / "explore_sum.json", seed=1,
                      reference=lambda x: np.array([x.astype(np.float64).sum()]))
        search_s = time.time() - t0
        best = res.best()
        x = np.random.default_rng(1).uniform(0, 1, n).astype(np.float32)
        xt = torch.from_numpy(x).cuda()
        assert abs(float(torch.sum(xt)) - float(x.astype(np.float64).sum())) < 1e-3 * n
        t_torch = torch_time(lambda: torch.sum(xt))
        t_copy = cl_copy_time(rt, n * 4)
        base = baseline_reductions(rt, x)
        gbs = lambda t: n * 4 / t / 1e9  # noqa: E731
        # the time at which the search found its best candidate
        found = next((c for c in res.curve if best and c[1] == best["time_s"]), None)
        report["sum"] = {
            "n": n, "best": best and {k: best[k] for k in ("expression", "time_s", "local_size")},
            "best_GBps": best and gbs(best["time_s"]), "torch_sum_s": t_torch,
            "torch_GBps": gbs(t_torch), "ratio_vs_torch": best and t_torch / best["time_s"],
            "copy_GBps": 2 * n * 4 / t_copy / 1e9,
            "baselines": {k: {**v, "GBps": gbs(v["time_s"]),
                              "lift_speedup": best and v["time_s"] / best["time_s"]}
                          for k, v in base.items()},
            "search_seconds": search_s, "best_found_after_s": found and found[2],
            "best_found_after_candidates": found and found[0]}
        best_so_far_plot(res, out / "sum_best_so_far.png",
                         f"Lift sum of 2^{args.log2n} floats ({rt.info.name})")
        if best:
            (out / "sum_best.cl").write_text(best["source"])
        save()

    if "gemv" in todo:
        n = args.gemv_n

        def gemv_ref(A, x, y, a, b):
            return a * (A.astype(np.float64) @ x) + b * y
        res = explore(parse_file(PROGRAMS / "gemv.lift"), {"M": n, "N": n}, "mcts",
                      args.gemv_budget, args.device, out / "explore_gemv.json", seed=1,
                      reference=gemv_ref)
        best = res.best()
        g = torch.Generator(device="cuda").manual_seed(0)
        A = torch.rand(n, n, device="cuda", generator=g)
        xv = torch.rand(n, device="cuda", generator=g)
        yv = torch.rand(n, device="cuda", generator=g)
        t_torch = torch_time(lambda: torch.addmv(yv, A, xv, beta=0.5, alpha=2.0))
        gbs = lambda t: n * n * 4 / t / 1e9  # noqa: E731
        report["gemv"] = {"n": n, "best": best and {k: best[k] for k in ("expression", "time_s",
                                                                         "local_size")},
                          "best_GBps": best and gbs(best["time_s"]), "torch_mv_s": t_torch,
                          "torch_GBps": gbs(t_torch),
                          "ratio_vs_torch": best and t_torch / best["time_s"]}
        best_so_far_plot(res, out / "gemv_best_so_far.png", f"Lift gemv {n}x{n}")
        if best:
            (out / "gemv_best.cl").write_text(best["source"])
        save()

    if "mm" in todo:
        n = args.mm_n

        def mm_ref(A, B):
            return torch.matmul(torch.from_numpy(A).cuda().double(),
                                torch.from_numpy(B).cuda().double()).cpu().numpy()
        mm = parse_file(PROGRAMS / "mm.lift")
        sizes = {"M": n, "N": n, "K": n}
        vectorised = apply_rule(bind_sizes(mm, sizes), "mm-tiling-vectorised")
        buffered = apply_rule(bind_sizes(mm, sizes), "mm-tiling-double-buffered")
        res = explore(mm, sizes, "mcts", args.mm_budget, args.device, out / "explore_mm.json",
                      seed=1, reference=mm_ref, repeat=5, seeds=(buffered, vectorised))
        best = res.best()
        vec = res.evaluations.get(key(vectorised.body))
        dbl = res.evaluations.get(key(buffered.body))
        A = torch.rand(n, n, device="cuda")
        B = torch.rand(n, n, device="cuda")
        t_torch = torch_time(lambda: torch.matmul(A, B), repeat=10)
        tflops = lambda t: 2 * n ** 3 / t / 1e12  # noqa: E731
        report["mm"] = {"n": n, "best": best and {k: best[k] for k in ("expression", "time_s",
                                                                       "local_size")},
                        "best_TFLOPs": best and tflops(best["time_s"]),
                        "cublas_s": t_torch, "cublas_TFLOPs": tflops(t_torch),
                        "ratio_vs_cublas": best and t_torch / best["time_s"],
                        "vectorised": vec and {
                            "status": vec["status"], "message": vec["message"],
                            "time_s": vec["time_s"],
                            "TFLOPs": vec["time_s"] and tflops(vec["time_s"]),
                            "ratio_vs_cublas": vec["time_s"] and t_torch / vec["time_s"]},
                        "double_buffered": dbl and {
                            "status": dbl["status"], "message": dbl["message"],
                            "time_s": dbl["time_s"],
                            "TFLOPs": dbl["time_s"] and tflops(dbl["time_s"]),
                            "ratio_vs_cublas": dbl["time_s"] and t_torch / dbl["time_s"]}}
        best_so_far_plot(res, out / "mm_best_so_far.png", f"Lift mm {n}^3")
        if best:
            (out / "mm_best.cl").write_text(best["source"])
        if vec and vec["source"] and (not best or vec["source"] != best["source"]):
            (out / "mm_vectorised.cl").write_text(vec["source"])   # when it is not the best

    save()
    print(markdown(report))
    return 0


def markdown(r: dict) -> str:
    lines = [f"# Lift on {r['device']} ({r['date']})", ""]
    if "sum" in r:
        s = r["sum"]
        lines += [f"## sum of {s['n']} floats", "",
                  "| implementation | time (ms) | GB/s | vs best Lift |", "|---|---|---|---|"]
        if s["best"]:
            lines.append(f"| Lift (best found) | {s['best']['time_s'] * 1e3:.3f} | "
                         f"{s['best_GBps']:.0f} | 1.00 |")
        lines.append(f"| torch.sum | {s['torch_sum_s'] * 1e3:.3f} | {s['torch_GBps']:.0f} | "
                     f"{(s['ratio_vs_torch'] or 0):.2f} (Lift/torch throughput) |")
        for k, v in s["baselines"].items():
            lines.append(f"| {k}{'' if v['correct'] else ' (WRONG)'} | {v['time_s'] * 1e3:.3f} | "
                         f"{v['GBps']:.0f} | Lift {(v['lift_speedup'] or 0):.2f}x faster |")
        lines += ["", f"OpenCL copy: {s['copy_GBps']:.0f} GB/s. "
                  f"Search: {s['search_seconds']:.0f} s;"
                  f" best found after {s['best_found_after_candidates']} candidates "
                  f"({(s['best_found_after_s'] or 0):.0f} s).", ""]
    if "gemv" in r:
        g = r["gemv"]
        lines += [f"## gemv {g['n']}x{g['n']}", "",
                  f"Lift {g['best_GBps'] or 0:.0f} GB/s, torch.addmv {g['torch_GBps']:.0f} GB/s: "
                  f"ratio {(g['ratio_vs_torch'] or 0):.3f}", ""]
    if "mm" in r:
        m = r["mm"]
        lines += [f"## mm {m['n']}^3 (no TF32)", "",
                  f"Lift {m['best_TFLOPs'] or 0:.1f} TFLOP/s, cuBLAS {m['cublas_TFLOPs']:.1f} "
                  f"TFLOP/s: ratio {(m['ratio_vs_cublas'] or 0):.3f}", ""]
        for name, field in (("mm-tiling-double-buffered", "double_buffered"),
                            ("mm-tiling-vectorised", "vectorised")):
            v = m.get(field)
            if v:
                lines += [f"{name} (measured first): {v['TFLOPs'] or 0:.1f} TFLOP/s, "
                          f"ratio {(v['ratio_vs_cublas'] or 0):.3f}"
                          + ("" if v["status"] == "ok" else f" ({v['status']}: {v['message']})"),
                          ""]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
