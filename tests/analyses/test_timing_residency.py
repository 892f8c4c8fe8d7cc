"""The predicted time of kernels whose warps wait: at a barrier for the shared tile
they filled (its input crosses the memory interface while the units idle), and for
their block's last warp before a new block takes the slots (fewer warps in flight)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcl.analyses import feedback
from mcl.analyses.level import feedback_at_level
from mcl.mcpl import check

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _parts(kernel: str, version: str, **values) -> dict:
    """The parts of the predicted time of the version translated to hopper."""
    checked = check(EXAMPLES / kernel / f"{version}.mcpl")
    found = feedback(checked, only={"time"}, values=values) if version.startswith("hopper") \
        else feedback_at_level(checked, "hopper", values=values, only={"time"}).diagnostics
    [d] = [d for d in found if d.code == "feedback-time"]
    return d.data["parts"]


def test_a_tile_filled_once_waits_for_its_input():
    # hopper_v2 fills a shared tile, then computes: one phase per round of blocks,
    # and the input (4104 x 4104 floats) crosses the memory interface meanwhile;
    # hopper_v3 reads its input through the L1 cache: no barrier, no wait
    sizes = {"h": 4096, "w": 4096, "fh": 9, "fw": 9}
    v2 = _parts("convolution", "hopper_v2", **sizes)
    v3 = _parts("convolution", "hopper_v3", **sizes)
    assert v2["barrier waits"] > 4104 * 4104 * 4 / 3350e9
    assert "barrier waits" not in v3
    # v3's issue and memory parts about equal since its filter's loads count (global loads
    # of the __constant argument): both below v2's issue
    assert v2["issue"] > max(v3["memory"], v3["issue"])


def test_blocks_replaced_during_the_run_keep_fewer_warps_in_flight():
    # one element per thread: blocks of 1024 (2 per SM) lose a quarter of their warps
    # while they drain, blocks of 256 (8 per SM) a sixteenth; a grid-stride loop
    # keeps every block resident (none replaced), and hopper_v1's has 4 copies of its
    # loads in flight (a short body, predicated: timing_overlap.unrolled_copies)
    lat = {v: _parts("vector_add", v, n=2 ** 24)["latency"]
           for v in ("perfect", "gpu_v1", "hopper_v1")}
    assert lat["perfect"] == pytest.approx(4 * lat["hopper_v1"] / (1 - 1 / 4), rel=0.01)
    assert lat["gpu_v1"] == pytest.approx(4 * lat["hopper_v1"] / (1 - 1 / 16), rel=0.01)


def test_threads_that_go_round_a_grid_stride_loop_unequally_often_end_in_a_thinner_round():
    # 2^24 elements: nvidia_v1's 1024 blocks x 1024 elements go round 16 times each;
    # hopper_v1's 1056 blocks (more warps, less latency to wait) 15.5 times on average,
    # the last round with half of them, each still waiting its round trip
    n = 2 ** 24
    nv, hp = (_parts("vector_add", v, n=n) for v in ("nvidia_v1", "hopper_v1"))
    assert hp["latency"] < nv["latency"]
    assert hp["memory"] > nv["memory"]
    # where hopper_v1's threads go round equally often (16 times), its warps win
    even = 1056 * 1024 * 16
    nv, hp = (_parts("vector_add", v, n=even) for v in ("nvidia_v1", "hopper_v1"))
    assert hp["memory"] < nv["memory"]


def test_loads_that_only_fill_a_register_array_are_in_flight_together(tmp_path):
    # histogram hopper_v1 fills v[0..3] from input in an unrolled loop before it uses
    # them: 4 loads a warp in flight (the final update of hist[k], an atomic, is none:
    # nothing comes back to wait for); with unroll = 1 one, with the same warps
    source = (EXAMPLES / "histogram" / "hopper_v1.mcpl").read_text()
    assert "const int unroll = 4;" in source
    one = tmp_path / "hopper_v1.mcpl"
    one.write_text(source.replace("const int unroll = 4;", "const int unroll = 1;"))
    n = 1056 * 1024 * 16
    four = _parts("histogram", "hopper_v1", n=n)
    found = feedback(check(one), only={"time"}, values={"n": n})
    [d] = [d for d in found if d.code == "feedback-time"]
    assert d.data["parts"]["latency"] == pytest.approx(4 * four["latency"], rel=0.01)


def test_the_cache_link_s_requests_wait_its_latency_with_the_warps_in_flight():
    # matmul gpu_v2 with the compiler's 44 registers holds one block of 1024 threads an
    # SM, with 32 its two: the same L2 traffic (b's columns, which the L1 does not keep)
    # waits hopper.hdl's 200 cycles of l2_link with half the loads in flight (on the H100
    # record -21% -> -18%; gpu_v3 and nvidia -15% -> -8%)
    from mcl.analyses import Resources
    from mcl.analyses.level import feedback_at_level
    checked = check(EXAMPLES / "matmul" / "gpu_v2.mcpl")
    parts = {}
    for regs in (32, 44):
        res = {f.name: Resources(regs, "NVIDIA compiler") for f in checked.module.functions}
        found = feedback_at_level(checked, "hopper", values={"n": 2048, "m": 2048, "p": 2048},
                                  resources=res, only={"time"}).diagnostics
        [d] = [d for d in found if d.code == "feedback-time"]
        parts[regs] = d.data["parts"]["l2 bandwidth"]
    assert parts[44] > 1.03 * parts[32]
