"""What a kernel takes of a processor's resources per unit: registers per executing
unit (the vendor compiler's count when one was asked, else an estimate, stated as
such) and the register file a holder of blocks offers.

``Resources`` is what a caller that built the kernel with the vendor's compiler
passes to :func:`mcl.analyses.feedback` (``resources={function: Resources}``); the
analyses then print "127 registers (NVIDIA compiler)" instead of an estimate.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

import sympy

from mcl.analyses.kernel import Kernel
from mcl.analyses.stats import register_spaces


@dataclass(frozen=True)
class Resources:
    """Figures of one kernel from a vendor compiler."""

    registers: int                  # 32-bit registers per executing unit (thread)
    source: str                     # who says so: "NVIDIA compiler"
    shared_bytes: int | None = None     # static shared (local) memory per block
    spill_bytes: int | None = None      # per-thread local memory (spills, private arrays)


def register_files(hw: Any) -> list[Any]:
    """The non-addressable memories with a numeric capacity (register files)."""
    return [m for m in hw.memories()
            if not m.addressable and isinstance(m.capacity, int | float)]


def block_holder(hw: Any) -> Any | None:
    """The device block that holds the outermost par_unit with slots below the
    device (an SM holds blocks)."""
    executing = hw.executing_unit()
    for g in hw.par_groups():
        u = g.unit
        if u is None or (executing is not None and u.name == executing.name):
            continue
        slots = hw.slots(u.name)
        if slots and isinstance(slots[0].per_holder, int):
            return slots[0].holder
    return None


def register_file_bytes(hw: Any) -> int | None:
    """Bytes of registers one holder of blocks has (all copies of its register files:
    4 partitions x 64 kB on an H100 SM), or None without register files."""
    files = register_files(hw)
    if not files:
        return None
    holder = block_holder(hw)
    totals = []
    for m in files:
        n = hw.instances_within(m, holder) if holder is not None else None
        totals.append(int(m.capacity) * (n or 1))
    return min(totals)


def max_registers(hw: Any, threads_per_block: int) -> int | None:
    """The most registers a thread may use so that its block fits in one holder's
    register files (what the OpenCL target asks the vendor compiler for), at most 255."""
    total = register_file_bytes(hw)
    if total is None or threads_per_block <= 0:
        return None
    return max(16, min(255, total // 4 // threads_per_block))


def register_demand(k: Kernel, sym: Kernel | None = None) -> int:
    """What the kernel's own values need, in 32-bit registers per unit: one register
    per value the compiler keeps (:func:`_named_registers`: each scalar, each
    register-array element that is used, the loop indices, two per array parameter
    for its 64-bit address; not the constants that need none) plus the values it
    loads together in unrolled loops (:func:`_merged_loads`; needs the symbolic
    kernel ``sym`` to tell constant trip counts from run-time ones), plus
    :data:`_OFFSET`.

    Calibration on the 654 recorded kernels (tests/analyses/fidelity/vendor.json: 54
    examples and 600 sweep variants, H100, nvcc 12; benchmarks/fidelity/
    registers_fit.py): the slope, one register per value, is not fitted; the offset
    is. Within ±10% of the compiler, after the cap, step-down and growth of
    occupancy.registers_per_unit: 41 of 54 examples and 439 of 600 variants, 480 of
    654 (73%; the former 0.9 x count - 4, which counted every constant and every
    register-array element: 40, 418 and 458). Split check (registers_fit.py --split
    --offset N: the 54 versions, each with its variants, sorted by name and dealt
    alternately into two halves of 294 and 360 kernels; offsets -1 .. 3): the
    offset fitted on the first half is 0 or 1 (206 of 294 within ±10%), which gives
    the second half 274 or 276 of 360; fitted on the second it is 2 (277 of 360),
    which gives the first 202 of 294 (the former estimate: 195 and 263). 0 is kept,
    the lowest of the fits: with 1, matmul nvidia v1 at the nvidia level (the
    paper's Table II: 4 of 8 blocks, tests/analyses/test_feedback.py) would need 33
    registers and lose a block."""
    extra = _merged_loads(k, sym) if sym is not None else 0
    return max(8, round(_named_registers(k) + extra) + _OFFSET)


#: registers the compiler needs besides the kernel's values, fitted (see above)
_OFFSET = 0


#: the widest load, in bytes (LDS.128 / LDG.128)
_VECTOR_BYTES = 16
#: constant-trip loops up to this many iterations are unrolled fully (longer ones by
#: a factor, without loads of later groups in flight)
_FULL_UNROLL = 64


def _merged_loads(k: Kernel, sym: Kernel) -> int:
    """Registers for values of several iterations of an unrolled loop that the
    compiler loads at once: a read of an on-chip memory (shared, local, constant:
    not the device memory, not registers) in a nest of constant-trip loops inside a
    run-time loop, whose address steps by one element along an outer loop of the
    nest (matmul hopper v1: ``l_a[ti * tm + ei, q]`` in the k-tile loop ``q``), is
    merged over w = 16 bytes / element iterations of that loop into one vector load,
    so the values of w iterations of the inner loops are live together (w - 1 more
    than the fragment the source keeps), and in a fully unrolled loop the next group
    of w is loaded while the current one is used."""
    from mcl.analyses.stats import main_space
    constant = {id(lp.node) for lp in sym.loops if lp.kind == "for"
                and lp.trips is not None and not lp.trips.free_symbols
                and not lp.approximate}
    runtime = {id(lp.node) for lp in sym.loops if lp.kind != "foreach"} - constant
    spaces = register_spaces(k.hardware)
    device = main_space(k)
    extra = 0
    for a in k.accesses:
        if a.write or a.space in spaces or a.space == device or a.offset is None:
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


def grows(k: Kernel) -> bool:
    """Whether the kernel has a loop whose trip count is only known at run time and
    that reads device memory without atomic updates: the compiler unrolls it and
    keeps several iterations' loads in flight, using the registers it may take
    without losing occupancy (an atomic in the loop orders the iterations)."""
    from mcl.analyses.stats import main_space
    device = main_space(k)
    for lp in k.loops:
        if lp.kind not in ("for", "while") or not (lp.trips is None or
                                                    lp.trips.free_symbols):
            continue
        if any(lp in site.loops for site in k.atomics):
            continue
        if any(lp in a.loops and not a.write and a.space == device for a in k.accesses):
            return True
    return False


def squeeze_slack(k: Kernel) -> int:
    """Registers the compiler can give back without spilling to reach the next
    occupancy step, by rescheduling: the elements of register arrays loaded from an
    on-chip memory (fragments: ``aFrag[ei] = l_a[...]``, ``col[r] = l_in[...]``), whose
    values it can consume as they arrive instead of holding them all. Only where the
    device memory is read solely to be copied into an on-chip memory (``l_a[..] =
    a[..]``): values of device-memory loads in flight it keeps (a prefetch into
    registers, a global load used by the arithmetic). 0 where it cannot."""
    from mcl.analyses.stats import main_space
    from mcl.mcpl import ast
    device = main_space(k)
    spaces = register_spaces(k.hardware)
    by_node = {id(a.node): a for a in k.accesses}
    copies: set[int] = set()
    fragments: set[str] = set()
    for s in ast.walk(k.function.body):
        if not isinstance(s, ast.Assign) or not isinstance(s.target, ast.Index):
            continue
        target = by_node.get(id(s.target))
        if target is None:
            continue
        if s.op == "=" and isinstance(s.value, ast.Index) and \
                target.space not in spaces and target.space != device:
            copies.add(id(s.value))
        if target.space in spaces and any(
                (a := by_node.get(id(x))) is not None and not a.write
                and a.space not in spaces and a.space != device
                for x in ast.walk(s.value)):
            fragments.add(target.name)
    if any(a.space == device and not a.write and id(a.node) not in copies
           for a in k.accesses):
        return 0
    return sum(int(d.elements) for d in k.decls if d.node.name in fragments
               and d.space in spaces and d.elements is not None and d.elements.is_number)


def _named_registers(k: Kernel) -> int:
    """Registers for the kernel's named values: each scalar of the function (wider
    types in 32-bit parts) except the constants that take none
    (:func:`_constants_without_register`), each element of a register array that is
    used (:func:`_unused_elements` are dropped), each loop index, two per array
    parameter (a 64-bit address)."""
    names: dict[str, int] = {}
    spaces = register_spaces(k.hardware)
    known = _constants_without_register(k)
    unused = _unused_elements(k)
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
        if lp.var:
            names.setdefault(lp.var, 1)
    arrays = sum(1 for p in k.function.params if p.type.is_array)
    return sum(names.values()) + 2 * arrays


def _constants_without_register(k: Kernel) -> set[str]:
    """The ``const`` scalars that take no register: those whose initializer names no
    parameter, no variable and no constant computed from one (``const int nrThreads
    = nrWarps * 32``: the compiler folds them into the instructions), and those that
    the threads' code never reads, only the sizes of foreach loops, other
    constants' initializers and the outermost extents of arrays and views (no
    stride of an address) do (``const int nrBlocks = (n + 255) / 256`` as the
    number of blocks: the launch's business). A constant computed from a parameter
    that the code reads (``const int stride = chunk * nrBlocks``) is a value the
    compiler keeps, as a variable is."""
    from mcl.mcpl import ast
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
    run_time = {p.name for p in k.function.params}
    free: set[str] = set()
    for d in k.decls:
        node = d.node
        if node.type.is_array:
            continue
        names = {x.id for x in ast.walk(node.init) if isinstance(x, ast.Name)} \
            if node.init is not None else set()
        if node.const and not names & run_time:
            free.add(node.name)
            continue
        run_time.add(node.name)
        if node.const and node.name not in read:
            free.add(node.name)
    return free


#: register-array accesses enumerated over at most this many iterations
_ENUMERATED = 4096


def _unused_elements(k: Kernel) -> dict[str, int]:
    """Per register array, the elements that no statement reads except the ones
    updating that array: the compiler removes the computations of values nothing
    uses (matmul hopper v6 with tn = 16 stores 8 of its 16 columns of sums: the
    other 64 accumulators take no register). One step only: an element read solely
    to update elements nothing uses still counts. An array read at an element that
    cannot be enumerated (an index of a run-time loop) counts in full."""
    from mcl.mcpl import ast
    spaces = register_spaces(k.hardware)
    sizes = {d.node.name: int(d.elements) for d in k.decls
             if d.node.type.is_array and d.space in spaces
             and d.elements is not None and d.elements.is_number}
    if not sizes:
        return {}
    by_node = {id(a.node): a for a in k.accesses}
    updating: dict[int, str | None] = {}     # node id -> the array its statement sets
    for s in ast.walk(k.function.body):
        if isinstance(s, ast.Assign):
            target = by_node.get(id(s.target))
            name = target.name if target is not None else None
            for x in (s.target, *ast.walk(s.value)):
                updating[id(x)] = name
    used: dict[str, set | None] = {}
    for a in k.accesses:
        if a.write or a.name not in sizes or updating.get(id(a.node)) == a.name:
            continue
        if used.get(a.name, set()) is None:
            continue
        elements = _elements(a)
        used[a.name] = None if elements is None else used.get(a.name, set()) | elements
    unused = {}
    for name, size in sizes.items():
        seen = used.get(name, set())       # None: an element that cannot be enumerated
        if seen is not None and len(seen) < size:
            unused[name] = size - len(seen)
    return unused


def _elements(a: Any) -> set[tuple[int, ...]] | None:
    """The index tuples a register-array access reaches over its constant loops, or
    None where an index is not a function of constant loops."""
    if any(i is None for i in a.indices):
        return None
    free = set().union(*(sympy.sympify(i).free_symbols for i in a.indices))
    ranges = []
    for s in free:
        lp = next((lp for lp in a.loops if lp.var == s.name), None)
        if lp is None or any(v is None or not sympy.sympify(v).is_number
                             for v in (lp.trips, lp.start, lp.step)):
            return None
        ranges.append((s, [lp.start + lp.step * i for i in range(int(lp.trips))]))
    if math.prod(len(r) for _, r in ranges) > _ENUMERATED:
        return None
    symbols = [s for s, _ in ranges]
    at = [sympy.lambdify(symbols, i) for i in a.indices]
    return {tuple(int(f(*values)) for f in at)
            for values in itertools.product(*(r for _, r in ranges))}
