"""Blocks that do not fall evenly on the SMs: where an execution part bounds the
predicted time, it is the busiest SM's (ceil(B / H) blocks where an even spread gives
B / H), and the time message says so; where the memory bounds it, nothing is added."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcl.analyses import feedback
from mcl.analyses.timing import busiest_share
from mcl.mcpl import check

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_busiest_share():
    assert busiest_share(512, 132) == pytest.approx(4 * 132 / 512)
    assert busiest_share(528, 132) == 1.0
    assert busiest_share(64, 132) == pytest.approx(132 / 64)     # the others idle
    assert busiest_share(None, 132) == 1.0
    assert busiest_share(0, 132) == 1.0


def _time(path: Path, sizes: dict) -> tuple[dict, str]:
    [d] = [d for d in feedback(check(path), only={"time"}, values=sizes)
           if d.code == "feedback-time"]
    return d.data, d.message


def test_issue_bound_grid_is_the_busiest_sms():
    # matmul hopper_v5 at 2048^3: 256 blocks of 128 x 128 on the hopper level's 132 SMs,
    # two resident an SM: one round, 2 on 124 of them and 1 on the other 8
    data, msg = _time(EXAMPLES / "matmul" / "hopper_v5.mcpl",
                      {"n": 2048, "m": 2048, "p": 2048})
    assert data["limiter"] == "issue"
    assert "the grid's 256 blocks fall 2 to a smp on 124 of the 132 smps and 1 on the " \
           "others, so the issue part is the busiest smps' (3.1% above an even spread)" in msg


def test_an_even_grid_adds_nothing():
    # the same kernel at sizes that make 12 x 22 = 264 blocks (2 an SM) against 256: the
    # parts per block are the same, so the issue part grows by the blocks alone
    even, msg = _time(EXAMPLES / "matmul" / "hopper_v5.mcpl",
                      {"n": 1536, "m": 2816, "p": 2048})
    uneven, _ = _time(EXAMPLES / "matmul" / "hopper_v5.mcpl",
                      {"n": 2048, "m": 2048, "p": 2048})
    assert "fall" not in msg
    # 264 blocks evenly against 256 on the busiest SMs' 2: the same time for the issue
    per_block = (even["parts"]["issue"] - even["parts"]["barrier waits"]) / 264
    busiest = (uneven["parts"]["issue"] - uneven["parts"]["barrier waits"]) / (2 * 132)
    assert busiest == pytest.approx(per_block, rel=0.01)


def test_over_many_rounds_the_busiest_sm_still_ends_last():
    # at 4096^3, 1024 blocks: 3.9 rounds of 264 resident, 8 on 100 SMs and 7 on 32
    # (benchmarks/opencl/grid_rounds_probe.py, blocks of 1024 two an SM: 2113 blocks,
    # 8 rounds and one block, 6.1% over 2112, as ceil(G / 132) says)
    data, msg = _time(EXAMPLES / "matmul" / "hopper_v5.mcpl",
                      {"n": 4096, "m": 4096, "p": 4096})
    assert data["limiter"] == "issue"
    assert "the grid's 1024 blocks fall 8 to a smp on 100 of the 132 smps and 7 on the " \
           "others, so the issue part is the busiest smps' (3.1% above an even spread)" in msg


def test_memory_bound_grid_adds_nothing():
    # vector_add nvidia_v1: 1024 blocks on 132 SMs (8 on 100, 7 on 32), memory bound:
    # the busier SMs' blocks take the memory the others leave (benchmarks/opencl/
    # grid_balance_probe.py: 924 .. 1056 blocks of one round within 2%)
    data, msg = _time(EXAMPLES / "vector_add" / "nvidia_v1.mcpl", {"n": 1 << 24})
    assert data["limiter"] == "memory"
    assert "fall" not in msg

