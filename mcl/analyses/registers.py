"""The estimate of registers per executing unit (thread) for a kernel that no vendor
compiler has seen: what the kernel's values need, and whether the compiler may give
some back or take more. It is an estimate, said to be one wherever it is printed
(:mod:`mcl.analyses.occupancy` caps, lowers or grows it to an occupancy step).

What it counts (:func:`register_demand`): one register per named value the compiler
keeps (scalars, used register-array elements, loop indices; not the constants it
folds into instructions; of a fragment read through a sliding window, only the
window; nothing of what only feeds a value read beyond a register array: which
elements count is :mod:`mcl.analyses.register_elements`' business), the 64-bit
addresses of device memory that a loop keeps (:func:`_address_registers`), the
values of several iterations that an unrolled loop loads at once
(:func:`_merged_loads`), the next values an unrolled loop loads from device memory
while the current ones are used (:func:`prefetched`), the loads in flight of the
copies of a loop the compiler unrolls by a factor (:func:`_partly_unrolled_loads`),
the loads one iteration of a loop it keeps rolled adds up (:func:`_rolled_loads`),
and a small fitted offset.
What the compiler may give back to reach an occupancy step: fragments loaded from
on-chip memory and the values loaded with them (:func:`squeeze_slack`), one address
it can compute again, or any one value (:func:`recomputable`); whether it takes more
for loops it unrolls at run time (:func:`grows`).
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import sympy

from mcl.analyses.kernel import Kernel
from mcl.analyses.kernel_syntax import names_in
from mcl.analyses.register_elements import (
    ENUMERATED,
    dead_reads,
    fragments,
    passed_elements,
    unused_elements,
)
from mcl.analyses.stats import register_spaces
from mcl.mcpl import ast


def register_demand(k: Kernel, sym: Kernel | None = None) -> int:
    """An estimate of what the kernel's own values need, in 32-bit registers per
    unit: one register per value the compiler keeps (:func:`_named_registers`: each
    scalar, each register-array element that is used, the loop indices; not the
    constants that need none), two per 64-bit address of device memory that a loop
    keeps (:func:`_address_registers`), plus the values it loads together in
    unrolled loops (:func:`_merged_loads`, :func:`prefetched`) and in the copies of
    loops unrolled by a factor (:func:`_partly_unrolled_loads`) and in one
    iteration of a loop kept rolled (:func:`_rolled_loads`), plus :data:`_OFFSET`.
    The symbolic kernel ``sym`` tells constant trip counts and offsets from run-time
    ones; without it every array parameter counts one address.

    Calibration (benchmarks/fidelity/registers_fit.py against the NVIDIA compiler's
    counts of tests/analyses/fidelity/vendor.json, H100): the slopes (one register per
    value, two per address) are not fitted, the offset is (0). On the 369 recorded
    kernels that are not wrong (58 examples, 311 sweep variants), after the cap,
    step-down and growth of occupancy.registers_per_unit: 56, 270 and 326 within ±10%
    (88%). What was tried on the way, kept or not, with its figures:
    benchmarks/fidelity/CALIBRATION.md. With an offset of 1, matmul nvidia v1 at the
    nvidia level (the paper's Table II: 4 of 8 blocks, tests/analyses/test_feedback.py)
    would need 33 registers and lose a block."""
    extra = _merged_loads(k, sym) + prefetched(k, sym) + _partly_unrolled_loads(k, sym) \
        + _rolled_loads(k, sym) if sym is not None else 0
    return max(8, round(_named_registers(k, sym) + _address_registers(k, sym) + extra)
               + _OFFSET)


#: registers the compiler needs besides the kernel's values, fitted (see above)
_OFFSET = 0


#: the widest load, in bytes (LDS.128 / LDG.128)
_VECTOR_BYTES = 16
#: constant-trip loops up to this many iterations are unrolled fully (longer ones by
#: a factor, without loads of later groups in flight)
_FULL_UNROLL = 64
#: the most accesses (registers too; its inner loops unrolled) in the body of a loop that
#: the compiler unrolls by a factor (:func:`partial_unroll`): a larger body is not
#: copied. The
#: recorded loops of build-time trip count beyond :data:`_FULL_UNROLL` hold at most 49
#: (matmul nvidia, gpu v3, nvidia v1, hopper: unrolled, their counts show it) or at
#: least 2336 (the phase loops of matmul hopper v10 - v12, bodies of thousands of
#: instructions: not unrolled, their counts are met without it); any bound between
#: the two gives the same counts.
_PARTIAL_BODY = 256


def _merged_loads(k: Kernel, sym: Kernel, direct_only: bool = False) -> int:
    """Registers for values of several iterations of an unrolled loop that the
    compiler loads at once: a read of an on-chip memory (shared, local, constant:
    not the device memory, not registers) in a nest of constant-trip loops inside a
    run-time loop or a loop unrolled by a factor (:func:`partly_unrolled`, its trip
    count built in: matmul nvidia's ``l_a[ei][k]`` in ``k < p``, ``p`` the size of
    ``l_a``, is the nest ``k``, ``ei``), whose address steps by one element along an
    outer loop of the nest (matmul hopper v1: ``l_a[ti * tm + ei, q]`` in the k-tile
    loop ``q``), is merged over w = 16 bytes / element iterations of that loop into
    one vector load, so the values of w iterations of the inner loops are live
    together (w - 1 more
    than the fragment the source keeps), and in a fully unrolled loop the next group
    of w is loaded while the current one is used. ``direct_only``: only the reads
    that do not fill a register array (:func:`unrolling_slack`)."""
    from mcl.analyses.stats import main_space
    constant = {id(lp.node) for lp in sym.loops if lp.kind == "for"
                and lp.trips is not None and not lp.trips.free_symbols
                and not lp.approximate}
    runtime = {id(lp.node) for lp in sym.loops if lp.kind != "foreach"} - constant
    # a loop unrolled by a factor (its trip count known when the kernel is built) is
    # kept as a loop around the nest, and its iterations merge as a constant loop's
    partly = {id(lp.node) for lp in partly_unrolled(k, sym)}
    constant |= partly
    runtime |= partly
    spaces = register_spaces(k.hardware)
    device = main_space(k)
    extra = 0
    filling: set[int] = set()
    if direct_only:
        from mcl.mcpl import ast
        by_node = {id(x.node): x for x in k.accesses}
        for st in ast.walk(k.function.body):
            if isinstance(st, ast.Assign) and (t := by_node.get(id(st.target))) is not None \
                    and t.space in spaces:
                filling.add(id(st.value))
    for a in k.accesses:
        if a.write or a.space in spaces or a.space == device or a.offset is None \
                or id(a.node) in filling:
            continue
        if not any(id(lp.node) in runtime for lp in a.loops):
            continue
        nest: list = []
        for lp in reversed(a.loops):
            if id(lp.node) not in constant or lp.trips is None or not lp.trips.is_number:
                break
            nest.insert(0, lp)
        for i, lp in enumerate(nest[:-1]):
            var = [s for s in a.offset.free_symbols if s.name == lp.var]
            if not var or a.offset.diff(var[0]) != 1 or int(lp.trips) < 2:
                continue
            inner = 1
            for q in nest[i + 1:]:
                inner *= int(q.trips)
            trips = int(lp.trips)
            w = min(max(1, _VECTOR_BYTES // max(1, a.element_bytes)), trips)
            extra += inner * (w - 1)
            if trips <= _FULL_UNROLL:
                extra += inner * min(trips - w, w)
            break
    return extra


def partial_unroll(k: Kernel) -> int:
    """The factor by which the target's compiler unrolls a counted loop that it does
    not unroll completely: ``partial_unroll`` in the ``[device]`` table of the target
    file (hopper.target: 4, as the SASS of NVIDIA's OpenCL driver for the H100 shows
    for loops of run-time trip count, and matmul nvidia's registers for its counted
    loop over p); 1 where
    no compiler of the level was measured (the nvidia level of the paper's Table II,
    whose matmul nvidia v1 keeps 4 of 8 blocks with the loop's own values: 32
    registers)."""
    from mcl.analyses.target_settings import device_settings
    factor = device_settings(k.hardware).get("partial_unroll", 1)
    return factor if isinstance(factor, int) and factor > 1 else 1


def partly_unrolled(k: Kernel, sym: Kernel) -> list[Any]:
    """The loops of ``k`` that the compiler unrolls by a factor
    (:func:`partial_unroll`; none where it is 1): counted
    loops whose trip count is known when the kernel is built
    (:func:`_build_time_trips`: a number, or sizes built in, as matmul nvidia's ``k <
    p`` where ``p`` sizes the shared array) and is too long to unroll completely
    (beyond :data:`_FULL_UNROLL`), with a small body (at most :data:`_PARTIAL_BODY`
    accesses, of registers too, its inner loops unrolled: a measure of its
    instructions, the multiply-adds of an accumulation among them)."""
    if partial_unroll(k) == 1:
        return []
    sym_loops = {id(lp.node): lp for lp in sym.loops}
    out = []
    for lp in k.loops:
        s = sym_loops.get(id(lp.node))
        if lp.kind != "for" or s is None or not _build_time_trips(s, sym) \
                or lp.trips is None or not lp.trips.is_number \
                or int(lp.trips) <= _FULL_UNROLL:
            continue
        body = 0
        for a in k.accesses:
            if lp in a.loops:
                inner = [int(q.trips) if q.trips is not None and q.trips.is_number
                         else _PARTIAL_BODY + 1 for q in a.loops[a.loops.index(lp) + 1:]]
                body += math.prod(inner)
        if body <= _PARTIAL_BODY:
            out.append(lp)
    return out


def _partly_unrolled_loads(k: Kernel, sym: Kernel) -> int:
    """Registers for the loads of device memory in the copies of a loop that the
    compiler unrolls by a factor (:func:`partly_unrolled`): each read, in each
    completely unrolled iteration of the loops inside (up to :data:`_FULL_UNROLL`),
    is as many loads as the factor, their values in flight together (matmul
    nvidia: ``bkj = b[k, j]`` for four ``k``), and where the offset steps by a size
    known only at run time along the loop (a row of ``b``: ``m`` elements), each copy
    keeps an address of its own that steps with the loop, as a run-time loop's
    accesses do (:func:`_address_registers`). The reads of on-chip memory that step
    by one element along the loop merge into 128-bit loads: :func:`_merged_loads`.

    Checked on the 599 recorded kernels (registers_fit.py): 482 -> 490 within ±10%,
    examples 50 -> 54 (matmul nvidia, gpu v3, nvidia v1 and hopper, which the
    compiler builds with 40 to 42 registers where the estimate grew to 32 or took 34:
    now 41 to 43), sweep 432 -> 436 (gpu v3 with x = 8: 57, the compiler 60; nvidia
    with x = 16: 64, as the compiler, which spills; nvidia v1 and hopper with 512
    threads); split halves 242 -> 246 of 284 and 240 -> 244 of 315. None leaves
    ±10%; with x = 2 they move from 32 to 35 (the compiler 32),
    with x = 8 and 16 in nvidia v1 and hopper from 50 and 82 to 59 and 91 (the
    compiler 40: there it does not unroll the loop, or keeps fewer loads in flight,
    for a reason not found). Without the addresses: 35 for x = 4, short of the
    compiler's 40 to 42 by 15%."""
    from mcl.analyses.stats import main_space
    device = main_space(k)
    dead = dead_reads(k)
    by_node = {id(a.node): a for a in sym.accesses}
    extra = 0
    factor = partial_unroll(k)
    for lp in partly_unrolled(k, sym):
        for a in k.accesses:
            if a.write or a.space != device or id(a.node) in dead or lp not in a.loops:
                continue
            inner = a.loops[a.loops.index(lp) + 1:]
            if any(q.trips is None or not q.trips.is_number
                   or int(q.trips) > _FULL_UNROLL for q in inner):
                continue
            copies = math.prod(int(q.trips) for q in inner)
            s = by_node.get(id(a.node))
            offset = sympy.sympify(s.offset) if s is not None and s.offset is not None else None
            var = next((x for x in offset.free_symbols if x.name == lp.var), None) \
                if offset is not None else None
            run_time_stride = var is not None and not offset.diff(var).is_number
            words = _ADDRESS_BYTES // 4 if run_time_stride else 0
            extra += (factor - 1) * copies * (1 + words)
    return extra


#: uses per value, in the unrolled iteration that loads it, from which the compiler
#: loads a register array's next values while the current ones are used (fitted on
#: convolution hopper v4 and v5: 18 uses, rows = 4 and cols = 8, take no registers
#: for the next row; 24, rows = 8 and cols = 4, take them)
_PREFETCH_USES = 20


def prefetched(k: Kernel, sym: Kernel | None) -> int:
    """Registers for the next iteration's values of a register array that a loop
    the generated code unrolls completely fills from device memory, where each value
    is used at least :data:`_PREFETCH_USES` times before the array is filled again
    (convolution hopper v5: ``line[4 v + u] = in4[i + r, q + v, u]`` for each input
    row ``r``, then 288 multiply-adds on its 12 values): unrolled, the compiler
    loads row ``r + 1`` while row ``r`` is used, and where registers allow without
    losing a resident block, the row after it too (occupancy.registers_per_unit
    grows the count by as much again: 72, 80 and 92 registers at 128, 256 and 512
    threads a block where the estimate is 69). A value used once (gesummv hopper
    v2's ``va``) is consumed as it arrives; with fewer uses (hopper v4, rows = 4:
    12) the compiler keeps one row (40 registers, estimated 41). 0 for a build that
    is not specialised, whose loops over sizes stay loops.

    Checked on the 599 recorded kernels (registers_fit.py): 453 -> 481 within ±10%
    (convolution hopper v4 22 -> 29 of 33, v5 9 -> 30 of 33; no other kernel
    moves); split halves 221 -> 242 of 284 and 232 -> 239 of 315."""
    from mcl.analyses.stats import main_space
    from mcl.analyses.unrolled import unrolled
    from mcl.mcpl import ast
    built = _specialised_sizes(sym)
    if not built:
        return 0
    device = main_space(k)
    spaces = register_spaces(k.hardware)
    sym_loops = {id(lp.node): lp for lp in sym.loops}
    by_node = {id(a.node): a for a in k.accesses}

    def trips(loops) -> int | None:
        counts = [sympy.sympify(lp.trips) if lp.trips is not None else None for lp in loops]
        return math.prod(int(c) for c in counts) if all(
            c is not None and c.is_number for c in counts) else None

    extra = 0
    counted: set[str] = set()
    for s in ast.walk(k.function.body):
        if not isinstance(s, ast.Assign) or s.op != "=":
            continue
        t = by_node.get(id(s.target))
        if t is None or t.space not in spaces or t.name in counted or not any(
                (a := by_node.get(id(x))) is not None and not a.write and a.space == device
                for x in ast.walk(s.value)):
            continue
        # the innermost loop around the fill whose every iteration fills it again
        outer = next((lp for lp in reversed(t.loops) if lp.var not in t.depends), None)
        if outer is None or not unrolled(sym_loops.get(id(outer.node)), outer, built) \
                or int(sympy.sympify(outer.trips)) < 2:
            continue
        filled = trips(t.loops[t.loops.index(outer) + 1:])
        uses = [trips(a.loops[a.loops.index(outer) + 1:]) for a in k.accesses
                if a.name == t.name and not a.write and outer in a.loops]
        if filled and None not in uses and sum(uses) >= _PREFETCH_USES * filled:
            counted.add(t.name)
            extra += filled
    return extra


def grows(k: Kernel) -> bool:
    """Whether the kernel has a loop whose trip count is only known at run time
    (:func:`_build_time_trips`) and that reads device memory without atomic updates
    of device memory: the compiler unrolls it and keeps several iterations' loads in
    flight, using the registers it may take without losing occupancy (an atomic of
    device memory in the loop orders the iterations; one of an on-chip memory cannot
    touch what the loads read, but it grows the count less: :func:`growth_share`).
    Reads that only feed values nothing uses (:func:`dead_reads`) are no loads: the
    compiler removes them and the loop does nothing to unroll."""
    return bool(_growing_loops(k))


def _growing_loops(k: Kernel) -> list[Any]:
    """The loops that make the kernel grow (:func:`grows`)."""
    from mcl.analyses.stats import main_space
    device = main_space(k)
    dead = dead_reads(k)
    return [lp for lp in k.loops if lp.kind in ("for", "while")
            and not _build_time_trips(lp, k)
            and not any(lp in site.loops and (site.target is None
                                              or site.target.space == device)
                        for site in k.atomics)
            and any(lp in a.loops and not a.write and a.space == device
                    and id(a.node) not in dead for a in k.accesses)
            and not _kept_rolled(lp, k, device)]


def _kept_rolled(lp: Any, k: Kernel, device: str | None) -> bool:
    """Whether the compiler keeps the run-time loop ``lp`` of the symbolic kernel ``k``
    rolled, as the SASS of the recorded kernels shows
    (benchmarks/results/fidelity/raw/h200_2026-11-29/sass_register_misses): a ``while``
    loop whose step is a run-time value (reduction hopper v2's ``i += stride``, the
    stride computed from n: 20 registers, its 4 loads an iteration; spmv_csr's
    ``k += 64`` is unrolled), and a loop around a guarded run of 4 adjacent elements of
    device memory, which the generated code reads as one 128-bit access after testing
    the run's alignment, with the element-by-element form beside it (reduction hopper
    v3 with 1 and 2 runs an iteration: 20 and 26 registers, its own need)."""
    from mcl.analyses.functions import RUN
    if lp.kind == "while":
        run_time = _run_time_names(k, k)
        for st in _top_level(lp.node.body):
            if isinstance(st, ast.Assign) and st.op in ("+=", "-=") and \
                    isinstance(st.target, ast.Name) and \
                    st.target.id in names_in(lp.node.cond) and names_in(st.value) & run_time:
                return True
    for a in k.accesses:
        if a.write or a.space != device or lp not in a.loops or a.offset is None:
            continue
        run = a.loops[-1]
        if run is lp or run.kind != "for" or run.symbol is None or run.trips is None \
                or not (a.guarded or a.conditions):
            continue
        trips = sympy.sympify(run.trips)
        if trips.is_number and int(trips) % RUN == 0 and run.step == 1 \
                and sympy.diff(a.offset, run.symbol) == 1:
            return True
    return False


def _rolled_loads(k: Kernel, sym: Kernel) -> int:
    """Registers for the values of device memory that one iteration of a run-time
    loop the compiler keeps rolled (:func:`_kept_rolled`) loads in its completely
    unrolled inner loops and adds into a value (``sums[u] += input[i + u * nrThreads]``):
    the compiler issues the iteration's loads together, ahead of the additions, so each
    loaded value holds a register of its own until it is added; a value read into a
    named register (``x[e] = input[k]``) is that register's. Where the sum is a
    register array, no more loads than its used elements (:func:`unused_elements`: the
    others' loads are removed). The SASS of reduction hopper v2 (its ``while`` loop's
    step computed from n) shows 4 ``LDG`` an iteration before 4 ``FADD``: 20 registers,
    16 named values and addresses
    (benchmarks/results/fidelity/raw/h200_2026-11-29/sass_register_misses)."""
    from mcl.analyses.stats import main_space
    device = main_space(k)
    dead = dead_reads(k)
    spaces = register_spaces(k.hardware)
    sym_loops = {id(lp.node): lp for lp in sym.loops}
    by_node = {id(a.node): a for a in k.accesses}
    unused = unused_elements(k)
    sizes = {d.node.name: int(d.elements) for d in k.decls
             if d.node.type.is_array and d.space in spaces
             and d.elements is not None and d.elements.is_number}
    extra = 0
    for st in ast.walk(k.function.body):
        if not isinstance(st, ast.Assign) or st.op not in ("+=", "-="):
            continue
        target = by_node.get(id(st.target))
        for x in ast.walk(st.value):
            a = by_node.get(id(x))
            if a is None or a.write or a.space != device or id(a.node) in dead:
                continue
            # the innermost loop that is not a short counted one, and those inside it
            at = next((i for i in range(len(a.loops) - 1, -1, -1)
                       if not _completely_unrolled(a.loops[i])), None)
            if at is None or at == len(a.loops) - 1 \
                    or (s := sym_loops.get(id(a.loops[at].node))) is None \
                    or not _kept_rolled(s, sym, device):
                continue
            inner = a.loops[at + 1:]
            copies = math.prod(int(lp.trips) for lp in inner)
            if target is not None and target.name in sizes:
                copies = min(copies, sizes[target.name] - unused.get(target.name, 0))
            extra += copies
    return extra


def _completely_unrolled(lp: Any) -> bool:
    """Whether the compiler unrolls the loop ``lp`` of a numeric kernel completely: a
    counted loop of at most :data:`_FULL_UNROLL` iterations."""
    return lp.kind == "for" and lp.trips is not None and lp.trips.is_number \
        and int(lp.trips) <= _FULL_UNROLL


def _top_level(body: Any) -> tuple:
    """The statements at the top level of a loop's body."""
    return body.statements if isinstance(body, ast.Block) else (body,)


def growth_share(k: Kernel) -> float:
    """How much of the growth to the full-occupancy count the compiler takes
    (mcl.analyses.occupancy.registers_per_unit): none where the kernel does not grow
    (:func:`grows`); half where every loop that makes it grow also updates an on-chip
    memory atomically; all of it otherwise. The half is fitted on the only kernels
    recorded with such loops, histogram's: gpu_v1 and nvidia_v1 need 11 and take 22 at
    every block size, hopper_v1 needs 15-18 and takes 20-26; with 8 loads per iteration
    it takes 32 all the same, and with 1, 20 (those three variants stay outside ±10%).
    Within ±10% then 13 of histogram's 16 kernels instead of 3, and 453 of the 599
    recorded (443 before; split halves 221/284 and 232/315;
    benchmarks/fidelity/registers_fit.py)."""
    from mcl.analyses.stats import main_space
    growing = _growing_loops(k)
    if not growing:
        return 0.0
    device = main_space(k)
    partly = all(any(lp in site.loops and site.target is not None
                     and site.target.space != device for site in k.atomics)
                 for lp in growing)
    return 0.5 if partly else 1.0


def _build_time_trips(lp: Any, sym: Kernel) -> bool:
    """Whether the symbolic loop ``lp`` has a trip count known when the kernel is
    built: a number, or sizes the generator builds in
    (:func:`mcl.analyses.unrolled.build_time_sizes`: those of arrays declared in the
    kernel, and every const integer parameter of a kernel built specialised:
    convolution hopper v4's ``r < rows + fh - 1``). A trip count that is an estimate
    (a loop from the thread's index to a size) is not known: the loop stays."""
    from mcl.analyses.unrolled import build_time_sizes
    if lp.trips is None:
        return False
    if not lp.trips.free_symbols:
        return True
    return not lp.approximate and \
        {s.name for s in lp.trips.free_symbols} <= build_time_sizes(sym)


def squeeze_slack(k: Kernel, sym: Kernel | None = None) -> int:
    """Registers the compiler can give back without spilling to reach the next
    occupancy step, by rescheduling: the elements of register arrays loaded from an
    on-chip memory (fragments: ``aFrag[ei] = l_a[...]``, ``col[r] = l_in[...]``), and
    the values of later iterations that unrolled loops load with them
    (:func:`_merged_loads`, given the symbolic kernel ``sym``), which it can consume
    as they arrive instead of holding them all (of a fragment read through a sliding
    window, the window: :func:`passed_elements`; not the accumulators, updated
    rather than copied: :func:`fragments`). Only where the device memory is
    read solely to be copied into an on-chip memory, directly (``l_a[..] = a[..]``)
    or through registers that hold the values in flight meanwhile (a prefetch into
    registers, :func:`_staged_elements`) as long as those are fewer than the
    fragments' values: device values used by the arithmetic it keeps. 0 where it
    cannot.

    The prefetch through registers, checked on the 599 recorded kernels
    (registers_fit.py): 497 -> 504 within ±10% (matmul hopper v3 with 16 x 8 tiles at
    64 and 128 threads, 191 -> 168, as the compiler; v6 with tn = 32, 146 -> 128, the
    compiler 126; none leaves ±10%), split halves 246 -> 247 of 284 and 251 -> 257 of
    315; occupancy with the estimate: examples 54 of 58 as before, sweep 464 -> 476
    of 541. Without the bound to the values in flight (every prefetch through
    registers): 498, v5, v7 and v10 with bk = 32 stepping down to 128 where the
    compiler takes 147 to 161."""
    from mcl.analyses.stats import main_space
    from mcl.mcpl import ast
    device = main_space(k)
    spaces = register_spaces(k.hardware)
    by_node = {id(a.node): a for a in k.accesses}
    copies: set[int] = set()
    for s in ast.walk(k.function.body):
        if not isinstance(s, ast.Assign) or not isinstance(s.target, ast.Index):
            continue
        target = by_node.get(id(s.target))
        if target is not None and s.op == "=" and isinstance(s.value, ast.Index) and \
                target.space not in spaces and target.space != device:
            copies.add(id(s.value))
    staged = _staged_elements(k, copies)
    if staged is None:
        return 0
    frags = fragments(k)
    passed = passed_elements(k)
    slack = sum(int(d.elements) - passed.get(d.node.name, 0) for d in k.decls
                if d.node.name in frags and d.space in spaces
                and d.elements is not None and d.elements.is_number)
    if slack <= staged:
        return 0
    if slack and sym is not None:
        slack += _merged_loads(k, sym)
    return slack


def _staged_elements(k: Kernel, copies: set[int]) -> int | None:
    """The device-memory values a kernel keeps in flight only to copy them into an
    on-chip memory later (a prefetch through registers: ``aNext[u] = a[i, k]`` at a
    phase's start, ``l_a[.., ar] = aNext[u]`` at its end, matmul hopper v3 - v10):
    the elements of the register arrays so filled; 0 where every device read is
    copied into on-chip memory directly (``copies``: the ids of those reads); None
    where some device read is used otherwise (by the arithmetic, or kept in a
    register array that anything else reads).

    The compiler can give back the fragments' registers to reach an occupancy step
    (:func:`squeeze_slack`) only where they are more than these values, which stay
    live across the arithmetic whatever it does with the fragments' loads: matmul
    hopper v3 with 16 x 8 tiles (24 fragment values, 8 in flight) takes 168
    registers, the most for 3 blocks of 128 threads, where it needs about 191 (204
    at 256 threads, where no step is in reach); v5, v7 and v10 with bk = 32 (16
    fragment values, 24 to 32 in flight) keep 147 to 161 and one block of 256."""
    from mcl.analyses.stats import main_space
    from mcl.mcpl import ast
    device = main_space(k)
    spaces = register_spaces(k.hardware)
    by_node = {id(a.node): a for a in k.accesses}
    filled: dict[str, set[int]] = {}        # register array -> device reads filling it
    for s in ast.walk(k.function.body):
        if not isinstance(s, ast.Assign) or s.op != "=":
            continue
        t = by_node.get(id(s.target))
        if t is not None and t.space in spaces and isinstance(s.value, ast.Index) and \
                (a := by_node.get(id(s.value))) is not None and not a.write \
                and a.space == device:
            filled.setdefault(t.name, set()).add(id(s.value))
    staged = set(filled)
    for a in k.accesses:       # a staging array is read only by copies to on-chip memory
        if a.name in staged and not a.write and id(a.node) not in copies:
            staged.discard(a.name)
    through = {x for name in staged for x in filled[name]}
    if any(a.space == device and not a.write and id(a.node) not in copies | through
           for a in k.accesses):
        return None
    return sum(int(d.elements) for d in k.decls if d.node.name in staged
               and d.space in spaces and d.elements is not None and d.elements.is_number)


def recomputable(k: Kernel, sym: Kernel | None) -> int:
    """Registers the compiler can give back to reach the next occupancy step even
    where it keeps values in flight (:func:`squeeze_slack` is 0): one address that it
    can compute again (:func:`_recomputable_addresses`; matmul hopper v5 at 256
    threads: about 130 registers, the compiler takes 127 for 2 blocks), else one
    value of any kernel (:data:`_ONE_VALUE`). Not more: each costs instructions in
    the loop, and gesummv nvidia v1 keeps its rows' addresses (40 registers, not 32
    for 8 blocks of 256 threads). Besides, the registers of the copies of a loop the
    compiler unrolls by a factor (:func:`_partly_unrolled_loads`): it can keep fewer
    of their loads in flight (matmul nvidia v1 and hopper at 256 and 512 threads:
    43 estimated, the compiler takes 40, the most for 6 and 3 blocks; with x = 2, 35
    and 32 for 8 blocks; not matmul nvidia at 1024 threads, 41 and 42: 32 for a
    second block is beyond the fifth that :func:`occupancy._squeezed` allows)."""
    if sym is None:
        return _ONE_VALUE
    addresses = _recomputable_addresses(k, sym)
    return max(_ONE_VALUE, min(_ADDRESS_BYTES // 4, addresses)) \
        + _partly_unrolled_loads(k, sym)


def unrolling_slack(k: Kernel, sym: Kernel | None) -> int:
    """Registers the compiler gives up where they cost resident blocks
    (:func:`mcl.analyses.occupancy._busy_registers` says how far): those its unrolling
    adds, by unrolling a loop less and loading element by element. The copies' loads
    of a loop unrolled by a factor (:func:`_partly_unrolled_loads`), and the values of
    merged 128-bit loads (:func:`_merged_loads`) that a multiply-add consumes directly
    (matmul nvidia v1's ``sums[ei] += l_a[ei][k2] * bkj``); not those that fill a
    register array (a fragment, ``aFrag[ei] = l_a[...]`` in matmul hopper v1, whose
    elements are used again: it keeps them, 64 registers at 512 threads where giving
    them up would reach 40)."""
    if sym is None:
        return 0
    return _partly_unrolled_loads(k, sym) + _merged_loads(k, sym, direct_only=True)


#: registers any kernel can give back to reach an occupancy step: one value that the
#: compiler computes again where it is used. Checked on the 599 recorded kernels
#: (registers_fit.py): 24 move, each to the compiler's count: convolution hopper v4
#: and v5 with at most 4 rows per thread (41 -> 40 and 33 -> 32: 40 is the most that
#: keeps 6 blocks of 256 threads, 32 the most for 8) and hopper v2 with one row (36 ->
#: 32, its fragments' slack and this value); 481 -> 482 within ±10%; occupancy with the
#: estimate (blocks by registers) 483 -> 507, examples 51 -> 52 of 58. Two values: 14
#: more move, away from the compiler (matmul nvidia v1 and hopper at 256 threads, 34
#: -> 32 for 8 blocks where it takes 40 for 6), occupancy 505 and examples 50.
_ONE_VALUE = 1


def _named_registers(k: Kernel, sym: Kernel | None = None) -> int:
    """Registers for the kernel's named values: each scalar of the function (wider
    types in 32-bit parts) except the constants that take none
    (:func:`_constants_without_register`), each element of a register array that is
    used (:func:`unused_elements` are dropped), each loop index. (Addresses:
    :func:`_address_registers`.)"""
    names: dict[str, int] = {}
    spaces = register_spaces(k.hardware)
    unrolled, folded = _unrolled_indices(k, sym)
    known = _constants_without_register(k, sym, unrolled)
    unused = dict(unused_elements(k))
    for name, n in passed_elements(k).items():
        unused[name] = unused.get(name, 0) + n
    for d in k.decls:
        if d.symbol is not None and d.symbol.kind == "param":
            continue
        if d.node.type.is_array:
            if d.space in spaces:
                n = d.elements
                count = int(n) if n is not None and n.is_number else 1
                names[d.node.name] = max(0, count - unused.get(d.node.name, 0))
        elif d.node.name not in known:
            names[d.node.name] = max(1, d.element_bytes // 4)
    for lp in k.loops:
        if lp.var and lp.var not in folded:
            names.setdefault(lp.var, 1)
    return sum(names.values())


def _specialised_sizes(sym: Kernel | None) -> set[str]:
    """The sizes a kernel built specialised has as compile-time constants
    (:func:`mcl.analyses.unrolled.build_time_sizes`); none for other builds."""
    from mcl.analyses.unrolled import build_time_sizes
    return build_time_sizes(sym) if sym is not None and sym.specialized else set()


def _unrolled_indices(k: Kernel, sym: Kernel | None) -> tuple[set[str], set[str]]:
    """In a kernel built specialised, the variables of loops the generated code
    unrolls completely (:func:`mcl.analyses.unrolled.unrolled`; every loop of that
    name), and those of them that take no register: whose loops have no loop around
    them that the generated code keeps (only foreach loops and completely unrolled
    ones), so each copy of the body has its index as a constant (convolution hopper
    v4, 40 registers, where counting its six indices gives 50). Empty for other
    builds; and an unrolled nest inside a kept loop keeps its indices: there their
    count stands for values the compiler keeps that the estimate does not see
    (tried: see register_demand)."""
    from mcl.analyses.unrolled import unrolled
    from mcl.mcpl import ast
    built = _specialised_sizes(sym)
    if not built:
        return set(), set()
    sym_loops = {id(lp.node): lp for lp in sym.loops}
    whole = {id(lp.node) for lp in k.loops
             if unrolled(sym_loops.get(id(lp.node)), lp, built)}
    inside = {id(lp.node): {id(x) for x in ast.walk(lp.node)} for lp in k.loops}
    kept = {lp.var for lp in k.loops if lp.var and id(lp.node) not in whole}
    indices = {lp.var for lp in k.loops if lp.var and id(lp.node) in whole} - kept
    outer_run_time = {lp.var for lp in k.loops if lp.var in indices and any(
        id(lp.node) in inside[id(o.node)] for o in k.loops
        if o is not lp and o.kind != "foreach" and id(o.node) not in whole)}
    return indices, indices - outer_run_time


#: bytes of an address of device memory (two 32-bit registers)
_ADDRESS_BYTES = 8


def _address_registers(k: Kernel, sym: Kernel | None) -> int:
    """Registers for the addresses of device memory the kernel keeps: two (a 64-bit
    address) per address a loop of run-time trip count uses, per array otherwise.

    In a loop whose trip count is known only at run time, each access of device
    memory takes its address from a register that steps with the loop. Where the
    access is inside constant-trip loops in that loop (which the compiler unrolls),
    each iteration of those loops is an instance of the access, and instances
    whose offsets differ by a constant share one address (the difference is an
    immediate of the load: ``a[i, k1 + aq + u]`` for u = 0 .. 3 is one address;
    ``a[i + 16 s, k0 + q]`` for s = 0 .. 3, rows a run-time width ``p`` apart, is
    four: matmul hopper v1 keeps one per row it copies into shared memory). The
    offsets come from the symbolic kernel ``sym`` (sizes the kernel is built with
    count as constants). An array accessed only outside such loops counts one
    address; without ``sym``, every array parameter does."""
    words = _ADDRESS_BYTES // 4
    if sym is None:
        return words * sum(1 for p in k.function.params if p.type.is_array)
    in_loops, elsewhere = _addresses(k, sym)
    arrays = {name for name, _ in in_loops}
    return words * (len(in_loops) + len(elsewhere - arrays))


def _recomputable_addresses(k: Kernel, sym: Kernel) -> int:
    """Registers of the addresses a run-time loop keeps beyond one per array
    (:func:`_address_registers`): each is the array's first address plus a run-time
    multiple of a size, which the compiler can compute again where it needs the
    register for something else."""
    in_loops, _ = _addresses(k, sym)
    return _ADDRESS_BYTES // 4 * (len(in_loops) - len({name for name, _ in in_loops}))


def _addresses(k: Kernel, sym: Kernel) -> tuple[set[tuple[str, Any]], set[str]]:
    """The addresses of device memory that loops of run-time trip count use, as
    (array, offset less its constant term), and the arrays accessed elsewhere."""
    from mcl.analyses.stats import main_space
    from mcl.analyses.unrolled import build_time_sizes, unrolled
    device = main_space(k)
    built = build_time_sizes(sym)
    sym_loops = {id(lp.node): lp for lp in sym.loops}
    constant = {id(lp.node) for lp in k.loops
                if unrolled(sym_loops.get(id(lp.node)), lp, built)}
    fixed = {s: v for s, v in k.values.items() if s in built}
    by_node = {id(a.node): a for a in sym.accesses}
    in_loops: set[tuple[str, Any]] = set()
    elsewhere: set[str] = set()
    dead = dead_reads(k)
    for a in k.accesses:
        if a.space != device or id(a.node) in dead:
            continue
        name = a.symbol.name if a.symbol is not None else a.name
        loops = [lp for lp in a.loops if lp.kind != "foreach"]
        s = by_node.get(id(a.node))
        if s is None or s.offset is None or all(id(lp.node) in constant for lp in loops):
            elsewhere.add(name)
            continue
        inner: list = []
        for lp in reversed(loops):
            if id(lp.node) not in constant or lp.trips is None or not lp.trips.is_number:
                break
            inner.insert(0, lp)
        in_loops |= {(name, x) for x in _address_parts(s.offset, inner, fixed)}
    return in_loops, elsewhere


def _address_parts(offset: sympy.Expr, loops: list, fixed: dict[str, int]) -> set[Any]:
    """The offsets of an access over the iterations of the unrolled ``loops`` around
    it, less their constant terms (offsets that differ by a constant share an
    address register); its offset itself where they are too many to enumerate."""
    e = sympy.sympify(offset)
    e = e.subs({s: fixed[s.name] for s in e.free_symbols if s.name in fixed})
    ranges = []
    for lp in loops:
        var = next((s for s in e.free_symbols if s.name == lp.var), None)
        if var is not None:
            ranges.append((var, [lp.start + lp.step * i for i in range(int(lp.trips))]))
    if math.prod(len(r) for _, r in ranges) > ENUMERATED:
        return {e}
    symbols = [v for v, _ in ranges]
    return {sympy.expand(e.subs(dict(zip(symbols, values, strict=True)))).as_coeff_Add()[1]
            for values in itertools.product(*(r for _, r in ranges))}


def _constants_without_register(k: Kernel, sym: Kernel | None = None,
                                unrolled: set[str] = frozenset()) -> set[str]:
    """The ``const`` scalars that take no register: those whose initializer names no
    parameter, no variable and no constant computed from one (``const int nrThreads
    = nrWarps * 32``: the compiler folds them into the instructions), and those that
    the threads' code never reads, only the sizes of foreach loops, other
    constants' initializers and the outermost extents of arrays and views (no
    stride of an address) do (``const int nrBlocks = (n + 255) / 256`` as the
    number of blocks: the launch's business). A constant computed from a parameter
    that the code reads (``const int stride = chunk * nrBlocks``) is a value the
    compiler keeps, as a variable is. In a kernel built specialised (``sym``
    built so), the sizes are no parameters but compile-time constants
    (:func:`_specialised_sizes`), and a variable set once, at its declaration, from
    constants, sizes and the indices of completely unrolled loops (``unrolled``:
    :func:`_unrolled_indices`) is folded too (``float scale = 1.0 / (fh * fw)``;
    ``int y = r - e`` in each unrolled copy)."""
    outside: set[int] = set()      # nodes the threads do not evaluate
    for s in ast.walk(k.function.body):
        if isinstance(s, ast.ForEach):
            outside.update(id(x) for x in ast.walk(s.size))
        elif isinstance(s, ast.Declaration) and s.const and s.init is not None:
            outside.update(id(x) for x in ast.walk(s.init))
        elif isinstance(s, ast.Type) and s.sizes:
            outside.update(id(x) for x in ast.walk(s.sizes[0]))   # no stride
    read = {x.id for x in ast.walk(k.function.body)
            if isinstance(x, ast.Name) and id(x) not in outside}
    return _folded_names(k, sym, unrolled, read)[0]


def _run_time_names(k: Kernel, sym: Kernel | None = None) -> set[str]:
    """The scalars whose values are known only at run time: the parameters a build
    does not build in and the constants and variables computed from them."""
    return _folded_names(k, sym, set())[1]


def _folded_names(k: Kernel, sym: Kernel | None, unrolled: set[str],
                  read: set[str] | None = None) -> tuple[set[str], set[str]]:
    """(scalars that take no register, scalars known only at run time), as
    :func:`_constants_without_register` tells them apart (``read``: the names the
    threads' code reads; a constant it does not read takes none)."""
    from mcl.analyses.kernel_syntax import assigned_names
    built = _specialised_sizes(sym)
    run_time = {p.name for p in k.function.params} - built
    assigned = assigned_names(k.function)
    free: set[str] = set()
    for d in k.decls:
        node = d.node
        if node.type.is_array:
            continue
        names = names_in(node.init) if node.init is not None else set()
        if node.const and not names & run_time:
            free.add(node.name)
            continue
        if built and not node.const and node.init is not None and \
                node.name not in assigned and names <= free | built | unrolled:
            free.add(node.name)     # folded, in each unrolled copy (``int y = r - e``)
            continue
        run_time.add(node.name)
        if read is not None and node.const and node.name not in read:
            free.add(node.name)
    return free, run_time
