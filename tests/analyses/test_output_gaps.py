"""feedback-unwritten-output where the stores are too many to enumerate whole
(mcl.analyses.output_gaps): elements the first, last or middle blocks skip or leave past
them, proven unwritten by every store, are named ("at least"); an output the stores do
cover, whatever the order in which the blocks write it, is not, and no example at its
default sizes is."""

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


def _blocks(rows: str, body: str, n: str = "4096", m: str = "4096") -> str:
    """A kernel of blocks of 32 x 32 elements of out, a thread a column, with ``body``
    (of bi, bj, t) in the thread, over a grid of ``rows`` block rows."""
    return f"""module k;
import hopper;
hopper void k(const int h = {n}, const int w = {m}, global float[h, w] out,
              global float[h, w] inp) {{
  foreach (int bi in {rows} blocks) {{
    foreach (int bj in w / 32 blocks) {{
      foreach (int wp in 1 warps) {{
        foreach (int t in 32 threads) {{
{body}
        }}
      }}
    }}
  }}
}}
"""


_REMAINDER = """          for (int r = 0; r < 32; r++) {{
            out[bi * 32 + r, bj * 32 + t] = inp[bi * 32 + r, bj * 32 + t];
          }}
          if (bi == 0) {{
            for (int r = {start}; r < h; r++) {{
              out[r, bj * 32 + t] = 0.0;
            }}
          }}"""


def test_rows_between_the_last_blocks_and_a_last_row_written_apart(tmp_path):
    """h = 4100 rows, a grid of h / 32 = 128 block rows (rows 0-4095), and the first
    block row writing the rows past them: from h - 1 only, rows 4096-4098 are left,
    while every corner is written and the first blocks skip nothing the others do not
    write (silent before the last blocks were looked at). From h - h % 32: none."""
    f = tmp_path / "k.mcpl"
    f.write_text(_blocks("h / 32", _REMAINDER.format(start="h - 1"), n="4100"))
    found = _unwritten(f)
    assert len(found) == 1 and found[0].startswith("out: at least ") and \
        "of its 16,793,600 elements are never written at these sizes (such as " \
        "out[4096, " in found[0], found
    f.write_text(_blocks("h / 32", _REMAINDER.format(start="h - h % 32"), n="4100"))
    assert _unwritten(f) == []


_GUARDED = """          for (int r = 0; r < 32; r++) {{
            int j = bj * 32 + t;
            if ({guard}) {{
              out[bi * 32 + r, j] = inp[bi * 32 + r, j];
            }}
          }}"""


def test_a_guard_that_leaves_columns_of_the_last_block(tmp_path):
    """A guard that skips columns 4064-4079 (inside the last block; the corners are
    written): named, as the ifs' conditions are kept in the proof; `j < w`: not."""
    f = tmp_path / "k.mcpl"
    f.write_text(_blocks("h / 32", _GUARDED.format(guard="j < w - 32 || j >= w - 16")))
    found = _unwritten(f)
    assert len(found) == 1 and "(such as out[4032, 4064])" in found[0], found
    f.write_text(_blocks("h / 32", _GUARDED.format(guard="j < w")))
    assert _unwritten(f) == []


_MIDDLE = """module k;
import hopper;
hopper void k(const int n = 67108864, global float[n] out, global float[n] inp) {{
  foreach (int b in n / 1024 blocks) {{
    foreach (int wp in 32 warps) {{
      foreach (int t in 32 threads) {{
        if ({guard}) {{
          out[b * 1024 + wp * 32 + t] = inp[b * 1024 + wp * 32 + t];
        }}
      }}
    }}
  }}
}}
"""


def test_a_block_in_the_middle_that_writes_nothing(tmp_path):
    f = tmp_path / "k.mcpl"
    f.write_text(_MIDDLE.format(guard="b != n / 2048"))
    found = _unwritten(f)
    assert len(found) == 1 and "(such as out[33554432])" in found[0], found
    f.write_text(_MIDDLE.format(guard="b < n"))
    assert _unwritten(f) == []


_CPU_V2_EDGE = "for (int r = nrFull; r < (rows + x - 1) / x; r++)"
_CPU_V2_FULL = "for (int r = 0; r < nrFull; r++) {\n          int i0"


@pytest.mark.parametrize("change, such_as", [
    ((_CPU_V2_EDGE, _CPU_V2_EDGE.replace("r = nrFull;", "r = nrFull + 1;")), "c[2047, 0]"),
    ((_CPU_V2_FULL, _CPU_V2_FULL.replace("r < nrFull;", "r < nrFull - 1;")), "c[2010, 1984]"),
])
def test_matmul_cpu_v2s_stores_are_checked_at_2048(tmp_path, change, such_as):
    """matmul cpu_v2's stores of c run in loops over r whose ranges are conditional
    expressions with an integer division (``nrFull = ... ? rows / x : 0``, x = 6): the
    last thread's edge block skipped, or each thread's last whole block, is named at
    2048^3 (4.2 million elements); the version as it is, at 2048 and 4096: not. Silent
    before, while the model kept rows / x as a fraction (sympy's even quantity over 6,
    mcl.sympy_integers) and the proof did not bound a conditional expression."""
    src = (ROOT / "examples/matmul/cpu_v2.mcpl").read_text()
    old, new = change
    assert src.count(old) == 1
    f = tmp_path / "cpu_v2.mcpl"
    f.write_text(src.replace(old, new))
    found = _unwritten(f, n=2048, m=2048, p=2048)
    assert len(found) == 1 and found[0].startswith("c: at least ") and \
        f"(such as {such_as})" in found[0], found
    for n in (2048, 4096):
        assert _unwritten(ROOT / "examples/matmul/cpu_v2.mcpl", n=n, m=n, p=n) == []
