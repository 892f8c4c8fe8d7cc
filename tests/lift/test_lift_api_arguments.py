"""Lift's Python API given arguments of the wrong kind: a project error that names the
function and the argument (a LiftArgumentError is an McplError and a TypeError), never
an AttributeError from deep inside; and explore() refuses a size name the program does
not use before it evaluates anything (it searched with it before)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from conftest import PROGRAMS, program

from mcl.diagnostics import McplError
from mcl.lift import parse, parse_file, show, show_program
from mcl.lift.arguments import LiftArgumentError
from mcl.lift.codegen import generate
from mcl.lift.explore import Evaluation, explore
from mcl.lift.interp import random_inputs, run
from mcl.lift.ir import bind_sizes
from mcl.lift.rules import Limits, apply_rule, rewrites
from mcl.lift.typecheck import check_program

SUM = PROGRAMS / "sum.lift"
TEXT = SUM.read_text()


def never(prog, local_size=None):     # nothing may be evaluated
    raise AssertionError("evaluated")


def _explore(prog, sizes, **kwargs):
    return explore(prog, sizes, **{"budget": 1, "evaluator": never, "limits": Limits(),
                                   "progress": False, **kwargs})


@pytest.mark.parametrize("call, words", [
    (lambda: parse(42), "mcl.lift.parse: text is the text of a Lift program (a str), not int"),
    (lambda: parse(TEXT.encode()), "mcl.lift.parse: text is the text of a Lift program"),
    (lambda: parse(SUM), "mcl.lift.parse: text is the text of a Lift program"),
    (lambda: parse(TEXT, 3), "mcl.lift.parse: file is the path of a file"),
    (lambda: parse_file(42), "mcl.lift.parse_file: path is the path of a file (a str or a "
                             "pathlib.Path), not int 42"),
    (lambda: parse_file(None), "mcl.lift.parse_file: path is the path of a file"),
    (lambda: parse_file(TEXT), "path is the path of a file, not the text of a program"),
    (lambda: show_program(TEXT), "mcl.lift.show_program: program is a Lift Program, not str"),
    (lambda: show(program("sum")), "mcl.lift.show: n is an expression or a function"),
    (lambda: bind_sizes(TEXT, {"N": 4}), "bind_sizes: n is a Lift Program, not str"),
    (lambda: bind_sizes(program("sum"), 42), "bind_sizes: values maps size names to positive "
                                             "integers"),
    (lambda: check_program(42), "check_program: program is a Lift Program, not int 42"),
    (lambda: rewrites(TEXT), "rewrites: program is a Lift Program"),
    (lambda: apply_rule(program("sum"), 42), "apply_rule: name is the name of a rule"),
    (lambda: generate(TEXT, {"N": 4}), "generate: program is a Lift Program"),
    (lambda: run(str(SUM), [1.0]), "run: program is a Lift Program"),
    (lambda: random_inputs(program("sum"), [("N", 4)]), "random_inputs: sizes maps size "
                                                         "names to positive integers"),
    (lambda: _explore(TEXT, {"N": 64}), "explore: program is a Lift Program, not str"),
    (lambda: _explore(42, {"N": 64}), "explore: program is a Lift Program, not int 42"),
    (lambda: _explore(program("sum"), None), "explore: sizes maps size names to positive "
                                             "integers (a dict such as {'N': 1024}), not "
                                             "NoneType"),
    (lambda: _explore(program("sum"), {1: 64}), "explore: sizes names sizes by str"),
    (lambda: _explore(program("sum"), {"N": 64}, budget="5"),
     "explore: budget is a whole number (1 or more), not str '5'"),
    (lambda: _explore(program("sum"), {"N": 64}, seed=1.5), "explore: seed is a whole number"),
    (lambda: _explore(program("sum"), {"N": 64}, strategy=3), "explore: strategy is the name "
                                                              "of a strategy"),
    (lambda: _explore(program("sum"), {"N": 64}, results_path=42),
     "explore: results_path is the path of a file (a str or a pathlib.Path) or None, not int"),
])
def test_an_argument_of_the_wrong_kind_is_named(call, words):
    with pytest.raises(LiftArgumentError) as e:
        call()
    assert isinstance(e.value, McplError) and isinstance(e.value, TypeError)
    d = e.value.diagnostics[0]
    assert d.code == "lift-argument" and words in d.message, d.message


def test_the_refusal_says_how_to_get_a_program():
    with pytest.raises(LiftArgumentError) as e:
        check_program(str(SUM))
    assert "parse_file(" in e.value.diagnostics[0].hint
    with pytest.raises(LiftArgumentError) as e:
        check_program(TEXT)
    assert "mcl.lift.parse(text)" in e.value.diagnostics[0].hint


@pytest.mark.parametrize("sizes, words", [
    ({"N": -4}, "explore: size N = -4: a size is a positive integer"),
    ({"N": 2.5}, "explore: size N = 2.5: a size is a positive integer"),
    ({"N": "64"}, "explore: size N = '64': a size is a positive integer"),
    ({"N": 64, "M": 8}, "explore: sizes names size 'M', which 'sum' does not use "
                        "(its sizes: N)"),
    ({"n": 64}, "explore: sizes names size 'n', which 'sum' does not use (its sizes: N)"),
    ({}, "explore: sizes gives no value for size 'N' (the sizes of 'sum': N)"),
])
def test_explore_refuses_sizes_before_anything_is_evaluated(sizes, words):
    start = time.perf_counter()
    with pytest.raises(McplError) as e:
        explore(program("sum"), sizes, budget=50, evaluator=never, limits=Limits(),
                progress=False)
    d = e.value.diagnostics[0]
    assert d.code == "lift-size" and words in d.message, d.message
    assert time.perf_counter() - start < 5      # refused at once, not after a search


def test_a_size_name_in_the_wrong_case_is_suggested():
    with pytest.raises(McplError) as e:
        _explore(program("sum"), {"n": 64})
    assert e.value.diagnostics[0].hint == "did you mean 'N'?"


def test_the_commands_print_the_refusal_as_a_diagnostic(run_cli, tmp_path):
    """An McplError of the API reaches the CLI user as a message, never a traceback (the
    command checks sizes itself; a Lift program given where a size map goes is the
    API's only)."""
    code, out, err = run_cli("lift", "explore", SUM, "--size", "n=64", "--budget", "1")
    assert code == 2 and "Traceback" not in err and "its sizes: N" in err


def test_right_arguments_still_work(tmp_path):
    prog = parse_file(Path(SUM))
    assert parse(TEXT, SUM).name == prog.name
    res = explore(prog, {"N": 64}, "random", budget=1,
                  evaluator=lambda p, ls: Evaluation("k", "e", "ok", 1e-6, ls),
                  limits=Limits(), progress=False, results_path=tmp_path / "r.json")
    assert res.best()["time_s"] == 1e-6
