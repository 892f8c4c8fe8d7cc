"""`mcl feedback` and `mcl check` on odd command lines and inputs a new user may give:
a misspelt level or pass, an empty --only, --set of a broken file's or an array
parameter, '-' for standard input, a previous version that is broken or not there."""

from __future__ import annotations

from tests.conftest import ROOT

EXAMPLES = ROOT / "examples"
VECTOR_ADD = EXAMPLES / "vector_add" / "perfect.mcpl"
MATMUL = EXAMPLES / "matmul" / "perfect.mcpl"


def _run(run_cli, *argv):
    code, out, err = run_cli(*argv)
    assert "Traceback" not in out + err
    return code, out, err



def test_only_suggests_the_closest_pass(run_cli):
    code, out, err = _run(run_cli, "feedback", "--only", "op,tim", VECTOR_ADD)
    assert code == 2 and out == ""
    assert "unknown pass(es) op, tim (did you mean ops, time?)" in err
    code, _, err = _run(run_cli, "feedback", "--only", "OPS", VECTOR_ADD)
    assert code == 2 and "did you mean ops?" in err


def test_empty_only_is_a_usage_error_not_every_pass(run_cli):
    for given in ("", ",", " , "):
        code, out, err = _run(run_cli, "feedback", "--only", given, VECTOR_ADD)
        assert code == 2 and out == ""
        assert "names no pass" in err
