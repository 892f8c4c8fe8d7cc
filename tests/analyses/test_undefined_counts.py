"""Counts that evaluate to nan (an expression divided by a foreach index that can be
0) still give feedback, without a numeric value."""

from __future__ import annotations

import mcl


def test_a_count_divided_by_an_index_gives_feedback(tmp_path):
    src = tmp_path / "k.mcpl"
    src.write_text("""module k;
import perfect;

perfect void k(const int n = 64, float[n] a) {
  foreach (int t in n threads) {
    for (int i = 0; i < n / t; i++) {
      a[t] += 1.0;
    }
  }
}
""")
    checked = mcl.check(str(src))
    assert not checked.has_errors
    ops = [d for d in mcl.feedback(checked) if d.code == "feedback-ops"]
    assert ops and "flops_value" not in ops[0].data
