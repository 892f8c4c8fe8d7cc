"""Every rule preserves the meaning of the program it rewrites: applied to small
programs, each of its results gives the interpreter's result on random inputs."""

import numpy as np
import pytest
from conftest import program

from mcl.diagnostics import McplError
from mcl.lift import macros  # noqa: F401  (registers the macro rules)
from mcl.lift.interp import random_inputs, run
from mcl.lift.ir import bind_sizes
from mcl.lift.parser import parse
from mcl.lift.rules import RULES, Limits, apply_rule, rewrites

FUNS = ("userfun add(x: float, y: float): float = x + y\n"
        "userfun absval(x: float): float = fabs(x)\n"
        "userfun twice(x: float): float = x * 2.0f\n"
        "userfun mult(x: float, y: float): float = x * y\n"
        # not associative: the rules keep its reduce in order (reduce-sequential)
        "userfun decay(acc: float, y: float): float = acc * 0.5f + y\n")

SOURCES = [
    "s = fun(x: float[64]) => map(absval) o map(twice) $ x",
    "s = fun(x: float[64]) => map(absval o twice) $ x",
    "s = fun(x: float[64]) => reduce(add, 0.0f) o map(absval) o reorder $ x",
    "s = fun(x: float[64]) => reduce(add, 0.0f) o reorder o map(absval) $ x",
    "s = fun(x: float[64]) => reduce(add, 0.0f) o partRed(add, 0.0f, 4) $ x",
    "s = fun(x: float[64]) => reduce(add, 0.0f) o partRed(add, 0.0f, 64) $ x",
    "s = fun(x: float[64]) => join o map(partRed(add, 0.0f, 4)) o split(16) $ x",
    "s = fun(x: float[64]) => iterate(3, join o map(reduce(add, 0.0f)) o split(2)) $ x",
    "s = fun(x: float[64]) => iterate(1, join o map(reduce(add, 0.0f)) o split(2)) $ x",
    "s = fun(x: float[64]) => map(absval) o id $ x",
    "s = fun(x: float[64]) => join o split(4) $ x",
    "s = fun(x: float[64]) => split(4) o join o split(4) $ x",
    "s = fun(x: float[64]) => join o transpose o transpose o split(8) $ x",
    "s = fun(x: float[64]) => asScalar o asVector(4) $ x",
    "s = fun(x: float[64]) => join o mapGlb(reduceSeq(add, 0.0f) o mapSeq(absval)) o split(4) $ x",
    "s = fun(x: float[64]) => join o mapGlb(reduce(add, 0.0f)) o split(4) $ x",
    "s = fun(x: float[64]) => join o mapGlb(map(absval)) o split(4) $ x",
    "s = fun(x: float[64]) => join o mapWrg(map(absval)) o split(8) $ x",
    "s = fun(x: float[64]) => join o mapWrg(mapLcl(absval)) o split(8) $ x",
    "s = fun(x: float[64]) => "
    "join o mapWrg(join o mapWarp(map(absval)) o split(4)) o split(16) $ x",
    "s = fun(x: float[64]) => map(absval) $ x",
    "s = fun(x: float[64]) => reduce(add, 0.0f) $ x",
    "s = fun(x: float[4096]) => reduce(add, 0.0f) $ x",
    "s = fun(x: float[64]) => reduce(decay, 0.0f) $ x",
    "s = fun(x: float[8][4][16]) => "
    "mapGlb(reduceSeq(add, 0.0f) o join o mapSeq(mapSeq(absval))) $ x",
    # every 3 x 3 window of a 2-D input (stencil-2d-tiling)
    "s = fun(x: float[10][34]) => "
    "map(join o map(reduce(add, 0.0f) o join) o transpose o map(slide(3, 1))) o slide(3, 1) $ x",
    # every 3 x 3 window weighted by a filter, 13 x 37 outputs (stencil-2d-register-blocking:
    # blocks that do not divide the output)
    "s = fun(x: float[15][39], f: float[3][3]) => map(join o map(fun(win) => "
    "reduce(add, 0.0f) o join o map(fun(r) => map(fun(t) => mult(t._0, t._1)) $ "
    "zip(r._0, r._1)) $ zip(f, win)) o transpose o map(slide(3, 1))) o slide(3, 1) $ x",
]

BUNDLED = [("gemv", {"M": 4, "N": 128}), ("mm", {"M": 8, "N": 8, "K": 4}),
           ("mm", {"M": 64, "N": 32, "K": 16}),
           ("dot", {"N": 64}), ("scal", {"N": 16})]


def _programs():
    progs = [parse(FUNS + s) for s in SOURCES]
    progs += [bind_sizes(program(n), s) for n, s in BUNDLED]
    return progs


def _applications(name: str, limit: int = 4):
    out = []
    for p in _programs():
        for rw in rewrites(p, [RULES[name]], Limits(max_choices=3)):
            out.append((p, rw))
            if len(out) >= limit:
                return out
    return out


@pytest.mark.parametrize("name", sorted(RULES))
def test_rule_preserves_results_on_random_inputs(name):
    apps = _applications(name)
    assert apps, f"no test program exercises rule {name}"
    rng = np.random.default_rng(7)
    for p, rw in apps:
        xs = random_inputs(p, {}, rng)
        before = run(p, *xs)
        after = run(rw.result, *xs)
        # exact rules keep every element; the others keep the final reduction
        np.testing.assert_allclose(after, before, rtol=1e-4, atol=1e-4,
                                   err_msg=f"{rw.describe()} changed the result")


def test_rules_are_first_class():
    r = RULES["split-join"]
    assert r.name == "split-join" and "->" in r.doc and callable(r.match) \
        and callable(r.condition) and callable(r.rhs)
    assert not RULES["partRed-reorder"].exact


def test_rule_applied_where_its_condition_fails_is_an_error():
    p = parse(FUNS + "s = fun(x: float[64]) => reduce(add, 0.0f) $ x")
    with pytest.raises(McplError) as e:
        apply_rule(p, "reduce-to-reduceSeq")     # pre-condition: inside a mapLcl/mapGlb
    assert e.value.diagnostics[0].code == "lift-rule"
    with pytest.raises(McplError):
        apply_rule(p, "no-such-rule")


def test_lowering_preconditions():
    p = parse(FUNS + "s = fun(x: float[64]) => map(absval) $ x")
    names = {rw.rule for rw in rewrites(p)}
    assert "map-to-mapGlb" in names and "map-to-mapWrg" in names
    assert "map-to-mapLcl" not in names and "map-to-mapLane" not in names
    q = parse(FUNS + "s = fun(x: float[64]) => join o mapWrg(map(absval)) o split(8) $ x")
    names = {rw.rule for rw in rewrites(q)}
    assert "map-to-mapLcl" in names and "map-to-mapGlb" not in names
