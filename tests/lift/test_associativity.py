"""A reduce whose function is not associative is warned of: the rewrites regroup it."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcl.lift.associativity import nonassociative_reductions
from mcl.lift.parser import parse

PROGRAMS = Path(__file__).resolve().parents[2] / "mcl" / "lift" / "programs"


def _program(fun: str, op: str = "reduce") -> object:
    return parse(f"userfun g(x: float, y: float): float = {fun}\n"
                 f"p = fun(x: float[N]) => {op}(g, 0.0f) $ x\n")


@pytest.mark.parametrize("fun", ["x - y", "x / y", "0.5f * (x + y)", "x * x + y"])
def test_a_reduce_with_a_function_that_is_not_associative_is_warned_of(fun):
    [d] = nonassociative_reductions(_program(fun))
    assert d.code == "lift-not-associative" and d.severity.name == "WARNING"
    assert d.message.startswith("'g' is not associative: g(g(")
    assert "reduceSeq" in d.hint


@pytest.mark.parametrize("fun", ["x + y", "x * y", "fmax(x, y)", "y + x"])
def test_an_associative_function_is_quiet(fun):
    assert nonassociative_reductions(_program(fun)) == []


def test_reduce_seq_keeps_its_order_and_is_quiet():
    assert nonassociative_reductions(_program("x - y", "reduceSeq")) == []


@pytest.mark.parametrize("path", sorted(PROGRAMS.glob("*.lift")), ids=lambda p: p.name)
def test_the_bundled_programs_are_quiet(path):
    from mcl.lift.parser import parse_file
    assert nonassociative_reductions(parse_file(str(path))) == []


def test_mcl_lift_check_prints_the_warning(tmp_path, run_cli):
    f = tmp_path / "sub.lift"
    f.write_text("userfun sub(x: float, y: float): float = x - y\n"
                 "s = fun(x: float[N]) => reduce(sub, 0.0f) $ x\n")
    code, out, err = run_cli("lift", "check", f)
    assert code == 0 and "s(x: float[N])" in out
    assert "warning: 'sub' is not associative" in err and "[lift-not-associative]" in err
