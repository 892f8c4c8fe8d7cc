"""The window pass: neighbouring units that read overlapping windows of an array
through a sequential loop (stencils, convolutions)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcl.analyses import feedback
from mcl.mcpl import check

CONV = Path(__file__).resolve().parents[2] / "examples" / "convolution"


def windows(path, **kw):
    return [d for d in feedback(check(path), only={"window"}, **kw)
            if d.code == "feedback-window"]


def test_hopper_v1_is_told_to_compute_adjacent_outputs_per_thread():
    [d] = windows(CONV / "hopper_v1.mcpl")
    assert d.data["array"] == "l_in" and d.data["unit"] == "tx"
    assert d.data["loops"] == ["x"] and d.data["dimension"] == 2
    assert d.data["reads"] == 9 and d.data["window"] == 9 and d.data["stride"] == 1
    assert "would read 12 elements for them, 3 per result instead of 9" in d.message
    assert "128-bit" in d.hint


def test_hopper_v2_reads_each_window_once_per_run_of_outputs():
    # 4 outputs per thread: windows of 12 elements, 4 apart: 3 readers, below MIN_READS
    assert windows(CONV / "hopper_v2.mcpl") == []


def test_the_window_grows_with_the_filter():
    [d] = windows(CONV / "hopper_v1.mcpl", values={"fw": 5})
    assert d.data["reads"] == 5


def _kernel(tmp_path, index: str, loop: str = "for (int x = 0; x < 9; x++)") -> Path:
    p = tmp_path / "k.mcpl"
    p.write_text(f"""module k;
import hopper;
hopper void k(const int n, global float[n] a, global float[n] b) {{
  foreach (int i in n / 1024 blocks) {{
    foreach (int w in 1 warps) {{
      foreach (int t in 32 threads) {{
        float s = 0.0;
        {loop} {{
          s += a[{index}];
        }}
        b[i * 32 + t] = s;
      }}
    }}
  }}
}}
""")
    return p


@pytest.mark.parametrize(("index", "reads"), [
    ("i * 1024 + t + x", 9),           # a 9-point stencil
    ("i * 1024 + t + 2 * x", 9),       # every other element: still 9 readers
    ("i * 1024 + 4 * t + x", 3),       # 4 results per thread: 3 readers, no message
    ("i * 1024 + 9 * t + x", 1),       # disjoint windows
    ("i * 1024 + t + 32 * x", 1),      # strided, interleaved: every element once
    ("i * 1024 + x", None),            # the same for every t: the reuse pass's case
])
def test_overlap_is_counted_from_the_offsets(tmp_path, index, reads):
    found = windows(_kernel(tmp_path, index))
    if reads is not None and reads >= 4:
        [d] = found
        assert d.data["reads"] == reads
    else:
        assert found == []


def test_a_data_dependent_window_is_not_guessed(tmp_path):
    path = _kernel(tmp_path, "i * 1024 + t + x", "for (int x = 0; x < n % 9; x++)")
    assert windows(path) == []


def _guarded(tmp_path, test: str) -> Path:
    p = tmp_path / "g.mcpl"
    p.write_text(f"""module g;
import hopper;
hopper void g(const int n, global float[n] a, global float[n] b) {{
  foreach (int i in n / 1024 blocks) {{
    foreach (int w in 1 warps) {{
      foreach (int t in 32 threads) {{
        if ({test}) {{
          float s = 0.0;
          for (int x = 0; x < 8; x++) {{
            s += a[i * 1024 + t + x];
          }}
          b[i * 32 + t] = s;
        }}
      }}
    }}
  }}
}}
""")
    return p


@pytest.mark.parametrize(("test", "reads"), [
    ("t % 8 == 0", None),              # one lane in 8: windows of 8 that never meet
    ("t == 0", None),                  # a single reader (gesummv hopper_v3's final sum)
    ("t % 2 == 0", 4),                 # every other lane: 4 readers of an element
    ("t < 4", 4),                      # the first 4 lanes, adjacent
    ("i * 1024 + t < n", 8),           # a bounds test: held, all 32 lanes read
])
def test_only_the_units_an_if_lets_read_are_neighbours(tmp_path, test, reads):
    found = windows(_guarded(tmp_path, test))
    if reads is None:
        assert found == []
    else:
        [d] = found
        assert d.data["reads"] == reads
