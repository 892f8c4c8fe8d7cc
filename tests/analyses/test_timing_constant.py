"""The predicted time counts a warp-uniform read of constant memory whose index is a
constant of the generated code (a filter in loops the generator unrolls) as NVIDIA's
OpenCL compiler issues it: a global load (LDG.E.CONSTANT) for each distinct element,
not one for each read the source makes, nor none (an operand of the arithmetic, which
the SASS shows it is not: benchmarks/results/fidelity/raw/h200_2026-11-30_constant_reads)."""

from __future__ import annotations

from pathlib import Path

from mcl.analyses import feedback
from mcl.mcpl import check

CONV = Path(__file__).resolve().parents[2] / "examples" / "convolution"


def _time(name: str, **values):
    [d] = [d for d in feedback(check(CONV / f"{name}.mcpl"), only={"time"}, values=values)
           if d.code == "feedback-time"]
    return d


def test_unrolled_filter_reads_are_loaded_once_per_element():
    # hopper_v2 reads each of the 81 filter elements once a thread for 16 x 81
    # multiply-adds: its load-store instructions take less time than the arithmetic
    parts = _time("hopper_v2").data["parts"]
    assert parts["memory instructions"] < parts["arithmetic"], parts


def test_unrolled_filter_reads_are_loads():
    # nvidia_v1 reads the filter again for each of its 4 outputs, each under an if of
    # its own: 324 loads a thread beside its 324 reads of the shared tile, so the
    # load-store instructions bound it (the H100 measured 0.368 ms; 0.201 predicted while
    # the filter's reads were taken for operands)
    d = _time("nvidia_v1")
    assert "memory instructions bound" in d.message, d.message
    parts = d.data["parts"]
    assert parts["memory instructions"] > 1.5 * parts["shared memory"], parts


def test_filter_reads_in_long_loops_are_instructions():
    # fw = 40: the loop over x is not unrolled, filter[y, x] is a load per read
    d = _time("hopper_v2", fh=40, fw=40)
    assert "memory instructions bound" in d.message, d.message
