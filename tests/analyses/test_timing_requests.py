"""The requests the last-level cache serves in the time model (mcl.analyses.timing's
``l2 requests`` part): a request for each line a warp's load misses in the L1, a
gather's lanes one each, at the target file's cache_request_rate (158 G a second on the
H200, benchmarks/opencl/l2_request_probe.py), where the ``l2 bandwidth`` part takes the
same loads' bytes at the link's 10 TB/s."""

from __future__ import annotations

import textwrap

import pytest

from mcl.analyses import feedback
from mcl.analyses.timing_rates import cache_request_rate
from mcl.hdl import load_hardware
from mcl.mcpl import check


def _time(tmp_path, name: str, element: str):
    """The time diagnostic of a kernel whose lanes each add 64 elements of x (8 MB, more
    than the L1s hold), ``element`` choosing which, at hopper."""
    path = tmp_path / f"{name}.mcpl"
    path.write_text(textwrap.dedent(f"""\
        module {name};

        import hopper;

        hopper void {name}(const int n = 262144, const int m = 2097152,
                           global float[n] out, global int[n, 64] idx,
                           global float[m] x) {{
          foreach (int b in n / 256 blocks) {{
            foreach (int w in 8 warps) {{
              foreach (int t in 32 threads) {{
                int i = b * 256 + w * 32 + t;
                float s = 0.0;
                for (int j = 0; j < 64; j++) {{
                  s += x[{element}];
                }}
                out[i] = s;
              }}
            }}
          }}
        }}
        """))
    [d] = [d for d in feedback(check(path), only={"time"}) if d.code == "feedback-time"]
    return d


def test_a_gathers_sectors_are_requests_of_their_own(tmp_path):
    """Lanes at elements an index array chooses: a request a lane, which at 158 G a
    second take the L2 longer than their sectors take its 10 TB/s link. Where the warps
    gather, those requests come after the compulsory traffic (the ``gathers`` part: that
    traffic at hopper.target's sustained 2.88 TB/s, then the requests); the kernel is
    bound by the two and the feedback says how to take fewer."""
    d = _time(tmp_path, "gather", "idx[i, j] % m")
    parts = d.data["parts"]
    assert parts["l2 requests"] > 1.5 * parts["l2 bandwidth"]
    compulsory = 262144 * 4 + 262144 * 64 * 4 + 2097152 * 4      # out, idx, x once
    assert parts["gathers"] == pytest.approx(compulsory / 2.88e12 + parts["l2 requests"])
    assert d.data["limiter"] == "gathers"
    assert "cache_request_rate" in d.message and "fewer gathers that miss the L1" in d.message


def test_loads_that_do_not_gather_leave_their_requests_under_the_traffic(tmp_path):
    """Lines read whole, no lane at an address the data choose: no ``gathers`` part; the
    requests overlap the traffic as every part does."""
    d = _time(tmp_path, "rows", "(j * n + i) % m")
    assert "gathers" not in d.data["parts"] and "l2 requests" in d.data["parts"]


def test_lines_read_whole_are_a_request_each(tmp_path):
    """Neighbouring lanes at neighbouring elements: a request a line of 128 B, half
    what the same bytes take of the link."""
    parts = _time(tmp_path, "rows", "(j * n + i) % m").data["parts"]
    assert parts["l2 requests"] == pytest.approx(parts["l2 bandwidth"] * 10e12 / (128 * 158e9),
                                                 rel=0.05)


def test_without_the_target_figure_there_is_no_requests_part(tmp_path, monkeypatch):
    from mcl.analyses import timing
    monkeypatch.setattr(timing, "cache_request_rate", lambda hw: None)
    assert "l2 requests" not in _time(tmp_path, "gather", "idx[i, j] % m").data["parts"]


def test_the_figures_of_the_targets():
    assert cache_request_rate(load_hardware("hopper")) == 158e9
    assert cache_request_rate(load_hardware("h200")) == 158e9
    assert cache_request_rate(load_hardware("fermi")) is None
