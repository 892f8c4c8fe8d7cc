"""Turn the results.json of run.py into benchmarks/results/REPORT.md and one plot
per kernel, in the style of the paper's Tables III/IV: per version the figure of
merit, the ratio to the reference of the field, the fraction of the roofline
bound and the speed-up over the perfect version; a version slower than its
predecessor is listed as a finding about the analyses, and the targets of
issue 10 are checked.

    python benchmarks/case_studies/report.py RESULTS.json [--out benchmarks/results]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

#: issue 10's targets: kernel -> (fraction, what it is measured against)
TARGETS = {
    "matmul": (0.75, "primary"),
    "reduction": (0.90, "primary"),
    "gesummv": (0.80, "lower of ceiling and primary"),
    "convolution": (0.80, "lower of ceiling and primary"),
}
SPEEDUP_TARGET = 3.0


def _fmt(x: float | None, digits: int = 3) -> str:
    if x is None:
        return "—"
    if x == 0:
        return "0"
    if abs(x) >= 100:
        return f"{x:,.0f}"
    return f"{x:.{digits}g}"


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.0f}%"


def ceiling_gbps(results: dict) -> float | None:
    c = results.get("ceiling", {}).get("opencl_copy") or {}
    return c.get("GBps_read_plus_write")


class Run:
    """One kernel at one size: figures of merit derived from times."""

    def __init__(self, kernel: str, data: dict, run: dict, ceiling: float | None):
        self.kernel, self.data, self.run, self.ceiling = kernel, data, run, ceiling
        roof = run.get("roofline", {})
        self.flops, self.bytes = roof.get("flops", 0), roof.get("bytes", 0)
        self.bound_s = roof.get("bound_s")
        self.metric = data.get("metric", "GB/s")

    def value(self, seconds: float) -> float:
        """The figure of merit (GFLOP/s or GB/s) of a run of ``seconds``."""
        work = self.flops if self.metric == "GFLOP/s" else self.bytes
        return work / seconds / 1e9

    def gbps(self, seconds: float) -> float | None:
        return self.bytes / seconds / 1e9 if self.bytes else None

    def primary(self) -> dict | None:
        for r in self.run.get("references", []):
            if r.get("primary") and r.get("status") == "ok":
                return r
        return None

    def ceiling_s(self) -> float | None:
        """Time the compulsory bytes take at the measured copy bandwidth."""
        if not self.bytes or not self.ceiling:
            return None
        return self.bytes / (self.ceiling * 1e9)

    def timed(self) -> list[dict]:
        return [v for v in self.run.get("results", []) if v.get("status") == "ok"]


def _median(entry: dict) -> float | None:
    return (entry.get("timing") or {}).get("median_s")


def kernel_section(kernel: str, data: dict, results: dict, plots: Path | None,
                   findings: list[str], targets: list[str]) -> list[str]:
    lines = [f"## {kernel}", ""]
    if "error" in data:
        return lines + [f"The benchmark of this kernel failed: `{data['error']}`", ""]
    for raw in data.get("runs", []):
        run = Run(kernel, data, raw, ceiling_gbps(results))
        sizes = ", ".join(f"{k} = {v}" for k, v in raw["sizes"].items())
        lines += [f"### {sizes}", ""]
        if "skipped" in raw:
            lines += [f"Not measured: {raw['skipped']}.", ""]
            continue
        prim = run.primary()
        t_ref = _median(prim) if prim else None
        t_perfect = next((_median(v) for v in run.timed() if v["version"] == "perfect"), None)
        lines += [f"Verification: {raw.get('verification', '—')}. Roofline bound: "
                  f"{_fmt((run.bound_s or 0) * 1e3)} ms "
                  f"({raw.get('roofline', {}).get('bound_by', '?')}-bound, "
                  f"{raw.get('roofline', {}).get('source', 'no source')}).", ""]
        ref_name = prim["name"] if prim else (data.get("primary_ref") or "copy ceiling")
        lines += [f"| version | level | time (ms) | {run.metric} | compulsory GB/s | vs {ref_name} "
                  "| of copy ceiling | of roofline | × perfect | status |",
                  "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
        previous: dict | None = None
        for v in raw.get("results", []):
            t = _median(v)
            if t is None:
                reason = v.get("reason", "")
                lines.append(f"| {v['version']} | {v['level']} | — | — | — | — | — | — | — | "
                             f"{v['status']}: {reason[:160].replace('|', '/')} |")
                continue
            small = v.get("small_sizes") or {}
            if small.get("failed"):
                findings.append(f"{kernel}: **{v['version']}** is wrong at small sizes "
                                f"{[f['sizes'] for f in small['failed']]} "
                                f"({small['failed'][0]['error']}).")
            gb = run.gbps(t)
            lines.append(
                f"| {v['version']} | {v['level']} | {_fmt(t * 1e3)} | {_fmt(run.value(t))} | "
                f"{_fmt(gb)} | {_pct(t_ref / t) if t_ref else '—'} | "
                f"{_pct(gb / run.ceiling) if gb and run.ceiling else '—'} | "
                f"{_pct(run.bound_s / t) if run.bound_s else '—'} | "
                f"{_fmt(t_perfect / t) if t_perfect else '—'} | ok |")
            if previous is not None and t > _median(previous) * 1.02:
                findings.append(
                    f"{kernel} ({sizes}): **{v['version']}** is slower than "
                    f"{previous['version']} ({_fmt(t * 1e3)} ms against "
                    f"{_fmt(_median(previous) * 1e3)} ms): the feedback that prompted it "
                    f"(examples/{kernel}/NOTES.md) did not predict this.")
            previous = v
        lines += ["", "References measured in the same run:", "",
                  f"| reference | time (ms) | {run.metric} | GB/s | status |",
                  "| --- | ---: | ---: | ---: | --- |"]
        for r in raw.get("references", []):
            t = _median(r)
            lines.append(f"| {r['name']} | {_fmt(t * 1e3) if t else '—'} | "
                         f"{_fmt(run.value(t)) if t else '—'} | "
                         f"{_fmt(run.gbps(t)) if t else '—'} | "
                         f"{r.get('status')}{': ' + r['reason'] if r.get('reason') else ''} |")
        if run.ceiling_s():
            lines.append(f"| copy ceiling ({_fmt(run.ceiling)} GB/s) | "
                         f"{_fmt(run.ceiling_s() * 1e3)} | {_fmt(run.value(run.ceiling_s()))} | "
                         f"{_fmt(run.ceiling)} | ok |")
        lines.append("")
        check_targets(kernel, sizes, run, t_ref, t_perfect, targets)
        if plots is not None:
            img = plot(kernel, sizes, run, raw, plots)
            if img:
                lines += [f"![{kernel} {sizes}](case_studies/{img.name})", ""]
    return lines


def check_targets(kernel: str, sizes: str, run: Run, t_ref: float | None,
                  t_perfect: float | None, out: list[str]) -> None:
    timed = run.timed()
    if not timed:
        out.append(f"{kernel} ({sizes}): no version ran, no target can be checked.")
        return
    best = min(timed, key=_median)
    t_best = _median(best)
    if kernel in TARGETS:
        frac, against = TARGETS[kernel]
        if against == "primary":
            goal_t = t_ref
        else:
            cands = [x for x in (t_ref, run.ceiling_s()) if x]
            goal_t = max(cands) if cands else None  # the lower performance is the longer time
        if goal_t:
            got = goal_t / t_best
            verdict = "met" if got >= frac else "**missed**"
            out.append(f"{kernel} ({sizes}): best {best['version']} reaches {_pct(got)} of "
                       f"the {against} (target {_pct(frac)}): {verdict}.")
        else:
            out.append(f"{kernel} ({sizes}): the reference was not measured; target unchecked.")
    if t_perfect:
        within = t_ref is not None and t_perfect <= 1.2 * t_ref
        sp = t_perfect / t_best
        verdict = "met" if sp >= SPEEDUP_TARGET or within else "**missed**"
        note = ", perfect already within 20% of the reference" if within else ""
        out.append(f"{kernel} ({sizes}): best is {_fmt(sp)}× perfect (target "
                   f"{SPEEDUP_TARGET:g}×{note}): {verdict}.")


def plot(kernel: str, sizes: str, run: Run, raw: dict, folder: Path) -> Path | None:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    timed = run.timed()
    if not timed:
        return None
    names = [v["version"] for v in timed]
    values = [run.value(_median(v)) for v in timed]
    fig, ax = plt.subplots(figsize=(max(5.0, 0.7 * len(names) + 2), 3.6))
    ax.bar(names, values, color="#4477aa")
    for i, r in enumerate(x for x in raw.get("references", []) if _median(x)):
        ax.axhline(run.value(_median(r)), color=f"C{i + 1}", ls="--", lw=1, label=r["name"])
    if run.bound_s:
        ax.axhline(run.value(run.bound_s), color="k", ls=":", lw=1, label="roofline bound")
    if run.ceiling_s():
        ax.axhline(run.value(run.ceiling_s()), color="grey", ls="-.", lw=1, label="copy ceiling")
    ax.set_ylabel(run.metric)
    ax.set_title(f"{kernel} ({sizes})", fontsize=10)
    ax.legend(fontsize=7, loc="upper left")
    plt.setp(ax.get_xticklabels(), rotation=30, ha="right")
    fig.tight_layout()
    folder.mkdir(parents=True, exist_ok=True)
    tag = "_".join(str(v) for v in raw["sizes"].values())
    path = folder / f"{kernel}_{tag}.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def render(results: dict, plots: Path | None) -> str:
    meta = results.get("meta", {})
    findings: list[str] = []
    targets: list[str] = []
    body: list[str] = []
    for kernel, data in results.get("kernels", {}).items():
        body += kernel_section(kernel, data, results, plots, findings, targets)
    c = results.get("ceiling", {})
    head = [
        "# Case studies of issue 10: stepwise refinement on the H100",
        "",
        "Generated by `benchmarks/case_studies/report.py` from the results.json of "
        "`benchmarks/case_studies/run.py`; do not edit by hand.",
        "",
        f"Run: {meta.get('date')} on {meta.get('gpu') or meta.get('device')}, commit "
        f"{meta.get('commit')}, runtime {meta.get('runtime')}, torch {meta.get('torch', '—')}; "
        f"{meta.get('warmup')} warm-up run(s), median of {meta.get('repeats')} "
        f"(OpenCL profiling events for MCPL versions, CUDA events for torch)."
        + (" **Quick mode: small sizes on whatever device was there; figures mean "
           "nothing.**" if meta.get("quick") else ""),
        "",
        f"Bandwidth ceiling: OpenCL copy {_fmt(ceiling_gbps(results))} GB/s, torch copy "
        f"{_fmt((c.get('torch_copy') or {}).get('GBps_read_plus_write'))} GB/s (read + write).",
        "",
        "Columns: *vs reference* = reference time / version time (same work); *of copy "
        "ceiling* = the version's GB/s (compulsory bytes of reference.py) over the copy "
        "bandwidth; *of roofline* = bound time / version time, the bound from the target's "
        "peak flops and bandwidth (source named per table); *× perfect* = speed-up over the "
        "perfect version. The feedback behind each version is in examples/<kernel>/NOTES.md.",
        "",
        "## Targets of issue 10",
        "",
    ]
    head += [f"* {t}" for t in targets] or ["* nothing measured"]
    head += ["", "## Findings (about the analyses, and versions that are wrong)", ""]
    head += [f"* {f}" for f in findings] or [
        "* No measured version was slower than its predecessor."]
    head.append("")
    return "\n".join(head + body) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results", help="results.json of run.py")
    ap.add_argument("--out", default="benchmarks/results",
                    help="folder for REPORT.md; plots go to OUT/case_studies/")
    ap.add_argument("--no-plots", action="store_true")
    args = ap.parse_args(argv)
    results: dict[str, Any] = json.loads(Path(args.results).read_text())
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    plots = None if args.no_plots else out / "case_studies"
    (out / "REPORT.md").write_text(render(results, plots))
    print(f"wrote {out / 'REPORT.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
