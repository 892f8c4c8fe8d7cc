"""The estimate of registers per executing unit (thread) for a kernel that no vendor
compiler has seen: what the kernel's values need, and whether the compiler may give
some back or take more. It is an estimate, said to be one wherever it is printed
(:mod:`mcl.analyses.occupancy` caps, lowers or grows it to an occupancy step).

What it counts (:func:`register_demand`): the values the kernel keeps and the 64-bit
addresses of device memory its loops keep (:mod:`mcl.analyses.register_values`; which
register-array elements count is :mod:`mcl.analyses.register_elements`' business),
what the compiler's unrolling keeps in flight besides
(:mod:`mcl.analyses.register_unrolling`: loads merged over unrolled iterations, the
next values loaded while the current ones are used, the copies of a loop unrolled by a
factor, the loads of one iteration of a loop kept rolled), and a small fitted offset.
What the compiler may give back to reach an occupancy step (this module): fragments
loaded from on-chip memory and the values loaded with them (:func:`squeeze_slack`),
one address it can compute again, or any one value (:func:`recomputable`), the
registers its unrolling costs (:func:`unrolling_slack`); whether it takes more for
loops it unrolls at run time: :func:`mcl.analyses.register_unrolling.grows`.
"""

from __future__ import annotations

from mcl.analyses.kernel import Kernel
from mcl.analyses.register_elements import fragments, on_chip_memory, passed_elements
from mcl.analyses.register_unrolling import (
    merged_loads,
    partly_unrolled_loads,
    prefetched,
    rolled_loads,
    straight_loads,
)
from mcl.analyses.register_values import (
    ADDRESS_BYTES,
    address_registers,
    named_registers,
    recomputable_addresses,
)
from mcl.analyses.stats import register_spaces


def register_demand(k: Kernel, sym: Kernel | None = None) -> int:
    """An estimate of what the kernel's own values need, in 32-bit registers per
    unit: one register per value the compiler keeps (:func:`named_registers`: each
    scalar, each register-array element that is used, the loop indices; not the
    constants that need none), two per 64-bit address of device memory that a loop
    keeps (:func:`address_registers`), plus the values it loads together in
    unrolled loops (:func:`merged_loads`, :func:`prefetched`) and in the copies of
    loops unrolled by a factor (:func:`partly_unrolled_loads`) and in one
    iteration of a loop kept rolled (:func:`rolled_loads`), or, where they are more,
    the unnamed values of device memory that straight-line code loads together
    (:func:`straight_loads`: outside the loops, so never live with those loops'
    loads), plus :data:`_OFFSET`.
    The symbolic kernel ``sym`` tells constant trip counts and offsets from run-time
    ones; without it every array parameter counts one address.

    Calibration (benchmarks/fidelity/registers_fit.py against the NVIDIA compiler's
    counts of tests/analyses/fidelity/vendor.json, H100): the slopes (one register per
    value, two per address) are not fitted, the offset is (0). On the 369 recorded
    kernels that are not wrong (58 examples, 311 sweep variants), after the cap,
    step-down and growth of occupancy.registers_per_unit: 56, 270 and 326 within ±10%
    (88%); on the 367 of them recorded since (309 variants), 56, 274 and 330 (89.9%;
    :func:`straight_loads` moves none of them in or out, and takes the 15 held-out
    kernels from 8 to 10, saxpy4 and stencil1d; the growth past a full SM's share,
    occupancy.registers_per_unit, 325 -> 330; the next fragments an unrolled loop reads
    from on-chip memory in that growth, register_unrolling.prefetched, 332, 90.5%).
    What was tried on the way, kept or not, with its figures:
    benchmarks/fidelity/CALIBRATION.md. With an offset of 1, matmul nvidia v1 at the
    nvidia level (the paper's Table II: 4 of 8 blocks, tests/analyses/test_feedback.py)
    would need 33 registers and lose a block."""
    extra = max(merged_loads(k, sym) + prefetched(k, sym) + partly_unrolled_loads(k, sym)
                + rolled_loads(k, sym), straight_loads(k, sym)) if sym is not None else 0
    return max(8, round(named_registers(k, sym) + address_registers(k, sym) + extra)
               + _OFFSET)


#: registers the compiler needs besides the kernel's values, fitted (see above)
_OFFSET = 0


def squeeze_slack(k: Kernel, sym: Kernel | None = None) -> int:
    """Registers the compiler can give back without spilling to reach the next
    occupancy step, by rescheduling: the elements of register arrays loaded from an
    on-chip memory (fragments: ``aFrag[ei] = l_a[...]``, ``col[r] = l_in[...]``), and
    the values of later iterations that unrolled loops load with them
    (:func:`merged_loads`, given the symbolic kernel ``sym``), which it can consume
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
                on_chip_memory(target.space, spaces, device):
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
        slack += merged_loads(k, sym)
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
    can compute again (:func:`recomputable_addresses`; matmul hopper v5 at 256
    threads: about 130 registers, the compiler takes 127 for 2 blocks), else one
    value of any kernel (:data:`_ONE_VALUE`). Not more: each costs instructions in
    the loop, and gesummv nvidia v1 keeps its rows' addresses (40 registers, not 32
    for 8 blocks of 256 threads). Besides, the registers of the copies of a loop the
    compiler unrolls by a factor (:func:`partly_unrolled_loads`): it can keep fewer
    of their loads in flight (matmul nvidia v1 and hopper at 256 and 512 threads:
    43 estimated, the compiler takes 40, the most for 6 and 3 blocks; with x = 2, 35
    and 32 for 8 blocks; not matmul nvidia at 1024 threads, 41 and 42: 32 for a
    second block is beyond the fifth that :func:`occupancy._squeezed` allows)."""
    if sym is None:
        return _ONE_VALUE
    addresses = recomputable_addresses(k, sym)
    return max(_ONE_VALUE, min(ADDRESS_BYTES // 4, addresses)) \
        + partly_unrolled_loads(k, sym)


def unrolling_slack(k: Kernel, sym: Kernel | None) -> int:
    """Registers the compiler gives up where they cost resident blocks
    (:func:`mcl.analyses.occupancy._busy_registers` says how far): those its unrolling
    adds, by unrolling a loop less and loading element by element. The copies' loads
    of a loop unrolled by a factor (:func:`partly_unrolled_loads`), and the values of
    merged 128-bit loads (:func:`merged_loads`) that a multiply-add consumes directly
    (matmul nvidia v1's ``sums[ei] += l_a[ei][k2] * bkj``); not those that fill a
    register array (a fragment, ``aFrag[ei] = l_a[...]`` in matmul hopper v1, whose
    elements are used again: it keeps them, 64 registers at 512 threads where giving
    them up would reach 40)."""
    if sym is None:
        return 0
    return partly_unrolled_loads(k, sym) + merged_loads(k, sym, direct_only=True)


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
