"""Fixtures of the compatibility tests: a working OpenCL device (PoCL on a CPU)."""

from __future__ import annotations

import pytest

from tests.opencl.conftest import _device_problem


@pytest.fixture
def pocl():
    """Skips the test when no OpenCL device can build and run a kernel here."""
    problem = _device_problem()
    if problem:
        pytest.skip(problem)
