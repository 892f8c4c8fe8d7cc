"""Overlapping windows: neighbouring units that read the same elements through a
sequential loop, so that a unit computing several adjacent results would read
each element once into registers.

A read ``l_in[r, tx + x]`` inside ``foreach (int tx in 32 threads)`` and
``for (int x = 0; x < fw; x++)`` reads, per unit, a window of fw elements that
starts one element after its neighbour's: each element is read by fw units
(stencils, convolutions). A unit that computes k adjacent results along tx
reads k + fw - 1 elements for k results instead of k·fw, and a run of 4 adjacent
elements is one 128-bit load. The reuse pass states the reuse of data in the
slowest memory; this pass is about any memory, shared memory included, where the
loads themselves are the cost.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

import sympy

from mcl.analyses.kernel import Access, Kernel, Loop
from mcl.analyses.reuse import kept_units
from mcl.diagnostics import Diagnostic, Related, info

#: Reads of each element by neighbouring units from which the pass speaks: with 4
#: or more, at most a quarter of a unit's loads bring data its neighbour does not read.
MIN_READS = 4
#: The number of adjacent results per unit that the message works out as an example.
EXAMPLE_RESULTS = 4
#: Windows of more offsets, and units beyond this, are not enumerated.
MAX_OFFSETS = 4096
MAX_UNITS = 64


def _window(ix: sympy.Expr, seq: list[Loop]) -> list[int] | None:
    """The offsets (sorted, distinct) that the sequential loops ``seq`` add to the
    index ``ix`` of one unit, or None if not affine with known integer trips."""
    offsets = {0}
    for lp in seq:
        coef = sympy.diff(ix, lp.symbol)
        step = lp.constant_step     # None: a tree's halving (s >>= 1), no stencil's window
        if not (coef.is_Integer and lp.trips is not None and lp.trips.is_Integer
                and step is not None and sympy.sympify(step).is_Integer) \
                or len(offsets) * int(lp.trips) > MAX_OFFSETS:
            return None
        delta = int(coef) * int(step)
        offsets = {o + delta * t for o in offsets for t in range(int(lp.trips))}
    return sorted(offsets)


def _max_reads(offsets: list[int], stride: int, units: list[int]) -> int:
    """The most of ``units`` (their indices; windows ``stride`` apart) that read one
    element."""
    return max(Counter(stride * u + o for u in units for o in offsets).values())


def _union(offsets: list[int], stride: int, units: list[int]) -> int:
    """Elements that ``units`` (their indices) read together."""
    return len({stride * u + o for u in units for o in offsets})


@dataclass
class WindowFinding:
    access: Access
    dimension: int
    unit: Loop                        # the foreach whose neighbours overlap
    loops: tuple[Loop, ...]           # the sequential loops that make the window
    stride: int                       # elements between neighbouring units' windows
    window: int                       # elements one unit reads in the dimension
    reads: int                        # the most units that read one element
    k: int                            # adjacent units of the example
    k_elements: int                   # elements that k adjacent units read together


class WindowAnalysis:
    """Reads whose per-unit windows overlap between neighbouring units."""

    name = "window"

    def analyze(self, sym: Kernel, num: Kernel | None) -> list[WindowFinding]:
        kern = num if num is not None and len(num.accesses) == len(sym.accesses) else None
        out: list[WindowFinding] = []
        seen: set[tuple[str, str]] = set()
        for i, acc in enumerate(sym.accesses):
            nacc = kern.accesses[i] if kern is not None else acc
            if acc.write or not acc.predictable or (acc.name, acc.text) in seen:
                continue
            finding = self._finding(acc, nacc, sym)
            if finding is not None:
                seen.add((acc.name, acc.text))
                out.append(finding)
        return out

    def _finding(self, acc: Access, nacc: Access, sym: Kernel) -> WindowFinding | None:
        loops = {lp.var: lp for lp in nacc.loops if lp.var}
        best: WindowFinding | None = None
        for d, ix in enumerate(nacc.indices):
            if ix is None:
                continue
            names = {s.name for s in ix.free_symbols}
            units = [loops[n] for n in names if n in loops and loops[n].kind == "foreach"]
            seq = [loops[n] for n in names if n in loops and loops[n].kind != "foreach"]
            if not units or not seq:
                continue
            offsets = _window(ix, seq)
            if offsets is None or len(offsets) < MIN_READS:
                continue
            for unit in units:
                coef = sympy.diff(ix, unit.symbol)
                if not coef.is_Integer or coef == 0 or unit.trips is None \
                        or not unit.trips.is_Integer or int(unit.trips) < 2:
                    continue
                stride = abs(int(coef))
                n = min(int(unit.trips), MAX_UNITS)
                # only the units the ifs around the read let read it are neighbours
                # (`if (w % 8 == 0)`: none within 8 of each other); the ifs of the kernel
                # with symbolic sizes, where a bounds test names its size
                sym_unit = next((lp for lp in acc.loops if lp.var == unit.var), None)
                kept = kept_units(None, sym, acc, sym_unit, n) \
                    if acc.conditions and sym_unit is not None else None
                active = [u for u in range(n) if kept is None or kept[u]]
                if len(active) < 2:
                    continue
                reads = _max_reads(offsets, stride, active)
                if reads < MIN_READS or (best is not None and reads <= best.reads):
                    continue
                k = min(EXAMPLE_RESULTS, len(active))
                sym_loops = {lp.var: lp for lp in acc.loops if lp.var}
                best = WindowFinding(acc, d, sym_loops.get(unit.var, unit),
                                     tuple(sym_loops.get(lp.var, lp) for lp in seq),
                                     stride, len(offsets), reads,
                                     k, _union(offsets, stride, active[:k]))
        return best

    def report(self, findings: list[WindowFinding], hw: Any) -> list[Diagnostic]:
        out = []
        for f in findings:
            acc, unit = f.access, f.unit
            loops = ", ".join(lp.var for lp in f.loops)
            d = info(
                "feedback-window",
                f"{acc.text} is read by up to {f.reads} neighbouring {unit.node.group} "
                f"{unit.var}: each reads {f.window} elements (loop"
                f"{'s' * (len(f.loops) > 1)} {loops}) in dimension {f.dimension + 1}, "
                f"{f.stride} after its neighbour's; a unit computing {f.k} adjacent results "
                f"along {unit.var} would read {f.k_elements} elements for them, "
                f"{f.k_elements / f.k:g} per result instead of {f.window}", acc.node.span,
                f"give each of {unit.label} several adjacent results, read its window once "
                f"into a `reg` array and compute them from there; runs of 4 adjacent "
                f"elements become 128-bit loads",
                [Related(unit.node.span, f"neighbouring {unit.var} read overlapping windows"),
                 *(Related(lp.node.span, f"the window of {acc.text} over {lp.var}")
                   for lp in f.loops)])
            d.data.update(array=acc.name, unit=unit.var, loops=[lp.var for lp in f.loops],
                          dimension=f.dimension + 1, window=f.window, stride=f.stride,
                          reads=f.reads)
            out.append(d)
        return out
