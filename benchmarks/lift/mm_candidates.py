"""Lift's matrix-multiplication candidates against cuBLAS SGEMM (TF32 off), in one run
on an NVIDIA GPU.

Each candidate is mm.lift rewritten by one macro rule with one choice of its
parameters (tiles tm x tn x tk, register blocks rm x rn, vector width w):
``mm-tiling-double-buffered`` (k-tiles double-buffered in local memory, their loads
staged in registers one k-step ahead, one barrier per k-step) with several tilings,
and ``mm-tiling-vectorised`` (the earlier best: one local buffer, two barriers per
k-step) for comparison. Every candidate is generated, built, run once and checked
against a float64 product (torch on the GPU) before it is timed: the median of
--repeat profiled runs after two warm-up runs, exactly as ``mcl lift explore``
measures. cuBLAS (torch.matmul, allow_tf32 = False; CUDA events, median) and the
best refined MCPL matmul (examples/matmul/hopper_v5.mcpl generated for hopper;
OpenCL events, median) are timed in the same run. Writes results.json,
results.md and the fastest candidate's OpenCL (best.cl) into --out; prints a table.

    python benchmarks/lift/mm_candidates.py --out benchmarks/results/lift_mm

Exits with 2 and a message when there is no NVIDIA OpenCL device or no torch with
CUDA (the comparison is only meaningful on the GPU)."""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import statistics
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT))

from mcl.diagnostics import McplError  # noqa: E402
from mcl.lift import macros  # noqa: E402, F401  (registers the macro rules)
from mcl.lift.explore import Evaluator  # noqa: E402
from mcl.lift.ir import bind_sizes  # noqa: E402
from mcl.lift.macros_mm import (  # noqa: E402
    mm_double_buffered_choices,
    mm_vectorised_choices,
)
from mcl.lift.parser import parse_file  # noqa: E402
from mcl.lift.rules import Limits, apply_rule  # noqa: E402

MM = ROOT / "mcl" / "lift" / "programs" / "mm.lift"

#: (rule, (tm, tn, tk, rm, rn, w)) timed by default: the shape of the fastest measured
#: OpenCL SGEMM (matmul_hand/vec4.cl: k-tiles of 8) first, hopper_v5's (k-tiles of 16),
#: narrower vectors, other tile shapes, 16 x 4 / 4 x 16 blocks, 8 x 16 / 16 x 8 blocks
#: (128 accumulators), then the earlier best rule for comparison
DEFAULT = [
    ("mm-tiling-double-buffered", (128, 128, 8, 8, 8, 4)),
    ("mm-tiling-double-buffered", (128, 128, 16, 8, 8, 4)),
    ("mm-tiling-double-buffered", (128, 128, 8, 8, 8, 2)),
    ("mm-tiling-double-buffered", (256, 64, 16, 8, 8, 4)),
    ("mm-tiling-double-buffered", (64, 256, 16, 8, 8, 4)),
    ("mm-tiling-double-buffered", (128, 64, 8, 8, 8, 4)),
    ("mm-tiling-double-buffered", (128, 128, 8, 16, 4, 4)),
    ("mm-tiling-double-buffered", (128, 128, 8, 4, 16, 4)),
    ("mm-tiling-double-buffered", (128, 256, 8, 8, 16, 4)),
    ("mm-tiling-double-buffered", (256, 128, 8, 16, 8, 4)),
    ("mm-tiling-double-buffered", (128, 256, 16, 8, 16, 4)),
    ("mm-tiling-vectorised", (128, 128, 8, 8, 8, 4)),
    ("mm-tiling-vectorised", (128, 128, 16, 8, 8, 4)),
]

CHOICES = {"mm-tiling-double-buffered": mm_double_buffered_choices,
           "mm-tiling-vectorised": mm_vectorised_choices}


def candidate(prog, n: int, rule: str, choice: tuple, limits: Limits):
    """``prog`` rewritten by ``rule`` with the given parameters (None: the rule does
    not offer them at this size and on this device)."""
    every = dataclasses.replace(limits, max_choices=10_000)
    offered = CHOICES[rule](n, n, n, every)
    if choice not in offered:
        return None
    return apply_rule(prog, rule, choice=offered.index(choice), limits=every)


def ptx_stats(ptx: str) -> dict[str, int]:
    pats = {"fma": r"\bfma\.rn\.f32\b", "ld.shared.v4": r"\bld\.shared\.v4\.f32\b",
            "ld.shared.f32": r"\bld\.shared\.f32\b", "st.shared": r"\bst\.shared\.",
            "ld.global.v4": r"\bld\.global(\.nc)?\.v4\.f32\b",
            "local (spill)": r"\b(ld|st)\.local\.", "bar.sync": r"\bbar\.sync\b"}
    return {k: len(re.findall(v, ptx)) for k, v in pats.items()}


def compiler_report(rt, source: str) -> dict:
    """Registers and spills (ptxas) and instruction counts (PTX) of a kernel."""
    import pyopencl as cl
    prog = cl.Program(rt.context, source).build(options=["-cl-nv-verbose"])
    log = prog.get_build_info(rt.device, cl.program_build_info.LOG)
    return {"ptxas": " | ".join(ln.strip() for ln in log.splitlines() if "Used" in ln
                                or "spill" in ln),
            "ptx": ptx_stats(prog.binaries[0].decode(errors="replace"))}


def mcpl_time(rt, path: Path, a: np.ndarray, b: np.ndarray, ref: np.ndarray,
              repeat: int) -> dict:
    """The refined MCPL matmul on the same device: checked, then the median of
    profiled runs."""
    import pyopencl as cl
    import pyopencl.array as cla

    from mcl.opencl.runtime import compile as compile_mcpl
    k = compile_mcpl(path, "hopper", context=rt.context, queue=rt.queue)
    n = a.shape[0]
    da, db = cla.to_device(rt.queue, a), cla.to_device(rt.queue, b)
    dc = cla.zeros(rt.queue, (n, n), np.float32)
    args = dict(n=n, m=n, p=n, a=da, b=db, c=dc)
    k(**args)
    got = dc.get().astype(np.float64)
    err = float(np.max(np.abs(got - ref)) / max(1.0, float(np.max(np.abs(ref)))))
    if not err <= 1e-3:
        return {"status": "wrong", "message": f"relative error {err:.3g}"}
    times = []
    for i in range(2 + repeat):
        k(**args)
        if i >= 2:
            ev = k.last_event
            times.append((ev.get_profiling_info(cl.profiling_info.END)
                          - ev.get_profiling_info(cl.profiling_info.START)) * 1e-9)
    return {"status": "ok", "time_s": statistics.median(times)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, type=Path, help="directory for the results")
    ap.add_argument("--size", type=int, default=4096, help="M = N = K (default 4096)")
    ap.add_argument("--device", default="NVIDIA", help="OpenCL device (PLATFORM:DEVICE)")
    ap.add_argument("--repeat", type=int, default=10, help="timed runs per candidate")
    ap.add_argument("--candidate", action="append", metavar="RULE:TM,TN,TK,RM,RN,W",
                    help="time this candidate instead of the default list (repeatable)")
    ap.add_argument("--mcpl", default=str(ROOT / "examples" / "matmul" / "hopper_v5.mcpl"),
                    help="refined MCPL matmul timed beside them ('' for none)")
    ap.add_argument("--max-seconds", type=float, default=150.0,
                    help="start no new candidate after this many seconds")
    args = ap.parse_args(argv)

    from mcl.opencl.device import runtime
    try:
        rt = runtime(args.device)
    except McplError as e:
        print(f"error: this benchmark needs an NVIDIA GPU: {e.diagnostics[0].message}",
              file=sys.stderr)
        return 2
    if "nvidia" not in rt.device.platform.name.lower():
        print(f"error: this benchmark needs an NVIDIA GPU; '{args.device}' selected "
              f"{rt.info.spec}", file=sys.stderr)
        return 2
    try:
        import torch
        if not torch.cuda.is_available():
            raise ImportError
    except ImportError:
        print("error: this benchmark needs torch with CUDA for the cuBLAS reference",
              file=sys.stderr)
        return 2
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False

    if args.candidate:
        todo = []
        for c in args.candidate:
            rule, _, params = c.partition(":")
            try:
                todo.append((rule, tuple(int(x) for x in params.split(","))))
            except ValueError:
                ap.error(f"--candidate {c}: expected RULE:TM,TN,TK,RM,RN,W")
            if rule not in CHOICES or len(todo[-1][1]) != 6:
                ap.error(f"--candidate {c}: expected RULE:TM,TN,TK,RM,RN,W with RULE one of "
                         + ", ".join(CHOICES))
    else:
        todo = DEFAULT
    n = args.size
    sizes = {"M": n, "N": n, "K": n}
    flops = 2.0 * n ** 3

    def reference(a, b):
        return torch.matmul(torch.from_numpy(a).cuda().double(),
                            torch.from_numpy(b).cuda().double()).cpu().numpy()
    prog = bind_sizes(parse_file(MM), sizes)
    ev = Evaluator(prog, sizes, args.device, repeat=args.repeat,
                   reference=reference)
    limits = ev.limits()
    a, b = ev._inputs
    ref = ev._expected

    # cuBLAS on the same inputs: checked, then timed with CUDA events
    ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
    err = float((torch.matmul(ta, tb).double().cpu().numpy() - ref).__abs__().max()
                / max(1.0, float(np.abs(ref).max())))
    if err > 1e-3:
        print(f"error: torch.matmul is off by {err:.3g} (relative)", file=sys.stderr)
        return 1
    for _ in range(3):
        torch.matmul(ta, tb)
    torch.cuda.synchronize()
    ts = []
    for _ in range(max(10, args.repeat)):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        torch.matmul(ta, tb)
        e.record()
        e.synchronize()
        ts.append(s.elapsed_time(e) * 1e-3)
    cublas = statistics.median(ts)
    print(f"{rt.info.spec}: mm {n}^3, cuBLAS SGEMM (no TF32) {cublas * 1e3:.3f} ms "
          f"({flops / cublas * 1e-12:.1f} TFLOP/s)", flush=True)

    report = {"device": rt.info.spec, "date": time.strftime("%Y-%m-%d %H:%M"), "size": n,
              "cublas_s": cublas, "cublas_TFLOPs": flops / cublas * 1e-12, "candidates": []}
    if args.mcpl:
        try:
            m = mcpl_time(rt, Path(args.mcpl), a, b, ref, args.repeat)
        except McplError as e:
            m = {"status": "error", "message": e.diagnostics[0].message[:500]}
        if m.get("time_s"):
            m["ratio_vs_cublas"] = cublas / m["time_s"]
            print(f"MCPL {Path(args.mcpl).name}: {m['time_s'] * 1e3:.3f} ms, "
                  f"{m['ratio_vs_cublas']:.3f} of cuBLAS", flush=True)
        report["mcpl"] = {"file": args.mcpl, **m}

    t0 = time.time()
    sources = {}
    for rule, choice in todo:
        row: dict = {"rule": rule, "tm_tn_tk_rm_rn_w": list(choice)}
        report["candidates"].append(row)
        if time.time() - t0 > args.max_seconds:
            row.update(status="skipped", message=f"over --max-seconds {args.max_seconds:.0f}")
            continue
        q = candidate(prog, n, rule, choice, limits)
        if q is None:
            row.update(status="not-offered",
                       message="the rule does not offer these parameters at this size on "
                               "this device")
        else:
            r = ev(q)
            row.update(status=r.status, message=r.message, time_s=r.time_s,
                       local_size=r.local_size, expression=r.expression)
            if r.time_s:
                row["TFLOPs"] = flops / r.time_s * 1e-12
                row["ratio_vs_cublas"] = cublas / r.time_s
                mt = report.get("mcpl", {}).get("time_s")
                if mt:
                    row["ratio_vs_mcpl"] = mt / r.time_s
                sources[len(report["candidates"]) - 1] = r.source
        t = f"{row['time_s'] * 1e3:8.3f} ms  {row['ratio_vs_cublas']:.3f} of cuBLAS" \
            if row.get("time_s") else f"{row['status']}: {row.get('message', '')[:200]}"
        print(f"{rule:27s} {','.join(map(str, choice)):18s} {t}", flush=True)
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "results.json").write_text(json.dumps(report, indent=1))

    ok = [(i, c) for i, c in enumerate(report["candidates"]) if c.get("time_s")]
    if ok:
        i, best = min(ok, key=lambda x: x[1]["time_s"])
        report["best"] = {k: best[k] for k in ("rule", "tm_tn_tk_rm_rn_w", "time_s", "TFLOPs",
                                                "ratio_vs_cublas")}
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "best.cl").write_text(sources[i])
        # what the compiler made of the fastest candidates (registers, spills, PTX)
        for j, c in sorted(ok, key=lambda x: x[1]["time_s"])[:3]:
            try:
                c["compiler"] = compiler_report(rt, sources[j])
            except Exception as e:  # noqa: BLE001 - a report, not a measurement
                c["compiler"] = {"error": str(e)[:300]}
        print(f"best: {best['rule']} {best['tm_tn_tk_rm_rn_w']}: {best['time_s'] * 1e3:.3f} ms, "
              f"{best['ratio_vs_cublas']:.3f} of cuBLAS (target >= 0.90)")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(json.dumps(report, indent=1))
    (args.out / "results.md").write_text(markdown(report))
    return 0 if ok else 1


def markdown(r: dict) -> str:
    lines = [f"# Lift mm {r['size']}^3 candidates on {r['device']} ({r['date']})", "",
             f"cuBLAS SGEMM (no TF32): {r['cublas_s'] * 1e3:.3f} ms, "
             f"{r['cublas_TFLOPs']:.1f} TFLOP/s."]
    m = r.get("mcpl")
    if m:
        lines.append(f"MCPL {Path(m['file']).name}: " + (
            f"{m['time_s'] * 1e3:.3f} ms, {m['ratio_vs_cublas']:.3f} of cuBLAS."
            if m.get("time_s") else f"{m['status']}: {m.get('message', '')}"))
    lines += ["", "| rule | tm,tn,tk,rm,rn,w | time (ms) | TFLOP/s | of cuBLAS | registers |",
              "|---|---|---|---|---|---|"]
    for c in r["candidates"]:
        p = ",".join(map(str, c["tm_tn_tk_rm_rn_w"]))
        regs = c.get("compiler", {}).get("ptxas", "")
        if c.get("time_s"):
            lines.append(f"| {c['rule']} | {p} | {c['time_s'] * 1e3:.3f} | {c['TFLOPs']:.1f} | "
                         f"{c['ratio_vs_cublas']:.3f} | {regs} |")
        else:
            lines.append(f"| {c['rule']} | {p} | {c['status']} | | | {c.get('message', '')} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
