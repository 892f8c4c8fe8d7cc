"""Atomic updates a block makes at its end (histogram's merges of each block's bins into
hist): they queue as the blocks end their streams, which the blocks of a round do within
the target file's block_end_spread of the rest's time of each other, so what they take
beyond that spread follows the rest of the kernel (mcl.analyses.timing._end_updates)."""

from __future__ import annotations

from pathlib import Path

import pytest

import mcl.analyses.target_settings as settings
from mcl.analyses.level import feedback_at_level
from mcl.mcpl import check

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SPREAD = 0.1        # hopper.target's block_end_spread


def _time(version: str, n: int):
    """histogram's ``version`` translated to hopper: its feedback-time diagnostic."""
    found = feedback_at_level(check(EXAMPLES / "histogram" / f"{version}.mcpl"), "hopper",
                              values={"n": n}, only={"time"}).diagnostics
    [d] = [d for d in found if d.code == "feedback-time"]
    return d


def _without_spread(monkeypatch):
    """The target file as if it gave no block_end_spread."""
    own = settings.positive_setting
    monkeypatch.setattr(settings, "positive_setting",
                        lambda hw, name: None if name == "block_end_spread" else own(hw, name))


def test_merges_at_the_blocks_end_follow_the_rest_beyond_the_spread(monkeypatch):
    # nvidia_v1's 2048 blocks of 128, every one resident at once (one round), each
    # merging its 256 bins: 24 us in the L2's units, beyond the tenth of the stream
    n, version = 1 << 26, "nvidia_v1"
    d = _time(version, n)
    parts = d.data["parts"]
    merges = parts["atomics"]
    rest = max(v for k, v in parts.items() if k != "atomics")
    assert merges > SPREAD * rest     # the merges take longer than the ends' spread
    _without_spread(monkeypatch)
    before = _time(version, n).data["seconds"]
    assert d.data["seconds"] - before == pytest.approx(
        rest + merges - SPREAD * rest - max(rest, merges), rel=1e-6)
    assert "the atomic updates the blocks make at their end" in d.message
    assert "block_end_spread" in d.message


def test_merges_within_the_spread_stay_hidden(monkeypatch):
    # gpu_v1's 1024 blocks merge half as much (12 us) after a stream of 2^27 values
    # (about 240 us): within the spread of the blocks' ends
    n = 1 << 27
    d = _time("gpu_v1", n)
    parts = d.data["parts"]
    assert parts["atomics"] < SPREAD * max(v for k, v in parts.items() if k != "atomics")
    _without_spread(monkeypatch)
    assert _time("gpu_v1", n).data["seconds"] == d.data["seconds"]
    assert "at their end" not in d.message


def test_updates_inside_the_stream_are_not_at_the_blocks_end(monkeypatch):
    # histogram perfect updates hist[input[i]] for every element: no stream ends before them
    n = 1 << 20
    d = _time("perfect", n)
    _without_spread(monkeypatch)
    assert _time("perfect", n).data["seconds"] == d.data["seconds"]
    assert "at their end" not in d.message
