"""What the occupancy message (feedback-occupancy) claims, against what the blocks do:
a grid of fewer blocks than fit leaves slots empty, registers are a limit only where
they alone stop one more block, and the register hint gives the blocks its cap lets in.
The blocks that fit are CUDA's (test_fidelity.py); these tests pin the words."""

from __future__ import annotations

import textwrap
from pathlib import Path

import mcl
from mcl.analyses import Resources
from mcl.versions.sizes import built_specialised

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _occupancy(path, values=None, resources=None):
    """The occupancy message of the kernel at ``path``, built as `mcl feedback` builds
    it (convolution hopper_v4 with its sizes as compile-time constants)."""
    checked = mcl.check(str(path))
    (d,) = [d for d in mcl.feedback(checked, values=values, only=["occupancy"],
                                    resources=resources,
                                    specialize=built_specialised(str(path)))
            if d.code == "feedback-occupancy"]
    return d


def test_a_grid_of_one_block_per_smp_is_not_said_to_fill_the_thread_slots():
    """reduction hopper_v3 launches min(132, ...) blocks of 1024 threads on 132 SMs: 2
    fit per SM (as CUDA says), 1 is there."""
    d = _occupancy(EXAMPLES / "reduction" / "hopper_v3.mcpl")
    assert d.data["resident"] == 2 and d.severity.name.lower() == "info"
    assert "all 2048 thread slots in use" not in d.message, d.message
    assert d.message.startswith("2 blocks of 1024 threads fit per smp (2/32 block slots), "
                                "limited by warps, threads, registers ("), d.message
    assert ("but the grid's 132 blocks place 1 on each of the 132 smps: 1024 of the 2048 "
            "thread slots in use; 2 blocks fit up to 32 registers per thread") in d.message


def test_a_grid_that_fills_some_smps_more_than_others_says_both():
    """gesummv hopper_v1: 512 blocks of 256 threads on 132 SMs, where 8 fit: 4 on 116
    of them, 3 on the other 16."""
    d = _occupancy(EXAMPLES / "gesummv" / "hopper_v1.mcpl")
    assert d.data["resident"] == 8
    assert ("but the grid's 512 blocks place 4 on 116 of the 132 smps and 3 on the "
            "others: 1024 and 768 of the 2048 thread slots in use") in d.message, d.message


_GRID = """\
    module grid;

    import hopper;

    hopper void scale(const int n, const int nrBlocks, global float[n] a) {
      foreach (int bi in nrBlocks blocks) {
        foreach (int w in 32 warps) {
          foreach (int t in 32 threads) {
            int i = bi * 1024 + w * 32 + t;
            if (i < n) {
              a[i] = 2.0 * a[i];
            }
          }
        }
      }
    }
"""


def test_a_grid_of_fewer_blocks_than_smps_leaves_the_others_idle(tmp_path):
    path = tmp_path / "grid.mcpl"
    path.write_text(textwrap.dedent(_GRID))
    d = _occupancy(path, values={"n": 102400, "nrBlocks": 100})
    assert d.data["resident"] == 2
    assert ("but the grid's 100 blocks place 1 on 100 of the 132 smps and none on the "
            "others: 1024 of the 2048 thread slots in use") in d.message, d.message


def test_a_grid_of_unknown_size_is_not_said_to_place_anything(tmp_path):
    path = tmp_path / "grid.mcpl"
    path.write_text(textwrap.dedent(_GRID))
    d = _occupancy(path)
    assert "grid" not in d.message
    assert d.message == ("using 2/32 block slots per smp, limited by warps, threads "
                         "(warps: 32 warps per block of 64 warp slots; threads: 1024 "
                         "threads per block of 2048 thread slots): all 2048 thread slots "
                         "in use"), d.message


def test_registers_that_would_let_more_blocks_in_are_not_a_limit():
    """reduction hopper_v2: about 20 registers per thread, 768 per warp: 21 warps of a
    partition's 16384 registers, 10 blocks of 8 warps; the warp slots let 8 in."""
    d = _occupancy(EXAMPLES / "reduction" / "hopper_v2.mcpl")
    assert d.data["resident"] == 8
    assert d.data["limiting"] == ["warps", "threads"], d.data["limiting"]
    assert d.data["limits"]["registers"] == 10
    assert "registers" not in d.message, d.message


def test_registers_that_stop_one_more_block_are_still_a_limit():
    for name, resident in [("matmul/hopper_v1.mcpl", 3), ("matmul/nvidia_v1.mcpl", 4),
                           ("reduction/hopper_v3.mcpl", 2)]:
        d = _occupancy(EXAMPLES / name)
        assert d.data["resident"] == resident, (name, d.data)
        assert "registers" in d.data["limiting"], (name, d.data["limiting"])
        assert d.data["limits"]["registers"] == resident


def test_the_register_hint_gives_the_blocks_its_cap_lets_in():
    """matmul hopper and convolution hopper_v4: about 40 registers, 6 blocks of 256
    threads; 32 registers let 8 in (8 x 256 x 32 = 65536), what the occupancy with the
    compiler held to 32 says."""
    for name, kernel, cap, blocks in [("matmul/hopper.mcpl", "matmul", 32, 8),
                                      ("convolution/hopper_v4.mcpl", "convolution", 32, 8),
                                      ("matmul/hopper_v1.mcpl", "matmul", 64, 4)]:
        d = _occupancy(EXAMPLES / name)
        assert (f"mcl run --max-registers {cap}: {blocks} blocks per smp;"
                in (d.hint or "")), (name, d.hint)
        capped = _occupancy(EXAMPLES / name,
                            resources={kernel: Resources(cap, "NVIDIA compiler")})
        assert capped.data["resident"] == blocks, (name, capped.data)
