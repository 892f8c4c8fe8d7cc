"""MCPL refinement against Lift exploration on one GPU (issue 9's numbers).

For vector_add, matmul, gesummv, reduction and convolution at their paper sizes:
every MCPL version of examples/<kernel>/ compiled for the leaf level (mcl.compile),
checked against reference.py and timed, and the best implementation Lift's
exploration finds for the program derived from perfect.mcpl (every candidate
checked against reference.py before it is timed); time, GFLOP/s, GB/s and the
fraction of the roofline bound of mcl.analyses. One run each; every kernel runs in
its own process with a wall-clock limit, so that one slow search leaves the
others' results.

    python benchmarks/mcpl_vs_lift.py --leaf hopper --budget 40 --out benchmarks/results

writes OUT/mcpl_vs_lift.md, OUT/mcpl_vs_lift_<kernel>.json, Lift's evaluations in
OUT/explore_<kernel>.json and the progress of every kernel in OUT/run_log.txt.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

KERNELS = ("vector_add", "matmul", "gesummv", "reduction", "convolution")


def one(kernel: str, args: argparse.Namespace) -> dict:
    """Run the comparison of one kernel; the JSON record of its rows."""
    from mcl.lift.compare import compare, table
    from mcl.lift.from_mcpl import reference_module

    path = ROOT / "examples" / kernel / "perfect.mcpl"
    ref = reference_module(path)
    sizes = dict(ref.PAPER_SIZES[0]) if args.sizes == "paper" else dict(ref.SIZES[-1])
    t0 = time.time()
    explored = Path(args.out) / f"explore_{kernel}.json"
    explored.unlink(missing_ok=True)      # one run: no evaluation recalled from an earlier one
    c = compare(path, args.leaf, sizes, args.budget, args.strategy, args.device, seed=0,
                repeat=args.repeat, results=str(explored), progress=sys.stderr,
                max_version_s=args.max_version_s)
    rows = [{"version": r.version, "status": r.status, "time_s": r.time_s,
             "GFLOPs": c.gflops(r), "GBs": c.gbs(r), "roofline_fraction": c.roofline_fraction(r),
             "note": r.note, "size_probes": [{"sizes": z, "s": t} for z, t in r.probes]}
            for r in c.rows]
    return {"kernel": kernel, "leaf": args.leaf, "sizes": c.sizes, "device": c.device,
            "budget": args.budget, "strategy": args.strategy, "rows": rows,
            "max_version_s": args.max_version_s, "other_branches": c.other_branches,
            "bound_s": c.bound_s, "bound_note": c.bound_note,
            "lift_expression": c.lift_expression, "wall_s": time.time() - t0,
            "table": table(c, markdown=True)}


def summary(records: list[dict], missing: dict[str, str]) -> str:
    """The markdown file: one line per kernel, then each kernel's full table."""
    lines = ["# MCPL refined versions against Lift's best", "",
             "Produced by `benchmarks/mcpl_vs_lift.py`; one run each. Fraction of roofline: "
             "the least time the leaf's roofline allows (mcl.analyses, compulsory traffic) "
             "over the measured time.", "",
             "| kernel | best MCPL version | time (ms) | of roofline | Lift best (ms) "
             "| of roofline | Lift / MCPL time |", "|---|---|---|---|---|---|---|"]
    for rec in records:
        ok = [r for r in rec["rows"] if r["status"] == "ok" and r["version"] != "Lift best"]
        lift = next((r for r in rec["rows"] if r["version"] == "Lift best"), None)
        best = min(ok, key=lambda r: r["time_s"]) if ok else None

        def ms(r):
            return f"{r['time_s'] * 1e3:.4f}" if r and r.get("time_s") else "—"

        def frac(r):
            f = r and r.get("roofline_fraction")
            return f"{100 * f:.1f}%" if f else "—"
        ratio = f"{lift['time_s'] / best['time_s']:.2f}" if best and lift and \
            lift.get("time_s") else "—"
        lines.append(f"| {rec['kernel']} | {best['version'] if best else '—'} | {ms(best)} | "
                     f"{frac(best)} | {ms(lift)} | {frac(lift)} | {ratio} |")
    for k, why in missing.items():
        lines.append(f"| {k} | not measured: {why} | | | | | |")
    if records:
        lines += ["", f"Device: {records[0]['device']}; leaf: {records[0]['leaf']}; "
                  f"Lift budget: {records[0]['budget']} candidates ({records[0]['strategy']}); "
                  f"an MCPL version whose one run is predicted (from runs at smaller sizes) to "
                  f"take more than {records[0].get('max_version_s')} s is not run (too slow)."]
    for rec in records:
        lines += ["", rec["table"].rstrip()]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results"))
    ap.add_argument("--leaf", default="hopper", help="leaf level of the MCPL versions")
    ap.add_argument("--device", default=None, help="PLATFORM:DEVICE (default: MCL_DEVICE)")
    ap.add_argument("--budget", type=int, default=40, help="Lift candidates per kernel")
    ap.add_argument("--strategy", default="mcts", choices=("mcts", "random"))
    ap.add_argument("--repeat", type=int, default=10, help="timed runs per kernel")
    ap.add_argument("--sizes", default="paper", choices=("paper", "test"),
                    help="PAPER_SIZES[0] of reference.py, or its largest test size")
    ap.add_argument("--kernels", nargs="*", default=list(KERNELS))
    ap.add_argument("--per-kernel", type=float, default=300.0,
                    help="seconds a kernel's comparison may take")
    ap.add_argument("--max-version-s", type=float, default=10.0,
                    help="MCPL versions whose one run is predicted (from runs at smaller "
                         "sizes) to take longer are not run")
    ap.add_argument("--summarize", action="store_true",
                    help="only rebuild OUT/mcpl_vs_lift.md from the JSON files in OUT (to merge "
                         "runs made in parts)")
    ap.add_argument("--one", help=argparse.SUPPRESS)     # the child process of one kernel
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.summarize:
        recs = [json.loads((out / f"mcpl_vs_lift_{k}.json").read_text()) for k in KERNELS
                if (out / f"mcpl_vs_lift_{k}.json").exists()]
        (out / "mcpl_vs_lift.md").write_text(summary(recs, {}))
        print((out / "mcpl_vs_lift.md").read_text())
        return 0 if recs else 1
    if args.one:
        rec = one(args.one, args)
        (out / f"mcpl_vs_lift_{args.one}.json").write_text(json.dumps(rec, indent=1))
        print(rec["table"])
        return 0
    records, missing = [], {}
    (out / "run_log.txt").write_text(f"mcpl_vs_lift.py {' '.join(argv or sys.argv[1:])}\n")
    for k in args.kernels:
        cmd = [sys.executable, __file__, "--one", k, "--out", str(out), "--leaf", args.leaf,
               "--budget", str(args.budget), "--strategy", args.strategy,
               "--repeat", str(args.repeat), "--sizes", args.sizes,
               "--max-version-s", str(args.max_version_s)]
        if args.device:
            cmd += ["--device", args.device]
        result = out / f"mcpl_vs_lift_{k}.json"
        result.unlink(missing_ok=True)
        t0 = time.time()
        print(f"== {k}", file=sys.stderr, flush=True)
        with open(out / "run_log.txt", "a") as log:
            log.write(f"\n== {k}: {' '.join(cmd[2:])}\n")
            log.flush()
            try:   # the child's progress and errors go to the log, its table to stdout
                proc = subprocess.run(cmd, timeout=args.per_kernel, stdout=subprocess.PIPE,
                                      stderr=log, text=True)
                sys.stdout.write(proc.stdout)
                if proc.returncode:
                    missing[k] = f"exit status {proc.returncode} (see run_log.txt)"
            except subprocess.TimeoutExpired:
                missing[k] = f"took more than {args.per_kernel:.0f} s"
            log.write(f"\n== {k}: {missing.get(k, 'done')} after {time.time() - t0:.0f} s\n")
        print(f"== {k}: {missing.get(k, 'done')} after {time.time() - t0:.0f} s",
              file=sys.stderr, flush=True)
        if result.exists() and k not in missing:
            records.append(json.loads(result.read_text()))
        (out / "mcpl_vs_lift.md").write_text(summary(records, missing))
    print((out / "mcpl_vs_lift.md").read_text())
    return 0 if records else 1


if __name__ == "__main__":
    sys.exit(main())
