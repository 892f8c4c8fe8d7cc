"""Fixtures of the OpenCL tests: the leaf-level examples and a device that can build."""

from __future__ import annotations

import functools
import runpy
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
LEAVES = ("fermi", "hopper", "xeon_phi", "cpu")


def leaf_examples() -> list[Path]:
    """Example files whose name starts with a leaf level (hopper_v1.mcpl, fermi.mcpl, ...)."""
    return sorted(f for f in EXAMPLES.glob("*/*.mcpl")
                  if f.stem.split("_v")[0] in LEAVES)


def reference(file: Path) -> dict:
    return runpy.run_path(str(file.parent / "reference.py"))


@functools.cache
def _device_problem() -> str | None:
    """None if an OpenCL device builds and runs a trivial kernel, else why not."""
    try:
        import numpy as np
        import pyopencl as cl

        from mcl.diagnostics import McplError
        from mcl.opencl.device import runtime
        rt = runtime()
        prog = cl.Program(rt.context, "__kernel void f(__global int *a) { a[0] = 7; }").build()
        buf = cl.Buffer(rt.context, cl.mem_flags.READ_WRITE, 4)
        prog.f(rt.queue, (1,), None, buf)
        out = np.zeros(1, np.int32)
        cl.enqueue_copy(rt.queue, out, buf)
        return None if out[0] == 7 else "the OpenCL device computes wrong results"
    except (McplError, cl.Error, RuntimeError) as e:  # pragma: no cover - depends on the machine
        first = [ln for ln in str(e).splitlines() if "error" in ln.lower()][:1]
        return f"no working OpenCL device: {first[0] if first else e}"


@pytest.fixture
def opencl_device():
    """Skips the test when no OpenCL device can build and run a kernel here."""
    problem = _device_problem()
    if problem:
        pytest.skip(problem)
