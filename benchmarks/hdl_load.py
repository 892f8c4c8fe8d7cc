"""Time loading and validating the whole hardware-description library.

Cold: a fresh process-level state (parse cache cleared), every bundled description
parsed, built, resolved and validated. Warm: a new library whose texts are already
parsed (what an editor or a second command in the same process pays). Each figure is
the median of several runs; the ratio to parsing a single description is printed
as a machine-independent reference.

    python benchmarks/hdl_load.py [--runs N] [--write benchmarks/results/hdl_load.md]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time
from pathlib import Path

import mcl.hdl.library as libmod
from mcl.hdl.library import BUNDLED, HardwareLibrary
from mcl.hdl.syntax import _metamodel, parse_text


def _load_all() -> int:
    lib = HardwareLibrary()
    n = 0
    for name in lib.names():
        lib.diagnostics(name)
        lib.model(name)
        n += 1
    return n


def _median(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--write", metavar="FILE", help="write the result as Markdown")
    args = ap.parse_args()

    t = time.perf_counter()
    _metamodel()
    grammar = time.perf_counter() - t
    perfect = (BUNDLED / "perfect.hdl").read_text()
    one = _median(lambda: parse_text(perfect, "perfect.hdl"), args.runs)

    def cold() -> int:
        libmod._parse.cache_clear()
        return _load_all()

    n = cold()
    cold_s = _median(cold, args.runs)
    warm_s = _median(_load_all, args.runs)
    lines = [
        "# Loading the hardware-description library",
        "",
        f"`python benchmarks/hdl_load.py --runs {args.runs}` on {platform.machine()}, "
        f"Python {platform.python_version()} ({platform.processor() or 'cpu'}).",
        "",
        "| what | median |",
        "| --- | --- |",
        f"| textX grammar (once per process) | {grammar * 1e3:.1f} ms |",
        f"| parse perfect.hdl (reference) | {one * 1e3:.2f} ms |",
        f"| load + validate all {n} descriptions, cold | {cold_s * 1e3:.1f} ms "
        f"({cold_s / one:.0f}x the reference) |",
        f"| load + validate all {n} descriptions, parsed texts cached | {warm_s * 1e3:.1f} ms "
        f"({warm_s / one:.0f}x the reference) |",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.write:
        Path(args.write).write_text(text)


if __name__ == "__main__":
    main()
