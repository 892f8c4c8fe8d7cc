"""The held-out kernels of the fidelity harness (benchmarks/fidelity/heldout_kernels/),
written as a new user would write them, compute what their reference.py says: each
run by `mcl run` on the OpenCL device at small sizes that do not divide its blocks or
tiles (nbody's bodies must fill its blocks of 256)."""

from __future__ import annotations

import pytest

from tests.opencl.conftest import EXAMPLES

HELDOUT = EXAMPLES.parent / "benchmarks" / "fidelity" / "heldout_kernels"

SIZES = {
    "conv3x3": {"h": 37, "w": 70}, "dot": {"n": 5000}, "hist256": {"n": 7001},
    "jacobi2d": {"n": 37, "m": 70}, "matmul_tiled": {"n": 37, "m": 45, "p": 19},
    "matvec": {"n": 300, "m": 333}, "nbody": {"n": 512}, "rowsum": {"n": 37, "m": 300},
    "saxpy4": {"n": 5003}, "scan_blocks": {"n": 1000}, "softmax_rows": {"n": 37, "m": 300},
    "stencil1d": {"n": 5003}, "transpose_naive": {"rows": 37, "cols": 70},
    "transpose_padded": {"rows": 37, "cols": 70},
    "transpose_shared": {"rows": 37, "cols": 70},
}


def test_every_held_out_kernel_has_sizes_here():
    assert {p.name for p in HELDOUT.iterdir() if (p / "hopper.mcpl").exists()} == set(SIZES)


@pytest.mark.parametrize("kernel", sorted(SIZES))
def test_a_held_out_kernel_matches_its_reference(opencl_device, run_cli, kernel):
    sets = [a for name, v in SIZES[kernel].items() for a in ("--set", f"{name}={v}")]
    code, out, err = run_cli("run", HELDOUT / kernel / "hopper.mcpl", *sets, "--repeat", "1")
    assert code == 0, (out, err)
    assert "matches the reference" in out and "DIFFERS FROM" not in out, out
