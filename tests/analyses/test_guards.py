"""Bounds tests in hot loops (mcl.analyses.guards): named where they cost, silent
where a version reads through views with no tests, and for short loops only where the
kernel has no long loop with tests (then the short ones hold a thread's work)."""

from __future__ import annotations

from pathlib import Path

from mcl.analyses import feedback

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _guards(path: Path) -> list:
    return [d for d in feedback(str(path), only=["guards"]) if d.code == "feedback-guards"]


def test_guarded_tile_loads_in_the_phase_loop_are_named():
    path = EXAMPLES / "matmul" / "hopper_v7.mcpl"
    (d,) = _guards(path)
    assert d.message.startswith("16 accesses to a, b per iteration of loop l")
    assert "run-time test of its alignment" in d.message
    assert "views" in d.hint and "`a as float[n, p / T, T] aT;`" in d.hint
    assert "--specialize" in d.hint
    phase_loop = next(i for i, line in enumerate(path.read_text().splitlines(), 1)
                      if "for (int l = 0; l < nrPhases; l++)" in line)
    assert d.span.line == phase_loop   # the phase loop, not the short prologue loops


def test_accesses_that_make_no_run_are_not_told_about_128_bit_accesses():
    """vector_add hopper v1's guarded accesses are 256 elements apart (``k = i + u *
    nrThreads``): no run of adjacent elements, nothing to read as one 128-bit access,
    no alignment to prove with views."""
    (d,) = _guards(EXAMPLES / "vector_add" / "hopper_v1.mcpl")
    assert d.message.startswith("12 accesses to a, b, c per iteration of loop i")
    assert "128-bit" not in d.message and "views" not in d.hint
    assert "--specialize" in d.hint


def test_a_loop_of_run_time_length_makes_no_run():
    """matmul xeon_phi_v3's ``kk < kLen`` with ``kLen = min(kb, p - k0)`` is 16 long at
    the example's sizes, but the generator keeps it a loop of run-time length, with no
    128-bit path: no run is claimed."""
    (d,) = _guards(EXAMPLES / "matmul" / "xeon_phi_v3.mcpl")
    assert "128-bit" not in d.message and "views" not in d.hint


def test_a_version_through_views_has_no_bounds_tests():
    assert _guards(EXAMPLES / "matmul" / "hopper_v10.mcpl") == []


def test_conditions_that_do_not_bound_the_index_are_not_bounds_tests(tmp_path):
    f = tmp_path / "k.mcpl"
    f.write_text("""module k;
import hopper;
hopper void k(const int n = 4096, const int m = 4096, global float[n, m] out,
              global float[n, m] inp) {
  foreach (int i in n blocks) {
   foreach (int w in 1 warps) {
    foreach (int t in 32 threads) {
      for (int r = 0; r < m; r += 4) {
        bool more = r + 4 < m;
        for (int e = 0; e < 4; e++) {
          if (more) {
            out[i, r + e] = inp[i, r + e];
          }
        }
      }
    }
   }
  }
}
""")
    assert _guards(f) == []
    f.write_text(f.read_text().replace("if (more)", "if (r + e < m)"))
    (d,) = _guards(f)
    assert d.message.startswith("8 accesses to inp, out per iteration of loop r")


def test_short_loops_that_hold_the_work_are_named():
    # convolution hopper_v3: every input row (12 a thread) read behind bounds tests and
    # an alignment test; hopper_v4 reads through views, for sizes that divide
    ds = _guards(EXAMPLES / "convolution" / "hopper_v3.mcpl")
    by_loop = {d.message.split("per iteration of loop ")[1].split()[0]: d for d in ds}
    assert by_loop["r"].message.startswith("16 accesses to input per iteration of loop r")
    assert set(by_loop) == {"r", "e"}
    assert _guards(EXAMPLES / "convolution" / "hopper_v4.mcpl") == []
