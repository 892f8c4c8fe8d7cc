"""The launch a candidate of `mcl lift explore` is reported with is the one its plan
has: a kernel of one work-item (the sequential fold of a reduce that is not
associative, ``join o mapGlb(reduceSeq(g, 0.0f)) o split(N) $ x``) is launched with
a work-group of 1 whatever work-group size the search asks for, so it is one candidate,
reported with work-group size 1, and not timed once per size it ignores. An ordinary
program still has each of its distinct work-group sizes explored."""

from __future__ import annotations

import json
import re

import pytest
from conftest import program

from mcl.diagnostics import McplError
from mcl.lift import macros as _macros  # noqa: F401  (registers the macro rules)
from mcl.lift.codegen import Options, generate
from mcl.lift.explore import (
    Evaluation,
    Results,
    Search,
    direct_lowering,
    explore,
    launch_text,
    listing,
    work_group_sizes,
)
from mcl.lift.ir import bind_sizes
from mcl.lift.parser import parse
from mcl.lift.printer import key, show
from mcl.lift.rules import Limits

#: functions a reduce may not be split with (tests/lift/test_associativity.py)
SEQUENTIAL = ["x * 0.5f + y", "x - y"]


def _reduce(fun: str):
    return parse(f"userfun g(x: float, y: float): float = {fun}\n"
                 "p = fun(x: float[N]) => reduce(g, 0.0f) $ x\n")


def _plan_launch(prog, ls):
    """(global, local) of each kernel of ``prog`` generated with work-group size ``ls``,
    as the plan has them: what the candidate's launch truly is."""
    plan = generate(prog, {}, Options(local_size=ls)).plan()
    return tuple((tuple(k["global"]), tuple(k["local"])) for k in plan["kernels"])


def _true_launch_stand_in():
    """Stands in for the device: each evaluation is ok, takes a time of its own, and
    remembers the launch its plan truly has."""
    calls = []

    def ev(prog, ls):
        try:
            launch = _plan_launch(prog, ls)
        except McplError as e:
            calls.append((key(prog.body), ls, None))
            return Evaluation(key(prog.body), show(prog.body.body), "codegen-error",
                              local_size=ls, message=e.diagnostics[0].message)
        calls.append((key(prog.body), ls, launch))
        return Evaluation(key(prog.body), show(prog.body.body), "ok", len(calls) * 1e-6, ls)
    ev.calls = calls
    return ev


def _one_work_item(fun: str, n: int = 1024):
    low = direct_lowering(bind_sizes(_reduce(fun), {"N": n}))
    assert show(low.body.body) == f"join o mapGlb(reduceSeq(g, 0.0f)) o split({n}) $ x"
    assert _plan_launch(low, 256) == (((1,), (1,)),)
    return low


# ------------------------------------------------------------------ the sizes offered


@pytest.mark.parametrize("fun", SEQUENTIAL)
def test_a_one_work_item_kernel_is_offered_its_one_work_group_size(fun):
    assert work_group_sizes(_one_work_item(fun), (64, 128, 256), Limits()) == (1,)


def test_a_kernel_narrower_than_a_size_is_offered_its_global_size_once():
    low = direct_lowering(bind_sizes(program("scal"), {"N": 512}))
    assert show(low.body.body) == "mapGlb(fun(v) => mult(a, v)) $ x"
    assert work_group_sizes(low, (64, 128, 256), Limits()) == (64, 128, 256)
    # 128 work-items: 128 and 256 are the same launch, offered once
    narrow = direct_lowering(bind_sizes(program("scal"), {"N": 128}))
    assert _plan_launch(narrow, 128) == _plan_launch(narrow, 256) == (((128,), (128,)),)
    assert work_group_sizes(narrow, (64, 128, 256), Limits()) == (64, 128)


def test_sizes_beyond_the_device_limit_are_not_offered():
    low = direct_lowering(bind_sizes(program("scal"), {"N": 4096}))
    assert work_group_sizes(low, (64, 128, 256), Limits(max_work_group=128)) == (64, 128)


# ------------------------------------------------------------------ one candidate, true figures


@pytest.mark.parametrize("fun", SEQUENTIAL)
def test_a_one_work_item_candidate_is_evaluated_once_with_its_plans_work_group(fun):
    low = _one_work_item(fun)
    ev = _true_launch_stand_in()
    s = Search(low, ev, Results(None), budget=10, limits=Limits(), progress=False)
    for _ in range(12):          # every size the rng could pick before
        s.score(low)
    assert s.tried == 1 and len(ev.calls) == 1
    [(_, ls, launch)] = ev.calls
    assert launch == (((1,), (1,)),)
    # the work-group size reported is the plan's local size
    [cand] = s.results.candidates()
    assert cand["local_size"] == launch[0][1][0] == 1


@pytest.mark.parametrize("fun", SEQUENTIAL)
def test_no_two_candidates_have_the_same_expression_and_launch(fun):
    ev = _true_launch_stand_in()
    res = explore(_reduce(fun), {"N": 1024}, "random", budget=10, evaluator=ev,
                  progress=False, limits=Limits(), seed_macros=True)
    cands = res.candidates()
    assert cands and len(cands) == len(ev.calls)
    seen = [(k, launch) for k, _, launch in ev.calls]
    assert len(seen) == len(set(seen)), seen
    for c in cands:
        assert c["local_size"] in (None, 1)


def test_an_ordinary_program_still_gets_its_distinct_work_group_sizes():
    sizes = {"N": 1 << 16}
    for name in ("scal", "sum"):
        ev = _true_launch_stand_in()
        explore(program(name), sizes, "random", budget=40, evaluator=ev, progress=False,
                limits=Limits(), seed_macros=True)
        by_expression: dict[str, set] = {}
        for k, ls, launch in ev.calls:
            by_expression.setdefault(k, set()).add((ls, launch))
        # no expression and launch twice
        assert len({(k, launch) for k, _, launch in ev.calls}) == len(ev.calls)
        if name == "scal":
            # the direct lowering (one work-item per element) is scored until it has
            # been tried with each of its work-group sizes
            low = direct_lowering(bind_sizes(program("scal"), sizes))
            s = Search(low, ev, Results(None), budget=10, limits=Limits(), progress=False)
            for _ in range(30):
                s.score(low)
            tried = {ls for k, ls, _ in ev.calls if k == key(low.body)}
            assert tried == {64, 128, 256}
            launches = {launch for k, _, launch in ev.calls if k == key(low.body)}
            assert launches == {(((65536,), (ls,)),) for ls in (64, 128, 256)}


# ------------------------------------------------------------------ printed figures


def test_the_listing_prints_the_launch_of_the_plan():
    e = {"status": "ok", "time_s": 1e-6, "local_size": 1, "expression": "e",
         "launch": [{"name": "kernel_0", "global": [1], "local": [1]}]}
    [line] = listing([e])
    assert "global 1 local 1" in line
    assert launch_text(e, label=True) == "global size 1, work-group size 1"
    two = {**e, "launch": [{"name": "kernel_0", "global": [4096], "local": [64]},
                           {"name": "kernel_1", "global": [64], "local": [64]}]}
    assert launch_text(two) == "global 4096 local 64; global 64 local 64"
    assert launch_text({"local_size": 128}) == "local 128"     # an older results file


@pytest.mark.parametrize("fun", SEQUENTIAL)
def test_mcl_lift_explore_prints_the_true_launch_of_a_one_work_item_kernel(
        fun, rt, tmp_path, run_cli):
    f = tmp_path / "seq.lift"
    f.write_text(f"userfun g(x: float, y: float): float = {fun}\n"
                 "p = fun(x: float[N]) => reduce(g, 0.0f) $ x\n")
    results = tmp_path / "r.json"
    code, out, err = run_cli("lift", "explore", f, "--size", "N=1024", "--budget", "10",
                             "--verbose", "--results", results, "--repeat", "1")
    assert code == 0, out + err
    low = _one_work_item(fun)
    plan_local = _plan_launch(low, 256)[0][1][0]
    best = re.search(r"^best: .*work-group size (\d+)", out, re.MULTILINE)
    assert best and int(best.group(1)) == plan_local == 1, out
    assert "global size 1, work-group size 1" in out
    assert "local 128" not in out and "local 64" not in out and "local 256" not in out
    assert re.search(r"^1 candidate: 1 ok$", out, re.MULTILINE), out
    data = json.loads(results.read_text())
    [e] = data["evaluations"].values()
    assert e["local_size"] == 1
    assert e["launch"] == [{"name": "kernel_0", "global": [1], "local": [1]}]
    code, out, _ = run_cli("lift", "explore", f, "--size", "N=1024", "--budget", "10",
                           "--json", "--repeat", "1")
    best = json.loads(out)["best"]
    assert code == 0 and best["local_size"] == 1 and best["launch"][0]["local"] == [1]
    assert sum(json.loads(out)["counts"].values()) == 1


# ------------------------------------------------------------------ one generation


@pytest.mark.parametrize("name, n, strategy", [("scal", 4096, "random"), ("sum", 4096, "mcts"),
                                               ("scal", 100, "random")])
def test_each_candidate_is_generated_once(name, n, strategy, rt, monkeypatch):
    """The work-group sizes a program's launch can use are learnt from the generation
    that the evaluator compiles: the generator runs once per candidate, not once more
    for each expression. (Where an expression first met has kernels narrower than the
    sizes, N=100, and the draw then picks a size other than the one it would pick
    among distinct launches, it is generated a second time: not with these seeds.)"""
    from collections import Counter

    import mcl.lift.explore_evaluate as E
    calls = []

    def counting(prog, sizes, options=None):
        calls.append((key(prog.body), options.local_size if options else None))
        return generate(prog, sizes, options)
    monkeypatch.setattr(E, "generate", counting)
    res = explore(program(name), {"N": n}, strategy, budget=8, progress=False, repeat=1,
                  seed_macros=True)
    cands = res.candidates()
    assert len(cands) == 8 and all(c["status"] == "ok" for c in cands), cands
    per_expression = Counter(k for k, _ in calls)
    assert per_expression == Counter(c["key"] for c in cands), calls
