"""What a warp's load takes of an SM's L1 in the time model (mcl.analyses.timing_counts):
a request whose lanes touch several lines takes the most words one bank of the L1's
storage serves for it, half a cycle a line, or two cycles, whichever is most
(hopper.target's load_line_cycles, benchmarks/opencl/lane_rows_probe.py on the H200)."""

from __future__ import annotations

import textwrap

import pytest

from mcl.analyses import feedback
from mcl.analyses.timing_rates import load_line_cycles
from mcl.hdl import load_hardware
from mcl.mcpl import check


def _rows(tmp_path, row: int) -> dict:
    """The time parts of a kernel whose lanes each sum their own row of ``row`` floats
    (gesummv perfect's walk), at hopper."""
    path = tmp_path / f"rows{row}.mcpl"
    path.write_text(textwrap.dedent(f"""\
        module rows{row};

        import hopper;

        hopper void rows{row}(const int n = 32768, const int m = {row},
                              global float[n] out, global float[n, m] a) {{
          foreach (int b in n / 256 blocks) {{
            foreach (int w in 8 warps) {{
              foreach (int t in 32 threads) {{
                int i = b * 256 + w * 32 + t;
                float s = 0.0;
                for (int j = 0; j < 256; j++) {{
                  s += a[i, j];
                }}
                out[i] = s;
              }}
            }}
          }}
        }}
        """))
    [d] = [d for d in feedback(check(path), only={"time"}) if d.code == "feedback-time"]
    return d.data["parts"]


def test_lanes_in_one_bank_take_a_cycle_a_line_and_spread_ones_half(tmp_path):
    """Rows of 4096 floats (16 kB): every lane's word in the same bank, 32 words in turn
    for the 32 lines of a request; rows of 4097: a word a bank, the 32 lines at half a
    cycle each (measured 31.8 and 15.7 cycles beyond a coalesced request's). The load of
    ``a`` is all but the whole part (out's store is one request a warp)."""
    aligned, spread = _rows(tmp_path, 4096), _rows(tmp_path, 4097)
    ratio = aligned["memory instructions"] / spread["memory instructions"]
    assert ratio == pytest.approx(32 / 16, rel=0.05)


def test_without_the_target_figure_a_request_takes_a_cycle_a_line(tmp_path, monkeypatch):
    """A target file without load_line_cycles (fermi's and the others'): a cycle per
    line the lanes touch, wherever the words fall."""
    from mcl.analyses import timing_counts
    monkeypatch.setattr(timing_counts, "load_line_cycles", lambda hw: None)
    aligned, spread = _rows(tmp_path, 4096), _rows(tmp_path, 4097)
    assert aligned["memory instructions"] == pytest.approx(spread["memory instructions"])


def test_the_figures_of_the_targets():
    hopper, fermi = load_hardware("hopper"), load_hardware("fermi")
    assert load_line_cycles(hopper) == 0.5
    assert load_line_cycles(fermi) is None
