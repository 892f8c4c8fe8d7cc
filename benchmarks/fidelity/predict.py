"""What MCL's analyses say of a fidelity case, without a GPU: the numbers the
feedback prints for the kernel translated to hopper (resident blocks per SM and
what limits them, registers per thread, traffic, cache-line fetches, sectors per
request, predicted time)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import cases as C

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


def hopper_feedback(case: C.Case, values: dict | None = None, registers: int | None = None,
                    only: tuple[str, ...] | None = None):
    """(diagnostics, kernel view data) of the case at hopper."""
    from mcl.analyses import feedback
    from mcl.analyses.level import feedback_at_level
    from mcl.mcpl import check

    checked = check(str(case_path(case)))
    if checked.errors:
        raise RuntimeError("; ".join(d.message for d in checked.errors))
    vals = dict(case.sizes if values is None else values)
    resources = None
    if registers is not None:
        from mcl.analyses import Resources
        resources = {f.name: Resources(registers, "NVIDIA compiler")
                     for f in checked.module.functions}
    if case.level == C.TARGET:
        return feedback(checked, values=vals, resources=resources, only=only)
    lf = feedback_at_level(checked, C.TARGET, values=vals, resources=resources, only=only)
    return lf.diagnostics


def predict(case: C.Case, registers: int | None = None,
            only: tuple[str, ...] | None = None) -> dict:
    """The analyses' figures for ``case`` (``registers``: the vendor count to use in
    place of the estimate, as ``mcl feedback`` does on a machine with the GPU)."""
    out: dict = {}
    for d in hopper_feedback(case, registers=registers, only=only):
        if d.code == "feedback-occupancy":
            out["resident_blocks"] = d.data.get("resident")
            out["occupancy_limiting"] = d.data.get("limiting")
            out["registers"] = d.data.get("registers")
            out["registers_source"] = d.data.get("registers_source")
    return out

