"""The h200 level: the H100's chip with its own memory (mcl/hwdescs/h200.hdl, a
child of hopper). A kernel written for hopper runs on it as it is, and the time
feedback weighs its memory: 4.8 TB/s, of which kernels reach 4.12 beside the 2.7 µs any
launch takes (measured on the H200, benchmarks/results/perf/h200_2026-11-29)."""

from __future__ import annotations

from pathlib import Path

import mcl
from mcl.analyses.level import feedback_at_level
from mcl.opencl.generate import generate

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_a_hopper_kernel_generates_the_same_opencl_for_the_h200():
    path = EXAMPLES / "matmul" / "hopper_v12.mcpl"
    (at_hopper,) = generate(str(path), "hopper")
    (at_h200,) = generate(str(path), "h200")
    def code(k):    # the header comment names the level
        return [ln for ln in k.source.splitlines() if not ln.startswith("//")]
    assert code(at_h200) == code(at_hopper)


def _predicted(level: str) -> dict:
    checked = mcl.check(str(EXAMPLES / "vector_add" / "hopper_v1.mcpl"))
    (d,) = [d for d in feedback_at_level(checked, level, only=["time"]).diagnostics
            if d.code == "feedback-time"]
    return d.data


def test_the_time_feedback_weighs_the_h200s_memory():
    hopper, h200 = _predicted("hopper"), _predicted("h200")
    assert hopper["limiter"] == h200["limiter"] == "memory"
    # the traffic at 4.12 TB/s instead of 2.88 (the latency part as before), and the
    # launch's fixed cost, which the H100's bandwidth was fitted with
    assert 1.15 < hopper["seconds"] / h200["seconds"] < 4.12 / 2.88
    assert hopper["launch"] == 0 and h200["launch"] == 2.7e-6
    assert h200["seconds"] == h200["parts"]["memory"] + h200["launch"]
    assert hopper["seconds"] == hopper["parts"]["memory"]
