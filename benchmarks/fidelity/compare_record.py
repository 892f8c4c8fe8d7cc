"""A fidelity run on another machine of the same chip against the record: the NVIDIA
compiler's registers and CUDA's resident blocks of every example, ncu's L2 read sectors
and the shared-memory carveout of the launches it reached, and the cold times ranked
against the predicted ones, as a Markdown summary. The predictions: report.py's
predictions.json (hopper), or with --level those of the analyses now at that level
(MCL_FIDELITY_LEVEL of fidelity_cases.py: h200, the machine's own description).

    python3 benchmarks/fidelity/compare_record.py RAW_DIR [--level h200] [--times DIR]
    (RAW_DIR: benchmarks/results/fidelity/raw/h200_2026-11-29; --times: the cold times
    from DIR's times.json instead, each version's best of it and, where DIR has one,
    rerun_times.json, whose run-to-run spread ranks the measurements as report.py does)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1]))
_ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
_ap.add_argument("raw", type=Path)
_ap.add_argument("--level", help="predict at this level now (default: predictions.json)")
_ap.add_argument("--times", type=Path, help="take the cold times from this folder")
ARGS = _ap.parse_args() if __name__ == "__main__" else None
if ARGS is not None and ARGS.level:
    os.environ["MCL_FIDELITY_LEVEL"] = ARGS.level

import fidelity_cases as C  # noqa: E402
from ranking import best_time, beyond_spread, spearman  # noqa: E402
from report import ncu_kernels  # noqa: E402

RESULTS = HERE.parents[0] / "results" / "fidelity"


def _number(s: str) -> float:
    return float(s.replace(",", ""))


def ncu_rows(raw: Path) -> dict[str, dict[str, float]]:
    """ncu's rows by case, each file's in the order of its launches: as ncu_names.json
    lists them per file where the record has it, else ncu.csv in the example cases'
    order (measure.py launch runs them so; a run cut short has the first ones) and a
    later ncuN.csv in the order of the launches.json written beside it."""
    out: dict[str, dict[str, float]] = {}
    listed = raw / "ncu_names.json"
    listed = json.loads(listed.read_text()) if listed.is_file() else {}
    for path in sorted(raw.glob("ncu*.csv")):
        names = listed.get(path.name) or (
            [c.name for c in C.example_cases(None)] if path.name == "ncu.csv" else
            [r["name"] for r in json.loads((raw / "launches.json").read_text())["rows"]])
        for name, row in zip(names, ncu_kernels(path), strict=False):
            if not name.startswith(row["Kernel Name"]):    # spmv_csr's function: spmv
                raise SystemExit(f"{path.name}: row {row['ID']} is {row['Kernel Name']}, "
                                 f"expected {name}")
            out[name] = {k: _number(v) for k, v in row.items()
                         if "__" in k and v.replace(",", "").replace(".", "").isdigit()}
    return out


def _predictions(names: list[str], registers: dict, level: str | None) -> dict:
    """Per case: predicted seconds and L2 read bytes, with the compiler's ``registers``
    (by case)."""
    if not level:
        saved = json.loads((RESULTS / "predictions.json").read_text())
        return {n: {"seconds": saved.get(n, {}).get("time", {}).get("seconds"),
                    "l2": saved.get(n, {}).get("memory", {}).get("l2_read_bytes")}
                for n in names}
    import fidelity_predict as P
    cases = {c.name: c for c in C.example_cases(None)}
    out = {}
    for n in names:
        regs = registers[n]
        out[n] = {"seconds": P.predicted_time(cases[n], registers=regs).get("seconds"),
                  "l2": P.memory_figures(cases[n], registers=regs).get("l2_read_bytes")}
    return out


def _figure(rho: float | None) -> str:
    return "-" if rho is None else f"{rho:.2f}"


def main(raw: Path, level: str | None, times_dir: Path | None = None) -> int:
    record = {c["name"]: c for c in json.loads(C.RECORD.read_text())["cases"]}
    device = (raw / "device.csv").read_text().splitlines()[-1].split(",")[0]
    res = json.loads((raw / "resources.json").read_text())
    rows = res["rows"] if isinstance(res, dict) else res
    # the record's registers (the H100's build), this machine's for a case it lacks
    registers = {r["name"]: record.get(r["name"], r)["registers"] for r in rows}
    predictions = _predictions([r["name"] for r in rows], registers, level)
    same = [r["name"] for r in rows if r["name"] in record
            and (r["registers"], r["resident_blocks"]) ==
            (record[r["name"]]["registers"], record[r["name"]]["resident_blocks"])]
    print(f"# {device} against the record (H100), predictions at {level or C.TARGET}\n")
    print(f"Registers and resident blocks equal to the record: {len(same)}/"
          f"{sum(r['name'] in record for r in rows)} (of {len(rows)} cases; the others "
          "measured here only).\n")
    ncu = ncu_rows(raw)
    if ncu:
        print("| version | L2 read MB | record (H100) | predicted | carveout kB |")
        print("| --- | ---: | ---: | ---: | ---: |")
        within = 0
        for name, n in ncu.items():
            got = n["lts__t_sectors_srcunit_tex_op_read.sum"] * 32
            was = record[name]["ncu"]["l2_read_sectors"] * 32 if name in record else None
            pred = predictions[name]["l2"]
            print(f"| {name} | {got / 1e6:,.1f} | "
                  f"{was / 1e6 if was else float('nan'):,.1f} | "
                  f"{pred / 1e6 if pred else float('nan'):,.1f} | "
                  f"{n.get('launch__shared_mem_config_size', float('nan')) / 1024:.0f} |")
            within += bool(pred) and abs(pred - got) <= 0.2 * got
        print(f"\nPredicted L2 read bytes within 20% of this machine's: {within}/{len(ncu)}.\n")
    folder = times_dir or raw
    times = json.loads((folder / "times.json").read_text())["rows"]
    rerun = folder / "rerun_times.json"
    again = ({t["name"]: t.get("time_s") for t in json.loads(rerun.read_text())["rows"]
              if t.get("verified")} if rerun.exists() else {})
    by_kernel = defaultdict(list)
    for t in times:
        p = predictions.get(t["name"], {}).get("seconds")
        was = record.get(t["name"], {}).get("time_s")
        if t.get("verified") and p:
            by_kernel[t["name"].split("/")[0]].append(
                (t["name"], best_time(t["time_s"], again.get(t["name"])), p, was,
                 (t["time_s"], again.get(t["name"]))))
    if times_dir:
        print(f"Cold times from {times_dir}" + (" (two runs: each version's best)"
                                                if again else "") + ".\n")
    print("| kernel | Spearman | run-to-run spread | Spearman beyond the spread "
          "| median error of the predicted time | time / H100 record |")
    print("| --- | ---: | ---: | ---: | ---: | --- |")
    for kernel, vs in by_kernel.items():
        rho = spearman([v[2] for v in vs], [v[1] for v in vs])
        spread, beyond = beyond_spread([v[2] for v in vs], [v[4] for v in vs]) \
            if again else (None, None)
        err = statistics.median(abs(v[2] / v[1] - 1) for v in vs)
        ratios = [v[1] / v[3] for v in vs if v[3]]
        span = f"{min(ratios):.2f}-{max(ratios):.2f}" if ratios else "-"
        print(f"| {kernel} | {_figure(rho)} | "
              f"{'-' if spread is None else f'{100 * spread:.1f}%'} | {_figure(beyond)} | "
              f"{100 * err:.0f}% | {span} |")
    errors = [abs(v[2] / v[1] - 1) for vs in by_kernel.values() for v in vs]
    if errors:
        print(f"\nPredicted times within 20% of this machine's: "
              f"{sum(e <= 0.2 for e in errors)}/{len(errors)}, median error "
              f"{100 * statistics.median(errors):.1f}%.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(ARGS.raw, ARGS.level, ARGS.times))
