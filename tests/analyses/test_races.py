"""Races (mcl.analyses.races): units that pass values to each other through shared
memory with no barrier between; between the lanes of a warp only on a device that does
not run them in lock-step (the target file's independent_thread_scheduling)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcl.analyses import feedback
from mcl.mcpl import check

ROOT = Path(__file__).resolve().parents[2]
REDUCTION = ROOT / "examples" / "reduction"


def races(path: Path, code: str = "feedback-lockstep") -> list:
    return [d for d in feedback(check(path), only={"races"}) if d.code == code]


def lockstep(path: Path) -> list:
    return races(path)


def test_the_last_warp_of_reduction_hopper_v1_relies_on_lock_step():
    # l_data[t] += l_data[t + 32]; l_data[t] += l_data[t + 16]; ...: lane 0 reads the
    # element lane 16 writes one statement before, no barrier between
    [d] = lockstep(REDUCTION / "hopper_v1.mcpl")
    assert d.data == {"array": "l_data", "reader": {"w": 0, "t": 0},
                      "writer": {"w": 0, "t": 16}}
    assert d.span.line == 52 and "hopper.target: independent_thread_scheduling" in d.message
    assert [r.message for r in d.related][0] == "written by w = 0, t = 16 here"


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
    ("h200", "", "l[(w * 32 + t + 32) % 64]", False),        # the other warp's: a race
    ("fermi", "", "l[w * 32 + (t + 1) % 32]", False),        # fermi's warps: lock-step
])
def test_a_lane_reading_what_another_wrote(tmp_path, level, between, read, warned):
    path = tmp_path / "k.mcpl"
    path.write_text(_KERNEL.replace("LEVEL", level).replace("BETWEEN", between)
                    .replace("READ", read))
    found = lockstep(path)
    assert bool(found) == warned
    if warned:
        assert found[0].data["reader"] == {"w": 0, "t": 0}
        assert found[0].data["writer"] == {"w": 0, "t": 1}


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
        assert (found[0].data["reader"]["t"], found[0].data["writer"]["t"]) == (0, 4)


@pytest.mark.parametrize(("level", "between", "warned"), [
    ("h200", "", True), ("fermi", "", True), ("h200", "barrier(shared);", False)])
def test_warps_that_exchange_without_a_barrier_race_at_every_level(tmp_path, level,
                                                                    between, warned):
    # warp 0 reads what warp 1 wrote: no level runs two warps in lock-step
    path = tmp_path / "k.mcpl"
    path.write_text(_KERNEL.replace("LEVEL", level).replace("BETWEEN", between)
                    .replace("READ", "l[(w * 32 + t + 32) % 64]"))
    found = races(path, "feedback-race")
    assert bool(found) == warned
    if warned:
        assert found[0].data["reader"] == {"w": 0, "t": 0}
        assert found[0].data["writer"] == {"w": 1, "t": 0}
        assert "put a barrier(shared) between" in found[0].hint


def test_threads_of_a_block_race_on_a_level_without_warps(tmp_path):
    path = tmp_path / "g.mcpl"
    path.write_text("""module g;
import gpu;
gpu void g(const int n = 4096, dev float[n] out, dev float[n] inp) {
  foreach (int b in n / 64 blocks) {
    local float[64] l;
    foreach (int t in 64 threads) {
      l[t] = inp[b * 64 + t];
      out[b * 64 + t] = l[63 - t];
    }
  }
}
""")
    [d] = races(path, "feedback-race")
    assert d.data["reader"] == {"t": 0} and d.data["writer"] == {"t": 63}
    assert "put a barrier(local) between" in d.hint


_TREE = """module tree;
import gpu;
gpu void tree(const int n = 4096, dev float[n] out, dev float[n] inp) {
  foreach (int b in n / 256 blocks) {
    local float[256] l;
    foreach (int t in 256 threads) {
      l[t] = inp[b * 256 + t];
      barrier(local);
      for (int s = 128; s > 0; s >>= 1) {
        if (t < s) {
          l[t] += l[t + s];
        }
        BARRIER
      }
      if (t == 0) {
        out[b] = l[0];
      }
    }
  }
}
"""


@pytest.mark.parametrize(("barrier", "raced"), [("barrier(local);", False), ("", True)])
def test_a_tree_without_its_barrier_races_between_its_steps(tmp_path, barrier, raced):
    # the classic slip: the step s = 64 reads l[64 .. 127], which threads 64 .. 127
    # wrote in the step before, with no barrier between the two steps
    path = tmp_path / "tree.mcpl"
    path.write_text(_TREE.replace("BARRIER", barrier))
    found = races(path, "feedback-race")
    assert bool(found) == raced
    if raced:
        assert found[0].data["reader"] == {"t": 0}
        assert found[0].data["writer"] == {"t": 64}
        # every step of the barrier-free loop between the same two barriers: the
        # iterations are named
        assert "t = 0 (s = 64) reads the element that t = 64 (s = 128) writes at l[t]" \
            in found[0].message


def test_a_store_before_a_tree_needs_its_barrier(tmp_path):
    # the tree's loop holds barriers, but its first step reads what the store before
    # it wrote, with no barrier between the two: thread 0 reads l[128]
    source = _TREE.replace("BARRIER", "barrier(local);").replace(
        "      l[t] = inp[b * 256 + t];\n      barrier(local);\n",
        "      l[t] = inp[b * 256 + t];\n")
    path = tmp_path / "tree.mcpl"
    path.write_text(source)
    [d] = races(path, "feedback-race")
    assert d.data["reader"] == {"t": 0} and d.data["writer"] == {"t": 128}
    assert "in the next iteration" not in d.message


_SHIFT = """module shift;
import gpu;
gpu void shift(const int n = 4096, dev float[n] out, dev float[n] inp) {
  foreach (int b in n / 64 blocks) {
    local float[65] l;
    foreach (int t in 64 threads) {
      float v = inp[b * 64 + t];
      l[t] = v;
      l[64] = 0.0;
      barrier(local);
      for (int k = 0; k < 8; k++) {
        v = v + l[t + 1];
        BARRIER
        l[t] = v;
        barrier(local);
      }
      out[b * 64 + t] = v;
    }
  }
}
"""


@pytest.mark.parametrize(("barrier", "raced"), [("barrier(local);", False), ("", True)])
def test_a_loop_that_reads_before_its_only_barrier_and_writes_after(tmp_path, barrier,
                                                                    raced):
    # with the barrier between the read and the write of an iteration, each step's
    # reads and writes are apart; without it, thread 0 reads l[1] while thread 1 may
    # already have written it in the same step
    path = tmp_path / "shift.mcpl"
    path.write_text(_SHIFT.replace("BARRIER", barrier))
    found = races(path, "feedback-race")
    assert bool(found) == raced


def test_the_next_iteration_reads_what_the_end_of_this_one_wrote(tmp_path):
    # only the barrier between the read and the write: iteration k writes l[1] (thread
    # 1) after it, iteration k + 1 reads it (thread 0) before the next one
    source = _SHIFT.replace("BARRIER", "barrier(local);").replace(
        "        l[t] = v;\n        barrier(local);\n", "        l[t] = v;\n")
    assert source.count("barrier(local);") == 2
    path = tmp_path / "shift.mcpl"
    path.write_text(source)
    [d] = races(path, "feedback-race")
    assert d.data["reader"] == {"t": 0} and d.data["writer"] == {"t": 1}
    assert "t = 0 in the next iteration of loop k reads" in d.message


def test_every_iteration_of_a_loop_without_a_barrier_is_compared(tmp_path):
    # matmul fermi without the barrier after its tile store: thread (0, 0) reads the
    # whole row of the tile in loop k2, and at k2 = 32 the element warp 1 wrote; its
    # own warp's lanes wrote the first 32, which fermi's lock-step keeps in order
    source = (ROOT / "examples" / "matmul" / "fermi.mcpl").read_text()
    store = "              l_a[ei][tj] = a2[bi, l][ei, tj];\n            }\n"
    assert source.count(store + "            barrier(shared);\n") == 1
    path = tmp_path / "fermi.mcpl"
    path.write_text(source.replace(store + "            barrier(shared);\n", store))
    [d] = races(path, "feedback-race")
    assert d.data["reader"] == {"w": 0, "t": 0} and d.data["writer"] == {"w": 1, "t": 0}
    assert "(k2 = 32) reads the element that w = 1, t = 0 (ei = 0) writes" in d.message
    assert races(ROOT / "examples" / "matmul" / "fermi.mcpl", "feedback-race") == []


@pytest.mark.parametrize(("update", "raced"), [
    ("a[i + 1] = (a[i] + a[i + 2]) / 2.0;", True),   # an in-place smoothing step
    ("a[i + 1] = 2.0 * a[i + 1];", False),           # each thread its own element
])
def test_an_in_place_update_of_device_memory(tmp_path, update, raced):
    # every unit of the kernel shares a parameter it both writes and reads, and no
    # barrier orders units of different blocks
    path = tmp_path / "smooth.mcpl"
    path.write_text(f"""module smooth;
import perfect;
perfect void smooth(const int n = 1024, main float[n] a) {{
  foreach (int i in n - 2 threads) {{
    {update}
  }}
}}
""")
    found = races(path, "feedback-race")
    assert bool(found) == raced
    if raced:
        assert found[0].data["reader"] == {"i": 1} and found[0].data["writer"] == {"i": 0}
        assert "read one array and write another" in found[0].hint
