"""Indices the data choose, checked as the kernel runs.

An access such as ``x[colIdx[k]]``, or ``values[k]`` in a loop whose bounds are read
from an array, takes its element from the data: no analysis at any sizes can say
whether it stays inside its array (mcl.analyses.data_indexed). Outside it, a kernel on
a CPU device kills the process that runs it (PoCL: a segmentation fault), and one on a
GPU reads another array's elements and returns a wrong result without a word.

The kernels that ``mcl run`` and ``mcl.compile`` launch therefore check each index of
such an access against its dimension as they run (``generate(check_indices=True)``):
an index outside takes element 0 instead, and the first one records where it was
(the access, the index, the extent, the work-item) in a small buffer the kernel gets
as its last argument. After the launch the runtime reads that buffer and raises
:func:`fault_error`, so the call fails with the access's file, line and column rather
than the process. ``mcl gen`` emits no checks: the deployed kernel is the kernel as
written. A check is a comparison per index, on accesses that are gathers already.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mcl.diagnostics import McplError, Span, error

#: the name of the kernel's (and a checked helper's) last parameter: the fault record
FAULT_PARAM = "mcl_fault"
#: the words of the fault record: the site (1-based, 0: no fault), the index (two
#: words, low first), the extent (two words), the work-item's global ids (three)
FAULT_WORDS = 8
#: the OpenCL function that checks one index
CHECK_FUNCTION = "mcl_checked_index"


@dataclass(frozen=True)
class IndexSite:
    """One checked index: the access (its MCPL text and span), the array, which of
    its indices (0-based over all of them, tile levels concatenated) and how many
    indices the access has."""

    access: str
    array: str
    position: int
    count: int
    span: Span
    #: in a helper function, whose accesses the analyses do not follow (each is checked)
    in_helper: bool = False


def sites_to_check(checked, function: str) -> dict[tuple[int, int, str], tuple[int, ...]]:
    """(line, column, array) of the accesses of ``function`` whose element the data
    choose, and the positions of the indices the data choose: what the generator
    checks. Spans survive translation to a lower level, so the accesses of the
    translated function are found by them."""
    from mcl.analyses import data_indexed
    out: dict[tuple[int, int, str], tuple[int, ...]] = {}
    for n, positions in data_indexed(checked, function):
        if n.span is not None:
            key = (n.span.line, n.span.column, n.base.id)
            out[key] = tuple(sorted({*out.get(key, ()), *positions}))
    return out


def helper_source() -> str:
    """The OpenCL C of :data:`CHECK_FUNCTION`: ``i`` where it lies in ``[0, n)``; else
    the first fault of the launch is recorded and element 0 is taken."""
    return f"""\
// an index the data choose, checked as the kernel runs (mcl run, mcl.compile): outside
// [0, n) the first such index of the launch is recorded, and element 0 is taken instead
inline long {CHECK_FUNCTION}(long i, long n, int site, __global int *fault)
{{
    if (i >= 0 && i < n)
        return i;
    if (atomic_cmpxchg(fault, 0, site) == 0) {{
        fault[1] = (int)(i & 0xffffffffL);
        fault[2] = (int)(i >> 32);
        fault[3] = (int)(n & 0xffffffffL);
        fault[4] = (int)(n >> 32);
        fault[5] = (int)get_global_id(0);
        fault[6] = (int)get_global_id(1);
        fault[7] = (int)get_global_id(2);
    }}
    return 0;
}}
"""


def fresh_record() -> np.ndarray:
    """The host's copy of an empty fault record."""
    return np.zeros(FAULT_WORDS, np.int32)


def _long(low: np.int32, high: np.int32) -> int:
    return (int(high) << 32) | (int(low) & 0xFFFFFFFF)


def fault_error(kernel: str, sites: tuple[IndexSite, ...], record: np.ndarray,
                dims: int, device: str) -> McplError | None:
    """The error of a launch whose fault ``record`` names a site (None where it names
    none): the access, its index and extent, and the work-item that reached it."""
    site = int(record[0])
    if site <= 0 or site > len(sites):
        return None
    s = sites[site - 1]
    index, extent = _long(record[1], record[2]), _long(record[3], record[4])
    which = f"{s.array}" if s.count == 1 else \
        f"dimension {s.position + 1} of {s.count} of {s.array}"
    item = ", ".join(str(int(g)) for g in record[5:5 + max(dims, 1)])
    why = "the analyses do not follow the indices of a helper function, which are " \
        "checked as the kernel runs" if s.in_helper else \
        "the index comes from the data, which no check before the launch can see"
    return McplError(error(
        "opencl-data-out-of-bounds",
        f"'{kernel}' stopped on {device}: {s.access} reached index {index:,}, where "
        f"{which} has {extent:,} element{'s' if extent != 1 else ''} (in the work-item "
        f"of OpenCL global id ({item})); {why}", s.span,
        hint="check the values of the arrays that give indices or loop bounds against "
             "the sizes of the arrays they index (the kernel's outputs are not returned); "
             "compile(..., check_writes=False) or mcl run --unchecked launches it without "
             "this check"))
