"""The time message beside a grid that ends while its warps progress unevenly: few
rounds of resident blocks whose warps go round their loads several times with the issue
slots busy (mcl.analyses.timing_overlap.uneven_round; measured by
benchmarks/opencl/sequence_probe.py: black_scholes' versions in one or two rounds run
3-7% behind gpu_v1's 3.7 rounds on the H200, ncu's warps active 84% against 77% and
69%)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcl.analyses import feedback
from mcl.analyses.level import feedback_at_level
from mcl.mcpl import check

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _time(kernel: str, version: str, level: str = "hopper", **sizes):
    checked = check(EXAMPLES / kernel / f"{version}.mcpl")
    found = (feedback(checked, only={"time"}, values=sizes or None)
             if checked.module.functions[0].hardware == level else
             feedback_at_level(checked, level, only={"time"}, values=sizes or None).diagnostics)
    [d] = [d for d in found if d.code == "feedback-time"]
    return d


@pytest.mark.parametrize("version,rounds", [("hopper_v1", "one round"),
                                            ("nvidia_v1", "1.8 rounds")])
def test_a_grid_of_few_rounds_with_busy_issue_slots_is_named(version, rounds):
    d = _time("black_scholes", version)
    assert f"the grid runs in {rounds} of the resident blocks" in d.message
    assert "uneven_progress_measured" in d.message
    assert "which does not count it" in d.message


def test_the_range_is_a_share_of_a_block_s_life():
    # hopper_v1: one round, so a block lives the whole predicted time less the launch's
    # fixed cost (29.1 us at hopper): 0.05 and 0.12 of it
    d = _time("black_scholes", "hopper_v1")
    assert "1.46 µs to 3.5 µs beyond the predicted time" in d.message, d.message
    # nvidia_v1: 1.85 rounds, a block lives the time over them
    assert "0.786 µs to 1.89 µs" in _time("black_scholes", "nvidia_v1").message


@pytest.mark.parametrize("kernel,version", [
    ("black_scholes", "gpu_v1"),      # 3.7 rounds of blocks
    ("black_scholes", "perfect"),     # an option a thread, 14.8 rounds
    ("vector_add", "hopper_v1"),      # one round, but the issue slots nearly idle
    ("matmul", "hopper_v12"),         # issue bound, its warps meeting at barriers
])
def test_not_named_where_the_probe_measured_no_such_end(kernel, version):
    assert "the grid runs in" not in _time(kernel, version).message


def test_not_named_without_the_measurement():
    # the gpu level's description has no target file with the measured range
    checked = check(EXAMPLES / "black_scholes" / "gpu_v1.mcpl")
    [d] = [d for d in feedback(checked, only={"time"}) if d.code == "feedback-time"]
    assert "uneven_progress_measured" not in d.message


@pytest.mark.parametrize("value,expected", [
    ([0.12, 0.05], (0.05, 0.12)), ([0.05], None), (["low", 0.1], None), ([0.05, 1.5], None),
    (0.1, None)])
def test_the_measured_range_is_read_as_two_shares(monkeypatch, value, expected):
    from mcl.analyses import target_settings
    monkeypatch.setattr(target_settings, "device_settings",
                        lambda hw: {"uneven_progress_measured": value})
    assert target_settings.share_range(None, "uneven_progress_measured") == expected


def test_a_grid_on_uneven_holders_with_no_part_to_time_is_no_internal_error(tmp_path):
    """matmul mic_v2 with its loop over ej mistyped as `ej < ej` (found by mutating the
    examples): its grid falls unevenly on the cores and no part of the time model has a
    figure, and the time pass asked for the largest of no parts (an internal error of
    mcl feedback)."""
    source = (EXAMPLES / "matmul" / "mic_v2.mcpl").read_text()
    assert "ej < y;" in source
    f = tmp_path / "mic_v2.mcpl"
    f.write_text(source.replace("ej < y;", "ej < ej;"))
    found = feedback(check(f), values={"n": 96, "m": 256, "p": 64})
    assert not any(d.is_error for d in found)
