"""What a kernel takes of a processor's resources per unit: registers per executing
unit (the vendor compiler's count when one was asked, else an estimate, stated as
such) and the register file a holder of blocks offers.

``Resources`` is what a caller that built the kernel with the vendor's compiler
passes to :func:`mcl.analyses.feedback` (``resources={function: Resources}``); the
analyses then print "127 registers (NVIDIA compiler)" instead of an estimate.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

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
    """What the kernel's own values need, in 32-bit registers per unit, scaled as
    NVIDIA's compiler packs them (0.9 x count - 4). Counted: each distinct scalar and
    register-array element (accumulators and fragments), the loop indices, two per
    array parameter (a 64-bit address), four for the compiler's own use, and the
    values it loads together in unrolled loops (:func:`_merged_loads`; needs the
    symbolic kernel ``sym`` to tell constant trip counts from run-time ones).

    Calibration: the 0.9 x count - 4 scaling was fitted on the 649 kernels of
    benchmarks/fidelity (H100, nvcc 12); the merged loads add no fitted constant (a
    16-byte vector load, one more vector group in flight, full unrolling up to 64
    iterations) and were checked on the 653 recorded kernels
    (tests/analyses/fidelity/vendor.json: 53 examples and 600 sweep variants,
    benchmarks/fidelity/registers_fit.py): within ±10% of the compiler for 39 of the
    53 examples (was 37) and 389 of the 600 variants (was 378)."""
    extra = _merged_loads(k, sym) if sym is not None else 0
    return max(8, round(0.9 * (_named_registers(k) + extra) - 4))


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
    names: dict[str, int] = {}
    spaces = register_spaces(k.hardware)
    for d in k.decls:
        if d.symbol is not None and d.symbol.kind == "param":
            continue
        if d.node.type.is_array:
            if d.space in spaces:
                n = d.elements
                names[d.node.name] = int(n) if n is not None and n.is_number else 1
        else:
            names[d.node.name] = max(1, d.element_bytes // 4)
    for lp in k.loops:
        if lp.var:
            names.setdefault(lp.var, 1)
    arrays = sum(1 for p in k.function.params if p.type.is_array)
    return sum(names.values()) + 2 * arrays + 4
