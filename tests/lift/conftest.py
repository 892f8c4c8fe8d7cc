"""Helpers for the Lift tests: the bundled programs and an OpenCL device that can
build kernels (PoCL on CI; the tests that run kernels skip without one)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import pytest

PROGRAMS = Path(__file__).resolve().parents[2] / "mcl" / "lift" / "programs"


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
