"""Occupancy: how many units of the outermost par_unit with slots (blocks) are
resident at once on the execution unit that holds them (an SM), and what limits
them. Everything comes from the description:

* ``slots(block, k)`` and the slots of inner units (warps, threads) on the holder;
* the ``max_nr_units`` of the par_groups below the block (a block of more warps
  than a block may have does not run at all);
* memories on the holder that hold a memory space the block owns (shared memory):
  ``capacity``, allocated per block in ``allocation_unit``s plus ``reserved``;
* register files (non-addressable memories) in the holder or in execution units
  inside it (an H100 SM has 4 partitions, each with its own file): a unit with
  slots on the file's execution unit (a warp) gets its registers there, rounded
  up to the ``allocation_unit``; without such a unit the block gets them.

Registers per thread are the vendor compiler's when the caller passed them
(:class:`mcl.analyses.resources.Resources`), else an estimate
(:mod:`mcl.analyses.registers`), said to be one.
With the same registers and shared memory this is the CUDA occupancy
calculator's arithmetic for compute capability 9.0 (checked against
``cuOccupancyMaxActiveBlocksPerMultiprocessor`` on 649 kernels by
benchmarks/fidelity).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcl.analyses.register_unrolling import growth_share, long_counted_loops, prefetched
from mcl.analyses.registers import (
    recomputable,
    register_demand,
    squeeze_slack,
    unrolling_slack,
)
from mcl.analyses.resources import (
    block_holder,
    max_registers,
    register_file_bytes,
    register_files,
)
from mcl.analyses.values import bytes_text

if TYPE_CHECKING:
    from mcl.analyses.functions import KernelView


@dataclass
class Occupancy:
    unit: str               # the par_unit resident on the holder (block)
    holder: Any             # the execution unit (smp)
    resident: int
    slots: int
    limits: dict[str, tuple[int, str]]   # reason -> (units that fit, explanation)
    limiting: list[str]
    anchor: Any
    registers: int | None = None         # per executing unit, as used
    registers_source: str = "estimated"  # or the vendor compiler's name
    threads: int | None = None           # executing units per block
    #: (unit, slots) where the resident blocks take every slot the holder has for the
    #: executing unit (every thread slot busy), else None
    full: tuple[str, int] | None = None
    executing_slots: int | None = None   # slots the holder has for the executing unit


def _inside(view: KernelView, block: Any, holder: Any) -> bool:
    pos = view.hardware.position(block)
    return pos is not None and (block is holder or any(a is holder for a in pos.ancestors))


def registers_per_unit(view: KernelView, threads: int | None) -> tuple[int, str]:
    """Registers per executing unit and who says so. The estimate is capped where
    the target caps the compiler (so that a block fits; it spills beyond), lowered to
    an occupancy step just below it where the compiler can reschedule to reach it
    (:func:`_squeezed`, with what :func:`registers.squeeze_slack` and
    :func:`registers.recomputable` say it can give back), else grown where loops
    are unrolled at run time (:func:`_grown`, by the share :func:`register_unrolling.growth_share`
    says), or by as many again as an unrolled loop keeps in flight from device memory
    and by the next fragments it reads from on-chip memory
    (:func:`register_unrolling.prefetched`), where that keeps the same blocks resident.

    Growth for loops unrolled at run time goes up to a full SM's share of registers
    (32 on the H100) and, for a kernel that needs more, up to its occupancy step too
    where no loop is unrolled by a factor (:func:`register_unrolling.long_counted_loops`,
    also at a level whose compiler's factor was not measured):
    unrolling a run-time loop, the compiler schedules the loads of its iterations and
    of the constant nests inside them (matmul hopper v1's fragments of the k-tile,
    loaded ahead of their multiply-adds) as far as the registers that keep the blocks
    resident allow: hopper v1 with tm = 2 needs about 57 and takes 64 (62 with bk =
    8), the most for 2 blocks of 512 threads or 1 of 1024; with bn = 16, 113 and 128;
    with tm = tn = 8, 221 and 255. A loop unrolled by a factor keeps the loads in
    flight of its copies (:func:`register_unrolling.partly_unrolled_loads` counts
    them), no more: matmul gpu_v3 and nvidia at 1024 threads take 42, where 64 would
    keep their one block. Nor where the compiler gives up its unrolling's registers
    for blocks (:func:`_busy_registers`). On the 367 recorded kernels
    (benchmarks/fidelity/registers_fit.py): 325 -> 330 within ±10% (examples 56 -> 56,
    sweep 269 -> 274: the six above in, hopper v1 with bk = 32 out, 105 -> 128 where
    the compiler takes 100); resident blocks with the estimate unchanged (55 of 58,
    279 of 309). Growing past 32 also where a loop is unrolled by a factor: 328 (matmul
    gpu_v3 and nvidia out, 42 -> 64)."""
    res = view.resources
    if res is not None:
        return res.registers, res.source
    n = estimated_demand(view)
    cap = max_registers(view.hardware, threads) if threads else None
    if cap:
        n = min(n, cap)
        if threads:
            fewer = _squeezed(view, n, threads, squeeze_slack(view.num, view.sym)
                             + recomputable(view.num, view.sym))
            busy = _busy_registers(view, threads)
            slack = unrolling_slack(view.num, view.sym)
            if fewer < n:
                n = fewer
            elif busy is not None and busy < n <= busy + slack:
                pass        # it gives up its unrolling's registers: no growth (below)
            elif share := growth_share(view.sym):
                # beyond a full SM's threads only where no loop is unrolled by a factor
                full_only = bool(long_counted_loops(view.num, view.sym))
                n += math.ceil((_grown(view, n, cap, threads, full_only=full_only) - n) * share)
            elif ahead := (prefetched(view.num, view.sym)
                           + prefetched(view.num, view.sym, on_chip=True)):
                n = _grown(view, n, min(cap, n + ahead), threads, full_only=False)
            if busy is not None and busy < n <= busy + slack:
                n = busy
    return n, "estimated"


def estimated_demand(view: KernelView) -> int:
    """:func:`registers.register_demand` of the view's kernel, computed once per view
    (the occupancy and the spills both start from it)."""
    if "register_demand" not in view.memo:
        view.memo["register_demand"] = register_demand(view.num, view.sym)
    return view.memo["register_demand"]


def arrays_beyond_cap(view: KernelView, cap: int) -> int:
    """The used register-array elements per thread where they alone are more than the
    ``cap`` a thread of the block may have (:func:`max_registers`), else 0: the
    compiler keeps some or all of them in local memory. On the H200 (heldout/ of
    benchmarks/results/fidelity/raw/h200_2026-11-29) matmul hopper v11 and v12 with 512
    threads a block (154 to 168 elements, a cap of 128) keep them there whole, 32 to 40
    registers and 1.7 to 2.0 kB of local memory a thread; gesummv hopper v2 with 4 rows
    (320 elements, a cap of 255) keeps 255 registers and spills 472 B. Which, the count
    does not tell: the estimate stays at the cap."""
    from mcl.analyses.register_values import array_elements
    arrays = sum(array_elements(view.num).values())
    return arrays if arrays > cap else 0


#: the share of its thread slots that a holder keeps busy where the compiler gives up
#: the loads in flight of its unrolled loops for it (:func:`_busy_registers`)
_BUSY = 0.75


def _busy_registers(view: KernelView, threads: int) -> int | None:
    """The most registers per thread with which whole blocks of ``threads`` keep
    :data:`_BUSY` of the holder's thread slots busy (the H100: 1536 of 2048 threads,
    6 blocks of 256, 3 of 512, 12 of 128, 24 of 64: 40 registers); None where that
    share is no whole number of blocks (1024 threads: one block is half, two are all)
    or more blocks than the holder has slots for.

    The compiler takes that count, not more, where it can reach it by giving up the
    registers its unrolling costs (:func:`registers.unrolling_slack`): matmul nvidia
    v1 and hopper take 40 registers for every tile of x = 4, 8 and 16 rows and every
    block of 64 to 512 threads, where the estimate with their loops unrolled is 43 to
    91, and 32 (all 8 blocks) with x = 2 (35 estimated). Other kernels settle at the
    same 40 (convolution hopper v4 and black_scholes hopper v2 at 64 to 512 threads;
    at 1024 threads, where the share is no whole number of blocks, 64 and 43).
    Checked on the 599 recorded kernels (registers_fit.py): 490 -> 497 within ±10%
    (the seven variants of nvidia v1 and hopper with x = 8, x = 16 or 64 threads;
    none moves away); split halves 246 -> 246 of 284 and 244 -> 251 of 315: the
    share is fitted on nvidia v1 and hopper, both in the second half (the first has
    no kernel it moves)."""
    hw = view.hardware
    holder = block_holder(hw)
    executing = hw.executing_unit()
    if holder is None or executing is None or threads <= 0:
        return None
    thread_slots = [s.per_holder for s in hw.slots(executing.name)
                    if s.holder is holder and isinstance(s.per_holder, int)]
    block_slots = [s.per_holder for g in hw.par_groups() if g.unit is not None
                   for s in hw.slots(g.unit.name)[:1]
                   if s.holder is holder and isinstance(s.per_holder, int)]
    if not thread_slots:
        return None
    busy = _BUSY * thread_slots[0]
    blocks = int(busy // threads)
    if blocks < 1 or blocks * threads != busy or (block_slots and blocks > block_slots[0]):
        return None
    return registers_for_blocks(view, blocks, threads)


#: the largest share of its registers the compiler gives back to gain occupancy
_SQUEEZE = 0.2
#: the largest share of its registers the compiler gives back per share of resident
#: blocks gained (:func:`_squeezed`)
_WORTH = 0.55


def _squeezed(view: KernelView, n: int, threads: int, slack: int) -> int:
    """Registers a compiler takes for a kernel that needs ``n``, just above an
    occupancy step: the most that keeps one more block resident, where reaching it
    costs at most ``slack`` registers (:func:`registers.squeeze_slack`) and at most a
    fifth of ``n``, and where the share of ``n`` given back is at most :data:`_WORTH`
    times the share of blocks gained; else ``n``. (matmul hopper v1 at 256 threads:
    about 89 registers, 2 blocks; the compiler takes 80 for 3, a tenth of its registers
    for half as many blocks again. convolution hopper v2: about 57, 4 blocks; 48 would
    make 5, a sixth of its registers for a quarter more blocks, and it keeps 59.)

    The share, on the 369 recorded kernels (benchmarks/fidelity/registers_fit.py): 317
    -> 321 within ±10% and occupancy with the estimate 331 -> 336 (examples 54 -> 55
    for both: convolution hopper v2); 0.4 to 0.6 all give 319 to 321. Split halves
    (the example versions, each with its variants, sorted by name and dealt
    alternately): fitted on the first (181 kernels) any share from 0.4 to 0.6 keeps
    153-154 within ±10% and takes occupancy from 165 to 166-167, which gives the
    second (188) 166-167 and 169-170 (from 163 and 166); fitted on the second, 0.55 to
    0.6, which gives the first 154 and 166.

    Checked, when it was introduced, on the 653 kernels then recorded (tests/analyses/
    fidelity/vendor.json, benchmarks/fidelity/registers_fit.py; the estimate has
    changed since, see registers.register_demand): 29 more within ±10% of the compiler
    (convolution hopper v1 and v2, matmul hopper v2), none fewer; without the bound
    to the fragments, kernels that prefetch device memory into registers (matmul
    hopper v6, v7, v10) would step down where the compiler does not."""
    occ = occupancy_by_registers(view, n, threads)
    if occ is None or slack <= 0:
        return n
    for r in range(n - 1, max(1, n - slack, math.ceil((1 - _SQUEEZE) * n)) - 1, -1):
        more = occupancy_by_registers(view, r, threads)
        if more is not None and more > occ:
            # worth it where the share of registers given back is small against the
            # share of blocks gained
            return r if not occ or (n - r) / n <= _WORTH * (more - occ) / occ else n
    return n


def _grown(view: KernelView, n: int, cap: int, threads: int, full_only: bool = True) -> int:
    """Registers a compiler takes for a kernel that needs ``n`` and has loops to
    unroll: up to what keeps the same blocks resident (at most ``cap``), and where
    ``full_only``, not beyond what a full SM of threads allows (more would not help
    those loops)."""
    hw = view.hardware
    holder = block_holder(hw)
    slots = [s for s in hw.slots(hw.executing_unit().name) if s.holder is holder] \
        if holder is not None and hw.executing_unit() is not None else []
    total = register_file_bytes(hw)
    full = total // 4 // slots[0].per_holder if slots and total and \
        isinstance(slots[0].per_holder, int) else n
    target = max(n, full) if full_only else cap
    occ = occupancy_by_registers(view, n, threads)
    best = n
    for r in range(n + 1, min(cap, target) + 1):
        if occupancy_by_registers(view, r, threads) != occ:
            break
        best = r
    return best


def occupancy_by_registers(view: KernelView, regs: int, threads: int) -> int | None:
    """Blocks that ``regs`` registers per thread let a holder keep resident."""
    hw = view.hardware
    holder = block_holder(hw)
    executing = view.executing_unit()
    unit = next((g.unit.name for g in hw.par_groups() if g.unit is not None
                 and hw.slots(g.unit.name) and hw.slots(g.unit.name)[0].holder is holder),
                None)
    if holder is None or unit is None or executing is None:
        return None
    fits = [f for m in register_files(hw) if _inside(view, m, holder)
            for f in [_blocks_by_registers(view, m, holder, unit, executing, regs, threads)]
            if f is not None]
    return min(fits) if fits else None


def registers_for_blocks(view: KernelView, blocks: int, threads: int) -> int | None:
    """The most registers per thread (at most what the compiler may take for a block of
    ``threads``) with which a holder keeps ``blocks`` blocks resident; None where even
    one register per thread does not."""
    cap = max_registers(view.hardware, threads)
    for r in range(cap or 0, 0, -1):
        fits = occupancy_by_registers(view, r, threads)
        if fits is not None and fits >= blocks:
            return r
    return None


def occupancy(view: KernelView) -> Occupancy | None:
    """How many units of the outermost par_unit with slots fit on its holder."""
    hw = view.hardware
    executing = view.executing_unit()
    for g in hw.par_groups():
        u = g.unit
        if u is None or u.name == executing:
            continue
        slots = view.slots(u.name)
        s = slots[0] if slots else None
        if s is None or not isinstance(s.per_holder, int):
            continue
        holder = s.holder
        limits: dict[str, tuple[int, str]] = {"slots": (s.per_holder, f"{s.per_holder} slots")}
        inner_slots: dict[str, tuple[int, int]] = {}   # unit -> (per block, slots)
        units = hw.par_units()
        # par_groups below the block: a block of more units than allowed does not run
        for inner_g in hw.par_groups()[hw.par_groups().index(g) + 1:]:
            most = inner_g.max_nr_units if inner_g.max_nr_units is not None else inner_g.nr_units
            size = view.group_size(inner_g.name)
            if isinstance(most, int) and size is not None and size > most:
                limits[f"{inner_g.name} per {u.name}"] = (
                    0, f"{size} {inner_g.name} per {u.name}, at most {most}")
        # inner units with slots on the same holder (threads, warps)
        for inner in units[units.index(u) + 1:]:
            for si in view.slots(inner.name):
                if si.holder is not holder or not isinstance(si.per_holder, int):
                    continue
                per = view.units_per(u.name, inner.name)
                if per is None or per == 0:
                    continue
                limits[f"{inner.name}s"] = (
                    si.per_holder // per,
                    f"{per} {inner.name}s per {u.name} of {si.per_holder} {inner.name} slots")
                inner_slots[inner.name] = (per, si.per_holder)
        # memory spaces owned by the unit, held by a memory on the holder
        anchor = next((lp.node for lp in view.sym.foreach_loops()
                       if lp.group is g or getattr(lp.group, "name", None) == g.name), None)
        for ms in u.memory_spaces:
            used = view.size_memory_space(ms.name)
            if not used:
                continue
            for m in hw.memories_holding(ms.name):
                cap = m.capacity
                if not isinstance(cap, int | float) or not _inside(view, m, holder):
                    continue
                taken = m.allocated(used + m.reserved)
                extra = f" ({bytes_text(taken)} allocated)" if taken != used else ""
                limits[f"{ms.name} memory"] = (
                    int(cap // taken),
                    f"{bytes_text(used)}{extra} per {u.name} of {bytes_text(cap)} "
                    f"{ms.name} memory per {holder.name}")
                decls = view.declarations_in(ms.name)
                if decls:
                    anchor = decls[0].node
        # registers
        threads = view.units_per(u.name, executing) if executing else None
        regs, source = None, "estimated"
        if threads:
            regs, source = registers_per_unit(view, threads)
            said = "estimated" if source == "estimated" else source
            for m in register_files(hw):
                if not _inside(view, m, holder):
                    continue
                fit = _blocks_by_registers(view, m, holder, u.name, executing, regs, threads)
                if fit is None:
                    continue
                if fit >= min(v for v, _ in limits.values()):
                    # registers limit only where they alone stop one more block: the
                    # slots of the file's execution unit (an H100 partition's 16 warps)
                    # are the holder's (64 warp slots), said as such (reduction hopper
                    # v2: 20 registers alone would let 10 blocks of 256 threads in, the
                    # warps 8)
                    fit = _blocks_by_registers(view, m, holder, u.name, executing, regs,
                                               threads, alone=True)
                total = (register_file_bytes(hw) or 0) // 4
                limits["registers"] = (
                    fit, f"{'about ' if source == 'estimated' else ''}{regs} registers per "
                    f"{executing} ({said}), {regs * threads} per {u.name} of {total} per "
                    f"{holder.name}")
        resident = max(0, min(v for v, _ in limits.values()))
        limiting = [k for k, (v, _) in limits.items() if v == resident and k != "slots"]
        if view.missing:
            return None
        per, most = inner_slots.get(executing, (0, 0))
        full = (executing, most) if per and resident * per == most else None
        return Occupancy(u.name, holder, resident, s.per_holder, limits, limiting, anchor,
                         regs, source, threads, full, most or None)
    return None


def _blocks_by_registers(view: KernelView, m: Any, holder: Any, block: str,
                         executing: str, regs: int, threads: int,
                         alone: bool = False) -> int | None:
    """Blocks whose registers fit in the register files ``m`` of one holder, where the
    file's execution unit has slots for the units that get their registers there (an
    H100 partition: 16 warps) no more than those slots hold, unless ``alone`` (what the
    registers alone allow)."""
    hw = view.hardware
    copies = hw.instances_within(m, holder) or 1
    pos = hw.position(m)
    home = pos.ancestors[-1] if pos and pos.ancestors else holder
    cap = int(m.capacity)
    # a unit with slots on the file's own execution unit gets its registers there
    if home is not holder:
        for c in home.calls:
            unit = getattr(c, "par_unit", None)
            per_home = getattr(c, "count", None)
            if unit is None or unit in (block, executing) or not isinstance(per_home, int):
                continue
            per_block = view.units_per(block, unit)
            lanes = view.units_per(unit, executing)
            if not per_block or not lanes:
                continue
            each = m.allocated(regs * 4 * lanes)
            fit_home = cap // each if each else per_home
            if not alone:
                fit_home = min(per_home, fit_home)
            return (fit_home * copies) // per_block
    each = m.allocated(regs * 4 * threads)
    return (cap * copies) // each if each else None
