"""Values chosen by a conditional expression, and the remainder paths that only the
last units run: matmul cpu_v2 counts its row blocks as ``nrFull = j0 + y * nrVectors <=
m ? rows / x : 0`` and does the rows beyond them in a second, guarded loop. What the
analyses claim of such a kernel must hold for the units that run the code."""

from __future__ import annotations

from pathlib import Path

from mcl.analyses import feedback
from mcl.analyses.kernel import parameter_values
from mcl.analyses.kernel_build import build_kernel
from mcl.mcpl import check

ROOT = Path(__file__).resolve().parents[2]
CPU_V2 = ROOT / "examples" / "matmul" / "cpu_v2.mcpl"


def _lines(diags, code):
    return {d.span.line for d in diags if d.code == code}


def test_a_conditional_expression_the_lanes_decide_gives_the_loop_its_trips():
    checked = check(CPU_V2)
    f = checked.module.functions[0]
    num = build_kernel(f, checked, parameter_values(f, None), checked.hardware_of(f))
    r_loops = [lp for lp in num.loops if lp.var == "r"]
    # the accumulating loop and the store loop: 48 rows of 6 for the first threads; the
    # edge loop after them: none
    assert [int(lp.trips) for lp in r_loops] == [8, 8, 0]


def test_results_stored_once_are_no_cache_warning():
    # c[i0 + ei, ...] = cAcc[r, ei, ej]: each element written once, the lanes' lines
    # adjacent (a stream), once loop r's count is known
    diags = feedback(check(CPU_V2))
    warned = {d.data.get("array") for d in diags if d.code == "feedback-cache"
              and d.severity == "warning"}
    assert "c" not in warned


def test_the_edge_blocks_path_gets_no_reuse_or_cache_claims():
    # lines 83-107: only the last thread ti has rows beyond its full blocks (none at
    # n = 2048, one block of 2 rows at n = 2050); b[k, j] there is neither "loaded for
    # each of the nrThreadsN threads ti" nor read again by its loop r
    diags = feedback(check(CPU_V2))
    edge = set(range(83, 108))
    for code in ("feedback-reuse", "feedback-cache", "feedback-cache-sets",
                 "feedback-guards"):
        assert not _lines(diags, code) & edge, code
    # the main path keeps its claims
    assert 57 in _lines(diags, "feedback-reuse")
    assert 57 in _lines(diags, "feedback-cache-sets")


_BY_LANE = """module t;
import hopper;
hopper void k(const int n = 1048576, global float[n] a, global float[n] b) {
  foreach (int bi in n / 256 blocks) {
    foreach (int w in 8 warps) {
      foreach (int l in 32 threads) {
        int i = bi * 256 + w * 32 + l;
        int m = w == 0 ? 4 : 2;
        float s = 0.0;
        for (int r = 0; r < m; r++) {
          s += a[i];
        }
        b[i] = s;
      }
    }
  }
}
"""


def test_a_trip_count_the_threads_choose_is_counted_at_their_average(tmp_path):
    # warp 0 goes round 4 times, the other 7 twice: 2.25 additions a thread on average,
    # not the first thread's 4 for all of them
    path = tmp_path / "t.mcpl"
    path.write_text(_BY_LANE)
    [d] = [d for d in feedback(check(path), only={"ops"})]
    assert f"iterations_r*n (= {int(1048576 * 2.25)}) computational operations" in d.message
