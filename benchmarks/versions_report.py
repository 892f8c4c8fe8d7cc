"""`mcl versions` on the bundled examples: on the GPU machine, every version verified at
the small sizes and timed at the paper's first size (best of N, profiling events), beside
the roofline bound and the predicted time of its level; on a CPU, the time the command
and its report take.

    python benchmarks/versions_report.py [--kernels matmul,reduction] [--repeat 10]
        [--out benchmarks/results/versions] [--sizes small]

Writes, per kernel, OUT/KERNEL/index.html, report.md, the plots and results.json, and
OUT/summary.md: per version the measured time, the predicted time and the bound, with
measured/bound (how far each version is from the roofline of its own level).
"""

from __future__ import annotations

import argparse
import json
import platform
import runpy
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from mcl.versions import versions, write_report  # noqa: E402

KERNELS = ["matmul", "convolution", "histogram", "gesummv", "black_scholes", "spmv_csr",
           "reduction", "vector_add"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kernels", default=",".join(KERNELS))
    ap.add_argument("--sizes", default="small")
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "versions"))
    args = ap.parse_args()
    out = Path(args.out)
    lines = [f"# mcl versions on the examples ({platform.node()})", ""]
    for kernel in args.kernels.split(","):
        folder = ROOT / "examples" / kernel
        ref = runpy.run_path(str(folder / "reference.py"))
        paper = dict((ref.get("PAPER_SIZES") or [{}])[0])
        start = time.perf_counter()
        r = versions(folder, sizes=args.sizes, repeat=args.repeat,
                     timing_values={k: v for k, v in paper.items() if isinstance(v, int)},
                     progress=lambda m: print(f"  {m}", file=sys.stderr, flush=True))
        files = write_report(r, out / kernel)
        seconds = time.perf_counter() - start
        (out / kernel / "results.json").write_text(json.dumps(r.to_json(), indent=1,
                                                              default=str))
        size = sum(p.stat().st_size for p in files)
        ver = r.verification
        lines += [f"## {kernel}", "",
                  f"{len(r.versions.versions)} versions on {ver.device if ver else '?'}; "
                  f"command and report {seconds:.1f} s, report {size / 1024:.0f} kB; "
                  f"timed at " + ", ".join(f"{k}={v}" for k, v in r.timing_sizes.items()), "",
                  "| version | verdict | measured | predicted | bound | measured / bound |",
                  "| --- | --- | ---: | ---: | ---: | ---: |"]
        for t in r.timings.values():
            ratio = f"{t.measured_s / t.bound_s:.2f}" if t.measured_s and t.bound_s else "—"
            lines.append(f"| {t.version} | {ver.verdict(t.version) if ver else '—'} | "
                         f"{_ms(t.measured_s)} | {_ms(t.predicted_s)} | {_ms(t.bound_s)} | "
                         f"{ratio} |")
        lines.append("")
        print(f"{kernel}: {seconds:.1f} s", file=sys.stderr)
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


def _ms(s: float | None) -> str:
    return f"{s * 1e3:.3f} ms" if s else "—"


if __name__ == "__main__":
    sys.exit(main())
