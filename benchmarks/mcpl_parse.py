"""Parse + check times of the MCPL front end: the matmul example (target: about
50 ms after start-up) and a generated 10 000-line module (target: about 2 s).

Run: python benchmarks/mcpl_parse.py [--write]   (--write updates
benchmarks/results/mcpl_parse.md). Times are the best of several runs in this
process, after one warm-up run that loads textX, the grammar and the hardware
descriptions."""

from __future__ import annotations

import argparse
import platform
import time
from pathlib import Path

from mcl.mcpl import check, parse

ROOT = Path(__file__).resolve().parent.parent
MATMUL = ROOT / "examples" / "matmul" / "nvidia_v1.mcpl"
RESULTS = ROOT / "benchmarks" / "results" / "mcpl_parse.md"

FUNCTION = """\
// kernel {k}
perfect void k{k}(const int n = 1024, main float[n] a, main float[n] b) {{
    foreach (int i in n threads) {{
        float s = 0.0;
        for (int j = 0; j < 4; j++) {{
            s += a[i] * (float) j + {k}.5f;
        }}
        b[i] = s > 1.0 ? sqrt(s) : -s;
    }}
}}
"""


def big_module(lines: int = 10_000) -> str:
    per = FUNCTION.count("\n") + 1
    return "module big;\nimport perfect;\n\n" + "\n".join(
        FUNCTION.format(k=k) for k in range(lines // per + 1))


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--write", action="store_true", help="update the results file")
    args = ap.parse_args()
    text = MATMUL.read_text()
    check(MATMUL)  # warm-up: textX metamodel, hardware library
    t_parse = best(lambda: parse(text, str(MATMUL)), 20)
    t_check = best(lambda: check(MATMUL), 20)
    big = big_module()
    n_lines = big.count("\n")
    t_big_parse = best(lambda: parse(big, "big.mcpl"), 2)
    t_big_check = best(lambda: check("big.mcpl", source=big), 2)
    rows = [
        (f"matmul nvidia_v1 ({text.count(chr(10))} lines): parse", t_parse, None),
        ("matmul nvidia_v1: parse + check", t_check, 0.050),
        (f"generated module ({n_lines} lines): parse", t_big_parse, None),
        (f"generated module ({n_lines} lines): parse + check", t_big_check, 2.0),
    ]
    out = ["| case | time | target |", "| --- | --- | --- |"]
    for name, t, target in rows:
        goal = f"{target * 1000:.0f} ms" if target else ""
        out.append(f"| {name} | {t * 1000:.1f} ms | {goal} |")
    table = "\n".join(out)
    print(table)
    if args.write:
        RESULTS.write_text(
            "# MCPL front end: parse and check times\n\n"
            f"Machine: {platform.processor() or platform.machine()}, Python "
            f"{platform.python_version()}; best of several runs after a warm-up "
            "(`python benchmarks/mcpl_parse.py --write`).\n\n" + table + "\n")


if __name__ == "__main__":
    main()
