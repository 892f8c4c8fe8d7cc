"""What the compiler's unrolling of loops adds to a kernel's registers
(:func:`mcl.analyses.registers.register_demand` counts it): the values of several
iterations an unrolled loop loads at once (:func:`merged_loads`), the next values an
unrolled loop loads from device memory while the current ones are used
(:func:`prefetched`), the loads in flight of the copies of a loop unrolled by a factor
(:func:`partly_unrolled`, :func:`partly_unrolled_loads`), the loads one iteration of
a loop kept rolled adds up (:func:`rolled_loads`); and whether the compiler unrolls a
loop of run-time trip count and takes the registers that keep the occupancy
(:func:`grows`, :func:`growth_share`) or keeps it rolled (:func:`_kept_rolled`).
Calibrated against the NVIDIA compiler's counts and SASS
(benchmarks/fidelity/CALIBRATION.md).
"""

from __future__ import annotations

import math
from typing import Any

import sympy

from mcl.analyses.guards import run_loop
from mcl.analyses.kernel import Kernel
from mcl.analyses.kernel_syntax import names_in
from mcl.analyses.register_elements import dead_reads, on_chip_memory, unused_elements
from mcl.analyses.register_values import ADDRESS_BYTES, run_time_names, specialised_sizes
from mcl.analyses.stats import register_spaces
from mcl.mcpl import ast

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


def merged_loads(k: Kernel, sym: Kernel, direct_only: bool = False) -> int:
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
    that do not fill a register array (:func:`registers.unrolling_slack`)."""
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
    (:func:`partial_unroll`; none where it is 1): :func:`long_counted_loops`."""
    return [] if partial_unroll(k) == 1 else long_counted_loops(k, sym)


def long_counted_loops(k: Kernel, sym: Kernel) -> list[Any]:
    """The loops of ``k`` that a compiler unrolls by a factor where it does
    (:func:`partly_unrolled`), whatever the target's factor: counted
    loops whose trip count is known when the kernel is built
    (:func:`_build_time_trips`: a number, or sizes built in, as matmul nvidia's ``k <
    p`` where ``p`` sizes the shared array) and is too long to unroll completely
    (beyond :data:`_FULL_UNROLL`), with a small body (at most :data:`_PARTIAL_BODY`
    accesses, of registers too, its inner loops unrolled: a measure of its
    instructions, the multiply-adds of an accumulation among them)."""
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


def partly_unrolled_loads(k: Kernel, sym: Kernel) -> int:
    """Registers for the loads of device memory in the copies of a loop that the
    compiler unrolls by a factor (:func:`partly_unrolled`): each read, in each
    completely unrolled iteration of the loops inside (up to :data:`_FULL_UNROLL`),
    is as many loads as the factor, their values in flight together (matmul
    nvidia: ``bkj = b[k, j]`` for four ``k``), and where the offset steps by a size
    known only at run time along the loop (a row of ``b``: ``m`` elements), each copy
    keeps an address of its own that steps with the loop, as a run-time loop's
    accesses do (:func:`register_values.address_registers`). The reads of on-chip
    memory that step by one element along the loop merge into 128-bit loads:
    :func:`merged_loads`.

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
            words = ADDRESS_BYTES // 4 if run_time_stride else 0
            extra += (factor - 1) * copies * (1 + words)
    return extra


#: uses per value, in the unrolled iteration that loads it, from which the compiler
#: loads a register array's next values while the current ones are used (fitted on
#: convolution hopper v4 and v5: 18 uses, rows = 4 and cols = 8, take no registers
#: for the next row; 24, rows = 8 and cols = 4, take them)
_PREFETCH_USES = 20


def prefetched(k: Kernel, sym: Kernel | None, on_chip: bool = False) -> int:
    """Registers for the next iteration's values of a register array that a loop
    the generated code unrolls completely fills from device memory (from an on-chip
    memory where ``on_chip``), where each value is used at least
    :data:`_PREFETCH_USES` times before the array is filled again
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
    moves); split halves 221 -> 242 of 284 and 232 -> 239 of 315.

    ``on_chip``: the same for a fragment (``aFrag[ei] = l_a[cur, q, ..]`` in matmul
    hopper v10 - v12's loop ``q``), whose next values the compiler reads from shared
    memory while the current ones feed the multiply-adds, whatever their uses. It
    keeps them only where registers allow without losing a resident block
    (occupancy.registers_per_unit grows the count by them, never the demand), and it
    gives them back to reach a step (registers.squeeze_slack). On the 367 recorded
    kernels (registers_fit.py) 330 -> 332 within ±10%, 8 move, 7 of them closer to
    the compiler: hopper v10 with bk = 32, 144 -> 160 where it takes 155 to 161, with
    bk = 8, 120 -> 128 (120 to 130); v11 208 -> 232 (229), v12 192 -> 216 (213); v10
    with bk = 16 stays at 128 for 2 blocks (126). Occupancy with the estimate as
    before; split halves 163 -> 163 of 181 and 167 -> 169 of 186. On the H200's 124
    held-out variants (raw/h200_2026-11-29/heldout/) 99 -> 101 (v12 with bk = 8 and
    with bm = 64, bn = 512 in; v11 with bn = 64 out, 255 where the compiler takes
    219). Requiring any number of uses per value up to 8 moves the same kernels; 9
    leaves out v10."""
    from mcl.analyses.stats import main_space
    from mcl.analyses.unrolled import unrolled
    from mcl.mcpl import ast
    built = specialised_sizes(sym)
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

    def from_source(a: Any) -> bool:
        return on_chip_memory(a.space, spaces, device) if on_chip else a.space == device

    least_uses = 1 if on_chip else _PREFETCH_USES
    extra = 0
    counted: set[str] = set()
    for s in ast.walk(k.function.body):
        if not isinstance(s, ast.Assign) or s.op != "=":
            continue
        t = by_node.get(id(s.target))
        if t is None or t.space not in spaces or t.name in counted or not any(
                (a := by_node.get(id(x))) is not None and not a.write and from_source(a)
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
        if filled and None not in uses and sum(uses) >= least_uses * filled:
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
    return bool(growing_loops(k))


def growing_loops(k: Kernel) -> list[Any]:
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


def compiler_unrolled(k: Kernel, sym: Kernel) -> list[Any]:
    """The loops of the numeric kernel ``k`` that the compiler unrolls of its own
    accord, which the generator leaves rolled: those of run-time trip count that
    read device memory (:func:`growing_loops`) and those of build-time trip count too
    long to unroll completely (:func:`partly_unrolled`); a loop from a thread's index in
    steps of the threads (``for (r = w; r < 32; r += 8)``: as many iterations for
    every thread, which the compiler does not know: of run-time trip count too,
    :func:`_build_time_trips`)."""
    growing = {id(lp.node) for lp in growing_loops(sym)}
    out = [lp for lp in k.loops if id(lp.node) in growing]
    return out + [lp for lp in partly_unrolled(k, sym) if id(lp.node) not in growing]


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
    if lp.kind == "while":
        run_time = run_time_names(k, k)
        for st in _top_level(lp.node.body):
            if isinstance(st, ast.Assign) and st.op in ("+=", "-=") and \
                    isinstance(st.target, ast.Name) and \
                    st.target.id in names_in(lp.node.cond) and names_in(st.value) & run_time:
                return True
    return any(not a.write and a.space == device and lp in a.loops
               and (a.guarded or a.conditions) and (r := run_loop(a)) is not None
               and r is not lp
               for a in k.accesses)


def _used_elements(k: Kernel) -> dict[str, int]:
    """The elements of each register array of ``k`` with a number of elements that the
    kernel uses (:func:`unused_elements`: the loads of the others are removed)."""
    spaces = register_spaces(k.hardware)
    unused = unused_elements(k)
    return {d.node.name: int(d.elements) - unused.get(d.node.name, 0) for d in k.decls
            if d.node.type.is_array and d.space in spaces
            and d.elements is not None and d.elements.is_number}


def rolled_loads(k: Kernel, sym: Kernel) -> int:
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
    sym_loops = {id(lp.node): lp for lp in sym.loops}
    by_node = {id(a.node): a for a in k.accesses}
    used = _used_elements(k)
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
            if target is not None and target.name in used:
                copies = min(copies, used[target.name])
            extra += copies
    return extra


def straight_loads(k: Kernel, sym: Kernel) -> int:
    """Registers for the values of device memory that the kernel loads outside every
    loop the compiler keeps (no loop, or only loops the generated code unrolls
    completely: :func:`mcl.analyses.unrolled.unrolled`) and uses in an expression
    without naming it (``ys[i] = alpha * xs[i] + ys[i]``; not ``float x = a[i]``, whose
    register is ``x``'s): in straight-line code the compiler issues all the loads
    first, ahead of the arithmetic that consumes them, to hide their latency (the SASS
    of black_scholes gpu_v1 and vector_add nvidia_v1: 3 ``LDG`` in a row before the
    first use, raw/sass_2026-11-27/loads_in_flight.txt), so each loaded value holds a
    register of its own from its load to its use. One per element of 4 bytes or less
    (two for 8 bytes), per iteration of the unrolled loops around the read; where they
    update a register array, no more than its used elements (:func:`unused_elements`:
    the others' loads are removed, as in :func:`rolled_loads`). Reads that only feed
    values nothing uses (:func:`dead_reads`) and the elements atomics update are no
    loads. Checked on the 367 recorded kernels (registers_fit.py): none moves in or
    out of ±10% (vector_add perfect and gpu_v1 11 -> 13, the compiler 12; reduction
    gpu_v4 11 -> 12, the compiler 12 to 14); the 15 held-out kernels 8 -> 10 (saxpy4 10
    -> 18 and stencil1d 9 -> 12, as the compiler; conv3x3 13 -> 22 and jacobi2d 10
    -> 14, the compiler 32 and 18)."""
    from mcl.analyses.stats import main_space
    from mcl.analyses.unrolled import build_time_sizes, unrolled
    device = main_space(k)
    dead = dead_reads(k)
    built = build_time_sizes(sym)
    sym_loops = {id(lp.node): lp for lp in sym.loops}
    by_node = {id(a.node): a for a in k.accesses}
    used = _used_elements(k)
    named: set[int] = set()       # reads whose value goes straight into a named register
    into: dict[int, str] = {}     # reads that update a register array -> the array
    for st in ast.walk(k.function.body):
        if isinstance(st, ast.Assign) and st.op == "=" and isinstance(st.value, ast.Index):
            named.add(id(st.value))
        elif isinstance(st, ast.Declaration) and isinstance(st.init, ast.Index):
            named.add(id(st.init))
        elif isinstance(st, ast.Assign) and (t := by_node.get(id(st.target))) is not None \
                and t.name in used:
            into.update({id(x): t.name for x in ast.walk(st.value)})
    # the element an atomic updates is no load (a reduction the memory does)
    named |= {id(site.target.node) for site in k.atomics if site.target is not None}
    extra = 0
    for a in k.accesses:
        if a.write or a.space != device or id(a.node) in dead or id(a.node) in named:
            continue
        loops = [lp for lp in a.loops if lp.kind != "foreach"]
        if not all(unrolled(sym_loops.get(id(lp.node)), lp, built) for lp in loops):
            continue
        copies = math.prod(int(sympy.sympify(lp.trips)) for lp in loops)
        if (name := into.get(id(a.node))) is not None:   # no more than the used elements
            copies = min(copies, used[name])
        extra += copies * max(1, a.element_bytes // 4)
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
    growing = growing_loops(k)
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
    if lp.trips is None or lp.approximate:
        return False
    return {s.name for s in lp.trips.free_symbols} <= build_time_sizes(sym)
