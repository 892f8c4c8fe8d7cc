"""How long performance feedback takes: `mcl feedback` on the matmul examples
including interpreter start-up (target ≲ 1 s), `mcl check` beside it, and the
analyses alone on an already checked module (target ≲ 300 ms: the language server
runs them on every edit).

Run: python benchmarks/feedback_bench.py [--repeat N] [--baseline DIR] [--write]

Each command is run N times (default 10) in a fresh process; wall time (median and
minimum) and CPU time (user + system of the child, median) are recorded: on a
shared machine the CPU time and the minimum are what the code costs, the median
wall time includes the machine's load. References measured in the same run:
`python -c pass` and `python -c "import sympy"`. ``--baseline DIR`` runs the same
commands from another checkout (e.g. ``git archive <commit> | tar -x -C DIR``) for
a before/after comparison in one run. ``--write`` records the figures in
benchmarks/results/feedback.md."""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VERSIONS = ["perfect", "gpu", "nvidia", "fermi", "xeon_phi_v1"]


def measure(cmd: list[str], cwd: Path, repeat: int) -> tuple[float, float, float]:
    """(median wall, minimum wall, median CPU) in seconds over ``repeat`` runs."""
    walls, cpus = [], []
    env = dict(os.environ, PYTHONPATH=str(cwd))
    for _ in range(repeat):
        t = time.perf_counter()
        p = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(p.pid, 0)
        walls.append(time.perf_counter() - t)
        cpus.append(usage.ru_utime + usage.ru_stime)
        if os.waitstatus_to_exitcode(status) not in (0, 1):
            raise SystemExit(f"{' '.join(cmd)} failed in {cwd}")
    return statistics.median(walls), min(walls), statistics.median(cpus)


def ms(t: float) -> str:
    return f"{t * 1e3:.0f}"


def cli_rows(tree: Path, repeat: int) -> list[tuple[str, tuple[float, float, float]]]:
    rows = []
    for v in VERSIONS:
        path = f"examples/matmul/{v}.mcpl"
        rows.append((f"`mcl feedback` {v}",
                     measure([sys.executable, "-m", "mcl.cli", "feedback", path], tree, repeat)))
    rows.append(("`mcl check` gpu", measure(
        [sys.executable, "-m", "mcl.cli", "check", "examples/matmul/gpu.mcpl"], tree, repeat)))
    rows.append(("`mcl feedback --level gpu` perfect", measure(
        [sys.executable, "-m", "mcl.cli", "feedback", "--level", "gpu",
         "examples/matmul/perfect.mcpl"], tree, repeat)))
    return rows


def in_process() -> tuple[list[tuple[str, float, float]], dict[str, float]]:
    """Analyses alone per version (cold: first call in this process; warm: median
    of 5), and the phases of one `mcl feedback` in a fresh process."""
    code = ("import time; t0 = time.perf_counter(); import mcl.analyses; "
            "t1 = time.perf_counter(); from mcl.mcpl import check; "
            "c = check('examples/matmul/gpu.mcpl'); t2 = time.perf_counter(); "
            "mcl.analyses.feedback(c); t3 = time.perf_counter(); "
            "print(t1 - t0, t2 - t1, t3 - t2)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, check=True, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    imp, chk, cold = map(float, out.stdout.split())
    phases = {"import mcl.analyses (sympy included)": imp, "check gpu.mcpl": chk,
              "first feedback": cold}
    from mcl.analyses import feedback
    from mcl.mcpl import check

    rows = []
    for v in VERSIONS:
        checked = check(ROOT / "examples" / "matmul" / f"{v}.mcpl")
        t = time.perf_counter()
        feedback(checked)
        first = time.perf_counter() - t
        times = []
        for _ in range(5):
            t = time.perf_counter()
            feedback(checked)
            times.append(time.perf_counter() - t)
        rows.append((v, first, statistics.median(times)))
    return rows, phases


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--baseline", type=Path, help="another checkout to compare with")
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()

    py = measure([sys.executable, "-c", "pass"], ROOT, args.repeat)
    sp = measure([sys.executable, "-c", "import sympy"], ROOT, args.repeat)
    rows = cli_rows(ROOT, args.repeat)
    base = dict(cli_rows(args.baseline, args.repeat)) if args.baseline else {}
    analyses, phases = in_process()

    head = "| command (matmul example) | wall median | wall min | CPU median |"
    if base:
        head += " baseline wall median | baseline CPU median | CPU after/before |"
    lines = ["# Feedback timings", "",
             f"Each command {args.repeat} times in a fresh process, ms. References in the "
             f"same run: `python -c pass` {ms(py[0])} wall / {ms(py[2])} CPU; "
             f"`python -c \"import sympy\"` {ms(sp[0])} wall / {ms(sp[2])} CPU.", "",
             head, "|" + " --- |" * (head.count("|") - 1)]
    for name, (wmed, wmin, cpu) in rows:
        line = f"| {name} | {ms(wmed)} | {ms(wmin)} | {ms(cpu)} |"
        if name in base:
            b = base[name]
            line += f" {ms(b[0])} | {ms(b[2])} | {cpu / b[2]:.2f} |"
        elif base:
            line += " | | |"
        lines.append(line)
    lines += ["", "| matmul version | analyses alone, first call | analyses alone, warm |",
              "| --- | --- | --- |"]
    lines += [f"| {v} | {ms(f)} ms | {ms(w)} ms |" for v, f, w in analyses]
    lines += ["", "Phases of one `mcl feedback examples/matmul/gpu.mcpl` in a fresh process: "
              + ", ".join(f"{k} {ms(v)} ms" for k, v in phases.items()) + "."]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.write:
        (ROOT / "benchmarks" / "results" / "feedback.md").write_text(text)


if __name__ == "__main__":
    main()
