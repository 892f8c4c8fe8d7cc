"""Every skeleton on 1, 2 and 3 devices against numpy, with sizes that do not divide
by the number of devices, empty and one-element containers."""

from __future__ import annotations

import numpy as np
import pytest

import mcl.skel as sk
from mcl.diagnostics import McplError

SIZES = [0, 1, 2, 7, 1000, 4099]
ADD = "float add(float x, float y) { return x + y; }"


def data(n, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).random(n).astype(dtype)


@pytest.mark.parametrize("n", SIZES)
def test_map(ndev, n):
    a = data(n)
    out = sk.Map("float f(float x) { return x * x + 1.0f; }")(sk.Vector(a))
    assert out.distribution.kind == "block"
    assert np.allclose(out.to_numpy(), a * a + 1)


@pytest.mark.parametrize("n", SIZES)
def test_zip_saxpy_with_scalar(ndev, n):
    x, y = data(n, 1), data(n, 2)
    saxpy = sk.Zip("float saxpy(float x, float y, float a) { return a * x + y; }")
    assert np.allclose(saxpy(sk.Vector(x), sk.Vector(y), 2.5).to_numpy(), 2.5 * x + y)


def test_zip_redistributes_mismatched_inputs(ndev):
    x, y = data(11, 1), data(11, 2)
    X = sk.Vector(x, distribution=sk.single(ndev - 1))
    Y = sk.Vector(y, distribution=sk.copy())
    out = sk.Zip("float f(float a, float b) { return a - b; }")(X, Y)
    if ndev > 1:
        assert X.distribution.kind == Y.distribution.kind == "block"
    assert np.allclose(out.to_numpy(), x - y)
    same = sk.Zip("float f(float a, float b) { return a * b; }")(
        sk.Vector(x, distribution=sk.single(ndev - 1)),
        sk.Vector(y, distribution=sk.single(ndev - 1)))
    assert same.distribution == sk.single(ndev - 1)
    assert np.allclose(same.to_numpy(), x * y)


def test_map_on_every_distribution(ndev):
    a = data(13)
    for d in (sk.single(ndev - 1), sk.copy(), sk.block()):
        out = sk.Map("float f(float x) { return -x; }")(sk.Vector(a, distribution=d))
        assert out.distribution.same_layout(d)
        assert np.array_equal(out.to_numpy(), -a)


def test_map_matrix_and_int_types(ndev):
    m = np.arange(35, dtype=np.int32).reshape(5, 7)
    out = sk.Map("long f(int x) { return (long)x * 3; }")(sk.Matrix(m))
    assert out.dtype == np.int64 and out.shape == (5, 7)
    assert np.array_equal(out.to_numpy(), m.astype(np.int64) * 3)


def test_additional_container_argument(ndev):
    a = data(10)
    table = sk.Vector(np.array([10.0, 20.0, 30.0], np.float32), distribution=sk.copy())
    f = sk.Map("float f(float x, __global const float* t, int k) { return x + t[k]; }")
    assert np.allclose(f(sk.Vector(a), table, 2).to_numpy(), a + 30)
    with pytest.raises(McplError):
        f(sk.Vector(a), sk.Vector(np.zeros(3, np.float32)), 1)   # no explicit distribution


@pytest.mark.parametrize("n", [1, 2, 7, 1000, 70001])
def test_reduce(ndev, n):
    a = data(n)
    out = sk.Reduce(ADD)(sk.Vector(a))
    assert out.shape == (1,) and out.distribution == sk.single(0)
    assert np.isclose(out.to_numpy()[0], a.astype(np.float64).sum(), rtol=1e-4)
    mx = sk.Reduce("int mx(int x, int y) { return max(x, y); }")
    b = (data(n, 3) * 1000).astype(np.int32)
    assert mx(sk.Vector(b)).to_numpy()[0] == b.max()


def test_reduce_empty(ndev):
    assert sk.Reduce(ADD, identity=0.0)(sk.Vector(np.zeros(0, np.float32))).to_numpy()[0] == 0
    with pytest.raises(McplError) as e:
        sk.Reduce(ADD)(sk.Vector(np.zeros(0, np.float32)))
    assert e.value.diagnostics[0].code == "skel-empty-reduce"


def test_dot_product(ndev):
    x, y = data(999, 4), data(999, 5)
    mult = sk.Zip("float mult(float x, float y) { return x * y; }")
    dot = sk.Reduce(ADD)(mult(sk.Vector(x), sk.Vector(y)))
    assert np.isclose(dot.to_numpy()[0], np.dot(x.astype(np.float64), y), rtol=1e-4)


@pytest.mark.parametrize("n", [0, 1, 2, 7, 257, 5000])
def test_scan(ndev, n):
    a = (data(n) * 10).astype(np.int32)
    out = sk.Scan("int add(int x, int y) { return x + y; }")(sk.Vector(a))
    assert out.distribution.kind == "block"
    assert np.array_equal(out.to_numpy(), np.cumsum(a, dtype=np.int32))
    mx = sk.Scan("int mx(int x, int y) { return max(x, y); }")(sk.Vector(a))
    assert np.array_equal(mx.to_numpy(), np.maximum.accumulate(a) if n else a)


def test_scan_non_commutative_order(ndev):
    # f(x, y) = y keeps the last element: a scan in the wrong order would show it
    a = np.arange(1, 40, dtype=np.int32)
    out = sk.Scan("int last(int x, int y) { return y; }")(sk.Vector(a))
    assert np.array_equal(out.to_numpy(), a)
    first = sk.Scan("int first(int x, int y) { return x; }")(sk.Vector(a))
    assert np.array_equal(first.to_numpy(), np.full_like(a, 1))


@pytest.mark.parametrize("n", [0, 1, 9, 1001])
def test_map_over_index_vector(ndev, n):
    out = sk.Map("float f(int i, float s) { return i * s; }")(sk.IndexVector(n), 0.5)
    assert np.allclose(out.to_numpy(), np.arange(n) * 0.5)


def _blur_ref(x, pad, d=1, neutral=0.0):
    if x.size == 0:
        return x
    p = np.pad(x, d, mode="edge") if pad == "nearest" else np.pad(x, d,
                                                                 constant_values=neutral)
    r, c = x.shape
    return sum(p[d + i:d + i + r, d + j:d + j + c] for i in range(-d, d + 1)
               for j in range(-d, d + 1))


@pytest.mark.parametrize("shape", [(0, 4), (1, 1), (1, 5), (7, 3), (30, 17)])
@pytest.mark.parametrize("padding", ["neutral", "nearest"])
def test_map_overlap(ndev, shape, padding):
    x = np.random.default_rng(1).random(shape).astype(np.float32)
    f = sk.MapOverlap("""float box(float_matrix_t m) {
        float s = 0.0f;
        for (int i = -2; i <= 2; ++i)
          for (int j = -2; j <= 2; ++j)
            s += get(m, i, j);
        return s; }""", 2, padding, neutral=0.5)
    out = f(sk.Matrix(x))
    assert np.allclose(out.to_numpy(), _blur_ref(x, padding, 2, 0.5), rtol=1e-5)


def _heat_ref(x, its):
    for _ in range(its):
        p = np.pad(x, 1)
        x = (x + p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:]) / 5
    return x


@pytest.mark.parametrize("shape", [(1, 1), (2, 9), (10, 6), (31, 20)])
@pytest.mark.parametrize("sync", [1, 3])
def test_stencil_iterations(ndev, shape, sync):
    x = np.random.default_rng(2).random(shape).astype(np.float32)
    heat = sk.Stencil("""float heat(float_matrix_t m) {
        return (get(m, 0, 0) + get(m, -1, 0) + get(m, 1, 0) + get(m, 0, -1) + get(m, 0, 1))
               / 5.0f; }""", (1, 1, 1, 1), sync_every=sync)
    for its in (1, 7):
        assert np.allclose(heat(sk.Matrix(x), iterations=its).to_numpy(), _heat_ref(x, its),
                           atol=1e-6)


def test_stencil_asymmetric_shape(ndev):
    x = np.random.default_rng(3).random((17, 5)).astype(np.float32)
    down = sk.Stencil("float f(float_matrix_t m) { return get(m, -1, 0) + get(m, -2, 0); }",
                      (2, 0, 0, 0))
    ref = x
    for _ in range(4):
        p = np.pad(ref, ((2, 0), (0, 0)))
        ref = p[1:-1] + p[:-2]
    assert np.allclose(down(sk.Matrix(x), iterations=4).to_numpy(), ref, rtol=1e-5)


@pytest.mark.parametrize("n,d,m", [(1, 1, 1), (5, 3, 7), (37, 23, 41), (70, 65, 33),
                                   (130, 17, 150), (0, 3, 4), (3, 4, 0)])
def test_allpairs_matmul(ndev, n, d, m):
    rng = np.random.default_rng(4)
    a = rng.random((n, d)).astype(np.float32)
    b = rng.random((d, m)).astype(np.float32)
    zr = sk.AllPairs(zip="float mul(float x, float y) { return x * y; }", reduce=ADD,
                     identity=0.0)
    assert np.allclose(zr(sk.Matrix(a), sk.Matrix(b)).to_numpy(), a @ b, rtol=1e-4)
    no_identity = sk.AllPairs(zip="float mul(float x, float y) { return x * y; }",
                              reduce=ADD)
    assert np.allclose(no_identity(sk.Matrix(a), sk.Matrix(b)).to_numpy(), a @ b, rtol=1e-4)


def test_allpairs_generic_manhattan(ndev):
    rng = np.random.default_rng(5)
    a = rng.random((13, 6)).astype(np.float32)
    b = rng.random((6, 9)).astype(np.float32)
    dist = sk.AllPairs("""float manhattan(float_matrix_t a, float_matrix_t b) {
        float s = 0.0f;
        for (int k = 0; k < width(a); ++k)
          s += fabs(getElementFromRow(a, k) - getElementFromCol(b, k));
        return s; }""")
    ref = np.abs(a[:, :, None] - b[None, :, :]).sum(axis=1)
    out = dist(sk.Matrix(a), sk.Matrix(b))
    assert np.allclose(out.to_numpy(), ref, rtol=1e-5)
    assert out.distribution.kind == "block"


def test_double_and_lists(ndev):
    v = sk.Vector([1.5, 2.5, 3.5])                     # a list: float64
    assert v.dtype == np.float64
    out = sk.Map("double f(double x) { return x * 2.0; }")(v)
    assert out.dtype == np.float64 and np.array_equal(out.to_numpy(), [3.0, 5.0, 7.0])
    total = sk.Reduce("double add(double x, double y) { return x + y; }")(out)
    assert total.to_numpy()[0] == 15.0
