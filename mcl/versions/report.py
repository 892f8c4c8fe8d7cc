"""The report of ``mcl versions --report DIR``: ``index.html`` (one self-contained page:
inline CSS and SVG plots, no script, nothing fetched) and ``report.md`` (with the plots
as SVG files beside it), both with the refinement tree, the verification table, the
timings, the plots and, per step, the feedback diff and the code diff."""

from __future__ import annotations

import html
from pathlib import Path

from mcl.diagnostics import Diagnostic
from mcl.versions import plots
from mcl.versions.api import Result

_SYMBOL = {"ok": "✓", "reference": "≡", "differs": "✗", "error": "!",
           "not-applicable": "–", "skipped": "·"}


def _where(d: Diagnostic) -> str:
    s = d.span
    loc = f"{s.file}:{s.line}:{s.column}: " if s is not None and s.line else \
        (f"{s.file}: " if s is not None else "")
    return f"{loc}{d.severity.label}: {d.message}" + (f" (hint: {d.hint})" if d.hint else "")


def _seconds(s: float | None) -> str:
    if s is None:
        return "—"
    return f"{s * 1e3:.3g} ms" if s < 1 else f"{s:.3g} s"


def at_text(r: Result) -> str:
    """Where the bounds and predictions of ``r``'s timings are: the device's level, to
    which versions above it are translated, or each version's own."""
    level = r.device_level
    if level is not None:
        others = " (the other branches' at their own level, as said)" \
            if any(t.at and t.at != level for t in r.timings.values()) else ""
        return f"at {level}, the level that describes the device (its target file's " \
               f"`describes`), for the versions above it too{others}"
    return "at each version's own level"


def elsewhere(t, level: str | None) -> str:
    """A note for a timing whose bound and prediction are not at the device's level."""
    return f" (bound and prediction at {t.at}, not the device's {level})" \
        if level is not None and t.at and t.at != level else ""


def _summary(r: Result) -> str:
    vs, ver = r.versions, r.verification
    if ver is None:
        return f"No versions found in {vs.source}."
    verdicts = [ver.verdict(v.name) for v in vs.versions]
    good = sum(v.startswith("consistent") for v in verdicts)
    bad = verdicts.count("INCONSISTENT")
    n = len(vs.versions)
    of = f"of `{vs.kernel}`" if vs.kernel else "and no kernel among them"
    return (f"{n} version{'s' * (n != 1)} {of}; verified against {ver.against} on "
            f"{ver.device} (seed {ver.seed}) at {len(ver.size_sets)} size sets: {good} "
            f"consistent, {bad} inconsistent, {len(verdicts) - good - bad} not verified. "
            f"{len(r.problems)} problems. Took {r.seconds:.1f} s.")


def _tree_lines(r: Result) -> list[tuple[int, str, str]]:
    """(depth, name, description) in tree order."""
    out = []
    ver = r.verification
    for v in r.versions.versions:
        bits = [f"level {v.level or '?'}"]
        if ver and v.name in ver.targets:
            bits.append(f"run as {ver.targets[v.name]}")
        if ver:
            bits.append(ver.verdict(v.name))
        if v.commit:
            bits.append(f"{v.commit.get('date', '')} {v.commit.get('subject', '')}".strip())
        if v.why_parent == "refines comment":
            bits.append("parent named by // refines:")
        if v.other_kernel is not None:
            bits.append(f"another kernel ('{v.other_kernel}'): not in the tree")
        out.append((r.depth(v.name), v.name, ", ".join(bits)))
    return out


def _plots(r: Result) -> dict[str, str]:
    rows = list(r.timings.values())
    sizes = ", ".join(f"{k}={v}" for k, v in r.timing_sizes.items())
    out = {}
    t = plots.time_plot(rows, sizes)
    if t:
        out["time.svg"] = t
    rf = plots.roofline_plot(rows)
    if rf:
        out["roofline.svg"] = rf
    return out


# --------------------------------------------------------------------------- Markdown


def markdown(r: Result, svgs: dict[str, str]) -> str:
    vs, ver = r.versions, r.verification
    title = f"Versions of `{vs.kernel}`" if vs.kernel else "Versions"
    md = [f"# {title} ({vs.source})", "", _summary(r), ""]
    if r.problems:
        md += ["## Problems", ""] + [f"- `{_where(d)}`" for d in r.problems] + [""]
    md += ["## Refinement tree", ""]
    md += [f"{'  ' * depth}- **{name}**: {text}" for depth, name, text in _tree_lines(r)]
    if ver and ver.size_sets:
        md += ["", "## Verification", "",
               f"Against {ver.against}; ✓ agrees, ✗ differs, ! failed to run, – not applicable,"
               " · skipped, ≡ the outputs compared with.", ""]
        head = ["version", "target", *[f"{s.label}: {s.text()}" for s in ver.size_sets],
                "verdict"]
        md += ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
        for v in vs.versions:
            checks = ver.checks.get(v.name) or []
            cells = [f"{_SYMBOL.get(c.status, c.status)} {c.detail}".strip().replace("|", "\\|")
                     for c in checks] or ["left out"] * len(ver.size_sets)
            md.append(f"| {v.name} | {ver.targets.get(v.name, '—')} | " + " | ".join(cells)
                      + f" | {ver.verdict(v.name)} |")
    if r.timings:
        sizes = ", ".join(f"{k}={v}" for k, v in r.timing_sizes.items())
        md += ["", "## Time and roofline", "", f"At {sizes}; the roofline bound and the time "
               f"mcl feedback predicts: {at_text(r)}.", "",
               "| version | level | roofline bound | predicted (cold) | measured "
               f"({r.launches}) | note |",
               "| --- | --- | --- | --- | --- | --- |"]
        dev = r.device_level
        md += [f"| {t.version} | {t.level or '?'} | {_seconds(t.bound_s)} | "
               f"{_seconds(t.predicted_s)} "
               f"| {_seconds(t.measured_s)} | {t.note}{elsewhere(t, dev)} |"
               for t in r.timings.values()]
    if svgs:
        md += ["", "## Plots", ""] + [f"![{name}]({name})" for name in svgs]
    if r.steps:
        md += ["", "## Steps"]
    for s in r.steps:
        md += ["", f"### {s.parent} → {s.child}", "",
               f"{s.why}; +{s.added_lines} −{s.removed_lines} lines; "
               f"{s.kept} feedback messages unchanged, {len(s.changed)} with other figures.",
               ""]
        md += [f"- disappeared: {f.message} (`{f.code}`)" for f in s.disappeared]
        md += [f"- appeared: {f.message} (`{f.code}`, line {f.line})" for f in s.appeared]
        md += [f"- other figures: {b.message} (`{b.code}`, line {b.line}; was: {a.message})"
               for a, b in s.changed]
        if s.diff:
            md += ["", "```diff", s.diff.rstrip("\n"), "```"]
    return "\n".join(md) + "\n"


# --------------------------------------------------------------------------- HTML

_CSS = """
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:2em auto;max-width:1200px;
padding:0 1em;color:#1d1d1f;background:#fff}
h1{font-size:1.6em}h2{border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:1.6em}
table{border-collapse:collapse;font-size:.85em;margin:.5em 0}
td,th{border:1px solid #ddd;padding:.25em .5em;vertical-align:top;text-align:left}
th{background:#f4f4f6}.ok{background:#e7f6e7}.differs{background:#fde2e1;font-weight:600}
.error{background:#fff1d6}.not-applicable,.skipped{color:#777}.reference{background:#e6efff}
ul.tree{list-style:none;padding-left:1em}ul.tree li{margin:.15em 0}
.problems li{font-family:ui-monospace,monospace;font-size:.85em;color:#9a3412}
pre.diff{background:#f8f8fa;padding:.6em;overflow-x:auto;font-size:.8em}
.add{color:#166534;background:#ecfdf0}.del{color:#991b1b;background:#fef1f1}.hunk{color:#6b21a8}
.gone{color:#166534}.came{color:#9a3412}.figures{color:#555}.plots{display:flex;flex-wrap:wrap;gap:1em}
.plots svg{max-width:100%;height:auto}
"""


def _e(text: object) -> str:
    return html.escape(str(text))


def _diff_html(diff: str) -> str:
    out = []
    for line in diff.splitlines():
        cls = "hunk" if line.startswith("@@") else "add" if line.startswith("+") else \
            "del" if line.startswith("-") else ""
        out.append(f'<span class="{cls}">{_e(line)}</span>' if cls else _e(line))
    return '<pre class="diff">' + "\n".join(out) + "</pre>"


def page(r: Result, svgs: dict[str, str]) -> str:
    vs, ver = r.versions, r.verification
    h = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
         f"<title>Versions{' of ' + _e(vs.kernel) if vs.kernel else ''}</title>"
         f"<style>{_CSS}</style></head><body>",
         f"<h1>Versions{f' of <code>{_e(vs.kernel)}</code>' if vs.kernel else ''} "
         f"<small>({_e(vs.source)})</small></h1>",
         f"<p>{_e(_summary(r))}</p>"]
    if r.problems:
        h += ["<h2>Problems</h2>", '<ul class="problems">']
        h += [f"<li>{_e(_where(d))}</li>" for d in r.problems] + ["</ul>"]
    h += ["<h2>Refinement tree</h2>", '<ul class="tree">']
    for depth, name, text in _tree_lines(r):
        pad = "&nbsp;" * 4 * depth + ("└ " if depth else "")
        h.append(f"<li>{pad}<b>{_e(name)}</b>: {_e(text)}</li>")
    h.append("</ul>")
    if ver and ver.size_sets:
        h += ["<h2>Verification</h2>",
              f"<p>Against {_e(ver.against)}; ✓ agrees, ✗ differs, ! failed to run, "
              "– not applicable, · skipped, ≡ the outputs compared with.</p>",
              "<table><tr><th>version</th><th>target</th>"]
        h += [f"<th>{_e(s.label)}<br><small>{_e(s.text())}</small></th>" for s in ver.size_sets]
        h.append("<th>verdict</th></tr>")
        for v in vs.versions:
            checks = ver.checks.get(v.name) or []
            h.append(f"<tr><td>{_e(v.name)}</td><td>{_e(ver.targets.get(v.name, '—'))}</td>")
            if not checks:
                h.append(f'<td colspan="{len(ver.size_sets)}" class="error">left out</td>')
            for c in checks:
                h.append(f'<td class="{_e(c.status)}">{_SYMBOL.get(c.status, "")} '
                         f"<small>{_e(c.detail)}</small></td>")
            h.append(f"<td>{_e(ver.verdict(v.name))}</td></tr>")
        h.append("</table>")
    if r.timings:
        sizes = ", ".join(f"{k}={v}" for k, v in r.timing_sizes.items())
        h += ["<h2>Time and roofline</h2>", f"<p>At {_e(sizes)}; the roofline bound and the "
              f"time mcl feedback predicts: {_e(at_text(r))}.</p>",
              "<table><tr><th>version</th><th>level</th><th>roofline bound</th><th>predicted"
              f" (cold)</th><th>measured ({r.launches})</th><th>note</th></tr>"]
        dev = r.device_level
        h += [f"<tr><td>{_e(t.version)}</td><td>{_e(t.level or '?')}</td>"
              f"<td>{_seconds(t.bound_s)}</td>"
              f"<td>{_seconds(t.predicted_s)}</td><td>{_seconds(t.measured_s)}</td>"
              f"<td>{_e(t.note + elsewhere(t, dev))}</td></tr>" for t in r.timings.values()]
        h.append("</table>")
    if svgs:
        h += ["<h2>Plots</h2>", '<div class="plots">']
        h += [f'<figure id="{_e(name[:-4])}">{svg}</figure>' for name, svg in svgs.items()]
        h.append("</div>")
    if r.steps:
        h.append("<h2>Steps</h2>")
    for s in r.steps:
        h += [f"<h3>{_e(s.parent)} → {_e(s.child)}</h3>",
              f"<p>{_e(s.why)}; +{s.added_lines} −{s.removed_lines} lines; {s.kept} feedback "
              f"messages unchanged, {len(s.changed)} with other figures.</p><ul>"]
        h += [f'<li class="gone">disappeared: {_e(f.message)} <small>({_e(f.code)})</small></li>'
              for f in s.disappeared]
        h += [f'<li class="came">appeared: {_e(f.message)} <small>({_e(f.code)}, line '
              f"{f.line})</small></li>" for f in s.appeared]
        h += [f'<li class="figures">other figures: {_e(b.message)} <small>({_e(b.code)}, '
              f"line {b.line}; was: {_e(a.message)})</small></li>" for a, b in s.changed]
        h.append("</ul>")
        if s.diff:
            h.append(f"<details><summary>code diff</summary>{_diff_html(s.diff)}</details>")
    h.append("</body></html>")
    return "\n".join(h) + "\n"


def write_report(r: Result, folder: str | Path) -> list[Path]:
    """Write index.html, report.md and the plots' SVG files into ``folder``."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    svgs = _plots(r)
    written = []
    for name, svg in svgs.items():
        (out / name).write_text(svg, encoding="utf-8")
        written.append(out / name)
    (out / "report.md").write_text(markdown(r, svgs), encoding="utf-8")
    (out / "index.html").write_text(page(r, svgs), encoding="utf-8")
    return [out / "index.html", out / "report.md", *written]
