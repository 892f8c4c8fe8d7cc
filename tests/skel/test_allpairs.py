"""The register-blocked zip-reduce AllPairs on 1, 2 and 3 devices against numpy:
several tilings and code shapes (r, i, d, and l: Lift's structure), sizes that divide
the tiles and sizes that do not (1 x N, N x 1, fewer columns than a vector),
reductions without a neutral element, other types."""

from __future__ import annotations

import numpy as np
import pytest

import mcl.skel as sk
from mcl.diagnostics import McplError
from mcl.skel.allpairs import parse_tiling

ADD = "float add(float x, float y) { return x + y; }"
MUL = "float mul(float x, float y) { return x * y; }"


def mats(n, d, m, seed=0, dtype=np.float32):
    rng = np.random.default_rng(seed)
    return (rng.random((n, d)) - 0.5).astype(dtype), (rng.random((d, m)) - 0.5).astype(dtype)


@pytest.mark.parametrize("n,d,m", [(256, 32, 128), (1, 9, 130), (131, 5, 1), (3, 1, 4),
                                   (129, 16, 257), (64, 100, 66)])
def test_default_tiling(ndev, n, d, m):
    a, b = mats(n, d, m)
    mm = sk.AllPairs(zip=MUL, reduce=ADD, identity=0.0)
    out = mm(sk.Matrix(a), sk.Matrix(b))
    assert out.distribution.kind in ("block", "single")
    assert np.allclose(out.to_numpy(), a @ b, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("tile", ["64x64x16/4x4", "128x64x8/8x4", "32x64x4/2x8",
                                  "16x16x4/1x1", "64x32x8/8x2", "64x64x16/4x4,32x8",
                                  "64x64x16/4x4,32x8@i", "64x64x16/4x4,16x16@d",
                                  "32x64x4/2x8@r", "32x32x24/4x4@d", "32x32x24/4x4@i",
                                  "64x64x16/4x4@l", "32x64x4/2x8@l", "16x16x4/1x1@l",
                                  "32x32x24/4x4,8x8@l", "64x32x8/8x2@l"])
@pytest.mark.parametrize("identity", [None, 0.0], ids=["first-k", "identity"])
def test_tilings(ndev, tile, identity):
    # no identity: the first k starts the reduction
    mm = sk.AllPairs(zip=MUL, reduce=ADD, tile=tile, identity=identity)
    for n, d, m in [(70, 37, 45), (128, 64, 64), (1, 3, 1), (131, 48, 130)]:
        a, b = mats(n, d, m, seed=n)
        assert np.allclose(mm(sk.Matrix(a), sk.Matrix(b)).to_numpy(), a @ b, rtol=1e-4,
                           atol=1e-5), (tile, n, d, m)


LIFT_TILES = ["128x128x8/8x8,16x16@l", "128x128x16/8x8@l"]


@pytest.mark.parametrize("tile", LIFT_TILES)
@pytest.mark.parametrize("identity", [None, 0.0], ids=["first-k", "identity"])
def test_lift_shape_float(ndev, tile, identity):
    # shape l (Lift's best.cl): sizes that divide the tiles on every device (256 rows:
    # 128 a device on 2), that do not (200 x 37 @ 37 x 130), a partial last k-tile
    mm = sk.AllPairs(zip=MUL, reduce=ADD, tile=tile, identity=identity)
    assert parse_tiling(tile).local_shape == (16, 16)
    for n, d, m in [(256, 64, 256), (200, 37, 130), (384, 40, 128), (3, 1, 4), (129, 16, 257)]:
        a, b = mats(n, d, m, seed=d)
        assert np.allclose(mm(sk.Matrix(a), sk.Matrix(b)).to_numpy(), a @ b, rtol=1e-4,
                           atol=1e-5), (tile, n, d, m)


@pytest.mark.parametrize("tile", LIFT_TILES)
@pytest.mark.parametrize("identity", [None, 0], ids=["first-k", "identity"])
def test_lift_shape_int(ndev, tile, identity):
    rng = np.random.default_rng(11)
    mm = sk.AllPairs(zip="int mul(int x, int y) { return x * y; }",
                     reduce="int add(int x, int y) { return x + y; }", tile=tile,
                     identity=identity)
    for n, d, m in [(256, 64, 256), (200, 37, 130)]:
        a = rng.integers(-50, 50, (n, d)).astype(np.int32)
        b = rng.integers(-50, 50, (d, m)).astype(np.int32)
        assert np.array_equal(mm(sk.Matrix(a), sk.Matrix(b)).to_numpy(), a @ b), (tile, n)


def test_lift_shape_other_reductions(ndev):
    # max-plus without an identity (a padded zero would show), min-plus with +inf,
    # double, and A with no columns
    a, b = mats(200, 37, 130, seed=4)
    a, b = a - 2.0, b - 2.0
    mx = sk.AllPairs(zip="float plus(float x, float y) { return x + y; }",
                     reduce="float mx(float x, float y) { return fmax(x, y); }",
                     tile="128x128x8/8x8@l")
    assert np.array_equal(mx(sk.Matrix(a), sk.Matrix(b)).to_numpy(),
                          (a[:, :, None] + b[None, :, :]).max(axis=1))
    mn = sk.AllPairs(zip="float plus(float x, float y) { return x + y; }",
                     reduce="float mn(float x, float y) { return fmin(x, y); }",
                     identity=np.float32(np.inf), tile="64x64x8/4x4@l")
    assert np.array_equal(mn(sk.Matrix(a), sk.Matrix(b)).to_numpy(),
                          (a[:, :, None] + b[None, :, :]).min(axis=1))
    a0, b0 = mats(3, 0, 4)
    assert np.all(mn(sk.Matrix(a0), sk.Matrix(b0)).to_numpy() == np.inf)
    ad, bd = mats(140, 24, 136, dtype=np.float64)
    md = sk.AllPairs(zip="double mul(double x, double y) { return x * y; }",
                     reduce="double add(double x, double y) { return x + y; }",
                     identity=0.0, tile="64x64x8/4x4@l")
    assert np.allclose(md(sk.Matrix(ad), sk.Matrix(bd)).to_numpy(), ad @ bd, rtol=1e-12)


def test_lift_shape_from_environment(on_devices, monkeypatch):
    on_devices(2)
    monkeypatch.setenv("MCL_SKEL_ALLPAIRS_TILE", "64x64x8/4x4,16x16@l")
    mm = sk.AllPairs(zip=MUL, reduce=ADD, identity=0.0)
    assert parse_tiling(mm.tile).shape == "l"
    a, b = mats(200, 37, 130)
    assert np.allclose(mm(sk.Matrix(a), sk.Matrix(b)).to_numpy(), a @ b, rtol=1e-4,
                       atol=1e-5)


def test_tile_from_environment(ndev, monkeypatch):
    monkeypatch.setenv("MCL_SKEL_ALLPAIRS_TILE", "32x32x8/4x4")
    mm = sk.AllPairs(zip=MUL, reduce=ADD)
    assert mm.tile == "32x32x8/4x4"
    a, b = mats(33, 17, 35)
    assert np.allclose(mm(sk.Matrix(a), sk.Matrix(b)).to_numpy(), a @ b, rtol=1e-4,
                       atol=1e-5)


def test_min_plus_with_infinite_identity(on_devices):
    on_devices(2)
    a, b = mats(21, 13, 18, seed=8)
    mm = sk.AllPairs(zip="float plus(float x, float y) { return x + y; }",
                     reduce="float mn(float x, float y) { return fmin(x, y); }",
                     identity=np.float32(np.inf), tile="32x32x8/4x4")
    ref = (a[:, :, None] + b[None, :, :]).min(axis=1)
    assert np.array_equal(mm(sk.Matrix(a), sk.Matrix(b)).to_numpy(), ref)
    a0, b0 = mats(3, 0, 4)
    assert np.all(mm(sk.Matrix(a0), sk.Matrix(b0)).to_numpy() == np.inf)


def test_max_plus_without_identity(ndev):
    # zip = +, reduce = max over negative values: padding with zeros would show
    a, b = mats(45, 19, 70, seed=3)
    a, b = a - 2.0, b - 2.0
    mm = sk.AllPairs(zip="float plus(float x, float y) { return x + y; }",
                     reduce="float mx(float x, float y) { return fmax(x, y); }")
    ref = (a[:, :, None] + b[None, :, :]).max(axis=1)
    assert np.array_equal(mm(sk.Matrix(a), sk.Matrix(b)).to_numpy(), ref)


def test_int_and_double(ndev):
    rng = np.random.default_rng(6)
    a = rng.integers(-50, 50, (37, 21)).astype(np.int32)
    b = rng.integers(-50, 50, (21, 29)).astype(np.int32)
    mm = sk.AllPairs(zip="int mul(int x, int y) { return x * y; }",
                     reduce="int add(int x, int y) { return x + y; }", tile="64x64x8/4x4")
    assert np.array_equal(mm(sk.Matrix(a), sk.Matrix(b)).to_numpy(), a @ b)
    ad, bd = mats(40, 24, 36, dtype=np.float64)
    md = sk.AllPairs(zip="double mul(double x, double y) { return x * y; }",
                     reduce="double add(double x, double y) { return x + y; }",
                     identity=0.0)
    assert np.allclose(md(sk.Matrix(ad), sk.Matrix(bd)).to_numpy(), ad @ bd, rtol=1e-12)


def test_empty_and_no_columns(ndev):
    mm = sk.AllPairs(zip=MUL, reduce=ADD, identity=1.5)
    for n, d, m in [(0, 3, 4), (3, 4, 0), (0, 0, 0)]:
        a, b = mats(n, d, m)
        assert mm(sk.Matrix(a), sk.Matrix(b)).to_numpy().shape == (n, m)
    a, b = mats(5, 0, 6)
    assert np.array_equal(mm(sk.Matrix(a), sk.Matrix(b)).to_numpy(), np.full((5, 6), 1.5))
    with pytest.raises(McplError) as e:
        sk.AllPairs(zip=MUL, reduce=ADD)(sk.Matrix(a), sk.Matrix(b))
    assert e.value.diagnostics[0].code == "skel-empty-reduce"


def test_bad_tile():
    assert str(parse_tiling("128x128x16/8x8,32x8")) == "128x128x16/8x8,32x8"
    assert parse_tiling("128x128x16/8x8,32x8").local_shape == (32, 8)
    assert str(parse_tiling("128x128x8/8x8,16x16@l")) == "128x128x8/8x8,16x16@l"
    assert parse_tiling("128x64x8/8x4@l").local_shape == (16, 16)
    for bad in ("128x128", "128x128x16/3x8", "100x128x16/8x8", "128x128x6/8x8",
                "128x128x16/8x8,32x4", "128x128x16/8x8,32x8@o", "128x128x8/8x8,32x8@l"):
        with pytest.raises(McplError):
            parse_tiling(bad)
    with pytest.raises(McplError):
        sk.AllPairs(zip=MUL, reduce=ADD, tile="banana")


def test_build_error_maps_to_user_line(ndev):
    bad = sk.AllPairs(zip="float mul(float x, float y) {\n  return x * nothing_here;\n}",
                      reduce=ADD, identity=0.0)
    a, b = mats(4, 4, 4)
    with pytest.raises(McplError) as e:
        bad(sk.Matrix(a), sk.Matrix(b))
    d = e.value.diagnostics[0]
    assert d.code == "skel-function-build" and "nothing_here" in d.message


def test_build_options(on_devices, monkeypatch):
    on_devices(2)
    monkeypatch.setenv("MCL_SKEL_ALLPAIRS_OPTIONS", "-cl-mad-enable")
    mm = sk.AllPairs(zip=MUL, reduce=ADD, tile="32x32x8/4x4")
    assert mm.options == ("-cl-mad-enable",)
    a, b = mats(19, 12, 21)
    assert np.allclose(mm(sk.Matrix(a), sk.Matrix(b)).to_numpy(), a @ b, rtol=1e-4,
                       atol=1e-5)


def test_lift_padding_only_where_it_spares_conflicts():
    # A's transposed tile: at BK = 8 the padding moves a work-item's two k-runs to
    # other banks (4 wavefronts a warp instead of 8); at BK = 16 no multiple of 4 does
    from mcl.skel.allpairs_lift import lift_pad, lift_source
    assert parse_tiling("128x128x8/8x8@l").pad == 4
    assert parse_tiling("128x128x16/8x8@l").pad == 0
    assert parse_tiling("128x128x16/8x8,32x8").pad == 4       # shape r keeps PAD
    assert lift_pad(64, 64, 16, 4, 4, 4) == 4
    assert lift_pad(128, 128, 16, 8, 8, 0) == 0
    assert "l_a[4096]" in lift_source(128, 128, 16, 8, 8, 0, True)
    assert "l_a[2112]" in lift_source(128, 128, 8, 8, 8, 4, True)


@pytest.mark.parametrize("identity", [None, 0.0], ids=["first-k", "identity"])
def test_calls_reuse_their_plan_with_new_inputs(ndev, identity):
    # a call's launches are planned once per sizes and distribution; the buffers are
    # the call's own
    mm = sk.AllPairs(zip=MUL, reduce=ADD, identity=identity)
    for seed in range(3):
        a, b = mats(130, 40, 70, seed=seed)
        assert np.allclose(mm(sk.Matrix(a), sk.Matrix(b)).to_numpy(), a @ b, rtol=1e-4,
                           atol=1e-5)
    assert len(mm._plans) == 1
    a, b = mats(64, 40, 70)
    assert np.allclose(mm(sk.Matrix(a), sk.Matrix(b)).to_numpy(), a @ b, rtol=1e-4,
                       atol=1e-5)
    assert len(mm._plans) == 2


def test_generic_calls_reuse_their_plan_with_new_arguments(ndev):
    f = sk.AllPairs("float dist(float_matrix_t a, float_matrix_t b, float w) {"
                    " float s = 0; for (int k = 0; k < width(a); k++) {"
                    " float t = getElementFromRow(a, k) - getElementFromCol(b, k);"
                    " s += t * t; } return w * s; }")
    for w in (1.0, 2.5):
        a, b = mats(33, 7, 20, seed=int(w))
        want = w * ((a[:, :, None] - b[None, :, :]) ** 2).sum(axis=1)
        got = f(sk.Matrix(a), sk.Matrix(b), np.float32(w)).to_numpy()
        assert np.allclose(got, want, rtol=1e-4, atol=1e-5)
    assert len(f._plans) == 1


def test_a_plain_kernel_where_the_compiler_miscompiles_the_tiled_one(ndev, monkeypatch):
    """PoCL 5 builds the register-blocked kernel wrong for some tilings and sizes, with
    and without its `#pragma unroll` marks (benchmarks/results/skel/pocl5_allpairs.md):
    there AllPairs runs the plain kernel, an element a work-item, whatever the tiling;
    right for first-k and identity reductions, sizes that divide no tile, no columns
    in A, one row, other types."""
    from mcl.skel import allpairs
    monkeypatch.setattr(allpairs.cldevice, "miscompiles_tiled_kernels", lambda dev: True)
    for tile, identity, (n, d, m) in [("32x32x24/4x4@d", None, (131, 48, 130)),
                                      ("32x32x24/4x4@i", 0.0, (128, 64, 64)),
                                      ("64x64x16/4x4,32x8@i", 0.0, (70, 37, 45)),
                                      ("128x128x16/8x8@l", None, (70, 37, 45)),
                                      (None, 0.0, (1, 300, 17)), (None, 1.5, (9, 0, 5))]:
        a, b = mats(n, d, m, seed=n)
        mm = sk.AllPairs(zip=MUL, reduce=ADD, tile=tile, identity=identity)
        want = a @ b + (identity or 0.0)
        assert np.allclose(mm(sk.Matrix(a), sk.Matrix(b)).to_numpy(), want, rtol=1e-4,
                           atol=1e-5), (tile, n, d, m)
        assert {k.function_name for k in mm._kernels.values()} == {"skel_allpairs_plain"}
    ia, ib = mats(33, 20, 40, seed=3, dtype=np.int32)
    mx = sk.AllPairs(zip="int mul(int x, int y) { return x * y; }",
                     reduce="int mx(int x, int y) { return max(x, y); }")
    ia, ib = (ia * 10).astype(np.int32), (ib * 10).astype(np.int32)
    assert np.array_equal(mx(sk.Matrix(ia), sk.Matrix(ib)).to_numpy(),
                          (ia[:, :, None] * ib[None, :, :]).max(axis=1))


def test_which_compilers_miscompile_the_tiled_kernel():
    from types import SimpleNamespace

    from mcl.opencl.device import miscompiles_tiled_kernels as miscompiles

    def dev(version):
        return SimpleNamespace(platform=SimpleNamespace(version=version))

    assert miscompiles(dev("OpenCL 3.0 PoCL 5.0+debian  Linux, None+Asserts, RELOC, SPIR, "
                            "LLVM 16.0.6, SLEEF, DISTRO, POCL_DEBUG"))
    assert not miscompiles(dev("OpenCL 3.0 PoCL 3.1+debian  Linux, None+Asserts, RELOC"))
    assert not miscompiles(dev("OpenCL 3.0 CUDA 13.0.98"))
    assert not miscompiles(SimpleNamespace())
