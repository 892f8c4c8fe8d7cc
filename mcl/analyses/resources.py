"""What a kernel takes of a processor's resources per unit: registers per executing
unit (the vendor compiler's count when one was asked, else the estimate of
:mod:`mcl.analyses.registers`, stated as such) and the register file a holder of
blocks offers.

``Resources`` is what a caller that built the kernel with the vendor's compiler
passes to :func:`mcl.analyses.feedback` (``resources={function: Resources}``); the
analyses then print "127 registers (NVIDIA compiler)" instead of an estimate.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Resources:
    """Figures of one kernel from a vendor compiler."""

    registers: int                  # 32-bit registers per executing unit (thread)
    source: str                     # who says so: "NVIDIA compiler"
    shared_bytes: int | None = None     # static shared (local) memory per block
    spill_bytes: int | None = None      # per-thread local memory (spills, private arrays)
    #: bytes of device memory a warp keeps in flight for each latency it waits in its
    #: hot loop, read from the compiler's machine code (mcl.opencl.sass); None where
    #: that code was not read (the time model counts them from the kernel)
    in_flight: float | None = None


#: bytes of local memory a thread below which the vendor's figure is a small stack frame,
#: not spills: the recorded kernels have 8 B (matmul gpu_v1, hopper_v1 and seven more)
#: or 48 B and more (gesummv hopper v2 with 32 warps 280 B, reduction hopper v3 with 16
#: runs 112 B, both at their caps of 64 registers)
LOCAL_NOTED = 16


def spilled_bytes(res: Resources | None) -> int | None:
    """The bytes of local memory a thread of the vendor's code keeps for want of
    registers (``res.spill_bytes`` from :data:`LOCAL_NOTED` up), else None."""
    b = res.spill_bytes if res is not None else None
    return b if b and b >= LOCAL_NOTED else None


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
