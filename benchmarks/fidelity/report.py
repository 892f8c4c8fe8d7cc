"""Compare what MCL's feedback says with what the H100 did (run anywhere, no GPU).

    python3 benchmarks/fidelity/report.py [--raw DIR] [--out DIR] [--record FILE]

Reads the GPU side's results (``measure.py``: resources.json, times.json, ncu.csv
with launch.log; sweep_times.json with sweep_rerun_times.json for the section of
sweep_times.py) from ``--raw`` (benchmarks/results/fidelity/raw), computes the
analyses' figures for the same cases now, and writes ``REPORT.md`` with the tables
and a predicted-vs-measured scatter plot per quantity into ``--out``
(benchmarks/results/fidelity), and the vendor figures per case into ``--record``
(tests/analyses/fidelity/vendor.json), which the CPU tests check the analyses
against.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import re
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1]))

import fidelity_cases as C  # noqa: E402
import sweep_times  # noqa: E402
from ranking import best_time, beyond_spread, spearman  # noqa: E402
from report_memory import memory_section, pct  # noqa: E402
from report_memory import within as within_pct  # noqa: E402

from mcl.analyses.previous import SLOWER  # noqa: E402

RAW = C.ROOT / "benchmarks" / "results" / "fidelity" / "raw"
OUT = C.ROOT / "benchmarks" / "results" / "fidelity"
NCU = {"dram_read": "dram__bytes_read.sum", "dram_write": "dram__bytes_write.sum",
       "l2_read_sectors": "lts__t_sectors_srcunit_tex_op_read.sum",
       "l2_write_sectors": "lts__t_sectors_srcunit_tex_op_write.sum",
       "ld_sectors": "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
       "ld_requests": "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
       "shared_ld_conflicts": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
       "shared_st_conflicts": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
       "shared_ld_wavefronts": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
       "shared_st_wavefronts": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
       "achieved_occupancy_pct": "sm__warps_active.avg.pct_of_peak_sustained_active",
       "ncu_time_ns": "gpu__time_duration.sum"}

#: how the timed launches were made cold (times.json's "flush")
_COLD = {
    "clean": ", each launch cold: a write and then a read of 256 MB before it leave none "
             "of its data in the L2 and no dirty line that it would write back, as ncu "
             "flushes and invalidates the caches before it counts (what the predicted time "
             "models: the compulsory traffic from device memory). Made cold by the write "
             "alone, the L2 starts full of dirty lines whose write-back the kernel pays "
             "for: 10-50% slower for the memory-bound versions "
             "(raw/write_flush_times.json)",
    "write": ", each launch after a write of 256 MB (the L2 holds none of its data, but "
             "is full of dirty lines)",
}


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


#: what the section on the kernels ranked below 0.9 shows besides
LAUNCH = {"grid": "launch__grid_size", "block": "launch__block_size",
          "waves": "launch__waves_per_multiprocessor"}


def ncu_rows(raw: Path, metrics: dict[str, str] | None = None) -> dict[str, dict]:
    """ncu's counters (``metrics``: name -> ncu column, NCU by default) per example
    case: each case ran in a process of its own, one kernel each, in the order its
    launch log lists (ncu.csv with launch.log, and further runs as ncu2.csv with
    launch2.log, ...)."""
    out = {}
    for path in sorted(raw.glob("ncu*.csv")):
        rows = ncu_kernels(path)
        logf = raw / path.name.replace("ncu", "launch").replace(".csv", ".log")
        names = [ln.split("launch ", 1)[1].rsplit(":", 1)[0].strip()
                 for ln in logf.read_text().splitlines()
                 if "launch " in ln and ln.strip().endswith(": ok")] if logf.exists() else []
        for name, r in zip(names, rows, strict=False):
            out[name] = counters(r, metrics or NCU)
    return out


def ncu_kernels(path: Path) -> list[dict[str, str]]:
    """The kernel rows of an ncu ``--csv --page raw`` log, in launch order."""
    text = path.read_text()
    if '"ID"' not in text:
        return []
    return [r for r in csv.DictReader(io.StringIO(text[text.index('"ID"'):]))
            if r.get("Kernel Name")]


def counters(row: dict[str, str], metrics: dict[str, str]) -> dict[str, float]:
    """The ``metrics`` (name -> ncu column) of one ncu row that hold a number."""
    vals = {}
    for k, m in metrics.items():
        try:
            vals[k] = float(row[m].replace(",", ""))
        except (KeyError, ValueError):
            pass
    return vals


def _predict(item: tuple[str, int | None]) -> tuple[str, dict]:
    import fidelity_predict as P
    name, regs = item
    case = _CASES[name]
    try:
        out = {"with_vendor": P.predict(case, registers=regs, only=("occupancy",)),
               "estimated": P.predict(case, only=("occupancy",))}
        if not case.sweep:
            out["memory"] = P.memory_figures(case, regs)
            out["memory"]["bank_conflicts"] = P.bank_figures(case)
            out["time"] = P.predicted_time(case, regs)
        return name, out
    except Exception as e:  # noqa: BLE001 - a row with the message
        return name, {"error": f"{type(e).__name__}: {e}"}


def _estimate(name: str) -> tuple[str, dict]:
    import fidelity_predict as P
    try:
        return name, P.predict(_CASES[name], only=("occupancy",))
    except Exception as e:  # noqa: BLE001 - a row with the message
        return name, {"error": f"{type(e).__name__}: {e}"}


_CASES: dict[str, C.Case] = {}


def scatter(path: Path, xs, ys, title: str, xlabel: str, ylabel: str, log_scale=False,
            labels=None) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(5.2, 5))
    ax.scatter(xs, ys, s=14, alpha=0.6, color="#1f5fa8")
    lo = min(min(xs), min(ys))
    hi = max(max(xs), max(ys))
    ax.plot([lo, hi], [lo, hi], color="#999", lw=1, ls="--", label="predicted = measured")
    if log_scale:
        ax.set_xscale("log")
        ax.set_yscale("log")
    if labels:
        for x, y, t in zip(xs, ys, labels, strict=True):
            ax.annotate(t, (x, y), fontsize=5, alpha=0.7)
    ax.set_title(title, fontsize=10)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)


_FINDING = re.compile(r"^\* (\w+) \(([^)]*)\): \*\*(\w+)\*\* is slower than (\w+) "
                      r"\(([\d.]+) ms against ([\d.]+) ms\)")


def _flagged(kernel: str, version: str, sizes: dict) -> str | None:
    """What `mcl feedback` of the new version says about its predecessor (the
    feedback-slower warning of mcl.analyses.previous), or None."""
    from mcl.analyses.previous import against_previous
    from mcl.mcpl import check
    checked = check(str(C.EXAMPLES / kernel / f"{version}.mcpl"))
    if checked.errors:
        return None
    out = against_previous(checked, sizes)
    return out[0].message if out else None


def _l2(counters: dict | None) -> float | None:
    """Bytes of L2 read sectors ncu counted for a case."""
    n = (counters or {}).get("l2_read_sectors")
    return 32 * n if n else None


def _builds_on(kernel: str, version: str) -> str | None:
    """The version an example's header says it changes ("version v6: v4 with ...")."""
    path = C.EXAMPLES / kernel / f"{version}.mcpl"
    head = path.read_text().split("\n", 3)[:3] if path.exists() else []
    m = re.search(r"version \w+: (v\d+) with", " ".join(head))
    if not m:
        return None
    level = version.rsplit("_v", 1)[0]
    return f"{level}_{m.group(1)}"


def below_section(by_kernel: dict, rhos: dict, rerun: dict, ncu: dict,
                  launch: dict) -> list[str]:
    """The kernels whose versions the prediction ranks below 0.9: per version the two
    timed runs, what ncu measured (its own time, with a flushed cache and locked
    clocks; achieved occupancy; DRAM writes) and the launch (grid, block, waves), and
    the rank correlation of the prediction with ncu's times."""
    low = [k for k, rho in sorted(rhos.items()) if rho is None or round(rho, 6) < 0.9]
    if not low:
        return []
    out = ["", "### Kernels ranked below 0.9: the measurements beside the prediction", "",
           "Per version: the two timed runs (OpenCL events, best of 10 each), ncu's "
           "duration of the same kernel (a single launch after a cache flush, clocks "
           "locked), the achieved occupancy (`sm__warps_active`), DRAM bytes written, "
           "and the launch (blocks, threads per block, waves of resident blocks). "
           "Spearman (ncu): the prediction against ncu's durations.", "",
           "| kernel | Spearman (ncu) | version: runs ms; ncu ms; occupancy; DRAM write MB; "
           "grid x block, waves; predicted ms |", "| --- | ---: | --- |"]
    for k in low:
        pts = by_kernel[k]
        cells, pairs = [], []
        for p, m, v, _ in pts:
            n, la = ncu.get(f"{k}/{v}", {}), launch.get(f"{k}/{v}", {})
            r = rerun.get(f"{k}/{v}")
            if n.get("ncu_time_ns"):
                pairs.append((p, n["ncu_time_ns"]))
            cells.append(
                f"{v}: {m * 1e3:.4g}{f' / {r * 1e3:.4g}' if r else ''}; "
                f"{n.get('ncu_time_ns', float('nan')) / 1e6:.4g}; "
                f"{n.get('achieved_occupancy_pct', float('nan')):.0f}%; "
                f"{n.get('dram_write', float('nan')) / 1e6:.1f}; "
                f"{la.get('grid', 0):.0f} x {la.get('block', 0):.0f}, "
                f"{la.get('waves', float('nan')):.2f}; {p * 1e3:.3g}")
        rho = spearman([a for a, _ in pairs], [b for _, b in pairs]) \
            if len(pairs) == len(pts) else None
        out.append(f"| {k} | {'—' if rho is None else f'{rho:.2f}'} | "
                   + "<br>".join(cells) + " |")
    return out


def findings_section(res_by: dict, tmap: dict, raw: Path, preds: dict,
                     ncu: dict) -> list[str]:
    """The slower refinement steps of benchmarks/results/REPORT.md ("Findings"), each
    with whether the feedback of the new version predicts it and, where not, what the
    fidelity measurements say of it."""
    path = C.ROOT / "benchmarks" / "results" / "REPORT.md"
    if not path.exists():
        return []
    rerun_path = raw / "rerun_times.json"
    rerun = {r["name"]: r.get("time_s") for r in json.loads(rerun_path.read_text())["rows"]} \
        if rerun_path.exists() else {}
    out = ["", "### The slower steps of benchmarks/results/REPORT.md", "",
           "Each step REPORT.md lists under Findings, with what `mcl feedback` of the new "
           "version says (mcl.analyses.previous, at the version's own level and the sizes "
           "of the finding) and, where it does not flag it, what the fidelity "
           "measurements (fidelity sizes, two runs) show.", "",
           "| step (sizes) | measured ms | `mcl feedback` | explanation |",
           "| --- | --- | --- | --- |"]
    predicted = explained = 0
    for line in path.read_text().splitlines():
        m = _FINDING.match(line)
        if not m:
            continue
        kernel, sizes_text, new, old, t1, t0 = m.groups()
        sizes = {k.strip(): int(v) if v.strip().isdigit() else float(v)
                 for k, v in (x.split("=") for x in sizes_text.split(","))}
        try:
            flag = _flagged(kernel, new, sizes)
        except Exception as e:  # noqa: BLE001 - a row with the message
            flag = None
            log(f"  {kernel}/{new}: {type(e).__name__}: {e}")
        why = ""
        a, b = res_by.get(f"{kernel}/{old}", {}), res_by.get(f"{kernel}/{new}", {})
        r0, r1 = rerun.get(f"{kernel}/{old}"), rerun.get(f"{kernel}/{new}")
        f0 = tmap.get(f"{kernel}/{old}", {}).get("time_s")
        f1 = tmap.get(f"{kernel}/{new}", {}).get("time_s")
        base = _builds_on(kernel, new)
        fb = tmap.get(f"{kernel}/{base}", {}).get("time_s") if base else None
        p0 = preds.get(f"{kernel}/{old}", {}).get("time", {})
        p1 = preds.get(f"{kernel}/{new}", {}).get("time", {})
        l2a, l2b = _l2(ncu.get(f"{kernel}/{old}")), _l2(ncu.get(f"{kernel}/{new}"))
        if flag:
            predicted += 1
        elif base and base != old and fb and f1 and f1 < fb:
            why = (f"{new} is written as a refinement of {base} (its header: "
                   f"\"{new.split('_')[-1]}: {base.split('_')[-1]} with ...\"), not of {old}; "
                   f"against {base} it is faster: {fb * 1e3:.3g} → {f1 * 1e3:.3g} ms at the "
                   "fidelity sizes")
        elif p0.get("seconds") and p1.get("seconds") and \
                p0["seconds"] < p1["seconds"] <= SLOWER * p0["seconds"]:
            why = (f"predicted {100 * (p1['seconds'] / p0['seconds'] - 1):.2g}% slower at the "
                   f"fidelity sizes ({p1['limiter']}: {p0['seconds'] * 1e3:.3g} → "
                   f"{p1['seconds'] * 1e3:.3g} ms), below the {100 * (SLOWER - 1):.0f}% the "
                   "feedback flags")
        elif a and b and b.get("resident_blocks", 0) < a.get("resident_blocks", 0):
            why = (f"occupancy: the compiler's {b['registers']} registers (was "
                   f"{a['registers']}) leave {b['resident_blocks']} blocks per SM (was "
                   f"{a['resident_blocks']}), which the feedback of the new version reports "
                   "with the compiler's count; the predicted time, the largest of its parts, "
                   "does not grow with fewer resident warps here")
        elif str(p1.get("limiter")).endswith(" bandwidth") and l2a and l2b and l2b > 1.02 * l2a:
            why = (f"bound by the L2's bandwidth, and ncu measured more L2 read traffic: "
                   f"{l2a / 1e9:.1f} → {l2b / 1e9:.1f} GB "
                   f"(+{100 * (l2b / l2a - 1):.0f}%) at the fidelity sizes; the cache "
                   "part's model of the first-level cache (mcl.analyses.block_reuse) "
                   "predicts no growth")
        elif r0 and r1 and f0 and f1 and (r1 / r0 <= 1.03 or f1 / f0 <= 1.03
                                          or abs(r1 / r0 - f1 / f0) > 0.03):
            why = (f"within the run-to-run spread: at the fidelity sizes the new version "
                   f"took {f1 / f0:.2f}x and {r1 / r0:.2f}x the time of {old} in two runs")
        explained += bool(why)
        out.append(f"| {kernel}: {old} → {new} ({sizes_text}) | {t0} → {t1} | "
                   f"{'flagged: ' + flag if flag else 'not flagged'} | {why or '—'} |")
    total = len(out) - 7
    out += ["", f"Of {total} steps, {predicted} predicted by the feedback, {explained} "
            f"explained by the measurements, {total - predicted - explained} neither."]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--raw", type=Path, default=RAW)
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--record", type=Path, default=C.RECORD)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--reuse", action="store_true",
                    help="take the analyses' figures from the last run's predictions.json "
                         "(only when the analyses did not change)")
    ap.add_argument("--renew", action="append", default=[], metavar="KERNEL",
                    help="with --reuse: compute every figure of this kernel's cases again "
                         "(after a change of the analyses that only it shows)")
    ap.add_argument("--renew-estimate", action="store_true",
                    help="with --reuse: compute the estimated registers and occupancy (no "
                         "GPU's count) of every case again, keep the rest (after a change of "
                         "the register estimate alone)")
    args = ap.parse_args(argv)
    res_path = args.raw / "resources.json"
    if not res_path.exists():
        log(f"error: {res_path} is missing: run benchmarks/fidelity/run_gpu.sh on the GPU "
            "machine and copy its results there")
        return 2
    resources = json.loads(res_path.read_text())
    times = json.loads((args.raw / "times.json").read_text()) \
        if (args.raw / "times.json").exists() else {"rows": []}
    ncu = ncu_rows(args.raw)
    cases = {c.name: c for c in C.all_cases()}
    _CASES.update(cases)
    ok = [r for r in resources["rows"] if r["status"] == "ok" and r["name"] in cases
          and cases[r["name"]].digest == r["digest"]]
    stale = [r["name"] for r in resources["rows"] if r["name"] in cases
             and cases[r["name"]].digest != r["digest"]]
    failed = [r for r in resources["rows"] if r["status"] != "ok"]
    log(f"predicting {len(ok)} cases ({len(stale)} changed since measured, left out)")
    t0 = time.time()
    cache = args.out / "predictions.json"
    preds = {}
    if args.reuse and cache.exists():
        preds = json.loads(cache.read_text())
    todo = [(r["name"], r["registers"]) for r in ok if r["name"] not in preds
            or (not cases[r["name"]].sweep and "time" not in preds[r["name"]])
            or cases[r["name"]].kernel in args.renew]
    fresh = {name for name, _ in todo}
    again = [r["name"] for r in ok if args.renew_estimate and r["name"] in preds
             and "error" not in preds[r["name"]] and r["name"] not in fresh]
    with ProcessPoolExecutor(args.jobs) as pool:
        for i, (name, p) in enumerate(pool.map(_predict, todo, chunksize=8)):
            preds[name] = p
            if (i + 1) % 50 == 0:
                log(f"  {i + 1}/{len(todo)} {time.time() - t0:.0f} s")
        for i, (name, p) in enumerate(pool.map(_estimate, again, chunksize=8)):
            preds[name]["estimated"] = p
            if (i + 1) % 100 == 0:
                log(f"  estimate {i + 1}/{len(again)} {time.time() - t0:.0f} s")
    args.out.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps(preds) + "\n")
    log(f"  {time.time() - t0:.0f} s")

    # a variant whose sizes the version is not written for (a loop that never runs, an
    # index beyond its dimension, a read of an element nothing writes, a grid of no
    # blocks): a wrong kernel, left out of the record and counts
    invalid = [r for r in ok if preds.get(r["name"], {}).get("estimated", {}).get("invalid")]
    ok = [r for r in ok if r not in invalid]

    # ---- the record for the CPU tests
    record = {"device": resources.get("device"), "driver": resources.get("driver"),
              "how": "benchmarks/fidelity/run_gpu.sh on the GPU machine; "
                     "benchmarks/fidelity/report.py", "cases": []}
    tmap = {r["name"]: r for r in times["rows"]}
    rerun_path = args.raw / "rerun_times.json"
    rerun = {r["name"]: r.get("time_s") for r in json.loads(rerun_path.read_text())["rows"]
             if r.get("status") == "ok"} if rerun_path.exists() else {}
    for r in ok:
        entry = {k: r[k] for k in ("name", "digest", "registers", "shared_bytes",
                                   "local_bytes", "block_threads", "resident_blocks",
                                   "max_registers")}
        if r["name"] in ncu:
            entry["ncu"] = ncu[r["name"]]
        if r["name"] in tmap and tmap[r["name"]].get("status") == "ok":
            entry["time_s"] = best_time(tmap[r["name"]]["time_s"], rerun.get(r["name"]))
        record["cases"].append(entry)
    args.record.parent.mkdir(parents=True, exist_ok=True)
    args.record.write_text(json.dumps(record, indent=0) + "\n")

    # ---- tables
    args.out.mkdir(parents=True, exist_ok=True)
    rows = []
    for r in ok:
        p = preds.get(r["name"], {})
        if "error" in p:
            rows.append((r, None, None, p["error"]))
            continue
        rows.append((r, p["with_vendor"], p["estimated"], None))
    ex = [x for x in rows if not cases[x[0]["name"]].sweep]
    sw = [x for x in rows if cases[x[0]["name"]].sweep]

    def agree(sub, key):
        return sum(1 for r, v, e, err in sub if err is None
                   and (v if key == "v" else e).get("resident_blocks") == r["resident_blocks"])

    reg_err = [pct(e["registers"], r["registers"]) for r, v, e, err in rows
               if err is None and e.get("registers")]
    within = sum(abs(x) <= 10 for x in reg_err)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, cwd=C.ROOT).stdout.strip()
    mem_md, traffic = memory_section(ex, ncu, preds)
    dram_pts, sec_pts = traffic["dram"], traffic["sectors"]
    md = ["# Feedback fidelity on the H100", "",
          "Generated by `benchmarks/fidelity/report.py` (analyses at commit "
          f"{commit}) from the GPU measurements of `benchmarks/fidelity/run_gpu.sh` "
          f"({resources.get('device')}, driver {resources.get('driver')}); do not edit by "
          "hand.", "",
          "How each figure was measured: NVIDIA's OpenCL driver built the OpenCL kernel MCL "
          "generates for hopper (with the sizes as compile-time constants for the versions "
          "that reference.py's SPECIALIZE names and their variants, as `mcl run` builds "
          "them); its program binary (PTX) was loaded with the CUDA driver "
          "with the register limit of the build options; `cuFuncGetAttribute` gave "
          "registers, shared and local memory, `cuOccupancyMaxActiveBlocksPerMultiprocessor` "
          "the resident blocks. Counters: the same PTX launched through `cuLaunchKernel` "
          "(grid, block and arguments from the launch plan; output checked against "
          "reference.py) under `ncu`. Times: OpenCL profiling events, best of 10, result "
          "verified first"
          + (_COLD.get(times.get("flush") or "write", "") if times.get("cold") else "")
          + ".", "",
          "## Summary", "",
          "| quantity | agreement |", "| --- | --- |",
          f"| occupancy, examples, with the compiler's registers (what `mcl feedback` prints "
          f"with an NVIDIA device) | {agree(ex, 'v')}/{len(ex)} equal to CUDA |",
          f"| occupancy, sweep, with the compiler's registers | {agree(sw, 'v')}/{len(sw)} "
          "equal to CUDA |",
          f"| occupancy, examples, with the estimate (no GPU) | {agree(ex, 'e')}/{len(ex)} |",
          f"| occupancy, sweep, with the estimate | {agree(sw, 'e')}/{len(sw)} |",
          f"| registers: estimate within ±10% of the compiler | {within}/{len(reg_err)} "
          f"({100 * within / max(1, len(reg_err)):.1f}%) |",
          f"| L2 read bytes of the examples (time model) within 20% of the L1s' misses "
          f"| {within_pct(traffic['l1_misses'])}/{len(traffic['l1_misses'])} |",
          f"| the same within 20% of the L2's own lookups (after its request coalescer) "
          f"| {within_pct(traffic['l2'])}/{len(traffic['l2'])} |"]
    if failed:
        md.append(f"| cases the GPU side could not measure | {len(failed)} (listed below) |")
    if invalid:
        md.append(f"| sweep variants left out: wrong kernels (a loop that never runs, an "
                  f"index beyond its dimension, a read of an element nothing writes, a grid of no "
                  f"blocks, a block of more warps than it may have) | "
                  f"{len(invalid)} (listed below) |")
    md.append("")
    # register error distribution
    buckets = [(-1e9, -25), (-25, -10), (-10, 10.000001), (10.000001, 25), (25, 1e9)]
    md += ["### Register estimate: error against the compiler (all cases)", "",
           "| error | cases |", "| --- | ---: |"]
    for lo, hi in buckets:
        n = sum(lo <= x < hi for x in reg_err)
        label = (f"< {hi:.0f}%" if lo < -1e8 else f">= {lo:.0f}%" if hi > 1e8
                 else "within ±10%" if lo == -10 else f"{lo:.0f}% .. {hi:.0f}%")
        md.append(f"| {label} | {n} |")
    # where the estimate misses: per kernel version and its sweep variants
    fams: dict[str, list[int]] = {}
    for r, _v, e, err in rows:
        if err is None and e.get("registers"):
            f = fams.setdefault(r["name"].split("[")[0], [0, 0])
            f[0] += 1
            f[1] += abs(pct(e["registers"], r["registers"])) <= 10
    md += ["", "Within ±10% per example version (the version and its sweep variants), where "
           "some miss:", "", "| version | within ±10% |", "| --- | ---: |"]
    md += [f"| {k} | {w}/{n} |" for k, (n, w) in sorted(fams.items()) if w < n]
    md += ["", "## Occupancy and registers of the examples (translated to hopper)", "",
           "| version | threads/block | registers (compiler) | registers (estimate) | "
           "shared B | spill B | CUDA blocks/SM | MCL (compiler's registers) | "
           "MCL (estimate) |", "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r, v, e, err in ex:
        if err:
            md.append(f"| {r['name']} | {r['block_threads']} | {r['registers']} | — | "
                      f"{r['shared_bytes']} | {r['local_bytes']} | {r['resident_blocks']} | "
                      f"error: {err} | |")
            continue
        mark = "" if v.get("resident_blocks") == r["resident_blocks"] else " ✗"
        marke = "" if e.get("resident_blocks") == r["resident_blocks"] else " ✗"
        md.append(f"| {r['name']} | {r['block_threads']} | {r['registers']} | "
                  f"{e.get('registers')} | {r['shared_bytes']} | {r['local_bytes']} | "
                  f"{r['resident_blocks']} | {v.get('resident_blocks')}{mark} | "
                  f"{e.get('resident_blocks')}{marke} |")
    mism = [(r, v) for r, v, e, err in sw if err is None
            and v.get("resident_blocks") != r["resident_blocks"]]
    md += ["", f"Sweep: {len(sw)} variants of the examples' `const int` sizes "
           "(`benchmarks/fidelity/fidelity_cases.py`); occupancy with the compiler's registers "
           f"differs from CUDA for {len(mism)}."]
    for r, v in mism[:20]:
        md.append(f"* {r['name']}: CUDA {r['resident_blocks']}, MCL {v.get('resident_blocks')}")
    md += mem_md
    # times
    warm_path = args.raw / "warm_times.json"
    warm = {r["name"]: r["time_s"] for r in json.loads(warm_path.read_text())["rows"]
            if r.get("status") == "ok"} if warm_path.exists() and times.get("cold") else {}
    md += ["", "## Time of the examples", "",
           "Predicted: the `time` pass of the feedback (mcl.analyses.timing) with the "
           "compiler's registers: the largest of the compulsory traffic at the bandwidth "
           "a kernel reaches (hopper.target's sustained_bandwidth, 2.88 TB/s, measured by "
           "benchmarks/opencl/inflight_probe.py) combined with the latency the resident "
           "warps cannot hide as (T_b^2 + T_l^2)^(1/2) (hopper.target's "
           "memory_queue_exponent, fitted by the same probe; before round 35 their sum at "
           "the description's 3.35 TB/s), arithmetic at peak, accesses at the load-store "
           "units' rate, "
           "shared-memory accesses at the banks' rate times the bank-conflict degree, "
           "the traffic the resident warps keep in flight over the memory latency (where "
           "blocks are replaced during the run, fewer by 1 / (2 R P): a block of the R "
           "resident ones holds its slots until its last warp has the data of its last of "
           "P passes; a load that only fills a register array in a completely unrolled "
           "loop has all the loop's iterations in flight, and so do the copies of such a "
           "loop whose body is unguarded or short enough for the compiler to predicate "
           "(hopper.target's predicated_body, measured by "
           "benchmarks/opencl/unrolled_loads_probe.py); a grid-stride loop whose "
           "threads go round it unequally often ends in a round with only a part of the "
           "warps, the memory part summed over the rounds), the "
           "L2 sectors the global loads fetch (less what the previous iteration left in "
           "L1) at the L2's bandwidth, the requests they make of the L2 (a line a "
           "request, a gather's lanes one each) at the rate it serves them "
           "(hopper.target's cache_request_rate, 158 G a second, measured by "
           "benchmarks/opencl/l2_request_probe.py; where the warps gather, after the "
           "compulsory traffic at the sustained bandwidth rather than under it: the "
           "`gathers` part, benchmarks/opencl/gather_chain_probe.py), and serialised "
           "atomics (integer "
           "ones an L2 round "
           "trip each, the most updated element of data-chosen ones at least its share), "
           "and the blocks at the rate the device starts them (hopper.target's "
           "block_dispatch_rate, measured: 1.65 per ns up to 640 threads a block, 0.88 at "
           "1024). A grid of fewer blocks than SMs leaves SMs idle. Warps that wait at a barrier "
           "for the tile they fill (each phase: the memory latency per round of resident "
           "blocks, and the tiles' arrays crossing the memory interface once) leave the "
           "execution units idle. Measured: the best launch of the two timed runs "
           "(times.json and rerun_times.json, each the best of 10). Spearman: rank "
           "correlation of predicted and measured "
           "times over a kernel's versions (— where the prediction ties every version). "
           "Run-to-run spread: the largest relative difference, over the kernel's "
           "versions, between the two timed runs (times.json and rerun_times.json, each "
           "the best of 10). Spearman beyond the spread: the rank correlation of the "
           "predicted times with the mean of the two runs, where measured times that lie "
           "within that spread of each other count as ties (sorted, a group takes each "
           "time up to (1 + spread) times its first; ranks averaged): only the order "
           "the measurements resolve (— where they resolve none)."
           + (" Spearman, warm: the same against the warm times of warm_times.json "
              "(each launch after the previous one's, waited for: on an idle device, as "
              "measure.py timed warm launches before 2026-11-30)."
              if warm else ""),
           "", "| kernel | versions | Spearman | run-to-run spread | Spearman beyond the "
           "spread | " + ("Spearman, warm | " if warm else "")
           + "version: measured / predicted ms (limiter) |",
           "| --- | ---: | ---: | ---: | ---: | " + ("---: | " if warm else "") + "--- |"]
    by_kernel: dict[str, list] = {}
    for r, *_ in ex:
        t = tmap.get(r["name"])
        pt = preds.get(r["name"], {}).get("time", {})
        if t and t.get("status") == "ok" and pt.get("seconds"):
            by_kernel.setdefault(cases[r["name"]].kernel, []).append(
                (pt["seconds"], best_time(t["time_s"], rerun.get(r["name"])),
                 cases[r["name"]].version, pt["limiter"]))
    time_pts = []
    rhos = {}
    for k, pts in sorted(by_kernel.items()):
        rho = spearman([p for p, *_ in pts], [m for _, m, *_ in pts])
        rhos[k] = rho
        runs = [(tmap[f"{k}/{v}"]["time_s"], rerun.get(f"{k}/{v}")) for _, _, v, _ in pts]
        spread, beyond = beyond_spread([p for p, *_ in pts], runs)
        time_pts += [(p, m, f"{k}/{v}") for p, m, v, _ in pts]
        warm_rho = None
        if warm and all(f"{k}/{v}" in warm for _, _, v, _ in pts):
            warm_rho = spearman([p for p, *_ in pts], [warm[f"{k}/{v}"] for _, _, v, _ in pts])
        md.append(f"| {k} | {len(pts)} | {'—' if rho is None else f'{rho:.2f}'} | "
                  f"{'—' if spread is None else f'{100 * spread:.1f}%'} | "
                  f"{'—' if beyond is None else f'{beyond:.2f}'} | "
                  + (f"{'—' if warm_rho is None else f'{warm_rho:.2f}'} | " if warm else "")
                  + "; ".join(f"{v}: {m * 1e3:.3g} / {p * 1e3:.3g} ({lim})"
                              for p, m, v, lim in pts) + " |")
    md += below_section(by_kernel, rhos, rerun, ncu, ncu_rows(args.raw, LAUNCH))
    # the refinement steps measured slower than their predecessor
    md += ["", "### Steps measured slower than their predecessor", "",
           "Consecutive versions (refinement order of fidelity_cases.py) whose measured time grew "
           "by more than 3%, and whether the feedback of the new version flags it "
           f"(predicted more than {100 * (SLOWER - 1):.0f}% slower, "
           "mcl.analyses.previous).", "",
           "| step | measured ms | predicted ms | predicted slower? | what changed "
           "(compiler registers, CUDA blocks/SM) |", "| --- | --- | --- | --- | --- |"]
    res_by = {r["name"]: r for r in ok}
    for k, pts in sorted(by_kernel.items()):
        for (p0, m0, v0, _), (p1, m1, v1, lim1) in zip(pts, pts[1:], strict=False):
            if m1 <= 1.03 * m0:
                continue
            a, b = res_by.get(f"{k}/{v0}", {}), res_by.get(f"{k}/{v1}", {})
            md.append(f"| {k}: {v0} → {v1} | {m0 * 1e3:.3g} → {m1 * 1e3:.3g} | "
                      f"{p0 * 1e3:.3g} → {p1 * 1e3:.3g} | "
                      f"{'yes (' + lim1 + ')' if p1 > p0 * SLOWER else 'no'} | "
                      f"registers {a.get('registers')} → {b.get('registers')}, blocks "
                      f"{a.get('resident_blocks')} → {b.get('resident_blocks')} |")
    md += findings_section(res_by, tmap, args.raw, preds, ncu)
    md += sweep_times.section(args.raw, preds, cases,
                              {r["name"]: (r["registers"], r.get("local_bytes")) for r in ok},
                              args.jobs)
    cache.write_text(json.dumps(preds) + "\n")
    if failed:
        md += ["", "## Cases the GPU side could not measure", ""]
        md += [f"* {r['name']}: {r['status']}" for r in failed]
    if invalid:
        md += ["", "## Sweep variants left out", "",
               "Sizes the version is not written for, which make a wrong kernel whatever its "
               "speed (mcl.analyses.validity, warnings of every `mcl feedback`): a loop that "
               "never runs (`feedback-empty-loop`: the kernel leaves output unwritten; the "
               "convolution variants' 4 registers are of a kernel whose result nothing uses) "
               ", an index that leaves its dimension for values the loops around it take "
               "(`feedback-out-of-bounds`: the tiles' index arithmetic of the version is "
               "written for its own tile sizes), a read of an element of a shared tile or "
               "register array that nothing writes (`feedback-unwritten-read`: the loops "
               "that fill it fill fewer elements than are read), a grid of no blocks at "
               "the fidelity sizes (`feedback-empty-grid`) or a block of more warps than the "
               "description allows (`feedback-too-many-units`: 2048 threads, which no H100 "
               "starts). The compiler's counts are in "
               "raw/resources.json.", ""]
        md += [f"* {r['name']} ({r['registers']} registers): "
               f"{preds[r['name']]['estimated']['invalid'][0]}" for r in invalid]
    # plots
    def plot(name, pts, title, xl, yl, log_scale=False):
        if pts:
            scatter(args.out / name, [p for p, _, *_ in pts], [m for _, m, *_ in pts],
                    title, xl, yl, log_scale)
            md.extend(["", f"![{title}]({name})"])
    md += ["", "## Plots"]
    occ_v = [(v["resident_blocks"], r["resident_blocks"]) for r, v, e, err in rows
             if err is None and v.get("resident_blocks") is not None]
    occ_e = [(e["resident_blocks"], r["resident_blocks"]) for r, v, e, err in rows
             if err is None and e.get("resident_blocks") is not None]
    plot("occupancy_vendor.png", occ_v, "Blocks per SM: MCL (compiler's registers) vs CUDA",
         "predicted", "CUDA occupancy API")
    plot("occupancy_estimate.png", occ_e, "Blocks per SM: MCL (estimated registers) vs CUDA",
         "predicted", "CUDA occupancy API")
    regs = [(e["registers"], r["registers"]) for r, v, e, err in rows
            if err is None and e.get("registers")]
    plot("registers.png", regs, "Registers per thread: estimate vs NVIDIA compiler",
         "estimated", "NVIDIA compiler")
    plot("dram.png", dram_pts, "DRAM bytes: predicted vs ncu", "predicted", "measured",
         True)
    plot("sectors.png", sec_pts, "Global load sectors per request", "predicted", "measured")
    plot("l2.png", traffic["l1_misses"], "L2 read bytes: predicted vs the L1s' misses (ncu)",
         "predicted", "measured", True)
    plot("time.png", time_pts, "Time: predicted vs measured (s)", "predicted", "measured",
         True)
    (args.out / "REPORT.md").write_text("\n".join(md) + "\n")
    log(f"wrote {args.out / 'REPORT.md'} and {args.record}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
