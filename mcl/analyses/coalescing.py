"""The ``coalescing`` feedback function (paper section 6.5): memory transactions per
warp request of each access to device memory, judged over the lanes of a warp (and
the runs, records, stencil shifts and rows that change what a request touches), the
load requests of the kernel, and the bank conflicts of on-chip memory
(mcl.analyses.banks)."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

import sympy

from mcl.analyses.datadep import data_kernel, lane_data
from mcl.analyses.functions import KernelView, feedback_function
from mcl.analyses.kernel import Access, Loop
from mcl.analyses.warp_lanes import (
    RUN,
    _stride,
    lane_offsets,
    lockstep_loop,
    run_offsets,
    transaction_size,
)
from mcl.diagnostics import Diagnostic, info, warning


@dataclass
class _Judged:
    """A warp's access to cached device memory as :func:`coalescing` judges it: the
    lanes' element offsets (of the whole run for a 128-bit access, else None in
    ``run``), the transaction unit, and the units it touches against the fewest its
    elements need."""

    sacc: Access
    nacc: Access
    offsets: list[int]
    run: list[int] | None
    line: int
    unit: str
    touched: int
    ideal: int

    def key(self) -> tuple:
        """Accesses of one array in one direction inside the same loops."""
        return self.sacc.name, self.sacc.write, tuple(id(lp) for lp in self.nacc.loops)


@feedback_function("coalescing")
def coalescing(view: KernelView) -> list[Diagnostic]:
    """Memory transactions per warp for accesses to cached device memory, and
    bank conflicts in banked on-chip memory."""
    found = lockstep_loop(view)
    if found is None:
        return []
    lane, width = found
    out: list[Diagnostic] = []
    optimal: list[str] = []
    judged: list[_Judged] = []
    dk: Any = None      # the data-aware kernel (mcl.analyses.datadep), made where needed
    dk_made = False
    hw = view.hardware
    for sacc, nacc in view.accesses():
        if lane not in nacc.loops or sacc.space is None:
            continue
        mems = hw.memories_holding(sacc.space)
        if not mems or not all(m.addressable for m in mems):
            continue
        if any(m.nr_banks for m in mems):
            continue  # on-chip banked memory: see bank_conflicts
        offsets = lane_offsets(view, nacc, lane, width)
        if offsets is None:
            if not dk_made:
                dk, dk_made = data_kernel(view.num), True
            sources = lane_data(dk, nacc, lane)
            found_data = None if sources else _data_lane_offsets(view, dk, nacc, lane, width)
            if found_data is None or found_data[1]:
                d = _data_coalescing(view, sacc, lane, width, sources, found_data)
                if d is not None:
                    out.append(d)
                continue
            offsets = found_data[0]  # known once a while loop's variables are
        line, unit = transaction_size(view, sacc.space)
        eb = sacc.element_bytes
        run = run_offsets(view, nacc, lane, width)
        if run is not None:   # one 128-bit access per lane: judge the whole run
            offsets = run
        segments = {off * eb // line for off in offsets}
        ideal = max(1, -(-(len(set(offsets)) * eb) // line))
        judged.append(_Judged(sacc, nacc, offsets, run, line, unit, len(segments), ideal))
    records = _records(judged, width)
    reported: set[int] = set()
    for j in judged:
        group = records.get(id(j))
        if group is not None:
            if id(group[0]) not in reported:
                reported.add(id(group[0]))
                d = _record_access(view, group, lane, width)
                if d is not None:
                    out.append(d)
                elif _used(group) == 1 and j.sacc.name not in optimal:
                    optimal.append(j.sacc.name)   # every byte of its units used
            continue
        if j.touched <= j.ideal:
            d = _misaligned_rows(view, j, lane, width)
            if d is not None:
                out.append(d)
            elif j.sacc.name not in optimal:
                optimal.append(j.sacc.name)
            continue
        d = _stencil_shift(view, j, judged, lane, width) or _uncoalesced(view, j, lane, width)
        out.append(d)
    if optimal and not out:
        span = lane.node.span
        d = info("feedback-coalescing",
                 f"optimal memory access: the accesses to {', '.join(optimal)} by a warp of "
                 f"{width} {lane.node.group} are coalesced", span)
        d.data.update(arrays=optimal)
        out.append(d)
    # imported here: mcl.analyses.banks builds on this module
    from mcl.analyses.banks import bank_conflicts

    return out + load_requests(view, lane) + bank_conflicts(view)


def _uncoalesced(view: KernelView, j: _Judged, lane: Loop, width: int) -> Diagnostic:
    """The warning for an access whose warp touches more transaction units than its
    elements need."""
    sacc, run, line = j.sacc, j.run, j.line
    eb = sacc.element_bytes
    verb = "writing" if sacc.write else "reading"
    each = (f"each {verb} a run of {RUN} adjacent elements" if run is not None
            else f"each {verb} {eb} B")
    what = f"a warp of {width} {lane.node.group} ({each})"
    stride = _stride(j.offsets if run is None else run[:width])
    hint = (f"make neighbouring {lane.var} access neighbouring elements (the last "
            f"index should vary with {lane.var})")
    if run is None and stride == 1:
        # adjacent already: the warp's elements straddle a segment boundary
        hint = (f"neighbouring {lane.var} access neighbouring elements already; the "
                f"warp's elements cross a {line} B boundary (a row that does not start "
                "on one, or lanes that go on into the next row): pad the rows to a "
                f"multiple of {line} B, or give each warp a row segment of its own")
    elif run is None and stride == RUN and (lp := _stepping_loop(view, j.nacc, lane, width)):
        # each lane covers RUN adjacent elements, one per iteration of a loop
        hint = (f"each {lane.var} {'writes' if sacc.write else 'reads'} {RUN} adjacent "
                f"elements over loop {lp.var}, "
                f"one request each: as a counted loop of {RUN} that copies them "
                f"{'from' if sacc.write else 'into'} a run of adjacent elements (a private "
                f"array of {RUN}), the code generator makes them one 128-bit access per "
                f"{lane.var}, and a warp's request touches the {j.touched} {j.unit} once "
                f"for all {RUN}")
    elif run is not None and stride > RUN:
        # the index already varies with the lane, which covers several runs
        hint = (f"let neighbouring {lane.var} access neighbouring runs of {RUN}: each "
                f"{lane.var} now covers {stride} adjacent elements; give each its runs "
                f"{width} runs apart ({lane.var}, {lane.var} + {width}, ...)")
    d = warning("feedback-coalescing",
                f"{sacc.text}: {what} touches "
                f"{j.touched} {j.unit} of {line} B where {j.ideal} would do "
                f"(stride {stride * eb} B between neighbouring {lane.var})",
                sacc.node.span, hint)
    d.data.update(array=sacc.name, segments=j.touched, ideal=j.ideal)
    return d


#: values of each loop around an access at which the alignment of its rows is judged
_ROW_VALUES = 8
#: combinations of those values judged in all (fewer values per loop beyond it)
_ROW_SAMPLES = 256


def _misaligned_rows(view: KernelView, j: _Judged, lane: Loop,
                     width: int) -> Diagnostic | None:
    """For an access that the first iteration of the loops around it finds coalesced:
    where its rows are not a multiple of the transaction unit (rows of 4098 floats,
    16392 B), later rows start off a unit boundary, and a warp's request touches more
    units on average over the loops' iterations (conv3x3's ``img[i + y, j + x]``: 4.83
    sectors of 32 B, where the first row and shift touch 4; what mcl.analyses.sectors
    counts). The average is taken over the first values of every loop around it
    (fewer per loop where their combinations are many), with the rows as they are and
    padded to a multiple of the unit; a message where padding lowers it: a warning
    where that saves a tenth of the units, else an info (conv3x3: 4.67 padded, the
    rest the window's shifts by x). None otherwise."""
    from dataclasses import replace

    from mcl.analyses.kernel_syntax import flat_offset

    nacc, sacc, line, eb = j.nacc, j.sacc, j.line, j.sacc.element_bytes
    t = getattr(nacc.symbol, "type", None)
    if j.run is not None or t is None or len(nacc.sizes) < 2 or nacc.sizes[-1] is None \
            or line % eb:
        return None
    row = sympy.sympify(nacc.sizes[-1])
    if not row.is_Integer or int(row) <= 0 or int(row) * eb % line == 0:
        return None
    row = int(row)
    padded = row + (-row * eb) % line // eb
    longer = flat_offset(t, list(nacc.indices), [*nacc.sizes[:-1], sympy.Integer(padded)])
    if longer is None:
        return None
    loops, values = [], []
    for lp in nacc.loops:
        if lp is lane or lp.var is None:
            continue
        taken = lp.index_values(_ROW_VALUES)
        if taken is None or len(taken) < 2:
            continue
        loops.append(lp)
        values.append(taken)
    while math.prod(len(v) for v in values) > _ROW_SAMPLES:
        k = max(range(len(values)), key=lambda x: len(values[x]))
        values[k] = values[k][:max(1, len(values[k]) // 2)]
    shifted = replace(nacc, offset=longer)
    now = pad = count = 0
    for combo in itertools.product(*values):
        at = {lp.var: v for lp, v in zip(loops, combo, strict=True)}
        a = lane_offsets(view, nacc, lane, width, at)
        b = lane_offsets(view, shifted, lane, width, at)
        if a is None or b is None:
            continue
        count += 1
        now += len({o * eb // line for o in a})
        pad += len({o * eb // line for o in b})
    if not count:
        return None
    now, pad = now / count, pad / count
    if now <= j.ideal + 0.05 or pad >= now - 0.05:
        return None
    rest = (f"; what remains comes from shifts by the loops' indices (a window's "
            f"neighbour reads), whose extra {j.unit} the cache serves" if pad > j.ideal + 0.05
            else "")
    text = (f"{sacc.text}: a warp of {width} {lane.node.group} touches {j.touched} {j.unit} of "
            f"{line} B at the first iteration of the loops around it, but {now:.2f} per "
            f"request on average over them, where {j.ideal} would do: its rows of "
            f"{row * eb} B are not a multiple of {line} B, so later rows start off a "
            f"{j.unit[:-1]} boundary")
    hint = (f"pad the rows of {sacc.name} to a multiple of {line} B ({row} -> {padded} "
            f"elements): {pad:.2f} {j.unit} per request on average{rest}")
    make = warning if (now - pad) >= 0.1 * now else info
    d = make("feedback-coalescing", text, sacc.node.span, hint)
    d.data.update(array=sacc.name, segments=round(now, 2), ideal=j.ideal,
                  padded_segments=round(pad, 2), row=row, padded_row=padded)
    return d


def _stepping_loop(view: KernelView, nacc: Access, lane: Loop, width: int) -> Loop | None:
    """The innermost sequential loop inside ``lane`` whose next iteration moves every
    lane's element by one (``a[i, k]`` with ``k = aq + u`` in loop u), where its start
    is a number; None where there is none."""
    inner = nacc.loops[nacc.loops.index(lane) + 1:]
    first = lane_offsets(view, nacc, lane, width)
    if first is None:
        return None
    for lp in reversed(inner):
        if lp.kind == "foreach" or lp.var is None:
            continue
        start = sympy.sympify(lp.start) if lp.start is not None else sympy.Integer(0)
        if not start.is_Integer:
            continue
        nxt = lane_offsets(view, nacc, lane, width, {lp.var: int(start) + 1})
        if nxt is not None and all(b == a + 1 for a, b in zip(first, nxt, strict=True)):
            return lp
    return None


def _shift(a: _Judged, b: _Judged) -> int | None:
    """The constant number of elements by which every lane's offset of ``b`` lies
    beyond ``a``'s (None where the lanes' distances differ)."""
    if a.run is not None or b.run is not None or len(a.offsets) != len(b.offsets):
        return None
    shifts = {ob - oa for oa, ob in zip(a.offsets, b.offsets, strict=True)}
    return shifts.pop() if len(shifts) == 1 else None


def _records(judged: list[_Judged], width: int) -> dict[int, list[_Judged]]:
    """The accesses that read (or write) fields of one record per lane, by the id of
    each: two or more accesses to one array inside the same loops, every lane's
    offsets a constant distance apart within a record (``pos[i, 0]``, ``pos[i, 1]``,
    ``pos[i, 2]`` of rows of 4: the lanes' records 16 B apart), that either use every
    byte of the transaction units they touch together (``acc[i, 0..3]``) or run once
    per lane (no sequential loop around them) and use more than half of those bytes
    (``pos``: 12 of each 16). A warp's first such access fetches the units of its
    records and the cache serves the others: what the records need, not what one field
    of each would. Accesses that are not one of these are left out."""
    out: dict[int, list[_Judged]] = {}
    groups: list[list[_Judged]] = []
    for j in judged:
        if j.run is not None or j.touched <= j.ideal:
            continue
        stride = _stride(j.offsets)
        if stride <= 1 or any(b - a != stride for a, b in itertools.pairwise(j.offsets)):
            continue
        for g in groups:
            d = _shift(g[0], j)
            if g[0].key() == j.key() and d is not None and abs(d) < stride:
                g.append(j)
                break
        else:
            groups.append([j])
    for g in groups:
        if len(g) < 2:
            continue
        fields = sorted({_shift(g[0], j) for j in g})
        stride = _stride(g[0].offsets)
        if fields[-1] - fields[0] >= stride:
            continue    # the fields of neighbouring lanes' records overlap
        once = all(lp.kind == "foreach" for lp in g[0].nacc.loops)
        if _used(g) == 1 or once and _used(g) > 0.5:
            for j in g:
                out[id(j)] = g
    return out


def _used(group: list[_Judged]) -> float:
    """The share of the bytes of the transaction units the accesses of ``group`` touch
    that they use together (1: every byte)."""
    union = {o for j in group for o in j.offsets}
    eb, line = group[0].sacc.element_bytes, group[0].line
    return len(union) * eb / (len({o * eb // line for o in union}) * line)


def _record_access(view: KernelView, group: list[_Judged], lane: Loop,
                   width: int) -> Diagnostic | None:
    """At most one info for the accesses of ``group`` (:func:`_records`): where the
    lanes' records are 4 aligned elements of a type the generator reads as vectors,
    that one 128-bit access per lane (a counted loop of 4 over the fields,
    mcl.opencl.vectorize) would make them one request; nothing otherwise."""
    from mcl.opencl.vectorize import VECTOR_TYPES

    first = group[0]
    sacc, line, eb = first.sacc, first.line, first.sacc.element_bytes
    stride = _stride(first.offsets)
    base = min(min(j.offsets) for j in group)
    etype = getattr(getattr(sacc.symbol, "type", None), "name", None)
    if stride != RUN or RUN * eb != 16 or etype not in VECTOR_TYPES \
            or any(min(j.offsets[k] for j in group) % RUN for k in range(width)) \
            or base < 0:
        return None
    union = {o for j in group for o in j.offsets}
    touched = len({o * eb // line for o in union})
    names = ", ".join(j.sacc.text for j in group)
    verb, noun = ("writes", "stores") if sacc.write else ("reads", "loads")
    used = len({_shift(first, j) for j in group}) * eb
    once = all(lp.kind == "foreach" for lp in first.nacc.loops)
    served = ("the L2 merges them before they reach memory" if sacc.write
              else "the cache serves all but the first")
    d = info("feedback-coalescing",
             f"{names}: each of a warp's {width} {lane.node.group} {verb} {used} B of its "
             f"own {RUN * eb} B record{' once' if once else ''}; the {len(group)} "
             f"{noun} touch the same {touched} {first.unit} of {line} B, as many as the "
             f"records need ({served}); one 128-bit access per "
             f"{lane.node.group[:-1] if lane.node.group.endswith('s') else lane.node.group} "
             f"would make them one",
             sacc.node.span,
             f"access the record in a counted loop of {RUN} over its fields (through a "
             f"private array of {RUN}), which the code generator makes one 128-bit access")
    d.data.update(array=sacc.name, segments=touched, ideal=touched,
                  accesses=[j.sacc.text for j in group])
    return d


def _block_word(view: KernelView) -> str:
    """The unit of the description's outermost par_group (hopper's block), whose
    threads share a multiprocessor and its L1."""
    groups = view.hardware.par_groups() if view.hardware is not None else []
    unit = groups[0].unit if groups else None
    return unit.name if unit is not None else "block"


def _stencil_shift(view: KernelView, j: _Judged, judged: list[_Judged], lane: Loop,
                   width: int) -> Diagnostic | None:
    """An info where ``j`` reads neighbouring elements of the lanes' own
    (``vin[i - 1]`` beside ``vin[i]``; ``grid[r, c + 1]``): adjacent lanes, another read
    of the array inside the same loops a constant shift of less than a transaction
    unit away, and the same lanes' elements shifted by less than one that touch no
    more units than they need. The extra unit is the neighbouring warp's, which the
    cache serves; no layout removes it. None where that is not so."""
    sacc, line, eb = j.sacc, j.line, j.sacc.element_bytes
    if sacc.write or j.run is not None or _stride(j.offsets) != 1 \
            or any(b - a != 1 for a, b in itertools.pairwise(j.offsets)):
        return None
    near = max(1, line // eb)
    shifts = [(abs(d), d, o) for o in judged
              if o is not j and not o.sacc.write and o.key() == j.key()
              and (d := _shift(j, o)) is not None and 0 < abs(d) < near]
    if not shifts:
        return None
    aligned = [k for k in range(-near + 1, near)
               if len({(off + k) * eb // line for off in j.offsets}) <= j.ideal]
    if not aligned:
        return None
    _, d, other = min(shifts, key=lambda x: (x[2].touched > x[2].ideal, x[0]))
    extra = j.touched - j.ideal
    units = j.unit if extra != 1 else j.unit[:-1]
    apart = f"{abs(d)} element{'s' if abs(d) != 1 else ''} {'before' if d > 0 else 'after'}"
    msg = (f"{sacc.text}: a warp of {width} {lane.node.group} touches {j.touched} {j.unit} "
           f"of {line} B where {j.ideal} would do: a stencil's neighbour read ({apart} "
           f"{other.sacc.text}) touches {extra} more {units}, holding elements of the "
           f"neighbouring warp, which reads them too: the cache serves "
           f"{'it' if extra == 1 else 'them'} (the L1 where that warp is in the same "
           f"{_block_word(view)}), and the traffic from memory does not grow")
    d_ = info("feedback-coalescing", msg, sacc.node.span,
              "nothing in the layout causes it; a tile with its halo staged in shared "
              "memory would issue one global load per element instead of one per neighbour")
    d_.data.update(array=sacc.name, segments=j.touched, ideal=j.ideal, shift=-d)
    return d_


def _data_coalescing(view: KernelView, sacc: Access, lane: Loop, width: int,
                     sources: list[str], found: tuple[list[int], list[str], int] | None
                     ) -> Diagnostic | None:
    """What a warp's accesses to an address that data choose touch: where the data are
    the same for its lanes (``values[k]`` with ``k = rowPtr[r] + lane``, a row per
    warp) the lanes' offsets from that start are known, and so are the transactions
    for each alignment of it; where they differ between lanes (a gather,
    ``x[colIdx[k]]``) nothing is known. ``sources``:
    :func:`mcl.analyses.datadep.lane_data` of the access; ``found``:
    :func:`_data_lane_offsets` of it. None for an access whose address the kernel model
    could not evaluate for another reason."""
    line, unit = transaction_size(view, sacc.space)
    eb = sacc.element_bytes
    if sources:
        most = width * max(1, -(-eb // line))
        d = info("feedback-coalescing",
                 f"{sacc.text}: the lanes' addresses come from data that differ between "
                 f"them ({', '.join(sources)}): a warp touches 1 to {most} {unit} of "
                 f"{line} B, as the data fall", sacc.node.span)
        d.data.update(array=sacc.name, gather=sources)
        return d
    if found is None:
        if sacc.predictable:
            return None
        return info("feedback-coalescing",
                    f"{sacc.text}: the addresses depend on data, so whether a warp's "
                    f"accesses coalesce is not known", sacc.node.span)
    rel, chosen, step = found
    start = f"a start known only at run time ({', '.join(chosen)}), the same for its lanes"
    per_line = max(1, line // eb)   # the start's alignments: multiples of its step
    counts = [len({(off + shift) * eb // line for off in rel})
              for shift in sorted({m * step % per_line for m in range(per_line)})]
    lo, hi = min(counts), max(counts)
    ideal = max(1, -(-(len(set(rel)) * eb) // line))
    what = f"a warp of {width} {lane.node.group}"
    if lo <= ideal:
        touched = f"{lo} {unit} of {line} B" + (
            f" where that start is aligned to {line} B, {hi} where it is not"
            if hi > lo else "")
        d = info("feedback-coalescing",
                 f"{sacc.text}: {what} reads from {start}: {touched} (coalesced)",
                 sacc.node.span)
    else:
        d = warning("feedback-coalescing",
                    f"{sacc.text}: from {start}, {what} touches "
                    f"{lo} to {hi} {unit} of {line} B where {ideal} would do (stride "
                    f"{_stride(rel) * eb} B between neighbouring {lane.var})",
                    sacc.node.span,
                    f"make neighbouring {lane.var} access neighbouring elements (the last "
                    f"index should vary with {lane.var})")
    d.data.update(array=sacc.name, segments=lo, segments_unaligned=hi, ideal=ideal)
    return d


def _data_lane_offsets(view: KernelView, dk: Any, acc: Access, lane: Loop,
                       width: int) -> tuple[list[int], list[str], int] | None:
    """For an access of the numeric kernel whose address the kernel model leaves unknown,
    and that reads nothing from memory that differs between the lanes
    (:func:`mcl.analyses.datadep.lane_data` finds nothing: the caller asks it first),
    the offsets ``width`` consecutive lanes of ``lane`` access, by the data-aware kernel
    ``dk`` (mcl.analyses.datadep.DataKernel: a while loop's induction variables as
    functions of its iteration, values read from memory as placeholders), and what
    the start they share is read from (``rowPtr[r]``; none where nothing is: the
    offsets are then exact), and the step the start moves by (1 for a start read from
    memory; ``stride`` for ``i += stride`` after a while loop). Relative to that start
    where there is one. None where the start does not shift every lane alike, or where
    an offset cannot be evaluated."""
    dacc = dk.access_like(acc) if dk is not None else None
    if dacc is None or dacc.offset is None:
        return None
    rows: list[list[int]] = []
    chosen: set[Any] = set()
    step = 0    # the start moves by multiples of this (0: by any amount)
    try:
        for base in (0, 7919):      # two starts: each lane must move by the same amount
            row = []
            for i in range(width):
                view._cursor.clear()
                view._cursor[lane.var] = i
                e = view._at_cursor(dacc, dacc.offset)
                if e is None:
                    return None
                data = {x for x in e.free_symbols if x in dk.placeholders}
                chosen |= data
                if base == 0 and i == 0:
                    for x in data:
                        c = sympy.diff(e, x)
                        step = math.gcd(step, int(c)) if c.is_Integer and step != 1 else 1
                e = e.subs({x: base for x in data})
                if not e.is_number:
                    return None
                row.append(view.value(e))
            rows.append(row)
    finally:
        view._cursor.clear()
    if any(v is None for row in rows for v in row):
        return None
    shifts = {b - a for a, b in zip(*rows, strict=True)}
    if len(shifts) != 1:
        return None
    return rows[0], sorted(dk.placeholders[x].text for x in chosen), step or 1


def load_requests(view: KernelView, lane: Loop) -> list[Diagnostic]:
    """The warp requests the global loads issue and the sectors they fetch
    (mcl.analyses.sectors), as a profiler counts them."""
    from mcl.analyses.sectors import global_loads

    loads = global_loads(view)
    if loads is None or not loads.requests:
        return []
    width, size, unit = loads.width, loads.size, loads.unit
    spr = loads.sectors_per_request
    ideal = width * 4 / size
    msg = (f"global loads: about {loads.requests:.3g} warp requests fetch "
           f"{loads.sectors:.3g} {unit} of {size} B, {spr:.2f} per request "
           f"({ideal:g} for a warp reading {width} adjacent 32-bit elements, "
           f"{4 * ideal:g} with 128-bit accesses)")
    if loads.estimated:
        msg += (f"; an estimate for {', '.join(sorted({a.text for a, _ in loads.estimated}))}"
                f", whose addresses or trip counts depend on data or on a while loop (a "
                f"{unit[:-1]} per "
                "active lane where an address is read from memory"
                + (f"; {'; '.join(loads.trips)}" if loads.trips else "") + ")")
    if loads.unpredicted:
        msg += (f"; not counted: {', '.join(sorted({a.text for a, _ in loads.unpredicted}))} "
                f"({loads.unpredicted[0][1]})")
    d = info("feedback-requests", msg, lane.node.span)
    d.data.update(requests=loads.requests, sectors=loads.sectors,
                  sectors_per_request=spr, unit=size,
                  unpredicted=[a.text for a, _ in loads.unpredicted],
                  estimated=[a.text for a, _ in loads.estimated])
    return [d]
