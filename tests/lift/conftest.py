"""Helpers for the Lift tests: the bundled programs and an OpenCL device that can
build kernels (PoCL on CI; the tests that run kernels skip without one)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import pytest

PROGRAMS = Path(__file__).resolve().parents[2] / "mcl" / "lift" / "programs"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@lru_cache(maxsize=1)
def opencl_runtime():
    """A runtime whose compiler works, or None."""
    try:
        from mcl.opencl.device import build_program, runtime
        rt = runtime()
        build_program(rt.context, "kernel void k(global float* x) { x[0] = 1.0f; }")
        return rt
    except Exception:  # noqa: BLE001 - any failure means: no usable device here
        return None


@pytest.fixture
def rt():
    r = opencl_runtime()
    if r is None:
        pytest.skip("no OpenCL device that can build kernels")
    return r


def program(name: str):
    from mcl.lift.parser import parse_file
    return parse_file(PROGRAMS / f"{name}.lift")


def derived(kernel: str, sizes: dict | None = None):
    """The Lift program derived from examples/<kernel>/perfect.mcpl, sizes bound
    (default: the kernel's example values)."""
    from mcl.lift.compare import default_sizes
    from mcl.lift.from_mcpl import derive
    from mcl.lift.ir import bind_sizes
    path = EXAMPLES / kernel / "perfect.mcpl"
    sizes = sizes or default_sizes(path)
    return bind_sizes(derive(path, None, constants=sizes).program, sizes)


def convolution_reference(inp, filt, h, w, fh, fw):
    """examples/convolution in numpy: the mean of each fh x fw window times the filter."""
    import numpy as np
    win = np.lib.stride_tricks.sliding_window_view(inp.astype(np.float64), (fh, fw))
    return np.einsum("ijyx,yx->ij", win[:h, :w], filt.astype(np.float64)) / (fh * fw)
