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


#: a block of ``threads`` threads that each keep ``elements`` partial sums in a register
#: array, all of them used
ARRAY = """\
module k;
import hopper;
hopper void k(const int n = 1048576, global float[n] input, global float[n] out) {{
  foreach (int bi in n / {threads} blocks) {{
    foreach (int w in {threads} / 32 warps) {{
      foreach (int t in 32 threads) {{
        reg float[{elements}] acc;
        int i = bi * {threads} + w * 32 + t;
        for (int e = 0; e < {elements}; e++) {{
          acc[e] = input[(i + e * 977) % n];
        }}
        float sum = 0.0;
        for (int e = 0; e < {elements}; e++) {{
          sum += acc[e] * acc[({elements} - 1) - e];
        }}
        out[i] = sum;
      }}
    }}
  }}
}}
"""


def _spills(tmp_path, threads, elements, resources=None):
    f = tmp_path / "k.mcpl"
    f.write_text(ARRAY.format(threads=threads, elements=elements))
    diags = mcl.feedback(mcl.check(str(f)), only=["occupancy"],
                         resources={"k": resources} if resources else None)
    occ = next(d for d in diags if d.code == "feedback-occupancy")
    return occ, [d for d in diags if d.code == "feedback-spills"]


def test_register_arrays_beyond_the_cap_go_to_local_memory(tmp_path):
    """80 used elements a thread, in blocks of 1024 threads that may have 64 registers
    each: the compiler keeps some or all of the array in local memory (on the H200,
    matmul hopper v11 and v12 with 512 threads all of it: 32-40 registers and 1.7-2 kB;
    gesummv hopper v2 with 4 rows a part: 255 registers and 472 B), and the feedback
    says so; with 256 threads (a cap of 255) the array stays in registers."""
    occ, (spill,) = _spills(tmp_path, 1024, 80)
    assert occ.data["registers"] == 64
    assert "beyond the 64 each of a block's 1024 threads may have: its register arrays (80 " \
        "elements) alone are more, so the compiler keeps some or all of them in local " \
        "memory (up to 320 B per thread)" in spill.message
    occ, spills = _spills(tmp_path, 256, 80)
    assert occ.data["registers"] > 80 and not spills


def test_the_compilers_local_memory_is_said(tmp_path):
    """With the NVIDIA compiler's figures, the bytes of local memory it reports."""
    _, (spill,) = _spills(tmp_path, 256, 8, Resources(64, "NVIDIA compiler", None, 472))
    assert spill.message.startswith("the NVIDIA compiler keeps 472 B per thread in local "
                                    "memory (64 registers used)")
    for frame in (0, 8):        # no local memory, or a small stack frame
        _, spills = _spills(tmp_path, 256, 8, Resources(64, "NVIDIA compiler", None, frame))
        assert not spills
