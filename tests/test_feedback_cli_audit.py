"""`mcl feedback` and `mcl check` on odd command lines and inputs a new user may give:
a misspelt level or pass, an empty --only, --set of a broken file's or an array
parameter, '-' for standard input, a previous version that is broken or not there."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.conftest import ROOT

EXAMPLES = ROOT / "examples"
VECTOR_ADD = EXAMPLES / "vector_add" / "perfect.mcpl"
MATMUL = EXAMPLES / "matmul" / "perfect.mcpl"


def _run(run_cli, *argv):
    code, out, err = run_cli(*argv)
    assert "Traceback" not in out + err
    return code, out, err


def test_unknown_level_is_a_usage_error_with_the_closest_name(run_cli):
    for given, close in (("gpuu", "gpu"), ("GPU", "gpu"), ("Hopper", "hopper")):
        code, out, err = _run(run_cli, "feedback", "--level", given, VECTOR_ADD)
        assert code == 2 and out == ""
        assert f"--level: unknown hardware description '{given}'" in err
        assert f"did you mean '{close}'?" in err
        assert err.count("unknown hardware description") == 1
    code, _, err = _run(run_cli, "feedback", "--level", "zzzz", VECTOR_ADD, MATMUL)
    assert code == 2 and "did you mean" not in err and "known: perfect" in err
    assert err.count("unknown hardware description") == 1   # once, not once a file


def test_level_of_a_broken_description_reports_its_errors(run_cli, tmp_path: Path):
    (tmp_path / "mylev.hdl").write_text("hardware_description mylev specializes gpu {\n"
                                        " garbage\n")
    code, out, err = _run(run_cli, "feedback", "--hwd-path", tmp_path, "--level", "mylev",
                          VECTOR_ADD)
    assert code == 1 and "mylev.hdl:2:" in out + err and "unknown hardware" not in out + err


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


def test_set_of_a_parameter_of_a_file_with_errors_shows_its_errors(run_cli, tmp_path: Path):
    broken = tmp_path / "other.mcpl"
    broken.write_text("module o;\n\nimport perfect;\n\n"
                      "perfect void q(const int k = 16, main float[k] d) {\n"
                      "  foreach (int i in k threads) {\n    d[i] = zz;\n  }\n}\n")
    code, out, err = _run(run_cli, "feedback", "--only", "ops", VECTOR_ADD, broken,
                          "--set", "k=5")
    assert code == 1
    assert f"{broken}:7:12: error: 'zz' is not declared" in out
    assert "no function" not in err


def test_set_of_an_array_parameter_or_a_misspelt_one(run_cli):
    code, _, err = _run(run_cli, "feedback", "--only", "ops", VECTOR_ADD, "--set", "c=5")
    assert code == 2 and "'c' is an array parameter" in err
    code, _, err = _run(run_cli, "feedback", "--only", "ops", MATMUL, "--set", "nn=5")
    assert code == 2 and "has a parameter 'nn' (did you mean 'n'?)" in err


def test_dash_is_not_read_as_standard_input(run_cli):
    for command in ("check", "feedback"):
        code, out, err = _run(run_cli, command, "-")
        assert code == 1
        assert "'-' (standard input) is not read" in out + err
        assert "no such file" not in out + err


def _versions(tmp_path: Path) -> Path:
    for f in ("perfect.mcpl", "gpu_v1.mcpl", "reference.py"):
        shutil.copy(EXAMPLES / "vector_add" / f, tmp_path / f)
    return tmp_path / "gpu_v1.mcpl"


def test_refines_comment_naming_no_version_is_said(run_cli, tmp_path: Path):
    kernel = _versions(tmp_path)
    kernel.write_text("// refines: gone.mcpl\n" + kernel.read_text())
    code, out, _ = _run(run_cli, "feedback", "--registers", "estimate", "--only", "time",
                        kernel)
    assert code == 0
    assert f"{kernel}:1:1: warning: 'refines: gone.mcpl' names no version" in out
    code, out, _ = _run(run_cli, "feedback", "--registers", "estimate", "--only", "time",
                        "--no-previous", kernel)
    assert code == 0 and "gone.mcpl" not in out


def test_previous_version_with_errors_is_said_not_silently_skipped(run_cli, tmp_path: Path):
    kernel = _versions(tmp_path)
    with open(tmp_path / "perfect.mcpl", "a") as f:
        f.write("garbage\n")
    code, out, _ = _run(run_cli, "feedback", "--registers", "estimate", "--only", "time",
                        kernel)
    assert code == 0
    assert "not compared with perfect, the version this one refines: it has errors" in out
    assert "[feedback-previous]" in out
    code, out, _ = _run(run_cli, "feedback", "--registers", "estimate", "--only", "time",
                        "--no-previous", kernel)
    assert code == 0 and "not compared" not in out
