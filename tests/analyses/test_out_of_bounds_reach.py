"""An index outside its dimension (feedback-out-of-bounds) in code that never runs is no
warning: under a condition that is always false (``if (false)``, ``if (K > 10)`` of a
constant K, the dead side of ``?:``), in a loop of no iterations, or under a condition on
parameters that does not hold at the sizes of the run (``if (n > 100)`` with n = 64), as
mcl check decides for mcpl-index-range (CheckedModule.reach_of). Where the access runs
only under a condition on data, the warning says so; where the condition holds at these
sizes, or the access runs whenever the loops around it do, the warning is as before."""

from __future__ import annotations

import pytest

from mcl.analyses import feedback
from mcl.analyses.validity import modifying

_KERNEL = """module m;
import perfect;
const int K = 2;
perfect void f(const int n = 64, main float[n] c, main float[n] b, main int[4] flags) {{
  foreach (int i in n threads) {{
    {code}
    c[i] = b[i];
  }}
}}
"""


def _out_of_bounds(tmp_path, code: str) -> list:
    path = tmp_path / "m.mcpl"
    path.write_text(_KERNEL.format(code=code))
    return [d for d in feedback(str(path), only=["ops"]) if d.code == "feedback-out-of-bounds"]


@pytest.mark.parametrize("code", [
    "if (false) { c[100] = 1.0; }",
    "if (K > 10) { c[100] = 1.0; }",
    "if (K < 10) { } else { c[100] = 1.0; }",
    "if (false) { c[i + 100] = b[i]; }",
    "for (int j = 0; j < 0; j++) { c[100] = b[i]; }",
    "for (int j = 0; j < 0; j++) { c[i + 100] = b[i]; }",   # the index does not name j
    "for (int j = 0; j < n / 128; j++) { c[100] = b[i]; }",  # 0 iterations at n = 64
    "while (false) { c[100] = 1.0; }",
    "c[i] = K > 10 ? b[100] : 0.0;",
    "c[i] = (K > 10 && b[100] > 0.0) ? 1.0 : 0.0;",
    "if (n > 100) { c[100] = 1.0; }",                        # false at n = 64
    "if (n < 100) { } else { c[100] = 1.0; }",
    "c[i] = n > 100 ? b[100] : 0.0;",
])
def test_in_code_that_does_not_run_at_these_sizes_there_is_no_warning(tmp_path, code):
    assert _out_of_bounds(tmp_path, code) == []


@pytest.mark.parametrize(("code", "where"), [
    ("if (flags[0] == 1) { c[100] = 1.0; }", "where `flags[0] == 1` holds"),
    ("if (flags[0] == 1) { } else { c[100] = 1.0; }", "where `flags[0] == 1` does not hold"),
    ("c[i] = flags[1] > 0 ? b[100] : 0.0;", "where `flags[1] > 0` holds"),
])
def test_under_a_condition_on_data_the_warning_says_so(tmp_path, code, where):
    [d] = _out_of_bounds(tmp_path, code)
    assert d.message.endswith(f"is 100, outside its 64 elements (0 .. 63), in code that "
                              f"runs only {where}")
    assert d.data["certain"] is False


@pytest.mark.parametrize("code", [
    "c[100] = 1.0;",
    "if (true) { c[100] = 1.0; }",
    "if (n < 100) { c[100] = 1.0; }",                        # true at n = 64
    "if (i < 10) { c[100] = 1.0; }",                         # a bounds test keeps no constant
    "for (int j = 0; j < n; j++) { c[100] = b[i]; }",
    "c[i] = n < 100 ? b[100] : 0.0;",
])
def test_where_the_access_runs_at_these_sizes_the_warning_stays(tmp_path, code):
    [d] = _out_of_bounds(tmp_path, code)
    assert d.message.endswith("is 100, outside its 64 elements (0 .. 63)")


def test_a_store_in_code_that_never_runs_does_not_keep_the_kernel_from_running(tmp_path):
    path = tmp_path / "m.mcpl"
    path.write_text(_KERNEL.format(code="if (K > 10) { c[100] = 1.0; }"))
    assert modifying(feedback(str(path), only=["ops"])) == []


def test_the_cli_prints_no_warning_for_dead_code(run_cli, tmp_path):
    path = tmp_path / "m.mcpl"
    path.write_text(_KERNEL.format(code="if (K > 10) { c[i + 100] = b[400]; }"))
    code, out, err = run_cli("feedback", path)
    assert code == 0 and "Traceback" not in out + err
    assert "feedback-out-of-bounds" not in out
