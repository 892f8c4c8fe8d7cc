"""What a warp's load takes of an SM's L1 in the time model (mcl.analyses.timing_counts):
a request whose lanes touch several lines takes the most words one bank of the L1's
storage serves for it, half a cycle a line, or two cycles, whichever is most
(hopper.target's load_line_cycles, benchmarks/opencl/lane_rows_probe.py on the H200);
and a gather's requests of one sector each take the L2 at the rate it serves them
(gather_sector_rate, benchmarks/opencl/l2_request_probe.py)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from mcl.analyses import feedback
from mcl.analyses.timing_rates import gather_bandwidth, load_line_cycles
from mcl.hdl import load_hardware
from mcl.mcpl import check

SPMV = Path(__file__).resolve().parents[2] / "examples" / "spmv_csr"


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
    assert gather_bandwidth(hopper) == pytest.approx(158e9 * 32)
    assert gather_bandwidth(fermi) is None


def test_a_gather_takes_the_l2_a_request_a_sector():
    """spmv_csr gpu_v1's ``x[colIdx[k]]``: its sectors from the L2 at the rate the L2
    serves one-sector requests (5.1 TB/s on the H200), the rest at the link's 8 TB/s."""
    import sys
    sys.path.insert(0, str(SPMV.parents[1] / "benchmarks" / "fidelity"))
    import fidelity_cases as C
    import fidelity_predict as P

    from mcl.analyses.occupancy import occupancy
    from mcl.analyses.timing import predicted_time
    from mcl.analyses.timing_counts import cache_traffic, estimated_loads

    case = next(c for c in C.example_cases(None) if c.name == "spmv_csr/gpu_v1")
    view = P.hopper_view(case)
    occ = occupancy(view)
    through, gathered = cache_traffic(view, "global", estimated_loads(view), occ)
    assert 0 < gathered < through
    want = (through - gathered) / 8e12 + gathered / (158e9 * 32)
    assert predicted_time(view, occ).parts["l2 bandwidth"] == pytest.approx(want)
