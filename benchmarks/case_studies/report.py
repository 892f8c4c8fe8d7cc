"""Turn the results.json of run.py into benchmarks/results/REPORT.md and one plot
per kernel, in the style of the paper's Tables III/IV: per version the figure of
merit, the ratio to the reference of the field, the fraction of the roofline
bound and the speed-up over the perfect version; a version slower than its
predecessor is listed as a finding about the analyses, with what `mcl feedback` of
that version says of the step (mcl.analyses.previous), and the targets of issues 10
and 20 are checked.

    python benchmarks/case_studies/report.py RESULTS.json [--out benchmarks/results]
        [--rerun LATER.json --save-merged RESULTS.json]

``--rerun`` takes the kernels of a later run (``run.py --kernels convolution``) in place
of RESULTS.json's, and the report says which kernels come from which run;
``--save-merged`` writes the merged results (the record the report is made from).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

if str(Path(__file__).resolve().parents[2]) not in sys.path:   # run as a script: mcl
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

#: issue 10's targets: kernel -> (fraction, what it is measured against)
TARGETS = {
    "matmul": (0.75, "primary"),
    "reduction": (0.90, "primary"),
    "gesummv": (0.80, "lower of ceiling and primary"),
    "convolution": (0.80, "lower of ceiling and primary"),
}
SPEEDUP_TARGET = 3.0
#: issue 20's targets: kernel -> (fraction, measured against: the primary reference,
#: the copy ceiling, or the roofline bound)
TARGETS_20 = {
    "matmul": (0.95, "primary"),
    "convolution": (0.60, "roofline"),
    "black_scholes": (0.90, "ceiling"),
    "gesummv": (0.92, "ceiling"),
}


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

    def value(self, seconds: float, entry: dict | None = None) -> float:
        """The figure of merit (GFLOP/s or GB/s) of a run of ``seconds`` (of ``entry``'s
        own work where it ran at a reduced size)."""
        work = (entry or {}).get("work") or {"flops": self.flops, "bytes": self.bytes}
        return (work["flops"] if self.metric == "GFLOP/s" else work["bytes"]) / seconds / 1e9

    def rate(self, entry: dict) -> float | None:
        """The figure of merit of a measured entry, at the size it ran at."""
        t = _median(entry)
        return self.value(t, entry) if t else None

    def bound_by(self) -> str:
        """Which roof the bound is. Derived from the figures where they are there: the
        bound is the compute bound exactly when it equals flops / peak (results.json
        of earlier runs labelled matmul's compute bound "memory")."""
        roof = self.run.get("roofline", {})
        f = roof.get("bound_flops") or roof.get("flops")
        peak = roof.get("bound_peak_flops") or roof.get("peak_flops")
        if self.bound_s and f and peak:
            return "compute" if abs(f / peak - self.bound_s) <= 1e-6 * self.bound_s else "memory"
        return roof.get("bound_by", "?")

    def gbps(self, seconds: float, entry: dict | None = None) -> float | None:
        nbytes = ((entry or {}).get("work") or {}).get("bytes", self.bytes)
        return nbytes / seconds / 1e9 if nbytes else None

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

    def full_size(self) -> list[dict]:
        """The timed versions measured at the run's (paper) size."""
        return [v for v in self.timed() if "reduced" not in v]


def _median(entry: dict) -> float | None:
    return (entry.get("timing") or {}).get("median_s")


def _sizes(sizes: dict) -> str:
    return ", ".join(f"{k} = {v}" for k, v in sizes.items())


REDUCED_MARK = "†"
#: the examples whose versions the case studies run
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def step_feedback(kernel: str, version: str, sizes: dict) -> str:
    """What `mcl feedback` of ``version`` says about the version it refines at
    ``sizes`` (mcl.analyses.previous's feedback-slower warning, at the version's own
    level), for a finding: quoted where it predicts the step slower."""
    path = EXAMPLES / kernel / f"{version}.mcpl"
    if not path.is_file():
        return f"`mcl feedback` of {version} could not be asked (no file {path.name})"
    try:
        from mcl.analyses.previous import against_previous
        from mcl.mcpl import check
        checked = check(str(path))
        if checked.errors:
            return f"`mcl feedback` of {version} could not be asked (the version has errors)"
        said = against_previous(checked, sizes)
    except Exception as e:  # noqa: BLE001 - the report says why, and goes on
        return f"`mcl feedback` of {version} could not be asked ({type(e).__name__}: {e})"
    if said:
        return f"`mcl feedback` of {version} predicts it: \"{said[0].message}\""
    return (f"`mcl feedback` of {version} does not predict it (the feedback that prompted "
            f"it: examples/{kernel}/NOTES.md)")


def kernel_section(kernel: str, data: dict, results: dict, plots: Path | None,
                   findings: list[str], targets: list[str],
                   targets20: list[str] | None = None) -> list[str]:
    lines = [f"## {kernel}", ""]
    if "error" in data:
        lines += [f"The benchmark of this kernel failed: `{data['error']}`", ""]
    for raw in data.get("runs", []):
        run = Run(kernel, data, raw, ceiling_gbps(results))
        sizes = ", ".join(f"{k} = {v}" for k, v in raw["sizes"].items())
        lines += [f"### {sizes}", ""]
        if "skipped" in raw:
            lines += [f"Not measured: {raw['skipped']}.", ""]
            continue
        prim = run.primary()
        t_ref = _median(prim) if prim else None
        perfect = next((v for v in run.timed() if v["version"] == "perfect"), None)
        lines += [f"Verification: {raw.get('verification', '—')}. Roofline bound: "
                  f"{_fmt((run.bound_s or 0) * 1e3)} ms "
                  f"({run.bound_by()}-bound, "
                  f"{raw.get('roofline', {}).get('source', 'no source')}).", ""]
        ref_name = prim["name"] if prim else (data.get("primary_ref") or "copy ceiling")
        lines += [f"| version | level | time (ms) | {run.metric} | compulsory GB/s | vs {ref_name} "
                  "| of copy ceiling | of roofline | × perfect | status |",
                  "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
        previous: dict | None = None
        notes: list[str] = []
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
            reduced = "reduced" in v
            rate = run.rate(v)
            gb = run.gbps(t, v)
            mark = f" {REDUCED_MARK}" if reduced else ""
            if reduced:  # ratios of rates: never a time at one size over one at another
                r = v["reduced"]
                notes.append(f"{REDUCED_MARK} **{v['version']}** was measured at "
                             f"{_sizes(v.get('sizes', {}))}, not at the paper size: "
                             + (r.get("reason") or "one run at the paper size was predicted "
                                f"to take {_fmt(r.get('predicted_paper_s'))} s") + ".")
                vs_ref = _pct(rate / run.value(t_ref)) + mark if t_ref else "—"
                bound = (v.get("roofline") or {}).get("bound_s")
                of_roof = _pct(bound / t) + mark if bound else "—"
                x_perf = _fmt(rate / run.rate(perfect)) + mark if perfect else "—"
                time_cell = f"{_fmt(t * 1e3)}{mark}"
                status = "ok, reduced size"
            else:
                vs_ref = _pct(t_ref / t) if t_ref else "—"
                of_roof = _pct(run.bound_s / t) if run.bound_s else "—"
                if perfect and "reduced" in perfect:
                    x_perf = _fmt(rate / run.rate(perfect)) + f" {REDUCED_MARK}"
                else:
                    x_perf = _fmt(_median(perfect) / t) if perfect else "—"
                time_cell, status = _fmt(t * 1e3), "ok"
            if v.get("status") != "ok":  # timed, but wrong: said, and never the best
                status = (f"{v.get('status')}: "
                          f"{v.get('reason', '')[:160].replace('|', '/')}").rstrip(": ")
            lines.append(
                f"| {v['version']}{mark} | {v['level']} | {time_cell} | {_fmt(rate)} | "
                f"{_fmt(gb)} | {vs_ref} | "
                f"{_pct(gb / run.ceiling) if gb and run.ceiling else '—'} | "
                f"{of_roof} | {x_perf} | {status} |")
            if v.get("status") != "ok":
                continue
            if (previous is not None and v.get("sizes") == previous.get("sizes")
                    and t > _median(previous) * 1.02):  # only at one size: a finding
                if reduced:
                    what = (f"{_fmt(t * 1e3)} ms against {_fmt(_median(previous) * 1e3)} ms, "
                            f"both at {_sizes(v['sizes'])}")
                else:
                    what = f"{_fmt(t * 1e3)} ms against {_fmt(_median(previous) * 1e3)} ms"
                findings.append(
                    f"{kernel} ({sizes}): **{v['version']}** is slower than "
                    f"{previous['version']} ({what}): "
                    f"{step_feedback(kernel, v['version'], v.get('sizes') or raw['sizes'])}.")
            previous = v
        if notes:
            lines += [""] + [f"{n} Its ratios are ratios of {run.metric}, each at its own "
                             "size; of roofline is against the bound at its size."
                             for n in notes]
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
        check_targets(kernel, sizes, run, t_ref, perfect, targets)
        if targets20 is not None:
            check_targets_20(kernel, sizes, run, t_ref, targets20)
        if plots is not None:
            img = plot(kernel, sizes, run, raw, plots)
            if img:
                lines += [f"![{kernel} {sizes}](case_studies/{img.name})", ""]
    return lines


def check_targets_20(kernel: str, sizes: str, run: Run, t_ref: float | None,
                     out: list[str]) -> None:
    """Issue 20's fraction for the kernel's best version at this size."""
    timed = run.full_size()
    if kernel not in TARGETS_20 or not timed:
        return
    best = min(timed, key=_median)
    frac, against = TARGETS_20[kernel]
    goal_t = {"primary": t_ref, "ceiling": run.ceiling_s(), "roofline": run.bound_s}[against]
    name = {"primary": "primary reference", "ceiling": "copy ceiling",
            "roofline": "roofline bound"}[against]
    if not goal_t:
        out.append(f"{kernel} ({sizes}): the {name} was not measured; target unchecked.")
        return
    got = goal_t / _median(best)
    verdict = "met" if got >= frac else "**missed**"
    out.append(f"{kernel} ({sizes}): best {best['version']} reaches {_pct(got)} of the "
               f"{name} (target {_pct(frac)}): {verdict}.")


def check_targets(kernel: str, sizes: str, run: Run, t_ref: float | None,
                  perfect: dict | None, out: list[str]) -> None:
    timed = run.full_size()
    if not timed:
        out.append(f"{kernel} ({sizes}): no version ran at this size, no target can be "
                   "checked.")
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
    if perfect is None:
        return
    if "reduced" in perfect:  # rates: the perfect version ran at a smaller size
        sp = run.rate(best) / run.rate(perfect)
        within = t_ref is not None and run.rate(perfect) * 1.2 >= run.value(t_ref)
        how = (f" (perfect measured at {_sizes(perfect.get('sizes', {}))}: ratio of "
               f"{run.metric})")
    else:
        sp = _median(perfect) / t_best
        within = t_ref is not None and _median(perfect) <= 1.2 * t_ref
        how = ""
    verdict = "met" if sp >= SPEEDUP_TARGET or within else "**missed**"
    note = ", perfect already within 20% of the reference" if within else ""
    out.append(f"{kernel} ({sizes}): best is {_fmt(sp)}× perfect{how} (target "
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
    names = [v["version"] + (f" {REDUCED_MARK}" if "reduced" in v else "") for v in timed]
    values = [run.rate(v) for v in timed]
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
    targets20: list[str] = []
    body: list[str] = []
    for kernel, data in results.get("kernels", {}).items():
        body += kernel_section(kernel, data, results, plots, findings, targets, targets20)
    c = results.get("ceiling", {})
    head = [
        "# Case studies of issue 10: stepwise refinement on the "
        + _device_name(meta),
        "",
        "Generated by `benchmarks/case_studies/report.py` from the results.json of "
        "`benchmarks/case_studies/run.py`; do not edit by hand.",
        "",
        f"Run: {meta.get('date')} on {meta.get('gpu') or meta.get('device')}, commit "
        f"{meta.get('commit')}, runtime {meta.get('runtime')}, torch {meta.get('torch', '—')}; "
        f"{meta.get('warmup')} warm-up run(s), median of {meta.get('repeats')} "
        f"(OpenCL profiling events for MCPL versions, CUDA events for torch"
        + (f"; {meta['timing']}" if meta.get("timing") else "") + ")."
        + (" Every version was built with its sizes as compile-time constants "
           "(`--specialize`)." if meta.get("specialize") else "")
        + (" **Quick mode: small sizes on whatever device was there; figures mean "
           "nothing.**" if meta.get("quick") else "")
        + "".join(f" {kernel} comes from a later run: {m.get('date')} on "
                  f"{m.get('gpu') or m.get('device')}, commit {m.get('commit')} "
                  f"(`run.py --kernels {kernel}`)."
                  for kernel, m in sorted((meta.get("reruns") or {}).items())),
        "",
        f"Bandwidth ceiling: OpenCL copy {_fmt(ceiling_gbps(results))} GB/s, torch copy "
        f"{_fmt((c.get('torch_copy') or {}).get('GBps_read_plus_write'))} GB/s (read + write).",
        "",
        "Columns: *vs reference* = reference time / version time (same work); *of copy "
        "ceiling* = the version's GB/s (compulsory bytes of reference.py) over the copy "
        "bandwidth; *of roofline* = bound time / version time, the bound from the target's "
        "peak flops and bandwidth (source named per table); *× perfect* = speed-up over the "
        "perfect version. A version marked † ran at a smaller size than the table's "
        "(one run at the paper size was predicted to exceed the run's --max-version-s "
        f"{meta.get('max_version_s', '—')} s): its ratios are ratios of rates, each at its "
        "own size. The feedback behind each version is in examples/<kernel>/NOTES.md.",
        "",
        "## Targets of issue 10",
        "",
    ]
    head += [f"* {t}" for t in targets] or ["* nothing measured"]
    head += ["", "## Targets of issue 20", ""]
    head += [f"* {t}" for t in targets20] or ["* nothing measured"]
    head += ["", "## Findings (about the analyses, and versions that are wrong)", ""]
    head += [f"* {f}" for f in findings] or [
        "* No measured version was slower than its predecessor."]
    head.append("")
    return "\n".join(head + body) + "\n"


def merged(results: dict[str, Any], later: dict[str, Any]) -> dict[str, Any]:
    """``results`` with the kernels of ``later`` in place of its own, each noted in
    ``meta["reruns"]`` with the later run's meta."""
    out = {**results, "kernels": {**results.get("kernels", {}), **later.get("kernels", {})}}
    meta = dict(results.get("meta", {}))
    reruns = dict(meta.get("reruns") or {})
    lm = {k: v for k, v in later.get("meta", {}).items() if k != "reruns"}
    for kernel in later.get("kernels", {}):
        reruns[kernel] = lm
    meta["reruns"] = reruns
    out["meta"] = meta
    return out


def _device_name(meta: dict) -> str:
    """The GPU of a run as the title names it: H100 for "NVIDIA H100 80GB HBM3"."""
    name = str(meta.get("gpu") or (meta.get("device") or {}).get("opencl") or "GPU")
    words = [w for w in name.replace(":", " ").split() if w not in ("NVIDIA", "CUDA")]
    return words[0] if words else name


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results", help="results.json of run.py")
    ap.add_argument("--out", default="benchmarks/results",
                    help="folder for REPORT.md; plots go to OUT/case_studies/")
    ap.add_argument("--no-plots", action="store_true")
    ap.add_argument("--rerun", action="append", default=[], metavar="LATER.json",
                    help="a later run's results.json whose kernels replace these")
    ap.add_argument("--save-merged", metavar="PATH", help="write the merged results here")
    args = ap.parse_args(argv)
    results: dict[str, Any] = json.loads(Path(args.results).read_text())
    for later in args.rerun:
        results = merged(results, json.loads(Path(later).read_text()))
    if args.save_merged:
        Path(args.save_merged).write_text(json.dumps(results, indent=1) + "\n")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    plots = None if args.no_plots else out / "case_studies"
    (out / "REPORT.md").write_text(render(results, plots))
    print(f"wrote {out / 'REPORT.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
