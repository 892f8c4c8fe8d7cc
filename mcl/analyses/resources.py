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


def register_demand(k: Kernel) -> int:
    """What the kernel's own values need, in 32-bit registers per unit: each distinct
    scalar and register-array element, the loop indices, two per array parameter (a
    64-bit address) and a few for the compiler's own use, scaled as NVIDIA's compiler
    packs them (0.9 x count - 4, fitted on the 649 kernels of benchmarks/fidelity)."""
    return max(8, round(0.9 * _named_registers(k) - 4))


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
