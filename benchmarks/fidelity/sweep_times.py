"""The time model beyond the examples: the predicted against the measured time of
every version of the memory-bound kernels with their sweep variants, at the
examples' sizes (raw/sweep_times.json and raw/sweep_rerun_times.json:
``measure.py time --cold --kernels K --timed-sweep K``, twice; run
benchmarks/runs/perf_round31.sh). A section of REPORT.md, written by report.py;
the predictions are cached in predictions.json under ``time_at_example_sizes``."""

from __future__ import annotations

import dataclasses
import json
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import fidelity_cases as C
from ranking import best_time, spearman

_CASES: dict[str, C.Case] = {}


def _predict(item: tuple[str, dict, tuple[int, int | None]]) -> tuple[str, dict]:
    import fidelity_predict as P
    name, sizes, (regs, local) = item
    try:
        case = dataclasses.replace(_CASES[name], sizes=dict(sizes))
        return name, P.predicted_time(case, regs, spill_bytes=local)
    except Exception as e:  # noqa: BLE001 - a row with the message
        return name, {"error": f"{type(e).__name__}: {e}"}


def ok_rows(path: Path) -> dict[str, dict]:
    """The rows of a times file of measure.py that ran, by case name ({} without it)."""
    if not path.exists():
        return {}
    return {r["name"]: r for r in json.loads(path.read_text())["rows"]
            if r.get("status") == "ok"}


def section(raw: Path, preds: dict, cases: dict,
            resources: dict[str, tuple[int, int | None]], jobs: int) -> list[str]:
    """REPORT.md's lines on the sweep's times (none without raw/sweep_times.json);
    ``resources``: the compiler's registers and local bytes a thread by case;
    ``preds`` gains the predictions it computes."""
    first, second = ok_rows(raw / "sweep_times.json"), ok_rows(raw / "sweep_rerun_times.json")
    names = [n for n in first if n in cases and n in resources]
    _CASES.update(cases)
    todo = [(n, first[n]["sizes"], resources[n]) for n in names
            if "time_at_example_sizes" not in preds.get(n, {})]
    with ProcessPoolExecutor(jobs) as pool:
        for name, p in pool.map(_predict, todo):
            preds.setdefault(name, {})["time_at_example_sizes"] = p
    by_kernel: dict[str, list] = {}
    for n in names:
        p = preds[n]["time_at_example_sizes"]
        if p.get("seconds"):
            by_kernel.setdefault(cases[n].kernel, []).append(
                (n, best_time(first[n]["time_s"], second.get(n, {}).get("time_s")),
                 p["seconds"], p["limiter"]))
    if not by_kernel:
        return []
    out = ["", "### Beyond the examples: the sweep variants of the memory-bound kernels", "",
           "Every version of the kernel and its sweep variants (the record's), at the "
           "examples' sizes, each verified and then timed cold twice (best of 10 each; "
           "raw/sweep_times.json, raw/sweep_rerun_times.json, round 31 of "
           "benchmarks/results/perf/), against the `time` pass with the compiler's "
           "registers and local memory (its spills, stored and loaded once a pass of the "
           "loops around the loads, the stores crossing to device memory: "
           "mcl.analyses.timing_counts.spill_traffic). Spearman over all of them, the "
           "median and largest prediction "
           "error, and the versions predicted worst. What the model misses there: the "
           "loads a warp of a compiled kernel has in flight (NVIDIA's compiler issues the "
           "loads of completely unrolled iterations together where the arithmetic "
           "between them is light, vector_add, and not where it is heavy, "
           "black_scholes: counted, black_scholes and gesummv rank worse; not counted, "
           "vector_add does; their SASS, raw/sass_2026-11-27/: vector_add nvidia_v1 issues "
           "the 8 loads of its 4 unrolled iterations together, predicated, black_scholes "
           "gpu_v1 branches round each option and loads it after the previous one's "
           "stores), the "
           "spills of a kernel capped at 64 or 255 registers until they were counted "
           "(gesummv hopper_v2 with 32 warps or 4 rows: -57% and -36% before, "
           "raw/h200_2026-11-30_spills/), and, before the `block dispatch` part, the "
           "rate at which "
           "the device starts blocks (vector_add in blocks of 64 threads: 161 µs "
           "measured, 159 µs predicted now, 88.8 µs before).", "",
           "| kernel | versions and variants | Spearman | median error | largest errors "
           "(measured / predicted ms, limiter) |", "| --- | ---: | ---: | ---: | --- |"]
    for k, pts in sorted(by_kernel.items()):
        rho = spearman([p for _, _, p, _ in pts], [m for _, m, _, _ in pts])
        errs = sorted(abs(p / m - 1) for _, m, p, _ in pts)
        worst = sorted(pts, key=lambda x: -abs(x[2] / x[1] - 1))[:3]
        out.append(f"| {k} | {len(pts)} | {'—' if rho is None else f'{rho:.2f}'} | "
                   f"{100 * errs[len(errs) // 2]:.0f}% | "
                   + "; ".join(f"{n.split('/', 1)[1]}: {m * 1e3:.3g} / {p * 1e3:.3g} ({lim})"
                               for n, m, p, lim in worst) + " |")
    return out
