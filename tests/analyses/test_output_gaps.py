"""feedback-unwritten-output where the stores are too many to enumerate whole
(mcl.analyses.output_gaps): elements the first blocks skip, proven unwritten by every
store, are named ("at least"); an output the stores do cover, whatever the order in which
the blocks write it, is not, and no example at its default sizes is."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcl.analyses import wrong_kernel

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").rglob("*.mcpl"))


def _unwritten(path, **values) -> list[str]:
    return [d.message for d in wrong_kernel(str(path), values=values or None)
            if d.code == "feedback-unwritten-output"]


def test_blocks_wider_than_their_threads_leave_columns_at_the_default_sizes(tmp_path):
    """convolution hopper_v1 with blocks of 64 columns and still 32 threads a row: each
    block writes 32 of its 64 columns, at 4096 x 4096 too (16.7 million elements, past
    what is enumerated whole); at 128 x 128 the whole count."""
    src = (ROOT / "examples/convolution/hopper_v1.mcpl").read_text()
    assert "const int bw = 32; " in src
    f = tmp_path / "conv_bw64.mcpl"
    f.write_text(src.replace("const int bw = 32; ", "const int bw = 64; "))
    found = _unwritten(f)
    assert len(found) == 1, found
    assert found[0].startswith("output: at least ")
    assert "of its 16,777,216 elements are never written at these sizes (such as " \
           "output[0, 32])" in found[0]
    small = _unwritten(f, h=128, w=128)
    assert len(small) == 1 and small[0].startswith(
        "output: 8,192 of its 16,384 elements are never written at these sizes (the "
        "first, output[0, 32])"), small


_INTERLEAVED = """module k;
import hopper;
hopper void k(const int n = 4096, const int m = 4096, global float[n, m] out,
              global float[n, m] inp) {{
  const int nrBlocks = 64;
  foreach (int bi in n / 32 blocks) {{
    foreach (int bj in nrBlocks blocks) {{
      foreach (int w in 1 warps) {{
        foreach (int t in 32 threads) {{
          for (int k = 0; k < m / nrBlocks{less}; k++) {{
            out[bi * 32 + t, bj + k * nrBlocks] = inp[bi * 32 + t, bj + k * nrBlocks];
          }}
        }}
      }}
    }}
  }}
}}
"""


def test_blocks_that_interleave_their_columns_cover_the_output(tmp_path):
    """Block bj writes columns bj, bj + 64, bj + 128, ...: the first two blocks skip
    column 2 and more, which the other blocks write; nothing is named. With one column
    fewer a block, the last 64 columns are never written: named (the corner out[0, 4095])."""
    f = tmp_path / "k.mcpl"
    f.write_text(_INTERLEAVED.format(less=""))
    assert _unwritten(f) == []
    f.write_text(_INTERLEAVED.format(less=" - 1"))
    found = _unwritten(f)
    assert len(found) == 1 and found[0].startswith("out: at least ") and \
        "(such as out[0, 4095])" in found[0], found


def test_a_grid_stride_loop_that_covers_the_output_is_not_named(tmp_path):
    f = tmp_path / "k.mcpl"
    f.write_text("""module k;
import hopper;
hopper void k(const int n = 67108864, global float[n] out, global float[n] inp) {
  foreach (int b in 1000 blocks) {
    foreach (int w in 8 warps) {
      foreach (int t in 32 threads) {
        for (int i = b * 256 + w * 32 + t; i < n; i += 1000 * 256) {
          out[i] = inp[i];
        }
      }
    }
  }
}
""")
    assert _unwritten(f) == []


@pytest.mark.slow
@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: str(p.relative_to(ROOT / "examples")))
def test_no_example_leaves_an_output_unwritten_at_its_default_sizes(path):
    assert _unwritten(path) == []
