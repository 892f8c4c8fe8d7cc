"""A constant index outside a constant dimension (mcpl-index-range) is an error where
the access runs whenever the loops around it do (bounds tests of the units' indices
included), and a warning in code that never runs (a constant false condition, a loop
of no iterations, a foreach of no units) or that runs only where a condition on
parameters, constants or data alone holds (``if (n > 10)``)."""

from __future__ import annotations

import pytest

from mcl.mcpl import check

_KERNEL = """module m;
import perfect;
const int K = 2;
perfect void f(const int n = 64, main float[n] c, main int[4] flags) {{
  foreach (int i in n threads) {{
    float[2] a;
    a[0] = 0.0;
    a[1] = 0.0;
    {code}
    c[i] = a[0] + a[1];
  }}
}}
"""


def _index_range(code: str) -> list[tuple[str, str]]:
    diags = check("m.mcpl", source=_KERNEL.format(code=code)).diagnostics
    return [("error" if d.is_error else "warning", d.message) for d in diags
            if d.code == "mcpl-index-range"]


@pytest.mark.parametrize(("code", "why"), [
    ("if (false) { a[5] = 1.0; }", "its condition `false` is always false"),
    ("if (K > 10) { a[5] = 1.0; }", "its condition `K > 10` is always false"),
    ("if (K < 10) { } else { a[5] = 1.0; }", "its condition `K < 10` is always true"),
    ("for (int j = 0; j < 0; j++) { a[5] = 1.0; }",
     "the loop's condition `j < 0` is false from its start"),
    ("for (int j = K; j < K; j++) { a[5] = 1.0; }",
     "the loop's condition `j < K` is false from its start"),
    ("while (false) { a[5] = 1.0; }", "its condition `false` is always false"),
    ("c[i] = K > 10 ? a[5] : 0.0;", "its condition `K > 10` is always false"),
    ("c[i] = (K > 10 && a[5] > 0.0) ? 1.0 : 0.0;", "its condition `K > 10` is always false"),
])
def test_in_code_that_never_runs_it_is_a_warning(code, why):
    assert _index_range(code) == [
        ("warning", "index 5 of 'a' is outside its dimension (0 .. 1), in code that never "
                    f"runs ({why})")]


def test_in_a_foreach_of_no_units_it_is_a_warning():
    text = """module m;
import gpu;
gpu void f(dev float[4] c) {
  foreach (int b in 1 blocks) {
    foreach (int t in 0 threads) {
      float[2] a;
      a[5] = 1.0;
      c[t] = a[0];
    }
  }
}
"""
    [d] = [d for d in check("m.mcpl", source=text).diagnostics
           if d.code == "mcpl-index-range"]
    assert not d.is_error and (d.span.line, d.span.column) == (7, 9)
    assert d.message == "index 5 of 'a' is outside its dimension (0 .. 1), in code that " \
                        "never runs (the foreach has 0 units)"


@pytest.mark.parametrize(("code", "where"), [
    ("if (n > 10) { a[5] = 1.0; }", "where `n > 10` holds"),
    ("if (n > 10) { } else { a[5] = 1.0; }", "where `n > 10` does not hold"),
    ("if (flags[0] == 1) { a[5] = 1.0; }", "where `flags[0] == 1` holds"),
    ("c[i] = n > 10 ? 1.0 : a[5];", "where `n > 10` does not hold"),
    ("c[i] = (n > 10 || a[5] > 0.0) ? 1.0 : 0.0;", "where `n > 10` does not hold"),
])
def test_guarded_by_a_condition_on_parameters_alone_it_is_a_warning(code, where):
    assert _index_range(code) == [
        ("warning", "index 5 of 'a' is outside its dimension (0 .. 1), in code that runs "
                    f"only {where}")]


@pytest.mark.parametrize("code", [
    "a[5] = 1.0;",
    "if (true) { a[5] = 1.0; }",
    "if (i < 10) { a[5] = 1.0; }",              # a bounds test of the units' index
    "if (i > 10) { } else { c[i] = a[5]; }",
    "int k = i * 2; if (k < n) { a[5] = 1.0; }",
    "for (int j = 0; j < n; j++) { a[5] = 1.0; }",   # runs whenever n > 0, as the foreach
    "for (int j = 0; j < 4; j++) { if (j == 3) { a[5] = 1.0; } }",
    "int k = 0; while (k < n) { a[5] = 1.0; k++; }",
])
def test_where_the_access_runs_with_the_loops_around_it_it_is_an_error(code):
    assert _index_range(code) == [
        ("error", "index 5 of 'a' is outside its dimension (0 .. 1)")]


def test_the_cli_exits_0_for_dead_code_and_1_for_code_that_runs(run_cli, tmp_path):
    path = tmp_path / "m.mcpl"
    path.write_text(_KERNEL.format(code="for (int j = 0; j < 0; j++) { a[5] = 1.0; }"))
    code, out, err = run_cli("check", path)
    assert code == 0 and "Traceback" not in out + err
    assert f"{path}:9:" in out and "warning: index 5 of 'a'" in out
    path.write_text(_KERNEL.format(code="a[5] = 1.0;"))
    code, out, err = run_cli("check", path)
    assert code == 1 and f"{path}:9:" in out and "error: index 5 of 'a'" in out
