"""Ctrl-C during `mcl lift explore` (and `explore()`): the search stops, what it found so
far is kept in the results file and summarised, the command exits with 130; before,
it said only "mcl: interrupted" and, without --results, the candidates were lost."""

from __future__ import annotations

import json
import signal
import subprocess
import sys

import pytest
from conftest import PROGRAMS, program

from mcl.lift import explore as explore_module
from mcl.lift.explore import Evaluation, ExploreInterrupted, explore
from mcl.lift.printer import key, show
from mcl.lift.rules import Limits
from tests.conftest import child_env

SUM = PROGRAMS / "sum.lift"
SIZES = {"N": 1 << 12}


def _stopping_after(n: int):
    """A stand-in evaluator: candidate i takes i microseconds; the call after the
    ``n``-th is Ctrl-C."""
    calls: list[str] = []

    def ev(prog, ls):
        if len(calls) == n:
            raise KeyboardInterrupt
        calls.append(key(prog.body))
        return Evaluation(key(prog.body), show(prog.body.body), "ok", len(calls) * 1e-6, ls)
    ev.calls = calls
    return ev


def test_explore_raises_a_keyboard_interrupt_that_carries_the_results(tmp_path):
    path = tmp_path / "r.json"
    with pytest.raises(ExploreInterrupted) as info:
        explore(program("sum"), SIZES, "random", budget=8, evaluator=_stopping_after(3),
                results_path=path, progress=False, limits=Limits())
    stop = info.value
    assert isinstance(stop, KeyboardInterrupt)      # a script stops as it would
    assert (stop.tried, stop.budget) == (3, 8)
    assert len(stop.results.candidates()) == 3
    assert stop.results.best()["time_s"] == 1e-6
    saved = json.loads(path.read_text())
    assert len(saved["evaluations"]) == 3 and saved["best"]["time_s"] == 1e-6
    # the same search resumes from the file: the three are recalled, not evaluated again
    again = _stopping_after(100)
    res = explore(program("sum"), SIZES, "random", budget=8, evaluator=again,
                  results_path=path, progress=False, limits=Limits())
    assert len(res.candidates()) == 8 and len(again.calls) == 5


def test_ctrl_c_before_any_candidate_is_said_as_such(tmp_path):
    with pytest.raises(ExploreInterrupted) as info:
        explore(program("sum"), SIZES, "random", budget=8, evaluator=_stopping_after(0),
                results_path=tmp_path / "r.json", progress=False, limits=Limits())
    assert info.value.tried == 0 and info.value.results.candidates() == []


class _StandInEvaluator:
    """Replaces the OpenCL evaluator of the command: no device, Ctrl-C at the third
    candidate."""

    _rt = None

    def __init__(self, *_args, **_kwargs):
        self.evaluate = _stopping_after(2)

    def limits(self) -> Limits:
        return Limits()

    def __call__(self, prog, ls=None):
        return self.evaluate(prog, ls)


@pytest.fixture
def no_device(monkeypatch):
    monkeypatch.setattr(explore_module, "Evaluator", _StandInEvaluator)


@pytest.mark.usefixtures("no_device")
def test_the_command_summarises_the_search_so_far_and_exits_130(run_cli, tmp_path):
    results = tmp_path / "r.json"
    code, out, err = run_cli("lift", "explore", SUM, "--size", "N=4096", "--budget", "6",
                             "--strategy", "random", "--results", results)
    assert code == 130, err
    assert "Traceback" not in out + err
    assert "interrupted after 2 of 6 candidates; the best so far:" in out
    assert "2 candidates: 2 ok" in out and "best: 0.0010 ms" in out and "expression: " in out
    assert f"mcl: interrupted after 2 of 6 candidates; the results so far are in {results}" \
        in err and "run the same command again to resume" in err
    assert len(json.loads(results.read_text())["evaluations"]) == 2


@pytest.mark.usefixtures("no_device")
def test_without_a_results_file_the_command_says_they_were_not_kept(run_cli):
    code, out, err = run_cli("lift", "explore", SUM, "--size", "N=4096", "--budget", "6",
                             "--strategy", "random")
    assert code == 130 and "2 candidates: 2 ok" in out
    assert "their results were not kept: give --results FILE" in err


@pytest.mark.usefixtures("no_device")
def test_json_output_says_the_search_was_interrupted(run_cli, tmp_path):
    code, out, err = run_cli("lift", "explore", SUM, "--size", "N=4096", "--budget", "6",
                             "--strategy", "random", "--json", "--results", tmp_path / "r.json")
    assert code == 130, err
    data = json.loads(out)
    assert data["interrupted"] is True and (data["tried"], data["budget"]) == (2, 6)
    assert data["counts"] == {"ok": 2} and data["best"]["time_s"] == 1e-6
    assert data["results_file"] == str(tmp_path / "r.json")


@pytest.mark.usefixtures("rt")
def test_sigint_to_a_real_search(tmp_path):
    """A real process on the OpenCL device, stopped by SIGINT once it reported progress."""
    results = tmp_path / "r.json"
    root = PROGRAMS.parents[2]
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcl.cli", "lift", "explore", str(PROGRAMS / "mm.lift"),
         "--budget", "400", "--results", str(results)],
        cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=child_env(),
        # a child of a shell's background job would inherit SIGINT ignored
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        seen = []
        for line in proc.stderr:
            seen.append(line)
            if "/400 candidates" in line:
                break
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    err = "".join(seen) + err
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "the best so far:" in out and "best: " in out
    assert f"the results so far are in {results}" in err
    assert json.loads(results.read_text())["evaluations"]
