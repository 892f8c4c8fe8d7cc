"""What MCL's analyses say of a fidelity case, without a GPU: the numbers the
feedback prints for the kernel translated to hopper (resident blocks per SM and
what limits them, registers per thread, traffic, cache-line fetches, sectors per
request, predicted time)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import fidelity_cases as C

_WORK = Path(tempfile.mkdtemp(prefix="mcl-fidelity-predict-"))


def case_path(case: C.Case) -> Path:
    """The case's source as a file (in the examples' folder when unchanged, so that
    locations name the example)."""
    if not case.sweep:
        return C.ROOT / case.file
    name = case.name.replace("/", "__")
    for ch in "[],=":
        name = name.replace(ch, "_")
    p = _WORK / f"{name}.mcpl"
    p.write_text(case.source)
    return p


#: the errors of ``mcl check`` that make a kernel wrong whatever its speed (a constant
#: index outside its constant dimension, an integer division by a constant zero: a sweep
#: variant whose sizes the version is not written for), beside the feedback's warnings of
#: mcl.analyses.validity.CODES
WRONG_KERNEL_ERRORS = ("mcpl-index-range", "mcpl-division-by-zero")


class CheckErrors(RuntimeError):
    """``mcl check`` found errors in a case: ``diagnostics``, the errors."""

    def __init__(self, diagnostics):
        super().__init__("; ".join(d.message for d in diagnostics))
        self.diagnostics = list(diagnostics)


def hopper_feedback(case: C.Case, values: dict | None = None, registers: int | None = None,
                    only: tuple[str, ...] | None = None, level: str | None = None,
                    in_flight: float | None = None, spill_bytes: int | None = None):
    """(diagnostics, kernel view data) of the case at hopper (``level``: at that level
    below it instead of fidelity_cases.TARGET; ``in_flight``: the bytes a warp keeps in
    flight in the compiler's code, ``spill_bytes`` its local memory a thread, with
    ``registers``, as mcl.opencl.vendor reads them beside the GPU)."""
    from mcl.analyses import feedback
    from mcl.analyses.kernel import values_of
    from mcl.analyses.level import feedback_at_level
    from mcl.mcpl import check

    checked = check(str(case_path(case)))
    if checked.errors:
        raise CheckErrors(checked.errors)
    # the parameters' values (a case's sizes may also name its inputs' settings: density)
    vals = values_of(checked.module, case.sizes if values is None else values)
    resources = None
    if registers is not None:
        from mcl.analyses import Resources
        resources = {f.name: Resources(registers, "NVIDIA compiler", spill_bytes=spill_bytes,
                                       in_flight=in_flight)
                     for f in checked.module.functions}
    level = level or C.TARGET
    if case.level == level:
        return feedback(checked, values=vals, resources=resources, only=only,
                        specialize=case.specialize)
    lf = feedback_at_level(checked, level, values=vals, resources=resources, only=only,
                           specialize=case.specialize)
    return lf.diagnostics


def predict(case: C.Case, registers: int | None = None,
            only: tuple[str, ...] | None = None) -> dict:
    """The analyses' figures for ``case`` (``registers``: the vendor count to use in
    place of the estimate, as ``mcl feedback`` does on a machine with the GPU).
    ``invalid``: the feedback's warnings of a kernel that is wrong whatever its speed
    (mcl.analyses.validity: a loop that never runs, a grid of no blocks, a block of more
    units than it may have, an index beyond its dimension, a read of an element nothing
    writes: a variant whose sizes the version is not written for), or ``mcl check``'s
    errors of :data:`WRONG_KERNEL_ERRORS` (a constant index beyond a constant dimension, a
    division by zero), where those are all its errors."""
    from mcl.analyses.validity import CODES
    out: dict = {}
    try:
        found = hopper_feedback(case, registers=registers, only=only)
    except CheckErrors as e:
        wrong = [d for d in e.diagnostics if d.code in WRONG_KERNEL_ERRORS]
        if len(wrong) != len(e.diagnostics):
            raise
        return {"invalid": [f"line {d.span.line}: {d.message}" for d in wrong]}
    for d in found:
        if d.code in CODES:
            out.setdefault("invalid", []).append(f"line {d.span.line}: {d.message}")
        if d.code == "feedback-occupancy":
            out["resident_blocks"] = d.data.get("resident")
            out["occupancy_limiting"] = d.data.get("limiting")
            out["registers"] = d.data.get("registers")
            out["registers_source"] = d.data.get("registers_source")
    return out


def hopper_kernels(case: C.Case, values: dict | None = None):
    """(symbolic, numeric) mcl.analyses Kernels of the case's function at hopper."""
    from mcl.analyses.kernel import parameter_values
    from mcl.analyses.kernel_build import build_kernel
    from mcl.mcpl import check, parse, print_module
    from mcl.translate import translate

    checked = check(str(case_path(case)))
    if case.level != C.TARGET:
        text = print_module(translate(checked.module, to=C.TARGET))
        checked = check(parse(text, str(case_path(case)) + "@hopper"))
    f = checked.module.functions[-1]
    hw = checked.hardware_of(f)
    vals = parameter_values(f, dict(case.sizes if values is None else values))
    return (build_kernel(f, checked, None, hw, case.specialize),
            build_kernel(f, checked, vals, hw, case.specialize))


def hopper_view(case: C.Case, registers: int | None = None):
    """The analyses' KernelView of the case's function at hopper (``registers``: the
    vendor count, as ``mcl feedback`` has it on a machine with the GPU)."""
    from mcl.analyses import Resources
    from mcl.analyses.functions import KernelView
    sym, num = hopper_kernels(case)
    res = Resources(registers, "NVIDIA compiler") if registers is not None else None
    return KernelView(sym, num, num.hardware, resources=res)


def memory_figures(case: C.Case, registers: int | None = None) -> dict:
    """Traffic the analyses predict for the case at hopper: DRAM bytes at kernel end
    (the compulsory traffic less the written lines the L2 still holds,
    mcl.analyses.traffic; ``registers``: the vendor count, for the waves of blocks),
    and global loads: warp requests, the sectors they fetch and sectors per request
    (mcl.analyses.sectors, what the feedback prints), and the bytes they take from the
    L2 (the time model's ``l2 bandwidth`` part, mcl.analyses.timing_counts.cache_bytes)."""
    import sympy

    from mcl.analyses.occupancy import occupancy
    from mcl.analyses.sectors import global_loads
    from mcl.analyses.stats import compulsory_bytes, least_time, main_space
    from mcl.analyses.traffic import dram_traffic

    view = hopper_view(case, registers)
    num = view.num
    out: dict = {}
    space = main_space(num)
    cb = compulsory_bytes(num, space) if space else None
    if cb is not None and sympy.sympify(cb).is_number:
        out["compulsory_bytes"] = float(cb)
    lt = least_time(num)
    if lt is not None:
        out["least_time_s"] = lt
    traffic = dram_traffic(view, occupancy(view))
    if traffic is not None:
        out["dram_bytes"] = traffic.dram_bytes
        out["dram_how"] = traffic.how
    from mcl.analyses.timing_counts import cache_bytes, estimated_loads
    loads = global_loads(view)
    through = cache_bytes(view, space, estimated_loads(view)) if space else None
    if through is not None:
        out["l2_read_bytes"] = through
    if loads is None:
        return out
    if loads.requests:
        out["sectors_per_request"] = loads.sectors_per_request
        out["ld_requests"] = loads.requests
        out["ld_sectors"] = loads.sectors
    if loads.unpredicted:
        out["ld_unpredicted"] = sorted({f"{a.text}: {why}" for a, why in loads.unpredicted})
    return out


def bank_figures(case: C.Case) -> dict[str, float] | None:
    """The extra wavefronts bank conflicts cost the case's reads and writes of shared
    memory at hopper, and the warp requests they are part of (mcl.analyses.banks,
    what ``feedback-bank-conflicts`` prints); None where an index is read from memory."""
    from mcl.analyses.banks import extra_wavefronts
    return extra_wavefronts(hopper_view(case))


def predicted_time(case: C.Case, registers: int | None = None,
                   level: str | None = None, in_flight: float | None = None,
                   spill_bytes: int | None = None) -> dict:
    """The feedback's predicted time of the case at hopper, or at ``level`` (the
    ``time`` pass; ``in_flight``, ``spill_bytes``: see :func:`hopper_feedback`)."""
    for d in hopper_feedback(case, registers=registers, only=("time",), level=level,
                             in_flight=in_flight, spill_bytes=spill_bytes):
        if d.code == "feedback-time":
            return {"seconds": d.data["seconds"], "limiter": d.data["limiter"],
                    "parts": d.data["parts"]}
    return {}
