"""Indices the data choose, checked as the kernel runs.

An access such as ``x[colIdx[k]]``, or ``values[k]`` in a loop whose bounds are read
from an array, takes its element from the data: no analysis at any sizes can say
whether it stays inside its array (mcl.analyses.data_indexed). Outside it, a kernel on
a CPU device kills the process that runs it (PoCL: a segmentation fault), and one on a
GPU reads another array's elements and returns a wrong result without a word.

The kernels that ``mcl run`` and ``mcl.compile`` launch therefore check each index the
data choose against its dimension as they run (``generate(check_indices=True)``), and
every index of a helper function, which the analyses do not follow: an index outside
takes element 0 instead, and the work-item keeps where it was (the access, the index,
the extent) in private variables, which it records at its end in a small buffer the
kernel gets as its last argument (the first work-item to record wins). After the
launch the runtime reads that buffer and raises :func:`fault_error`, so the call fails
with the access's file, line and column rather than the process. ``mcl gen`` emits no
checks: the deployed kernel is the kernel as written. A check is a comparison and
three selects per index, on accesses that are gathers already
(benchmarks/opencl/index_check_cost.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mcl.diagnostics import McplError, Span, error

#: the name of the kernel's last parameter: the fault record
FAULT_PARAM = "mcl_fault"
#: the words of the fault record: the site (1-based, 0: no fault), the index (two
#: words, low first), the extent (two words), the work-item's global ids (three)
FAULT_WORDS = 8
#: the OpenCL functions that check one index, of type int and of type long
CHECK_FUNCTION = "mcl_checked_index"
CHECK_FUNCTION_LONG = "mcl_checked_index_long"
#: the private variables where a work-item keeps its last index outside (the site, the
#: index, the extent), of the int checks and of the long ones; a helper that checks
#: indices takes pointers to them
PRIVATES = ("mcl_bad", "mcl_bad_i", "mcl_bad_n", "mcl_bad_l", "mcl_bad_il", "mcl_bad_nl")
#: the statement that records a work-item's fault in the fault record: at the kernel's
#: end and before each of its returns
RECORD = "MCL_RECORD_FAULT();"


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
    """The OpenCL C of the checks and of :data:`RECORD`. A check is ``i`` where it lies
    in ``[0, n)``, else 0, and keeps the site, the index and the extent in the
    work-item's private variables: no store in the access's path (one in the path, an
    atomic compare-and-swap, cost spmv_csr perfect 42% on the H200 where this form costs
    12%: benchmarks/results/perf/h200_2026-12-03_index_checks). The record, at the
    work-item's end, stores the first of the work-items' faults to reach it."""
    ids = " ".join(f"{FAULT_PARAM}[{5 + d}] = (int)get_global_id({d});" for d in range(3))
    return f"""\
// indices the data choose, checked as the kernel runs (mcl run, mcl.compile): outside
// [0, n) element 0 is taken instead, and the work-item keeps where it was, which it
// records in {FAULT_PARAM} at its end
inline int {CHECK_FUNCTION}(int i, int n, int site, int *bad, int *bad_i, int *bad_n)
{{
    bool ok = (uint)i < (uint)n;
    *bad = ok ? *bad : site;
    *bad_i = ok ? *bad_i : i;
    *bad_n = ok ? *bad_n : n;
    return ok ? i : 0;
}}

inline long {CHECK_FUNCTION_LONG}(long i, long n, int site, int *bad, long *bad_i,
                                   long *bad_n)
{{
    bool ok = (ulong)i < (ulong)n;
    *bad = ok ? *bad : site;
    *bad_i = ok ? *bad_i : i;
    *bad_n = ok ? *bad_n : n;
    return ok ? i : 0;
}}

#define MCL_RECORD_FAULT() do {{ \\
    if (mcl_bad && atomic_cmpxchg({FAULT_PARAM}, 0, mcl_bad) == 0) {{ \\
        {FAULT_PARAM}[1] = mcl_bad_i; {FAULT_PARAM}[2] = mcl_bad_i < 0 ? -1 : 0; \\
        {FAULT_PARAM}[3] = mcl_bad_n; {FAULT_PARAM}[4] = 0; \\
        {ids} \\
    }} \\
    if (mcl_bad_l && atomic_cmpxchg({FAULT_PARAM}, 0, mcl_bad_l) == 0) {{ \\
        {FAULT_PARAM}[1] = (int)(mcl_bad_il & 0xffffffffL); \\
        {FAULT_PARAM}[2] = (int)(mcl_bad_il >> 32); \\
        {FAULT_PARAM}[3] = (int)(mcl_bad_nl & 0xffffffffL); \\
        {FAULT_PARAM}[4] = (int)(mcl_bad_nl >> 32); \\
        {ids} \\
    }} \\
}} while (0)
"""


def declarations() -> list[str]:
    """The kernel's private variables of the checks (:data:`PRIVATES`)."""
    return ["int mcl_bad = 0, mcl_bad_i = 0, mcl_bad_n = 0, mcl_bad_l = 0;",
            "long mcl_bad_il = 0, mcl_bad_nl = 0;"]


def helper_parameters() -> list[str]:
    """The parameters a helper that checks indices takes: pointers to the kernel's
    private variables of the checks."""
    types = ("int", "int", "int", "int", "long", "long")
    return [f"{t} *{n}" for t, n in zip(types, PRIVATES, strict=True)]


def passed_privates(in_helper: bool) -> str:
    """The private variables of the checks as a call passes them: their addresses in
    the kernel, the pointers a helper has."""
    return ", ".join(PRIVATES if in_helper else (f"&{n}" for n in PRIVATES))


def check_call(index: str, extent: str, site: int, wide: bool, in_helper: bool) -> str:
    """The OpenCL C of one checked index."""
    names = PRIVATES[3:] if wide else PRIVATES[:3]
    refs = ", ".join(names if in_helper else (f"&{n}" for n in names))
    function = CHECK_FUNCTION_LONG if wide else CHECK_FUNCTION
    return f"{function}({index}, {extent}, {site}, {refs})"


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
