"""A loop that never runs with the kernel's constants (a tile size that an integer
division rounds down to nothing) is named, at the loop, with what it would write;
a loop that runs is not."""

from __future__ import annotations

from mcl.analyses import feedback

_KERNEL = """module k;
import hopper;
hopper void k(const int n = 4096, global float[n] out, global float[n] inp) {{
  const int cols = {cols};
  foreach (int b in n / 128 blocks) {{
    foreach (int w in 1 warps) {{
      foreach (int t in 32 threads) {{
        for (int v = 0; v < cols / 4; v++) {{
          for (int u = 0; u < 4; u++) {{
            out[b * 128 + t * 4 + u] = inp[b * 128 + t * 4 + u];
          }}
        }}
      }}
    }}
  }}
}}
"""


def _empty(tmp_path, cols: int) -> list:
    f = tmp_path / "k.mcpl"
    f.write_text(_KERNEL.format(cols=cols))
    return [d for d in feedback(str(f), only=["ops"]) if d.code == "feedback-empty-loop"]


def test_a_loop_whose_bound_rounds_down_to_zero_is_named(tmp_path):
    (d,) = _empty(tmp_path, 2)
    assert d.severity.name == "WARNING"
    assert d.span.line == 8                        # the loop v, not the inner loop u
    assert "loop v never runs" in d.message and "'v < cols / 4'" in d.message
    assert "'out'" in d.message


def test_a_loop_that_runs_is_not_named(tmp_path):
    assert _empty(tmp_path, 4) == []
    assert _empty(tmp_path, 8) == []
