"""The predicted time does not count warp-uniform reads of constant memory whose
index is a constant of the generated code (a filter in loops the generator unrolls)
as load-store instructions."""

from __future__ import annotations

from pathlib import Path

from mcl.analyses import feedback
from mcl.mcpl import check

CONV = Path(__file__).resolve().parents[2] / "examples" / "convolution"


def _time(name: str, **values):
    [d] = [d for d in feedback(check(CONV / f"{name}.mcpl"), only={"time"}, values=values)
           if d.code == "feedback-time"]
    return d


def test_unrolled_filter_reads_are_operands():
    # the filter reads are operands: the load-store instructions take less time than
    # the arithmetic (the kernel is bound by its traffic and its latency)
    parts = _time("hopper_v2").data["parts"]
    assert parts["memory instructions"] < parts["arithmetic"], parts


def test_filter_reads_in_long_loops_are_instructions():
    # fw = 40: the loop over x is not unrolled, filter[y, x] is a load per read
    d = _time("hopper_v2", fh=40, fw=40)
    assert "memory instructions bound" in d.message, d.message
