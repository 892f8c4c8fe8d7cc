"""Reduce's bandwidth kernel and Map/Zip fused into it (``Zip(f).lazy(X, Y)``) on 1, 2
and 3 devices against numpy: every distribution, sizes around the vector width and
the work-group size, empty and one-element containers."""

from __future__ import annotations

import numpy as np
import pytest

import mcl.skel as sk
from mcl.diagnostics import McplError

ADD = "float add(float x, float y) { return x + y; }"
MULT = "float mult(float x, float y) { return x * y; }"
SIZES = [1, 2, 3, 4, 5, 7, 255, 256, 257, 1023, 4099, 70001]


def data(n, seed=0, dtype=np.float32):
    return (np.random.default_rng(seed).random(n) - 0.5).astype(dtype)


@pytest.mark.parametrize("n", SIZES)
def test_dot_product_fused(ndev, n):
    x, y = data(n, 1), data(n, 2)
    got = sk.Reduce(ADD)(sk.Zip(MULT).lazy(sk.Vector(x), sk.Vector(y)))
    assert got.shape == (1,) and got.distribution == sk.single(0)
    want = np.dot(x.astype(np.float64), y)
    assert np.isclose(got.to_numpy()[0], want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("n", [1, 3, 4, 6, 257, 4099])
def test_max_without_identity(ndev, n):
    # all negative: a reduction that started from 0 (no neutral element known) is wrong
    a = -1.0 - np.abs(data(n, 3)) * 100
    mx = sk.Reduce("float mx(float x, float y) { return fmax(x, y); }")
    assert mx(sk.Vector(a)).to_numpy()[0] == a.max()
    mn = sk.Reduce("int mn(int x, int y) { return min(x, y); }")
    b = (data(n, 4) * 1e6).astype(np.int32) + 5000000
    assert mn(sk.Vector(b)).to_numpy()[0] == b.min()
    sq = sk.Map("float sq(float x) { return -x * x; }")
    assert np.isclose(mx(sq.lazy(sk.Vector(a))).to_numpy()[0], (-a * a).max())


def test_fused_on_every_distribution(ndev):
    x, y = data(1001, 5), data(1001, 6)
    want = np.dot(x.astype(np.float64), y)
    dists = [sk.single(ndev - 1), sk.copy(), sk.block()]
    for dx in dists:
        for dy in dists:
            X, Y = sk.Vector(x, distribution=dx), sk.Vector(y, distribution=dy)
            got = sk.Reduce(ADD)(sk.Zip(MULT).lazy(X, Y)).to_numpy()[0]
            assert np.isclose(got, want, rtol=1e-4), (dx, dy)
            assert np.array_equal(X.to_numpy(), x) and np.array_equal(Y.to_numpy(), y)


def test_fused_equals_unfused_distribution_change(ndev):
    x, y = data(77, 7), data(77, 8)
    X, Y = sk.Vector(x, distribution=sk.single(ndev - 1)), sk.Vector(y, distribution=sk.copy())
    fused = sk.Reduce(ADD)(sk.Zip(MULT).lazy(X, Y))
    X2, Y2 = sk.Vector(x, distribution=sk.single(ndev - 1)), sk.Vector(y, distribution=sk.copy())
    plain = sk.Reduce(ADD)(sk.Zip(MULT)(X2, Y2))
    assert X.distribution == X2.distribution and Y.distribution == Y2.distribution
    assert np.isclose(fused.to_numpy()[0], plain.to_numpy()[0], rtol=1e-5)


@pytest.mark.parametrize("n", [0, 1, 5, 1000])
def test_fused_empty_and_small(ndev, n):
    x, y = data(n, 9), data(n, 10)
    got = sk.Reduce(ADD, identity=0.0)(sk.Zip(MULT).lazy(sk.Vector(x), sk.Vector(y)))
    assert np.isclose(got.to_numpy()[0], np.dot(x.astype(np.float64), y), atol=1e-4)
    if n == 0:
        with pytest.raises(McplError) as e:
            sk.Reduce(ADD)(sk.Zip(MULT).lazy(sk.Vector(x), sk.Vector(y)))
        assert e.value.diagnostics[0].code == "skel-empty-reduce"


def test_fused_extras_matrix_and_index(ndev):
    m = data(7 * 13, 11).reshape(7, 13)
    table = sk.Vector(np.array([2.0, 3.0], np.float32), distribution=sk.copy())
    f = sk.Map("float f(float x, __global const float* t, float s) { return x * t[1] + s; }")
    got = sk.Reduce(ADD)(f.lazy(sk.Matrix(m), table, 0.5)).to_numpy()[0]
    assert np.isclose(got, (m.astype(np.float64) * 3 + 0.5).sum(), rtol=1e-4)
    g = sk.Map("long g(int i, int k) { return (long)i * k; }")
    total = sk.Reduce("long add(long x, long y) { return x + y; }")
    for n in (1, 6, 1001):
        assert total(g.lazy(sk.IndexVector(n), 3)).to_numpy()[0] == 3 * n * (n - 1) // 2


def test_reduce_overlap_matrix_unaligned(ndev):
    # halo rows before the own rows: the part's first element is not a vector boundary
    m = data(23 * 5, 12).reshape(23, 5)
    M = sk.Matrix(m, distribution=sk.overlap(1))
    assert np.isclose(sk.Reduce(ADD)(M).to_numpy()[0], m.astype(np.float64).sum(), rtol=1e-4)
    two = sk.Zip(MULT).lazy(M, sk.Matrix(m, distribution=sk.overlap(1)))
    assert np.isclose(sk.Reduce(ADD)(two).to_numpy()[0], (m.astype(np.float64) ** 2).sum(),
                      rtol=1e-4)


def test_double_and_repeated_calls(ndev):
    x = np.random.default_rng(13).random(3001)
    red = sk.Reduce("double add(double x, double y) { return x + y; }")
    X = sk.Vector(x)
    for _ in range(3):      # the partial results' buffer is reused between calls
        assert np.isclose(red(X).to_numpy()[0], x.sum(), rtol=1e-12)
    sq = sk.Map("double sq(double x) { return x * x; }")
    assert np.isclose(red(sq.lazy(X)).to_numpy()[0], (x * x).sum(), rtol=1e-12)


def test_deferred_errors(ndev):
    x = sk.Vector(data(5))
    with pytest.raises(McplError) as e:
        sk.Zip(MULT).lazy(x, sk.Vector(data(6)))
    assert e.value.diagnostics[0].code == "skel-size-mismatch"
    with pytest.raises(McplError):
        sk.Zip("float f(float x, float y, float a) { return a * x + y; }").lazy(x, x)
    with pytest.raises(McplError) as e:
        sk.Reduce(ADD)(sk.Zip("float add(float x, float y) { return x * y; }").lazy(x, x))
    assert "rename" in e.value.diagnostics[0].message
    with pytest.raises(McplError):
        sk.Map("float f(float x) { return x; }")(sk.Zip(MULT).lazy(x, x))
    assert np.allclose(sk.Zip(MULT).lazy(x, x).compute().to_numpy(), x.to_numpy() ** 2)


def test_build_error_of_fused_function_maps_to_its_line(ndev):
    bad = sk.Zip("float mult(float x, float y) {\n  return x * undefined_name;\n}")
    with pytest.raises(McplError) as e:
        sk.Reduce(ADD)(bad.lazy(sk.Vector(data(9)), sk.Vector(data(9))))
    d = e.value.diagnostics[0]
    assert d.code == "skel-function-build" and "undefined_name" in d.message


def test_one_reduce_two_functions_of_one_name(ndev):
    x, y = data(50, 14), data(50, 15)
    total = sk.Reduce(ADD)
    X, Y = sk.Vector(x), sk.Vector(y)
    f1 = sk.Zip("float g(float a, float b) { return a * b; }")
    f2 = sk.Zip("float g(float a, float b) { return a - b; }")
    assert np.isclose(total(f1.lazy(X, Y)).to_numpy()[0], np.dot(x.astype(np.float64), y),
                      rtol=1e-4, atol=1e-5)
    assert np.isclose(total(f2.lazy(X, Y)).to_numpy()[0], (x.astype(np.float64) - y).sum(),
                      rtol=1e-4, atol=1e-5)


def _skeletons_with_a_lazy_form() -> set[str]:
    """The skeletons of mcl.skel that override Skeleton.lazy (the others refuse it)."""
    from mcl.skel.kernel import Skeleton
    found, todo = set(), [Skeleton]
    while todo:
        cls = todo.pop()
        todo += cls.__subclasses__()
        if cls is not Skeleton and cls.lazy is not Skeleton.lazy \
                and getattr(sk, cls.__name__, None) is cls:
            found.add(cls.__name__)
    return found


#: each skeleton with a deferred form and each kind of input it takes: the skeleton and
#: its inputs
LAZY_CALLS = {
    "Map of a Vector": (sk.Map, "int f(float x) { return x; }",
                        lambda: (sk.Vector(data(5)),)),
    "Map of a Matrix": (sk.Map, "float f(float x) { return 2 * x; }",
                        lambda: (sk.Matrix(data(6).reshape(2, 3)),)),
    "Map of an IndexVector": (sk.Map, "float f(int i) { return i; }",
                              lambda: (sk.IndexVector(4),)),
    "Zip of Vectors": (sk.Zip, MULT, lambda: (sk.Vector(data(5)), sk.Vector(data(5, 1)))),
    "Zip of Matrices": (sk.Zip, MULT, lambda: (sk.Matrix(data(6).reshape(3, 2)),
                                               sk.Matrix(data(6, 1).reshape(3, 2)))),
}


def test_every_skeleton_with_a_lazy_form_is_tested_for_its_result_kind():
    assert _skeletons_with_a_lazy_form() == {cls.__name__ for cls, _, _ in
                                             LAZY_CALLS.values()}


@pytest.mark.parametrize("name", LAZY_CALLS)
def test_a_deferred_call_has_the_kind_and_shape_of_its_result(name):
    """A deferred call's kind was its first input's: a Map over an IndexVector said
    'IndexVector', where the call (and compute()) gives a Vector. Now kind, shape and
    dtype are those of the eager call's result, for each skeleton with a lazy form."""
    sk.init(num_devices=1, platform="Portable Computing Language")
    skeleton, func, inputs = LAZY_CALLS[name]
    deferred = skeleton(func).lazy(*inputs())
    eager = skeleton(func)(*inputs())
    assert deferred.kind == eager.kind == type(eager).__name__, name
    assert deferred.shape == eager.shape and deferred.dtype == eager.dtype, name
    assert type(deferred.compute()) is type(eager), name
