import numpy as np
import pytest
from conftest import program

from mcl.lift.interp import random_inputs, run

SIZES = {"N": 32, "M": 8, "K": 4}


def _pad3(x):
    p = np.pad(x, 1, mode="edge")
    return (p[:-2] + p[1:-1] + p[2:]) * np.float32(0.33333334)


REFS = {
    "sum": lambda x: x.sum(keepdims=True),
    "asum": lambda x: np.abs(x).sum(keepdims=True),
    "dot": lambda x, y: np.array([x @ y]),
    "scal": lambda a, x: a * x,
    "gemv": lambda A, x, y, a, b: a * (A @ x) + b * y,
    "mm": lambda A, B: A @ B,
    "stencil": _pad3,
}


@pytest.mark.parametrize("name", sorted(REFS))
def test_bundled_programs_mean_what_numpy_says(name):
    p = program(name)
    xs = random_inputs(p, SIZES, np.random.default_rng(3))
    got = run(p, *xs)
    np.testing.assert_allclose(got, REFS[name](*xs), rtol=1e-4, atol=1e-5)


def test_layout_patterns():
    from mcl.lift.parser import parse
    x = np.arange(12, dtype=np.float32)
    p = parse("s = fun(x: float[12]) => join o transpose o split(3) $ x")
    np.testing.assert_array_equal(run(p, x), x.reshape(4, 3).T.ravel())
    p = parse("s = fun(x: float[12]) => reorderStride(4) $ x")
    # out[i] = in[(i mod 3) * 4 + i div 3]
    np.testing.assert_array_equal(run(p, x), [(i % 3) * 4 + i // 3 for i in range(12)])
    p = parse("s = fun(x: float[12]) => asScalar o asVector(4) $ x")
    np.testing.assert_array_equal(run(p, x), x)
    p = parse("s = fun(x: float[4]) => join o slide(3, 1) o pad(1, 1) $ x")
    np.testing.assert_array_equal(run(p, x[:4]), [0, 0, 1, 0, 1, 2, 1, 2, 3, 2, 3, 3])
