"""``reduceSeq-join-mapSeq-fusion``: a sequential reduction of a joined map of maps,
``reduceSeq(f, z) o join o mapSeq(mapSeq(g) o L)``, becomes
``reduceSeq(fun(acc, y) => f(acc, g(y)), z) o join o map(L)``: the fold reads g's results
from a register instead of a temporary array of every row's results (a convolution's
fh*fw products per output element, in global memory). Exact for any f: the left fold
visits the elements in the same order."""


import numpy as np
import pytest
from conftest import EXAMPLES, convolution_reference, derived

from mcl.lift import explore as E
from mcl.lift.codegen import generate
from mcl.lift.compare import default_sizes
from mcl.lift.interp import random_inputs, run
from mcl.lift.ir import Prim, walk
from mcl.lift.parser import parse
from mcl.lift.printer import key, show
from mcl.lift.rules import RULES, apply_rule, rewrites
from mcl.lift.typecheck import check_program

RULE = "reduceSeq-join-mapSeq-fusion"

FUNS = ("userfun add(x: float, y: float): float = x + y\n"
        "userfun mult(x: float, y: float): float = x * y\n"
        "userfun sq(x: float): float = x * x\n"
        # not associative: a fold that changed the order would change the result
        "userfun decay(acc: float, y: float): float = acc * 0.5f + y\n")

#: hand-written reductions of a joined map of maps (compose and call forms, with a
#: view between the row and its map, with a non-associative fold)
HAND = [
    "s = fun(x: float[32][4][6]) => mapGlb(fun(b) => "
    "reduceSeq(add, 0.0f) o join o mapSeq(mapSeq(sq)) $ b) $ x",
    "s = fun(x: float[32][4][6]) => mapGlb(fun(b) => "
    "reduceSeq(decay, 0.0f) $ join $ mapSeq(mapSeq(sq)) $ b) $ x",
    "s = fun(x: float[32][4][6]) => mapGlb(fun(b) => "
    "reduceSeq(decay, 1.0f) o join o mapSeq(mapSeq(sq) o join o transpose o split(2)) $ b) $ x",
    "s = fun(x: float[32][3][5], y: float[32][3][5]) => mapGlb(fun(p) => "
    "reduceSeq(decay, 0.0f) o join o mapSeq(fun(r) => mapSeq(fun(t) => mult(t._0, t._1)) "
    "$ zip(r._0, r._1)) $ zip(p._0, p._1)) $ zip(x, y)",
]


def temporaries(gen) -> list[str]:
    return [b.name for b in gen.buffers.values() if b.role == "temp"]


# ----------------------------------------------------------------------------- the rule

def test_rule_is_a_fusion():
    assert RULES[RULE].kind == "fusion" and RULES[RULE].exact
    assert RULE in E.DIRECT_RULES and RULE in E.FINISHING_RULES and RULE in E.FUSION_RULES


@pytest.mark.parametrize("src", HAND)
def test_rule_applies_and_preserves_the_value(src):
    p = parse(FUNS + src)
    (rw,) = [r for r in rewrites(p) if r.rule == RULE]
    q = rw.result
    check_program(q)
    text = show(q.body.body)
    assert "join o mapSeq" not in text and "$ join $ mapSeq" not in text
    assert sum(1 for _, n in walk(q.body.body)
               if isinstance(n, Prim) and n.name == "mapSeq") == 0
    rng = np.random.default_rng(3)
    for _ in range(3):
        xs = random_inputs(p, {}, rng)
        np.testing.assert_allclose(run(q, *xs), run(p, *xs), rtol=1e-6)


def test_rule_gives_the_fold_of_the_rows_maps():
    p = parse(FUNS + HAND[0])
    q = apply_rule(p, RULE)
    assert show(q.body.body) == ("mapGlb(reduceSeq(fun(acc, y) => add(acc, sq(y)), 0.0f) "
                                 "o join) $ x")


@pytest.mark.parametrize("body", [
    # the rows are reduced, not mapped: nothing to fuse
    "reduceSeq(add, 0.0f) o join o mapSeq(reduceSeq(add, 0.0f)) $ b",
    # the rows' map is followed by computation, not only a view
    "reduceSeq(add, 0.0f) o join o mapSeq(mapSeq(sq) o mapSeq(sq)) $ b",
    # no join: the other fusion's business
    "reduceSeq(add, 0.0f) o mapSeq(sq) o join $ b",
])
def test_rule_declines(body):
    p = parse(FUNS + f"s = fun(x: float[32][4][6]) => mapGlb(fun(b) => {body}) $ x")
    assert not [r for r in rewrites(p) if r.rule == RULE]


# ----------------------------------------------------------------------------- convolution

def test_direct_convolution_accumulates_in_a_register():
    p = derived("convolution")
    low = E.direct_lowering(p)
    text = show(low.body.body)
    assert text.startswith("mapGlb(1, join o mapGlb(fun(input_j) => mapSeq(output_f) o "
                           "reduceSeq(fun(acc, y) => add(acc, ")
    assert "o join o map(fun(t_y) => zip(t_y._0, t_y._1)) $ zip(filter, input_j)" in text
    assert "join o mapSeq" not in text
    assert E.is_lowered(low)
    assert key(E.macro_seeds(p)[0].body) == key(low.body)
    gen = generate(low, default_sizes(EXAMPLES / "convolution" / "perfect.mcpl"))
    assert temporaries(gen) == []
    assert "global float* g_" not in gen.source


@pytest.mark.parametrize("sizes", [{"h": 16, "w": 16, "fh": 3, "fw": 3},
                                   {"h": 8, "w": 12, "fh": 5, "fw": 3}])
def test_fused_convolution_matches_the_interpreter(sizes):
    p = derived("convolution", sizes)
    low = E.direct_lowering(p)
    xs = random_inputs(p, sizes, np.random.default_rng(5))
    np.testing.assert_allclose(run(low, *xs), run(p, *xs), rtol=1e-5, atol=1e-6)


# ----------------------------------------------------------------------------- on the device

@pytest.mark.parametrize("sizes", [{"h": 64, "w": 64, "fh": 3, "fw": 3},
                                   {"h": 40, "w": 72, "fh": 5, "fw": 3},
                                   {"h": 32, "w": 48, "fh": 9, "fw": 9}])
def test_fused_convolution_runs_on_the_device(rt, sizes):
    from mcl.lift.execute import run_generated
    p = derived("convolution", sizes)
    low = E.direct_lowering(p)
    gen = generate(low, sizes)
    assert temporaries(gen) == []
    xs = random_inputs(p, sizes, np.random.default_rng(1), low=0.0, high=1.0)
    got = run_generated(gen, rt, xs).astype(np.float64)
    np.testing.assert_allclose(got, np.asarray(run(p, *xs)).reshape(got.shape), rtol=1e-4,
                               atol=1e-5)
    np.testing.assert_allclose(got, convolution_reference(xs[0], xs[1], **sizes), rtol=1e-4,
                               atol=1e-5)


@pytest.mark.parametrize("src", HAND)
def test_hand_written_fusion_runs_on_the_device(rt, src):
    from mcl.lift.execute import run_generated
    p = parse(FUNS + src)
    q = apply_rule(p, RULE)
    before, after = generate(p, {}), generate(q, {})
    assert temporaries(before) and not temporaries(after)
    xs = random_inputs(p, {}, np.random.default_rng(2), low=0.0, high=1.0)
    got = run_generated(after, rt, xs).astype(np.float64)
    want = np.asarray(run(p, *xs), dtype=np.float64).reshape(got.shape)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(run_generated(before, rt, xs).astype(np.float64), want,
                               rtol=1e-5, atol=1e-6)
