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
    # (2 x 2048 x 2048 floats at the 2.88 TB/s hopper.target measured a kernel's reads
    # to reach, of the description's 3.35)
    fill = 2 * 2048 * 2048 * 4 / 2.88e12
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


def _translated_time(path: Path, tmp_path: Path, replace: tuple[str, str], values: dict):
    """The feedback-time diagnostic of ``path`` with one line replaced, at hopper."""
    from mcl.mcpl import parse, print_module
    from mcl.translate import translate
    source = path.read_text().replace(*replace)
    assert replace[1] in source
    file = tmp_path / path.name
    file.write_text(source)
    text = print_module(translate(check(str(file)).module, to="hopper"))
    [d] = [d for d in feedback(check(parse(text, str(file) + "@hopper")), only={"time"},
                               values=values) if d.code == "feedback-time"]
    return d


def test_many_small_blocks_wait_for_the_device_to_start_them(tmp_path):
    """vector_add gpu_v1 at hopper, one element per thread: in blocks of 64 threads
    its 262144 blocks take longer to start (hopper.target's block_dispatch_rate, 1.65
    per ns: 159 µs) than its traffic to move. Measured on the H100: 161-165 µs
    (benchmarks/results/perf/round33/dispatch_rate.json, round31/sweep_times_*.json);
    in blocks of 256 threads the 65536 blocks take 40 µs to start and the memory
    bounds it (72-79 µs measured)."""
    va = MATMUL.parent / "vector_add" / "gpu_v1.mcpl"
    sizes = {"n": 1 << 24}
    d = _translated_time(va, tmp_path, ("nrThreads = 256;", "nrThreads = 64;"), sizes)
    assert d.data["limiter"] == "block dispatch"
    assert d.data["seconds"] == pytest.approx(163e-6, rel=0.1)
    assert "give each block more" in d.message
    d = _translated_time(va, tmp_path, ("nrThreads = 256;", "nrThreads = 256;"), sizes)
    assert d.data["limiter"] == "memory"
    assert d.data["parts"]["block dispatch"] == pytest.approx(65536 / 1.65e9)


def test_the_dispatch_rate_falls_for_blocks_that_fill_half_an_smp():
    from mcl.analyses.timing_rates import dispatch_rate
    from mcl.hdl import load_hardware
    hw = load_hardware("hopper")
    assert dispatch_rate(hw, 64) == dispatch_rate(hw, 640) == pytest.approx(1.65e9)
    assert dispatch_rate(hw, 1024) == pytest.approx(0.88e9)
    assert dispatch_rate(load_hardware("fermi"), 64) is None


def test_a_branch_no_lane_of_a_warp_takes_is_not_issued():
    # xeon_phi_v2 fills bTemp with `if (j < m) bTemp[k] = b[k, j]; else bTemp[k] = 0.0;`:
    # with m a multiple of the 16 lanes, no vector takes the else branch, whose store
    # is never issued; counted, it made v2 "predicted slower than xeon_phi_v1" (23.4
    # against 21.2 ms; the paper measured v2 1.31x faster); 21.3 ms since the busiest
    # core's share of its blocks counts over every round
    diags = feedback(check(MATMUL / "xeon_phi_v2.mcpl"))
    assert not [d for d in diags if d.code == "feedback-slower"]
    [d] = [d for d in diags if d.code == "feedback-time"]
    assert "21.3 ms" in d.message


def test_a_branch_some_lanes_take_is_issued():
    # the same fill with m one element short of a vector's multiple: the last vector
    # of each row takes both branches, and both stores are issued there
    whole, ragged = (feedback(check(MATMUL / "xeon_phi_v2.mcpl"), only={"time"},
                              values={"n": 2048, "m": m, "p": 2048})
                     for m in (2048, 2047))
    assert _time_part(ragged) > _time_part(whole)


def _time_part(diags) -> float:
    [d] = [d for d in diags if d.code == "feedback-time"]
    return d.data["parts"]["memory instructions"]


def _message(name: str) -> str:
    [d] = [d for d in feedback(check(MATMUL / f"{name}.mcpl"), only={"time"},
                               values=SIZES) if d.code == "feedback-time"]
    return d.message


def test_an_issue_bound_time_states_the_measured_issue_share():
    # hopper.target's issued_share_measured: the examples' issue-bound versions issued in
    # 63-78% of their cycles (ncu on the H200), which the issue part takes as all of them
    msg = _message("hopper_v5")
    assert "issue bound" in msg
    assert "issued in 63-78% of their cycles" in msg and "up to 1.6 times" in msg
    # bound by the L2's link, not the issue slots: nothing said
    assert "issued_share_measured" not in _message("hopper")


@pytest.mark.parametrize("value,expected", [
    ([0.78, 0.63], (0.63, 0.78)), ([0, 0.78], None), ([0.63], None), (["low", 1], None),
    ([0.5, 1.5], None), (0.7, None)])
def test_a_malformed_issued_share_says_nothing(monkeypatch, value, expected):
    import mcl.analyses as analyses
    from mcl.analyses import target_settings
    monkeypatch.setattr(target_settings, "device_settings",
                        lambda hw: {"issued_share_measured": value})
    assert analyses._issued_share(None) == expected
