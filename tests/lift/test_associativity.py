"""A reduce whose function is not associative (or whose start value is not neutral for
it) is kept sequential: the rules that split a reduce into partial reductions combined
in another order, or into a work-group's tree, do not apply to it, and the program is
warned that it is not parallelised."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mcl.diagnostics import McplError
from mcl.lift import macros as _macros  # noqa: F401  (registers the macro rules)
from mcl.lift.associativity import nonassociative_reductions, regroupable
from mcl.lift.ir import bind_sizes
from mcl.lift.parser import parse
from mcl.lift.rules import apply_rule, rewrites

PROGRAMS = Path(__file__).resolve().parents[2] / "mcl" / "lift" / "programs"


def _program(fun: str, op: str = "reduce", init: str = "0.0f") -> object:
    return parse(f"userfun g(x: float, y: float): float = {fun}\n"
                 f"p = fun(x: float[N]) => {op}(g, {init}) $ x\n")


@pytest.mark.parametrize("fun", ["x - y", "x / y", "0.5f * (x + y)", "x * x + y"])
def test_a_reduce_with_a_function_that_is_not_associative_is_warned_of(fun):
    [d] = nonassociative_reductions(_program(fun))
    assert d.code == "lift-not-associative" and d.severity.name == "WARNING"
    assert d.message.startswith("'g' is not associative: g(g(")
    assert "the rewrite rules keep this reduce sequential" in d.message
    assert "so it is not parallelised" in d.message
    assert "reduceSeq" in d.hint and "associative and commutative function" in d.hint


@pytest.mark.parametrize("fun, init", [("x + y", "0.0f"), ("x * y", "1.0f"),
                                       ("fmax(x, y)", "0.0f"), ("y + x", "0.0f")])
def test_an_associative_function_is_quiet(fun, init):
    assert nonassociative_reductions(_program(fun, init=init)) == []
    assert regroupable(_program(fun).userfuns["g"])


def test_a_part_red_written_with_a_function_that_is_not_associative_is_warned_of():
    """A partRed's partial results are combined in an order the rules choose: written by
    hand with x - y, its result depends on the implementation, which the warning says."""
    prog = parse("userfun g(x: float, y: float): float = x - y\n"
                 "p = fun(x: float[N]) => partRed(g, 0.0f, 4) $ x\n")
    [d] = nonassociative_reductions(prog)
    assert d.code == "lift-not-associative"
    assert "a partRed combines its elements in an order the rewrite rules choose" in d.message
    assert nonassociative_reductions(parse(
        "userfun g(x: float, y: float): float = x + y\n"
        "p = fun(x: float[N]) => partRed(g, 0.0f, 4) $ x\n")) == []


def test_a_reduce_with_a_function_that_is_not_commutative_is_warned_of():
    """The last non-zero element (y == 0 ? x : y) is associative with 0 neutral, but the
    rules reorder a partial reduction's elements: kept sequential, and said so."""
    [d] = nonassociative_reductions(_program("y == 0.0f ? x : y"))
    assert d.code == "lift-not-commutative" and d.severity.name == "WARNING"
    assert d.message.startswith("'g' is not commutative: g(")
    assert "the rewrite rules keep this reduce sequential (they would reorder" in d.message


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
    assert "keep this reduce sequential" in err


# ------------------------------------------------------------------ the rules

#: user functions the rules may not regroup: the first three are not associative; the
#: last (the last non-zero element) is, but not commutative, and the rules reorder
KEPT = ["x - y", "x * 0.5f + y", "x / y", "y == 0.0f ? x : y"]
SPLIT_RULES = {"reduce-partial", "reduce-to-workgroup-tree", "map-reduce-to-workgroups"}


def _reduce(fun: str, n: int = 64, init: str = "0.0f"):
    return bind_sizes(parse(f"userfun g(x: float, y: float): float = {fun}\n"
                            f"p = fun(x: float[N]) => reduce(g, {init}) $ x\n"), {"N": n})


def _rows(fun: str, m: int = 8, n: int = 32):
    return bind_sizes(parse(f"userfun g(x: float, y: float): float = {fun}\n"
                            "p = fun(A: float[M][N]) => map(fun(row) => reduce(g, 0.0f) $ row) $ A"
                            "\n"), {"M": m, "N": n})


def _rules_that_apply(prog) -> set[str]:
    return {r.rule for r in rewrites(prog, explore_only=True)}


@pytest.mark.parametrize("fun", KEPT)
def test_a_reduce_that_is_not_associative_is_never_split(fun):
    assert not regroupable(_reduce(fun).userfuns["g"])
    assert _rules_that_apply(_reduce(fun)) == {"reduce-sequential"}
    assert not _rules_that_apply(_rows(fun)) & SPLIT_RULES
    for rule in SPLIT_RULES - {"map-reduce-to-workgroups"}:
        with pytest.raises(McplError, match="does not apply"):
            apply_rule(_reduce(fun), rule)
    with pytest.raises(McplError, match="does not apply"):
        apply_rule(_rows(fun), "map-reduce-to-workgroups")


def test_an_associative_reduce_is_still_split():
    assert _rules_that_apply(_reduce("x + y")) >= {"reduce-partial", "reduce-to-workgroup-tree"}
    assert "reduce-sequential" not in _rules_that_apply(_reduce("x + y"))
    assert {"reduce-partial", "map-reduce-to-workgroups"} <= _rules_that_apply(_rows("x + y"))


def test_a_start_value_that_is_not_neutral_keeps_the_reduce_sequential():
    """Each partial reduction starts from z: reduce(add, 1) split in 4 adds 1 four times."""
    assert _rules_that_apply(_reduce("x + y", init="1.0f")) == {"reduce-sequential"}
    assert not _rules_that_apply(_reduce("x * y", init="0.0f")) & SPLIT_RULES
    assert "reduce-partial" in _rules_that_apply(_reduce("x * y", init="1.0f"))
    [d] = nonassociative_reductions(_reduce("x + y", init="1.0f"))
    assert d.code == "lift-not-neutral" and d.severity.name == "WARNING"
    assert d.message.startswith("1.0f is not a neutral start value for 'g'")
    assert "keep this reduce sequential" in d.message
    assert nonassociative_reductions(_reduce("x + y")) == []


# ------------------------------------------------------------------ exploration on PoCL

def _left_fold(fun: str, x: np.ndarray) -> np.float32:
    """The sequential result, in float32 as the kernel computes it."""
    f = {"x - y": lambda a, b: a - b,
         "x * 0.5f + y": lambda a, b: a * np.float32(0.5) + b,
         "x / y": lambda a, b: a / b,
         "y == 0.0f ? x : y": lambda a, b: a if b == 0 else b,
         "x + y": lambda a, b: a + b}[fun]
    acc = np.float32(0.0)
    for v in x:
        acc = np.float32(f(acc, v))
    return acc


def _explored(prog, sizes: dict, inputs: list, rt, strategy: str) -> dict:
    """Every candidate an exploration evaluates, by expression: its result on PoCL."""
    from mcl.lift.codegen import generate
    from mcl.lift.execute import run_generated
    from mcl.lift.explore import Evaluation, explore
    from mcl.lift.printer import key, show
    from mcl.lift.rules import Limits
    got: dict = {}

    def evaluate(low, local_size=None):
        text = show(low.body.body)
        got[text] = run_generated(generate(low, sizes), rt, inputs)
        return Evaluation(key(low.body), text, "ok", 1e-3 * (1 + len(got)), local_size)
    explore(prog, sizes, strategy, budget=10, evaluator=evaluate, seed_macros=True,
            limits=Limits(warp_size=1), progress=False)
    return got


@pytest.mark.parametrize("strategy", ["mcts", "random", "exhaustive"])
@pytest.mark.parametrize("fun", ["x - y", "x * 0.5f + y", "y == 0.0f ? x : y"])
def test_every_explored_candidate_of_a_non_associative_reduce_folds_in_order(rt, fun,
                                                                             strategy):
    x = np.random.default_rng(1).uniform(0.5, 1.0, 64).astype(np.float32)
    got = _explored(_reduce(fun), {"N": 64}, [x], rt, strategy)
    assert got, "the sequential lowering is a candidate"
    want = _left_fold(fun, x)
    for text, r in got.items():
        assert np.allclose(r, [want], rtol=1e-5), (text, r, want)
        assert "partRed" not in text and "mapWrg" not in text


@pytest.mark.parametrize("fun", ["x - y", "x * 0.5f + y"])
def test_every_explored_candidate_of_rows_of_non_associative_reduces_folds_in_order(rt, fun):
    a = np.random.default_rng(2).uniform(0.5, 1.0, (8, 32)).astype(np.float32)
    got = _explored(_rows(fun), {"M": 8, "N": 32}, [a], rt, "mcts")
    assert got
    want = [_left_fold(fun, row) for row in a]
    for text, r in got.items():
        assert np.allclose(np.ravel(r), want, rtol=1e-5), (text, r, want)


def test_an_associative_reduce_is_explored_with_its_split_candidates(rt):
    x = np.random.default_rng(1).uniform(0.5, 1.0, 64).astype(np.float32)
    got = _explored(_reduce("x + y"), {"N": 64}, [x], rt, "mcts")
    assert any("mapWrg" in text for text in got)            # work-group trees
    assert not any(text.startswith("join o mapGlb(reduceSeq") for text in got)
    for r in got.values():
        assert np.allclose(r, [x.astype(np.float64).sum()], rtol=1e-5)
