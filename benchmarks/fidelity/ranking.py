"""Rank statistics of the fidelity report (report.py, sweep_times.py): Spearman's rank
correlation, with ties for measurements within their run-to-run spread, and which
of two timed runs counts."""

from __future__ import annotations

import math


def _ranks(x: list[float], spread: float = 0.0) -> list[float]:
    """Ranks from 0, ties averaged; with ``spread``, values within that relative
    distance of the smallest of their group tie too (sorted, a group takes each value
    up to (1 + spread) times its first)."""
    order = sorted(range(len(x)), key=lambda i: x[i])
    r = [0.0] * len(x)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and x[order[j + 1]] <= x[order[i]] * (1 + spread):
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2
        i = j + 1
    return r


def best_time(first: float, second: float | None) -> float:
    """The measured time of a version: the best launch of its two timed runs (each the
    best of 10)."""
    return min(first, second) if second else first


def spearman(a: list[float], b: list[float], spread_b: float = 0.0) -> float | None:
    """Rank correlation of ``a`` and ``b``; with ``spread_b``, values of ``b`` within
    that relative spread of each other count as equal (see _ranks)."""
    if len(a) < 3:
        return None
    ra, rb = _ranks(a), _ranks(b, spread_b)
    ma, mb = sum(ra) / len(ra), sum(rb) / len(rb)
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb, strict=True))
    va = math.sqrt(sum((x - ma) ** 2 for x in ra))
    vb = math.sqrt(sum((y - mb) ** 2 for y in rb))
    return cov / (va * vb) if va and vb else None


def run_spread(times: list[tuple[float, float | None]]) -> float | None:
    """The run-to-run spread of a kernel: the largest relative difference between the
    two timed runs (times.json, rerun_times.json) of one of its versions."""
    diffs = [abs(a - b) / min(a, b) for a, b in times if a and b]
    return max(diffs) if diffs else None


def beyond_spread(predicted: list[float], runs: list[tuple[float, float | None]]
                  ) -> tuple[float | None, float | None]:
    """(run-to-run spread, Spearman beyond it) of a kernel's versions: the rank
    correlation of ``predicted`` with the mean of each version's two ``runs``, where
    measured times within the spread of each other count as ties; (None, None) with one
    run."""
    spread = run_spread(runs)
    if spread is None:
        return None, None
    means = [(a + b) / 2 if b else a for a, b in runs]
    return spread, spearman(predicted, means, spread)
