"""How long performance feedback takes: `mcl feedback` on the matmul example
including interpreter start-up (target ≲ 1 s), and the analyses alone on an
already checked module (target ≲ 300 ms: the language server runs them on every
edit). Run: python benchmarks/feedback_bench.py [--write]; --write records the
figures in benchmarks/results/feedback.md. Start-up is also measured for
`python -c pass` in the same run, as the reference."""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VERSIONS = ["perfect", "gpu", "nvidia", "fermi", "xeon_phi_v1"]


def wall(cmd: list[str], repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        subprocess.run(cmd, cwd=ROOT, capture_output=True, check=False)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    from mcl.analyses import feedback
    from mcl.mcpl import check

    rows = []
    python = wall([sys.executable, "-c", "pass"])
    for v in VERSIONS:
        path = ROOT / "examples" / "matmul" / f"{v}.mcpl"
        cli = wall([sys.executable, "-m", "mcl.cli", "feedback", str(path)])
        checked = check(path)
        feedback(checked)  # warm caches, as the language server would be
        times = []
        for _ in range(5):
            t = time.perf_counter()
            feedback(checked)
            times.append(time.perf_counter() - t)
        rows.append((v, cli, statistics.median(times)))
    lines = ["# Feedback timings", "",
             f"Python start-up alone (reference): {python * 1e3:.0f} ms", "",
             "| matmul version | `mcl feedback` incl. start-up | analyses alone (warm) |",
             "| --- | --- | --- |"]
    lines += [f"| {v} | {c * 1e3:.0f} ms | {a * 1e3:.0f} ms |" for v, c, a in rows]
    text = "\n".join(lines) + "\n"
    print(text)
    if "--write" in sys.argv:
        (ROOT / "benchmarks" / "results" / "feedback.md").write_text(
            text + "\nMeasured on the development machine (no GPU), median of 3 (CLI) / 5 "
                   "(analyses) runs.\n")


if __name__ == "__main__":
    main()
