"""`mcl lift explore` as a new user meets it: wrong targets, sizes and results paths are
refused before anything is explored; the summary names every outcome and adds up, with
the reason of each dropped candidate; progress in a log is a few lines, not one."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from conftest import EXAMPLES, PROGRAMS, program

from mcl.diagnostics import McplError
from mcl.lift.explore import (
    Evaluation,
    Results,
    Search,
    explore,
    listing,
    reasons,
    summary,
)
from mcl.lift.ir import bind_sizes
from mcl.lift.printer import key, show
from mcl.lift.rules import Limits

GESUMMV = EXAMPLES / "gesummv" / "perfect.mcpl"
SUM = PROGRAMS / "sum.lift"


# ------------------------------------------------------------------ --target


@pytest.mark.parametrize("target, words", [
    ("nosuch", ["unknown hardware description 'nosuch'", "known: "]),
    ("hoper", ["unknown hardware description 'hoper'", "did you mean 'hopper'?"]),
    # a level above the leaves: no OpenCL can be generated for it, as `mcl gen` says
    ("gpu", ["'gpu' has no code-generation target"]),
])
def test_a_target_nothing_can_be_built_for_is_refused_before_exploring(run_cli, target, words):
    code, out, err = run_cli("lift", "explore", GESUMMV, "--target", target, "--budget", "2")
    assert code == 1, err
    assert out == ""                     # no table, no exploration
    for w in words:
        assert w in err
    assert "Traceback" not in err


# ------------------------------------------------------------------ --size


def test_unknown_size_names_are_refused_with_the_known_ones(run_cli):
    code, out, err = run_cli("lift", "explore", SUM, "--size", "M=100", "--budget", "1")
    assert code == 2 and out == ""
    assert "--size M: 'sum' has no size 'M' (its sizes: N)" in err
    code, out, err = run_cli("lift", "explore", GESUMMV, "--target", "hopper",
                             "--size", "M=100", "--budget", "1")
    assert code == 2 and out == ""
    assert "--size M: 'gesummv' has no size 'M' (its sizes: n)" in err
    code, _, err = run_cli("lift", "rewrite", SUM, "--size", "K=8", "--list")
    assert code == 2 and "(its sizes: N)" in err


# ------------------------------------------------------------------ --results


@pytest.mark.parametrize("kernel", [SUM, GESUMMV])
def test_a_results_file_that_cannot_be_written_is_refused_before_exploring(run_cli, kernel):
    code, out, err = run_cli("lift", "explore", kernel, "--target", "hopper", "--budget", "1",
                             "--results", "/nonexistent/dir/r.json")
    assert code == 1 and out == ""
    assert "/nonexistent/dir/r.json" in err and "/nonexistent/dir does not exist" in err
    assert ".tmp" not in err


def test_a_folder_or_a_file_that_is_not_json_is_not_a_results_file(run_cli, tmp_path):
    code, out, err = run_cli("lift", "explore", SUM, "--results", tmp_path)
    assert code == 1 and out == "" and "is a folder" in err
    bad = tmp_path / "r.json"
    bad.write_text("not json")
    code, out, err = run_cli("lift", "explore", SUM, "--results", bad)
    assert code == 1 and out == "" and "is not a results file" in err


def test_a_failed_save_names_the_results_file_given(tmp_path):
    target = tmp_path / "gone" / "r.json"
    with pytest.raises(OSError) as e:
        Results(target, {}).save()
    assert e.value.filename == str(target)


# ------------------------------------------------------------------ summary, reasons


def _stand_in(fail_every: int = 2):
    """Stands in for the device: every ``fail_every``-th candidate fails to generate,
    with a message whose numbers differ."""
    calls = []

    def ev(prog, ls):
        calls.append(key(prog.body))
        n = len(calls)
        if n % fail_every == 0:
            return Evaluation(key(prog.body), show(prog.body.body), "codegen-error",
                              local_size=ls, message=f"cannot generate OpenCL: private arrays "
                              f"of {4096 + n} bytes per work-item (limit 4096): too large\n"
                              "second line")
        return Evaluation(key(prog.body), show(prog.body.body), "ok", n * 1e-6, ls)
    ev.calls = calls
    return ev


def test_a_candidate_met_again_in_one_search_is_not_counted_twice():
    sizes = {"N": 1 << 12}
    prog = bind_sizes(program("sum"), sizes)
    from mcl.lift.rules import apply_rule
    low = apply_rule(prog, "reduce-to-workgroup-tree")
    s = Search(prog, _stand_in(), Results(None), budget=5, limits=Limits(), progress=False)
    s.score(low)
    s.score(low)
    assert s.tried == 1 and s.results.searched == [key(low.body)]
    assert len(s.results.candidates()) == 1


def test_the_summary_adds_up_to_the_budget_and_gives_the_reasons(tmp_path):
    sizes = {"N": 1 << 12}
    res = explore(program("sum"), sizes, "random", budget=8, evaluator=_stand_in(),
                  results_path=tmp_path / "r.json", progress=False, limits=Limits())
    cands = res.candidates()
    assert len(cands) == 8
    text = summary(cands)
    assert text.startswith("8 candidates: ")
    assert sum(int(part.split()[0]) for part in text.split(": ", 1)[1].split(", ")) == 8
    why = reasons(cands)
    assert len(why) == 1
    status, n, reason = why[0]
    assert status == "codegen-error" and n == 4
    # one reason for messages that differ in their numbers, as a range; first line only
    assert reason == ("cannot generate OpenCL: private arrays of 4098 to 4104 bytes per "
                      "work-item (limit 4096): too large")
    # the results file keeps each candidate's message
    data = json.loads((tmp_path / "r.json").read_text())
    assert all(e["message"] for e in data["evaluations"].values()
               if e["status"] == "codegen-error")
    lines = listing(cands)
    assert len([x for x in lines if "codegen-error" in x]) == 4
    assert any("private arrays of 4098 bytes" in x for x in lines)


def test_a_resumed_search_summarises_its_own_candidates(tmp_path):
    sizes = {"N": 1 << 12}
    f = tmp_path / "r.json"
    explore(program("sum"), sizes, "random", budget=6, evaluator=_stand_in(),
            results_path=f, progress=False, limits=Limits(), seed=1)
    res = explore(program("sum"), sizes, "random", budget=3, evaluator=_stand_in(),
                  results_path=f, progress=False, limits=Limits(), seed=2)
    assert len(res.candidates()) == 3 and len(res.evaluations) >= 6
    assert summary(res.candidates()).startswith("3 candidates: ")


def test_the_comparison_says_why_lift_candidates_were_dropped():
    from mcl.lift.compare import Row, compare, table

    def measure(path, leaf, inputs, expected, tol, device, repeat, max_version_s):
        return Row(path.stem, "ok", 1e-3)

    c = compare(EXAMPLES / "vector_add" / "perfect.mcpl", "hopper", {"n": 64}, budget=6,
                strategy="random", measure=measure, evaluator=_stand_in(), limits=Limits())
    lift = c.rows[-1]
    assert lift.note == "6 candidates: 3 ok, 3 codegen-error"
    text = table(c)
    assert "Lift candidates not kept:" in text
    assert "3 codegen-error: cannot generate OpenCL: private arrays of" in text


@pytest.mark.usefixtures("rt")
def test_cli_summary_and_verbose_listing(run_cli):
    code, out, err = run_cli("lift", "explore", SUM, "--size", "N=4096", "--budget", "2",
                             "--repeat", "1", "--verbose")
    assert code == 0, err
    assert "2 candidates: " in out
    assert "every candidate" in out and "\n   1 " in out and "\n   2 " in out


# ------------------------------------------------------------------ help, progress


def test_explore_help_says_it_takes_lift_and_mcpl_files(run_cli):
    code, out, _ = run_cli("lift", "explore", "--help")
    assert code == 0
    assert "a .lift program" not in out
    assert ".lift" in out and ".mcpl" in out and "--verbose" in out


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_in_a_log_is_a_few_lines_and_on_a_terminal_a_bar():
    sizes = {"N": 1 << 12}
    log = io.StringIO()
    explore(program("sum"), sizes, "random", budget=20, evaluator=_stand_in(), progress=log,
            limits=Limits())
    text = log.getvalue()
    assert "\r" not in text
    lines = text.splitlines()
    assert 1 <= len(lines) <= 11 and lines[-1].startswith("explore: 20/20 candidates")
    tty = _Terminal()
    explore(program("sum"), sizes, "random", budget=5, evaluator=_stand_in(), progress=tty,
            limits=Limits())
    assert tty.getvalue().count("\r") == 5 and tty.getvalue().count("\n") == 1


def test_progress_of_a_search_that_runs_out_ends_with_its_count():
    sizes = {"N": 1 << 12}
    log = io.StringIO()
    res = explore(program("scal"), sizes, "exhaustive", budget=200, evaluator=_stand_in(),
                  progress=log, depth=1, limits=Limits())
    n = len(res.candidates())
    assert 0 < n < 200
    assert log.getvalue().splitlines()[-1].startswith(f"explore: {n}/200 candidates; no more")


def test_results_path_check_accepts_a_new_file_in_an_existing_folder(tmp_path):
    from mcl.lift.explore import check_results_path
    assert check_results_path(tmp_path / "r.json") == Path(tmp_path / "r.json")
    with pytest.raises(McplError):
        check_results_path(tmp_path / "no" / "r.json")


# ------------------------------------------------------------------ --hwd-path


def _users_levels(tmp_path: Path) -> tuple[Path, Path]:
    """(folder of the user's levels: mygpu, and myhopper with its target file; a
    vector_add kernel that imports mygpu, with its reference.py)."""
    from tests.conftest import ROOT
    levels, kernels = tmp_path / "levels", tmp_path / "k"
    levels.mkdir()
    kernels.mkdir()
    hw = ROOT / "mcl" / "hwdescs"
    for name in ("gpu", "hopper"):
        (levels / f"my{name}.hdl").write_text((hw / f"{name}.hdl").read_text().replace(
            f"hardware_description {name};", f"hardware_description my{name};"))
    (levels / "myhopper.target").write_text((hw / "hopper.target").read_text())
    va = EXAMPLES / "vector_add"
    kernel = kernels / "perfect.mcpl"
    kernel.write_text((va / "perfect.mcpl").read_text().replace(
        "import perfect;", "import perfect;\nimport mygpu;"))
    (kernels / "reference.py").write_text((va / "reference.py").read_text())
    return levels, kernel


def test_explore_of_a_kernel_without_the_hwd_path_of_its_levels_is_refused(run_cli, tmp_path):
    levels, kernel = _users_levels(tmp_path)
    code, out, err = run_cli("lift", "explore", kernel, "--target", "myhopper",
                             "--budget", "1")
    assert code == 1 and out == ""
    assert "unknown hardware description 'myhopper'" in err and "Traceback" not in err
    code, out, err = run_cli("lift", "explore", kernel, "--target", "hopper", "--budget", "1")
    assert code == 1 and out == "" and "mygpu" in err and "Traceback" not in err
    code, out, _ = run_cli("lift", "explore", "--help")
    assert "--hwd-path" in out and "--module-path" in out


def test_explore_of_a_lift_program_says_hwd_path_is_ignored(run_cli, tmp_path, monkeypatch):
    def interrupted(*_args, **_kwargs):
        raise KeyboardInterrupt    # the warning comes before the search: none is needed
    monkeypatch.setattr("mcl.lift.explore.explore", interrupted)
    code, _, err = run_cli("lift", "explore", SUM, "--hwd-path", tmp_path, "--budget", "1")
    assert "mcl: warning: --hwd-path is ignored" in err


@pytest.mark.usefixtures("rt")
def test_explore_of_a_kernel_reads_its_levels_on_the_hwd_path(run_cli, tmp_path):
    """The leaf (myhopper) and a level the kernel imports (mygpu) are the user's: with
    --hwd-path naming their folder, the versions are built and Lift explored."""
    levels, kernel = _users_levels(tmp_path)
    code, out, err = run_cli("lift", "explore", kernel, "--target", "myhopper", "--budget",
                             "1", "--repeat", "1", "--size", "n=64", "--hwd-path", levels)
    assert code == 0, out + err
    assert "vector_add on myhopper" in out and "roofline of myhopper" in out
    assert "perfect (error)" not in out and "Lift best (error)" not in out
