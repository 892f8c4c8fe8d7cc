"""Helpers of the mcl versions tests: folders of versions copied from examples/ (with
their reference.py) into a temporary folder, where tests may plant broken versions."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def copy_versions(dest: Path, kernel: str, names: list[str], reference: bool = True) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    for n in names:
        shutil.copy(EXAMPLES / kernel / f"{n}.mcpl", dest / f"{n}.mcpl")
    if reference:
        shutil.copy(EXAMPLES / kernel / "reference.py", dest / "reference.py")
    return dest


def device_problem() -> str | None:
    """None if the default OpenCL device builds a trivial kernel, else why not."""
    try:
        from mcl.opencl.device import build_program, runtime
        build_program(runtime(None).context, "__kernel void f(__global float *a) { a[0] = 1; }")
    except Exception as e:  # noqa: BLE001
        return str(e).splitlines()[0][:200]
    return None


_PROBLEM = device_problem()
needs_device = pytest.mark.skipif(_PROBLEM is not None,
                                  reason=f"the OpenCL device cannot build kernels: {_PROBLEM}")
