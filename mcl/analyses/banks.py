"""Bank conflicts: how a warp's accesses to a banked on-chip memory (shared memory)
meet its banks, over the iterations of the loops around them.

A warp's access presents its lanes' words to the banks together: all lanes at once
for 32-bit accesses, a group of lanes at a time for 128-bit runs (8 lanes of 16 B for
32 banks of 4 B). A bank serves one word at a time, so a group takes the banks once
per word that one bank holds for it (lanes that read the same word share it): the
conflict degree, and each time beyond the first is an extra wavefront (what Nsight
Compute counts as ``l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld/st``).

The degree can change from one iteration of a loop to the next (the tree of a
reduction, ``l_data[2 * s * tid]`` for s = 1, 2, 4, ...: 2-way, then 4-way, ...), so
it is judged at the iterations of the loops around the access (:func:`profile`: each
value of a short loop, the first ones of a long loop, the warps of a block), and the
extra wavefronts are counted over the kernel (:func:`extra_wavefronts`). Reads that
an unrolled loop makes of 4 adjacent elements the vendor compiler merges into one
128-bit read (:func:`unrolled_run`; matmul hopper v1's fragment of ``l_a``): they are
judged as the run the hardware sees.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, replace
from typing import Any

import sympy

from mcl.analyses.functions import KernelView, feedback_function
from mcl.analyses.kernel import Access, Loop
from mcl.analyses.kernel_syntax import flat_offset
from mcl.analyses.warp_lanes import (
    RUN,
    active_lanes,
    lane_offsets,
    lockstep_loop,
    run_offsets,
    run_rows,
)
from mcl.diagnostics import Diagnostic, Related, info, warning

#: values of a loop around an access at which its bank conflicts are judged
_PER_LOOP = 32
#: combinations of those values judged in all (fewer values per loop beyond it)
_SAMPLES = 512


def bank_word(mem: Any) -> int:
    """Bytes per bank word (units are normalised to bytes; 4 where not given)."""
    w = mem.value("width")
    return int(w) if isinstance(w, int | float) and w > 0 else 4


def phases(view: KernelView, nacc: Access, lane: Loop, width: int, mem: Any,
           at: dict[str, int] | None = None) -> list[list[int]] | None:
    """The element offsets a warp's access presents to the banks together, at the
    loop values ``at`` (the others at their first iteration): all active lanes at once
    for 32-bit accesses, a group of lanes at a time for 128-bit runs; None where an
    offset cannot be evaluated."""
    offsets = lane_offsets(view, nacc, lane, width, at)
    if offsets is None:
        return None
    active = active_lanes(view, nacc, lane, width, at)
    run = run_offsets(view, nacc, lane, width, at)
    if run is None and not nacc.write:
        found = unrolled_run(view, nacc, lane, width, at)
        run = found[0] if found is not None else None
    if run is None:
        return [[o for o, on in zip(offsets, active, strict=True) if on]]
    lanes = [[run[j * width + k] for j in range(RUN)] if active[k] else []
             for k in range(width)]
    return _grouped(lanes, _lanes_per_group(mem, nacc))


def _lanes_per_group(mem: Any, nacc: Access) -> int:
    """Lanes whose 128-bit runs the banks take together: one bank row of data (8 lanes
    of 16 B for 32 banks of 4 B)."""
    return max(1, mem.nr_banks * bank_word(mem) // (RUN * nacc.element_bytes))


def _grouped(lanes: list[list[int]], per: int) -> list[list[int]]:
    """The lanes' offsets, ``per`` consecutive lanes at a time."""
    return [[o for ln in lanes[i:i + per] for o in ln] for i in range(0, len(lanes), per)]


def _run_loop(view: KernelView, nacc: Access, lane: Loop, width: int) -> Loop | None:
    """The loop whose 4 iterations make one 128-bit access of ``nacc``: the generator's
    run, or the reads the vendor compiler merges (:func:`unrolled_run`); None."""
    if run_offsets(view, nacc, lane, width) is not None:
        return nacc.loops[-1]
    found = unrolled_run(view, nacc, lane, width) if not nacc.write else None
    return found[1] if found is not None else None


def _words(phase: list[int], element_bytes: int, mem: Any) -> int:
    """The most distinct words one bank holds for a group of offsets."""
    word = bank_word(mem)
    by_bank: dict[int, set[int]] = {}
    for off in phase:
        addr = off * element_bytes // word
        by_bank.setdefault(addr % mem.nr_banks, set()).add(addr)
    return max((len(v) for v in by_bank.values()), default=1)


def degree(groups: list[list[int]], element_bytes: int, mem: Any) -> int:
    """How many words one bank serves in turn for the worst group (1: no conflict)."""
    return max([1] + [_words(g, element_bytes, mem) for g in groups])


def conflict_degree(view: KernelView, nacc: Access, lane: Loop, width: int,
                    mem: Any) -> int | None:
    """The conflict degree of a warp's access at the first iteration of every loop."""
    found = phases(view, nacc, lane, width, mem)
    return None if found is None else degree(found, nacc.element_bytes, mem)


def unrolled_run(view: KernelView, nacc: Access, lane: Loop, width: int,
                 at: dict[str, int] | None = None) -> tuple[list[int], Loop] | None:
    """The offsets of the runs of 4 that the vendor compiler merges into 128-bit reads
    although the generator writes single ones, and the loop that makes them: a read
    whose offset moves by one element per iteration of an enclosing counted loop that
    is unrolled completely, with every loop inside it (mcl.opencl.vectorize.MAX_UNROLL),
    or that the compiler unrolls by a multiple of 4 (mcl.analyses.registers.
    partly_unrolled: matmul gpu_v3's ``l_a[ei][k]`` in ``k < p``, four
    ``ld.shared.v4.f32`` per four ``k`` in its PTX, ncu's 2 shared wavefronts per ``k``
    and warp), where 4 iterations start at a multiple of 4 elements in every lane:
    unrolled, the reads are at constant distances from an aligned address. None where
    there is no such loop."""
    from mcl.opencl.vectorize import MAX_UNROLL
    if lane not in nacc.loops or nacc.offset is None:
        return None
    inner = nacc.loops[nacc.loops.index(lane) + 1:]
    for lp in reversed(inner):
        trips = view.value(lp.trips) if lp.trips is not None else None
        start = view.value(lp.start) if lp.start is not None else 0
        step = view.value(lp.constant_step) if lp.constant_step is not None else None
        if lp.kind != "for" or trips is None or start is None or step != 1:
            return None     # this loop and those around it stay loops
        if trips > MAX_UNROLL and (trips % RUN or id(lp.node) not in _merging_loops(view)):
            return None
        if trips % RUN:
            continue
        rows = run_rows(view, nacc, lp, start, lane, width, at)
        if rows is None:
            return None
        if all(rows[j][k] == rows[0][k] + j for j in range(RUN) for k in range(width)) \
                and all(o % RUN == 0 for o in rows[0]) \
                and _aligned_across(view, nacc, lane, width, lp, inner):
            return [off for row in rows for off in row], lp
    return None


def _merging_loops(view: KernelView) -> frozenset[int]:
    """The loops (ids of their nodes) that the compiler unrolls by a multiple of 4
    without unrolling them completely (mcl.analyses.register_unrolling.partly_unrolled: matmul
    nvidia's ``k < p``), so that 4 of their iterations merge as a completely unrolled
    loop's do; computed once per view."""
    if "merging_loops" not in view.memo:
        from mcl.analyses.register_unrolling import partial_unroll, partly_unrolled
        view.memo["merging_loops"] = frozenset(
            id(lp.node) for lp in partly_unrolled(view.num, view.sym)
        ) if partial_unroll(view.num) % RUN == 0 else frozenset()
    return view.memo["merging_loops"]


def _aligned_across(view: KernelView, nacc: Access, lane: Loop, width: int, run: Loop,
                    inner: tuple[Loop, ...]) -> bool:
    """Whether the run's first element stays at a multiple of 4 in the second
    iteration of every other loop inside the lock-step loop (and of ``run`` + 4)."""
    for lp in inner:
        start = view.value(lp.start) if lp.start is not None else 0
        view._cursor.clear()
        view._cursor[lp.var] = start + (RUN if lp is run else 1)
        view._cursor[lane.var] = 0
        for _ in range(width):
            off = view.evaluate(nacc)
            if off is None or off % RUN:
                view._cursor.clear()
                return False
            view.increment(lane.var)
    view._cursor.clear()
    return True


def run_wavefronts(nacc: Access, run: list[int], width: int, mem: Any) -> int | None:
    """How many times a warp's 128-bit access takes the banks: it is served in groups
    of lanes that carry two bank rows of data (16 lanes of 16 B for 32 banks of 4 B:
    half a warp), each group as many times as the most distinct words one bank holds
    for it -- lanes of a group that read the same run share it, so a run that half a
    warp reads takes the banks once (ncu on the H100: 2 wavefronts for a warp whose
    halves each read one run, 4 for 16 different runs per half)."""
    word = bank_word(mem)
    if len(run) != RUN * width:
        return None
    lane_bytes = RUN * nacc.element_bytes
    per = max(1, 2 * mem.nr_banks * word // lane_bytes)
    total = 0
    for g in range(0, width, per):
        group = [run[j * width + k] for k in range(g, min(g + per, width)) for j in range(RUN)]
        total += _words(group, nacc.element_bytes, mem)
    return total


# --------------------------------------------------------------------------- over the loops


def loop_values(view: KernelView, lp: Loop, limit: int = _PER_LOOP) -> list[int] | None:
    """The first ``limit`` values the variable of loop ``lp`` takes: a counted loop's
    (start, step, trip count), or one that doubles or halves to a bound (``s *= 2``,
    ``s >>= 1``: a reduction's tree; mcl.analyses.kernel.Loop.values). None where they
    are not known."""
    if lp.kind == "foreach":
        trips = view.value(lp.trips) if lp.trips is not None else None
        return list(range(min(trips, limit))) if trips is not None else None
    if lp.kind != "for":
        return None
    if lp.values is not None:
        return list(lp.values[:limit])
    start = view.value(lp.start) if lp.start is not None else None
    if start is None or lp.step is None or lp.trips is None:
        return None
    step, trips = view.value(lp.step), view.value(lp.trips)
    if step is None or trips is None:
        return None
    return [start + step * i for i in range(min(max(trips, 0), limit))]


@dataclass(frozen=True)
class Profile:
    """A warp's access over the iterations judged: its worst and mildest conflict
    degree where it runs, the loop whose iterations change it, and the extra
    wavefronts over the kernel (None where the executions are not known)."""

    worst: int
    mildest: int
    varies: Loop | None
    extra: float | None
    requests: float | None = None


def profile(view: KernelView, nacc: Access, lane: Loop, width: int,
            mem: Any) -> Profile | None:
    """The conflict degrees of a warp's access at the iterations of the loops around
    it (each sequential loop and the warps of a block: :func:`loop_values`; not the
    blocks, nor a run of 4 merged into one access), and the extra wavefronts the
    kernel's warps take in all. None where an offset cannot be evaluated."""
    if lane not in nacc.loops or lane_offsets(view, nacc, lane, width) is None:
        return None
    run = _run_loop(view, nacc, lane, width)
    run_start = view.value(run.start) if run is not None and run.start is not None else 0
    judged, values = [], []
    for lp in nacc.loops:
        if lp is lane or lp is run or lp.var is None or is_block_loop(view, lp, lane):
            continue
        vals = loop_values(view, lp)
        if vals:
            judged.append(lp)
            values.append(vals)
    while math.prod(len(v) for v in values) > _SAMPLES:    # fewer values per loop
        i = max(range(len(values)), key=lambda j: len(values[j]))
        values[i] = values[i][:max(1, len(values[i]) // 2)]
    fast = _Evaluator(view, nacc, [lane, *judged] + ([run] if run is not None else []))
    per = _lanes_per_group(mem, nacc) if run is not None else width
    degrees: list[int] = []
    extra_per: list[int] = []
    by_loop: dict[int, dict[int, int]] = {id(lp): {} for lp in judged}
    for combo in itertools.product(*values):
        at = {lp.var: v for lp, v in zip(judged, combo, strict=True)}
        lanes = []
        for k in range(width):
            at[lane.var] = k
            if run is not None:
                at[run.var] = run_start
            if not fast.runs(at):
                lanes.append([])
                continue
            if run is None:
                offs = [fast.offset(at)]
            else:
                offs = []
                for j in range(RUN):
                    at[run.var] = run_start + j
                    offs.append(fast.offset(at))
            if None in offs:
                return None
            lanes.append(offs)
        words = [_words(g, nacc.element_bytes, mem) for g in _grouped(lanes, per) if g]
        extra_per.append(sum(w - 1 for w in words))
        if words:
            d = max(words)
            degrees.append(d)
            for lp, v in zip(judged, combo, strict=True):
                seen = by_loop[id(lp)]
                seen[v] = max(seen.get(v, 1), d)
    requests = _warp_accesses(view, nacc, lane, width, run, judged)
    if not degrees:
        return Profile(1, 1, None, 0.0, requests)
    changing = [lp for lp in judged if len(set(by_loop[id(lp)].values())) > 1]
    varies = next((lp for lp in changing if lp.kind != "foreach"),
                  changing[0] if changing else None)
    extra = requests * sum(extra_per) / len(extra_per) if requests is not None else None
    return Profile(max(degrees), min(degrees), varies, extra, requests)


class _Evaluator:
    """An access's offset and the conditions around it as functions of the loops
    ``varying``, every other loop at its first iteration (as KernelView's cursor
    has them), compiled once: a profile evaluates them thousands of times."""

    def __init__(self, view: KernelView, acc: Access, varying: list[Loop]):
        names = {lp.var for lp in varying}
        fixed = {lp.symbol: (lp.start if lp.start is not None else 0)
                 for lp in acc.loops if lp.var and lp.var not in names}
        self.args = [lp.var for lp in varying]
        symbols = [lp.symbol for lp in varying]

        def compile_(e):
            for _ in range(4):
                e = e.subs(fixed)
            return sympy.lambdify(symbols, e, modules=["math", {"Mod": _mod}])
        self._offset = compile_(acc.offset)
        self._conds = [compile_(c.expr) for c in acc.conditions if c.expr is not None]

    def offset(self, at: dict[str, int]) -> int | None:
        try:
            v = self._offset(*(at[a] for a in self.args))
        except (ArithmeticError, TypeError, ValueError):
            return None
        return math.floor(v) if isinstance(v, int | float) and math.isfinite(v) else None

    def runs(self, at: dict[str, int]) -> bool:
        args = [at[a] for a in self.args]
        for c in self._conds:
            try:
                if not c(*args):
                    return False
            except (ArithmeticError, TypeError, ValueError):
                continue    # as KernelView.runs: a condition not evaluated lets it run
        return True


def _mod(a, b):
    return a % b


def is_block_loop(view: KernelView, lp: Loop, lane: Loop) -> bool:
    """Whether ``lp`` is a foreach over a par_group above the lock-step one's unit
    holder (the blocks): the warps of a block are judged, the blocks are not."""
    if lp.kind != "foreach":
        return False
    groups = [g.name for g in view.hardware.par_groups()]
    if lp.node.group not in groups or lane.node.group not in groups:
        return True
    return groups.index(lane.node.group) - groups.index(lp.node.group) > 1


def _warp_accesses(view: KernelView, nacc: Access, lane: Loop, width: int,
                   run: Loop | None, judged: list[Loop]) -> float | None:
    """How many times the kernel's warps make the access: each loop around it counts
    its trips (a judged one its values as written: a doubling loop's), the lock-step
    loop its warps and a merged run one access. None where a count is not known."""
    n = 1.0
    for lp in nacc.loops:
        if lp in judged:
            full = loop_values(view, lp, limit=1 << 20)
            if full is None:
                return None
            n *= len(full)
            continue
        trips = view.value(lp.trips) if lp.trips is not None else None
        if trips is None:
            return None
        n *= trips / (width if lp is lane else RUN if lp is run else 1)
    return n


def extra_wavefronts(view: KernelView) -> dict[str, float] | None:
    """The extra wavefronts bank conflicts cost the kernel's reads and writes of banked
    memory in all, and the warps' requests they are part of (``{"ld": ..., "st": ...,
    "ld_requests": ..., "st_requests": ...}``); None where one is not known (an index
    read from memory: a histogram's bins)."""
    found = lockstep_loop(view)
    out = {"ld": 0.0, "st": 0.0, "ld_requests": 0.0, "st_requests": 0.0}
    if found is None:
        return out
    lane, width = found
    for sacc, nacc in view.accesses():
        mem = banked_memory(view.hardware, sacc)
        if mem is None or lane not in nacc.loops:
            continue
        p = profile(view, nacc, lane, width, mem)
        if p is None or p.extra is None or p.requests is None:
            return None
        kind = "st" if nacc.write else "ld"
        out[kind] += p.extra
        out[f"{kind}_requests"] += p.requests
    return out


def banked_memory(hw: Any, acc: Access) -> Any:
    """The banked on-chip memory (shared) that holds ``acc``'s space on ``hw``, or None."""
    if acc.space is None:
        return None
    return next((m for m in hw.memories_holding(acc.space) if m.nr_banks), None)


# --------------------------------------------------------------------------- the feedback


def padding_remedy(view: KernelView, nacc: Access, lane: Loop, width: int,
                   mem: Any) -> tuple[int, int | None, int | None] | None:
    """Whether lengthening the rows of ``nacc``'s array removes its bank conflict: the
    row's elements now, the fewest extra elements per row that leave one word per bank
    (None: none up to a whole round of banks does), and the fewest that also keep a
    row a multiple of RUN elements (the alignment 128-bit accesses to a row need).
    None where the rows' length or the indices are not known.

    An offset is linear in the row length, so the warp's offsets are evaluated for the
    rows one element longer once and each padding is then a multiple of the
    difference."""
    t = getattr(nacc.symbol, "type", None)
    if t is None or len(nacc.sizes) < 2 or nacc.sizes[-1] is None:
        return None
    row = view.value(nacc.sizes[-1])
    longer = flat_offset(t, list(nacc.indices), [*nacc.sizes[:-1], nacc.sizes[-1] + 1])
    if row is None or longer is None:
        return None
    now = phases(view, nacc, lane, width, mem)
    one = phases(view, replace(nacc, offset=longer), lane, width, mem)
    if now is None or one is None or [len(p) for p in now] != [len(p) for p in one]:
        return None
    any_pad = aligned = None
    for extra in range(1, mem.nr_banks + 1):
        groups = [[a + (b - a) * extra for a, b in zip(pa, pb, strict=True)]
                  for pa, pb in zip(now, one, strict=True)]
        if degree(groups, nacc.element_bytes, mem) == 1:
            any_pad = any_pad or extra
            if (row + extra) % RUN == 0:
                aligned = extra
                break
    return row, any_pad, aligned


def _padding_help(name: str, pads: tuple | None, var: str, dims: int = 2) -> str:
    """What the help of a bank conflict proposes: the padding that removes it (checked
    against the banks), or, where none does, another index varying with ``var``; for
    an array of ``dims`` < 2 dimensions, which has no rows to pad, neighbouring words
    for neighbouring lanes (a reduction's sequential addressing)."""
    change = f"change which index varies with {var}"
    if dims < 2:
        return (f"make neighbouring {var} access neighbouring words of {name} (one "
                f"dimension: no rows to pad)")
    if pads is None:
        return f"pad the array (e.g. one extra element per row) or {change}"
    row, any_pad, aligned = pads
    if aligned is not None and aligned == any_pad:
        return (f"pad the rows of {name} by {aligned} elements ({row} -> {row + aligned}), "
                f"or {change}")
    if aligned is not None:
        return (f"pad the rows of {name} by {any_pad} elements ({row} -> {row + any_pad}; "
                f"{aligned} keeps them a multiple of {RUN} for 128-bit accesses), or {change}")
    if any_pad is not None:
        return (f"padding the rows of {name} by {any_pad} elements ({row} -> "
                f"{row + any_pad}) removes it, but no padding that keeps a row a multiple "
                f"of {RUN} elements (128-bit accesses) does: {change}")
    return f"no padding of the rows of {name} removes it: {change}"


@feedback_function("bankConflicts")
def bank_conflicts(view: KernelView) -> list[Diagnostic]:
    """N-way bank conflicts of a warp's accesses to banked memory (shared), at the
    iterations of the loops around them, with the extra wavefronts they cost; and what
    the data decide of those whose words they choose (mcl.analyses.bank_data)."""
    from mcl.analyses.bank_data import data_chosen_messages
    found = lockstep_loop(view)
    if found is None:
        return []
    lane, width = found
    out: list[Diagnostic] = []
    clean: list[str] = []
    for sacc, nacc in view.accesses():
        mem = banked_memory(view.hardware, sacc)
        if mem is None or lane not in nacc.loops:
            continue
        p = profile(view, nacc, lane, width, mem)
        if p is None:
            continue
        if p.worst <= 1:
            if sacc.text not in clean:
                clean.append(sacc.text)
            continue
        pads = padding_remedy(view, nacc, lane, width, mem)
        active = sum(active_lanes(view, nacc, lane, width))
        who = f"a warp's {width} {lane.node.group}" if active == width else \
            f"the {active} of a warp's {width} {lane.node.group} that the ifs around it let run"
        how = f"{p.worst}-way bank conflict" if p.varies is None else \
            f"{p.mildest}- to {p.worst}-way bank conflicts, depending on {p.varies.label}"
        cost = f" ({p.extra:.3g} extra wavefronts in all)" if p.extra else ""
        d = warning("feedback-bank-conflicts",
                    f"{sacc.text}: {how}: {who} access different words in the same bank "
                    f"of {mem.name} ({mem.nr_banks} banks){cost}",
                    sacc.node.span,
                    _padding_help(sacc.name, pads, lane.var, len(nacc.sizes)),
                    [Related(lane.node.span, "the lock-step loop")])
        d.data.update(array=sacc.name, degree=p.worst, mildest=p.mildest,
                      extra_wavefronts=p.extra)
        if pads is not None:
            d.data.update(row=pads[0], padding=pads[1], aligned_padding=pads[2])
        out.append(d)
    if clean and not out:
        d = info("feedback-bank-conflicts",
                 f"no bank conflicts in the accesses to {', '.join(clean)}",
                 lane.node.span)
        d.data.update(accesses=clean)
        out.append(d)
    out += data_chosen_messages(view, lane, width)
    return out
