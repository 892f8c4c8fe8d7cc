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
from mcl.lift.macros_mm import mm_double_buffered_choices
from mcl.lift.parser import parse
from mcl.lift.printer import key, show
from mcl.lift.rules import Limits, apply_rule, rewrites

RULE = "mm-tiling-double-buffered"
H100 = Limits(max_work_group=1024, local_memory=48 * 1024)
ROOT = Path(__file__).resolve().parents[2]


def _mm(sizes):
    return bind_sizes(program("mm"), sizes)


def test_first_choice_is_the_shape_of_the_best_mcpl_matmul():
    assert mm_double_buffered_choices(4096, 4096, 4096, H100)[0] == (128, 128, 16, 8, 8, 4)
    every = mm_double_buffered_choices(4096, 4096, 4096, Limits(max_work_group=1024,
                                                                 local_memory=48 * 1024,
                                                                 max_choices=1000))
    # larger register blocks (8 x 16: 128 accumulators) and tiles are offered too,
    # all with both buffers of both tiles in local memory
    assert (128, 256, 8, 8, 16, 4) in every and (256, 128, 16, 16, 8, 4) in every
    assert all(2 * (tm + tn) * tk * 4 <= 48 * 1024 for tm, tn, tk, *_ in every)
    assert all(tm * tn // (rm * rn) <= 256 and rm * rn <= 128
               for tm, tn, _, rm, rn, _ in every)


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


def test_kernel_structure_at_4096():
    sizes = {"M": 4096, "N": 4096, "K": 4096}
    q = apply_rule(_mm(sizes), RULE, limits=H100)
    g = generate(q, sizes)
    src, k = g.source, g.kernels[0]
    assert k.local_size == (16, 16) and k.global_size == (512, 512)
    # two buffers of each 128 x 16 tile, aligned for float4
    decls = re.findall(r"local float (l_\d+)\[4096\] __attribute__\(\(aligned\(16\)\)\);", src)
    assert len(decls) == 2 and k.local_bytes == 2 * (128 + 128) * 16 * 4
    loop = src[src.index("for (int i_"):src.index("((global float4*)out)")]
    assert re.search(r"for \(int i_\d+ = 0; i_\d+ < 256; i_\d+\+\+\)", src)
    # one barrier per k-step, after the next tiles are written into the other buffers
    assert loop.count("barrier(CLK_LOCAL_MEM_FENCE)") == 1
    loads = loop.index("= ((global float4*)A)[")
    first_fma = loop.index("add(acc_")
    last_fma = loop.rindex("add(acc_")
    stores = loop.index("= ahead_", last_fma)
    assert loads < first_fma < last_fma < stores < loop.index("barrier(")
    # two float4 of each tile per work-item and k-step, read one step ahead
    assert loop.count("= ((global float4*)A)[") == 2 and loop.count("= ((global float4*)B)[") == 2
    # A's lanes stored transposed at (4*q + c)*128 + t % 128 for work-item t (linear id
    # 16*l1 + l0): a warp's 32 work-items write 32 adjacent words (no bank conflicts)
    assert re.search(r"\{ float4 v_ = ahead_\d+\[0\]; l_\d+\[\(\(16\*(l_\d+) \+ (l_\d+)\) "
                     r"% 128\) \+ 512\*\(\(16\*\1 \+ \2\) / 128\) "
                     r"\+ 2048\*\(\(i_\d+ \+ 1\) % 2\)\] = v_\.s0;", loop)
    # the k-step reads buffer i % 2 and fills buffer (i + 1) % 2
    assert re.search(r"\(\(local float4\*\)l_\d+\)\[512\*\(i_\d+ % 2\) \+ l_\d+", loop)
    assert re.search(r"512\*\(\(i_\d+ \+ 1\) % 2\)", loop)
    # the 16 k of a tile unrolled: per k two float4 of A and two of B, 64 multiply-adds
    assert len(re.findall(r"p_\d+\[[01]\] = \(\(local float4\*\)l_\d+\)\[", loop)) == 16 * 4
    assert loop.count("add(acc_") == 16 * 64 and "for (int" not in loop[5:]
    assert src.count("((global float4*)out)[") == 16


@pytest.mark.parametrize("sizes,choice", [
    ({"M": 256, "N": 128, "K": 64}, (128, 128, 16, 8, 8, 4)),
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
    ("twice", "toLocal(h) o g"),
    ("toLocal(id) o twice", "whole work-group"),
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
