"""An execution part and a memory part that take about as long overlap only in part
(hopper.target's overlap_exponent, benchmarks/opencl/overlap_probe.py): the predicted
time is then more than the larger of them."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcl.analyses import feedback
from mcl.analyses.timing import overlapped
from mcl.hdl import load_hardware
from mcl.mcpl import check

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def hopper():
    return load_hardware("hopper")


def test_equal_parts_take_longer_than_either(hopper):
    # multiply-adds and traffic of 30 us each: 30 * 2^(1/4.6) = 34.6 us, as the probe's
    # 1.13 times the longer
    part, memory, together = overlapped(hopper, {"memory": 30e-6, "arithmetic": 30e-6})
    assert (part, memory) == ("arithmetic", "memory")
    assert together == pytest.approx(30e-6 * 2 ** (1 / 4.6))


def test_local_memory_overlaps_the_loads_less_than_arithmetic(hopper):
    _, _, fma = overlapped(hopper, {"memory": 30e-6, "arithmetic": 30e-6})
    _, _, lsu = overlapped(hopper, {"memory": 30e-6, "shared memory": 30e-6})
    assert lsu > fma


def test_a_cache_link_counts_as_memory(hopper):
    part, memory, _ = overlapped(hopper, {"l2 bandwidth": 20e-6, "issue": 20e-6,
                                          "memory": 5e-6})
    assert (part, memory) == ("issue", "l2 bandwidth")


def test_a_part_far_below_the_other_changes_nothing(hopper):
    assert overlapped(hopper, {"memory": 46.9e-6, "memory instructions": 2e-6}) is None


def test_barrier_waits_are_the_memory_s_and_do_not_overlap_it_again(hopper):
    # transpose_padded at h200: memory instructions 8.0 us plus barrier waits 21.1 us
    # beside memory 34.9 us; with the waits 41.3 us were predicted, 35.9 measured
    parts = {"memory": 34.9e-6, "memory instructions": 29.1e-6, "barrier waits": 21.1e-6}
    assert overlapped(hopper, parts, waits=21.1e-6) is None


def test_without_an_exponent_the_larger_part_is_the_time():
    assert overlapped(load_hardware("fermi"), {"memory": 30e-6, "arithmetic": 30e-6}) is None


def test_the_time_message_says_which_parts_overlap_in_part():
    # convolution hopper_v4 at 4096^2, 9 x 9, built without its sizes: memory 46.9 us and
    # memory instructions 44.5 us (the filter's elements read by global loads of the
    # __constant argument, as NVIDIA's OpenCL compiler reads them); the H100 took 62.6
    # us with the sizes built in (the record), the larger part alone said 46.9
    [d] = [d for d in feedback(check(str(ROOT / "examples" / "convolution" / "hopper_v4.mcpl")),
                               only={"time"}) if d.code == "feedback-time"]
    assert "the memory instructions and the memory part overlap only in part" in d.message
    assert "hopper.target's overlap_exponent" in d.message
    assert d.data["parts"]["memory"] < d.data["seconds"] < 62.6e-6
    assert d.data["overlap"][:2] == ("memory instructions", "memory")
