"""The predicted time of register-tiled matmul at hopper: the issue slots the
multiply-adds share with the shared-memory loads, the memory latency each barrier
phase waits for, and the shared-memory wavefronts of 128-bit reads (half a warp at
a time; lanes of a half reading the same run share it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcl.analyses import feedback
from mcl.mcpl import check

MATMUL = Path(__file__).resolve().parents[2] / "examples" / "matmul"
SIZES = {"n": 2048, "m": 2048, "p": 2048}


def _parts(name: str) -> dict:
    [d] = [d for d in feedback(check(MATMUL / f"{name}.mcpl"), only={"time"},
                               values=SIZES) if d.code == "feedback-time"]
    return d.data["parts"]


@pytest.fixture(scope="module")
def parts():
    return {v: _parts(v) for v in ("hopper_v3", "hopper_v4", "hopper_v5")}


def test_shared_loads_take_issue_slots(parts):
    # v3: 16 scalar shared loads per 64 multiply-adds, v4: 4 128-bit ones
    assert parts["hopper_v3"]["issue"] > parts["hopper_v3"]["arithmetic"] * 1.15
    assert parts["hopper_v4"]["issue"] < parts["hopper_v3"]["issue"]


def test_each_barrier_phase_waits_for_memory(parts):
    # v5 has phases of 16 values of k, v4 of 8: half the latency waits; both wait
    # as long for their tiles' reads of a and b to cross the memory interface once
    # (2 x 2048 x 2048 floats at hopper's 3350 GB/s)
    fill = 2 * 2048 * 2048 * 4 / 3350e9
    w4, w5 = parts["hopper_v4"]["barrier waits"], parts["hopper_v5"]["barrier waits"]
    assert w5 - fill == pytest.approx((w4 - fill) / 2)
    assert 2 * w5 - w4 == pytest.approx(fill)


def test_128_bit_reads_served_half_a_warp_at_a_time(parts):
    # v4 reads its fragments as 128-bit runs: per k and warp 2 runs of a (one run per
    # half-warp: 2 wavefronts each) and 2 of b (16 runs per half: 4 each), 12 in all
    # (ncu: 12), against 16 scalar reads of one wavefront each in v3
    s3 = parts["hopper_v3"]["shared memory"] - parts["hopper_v3"]["barrier waits"]
    s4 = parts["hopper_v4"]["shared memory"] - parts["hopper_v4"]["barrier waits"]
    assert s4 / s3 == pytest.approx(12 / 16, rel=0.1)


def test_built_in_functions_cost_what_the_target_says():
    """black_scholes at hopper: an option takes 2 exp, a log, a sqrt and 4 divisions,
    which NVIDIA's precise math on the H100 takes about 78 multiply-adds more for than
    one operation each (hopper.target's function_costs, benchmarks/opencl/math_costs.py):
    the arithmetic part is some 3.5 times what its operations alone give (4.5 us for
    4e6 options), and stays below the memory's."""
    from mcl.analyses.target_settings import device_settings
    bs = MATMUL.parent / "black_scholes" / "hopper_v2.mcpl"
    checked = check(bs)
    [d] = [d for d in feedback(checked, only={"time"}, values={"n": 4_000_000})
           if d.code == "feedback-time"]
    parts = d.data["parts"]
    assert 3.0 < parts["arithmetic"] / 4.46e-6 < 4.0, parts
    assert parts["memory"] > parts["issue"] > parts["arithmetic"], parts
    costs = device_settings(checked.hardware_of(checked.module.functions[-1]))
    assert costs["function_costs"]["log"] > costs["function_costs"]["exp"] > 1
    # the message names what the functions take: divisions, exp, log, sqrt
    assert "are built-in functions beyond one operation each (divisions" in d.message
    assert "hopper.target" in d.message and set(d.data["functions"]) == \
        {"/", "exp", "log", "sqrt"}, d.data["functions"]


def test_without_function_costs_a_call_is_one_operation():
    """A description whose target file gives no costs (fermi) counts a call of exp as
    one operation."""
    from mcl.analyses.target_settings import device_settings
    from mcl.hdl import load_hardware
    assert "function_costs" not in device_settings(load_hardware("fermi"))
    assert device_settings(object()) == {}
