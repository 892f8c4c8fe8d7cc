"""Warp-synchronous code (mcl.analyses.lockstep): lanes of a warp that pass values to
each other through shared memory with no barrier between, on a device that does not
run them in lock-step (the target file's independent_thread_scheduling)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcl.analyses import feedback
from mcl.mcpl import check

ROOT = Path(__file__).resolve().parents[2]
REDUCTION = ROOT / "examples" / "reduction"


def lockstep(path: Path) -> list:
    return [d for d in feedback(check(path), only={"lockstep"})
            if d.code == "feedback-lockstep"]


def test_the_last_warp_of_reduction_hopper_v1_relies_on_lock_step():
    # l_data[t] += l_data[t + 32]; l_data[t] += l_data[t + 16]; ...: lane 0 reads the
    # element lane 16 writes one statement before, no barrier between
    [d] = lockstep(REDUCTION / "hopper_v1.mcpl")
    assert d.data == {"array": "l_data", "reader": 0, "writer": 16}
    assert d.span.line == 52 and "hopper.target: independent_thread_scheduling" in d.message
    assert [r.message for r in d.related][0] == "written by t = 16 here"


@pytest.mark.parametrize("version", ["hopper_v2", "hopper_v3", "nvidia_v1"])
def test_trees_with_barriers_exchange_nothing_unsynchronised(version):
    # hopper_v2 and v3 end their trees with barriers; nvidia has no target file that
    # says its lanes run apart
    assert lockstep(REDUCTION / f"{version}.mcpl") == []


_KERNEL = """module k;
import LEVEL;
LEVEL void k(const int n = 4096, global float[n] out, global float[n] inp) {
  foreach (int b in n / 64 blocks) {
    shared float[64] l;
    foreach (int w in 2 warps) {
      foreach (int t in 32 threads) {
        l[w * 32 + t] = inp[b * 64 + w * 32 + t];
        BETWEEN
        out[b * 64 + w * 32 + t] = READ;
      }
    }
  }
}
"""


@pytest.mark.parametrize(("level", "between", "read", "warned"), [
    ("h200", "", "l[w * 32 + (t + 1) % 32]", True),          # a neighbour's value
    ("h200", "barrier(shared);", "l[w * 32 + (t + 1) % 32]", False),
    ("h200", "", "l[w * 32 + t]", False),                    # its own value
    ("h200", "", "l[(w * 32 + t + 32) % 64]", False),        # the other warp's: not lanes
    ("fermi", "", "l[w * 32 + (t + 1) % 32]", False),        # fermi's warps: lock-step
])
def test_a_lane_reading_what_another_wrote(tmp_path, level, between, read, warned):
    path = tmp_path / "k.mcpl"
    path.write_text(_KERNEL.replace("LEVEL", level).replace("BETWEEN", between)
                    .replace("READ", read))
    found = lockstep(path)
    assert bool(found) == warned
    if warned:
        assert found[0].data["reader"] == 0 and found[0].data["writer"] == 1


@pytest.mark.parametrize(("steps", "warned"), [
    # a tree step within a warp: the writers (t < 8) and the elements they read
    # (t + 8 .. t + 15) are apart, so the step alone exchanges nothing
    ("if (t < 8) { l[w * 32 + t] += l[w * 32 + t + 8]; }", False),
    # the next step without a barrier: lane 0 reads element 4, which lane 4 wrote
    ("if (t < 8) { l[w * 32 + t] += l[w * 32 + t + 8]; } "
     "if (t < 4) { l[w * 32 + t] += l[w * 32 + t + 4]; }", True)])
def test_lanes_an_if_keeps_apart(tmp_path, steps, warned):
    path = tmp_path / "k.mcpl"
    path.write_text(_KERNEL.replace("LEVEL", "h200")
                    .replace("BETWEEN", "barrier(shared); " + steps)
                    .replace("READ", "l[w * 32 + t]"))
    found = lockstep(path)
    assert bool(found) == warned
    if warned:
        assert (found[0].data["reader"], found[0].data["writer"]) == (0, 4)
