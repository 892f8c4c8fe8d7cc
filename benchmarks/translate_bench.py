"""Time translating the matmul example from perfect to fermi (four steps down the
hierarchy: accelerator, gpu, nvidia, fermi) after start-up, that is with the
library of hardware descriptions already loaded and the kernel parsed. Also given:
the start-up itself (first translation in the process) and, as a
machine-independent reference measured in the same run, the time to print the
kernel; the issue's target is about 50 ms.

    python benchmarks/translate_bench.py [--runs N] [--write benchmarks/results/translate.md]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MATMUL = ROOT / "examples" / "matmul" / "perfect.mcpl"


def _ms(f, runs: int) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        f()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--write", metavar="FILE", help="write the results as Markdown")
    args = ap.parse_args()

    t0 = time.perf_counter()
    from mcl.hdl import hardware_library
    from mcl.mcpl import parse_file, print_module
    from mcl.translate import translate

    module = parse_file(MATMUL)
    lib = hardware_library()
    translate(module, "fermi", library=lib)
    startup = (time.perf_counter() - t0) * 1000

    # Reference in the same run: printing the kernel (parsing is cached per file).
    ref_ms = _ms(lambda: print_module(module), args.runs)
    rows = []
    for to in ("gpu", "fermi", "hopper", "xeon_phi"):
        ms = _ms(lambda to=to: translate(module, to, library=lib), args.runs)
        rows.append((to, ms))
    print_ms = _ms(lambda: print_module(translate(module, "fermi", library=lib)), args.runs)

    lines = [
        "# Translation: matmul perfect -> leaf",
        "",
        "Measured by `python benchmarks/translate_bench.py` on "
        f"{platform.processor() or platform.machine()}, Python {platform.python_version()}; "
        f"median of {args.runs} runs, after start-up (descriptions loaded, kernel parsed). "
        "Target of issue 4: about 50 ms for perfect -> fermi.",
        "",
        "| what | ms | ratio to printing the kernel |",
        "| --- | ---: | ---: |",
        f"| print examples/matmul/perfect.mcpl (reference) | {ref_ms:.2f} | 1.0 |",
    ]
    for to, ms in rows:
        steps = len(lib.path("perfect", to)) - 1
        lines.append(f"| translate perfect -> {to} ({steps} steps) | {ms:.2f} | "
                     f"{ms / ref_ms:.1f} |")
    lines.append(f"| translate perfect -> fermi and print MCPL | {print_ms:.2f} | "
                 f"{print_ms / ref_ms:.1f} |")
    lines += ["", f"Start-up (imports, library, first parse and translation): {startup:.0f} ms."]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.write:
        Path(args.write).write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
