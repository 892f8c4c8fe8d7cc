"""Vector accesses, writes through layout patterns, prefetching and the vectorised
matrix-multiplication macro: the generated OpenCL has the intended shape and gives
the interpreter's results on the CPU device."""

import random
import re

import numpy as np
import pytest
from conftest import PROGRAMS, program

from mcl.diagnostics import McplError
from mcl.lift import macros  # noqa: F401  (registers the macro rules)
from mcl.lift.arith import var
from mcl.lift.codegen import Options, generate
from mcl.lift.execute import run_generated
from mcl.lift.explore import Evaluation, explore
from mcl.lift.interp import random_inputs, run
from mcl.lift.ir import bind_sizes
from mcl.lift.parser import parse
from mcl.lift.printer import key, show
from mcl.lift.rules import Limits, apply_rule

FUNS = ("userfun add(x: float, y: float): float = x + y\n"
        "userfun twice(x: float): float = x * 2.0f\n")

#: the limits of the H100 the mm benchmark runs on
H100 = Limits(max_work_group=1024, local_memory=48 * 1024)


def _check_on_device(rt, prog, sizes=None, local_size=None):
    xs = random_inputs(prog, sizes or {})
    got = run_generated(generate(prog, sizes or {}, Options(local_size=local_size)), rt, xs)
    np.testing.assert_allclose(got, run(prog, *xs), rtol=1e-5, atol=1e-5)


# --------------------------------------------------------------------------- index arithmetic

def test_the_lanes_of_a_vector_stay_in_its_block():
    lane = var("l", 16)
    assert (4 * lane + 3) // 8 == (4 * lane) // 8
    assert (4 * lane + 3) % 8 == (4 * lane) % 8 + 3
    assert ((4 * lane) % 8).multiple_of(4) and not ((4 * lane) % 8).multiple_of(8)
    assert (2 * lane + 1) % 8 == ((2 * lane + 1) % 8)       # 1 < gcd(2, 8): no block of 2
    # the printed C means what the index function means
    i, j = var("i", 16), var("j", 4)
    rng = random.Random(0)
    for _ in range(200):
        e = rng.choice([1, 2, 4, 8]) * i + rng.choice([1, 2, 4, 16]) * j + rng.randrange(8)
        k = rng.choice([2, 4, 8, 16, 32])
        for a in range(16):
            for b in range(4):
                env = {"i": a, "j": b}
                x = eval(e.c(), {}, env)
                for r, want in ((e // k, x // k), (e % k, x % k)):
                    assert eval(r.c().replace(" / ", " // "), {}, env) == want, (e.c(), k)


# --------------------------------------------------------------------------- vector accesses

def test_vectors_of_adjacent_elements_are_read_and_written_at_once(rt):
    p = parse(FUNS + "s = fun(x: float[64]) => "
                     "asScalar o join o mapGlb(mapSeq(id)) o split(2) o asVector(4) $ x")
    src = generate(p, {}, Options(local_size=4)).source
    assert "((global float4*)x)[" in src and "((global float4*)out)[" in src
    _check_on_device(rt, p, local_size=4)


def test_vectors_of_scattered_elements_are_read_lane_by_lane(rt):
    # the lanes are a column of x: no vector load may read them (vload4 read a row)
    p = parse(FUNS + "s = fun(x: float[8][8]) => "
                     "asScalar o join o mapGlb(mapSeq(id)) o split(2) o asVector(4) o join o "
                     "transpose $ x")
    src = generate(p, {}, Options(local_size=4)).source
    assert "vload" not in src and "(global float4*)x" not in src and "(float4)(x[" in src
    _check_on_device(rt, p, local_size=4)


def test_local_arrays_read_as_vectors_are_aligned():
    p = bind_sizes(program("mm"), {"M": 256, "N": 256, "K": 64})
    src = generate(apply_rule(p, "mm-tiling-vectorised"), {}).source
    decls = re.findall(r"local float l_\d+\[\d+\].*;", src)
    assert len(decls) == 2 and all("__attribute__((aligned(16)))" in d for d in decls)
    scalar = apply_rule(p, "mm-tiling")                     # no vectors: no attribute
    assert "aligned" not in generate(scalar, {}).source


# --------------------------------------------------------------------------- layouts and prefetch

def test_to_local_of_a_layout_writes_through_it(rt):
    # each work-group stores its 8x8 tile transposed in local memory
    p = parse(FUNS + "s = fun(x: float[4][8][8]) => join o mapWrg(fun(t) => "
                     "join o toGlobal(mapLcl(mapSeq(id))) o "
                     "toLocal(transpose o mapLcl(mapSeq(id))) $ t) $ x")
    src = generate(p, {}).source
    assert re.search(r"local float l_\d+\[64\];", src)
    # work-item i copies row i of the tile into column i of local memory
    assert re.search(r"l_\d+\[(l_\d+) \+ 8\] = x\[8\*\1 \+ 64\*wg_1 \+ 1\];", src)
    _check_on_device(rt, p)


def test_prefetch_computes_the_next_element_during_the_reduction(rt):
    p = parse(FUNS + "s = fun(x: float[8][64]) => "
                     "join o mapGlb(fun(row) => reduceSeq(add, 0.0f) o prefetch(twice) $ row) $ x")
    src = generate(p, {}, Options(local_size=4)).source
    loop = src[src.index("for (int i_"):]
    ahead = loop.index("twice(x[")
    assert "if (i_" in loop[:ahead] and ahead < loop.index("add(acc_")
    _check_on_device(rt, p, local_size=4)
    zipped = parse(FUNS + "s = fun(x: float[8][8], y: float[8][8]) => join o mapGlb(fun(r) => "
                          "reduceSeq(fun(a, q) => add(a, add(q._0, q._1)), 0.0f) $ "
                          "zip(prefetch(twice) $ r._0, r._1)) $ zip(x, y)")
    _check_on_device(rt, zipped, local_size=4)


def test_prefetch_outside_a_reduction_is_a_clear_error():
    p = parse(FUNS + "s = fun(x: float[8][8]) => mapGlb(prefetch(twice)) $ x")
    with pytest.raises(McplError) as e:
        generate(p, {})
    assert e.value.diagnostics[0].code == "lift-not-lowered" and "reduceSeq" in \
        e.value.diagnostics[0].message


# --------------------------------------------------------------------------- the mm macro

def test_mm_tiling_vectorised_first_choice_is_the_measured_hand_written_shape():
    from mcl.lift.macros_mm import mm_vectorised_choices
    assert mm_vectorised_choices(4096, 4096, 4096, H100)[0] == (128, 128, 8, 8, 8, 4)


def test_mm_tiling_vectorised_kernel_structure():
    sizes = {"M": 4096, "N": 4096, "K": 4096}
    q = apply_rule(bind_sizes(program("mm"), sizes), "mm-tiling-vectorised", limits=H100)
    g = generate(q, sizes)
    src, k = g.source, g.kernels[0]
    assert k.local_size == (16, 16) and k.global_size == (512, 512)
    assert k.local_bytes == (128 + 128) * 8 * 4 and "float acc_3[64];" in src
    # one float4 of each tile per work-item, loaded from global memory one k-step ahead
    loop = src[src.index("for (int i_"):src.index("((global float4*)out)")]
    assert re.search(r"for \(int i_\d+ = 0; i_\d+ < 512; i_\d+\+\+\)", src)
    assert re.search(r"if \(i_\d+ \+ 1 < 512\) \{", loop)
    assert loop.count("= ((global float4*)A)[") == 1 and loop.count("= ((global float4*)B)[") == 1
    # A's tile stored transposed, lane by lane; B's tile as a float4
    assert re.search(r"\{ float4 v_ = ahead_\d+; (l_\d+\[[^]]+\] = v_\.s[0-3]; ){4}\}", loop)
    assert re.search(r"\(\(local float4\*\)l_\d+\)\[[^]]+\] = ahead_\d+;", loop)
    # per k: two float4 of A's column and two of B's row, in runs of 4 (l, l + 16)
    frags = re.findall(r"p_\d+\[[01]\] = \(\(local float4\*\)l_\d+\)\[(l_\d+)( \+ \d+)?\];", loop)
    assert len(frags) == 4 * 8
    assert loop.count("add(acc_") == 8 * 64 and "mult(p_" in loop
    # one barrier after both tile copies and one before the next k-step: no more
    assert loop.count("barrier(CLK_LOCAL_MEM_FENCE)") == 2
    # C written as 16 float4 per work-item: rows 4*l1 + i and 64 + 4*l1 + i
    assert src.count("((global float4*)out)[") == 16
    assert re.search(r"\(\(global float4\*\)out\)\[4096\*l_\d+ \+ l_\d+ \+ 131072\*wg_1 \+ "
                     r"32\*wg_2 \+ 65536\]", src)


@pytest.mark.parametrize("choice", [0, 5, 11])
def test_mm_tiling_vectorised_runs_on_the_device(rt, choice):
    sizes = {"M": 256, "N": 128, "K": 64}
    p = bind_sizes(program("mm"), sizes)
    q = apply_rule(p, "mm-tiling-vectorised", choice=choice)
    xs = random_inputs(p, sizes)
    got = run_generated(generate(q, sizes), rt, xs)
    np.testing.assert_allclose(got, xs[0].astype(np.float64) @ xs[1], rtol=1e-4, atol=1e-4)


def test_gen_applies_rules_before_generating(run_cli, tmp_path):
    code, out, err = run_cli("lift", "gen", str(PROGRAMS / "mm.lift"), "--size", "M=256",
                             "--size", "N=256", "--size", "K=64", "--rule",
                             "mm-tiling-vectorised", "-o", tmp_path)
    assert code == 0, err
    assert "((global float4*)A)" in (tmp_path / "kernel.cl").read_text()


def test_seeds_are_evaluated_first_within_the_budget(tmp_path):
    sizes = {"M": 256, "N": 256, "K": 64}
    seed = apply_rule(bind_sizes(program("mm"), sizes), "mm-tiling-vectorised")
    calls = []

    def ev(prog, ls):
        calls.append(key(prog.body))
        return Evaluation(key(prog.body), show(prog.body.body), "ok", 1e-3 * len(calls), ls)
    res = explore(program("mm"), sizes, "random", budget=3, evaluator=ev, progress=False,
                  limits=Limits(), seeds=(seed,), results_path=tmp_path / "r.json")
    assert calls[0] == key(seed.body) and len(calls) == 3
    assert res.best()["key"] == key(seed.body)
