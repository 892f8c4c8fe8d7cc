"""The bank-conflict analysis and its remedy: the padding it proposes is checked
against the banks (the fewest extra elements per row that leave one word per bank,
and whether one that keeps rows a multiple of 4 elements, as 128-bit accesses need,
exists), not a rule of thumb."""

import textwrap
from pathlib import Path

import pytest

import mcl

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _conflicts(path) -> list:
    return [d for d in mcl.feedback(mcl.check(path), only=["bank-conflicts"])
            if d.code == "feedback-bank-conflicts"]


def _kernel(tmp_path, row: int, store: str, rows: int = 8) -> Path:
    # a 2 x 8 x row tile filled as matmul fills a's transposed k-tile: lane t writes
    # row t / 2 of the tile at k = 4 (t % 2) + u
    path = tmp_path / "k.mcpl"
    path.write_text(textwrap.dedent(f"""\
        module k;

        import hopper;

        hopper void k(const int n = 4096, global float[n, 8] a, global float[n] out) {{
          foreach (int bi in n / 64 blocks) {{
            shared float[2, {rows}, {row}] l;
            foreach (int w in 4 warps) {{
              foreach (int t in 32 threads) {{
                int tid = w * 32 + t;
                for (int u = 0; u < 4; u++) {{
                  {store}
                }}
                out[bi * 64 + tid / 2] = l[0, 0, tid / 2];
              }}
            }}
          }}
        }}
        """))
    return path


def test_padding_that_spares_the_conflict_keeps_rows_aligned(tmp_path):
    # rows of 128: k and k + 4 are 512 words apart, one bank: 2-way. 132: 528, 16 banks
    # apart: the lanes' 32 words fall into 32 banks
    k = _kernel(tmp_path, 128, "l[0, 4 * (tid % 2) + u, tid / 2] = a[bi * 64 + tid / 2, "
                               "4 * (tid % 2) + u];")
    (d,) = _conflicts(k)
    assert "2-way bank conflict" in d.message
    assert d.data["row"] == 128 and d.data["padding"] == 4 and d.data["aligned_padding"] == 4
    assert "pad the rows of l by 4 elements (128 -> 132)" in d.hint
    k = _kernel(tmp_path, 132, "l[0, 4 * (tid % 2) + u, tid / 2] = a[bi * 64 + tid / 2, "
                               "4 * (tid % 2) + u];")
    (d,) = _conflicts(k)
    assert "no bank conflicts" in d.message


def test_a_column_of_a_tile_has_no_aligned_padding(tmp_path):
    # lane t writes row t of a column, 32-bit words: rows of 32 put every lane into one
    # bank; one more element per row spreads them over the 32 banks, but a row of a
    # multiple of 4 elements leaves at least 4 lanes a bank
    k = _kernel(tmp_path, 32, "l[1, tid % 32, 0] = 1.0;", rows=32)
    (d,) = [d for d in _conflicts(k) if "l[1, tid % 32, 0]" in d.message]
    assert "32-way" in d.message
    assert d.data["padding"] == 1 and d.data["aligned_padding"] is None
    assert "padding the rows of l by 1 elements (32 -> 33) removes it, but no padding " \
           "that keeps a row a multiple of 4 elements" in d.hint


@pytest.mark.parametrize("line", [74, 118])
def test_matmul_hopper_v10_padding_cannot_help(line):
    # v10 pads a's transposed tile by 4 and its stores still conflict 2-way: lanes k = 0
    # and k = 8 are 8 rows of 132 (1056 words, one bank) apart; only a row of 2 mod 4
    # elements separates them, which breaks the 128-bit reads of the rows
    ds = [d for d in _conflicts(EXAMPLES / "matmul" / "hopper_v10.mcpl")
          if d.span.line == line]
    (d,) = ds
    assert "2-way" in d.message
    assert (d.data["row"], d.data["padding"], d.data["aligned_padding"]) == (132, 2, None)
    assert "change which index varies with t" in d.hint


def test_runs_of_four_down_a_column(tmp_path):
    # the same column written as runs of 4 (128-bit stores, served 8 lanes at a time):
    # 8-way; rows of 36 put the 8 lanes' runs into 32 different banks
    k = _kernel(tmp_path, 32, "l[1, tid % 32, u] = 1.0;", rows=32)
    (d,) = [d for d in _conflicts(k) if "l[1, tid % 32, u]" in d.message]
    assert "8-way" in d.message
    assert (d.data["padding"], d.data["aligned_padding"]) == (4, 4)


def test_only_the_lanes_an_if_lets_run_conflict():
    # gesummv nvidia_v1 at hopper: y[i] = ... l_tmp[tid, 0] inside if (tid < rows), rows
    # = 4: four lanes read four words of one bank (4-way, not 32-way); hopper_v2 reads
    # l_tmp[w, t, 0] inside if (t < rows) with rows = 1: one lane, no conflict
    from mcl.analyses.level import feedback_at_level
    found = feedback_at_level(mcl.check(EXAMPLES / "gesummv" / "nvidia_v1.mcpl"), "hopper",
                              only=["bank-conflicts"]).diagnostics
    degrees = {d.data["array"]: d.data["degree"] for d in found
               if d.code == "feedback-bank-conflicts" and "degree" in d.data}
    assert degrees == {"l_tmp": 4, "l_y": 4}
    assert all("the 4 of a warp's 32 threads" in d.message for d in found if "degree" in d.data)
    assert not [d for d in _conflicts(EXAMPLES / "gesummv" / "hopper_v2.mcpl")
                if "degree" in d.data]
