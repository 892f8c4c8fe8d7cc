"""``stencil-2d-register-blocking``: the convolution Lift derives from MCPL with its filter
in constant memory (``toConstant``), c x r outputs per work-item accumulated in private
memory, the input rows loaded into private memory as vectors, and -- where the blocks do
not divide the output -- the input padded and the result cropped (``pad`` with a negative
amount, whose stores past the end the code generator guards)."""

import re

import numpy as np
import pytest
from conftest import EXAMPLES, convolution_reference, derived

from mcl.diagnostics import McplError
from mcl.lift import explore as E
from mcl.lift import stencil_blocking as S
from mcl.lift.codegen import generate
from mcl.lift.interp import random_inputs, run
from mcl.lift.ir import Prim, walk
from mcl.lift.parser import parse
from mcl.lift.rules import RULES, Limits, apply_rule, nesting_problem, rewrites
from mcl.lift.typecheck import LiftTypeError, check_program

RULE = "stencil-2d-register-blocking"
LOCAL = "stencil-2d-register-blocking-local"
FUNS = ("userfun add(x: float, y: float): float = x + y\n"
        "userfun mult(x: float, y: float): float = x * y\n")


def blockings(p, limits=None, rule=RULE) -> list:
    return rewrites(p, [RULES[rule]], limits)


def names(prog) -> list[str]:
    return [n.name for _, n in walk(prog.body.body) if isinstance(n, Prim)]


def inputs(p, sizes, seed=1):
    return random_inputs(p, sizes, np.random.default_rng(seed), low=0.0, high=1.0)


# ----------------------------------------------------------------------------- crop / pad

def test_a_negative_pad_crops():
    p = parse("c = fun(x: float[7][5]) => map(pad(0, -2)) o pad(1, -3) $ x")
    (x,) = random_inputs(p, {}, np.random.default_rng(0))
    got = np.asarray(run(p, x))
    want = np.concatenate([x[:1], x[:4]])[:, :3]
    np.testing.assert_array_equal(got, want)
    with pytest.raises(LiftTypeError, match="drops every element"):
        check_program(parse("c = fun(x: float[4]) => pad(0, -4) $ x"))


def test_cropped_stores_are_guarded(rt):
    from mcl.lift.execute import run_generated
    p = parse(FUNS + "c = fun(x: float[10]) => pad(0, -3) o join o mapGlb(mapSeq(fun(v) => "
                     "add(v, v))) o split(4) o pad(0, 2) $ x")
    gen = generate(p, {})
    assert re.search(r"if \(4\*g_\d+ \+ 3 < 9\)", gen.source)
    (x,) = random_inputs(p, {}, np.random.default_rng(0))
    np.testing.assert_allclose(run_generated(gen, rt, [x]), 2 * x[:9])


# ----------------------------------------------------------------------------- constant memory

def _weighted(n: int, m: int):
    """x (n floats) times the weights f (m floats, m dividing n), f through toConstant."""
    return parse(FUNS + f"k = fun(x: float[{n}], f: float[{m}]) => join o mapGlb(fun(xs) => "
                        "mapSeq(fun(t) => mult(t._0, t._1)) $ zip(xs, toConstant(id) $ f)) "
                        f"o split({m}) $ x")


def test_to_constant_passes_a_small_input_by_value(rt):
    """4 weights fit the bytes of arguments every device accepts (mcl.opencl.by_value): a
    struct of them, read as operands (``f.v[i]``), handed to the kernel packed."""
    from mcl.lift.execute import run_generated
    p = _weighted(64, 4)
    gen = generate(p, {})
    assert "typedef struct { float v[4]; } lift_value_f;" in gen.source
    assert "const lift_value_f f" in gen.source and "constant float*" not in gen.source
    assert re.search(r"f\.v\[\d+\]", gen.source)
    assert gen.plan()["buffers"]["f"]["by_value"] is True
    x, f = random_inputs(p, {}, np.random.default_rng(0))
    np.testing.assert_allclose(run_generated(gen, rt, [x, f]), x * np.tile(f, 16), rtol=1e-6)
    np.testing.assert_allclose(run(p, x, f), x * np.tile(f, 16), rtol=1e-6)
    with pytest.raises(McplError, match="input 'f' should be an array of shape \\(4,\\) "
                                        "\\(4 float32 elements\\), given an array of "
                                        "shape \\(5,\\)"):
        run_generated(gen, rt, [x, np.ones(5, np.float32)])


def test_to_constant_passes_a_large_input_as_a_constant_pointer(rt):
    """512 weights (2 kB) exceed the 1024 bytes of arguments: a ``constant`` pointer."""
    from mcl.lift.execute import run_generated
    p = _weighted(1024, 512)
    gen = generate(p, {})
    assert "constant float* restrict f" in gen.source and "lift_value_f" not in gen.source
    assert "by_value" not in gen.plan()["buffers"]["f"]
    x, f = random_inputs(p, {}, np.random.default_rng(0))
    np.testing.assert_allclose(run_generated(gen, rt, [x, f]), x * np.tile(f, 2), rtol=1e-6)


def test_to_constant_of_a_computed_array_is_refused():
    p = parse(FUNS + "k = fun(x: float[64]) => join o mapGlb(fun(xs) => mapSeq(id) o "
                     "toConstant(id) o toPrivate(mapSeq(fun(v) => add(v, v))) $ xs) o split(4) $ x")
    with pytest.raises(McplError, match="toConstant applies to an input"):
        generate(p, {})


# ----------------------------------------------------------------------------- the rule

def test_rule_is_an_exact_macro_and_recognises_the_window():
    assert all(RULES[r].kind == "macro" and RULES[r].exact for r in (RULE, LOCAL))
    p = derived("convolution", {"h": 16, "w": 32, "fh": 3, "fw": 3})
    maps = [n.args[0] for _, n in walk(p.body.body) if isinstance(n, Prim) and n.name == "map"]
    found = [S.window_parts(g) for g in maps if S.window_parts(g) is not None]
    assert len(found) == 1
    f, z, m, h, weights, first = found[0]
    assert weights.name == "filter" and first and z.text == "0.0f" and h is not None


@pytest.mark.parametrize("src", [
    # no weights: a box sum
    "s = fun(x: float[10][34]) => "
    "map(join o map(reduce(add, 0.0f) o join) o transpose o map(slide(3, 1))) o slide(3, 1) $ x",
    # windows of step 2
    "s = fun(x: float[10][34], f: float[3][3]) => map(join o map(fun(win) => reduce(add, 0.0f) "
    "o join o map(fun(r) => map(fun(t) => mult(t._0, t._1)) $ zip(r._0, r._1)) $ zip(f, win)) "
    "o transpose o map(slide(3, 2))) o slide(3, 1) $ x",
])
def test_rule_declines_other_shapes(src):
    assert not blockings(parse(FUNS + src)) and not blockings(parse(FUNS + src), rule=LOCAL)


def test_choices_fit_and_the_default_comes_first():
    got = S.blocking_choices(4096, 4096, 9, 9, Limits())
    assert got[0] == (4, 4, 4, 32, 4) and len(got) == Limits().max_choices
    assert len({(c, r) for c, r, *_ in got}) >= 8          # the blocks vary first
    for c, r, l1, l0, w in got:
        assert l1 * l0 <= 1024 and S._private_bytes(c, r, 9, 9) <= S.PRIVATE_BYTES
        assert r % w == 0 and (r + 8) % w == 0
    small = Limits(max_work_group=64, vector_widths=(2,))
    for c, r, l1, l0, w in S.blocking_choices(37, 100, 9, 9, small):
        assert l1 * l0 <= 64 and w in (1, 2)
        assert -(-37 // (l1 * c)) * l1 * c * -(-100 // (l0 * r)) * l0 * r <= 1.25 * 37 * 100


@pytest.mark.parametrize("rule", [RULE, LOCAL])
@pytest.mark.parametrize("sizes", [{"h": 16, "w": 32, "fh": 3, "fw": 3},
                                   {"h": 37, "w": 100, "fh": 9, "fw": 9},
                                   {"h": 130, "w": 67, "fh": 7, "fw": 3}])
def test_every_choice_is_lowered_and_equal(sizes, rule):
    p = derived("convolution", sizes)
    rws = blockings(p, rule=rule)
    assert rws and all(rw.path == () for rw in rws)
    xs = inputs(p, sizes, 2)
    want = convolution_reference(xs[0], xs[1], **sizes)
    for rw in rws:
        q = rw.result
        check_program(q)
        assert E.is_lowered(q) and nesting_problem(q.body.body, partial=False) is None
        assert "toConstant" in names(q) and "toPrivate" in names(q)
        assert ("toLocal" in names(q)) == (rule == LOCAL)
        np.testing.assert_allclose(np.asarray(run(q, *xs)).reshape(want.shape), want,
                                   rtol=1e-5, atol=1e-6)


def test_the_kernel_at_the_paper_size():
    sizes = {"h": 4096, "w": 4096, "fh": 9, "fw": 9}
    q = apply_rule(derived("convolution", sizes), RULE)
    gen = generate(q, sizes)
    (k,) = gen.kernels
    assert k.local_size == (32, 4) and k.global_size == (1024, 1024) and k.local_bytes == 0
    src = k.source
    # the 81 weights passed by value: each at a fixed index of the struct, an operand
    # of the multiply-add (no load), 81 per output
    assert "const lift_value_filter filter" in src
    assert len(re.findall(r"filter\.v\[\d+\]", src)) == 81 * 16
    assert "filter" not in re.sub(r"filter\.v\[\d+\]", "", src).replace(
        "const lift_value_filter filter", "")
    # the input rows as aligned float4 loads (rows of 4104 floats are whole vectors),
    # 4 rows x 3 vectors per filter row
    assert src.count("((global float4*)input)[") == 9 * 12
    assert "vload" not in src and "vstore" not in src and "if (" not in src
    # the 4 x 4 results written as 4 aligned float4 stores
    assert len(re.findall(r"output_f\(acc_\d+\[\d+\]\);", src)) == 16
    assert len(re.findall(r"\(\(global float4\*\)out\)\[[^]]*\] = \(float4\)", src)) == 4


def test_the_local_kernel_copies_the_tile_once():
    sizes = {"h": 4096, "w": 4096, "fh": 9, "fw": 9}
    q = apply_rule(derived("convolution", sizes), LOCAL)
    (k,) = generate(q, sizes).kernels
    assert k.local_size == (32, 4) and k.local_bytes == (16 + 8) * (128 + 8) * 4
    assert k.source.count("barrier(") == 1
    compute = k.source.split("barrier(")[1]
    assert "input[" not in compute and compute.count("((local float4*)l_") == 9 * 12


def test_guards_where_blocks_do_not_divide():
    sizes = {"h": 37, "w": 100, "fh": 9, "fw": 9}
    q = apply_rule(derived("convolution", sizes), RULE)
    src = generate(q, sizes).source
    assert "clamp(" in src and re.search(r"if \([^)]*< 37\)", src) and "< 100" in src


def test_macro_seeds_include_the_blocking():
    p = derived("convolution", {"h": 32, "w": 64, "fh": 3, "fw": 3})
    blocked = [s for s in E.macro_seeds(p) if "toConstant" in names(s)]
    assert len(blocked) == 2 and all(E.is_lowered(b) for b in blocked)
    assert sum("toLocal" in names(b) for b in blocked) == 1


# ----------------------------------------------------------------------------- on PoCL

@pytest.mark.parametrize("sizes, choices", [({"h": 64, "w": 128, "fh": 9, "fw": 9}, (0, 1, 4)),
                                            ({"h": 37, "w": 100, "fh": 9, "fw": 9}, (0, 3)),
                                            ({"h": 100, "w": 37, "fh": 3, "fw": 5}, (0,)),
                                            ({"h": 130, "w": 67, "fh": 7, "fw": 3}, (0, 2))])
def test_blocked_convolution_runs_and_matches(rt, sizes, choices):
    from mcl.lift.execute import run_generated
    p = derived("convolution", sizes)
    xs = inputs(p, sizes)
    want = convolution_reference(xs[0], xs[1], **sizes)
    for rule in (RULE, LOCAL):
        rws = blockings(p, rule=rule)
        for i in choices:
            gen = generate(rws[i].result, sizes)
            got = run_generated(gen, rt, xs).astype(np.float64)
            np.testing.assert_allclose(got.reshape(want.shape), want, rtol=1e-4, atol=1e-5,
                                       err_msg=f"{rule} choice {i}")


def test_exploration_finds_and_verifies_it(rt, tmp_path):
    """The search (macro seeds first, then MCTS) evaluates the blocked kernel on the
    device, checked against reference.py, and reports it as correct."""
    from mcl.lift.compare import lift_best
    from mcl.lift.from_mcpl import derive, reference_module
    path = EXAMPLES / "convolution" / "perfect.mcpl"
    sizes = {"h": 37, "w": 100, "fh": 9, "fw": 9}
    d = derive(path, None, constants=sizes)
    results = tmp_path / "explore.json"
    row, expr = lift_best(d, sizes, reference_module(path), budget=4, strategy="mcts",
                          device=None, seed=0, depth=2, repeat=1, results=str(results))
    import json
    evals = json.loads(results.read_text())["evaluations"].values()
    blocked = [e for e in evals if "toConstant" in e["expression"]]
    assert blocked and all(e["status"] == "ok" for e in blocked)
    assert row.status == "ok" and expr
