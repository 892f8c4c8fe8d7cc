"""The examples of examples/skel agree with their numpy references on 1-3 devices."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "skel"


def load(name):
    sys.path.insert(0, str(EXAMPLES))
    try:
        spec = importlib.util.spec_from_file_location(f"skel_example_{name}",
                                                      EXAMPLES / f"{name}.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod
    finally:
        sys.path.remove(str(EXAMPLES))


@pytest.mark.parametrize("name,size,rtol,atol", [
    ("dot_product", 5001, 1e-4, 0), ("saxpy", 3001, 1e-6, 0),
    ("gaussian_blur", 45, 1e-5, 1e-6), ("matmul", 67, 1e-4, 1e-5)])
def test_example(ndev, name, size, rtol, atol):
    mod = load(name)
    data = mod.inputs(size)
    assert np.allclose(mod.run(*data), mod.reference(*data), rtol=rtol, atol=atol)


def test_heat(ndev):
    mod = load("heat")
    (t,) = mod.inputs(40)
    assert np.allclose(mod.run(t, 30), mod.reference(t, 30), atol=1e-3)


def test_mandelbrot(ndev):
    mod = load("mandelbrot")
    got, want = mod.run(61, 47), mod.reference(61, 47)
    assert (got != want).mean() < 0.01 and got.max() == mod.MAX_ITER


def test_saxpy_mcpl(ndev):
    mod = load("saxpy")
    data = mod.inputs(100)
    assert np.allclose(mod.run(*data, mcpl=True), mod.reference(*data))
