"""The sectors a load takes from the last-level cache when the warps of a block share
what they read through the first-level cache of their holder (the L1 of an SM).

A warp's request fetches the sectors its lanes touch, but a sector another warp of
the same block fetched a moment earlier is still in the first-level cache: the
block fetches the union of its warps' sectors. So does a warp that comes back to a
sector in a later iteration of the loop around the load, while the sectors the
block's resident neighbours fetched in between leave room for it. The model:

* the *step* loop is the outermost sequential loop around the load inside the block;
  in one of its iterations, the block's threads and every loop inside it (the
  elements each thread reads in that iteration) fetch the union of their sectors;
* an iteration after the first fetches only the sectors the previous one did not
  touch, where the lines of one iteration of every load of the kernel, for all the
  blocks a holder keeps resident, fit in the first-level cache next to their shared
  memory; where they do not, the part that does not fit is fetched again;
* where the lines of all of a block's iterations fit in its room, each sector is
  fetched once per block (a sliding window of rows that the warps read in turn);
* blocks fetch on their own, but data that every block reads the same (a vector all
  rows are multiplied with, also behind a guard on the block's row) once per holder,
  where it fits in its first-level cache;
* a gather (lanes' addresses that data choose) fetches a sector per lane less the
  share of its array that the holder's first-level cache holds.

ncu's L2 read sectors on the H100 (benchmarks/fidelity): matmul hopper_v5's tiles,
whose 128-bit rows two warp requests each half fill, are fetched once (the warp
model counted each sector twice); gesummv hopper_v1's x, read by the 8 warps of a
block, once per block.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import sympy

from mcl.analyses.banks import is_block_loop, loop_values
from mcl.analyses.timing_rates import instances

if TYPE_CHECKING:
    from mcl.analyses.functions import KernelView
    from mcl.analyses.kernel import Access, Loop

#: the most (thread, inner iteration) pairs enumerated for one iteration of the step
#: loop, and the iterations of the step loop sampled for the sectors each adds
_MOST_POINTS = 1 << 20
_SAMPLES = 9
#: the most iterations of a step loop enumerated for a block's whole footprint
_WHOLE = 64
#: the most block indices a condition naming a block loop is evaluated at
_BLOCKS = 64


@dataclass(frozen=True)
class BlockLoad:
    """What one block's threads fetch for a load, per iteration of its step loop."""

    first: int          # sectors of the first iteration
    new: float          # sectors an iteration adds to the previous one's (average)
    lines: float        # first-level cache lines of one iteration (its footprint)
    iterations: float   # iterations of the step loop (1 without one)
    blocks: float       # blocks of the grid
    same: bool = False  # every block reads the same elements
    #: sectors and lines of all the iterations together (None: too many to enumerate)
    life: int | None = None
    life_lines: int | None = None

    def sectors(self, size: int, kept: float = 1.0, whole: bool = False,
                holders: int | None = None, capacity: float | None = None) -> float:
        """Sectors of ``size`` bytes over the kernel. ``kept``: the part of an
        iteration's lines still cached at the next; ``whole``: the block's lines of
        all its iterations stay cached (each sector is fetched once per block). Where
        every block reads the same elements and they fit in the ``capacity`` bytes of
        one of the ``holders``' first-level caches, each holder fetches them once for
        all its blocks."""
        if whole and self.life is not None:
            per_block = float(self.life)
        else:
            again = self.new + (1.0 - kept) * (self.first - self.new)
            per_block = self.first + (self.iterations - 1) * again
        blocks = self.blocks
        if self.same and holders and capacity and per_block * size <= capacity:
            blocks = min(blocks, holders)
        return blocks * per_block


def kernel_sectors(view: KernelView, found: list[tuple[list, BlockLoad]], size: int,
                   line: int, l1, occ) -> float:
    """The sectors of the block loads ``found`` over the kernel: the room a resident
    block has in the first-level cache ``l1`` (with the occupancy ``occ``) decides
    whether an iteration's lines, or all of a block's, stay cached."""
    holders = instances(view.hardware, l1)
    room = _room(view, occ, l1)
    per_iteration = sum(b.lines for _, b in found) * line
    whole = all(b.life_lines is not None for _, b in found) and room is not None and \
        sum(b.life_lines for _, b in found) * line <= room
    kept = 1.0 if room is None or per_iteration <= room else room / per_iteration
    # what every block reads the same stays in a holder's cache for all its blocks
    held = room * resident_blocks(view, occ) if room is not None else None
    return sum(b.sectors(size, kept, whole, holders, held) for _, b in found)



def is_gather(view: KernelView, nacc: Access, lane: Loop) -> bool:
    """Whether the lanes' addresses of ``nacc`` come from data that differ between
    them (``x[colIdx[k]]``, mcl.analyses.datadep)."""
    from mcl.analyses.datadep import data_kernel

    dk = data_kernel(view.num)
    dacc = dk.access_like(nacc) if dk is not None else None
    return dacc is not None and dacc.offset is not None and any(
        x in dk.placeholders and lane.var in dk.placeholders[x].depends
        for x in dacc.offset.free_symbols)


def gather_sectors(view: KernelView, nacc: Access, l1, occ, sectors: float,
                   size: int, kept: float = 0.0) -> float:
    """The part of the ``sectors`` the gathers of ``nacc``'s array touch (a sector per
    lane) that the first-level caches do not hold: with indices spread over the array,
    the share of its bytes beyond the room of a holder's resident blocks (with the
    occupancy ``occ``) less the ``kept`` bytes a block's other loads hold there for
    their next iterations, and at least the array once per holder (an estimate). On the
    H100 spmv_csr's x (512 kB) in the about 220 kB of an SM's L1: ncu's L2 read
    sectors 245 MB for hopper_v1, 359 MB counting a sector per lane; spmv_csr perfect's
    1024 lanes a block, each reading its own rows of values and colIdx, keep 256 kB
    of lines and leave x none (302 MB measured on the H200, 211 predicted without)."""
    elements = 1
    for n in nacc.sizes:
        v = view.value(n) if n is not None else None
        if v is None:
            return sectors
        elements *= v
    room = _room(view, occ, l1) if l1 is not None else None
    holders = instances(view.hardware, l1) if l1 is not None else None
    array = elements * nacc.element_bytes
    if room is None or not array or not holders:
        return sectors
    held = min(1.0, max(0.0, room - kept) * resident_blocks(view, occ) / array)
    return max(sectors * (1.0 - held), min(sectors, holders * array / size))


def resident_blocks(view: KernelView, occ) -> int:
    """Blocks a holder keeps at once: as many as fit, fewer in a grid of few blocks."""
    from mcl.analyses.traffic import grid_units

    blocks, holders = grid_units(view, occ.unit), instances(view.hardware, occ.holder)
    if blocks is not None and blocks <= 0:
        return 0       # a grid of no blocks (or a count below zero: the kernel is wrong)
    return min(occ.resident, -(-blocks // holders)) if blocks and holders else occ.resident


def _room(view: KernelView, occ, l1) -> float | None:
    """Bytes of the first-level cache per resident block: its capacity less what the
    resident blocks take of the on-chip memory it shares (at least their shared
    memory and what the system keeps per block); None without an occupancy or a
    block."""
    if occ is None or not occ.resident:
        return None
    hw = view.hardware
    resident = resident_blocks(view, occ)
    if resident <= 0:
        return None
    unit = next((g.unit for g in hw.par_groups()
                 if g.unit is not None and g.unit.name == occ.unit), None)
    taken = 0.0
    for ms in (unit.memory_spaces if unit is not None else []):
        used = view.size_memory_space(ms.name) or 0
        for m in hw.memories_holding(ms.name):
            if isinstance(m.capacity, int | float) and m is not l1 and \
                    hw.position(m) is not None and hw.position(l1) is not None and \
                    hw.position(m).ancestors == hw.position(l1).ancestors:
                taken += m.allocated(used + m.reserved)
    return max(0.0, float(l1.capacity) - resident * taken) / resident


def first_level_cache(hw, space: str):
    """The smallest cache holding ``space`` with more than one instance (an SM's L1),
    or None."""
    caches = [c for c in hw.caches_for(space)
              if isinstance(c.capacity, int | float) and (instances(hw, c) or 0) > 1]
    return min(caches, key=lambda c: c.capacity) if caches else None


def block_load(view: KernelView, loads: list[Access], lane: Loop, size: int,
               line: int) -> BlockLoad | None:
    """The block model of the module docstring for the (numeric) ``loads`` of one
    array inside the same loops (their sectors are one set: the second of
    ``x[j]; ... x[j]`` finds the first's), with sectors of ``size`` and first-level
    lines of ``line`` bytes; None where a loop's values or an offset cannot be
    evaluated (the caller falls back on a warp's)."""
    nacc = loads[0]
    if any(a.offset is None for a in loads) or lane not in nacc.loops:
        return None
    loops = list(nacc.loops)
    if any(lp.var is None for lp in loops):
        return None
    outer = [lp for lp in loops if is_block_loop(view, lp, lane)]
    step = next((lp for lp in loops if lp.kind != "foreach"), None)
    inner = [lp for lp in loops if lp not in outer and lp is not step]
    blocks = 1.0
    fixed: dict = {}
    for lp in outer:
        trips = view.value(lp.trips) if lp.trips is not None else None
        start = view.value(lp.start) if lp.start is not None else 0
        if trips is None or start is None:
            return None
        blocks *= trips
        fixed[lp.symbol] = start
    ranges = [loop_range(view, lp, _MOST_POINTS) for lp in [*inner, step] if lp is not None]
    if any(r is None for r in ranges):
        return None
    values = [r.values for r in ranges[:len(inner)]]
    if math.prod(len(v) for v in values) > _MOST_POINTS:
        return None
    if step is not None:
        iterations = float(len(ranges[-1].values))
        points = math.prod(len(v) for v in values)
        # all of a short loop's iterations, for the block's whole footprint
        every = iterations <= _WHOLE and points * iterations <= _MOST_POINTS
        samples = ranges[-1].values if every else ranges[-1].values[:_SAMPLES]
    else:
        iterations, samples, every = 1.0, [0], True
    # a loop that starts where a thread does (`e = tid; e < n; e += 256`) runs over
    # an index of its own; the variable is its start plus the steps taken
    for r in ranges:
        fixed.update(r.substitution)
    varying = [r.symbol for r in ranges]
    compiled = []
    for a in loads:
        offset = grid_function(a.offset, fixed, varying)
        if offset is None:
            return None
        # a condition that cannot be compiled lets the access run, as KernelView.runs
        conds = [f for c in [*(c.expr for c in a.conditions if c.expr is not None),
                             *(r.bound for r in ranges if r.bound is not None)]
                 if (f := grid_function(c, fixed, varying)) is not None]
        compiled.append((offset, conds))
    within = {k: v for r in ranges for k, v in r.substitution.items()}
    block_symbols = {lp.symbol for lp in outer}
    grid = [g.ravel() for g in np.meshgrid(*[np.asarray(v, dtype=np.int64)
                                               for v in values], indexing="ij")]
    same = not any(block_symbols & _substituted(a.offset, within).free_symbols
                   for a in loads) and _reads_alike(
        view, loads, [offset for offset, _ in compiled], outer, within, varying, grid,
        samples, step is not None)
    sets, lines = [], []
    eb = nacc.element_bytes
    for s in samples:
        args = [*grid, np.full_like(grid[0], s)] if step is not None else grid
        elements = _elements(compiled, args)
        if elements is None:
            return None
        byte = elements * eb
        sets.append(np.unique(byte // size))
        lines.append(len(np.unique(byte // line)))
    first = len(sets[0])
    pairs = list(zip(sets, sets[1:], strict=False))[:_SAMPLES - 1]
    new = sum(len(np.setdiff1d(b, a, assume_unique=True)) for a, b in pairs) / len(pairs) \
        if pairs else float(first)
    life = life_lines = None
    if every:
        union = np.unique(np.concatenate(sets))
        life, life_lines = len(union), len(np.unique(union * size // line))
    return BlockLoad(first, new, sum(lines[:_SAMPLES]) / len(lines[:_SAMPLES]), iterations,
                     blocks, same, life, life_lines)


def _elements(compiled: list, args: list, block: list | None = None,
              strict: bool = False) -> np.ndarray | None:
    """The elements the loads ``compiled`` ((offset, conditions) as numpy functions)
    read at the grid points ``args`` (``block``: the block loops' values, arguments of
    the conditions after ``args``); None where an offset cannot be evaluated. A
    condition that cannot be evaluated lets the access run, as KernelView.runs does,
    or, where ``strict``, gives None."""
    out = []
    for offset, conds in compiled:
        offs = on_grid(offset, args)
        if offs is None:
            return None
        mask = np.ones(offs.shape, dtype=bool)
        for c in conds:
            ok = on_grid(c, args + block if block else args, boolean=True)
            if ok is None:
                if strict:
                    return None
                continue
            mask &= ok
        out.append(np.floor(offs[mask]).astype(np.int64))
    return np.concatenate(out)


def _reads_alike(view: KernelView, loads: list[Access], offsets: list, outer: list,
                 within: dict, varying: list, grid: list, samples: list,
                 stepped: bool) -> bool:
    """Whether every block that reads anything with the ``loads`` (whose ``offsets``,
    compiled as numpy functions of ``varying``, name no block loop) reads the same
    elements: where a condition names a block loop (a row guard such as ``if (i <
    n)``, ``i`` the block's row), the elements each of at most :data:`_BLOCKS` blocks
    spread over the grid of blocks reads at ``grid`` (``stepped``: in the step loop's
    iterations ``samples``), against the first's (``within``: the inner loops'
    variables in terms of the grid's). A block the guard stops altogether reads
    nothing and is left out."""
    symbols = [lp.symbol for lp in outer]
    names = set(symbols)
    if not any(names & _substituted(c.expr, within).free_symbols
               for a in loads for c in a.conditions if c.expr is not None):
        return True
    compiled = []
    for a, offset in zip(loads, offsets, strict=True):
        conds = [grid_function(c.expr, within, [*varying, *symbols])
                 for c in a.conditions if c.expr is not None]
        if any(c is None for c in conds):
            return False
        compiled.append((offset, conds))
    axes = []
    for lp in outer:
        start = view.value(lp.start) if lp.start is not None else 0
        axes.append(np.arange(int(start), int(start) + int(view.value(lp.trips)),
                              dtype=np.int64))
    total = math.prod(len(a) for a in axes)
    picks = np.unique(np.linspace(0, total - 1, min(total, _BLOCKS)).astype(np.int64))
    reference = None
    for flat in picks:
        index = np.unravel_index(flat, [len(a) for a in axes])
        block = [np.full_like(grid[0], a[i]) for a, i in zip(axes, index, strict=True)]
        read = []
        for sample in samples:
            args = [*grid, np.full_like(grid[0], sample)] if stepped else list(grid)
            found = _elements(compiled, args, block, strict=True)
            if found is None:
                return False
            read.append(found)
        elements = np.unique(np.concatenate(read))
        if not elements.size:
            continue            # a block past the guard reads nothing
        if reference is None:
            reference = elements
        elif not np.array_equal(elements, reference):
            return False
    return True


@dataclass(frozen=True)
class LoopRange:
    """The values a loop's grid variable ``symbol`` takes; where that is an index of
    the loop's own, the loop variable in terms of it and the bound it stops at."""

    symbol: sympy.Symbol
    values: list[int]
    substitution: dict
    bound: sympy.Basic | None = None


def loop_range(view: KernelView, lp: Loop, limit: int) -> LoopRange | None:
    """The values of loop ``lp`` for a grid (its own, or an index of its iterations
    with the loop variable in terms of it), at most ``limit`` of them; None where they
    are not numbers."""
    values = loop_values(view, lp, limit=limit)
    if values:
        return LoopRange(lp.symbol, values, {})
    trips = view.value(lp.trips) if lp.trips is not None else None
    step = view.value(lp.step) if lp.step is not None else None
    if lp.kind != "for" or lp.start is None or not trips or not step or trips > limit:
        return None
    index = sympy.Symbol(f"_{lp.var}_index", integer=True, nonnegative=True)
    at = lp.start + step * index
    bound = None
    if lp.bound is not None:
        bound = sympy.Lt(at, lp.bound) if step > 0 else sympy.Gt(at, lp.bound)
    return LoopRange(index, list(range(trips)), {lp.symbol: at}, bound)


def _substituted(e, subs: dict):
    e = sympy.sympify(e)
    for _ in range(4):      # a loop's start may name other loops
        e = e.subs(subs)
    return e


def grid_function(e, fixed: dict, varying: list):
    """``e`` with the block loops at their first values, as a numpy function of the
    loops ``varying``; None where other names remain."""
    try:
        e = _substituted(e, fixed)
    except (TypeError, ZeroDivisionError):
        return None
    if e.free_symbols - set(varying):
        return None
    return sympy.lambdify(varying, e, modules=["numpy"])


def on_grid(fn, args, boolean: bool = False):
    """``fn`` at every point of the grid ``args`` (None where it fails)."""
    try:
        with np.errstate(all="ignore"):
            v = np.broadcast_to(np.asarray(fn(*args)), args[0].shape if args else ())
    except (ArithmeticError, TypeError, ValueError):
        return None
    if boolean:
        return v.astype(bool)
    v = v.astype(np.float64)
    return v if np.all(np.isfinite(v)) else None
