"""The double-buffered matrix-multiplication macro rule and ``prefetchLocal``: the
generated OpenCL has the shape of examples/matmul/hopper_v5.mcpl (k-tiles in two
local buffers, the next ones loaded into registers during each k-step, one barrier
per k-step, 128-bit local reads, unrolled k-steps), gives numpy's product on the
CPU device, and the rule is never offered where its tiles do not divide."""

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import program

from mcl.diagnostics import McplError
from mcl.lift import macros  # noqa: F401  (registers the macro rules)
from mcl.lift.codegen import generate
from mcl.lift.execute import run_generated
from mcl.lift.explore import Evaluation, explore
from mcl.lift.interp import random_inputs
from mcl.lift.ir import bind_sizes
from mcl.lift.macros_mm import a_layout, mm_double_buffered_choices, store_conflicts
from mcl.lift.parser import parse
from mcl.lift.printer import key, show
from mcl.lift.rules import Limits, apply_rule, rewrites

RULE = "mm-tiling-double-buffered"
H100 = Limits(max_work_group=1024, local_memory=48 * 1024)
ROOT = Path(__file__).resolve().parents[2]


def _mm(sizes):
    return bind_sizes(program("mm"), sizes)


def test_first_choice_is_the_shape_of_the_fastest_measured_sgemm():
    # vec4.cl (0.88 of cuBLAS): 128 x 128 x 8 tiles, 8 x 8 blocks, float4
    assert mm_double_buffered_choices(4096, 4096, 4096, H100)[:2] == [
        (128, 128, 8, 8, 8, 4), (128, 128, 16, 8, 8, 4)]
    every = mm_double_buffered_choices(4096, 4096, 4096, Limits(max_work_group=1024,
                                                                 local_memory=48 * 1024,
                                                                 max_choices=1000))
    # larger register blocks (8 x 16: 128 accumulators) and tiles are offered too,
    # all with both buffers of both tiles in local memory
    assert (128, 256, 8, 8, 16, 4) in every and (256, 128, 16, 16, 8, 4) in every
    assert all(2 * (tm + a_layout(tm, tk, tm * tn // (rm * rn), w)[1] + tn) * tk * 4
               <= 48 * 1024 for tm, tn, tk, rm, rn, w in every)
    assert all(tm * tn // (rm * rn) <= 256 and rm * rn <= 128
               for tm, tn, _, rm, rn, _ in every)


def test_a_layout_has_no_bank_conflicts():
    # a row per pair of work-items, rows of 128 words: two work-items per bank
    assert store_conflicts(128, 8, 256, 4, by_columns=False, pad=0) == 2
    # padded to 132 words (vec4.cl's layout), or loaded by columns: one
    assert store_conflicts(128, 8, 256, 4, by_columns=False, pad=4) == 1
    assert store_conflicts(128, 16, 256, 4, by_columns=True, pad=0) == 1
    assert a_layout(128, 8, 256, 4) == (False, 4)       # rows (whole sectors), padded
    assert a_layout(128, 16, 256, 4) == (True, 0)       # padding cannot help there
    for tm, tn, tk, rm, rn, w in mm_double_buffered_choices(
            4096, 4096, 4096, Limits(max_work_group=1024, local_memory=48 * 1024,
                                     max_choices=1000)):
        assert store_conflicts(tm, tk, tm * tn // (rm * rn), w,
                               *a_layout(tm, tk, tm * tn // (rm * rn), w)) == 1


def test_not_offered_where_no_tiling_divides():
    sizes = {"M": 100, "N": 96, "K": 40}
    assert mm_double_buffered_choices(100, 96, 40, Limits()) == []
    assert not [rw for rw in rewrites(_mm(sizes)) if rw.rule == RULE]
    with pytest.raises(McplError) as e:
        apply_rule(_mm(sizes), RULE)
    assert e.value.diagnostics[0].code == "lift-rule"
    # where smaller tiles divide, only those are offered
    assert all(96 % tm == 0 and 64 % tn == 0 and 24 % tk == 0
               for tm, tn, tk, *_ in mm_double_buffered_choices(96, 64, 24, Limits()))


def _kernel_at_4096(choice):
    sizes = {"M": 4096, "N": 4096, "K": 4096}
    offered = mm_double_buffered_choices(4096, 4096, 4096, H100)
    q = apply_rule(_mm(sizes), RULE, choice=offered.index(choice), limits=H100)
    g = generate(q, sizes)
    src = g.source
    return g, src[src.index("for (int i_"):src.index("((global float4*)out)")]


@pytest.mark.parametrize("tk", [8, 16])
def test_kernel_structure_at_4096(tk):
    g, loop = _kernel_at_4096((128, 128, tk, 8, 8, 4))
    src, k = g.source, g.kernels[0]
    assert k.local_size == (16, 16) and k.global_size == (512, 512)
    # two buffers of each 128 x tk tile (A's rows padded to 132 words for tk = 8),
    # aligned for float4
    row_a = 132 if tk == 8 else 128
    decls = re.findall(r"local float l_\d+\[(\d+)\] __attribute__\(\(aligned\(16\)\)\);", src)
    assert sorted(map(int, decls)) == sorted([2 * tk * row_a, 2 * tk * 128])
    assert k.local_bytes == 2 * (row_a + 128) * tk * 4
    assert re.search(rf"for \(int i_\d+ = 0; i_\d+ < {4096 // tk}; i_\d+\+\+\)", src)
    # one barrier per k-step, after the next tiles are written into the other buffers
    assert loop.count("barrier(CLK_LOCAL_MEM_FENCE)") == 1
    loads = loop.index("= ((global float4*)A)[")
    first_fma = loop.index("add(acc_")
    last_fma = loop.rindex("add(acc_")
    stores = loop.index("= ahead_", last_fma)
    assert loads < first_fma < last_fma < stores < loop.index("barrier(")
    # tk / 8 float4 of each tile per work-item and k-step, read one step ahead
    assert loop.count("= ((global float4*)A)[") == tk // 8
    assert loop.count("= ((global float4*)B)[") == tk // 8
    # the k-step reads buffer i % 2 and fills buffer (i + 1) % 2
    assert re.search(rf"\(\(local float4\*\)l_\d+\)\[{tk * row_a // 4}\*\(i_\d+ % 2\) \+ l_\d+",
                     loop)
    assert re.search(rf"{tk * row_a}\*\(\(i_\d+ \+ 1\) % 2\)", loop)
    # the k of a tile unrolled: per k two float4 of A and two of B, 64 multiply-adds
    assert len(re.findall(r"p_\d+\[[01]\] = \(\(local float4\*\)l_\d+\)\[", loop)) == tk * 4
    assert loop.count("add(acc_") == tk * 64 and "for (int" not in loop[5:]
    assert src.count("((global float4*)out)[") == 16


def test_a_stores_are_free_of_bank_conflicts_at_4096():
    # k-tiles of 8: work-item (l1, l0) stores lane c of its float4 (row 8*l1 + l0/2,
    # columns 4*(l0 % 2) + c) at (4*(l0 % 2) + c)*132 + 8*l1 + l0/2
    _, loop = _kernel_at_4096((128, 128, 8, 8, 8, 4))
    assert re.search(r"\{ float4 v_ = ahead_\d+; l_\d+\[1056\*\(\(i_\d+ \+ 1\) % 2\) \+ "
                     r"528\*\((l_\d+) % 2\) \+ \(\1 / 2\) \+ 8\*l_\d+\] = v_\.s0; "
                     r"l_\d+\[[^]]+ \+ 132\] = v_\.s1;", loop)
    # k-tiles of 16: by columns, lane c of work-item t (linear id 16*l1 + l0) at
    # (4*q + c)*128 + t % 128: a warp's 32 work-items write 32 adjacent words
    _, loop = _kernel_at_4096((128, 128, 16, 8, 8, 4))
    assert re.search(r"\{ float4 v_ = ahead_\d+\[0\]; l_\d+\[\(\(16\*(l_\d+) \+ (l_\d+)\) "
                     r"% 128\) \+ 512\*\(\(16\*\1 \+ \2\) / 128\) "
                     r"\+ 2048\*\(\(i_\d+ \+ 1\) % 2\)\] = v_\.s0;", loop)


@pytest.mark.parametrize("sizes,choice", [
    ({"M": 256, "N": 128, "K": 64}, (128, 128, 8, 8, 8, 4)),
    ({"M": 128, "N": 256, "K": 64}, (128, 128, 16, 8, 8, 4)),
    ({"M": 256, "N": 256, "K": 32}, (128, 128, 8, 8, 8, 2)),
    ({"M": 128, "N": 256, "K": 48}, (64, 256, 16, 8, 8, 4)),
    ({"M": 256, "N": 128, "K": 32}, (256, 64, 16, 16, 4, 4)),
    ({"M": 96, "N": 64, "K": 24}, (32, 64, 8, 8, 4, 4)),
    ({"M": 128, "N": 256, "K": 16}, (128, 256, 16, 8, 16, 4)),
])
def test_runs_on_the_device(rt, sizes, choice):
    m, n, k = sizes["M"], sizes["N"], sizes["K"]
    every = Limits(max_choices=1000)
    offered = mm_double_buffered_choices(m, n, k, every)
    assert choice in offered
    p = _mm(sizes)
    q = apply_rule(p, RULE, choice=offered.index(choice), limits=every)
    xs = random_inputs(p, sizes)
    got = run_generated(generate(q, sizes), rt, xs)
    np.testing.assert_allclose(got, xs[0].astype(np.float64) @ xs[1], rtol=1e-4, atol=1e-4)


def test_exploration_finds_and_verifies_it(rt, tmp_path):
    # the macro seeds of an exploration include the rule's first choice; evaluated
    # on the CPU device it is verified against the interpreter
    sizes = {"M": 128, "N": 128, "K": 32}
    seed = apply_rule(_mm(sizes), RULE)
    res = explore(program("mm"), sizes, "random", budget=1, seeds=(seed,), progress=False,
                  results_path=tmp_path / "r.json")
    ev = res.evaluations[key(seed.body)]
    assert ev["status"] == "ok", ev["message"]
    assert "prefetchLocal" in ev["expression"]


def test_seeded_exploration_measures_it_first(tmp_path):
    sizes = {"M": 256, "N": 256, "K": 64}
    seed = apply_rule(_mm(sizes), RULE)
    calls = []

    def ev(prog, ls):
        calls.append(key(prog.body))
        return Evaluation(key(prog.body), show(prog.body.body), "ok", 1e-3 * len(calls), ls)
    explore(program("mm"), sizes, "random", budget=2, evaluator=ev, progress=False,
            limits=Limits(), seeds=(seed,), results_path=tmp_path / "r.json")
    assert calls[0] == key(seed.body)


FUNS = ("userfun add(x: float, y: float): float = x + y\n"
        "userfun twice(x: float): float = x * 2.0f\n")


@pytest.mark.parametrize("f,words", [
    ("twice, 0", "toLocal(h) o g"),
    ("toLocal(id) o twice, 0", "whole work-group"),
    ("toLocal(id) o twice, 4", "pads rows"),
])
def test_prefetch_local_misuse_is_a_clear_error(f, words):
    p = parse(FUNS + "s = fun(x: float[8][64]) => join o mapGlb(fun(row) => "
                     f"reduceSeq(add, 0.0f) o prefetchLocal({f}) $ row) $ x")
    with pytest.raises(McplError) as e:
        generate(p, {})
    assert e.value.diagnostics[0].code == "lift-codegen" and words in \
        e.value.diagnostics[0].message


def test_benchmark_exits_2_without_an_nvidia_gpu(tmp_path):
    from mcl.opencl.device import all_devices
    if any("nvidia" in d.platform.name.lower() for d in all_devices()):
        pytest.skip("an NVIDIA GPU is present")
    r = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "lift" / "mm_candidates.py"),
                        "--out", str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "NVIDIA" in r.stderr and "Traceback" not in r.stderr


def test_split_and_joined_indices_print_as_one_sum():
    from mcl.lift.arith import var
    a, b = var("a", 16), var("b", 16)
    t = 16 * a + b
    assert ((t % 32) + 32 * (t // 32) + 5).c() == "16*a + b + 5"
    assert (3 * (t % 32) + 96 * (t // 32)).c() == "48*a + 3*b"
    assert "%" in ((t % 32) + 64 * (t // 32)).c()            # not the same number
    # the printed C means what the index function means
    for k in (2, 4, 8, 32, 64):
        for c in (1, 2, 3):
            for extra in (0, 7 * a, 5 * b + 3):
                e = c * (t % k) + c * k * (t // k) + extra
                for x in range(16):
                    for y in range(16):
                        env = {"a": x, "b": y}
                        want = c * (16 * x + y) + eval(_c(extra), {}, env)
                        assert eval(e.c().replace(" / ", " // "), {}, env) == want


def _c(x) -> str:
    return x.c() if hasattr(x, "c") else str(x)
