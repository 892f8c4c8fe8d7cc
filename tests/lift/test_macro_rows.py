"""The macro rule ``map-reduce-to-workgroups`` for maps over rows whose body combines
k >= 1 row reductions with a final function (gesummv: ``map(rs => y_f(alpha, rs._0,
beta, rs._1)) $ zip(A_i . x, B_i . x)``): one work-group per row, each reduction
done by the whole group (strided first stage, tree in local memory), the final
function applied by one work-item to the k results. gemv (one reduction, no final
function) keeps its implementation."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from conftest import program

from mcl.lift import macros  # noqa: F401  (registers the macro rules)
from mcl.lift.codegen import Options, generate
from mcl.lift.from_mcpl import derive
from mcl.lift.interp import random_inputs, run
from mcl.lift.ir import bind_sizes
from mcl.lift.parser import parse
from mcl.lift.printer import show
from mcl.lift.rules import RULES, Limits, rewrites
from mcl.lift.typecheck import check_program

ROOT = Path(__file__).resolve().parents[2]
RULE = "map-reduce-to-workgroups"
CPU = Limits(warp_size=1)          # no warp-synchronous tails: they are wrong on a CPU
_UNLOWERED = re.compile(r"(?<![A-Za-z])(map|reduce)\(")

TWO = """
userfun add(x: float, y: float): float = x + y
userfun mult(x: float, y: float): float = x * y
userfun comb(a: float, s: float, b: float, t: float): float = a * s + b * t
g = fun(A: float[N][N], B: float[N][N], x: float[N], alpha: float, beta: float) =>
  join o map(fun(r) => map(fun(rs) => comb(alpha, rs._0, beta, rs._1)) $ zip(
      reduce(add, 0.0f) o map(fun(p) => mult(p._0, p._1)) $ zip(r._0, x),
      reduce(add, 0.0f) o map(fun(p) => mult(p._0, p._1)) $ zip(r._1, x))) $ zip(A, B)
"""

# k = 3 reductions of different kinds, one without a map before it
THREE = """
userfun add(x: float, y: float): float = x + y
userfun mx(x: float, y: float): float = fmax(x, y)
userfun mult(x: float, y: float): float = x * y
userfun comb(a: float, b: float, c: float): float = a + 2.0f * b - c
g = fun(A: float[M][N], x: float[N]) =>
  join o map(fun(r) => map(fun(t) => comb(t._0, t._1, t._2)) $ zip(
      reduce(add, 0.0f) o map(fun(p) => mult(p._0, p._1)) $ zip(r, x),
      reduce(mx, -1000.0f) $ r,
      reduce(add, 0.0f) $ r)) $ A
"""

# k = 1 with a final function (no zip)
SCALED = """
userfun add(x: float, y: float): float = x + y
userfun mult(x: float, y: float): float = x * y
g = fun(A: float[M][N], x: float[N], alpha: float) =>
  join o map(fun(r) => map(fun(s) => mult(alpha, s)) $
      reduce(add, 0.0f) o map(fun(p) => mult(p._0, p._1)) $ zip(r, x)) $ A
"""


def _gesummv(n: int):
    d = derive(ROOT / "examples" / "gesummv" / "perfect.mcpl", None, constants={"n": n})
    return bind_sizes(d.program, {"n": n})


def _applied(p, limits: Limits):
    rws = [rw for rw in rewrites(p, [RULES[RULE]], limits)]
    assert rws, f"{RULE} does not apply to {show(p.body.body)}"
    return rws


def _expected(xs):
    alpha, beta, a, b, x = xs
    return alpha * (a.astype(np.float64) @ x) + beta * (b.astype(np.float64) @ x)


def test_the_rule_applies_to_the_derived_gesummv_program():
    p = _gesummv(256)
    for limits in (CPU, Limits()):
        rws = _applied(p, limits)
        assert 1 < len(rws) <= 12
        xs = random_inputs(p, {}, np.random.default_rng(1))
        for rw in rws:
            check_program(rw.result)
            text = show(rw.result.body.body)
            assert text.startswith("join o mapWrg(") and not _UNLOWERED.search(text)
            # both reductions by the whole group (a strided first stage each), then one
            # work-item applies y_f to the two results and writes the output
            assert text.count("reduceSeq(fun(acc") == 2
            assert "join o toGlobal(mapLcl(mapSeq(fun(rs) => y_f(" in text
            assert text.count("toGlobal") == 1
            np.testing.assert_allclose(run(rw.result, *xs), run(p, *xs), rtol=1e-4, atol=1e-4)
    assert not any("mapWarp" in show(rw.result.body.body) for rw in _applied(p, CPU))
    assert any("mapWarp" in show(rw.result.body.body) for rw in _applied(p, Limits()))
    assert any("asVector(4)" in show(rw.result.body.body) for rw in _applied(p, CPU))


def test_choices_stay_within_the_limits():
    p = _gesummv(4096)
    assert len(_applied(p, Limits())) == 12
    for rw in _applied(p, Limits(max_work_group=128, vector_widths=(2,))):
        g = generate(rw.result, {})
        assert g.kernels[0].local_size[0] <= 128
        assert "float4" not in g.source
    # two trees of 512 floats each do not fit in 4 KB of local memory
    small = _applied(p, Limits(local_memory=4096, warp_size=1))
    assert all(generate(rw.result, {}).kernels[0].local_bytes <= 4096 for rw in small)


@pytest.mark.parametrize("src, sizes", [(TWO, {"N": 128}), (THREE, {"M": 16, "N": 256}),
                                        (SCALED, {"M": 8, "N": 64})])
def test_hand_written_programs_keep_their_results(src, sizes):
    p = bind_sizes(parse(src), sizes)
    xs = random_inputs(p, {}, np.random.default_rng(2))
    for limits in (CPU, Limits()):
        for rw in _applied(p, limits):
            check_program(rw.result)
            assert show(rw.result.body.body).startswith("join o mapWrg(")
            np.testing.assert_allclose(run(rw.result, *xs), run(p, *xs), rtol=1e-4, atol=1e-4)


def test_two_reductions_share_one_kernel():
    p = _gesummv(1024)
    rw = _applied(p, CPU)[0]
    g = generate(rw.result, {})
    assert len(g.kernels) == 1
    k = g.kernels[0]
    assert k.global_size[0] == 1024 * k.local_size[0]
    src = g.source
    # the final function reads both results from local memory and writes the output
    assert "out[" in src and src.count("out[") == 1
    assert src.index("y_f(alpha, l_") > src.rindex("barrier(CLK_LOCAL_MEM_FENCE)")


@pytest.mark.parametrize("n", [256, 1024])
def test_gesummv_kernels_run_on_the_device_and_match_numpy(rt, n):
    from mcl.lift.execute import run_generated
    info = rt.info
    # the device's limits, as an exploration on it uses them (no warp tails on a CPU)
    limits = Limits(max_work_group=info.max_work_group_size, local_memory=info.local_memory,
                    warp_size=32 if info.kind == "GPU" else 1)
    p = _gesummv(n)
    rws = _applied(p, limits)
    xs = random_inputs(p, {}, np.random.default_rng(n))
    vector = [i for i, rw in enumerate(rws) if "asVector(4)" in show(rw.result.body.body)]
    assert vector
    for i in sorted({0, len(rws) - 1, vector[0]}):
        g = generate(rws[i].result, {}, Options(max_work_group=info.max_work_group_size,
                                                local_memory=info.local_memory))
        got = run_generated(g, rt, xs)
        np.testing.assert_allclose(got, _expected(xs), rtol=1e-4, atol=1e-4)


def test_hand_written_two_reductions_run_on_the_device(rt):
    from mcl.lift.execute import run_generated
    n = 256
    p = bind_sizes(parse(TWO), {"N": n})
    a, b, x, alpha, beta = random_inputs(p, {}, np.random.default_rng(3))
    for rw in _applied(p, CPU)[:2]:
        got = run_generated(generate(rw.result, {}), rt, [a, b, x, alpha, beta])
        np.testing.assert_allclose(got, _expected([alpha, beta, a, b, x]), rtol=1e-4, atol=1e-4)


# ------------------------------------------------------------------ gemv as before

def test_gemv_keeps_its_one_reduction_implementation(rt):
    from mcl.lift.execute import run_generated
    sizes = {"M": 32, "N": 256}
    p = bind_sizes(program("gemv"), sizes)
    rws = _applied(p, CPU)
    # every work-group size from 32 to 1024 dividing N, scalar and 2-/4-wide vectors
    assert len(rws) == 9
    for rw in rws:
        text = show(rw.result.body.body)
        # the row's tree writes its T[1] to global memory itself; the outer map stays
        assert "join o toGlobal(mapLcl(mapSeq(id))) o split(1)" in text
        assert text.startswith("map(fun(t) => add(")
    xs = random_inputs(p, {}, np.random.default_rng(4))
    a, x, y, alpha, beta = xs
    for rw in (rws[0], rws[1]):
        low = rw.result
        # lower the outer element-wise map to a second kernel
        outer = [r for r in rewrites(low, [RULES["map-to-mapGlb"]]) if r.path == (0,)]
        assert outer
        got = run_generated(generate(outer[0].result, {}), rt, xs)
        np.testing.assert_allclose(got, alpha * (a.astype(np.float64) @ x) + beta * y,
                                   rtol=1e-4, atol=1e-4)
