"""An execution part and a memory part that take about as long overlap only in part
(hopper.target's overlap_exponent, benchmarks/opencl/overlap_probe.py): the predicted
time is then more than the larger of them. The copies of a loop the generator unrolls
completely keep their loads in flight together where NVIDIA's compiler predicates the
body (h200.target's predicated_body, benchmarks/opencl/unrolled_loads_probe.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from mcl.analyses import feedback
from mcl.analyses.timing import overlapped
from mcl.hdl import load_hardware
from mcl.mcpl import check

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks" / "fidelity"))
sys.path.insert(0, str(ROOT / "benchmarks" / "opencl"))

import fidelity_cases as C  # noqa: E402
import fidelity_predict as P  # noqa: E402
from unrolled_loads_probe import source  # noqa: E402


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


#: benchmarks/opencl/issue_overlap_probe.py on the H200 (2026-12-03): a tiled matmul's
#: inner loop of 4 128-bit reads of local memory and 64 multiply-adds a step
ISSUE_PROBE = json.loads((ROOT / "benchmarks" / "results" / "perf" /
                          "h200_2026-12-03_issue_overlap" /
                          "issue_overlap_probe.json").read_text())


def test_the_issue_slots_and_local_memory_overlap_in_part_as_the_probe_measured(hopper):
    # the probe's 2 x 2 shape in 1, 2 and 4 work-groups an SM: the issue slots' time (the
    # multiply-adds alone, with the reads' slots), the reads alone, both
    rows = [r for r in ISSUE_PROBE["rows"] if (r["ra"], r["cb"]) == (2, 2)]
    assert len(rows) == 3
    for r in rows:
        issue = r["fma_alone_s"] * (r["multiply_adds_a_step"] + r["reads_a_step"]) \
            / r["multiply_adds_a_step"]
        part, other, together = overlapped(hopper, {"issue": issue,
                                                    "shared memory": r["lds_alone_s"]})
        assert (part, other) == ("issue", "shared memory")
        assert together == pytest.approx(r["both_s"], rel=0.02)
        assert together > 1.05 * issue


def test_barrier_waits_are_added_once_to_the_issue_slots_and_local_memory(hopper):
    # matmul hopper_v5 at 2048^3 on the H200: issue 288.3 us and shared memory 223.6 us
    # beside barrier waits of 46.9 us, which both include; 403 us measured
    waits = 46.9e-6
    parts = {"issue": 335.2e-6, "shared memory": 270.5e-6, "arithmetic": 311.7e-6,
             "barrier waits": waits, "memory": 12.5e-6}
    part, other, together = overlapped(hopper, parts, waits=waits)
    assert (part, other) == ("issue", "shared memory")
    q = 2.2
    assert together == pytest.approx((288.3e-6 ** q + 223.6e-6 ** q) ** (1 / q) + waits)
    assert 0.95 < together / 403e-6 < 1.05


def test_the_time_message_says_the_issue_slots_and_local_memory_overlap_in_part():
    case = {c.name: c for c in C.example_cases(["matmul"])}["matmul/hopper_v12"]
    [d] = [d for d in P.hopper_feedback(case, registers=213, only=("time",), level="h200")
           if d.code == "feedback-time"]
    assert "the issue slots and the shared memory part overlap only in part" in d.message, \
        d.message
    assert "h200.target's issue_overlap_exponent" in d.message
    assert d.data["overlap"][:2] == ("issue", "shared memory")
    assert d.data["seconds"] > d.data["parts"]["issue"]


#: benchmarks/opencl/unrolled_loads_probe.py on the H200 (2026-11-30): four copies of a
#: loop body that loads a[k], computes M multiply-adds on it and stores c[k], with the
#: SASS's loads issued together and the kernel's cold time
UNROLLED = json.loads((ROOT / "benchmarks" / "results" / "perf" / "h200_2026-11-30" /
                       "unrolled_loads" / "unrolled_loads_probe.json").read_text())


def _probe_source(row: dict) -> str:
    return source(row["multiply_adds"], row["call"], row["guarded"], row["staged"])


def _probe_prediction(row: dict, level: str = "h200", registers: int | None = None) -> dict:
    name = f"probe/m{row['multiply_adds']}_{row['call']}_{row['guarded']}_{row['staged']}"
    case = C.Case(name=name, kernel="probe", version="v", level="nvidia", file="",
                  source=_probe_source(row), sizes={"n": UNROLLED["n"]}, sweep=True)
    return P.predicted_time(case, registers=registers or row["registers"], level=level)


def _probe_row(m: int, call: str | None = None, guarded: bool = True,
               staged: bool = False) -> dict:
    [row] = [r for r in UNROLLED["rows"] if (r["multiply_adds"], r["call"], r["guarded"],
                                             r["staged"]) == (m, call, guarded, staged)]
    return row


@pytest.mark.parametrize("shape", [(0, None, True), (8, None, True), (16, None, True),
                                   (32, None, False), (8, "sqrt", True), (8, "/", True),
                                   (24, None, True, True), (8, "exp", True, True)])
def test_copies_whose_loads_the_compiler_issues_first_are_in_flight_together(shape):
    # their SASS loads 3 to 16 elements before the first store; predicted within 7% of
    # the H200's times (2-6% over), where one load in flight a warp had them 55-61% over
    row = _probe_row(*shape)
    assert row["loads_together"] >= 3
    assert _probe_prediction(row)["seconds"] == pytest.approx(row["seconds"], rel=0.07)


def test_a_long_guarded_body_loads_each_copy_after_the_previous_one():
    # 24 multiply-adds, or exp and 8 (17.7 at exp's cost), behind `if (k < n)`: a branch
    # a copy, one load in flight (68.9 us with 8 multiply-adds, 93.1 with 24)
    short, long_ = _probe_prediction(_probe_row(8)), _probe_prediction(_probe_row(24))
    exp = _probe_prediction(_probe_row(8, "exp"))
    assert _probe_row(24)["loads_together"] == _probe_row(8, "exp")["loads_together"] == 1
    assert long_["parts"]["latency"] == pytest.approx(4 * short["parts"]["latency"])
    assert exp["parts"]["latency"] == pytest.approx(long_["parts"]["latency"])
    assert long_["seconds"] > 1.3 * short["seconds"]


def test_without_the_target_s_predicated_body_each_copy_waits_alone():
    # fermi.target measured no compiler's predication: every copy one load in flight (the
    # same registers for both, so that both keep as many warps)
    short = _probe_prediction(_probe_row(8), level="fermi", registers=26)
    long_ = _probe_prediction(_probe_row(24), level="fermi", registers=26)
    assert short["parts"]["latency"] == pytest.approx(long_["parts"]["latency"])


def test_the_time_message_says_which_copies_load_one_at_a_time_and_what_staging_saves(
        tmp_path):
    # 24 multiply-adds behind `if (k < n)`: the message names a[k], the loop and the
    # limit, and advises a register array filled first; written so (the probe's staged
    # shape), the H200 takes 70.1 µs against 92.3, and the message is gone
    from mcl.analyses.level import feedback_at_level
    from mcl.mcpl import check

    def time_diagnostic(row):
        path = tmp_path / "k.mcpl"
        path.write_text(_probe_source(row))
        lf = feedback_at_level(check(str(path)), "h200", only={"time"})
        [d] = [d for d in lf.diagnostics if d.code == "feedback-time"]
        return d

    def message(row):
        return time_diagnostic(row).message

    long_, staged = _probe_row(24), _probe_row(24, staged=True)
    text = message(long_)
    # the saving it states is what the staged version is predicted to take less
    saved = time_diagnostic(long_).data["serial_saved"]
    assert saved == pytest.approx(time_diagnostic(long_).data["seconds"]
                                  - time_diagnostic(staged).data["seconds"], rel=0.02)
    assert "a[k] in the 4 copies of the unrolled loop at line" in text
    assert "is loaded one copy at a time" in text
    assert "about 24 multiply-adds" in text and "predicated_body, 17.5" in text
    assert "into a register array first" in text
    assert "one copy at a time" not in message(staged)
    assert staged["loads_together"] == 4 and staged["seconds"] < 0.8 * long_["seconds"]
    # a body the compiler predicates gets no such note
    assert "one copy at a time" not in message(_probe_row(8))
