"""Shared-memory accesses whose words the data choose (a histogram's
``lhist[data[i]]``): how often a warp's access takes the banks depends on the values,
from once (the lanes in different banks, or at one word: atomic updates too) to once
per lane (different words of one bank). The feedback says so, with how often words
drawn at random would take them, and the time model counts that
(:func:`random_passes`); where the data cannot move a lane to another bank (each lane
its own copy, in its own bank) it says that the access takes them once whatever the
data. Measured on the H200 (benchmarks/opencl/shared_atomic_probe.py,
benchmarks/results/perf/h200_2026-11-30/shared_atomics/): an atomic update takes about
a cycle per distinct word of the busiest bank, and half a cycle beside.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import sympy

from mcl.analyses.banks import bank_word, banked_memory
from mcl.analyses.functions import KernelView
from mcl.analyses.kernel import Access, Loop
from mcl.analyses.kernel_syntax import flat_offset
from mcl.analyses.warp_lanes import lane_offsets, lockstep_loop
from mcl.diagnostics import Diagnostic, info


@dataclass(frozen=True)
class Chosen:
    """An access to banked memory whose lanes' words the data choose."""

    sacc: Access                 # the symbolic access (messages)
    nacc: Access                 # its numeric twin
    sources: list[str]           # what the data read (mcl.analyses.datadep.lane_data)
    mem: Any                     # the banked memory
    #: the words the data choose among, and the passes of the banks a warp takes where
    #: they are drawn at random (None where the layout has no values)
    words: int | None
    passes: float | None
    #: whether the data cannot move a lane to another bank (:func:`_banks_fixed`)
    fixed: bool


def data_chosen_messages(view: KernelView, lane: Loop, width: int) -> list[Diagnostic]:
    """The bank-conflict messages of the accesses whose words the data choose."""
    out: list[Diagnostic] = []
    seen: set[str] = set()
    for c in data_chosen(view):
        if c.sacc.text in seen:
            continue
        seen.add(c.sacc.text)
        sacc, sources, mem = c.sacc, c.sources, c.mem
        if c.fixed:
            d = info("feedback-bank-conflicts",
                     f"{sacc.text}: the data choose the lanes' words ({', '.join(sources)}) "
                     f"but not their banks: a warp's {width} lanes always fall in "
                     f"different banks of {mem.name}, and its access takes them once "
                     "whatever the data", sacc.node.span)
            d.data.update(array=sacc.name, chosen_by=sources, random_passes=c.passes)
            out.append(d)
            continue
        even = c.passes
        d = info("feedback-bank-conflicts",
                 f"{sacc.text}: the lanes' words come from data that differ between them "
                 f"({', '.join(sources)}): a warp's access takes the banks of {mem.name} once "
                 f"where its lanes fall in different banks or at one word, up to {width} "
                 "times where they fall at different words of one bank, as the data fall"
                 + (f"; words drawn at random from the {c.words} the data choose among, "
                    f"about {even:.1f} times" if even else ""), sacc.node.span,
                 f"the predicted time (feedback-time) counts it {'so' if even else 'once'}: "
                 "data in which a few values are frequent, or that put them in one bank, "
                 "take longer; data whose neighbouring values are close take the banks "
                 "fewer times" + _copies_help(sacc.name, c.words, c.nacc.element_bytes, width))
        d.data.update(array=sacc.name, chosen_by=sources, random_passes=even)
        out.append(d)
    return out


def _copies_help(name: str, words: int | None, element_bytes: int, width: int) -> str:
    """The remedy that takes the data out of the banks: a copy of the words per lane,
    interleaved so that lane t's copy lies in bank t (histogram hopper_v2), with what
    it costs."""
    if not words:
        return ""
    size = width * words * element_bytes
    amount = f"{size / 1024:.0f} kB" if size >= 1024 else f"{size} B"
    return (f". A copy of {name}'s {words} words per lane, interleaved so that lane t's "
            f"copy lies in bank t ({name}[word, lane]: {width} times the words, {amount}), "
            "takes the banks once whatever the data, the copies summed at the end")


def _chosen_layout(view: KernelView, nacc: Access, lane: Loop, width: int
                   ) -> tuple[tuple[int, ...], tuple[tuple[int, int], ...]] | None:
    """Where the lanes of the numeric access ``nacc`` land as the data choose: the
    element offset of each lane with the indices the data choose at 0, and the
    (extent, stride in elements) of each dimension whose index the data choose
    (histogram hopper_v2's ``l_hist[v[u], c]``: lane t at c = t, and 256 buckets 32
    elements apart, so every lane keeps its bank); None where a figure has no value."""
    t = nacc.symbol.type if nacc.symbol is not None else None
    if t is None or not any(ix is None for ix in nacc.indices):
        return None
    zero, sizes = sympy.Integer(0), list(nacc.sizes)
    known = flat_offset(t, [zero if ix is None else ix for ix in nacc.indices], sizes)
    base = lane_offsets(view, replace(nacc, offset=known), lane, width) \
        if known is not None else None
    if base is None:
        return None
    dims = []
    for pos, (ix, size) in enumerate(zip(nacc.indices, sizes, strict=True)):
        if ix is None:
            unit = [sympy.Integer(int(p == pos)) for p in range(len(sizes))]
            stride, extent = view.value(flat_offset(t, unit, sizes)), view.value(size)
            if stride is None or not extent:
                return None
            dims.append((extent, stride))
    return tuple(base), tuple(dims)


def _banks_fixed(layout: tuple, element_bytes: int, mem: Any, width: int) -> bool:
    """Whether the data cannot move a lane to another bank (every dimension they choose
    steps a whole number of bank rows) and the lanes' banks differ."""
    base, dims = layout
    word, banks = bank_word(mem), mem.nr_banks
    if any(stride * element_bytes % (word * banks) for _, stride in dims):
        return False
    return len({off * element_bytes // word % banks for off in base}) == width


@functools.cache
def random_passes_of(base: tuple[int, ...], dims: tuple[tuple[int, int], ...],
                     element_bytes: int, word: int, banks: int) -> float:
    """How many times a warp's access takes the banks, on average, where the data
    choose each lane's index in each of ``dims`` (extent, stride in elements) at random,
    beside the lane's offset in ``base``: the most distinct words one bank holds for
    it (lanes at one word share it). By sampling 4096 warps (a fixed seed: the same
    figure every time)."""
    rng = np.random.default_rng(0)
    elements = np.tile(np.array(base, dtype=np.int64), (4096, 1))
    for extent, stride in dims:
        elements += rng.integers(0, extent, elements.shape) * stride
    words = elements * element_bytes // word
    most = np.zeros(len(words))
    for b in range(banks):
        mine = np.where(words % banks == b, words, -1)
        mine.sort(axis=1)
        distinct = ((mine[:, 1:] != mine[:, :-1]) & (mine[:, 1:] >= 0)).sum(axis=1) \
            + (mine[:, 0] >= 0)
        most = np.maximum(most, distinct)
    return float(most.mean())


def uniform_passes(words: int, banks: int, width: int) -> float:
    """:func:`random_passes_of` for ``width`` lanes each picking one of ``words`` words
    at random: 256 words over 32 banks, as a histogram of bytes in shared memory has
    them, 3.15; measured on the H200 (benchmarks/opencl/shared_atomic_probe.py) 3.5
    for atomic updates, with the loads of the bins beside them."""
    return random_passes_of((0,) * width, ((words, 1),), 4, 4, banks)


def random_passes(view: KernelView) -> dict[int, float]:
    """By ``id`` of the symbolic access, the times a warp's access whose words the data
    choose takes the banks where they are drawn at random, for those whose layout has
    values."""
    return {id(c.sacc): c.passes for c in data_chosen(view) if c.passes is not None}


def data_chosen(view: KernelView) -> list[Chosen]:
    """The accesses to banked memory whose lanes' words data choose (``lhist[data[i]]``),
    with the data that choose them (:func:`mcl.analyses.datadep.lane_data`) and where
    their lanes land (:func:`_chosen_layout`): their bank conflicts are the data's, and
    the time model counts them as words drawn at random would take the banks
    (:func:`random_passes_of`). Kept in the view's memo: the bank-conflict messages, the
    shared-memory part and the time message ask it."""
    from mcl.analyses.datadep import data_kernel, lane_data
    if "data_chosen" in view.memo:
        return view.memo["data_chosen"]
    out: list[Chosen] = []
    view.memo["data_chosen"] = out
    found = lockstep_loop(view)
    if found is None:
        return out
    lane, width = found
    dk, made = None, False
    for sacc, nacc in view.accesses():
        mem = banked_memory(view.hardware, sacc)
        if mem is None or lane not in nacc.loops \
                or lane_offsets(view, nacc, lane, width) is not None:
            continue
        if not made:
            dk, made = data_kernel(view.num), True
        sources = lane_data(dk, nacc, lane)
        if not sources:
            continue
        layout = _chosen_layout(view, nacc, lane, width)
        words = math.prod(extent for extent, _ in layout[1]) if layout else None
        passes = random_passes_of(*layout, nacc.element_bytes, bank_word(mem),
                                  mem.nr_banks) if layout else None
        fixed = layout is not None and _banks_fixed(layout, nacc.element_bytes, mem, width)
        out.append(Chosen(sacc, nacc, sources, mem, words, passes, fixed))
    return out
