"""The report's plots as SVG text (matplotlib, no display): time per version against
the roofline bound of its level, and a roofline chart with one point per version."""

from __future__ import annotations

import io

from mcl.versions.timing import Timing


def _pyplot():
    import matplotlib
    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "mcl-versions"   # the same plot, the same file
    matplotlib.rcParams["svg.fonttype"] = "none"   # text stays text: smaller, searchable
    import matplotlib.pyplot as plt
    return plt


def _svg(fig) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight")
    _pyplot().close(fig)
    text = buf.getvalue()
    return text[text.index("<svg"):]    # without the XML prologue: it is embedded in HTML


def time_plot(timings: list[Timing], sizes_text: str) -> str | None:
    """Measured time (where a GPU ran them), the analyses' predicted time and the
    roofline bound per version, on a log scale."""
    rows = [t for t in timings if t.bound_s or t.measured_s]
    if not rows:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(max(6.0, 0.45 * len(rows) + 2), 4.2))
    x = list(range(len(rows)))
    ax.plot(x, [t.bound_s or float("nan") for t in rows], "_", markersize=18, mew=3,
            color="#2b7a0b", label="roofline bound of the level")
    ax.plot(x, [t.predicted_s or float("nan") for t in rows], "o", color="#1f5fa8",
            label="predicted (mcl feedback)")
    if any(t.measured_s for t in rows):
        ax.plot(x, [t.measured_s or float("nan") for t in rows], "D", color="#c2410c",
                label="measured (best of N)")
    ax.set_yscale("log")
    ax.set_xticks(x, [t.version for t in rows], rotation=60, ha="right")
    ax.set_ylabel("seconds")
    ax.set_title(f"Time per version ({sizes_text})")
    ax.grid(True, which="both", axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    return _svg(fig)


def roofline_plot(timings: list[Timing]) -> str | None:
    """The roof of every level (peak and bandwidth of its description) and a point per
    version at its arithmetic intensity: measured performance where timed, else the
    performance the analyses predict."""
    rows = [t for t in timings if t.intensity and t.peak_flops and t.bandwidth]
    if not rows:
        return None
    plt = _pyplot()
    import numpy as np

    fig, ax = plt.subplots(figsize=(7.0, 4.8))
    lo = min(min(t.intensity for t in rows), 0.05) / 2
    hi = max(max(t.best_intensity or t.intensity for t in rows), 100) * 2
    xs = np.logspace(np.log10(lo), np.log10(hi), 200)
    roofs = {t.level: (t.peak_flops, t.bandwidth) for t in rows}
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, (level, (peak, bw)) in enumerate(roofs.items()):
        ax.plot(xs, np.minimum(peak, xs * bw) / 1e9, "-", color=colors[i % len(colors)],
                alpha=0.6, label=f"{level}: {peak / 1e12:.3g} TFLOP/s, {bw / 1e9:.0f} GB/s")
    for t in rows:
        i = list(roofs).index(t.level)
        perf = t.measured_flops or (t.flops / t.predicted_s if t.predicted_s else None)
        if perf is None:
            continue
        marker = "D" if t.measured_flops else "o"
        ax.plot([t.intensity], [perf / 1e9], marker, color=colors[i % len(colors)])
        ax.annotate(t.version, (t.intensity, perf / 1e9), fontsize=7,
                    xytext=(4, 3), textcoords="offset points")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (flop per byte of memory traffic)")
    ax.set_ylabel("GFLOP/s")
    measured = any(t.measured_flops for t in rows)
    ax.set_title("Roofline: " + ("measured (◆) and predicted (●)" if measured
                                 else "predicted performance") + " per version")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    return _svg(fig)
