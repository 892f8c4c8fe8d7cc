"""The memory-bound kernels' versions and sweep variants timed on the H200 (two cold runs
of ``measure.py time --cold --timed-sweep``, benchmarks/runs/grid_stride.sh) against the
`time` pass at the ``h200`` level with the compiler's registers and local memory of the
record (raw/resources.json: the same NVIDIA compiler): Spearman, median error and how
many within 20% per kernel, the largest errors, and the pairs as JSON.

    python benchmarks/fidelity/sweep_h200.py RAW_DIR [--json OUT] [--jobs N]
        [--compiled sweep_in_flight.json]

``--compiled``: the figures mcl feedback reads beside the GPU (sweep_in_flight.py: the
CUDA driver's registers and local memory, the bytes a warp keeps in flight in the SASS)
in place of the record's registers, as the feedback predicts with the NVIDIA compiler.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import fidelity_cases as C  # noqa: E402
from ranking import best_time, spearman  # noqa: E402
from sweep_times import ok_rows  # noqa: E402

KERNELS = ("vector_add", "black_scholes", "gesummv")
RESOURCES = HERE.parents[0] / "results" / "fidelity" / "raw" / "resources.json"


def _predict(item) -> tuple[str, float | None]:
    import fidelity_predict as P
    name, case, regs, local, flight = item
    try:
        return name, P.predicted_time(case, regs, level="h200", spill_bytes=local or None,
                                      in_flight=flight)["seconds"]
    except Exception:  # noqa: BLE001 - left out of the figures
        return name, None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("raw", type=Path, help="the folder of sweep_times_1.json and _2.json")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--compiled", type=Path, help="sweep_in_flight.py's figures")
    args = ap.parse_args(argv)
    a, b = ok_rows(args.raw / "sweep_times_1.json"), ok_rows(args.raw / "sweep_times_2.json")
    res = ok_rows(RESOURCES)
    if args.compiled:
        res = {n: r for n, r in json.loads(args.compiled.read_text()).items()
               if "registers" in r}
    ex = C.example_cases(list(KERNELS))
    cases = {c.name: c for c in ex + C.sweep_cases(ex)}
    todo = [(n, dataclasses.replace(cases[n], sizes=dict(a[n]["sizes"])),
             res[n]["registers"], res[n].get("local_bytes"), res[n].get("in_flight"))
            for n in a
            if n in cases and n in res]
    with ProcessPoolExecutor(args.jobs) as pool:
        preds = dict(pool.map(_predict, todo))
    out = {n: (best_time(a[n]["time_s"], b.get(n, a[n])["time_s"]), p)
           for n, p in preds.items() if p is not None}
    if args.json:
        args.json.write_text(json.dumps(out, indent=0))
    for k in KERNELS:
        ns = [n for n in out if n.startswith(k + "/")]
        e = [abs(out[n][1] / out[n][0] - 1) for n in ns]
        print(f"{k}: {len(ns)} versions and variants, Spearman "
              f"{spearman([out[n][1] for n in ns], [out[n][0] for n in ns]):.3f}, median "
              f"error {statistics.median(e):.1%}, within 20% {sum(x <= 0.2 for x in e)}")
    worst = sorted(out.items(), key=lambda kv: -abs(kv[1][1] / kv[1][0] - 1))[:8]
    for n, (m, p) in worst:
        print(f"  {n}: {m * 1e6:.1f} / {p * 1e6:.1f} us measured / predicted "
              f"({p / m - 1:+.0%})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
