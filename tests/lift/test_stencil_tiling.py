"""``stencil-2d-tiling``: every fh x fw window of a 2-D input,
``map(join o map(g) o transpose o map(slide(fw, 1))) o slide(fh, 1) $ X`` (the convolution
Lift derives), becomes overlapped tiles (Hagedorn et al., CGO 2018): one work-group per
th x tw outputs copies its (th + fh - 1) x (tw + fw - 1) input tile with halo into local
memory (toLocal(mapLcl(1, mapLcl(0, id))), each work-item copying several elements),
then each work-item computes its output from the tile."""

import re

import numpy as np
import pytest
from conftest import convolution_reference, derived

from mcl.lift import explore as E
from mcl.lift import stencil_blocking as M
from mcl.lift.codegen import generate
from mcl.lift.interp import random_inputs, run
from mcl.lift.ir import Prim, walk
from mcl.lift.parser import parse
from mcl.lift.printer import show
from mcl.lift.rules import RULES, Limits, apply_rule, nesting_problem, rewrites
from mcl.lift.typecheck import check_program

RULE = "stencil-2d-tiling"


def tilings(p) -> list:
    return [rw for rw in rewrites(p, [RULES[RULE]])]


def prims(prog, name: str) -> list[Prim]:
    return [n for _, n in walk(prog.body.body) if isinstance(n, Prim) and n.name == name]


# ----------------------------------------------------------------------------- the identity

@pytest.mark.parametrize("n, size, tile", [(18, 3, 8), (18, 3, 16), (40, 9, 8), (13, 5, 3)])
def test_overlapped_tiles_slide_like_the_windows(n, size, tile):
    # slide(size, 1) = join o map(slide(size, 1)) o slide(tile + size - 1, tile)
    # where tile divides the number of windows
    a = parse(f"s = fun(x: float[{n}]) => slide({size}, 1) $ x")
    b = parse(f"s = fun(x: float[{n}]) => join o map(slide({size}, 1)) o "
              f"slide({tile + size - 1}, {tile}) $ x")
    xs = random_inputs(a, {}, np.random.default_rng(0))
    np.testing.assert_array_equal(run(b, *xs), run(a, *xs))


# ----------------------------------------------------------------------------- the rule

def test_rule_is_an_exact_macro():
    assert RULES[RULE].kind == "macro" and RULES[RULE].exact


@pytest.mark.parametrize("sizes", [{"h": 16, "w": 32, "fh": 3, "fw": 3},
                                   {"h": 32, "w": 64, "fh": 5, "fw": 3}])
def test_every_choice_is_well_typed_lowerable_and_equal(sizes):
    p = derived("convolution", sizes)
    rws = tilings(p)
    assert 1 <= len(rws) <= 8 and all(rw.path == () for rw in rws)
    xs = random_inputs(p, sizes, np.random.default_rng(2))
    want = np.asarray(run(p, *xs))
    for rw in rws:
        q = rw.result
        check_program(q)
        assert len(prims(q, "mapWrg")) == 2 and len(prims(q, "toLocal")) == 1
        np.testing.assert_allclose(run(q, *xs), want, rtol=1e-5, atol=1e-6)
        low = E.direct_lowering(q)
        assert low is not None and E.is_lowered(low)
        assert nesting_problem(low.body.body, partial=False) is None
        np.testing.assert_allclose(run(low, *xs), want, rtol=1e-5, atol=1e-6)


def test_the_shape_of_the_result():
    p = derived("convolution", {"h": 16, "w": 32, "fh": 3, "fw": 3})
    text = show(apply_rule(p, RULE).body.body)
    assert text.startswith("join o mapWrg(1, map(join) o transpose o mapWrg(mapLcl(1, join o "
                           "mapLcl(fun(input_j) =>")
    assert "o slide(3, 1) o toLocal(mapLcl(1, mapLcl(id)))) o transpose o map(slide(34, 32)))" \
        " o slide(10, 8) $ input" in text


def test_choices_divide_the_output_and_fit_the_limits():
    assert M.stencil_tiling_choices(4096, 4096, 9, 9, Limits())[0] == (8, 32)
    assert len(M.stencil_tiling_choices(4096, 4096, 9, 9, Limits())) == 8
    for th, tw in M.stencil_tiling_choices(48, 80, 9, 9, Limits()):
        assert 48 % th == 0 and 80 % tw == 0
    small = Limits(max_work_group=128, local_memory=(16 + 8) * (32 + 8) * 4)
    got = M.stencil_tiling_choices(64, 64, 9, 9, small)
    assert got and all(th * tw <= 128 and (th + 8) * (tw + 8) * 4 <= small.local_memory
                       for th, tw in got)
    assert M.stencil_tiling_choices(6, 6, 3, 3, Limits()) == []


def test_macro_seeds_include_the_tiling():
    p = derived("convolution", {"h": 32, "w": 64, "fh": 3, "fw": 3})
    seeds = E.macro_seeds(p)
    # (stencil-2d-register-blocking-local's seed has a tile in local memory too)
    tiled = [s for s in seeds if prims(s, "toLocal") and not prims(s, "toConstant")]
    assert len(tiled) == 1 and E.is_lowered(tiled[0])


@pytest.mark.parametrize("src", [
    # windows of step 2: not the stencil's shape
    "s = fun(x: float[10][34]) => "
    "map(join o map(reduce(add, 0.0f) o join) o transpose o map(slide(3, 2))) o slide(3, 1) $ x",
    "s = fun(x: float[10][34]) => "
    "map(join o map(reduce(add, 0.0f) o join) o transpose o map(slide(3, 1))) o slide(3, 2) $ x",
    # a map of rows without windows
    "s = fun(x: float[8][32]) => map(map(absval)) $ x",
])
def test_rule_declines_other_shapes(src):
    funs = ("userfun add(x: float, y: float): float = x + y\n"
            "userfun absval(x: float): float = fabs(x)\n")
    assert not tilings(parse(funs + src))


# ----------------------------------------------------------------------------- the kernel

def test_kernel_copies_the_tile_once_with_one_barrier():
    sizes = {"h": 16, "w": 32, "fh": 3, "fw": 3}
    low = E.direct_lowering(apply_rule(derived("convolution", sizes), RULE))
    gen = generate(low, sizes)
    (k,) = gen.kernels
    assert k.local_size == (32, 8) and k.global_size == (32, 16)
    assert k.local_bytes == 10 * 34 * 4
    src = k.source
    assert src.count("barrier(") == 1 and len(re.findall(r"local float l_\d+\[340\]", src)) == 1
    # the copy: strided loops over the 10 x 34 tile, the group being 8 x 32
    assert re.search(r"for \(int l_\d+ = get_local_id\(1\); l_\d+ < 10; l_\d+ \+= "
                     r"get_local_size\(1\)\)", src)
    assert re.search(r"for \(int l_\d+ = get_local_id\(0\); l_\d+ < 34; l_\d+ \+= "
                     r"get_local_size\(0\)\)", src)
    # the computation reads only the local tile
    compute = src.split("barrier(")[1]
    assert "input[" not in compute and "acc_" in compute


@pytest.mark.parametrize("sizes", [{"h": 64, "w": 64, "fh": 3, "fw": 3},
                                   {"h": 64, "w": 128, "fh": 9, "fw": 9},
                                   {"h": 32, "w": 64, "fh": 5, "fw": 3}])
def test_tiled_convolution_runs_and_matches(rt, sizes):
    from mcl.lift.execute import run_generated
    p = derived("convolution", sizes)
    xs = random_inputs(p, sizes, np.random.default_rng(1), low=0.0, high=1.0)
    want = convolution_reference(xs[0], xs[1], **sizes)
    rws = tilings(p)
    assert rws
    for rw in rws:
        low = E.direct_lowering(rw.result)
        gen = generate(low, sizes)
        got = run_generated(gen, rt, xs).astype(np.float64)
        np.testing.assert_allclose(got.reshape(want.shape), want, rtol=1e-4, atol=1e-5,
                                   err_msg=show(rw.result.body.body))
