"""The two-dimensional lowering: ``map-map-to-mapGlb2d`` turns a map whose function
computes with one inner map (only layout patterns between them) into mapGlb(1) around
mapGlb(0), one work-item per element of the 2-D result, and the direct lowering (the
exploration's first seed) prefers it."""


import numpy as np
import pytest
from conftest import convolution_reference, derived, program

from mcl.lift import explore as E
from mcl.lift.codegen import Options, generate
from mcl.lift.interp import random_inputs, run
from mcl.lift.ir import Prim, bind_sizes, walk
from mcl.lift.parser import parse
from mcl.lift.printer import key, show
from mcl.lift.rules import apply_rule, nesting_problem, rewrites
from mcl.lift.typecheck import check_program

RULE = "map-map-to-mapGlb2d"


def glb_dims(prog) -> list[tuple[int, list[int]]]:
    """(dim, dims of the mapGlbs inside it) of every mapGlb, outermost first."""
    out = []
    for _, n in walk(prog.body.body):
        if isinstance(n, Prim) and n.name == "mapGlb":
            inner = [m.dim for _, m in walk(n.args[0])
                     if isinstance(m, Prim) and m.name == "mapGlb"]
            out.append((n.dim, inner))
    return out


# ----------------------------------------------------------------------------- the rule

def test_rule_lowers_both_maps_of_mm():
    p = bind_sizes(program("mm"), {"M": 8, "N": 12, "K": 4})
    q = apply_rule(p, RULE)
    check_program(q)
    assert glb_dims(q) == [(1, [0]), (0, [])]
    assert show(q.body.body).startswith("mapGlb(1, fun(rowA) => join o mapGlb(fun(colB) =>")
    low = E.direct_lowering(q)
    assert low is not None and E.is_lowered(low) and nesting_problem(low.body.body) is None
    xs = random_inputs(p, {"M": 8, "N": 12, "K": 4})
    np.testing.assert_allclose(run(low, *xs), run(p, *xs), rtol=1e-5)


def test_rule_takes_layout_patterns_between_the_maps():
    p = derived("convolution", {"h": 8, "w": 12, "fh": 3, "fw": 3})
    (rw,) = [r for r in rewrites(p) if r.rule == RULE]
    text = show(rw.result.body.body)
    assert text.startswith("mapGlb(1, join o mapGlb(fun(input_j) =>")
    assert text.endswith("o transpose o map(slide(3, 1))) o slide(3, 1) $ input")
    check_program(rw.result)


@pytest.mark.parametrize("name", ["gemv", "stencil", "sum", "dot", "asum", "scal"])
def test_rule_declines_without_a_nested_map(name):
    assert not [r for r in rewrites(program(name)) if r.rule == RULE]


def test_rule_declines_when_the_inner_map_reads_computed_data():
    # gesummv: the inner map (h over the rows' two results) reads two reductions,
    # which every work-item of dimension 0 would compute again
    p = derived("gesummv", {"n": 64})
    assert not [r for r in rewrites(p) if r.rule == RULE]
    q = parse("userfun f(x: float): float = x\nuserfun add(x: float, y: float): float = x + y\n"
              "s = fun(x: float[8][16]) => map(fun(r) => map(f) o reduce(add, 0.0f) $ r) $ x")
    assert not [r for r in rewrites(q) if r.rule == RULE]


def test_rule_needs_the_outermost_map():
    q = parse("userfun f(x: float): float = x\n"
              "s = fun(x: float[4][8][16]) => map(map(map(f))) $ x")
    rws = [r for r in rewrites(q) if r.rule == RULE]
    assert [r.path for r in rws] == [(0,)]
    assert show(rws[0].result.body.body) == "mapGlb(1, mapGlb(map(f))) $ x"


@pytest.mark.parametrize("body, ok", [
    ("mapGlb(1, join o mapGlb(mapSeq(f)) o split(4)) $ x", True),
    ("mapGlb(1, fun(r) => mapGlb(f) $ r) $ x", True),
    ("mapGlb(1, fun(r) => mapGlb(f) o mapSeq(f) $ r) $ x", False),
    ("mapGlb(1, mapSeq(f) o mapGlb(f)) $ x", False),
    ("mapGlb(1, fun(r) => mapGlb(f) $ reduceSeq(add, 0.0f) $ r) $ x", False),
])
def test_nesting_problem_allows_only_layout_between_two_mapglbs(body, ok):
    q = parse("userfun f(x: float): float = x\nuserfun add(x: float, y: float): float = x + y\n"
              f"s = fun(x: float[8][16]) => {body}")
    assert (nesting_problem(q.body.body) is None) == ok


# ----------------------------------------------------------------------------- direct lowering

def _without_rule(monkeypatch):
    monkeypatch.setattr(E, "DIRECT_RULES", tuple(r for r in E.DIRECT_RULES if r != RULE))


@pytest.mark.parametrize("kernel, expected", [
    ("matmul", "mapGlb(1, fun(a_i) => join o mapGlb(fun(b_j) => reduceSeq("),
    ("convolution", "mapGlb(1, join o mapGlb(fun(input_j) => mapSeq(output_f) o reduceSeq("),
])
def test_direct_lowering_of_2d_kernels_is_one_work_item_per_element(kernel, expected):
    p = derived(kernel)
    low = E.direct_lowering(p)
    assert show(low.body.body).startswith(expected)
    assert glb_dims(low) == [(1, [0]), (0, [])]
    assert E.is_lowered(low) and nesting_problem(low.body.body, partial=False) is None
    seeds = E.macro_seeds(p)
    assert key(seeds[0].body) == key(low.body)


@pytest.mark.parametrize("kernel", ["vector_add", "gesummv", "reduction"])
def test_seeds_of_1d_kernels_are_unchanged(kernel, monkeypatch):
    p = derived(kernel)
    seeds = E.macro_seeds(p)
    assert seeds and all(d == 0 for s in seeds for d, _ in glb_dims(s))
    _without_rule(monkeypatch)
    assert [key(s.body) for s in seeds] == [key(s.body) for s in E.macro_seeds(p)]


# ----------------------------------------------------------------------------- on the device

@pytest.mark.parametrize("kernel, sizes", [
    ("convolution", {"h": 64, "w": 64, "fh": 3, "fw": 3}),
    ("convolution", {"h": 40, "w": 72, "fh": 5, "fw": 3}),
    ("convolution", {"h": 32, "w": 48, "fh": 9, "fw": 9}),
    ("matmul", {"n": 64, "m": 48, "p": 32}),
    ("matmul", {"n": 48, "m": 32, "p": 64}),
])
@pytest.mark.parametrize("local_size", [None, 16])
def test_2d_kernels_run_and_match(rt, kernel, sizes, local_size):
    from mcl.lift.execute import run_generated
    p = derived(kernel, sizes)
    low = E.direct_lowering(p)
    assert glb_dims(low)[0] == (1, [0])
    gen = generate(low, sizes, Options(local_size=local_size))
    (k,) = gen.kernels
    assert len(k.global_size) == 2 and k.local_size[1] == 1
    xs = random_inputs(p, sizes, np.random.default_rng(1), low=0.0, high=1.0)
    got = run_generated(gen, rt, xs).astype(np.float64)
    np.testing.assert_allclose(got, np.asarray(run(p, *xs)).reshape(got.shape), rtol=1e-4,
                               atol=1e-5)
    if kernel == "matmul":
        want = xs[0].astype(np.float64) @ xs[1].astype(np.float64)
    else:
        want = convolution_reference(xs[0], xs[1], **sizes)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
