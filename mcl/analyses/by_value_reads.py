"""Small arrays in constant memory that a specialised build would pass by value.

A kernel's array parameter in constant memory is a ``__constant`` pointer: NVIDIA's
OpenCL compiler loads each element a thread reads, per thread, through the read-only
path (LDG.E.CONSTANT), however often the loop that reads it is unrolled. Built with
its sizes as compile-time constants (``mcl run --specialize``, or the version named in
reference.py's SPECIALIZE), the generator passes such an array by value when it fits
the kernel's arguments (mcl.opencl.by_value): the arguments live in a bank of constant
memory that the arithmetic reads as an operand, and the loads disappear.

Measured on the H200 (benchmarks/results/perf/h200_2026-11-30/lift_conv_by_value/): Lift's
register-blocked convolution, 4 x 4 outputs a thread, loaded its 9 x 9 filter 81 times a
thread beside 36 128-bit loads of the input, at 80 registers, in 0.0718 ms; with the
filter passed by value, 56 registers and 0.0604 ms. On the H100, convolution hopper_v4
went from 58% to 60% of its roofline bound so (benchmarks/opencl/conv_param_filter.py).

The pass names each such array of a build that is not specialised, with the reads a
thread makes of it, where they are at least :data:`MIN_READS` and the level's target
builds for NVIDIA's driver (hopper, h200, fermi).
"""

from __future__ import annotations

from typing import Any

import sympy

from mcl.analyses.kernel import Kernel
from mcl.analyses.stats import decided_share
from mcl.analyses.target_settings import builds_for_nvidia
from mcl.diagnostics import Diagnostic, info
from mcl.opencl.by_value import passed_by_value

#: fewer reads a thread than this are not worth a message
MIN_READS = 8


def reads_per_thread(k: Kernel, name: str) -> sympy.Expr:
    """The reads of array ``name`` one thread of ``k`` makes: each read access counted as
    often as the sequential loops around it run, times the share of them its ``if``s let
    through where that is known (an upper bound where it is not)."""
    total = sympy.Integer(0)
    for acc in k.accesses:
        if acc.name != name or acc.write:
            continue
        loops = tuple(lp for lp in acc.loops if lp.kind != "foreach")
        n, _ = k.executions(loops)
        share = decided_share(acc.loops, acc.conditions) if acc.guarded else None
        total += n * (share if share is not None else 1)
    return sympy.simplify(total)


def report(f: Any, k: Kernel) -> list[Diagnostic]:
    """A message per array parameter of ``f`` in constant memory that the build ``k`` (with
    the sizes' values) reads at least MIN_READS times a thread through a pointer, where a
    specialised build of ``f`` would pass it by value."""
    hw = k.hardware
    if k.specialized or hw is None or not builds_for_nvidia(hw.name):
        return []
    out = []
    for name in sorted(passed_by_value(f, hw, True)):
        reads = reads_per_thread(k, name)
        if not (reads.is_number and reads >= MIN_READS):
            continue
        param = next(p for p in f.params if p.name == name)
        elements = _elements(k, name)
        loads = min(int(reads), elements) if elements else int(reads)
        many = "" if reads.is_Integer else "about "
        size = f" ({elements} elements)" if elements else ""
        d = info("feedback-by-value",
                 f"'{name}'{size} is read from constant memory through a "
                 f"pointer, {many}{int(reads)} times per thread: NVIDIA's compiler loads "
                 f"each element a thread reads, up to {loads} loads per thread; built with "
                 f"the sizes as compile-time constants, '{name}' fits the kernel's arguments "
                 "and is passed by value: the arithmetic reads its elements as operands, "
                 "with no load", param.span,
                 "build it specialised: `mcl run --specialize` (a version written for its "
                 "sizes: name it in reference.py's SPECIALIZE); measured on the H200, a "
                 "convolution's 9 x 9 filter passed so took 81 loads and 24 registers per "
                 "thread away, 0.0718 -> 0.0604 ms")
        d.data.update(array=name, reads=float(reads), loads=loads)
        out.append(d)
    return out


def _elements(k: Kernel, name: str) -> int | None:
    """The elements of array ``name`` at the sizes of ``k``, from its accesses' extents
    (None: unknown)."""
    for acc in k.accesses:
        if acc.name == name and all(e is not None for e in acc.sizes):
            count = sympy.Mul(*acc.sizes)
            return int(count) if count.is_Integer else None
    return None
