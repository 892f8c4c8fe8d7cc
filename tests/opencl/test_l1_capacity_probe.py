"""The kernel of benchmarks/opencl/l1_capacity_probe.py (which counts, under ncu on the
GPU machine, what an SM's L1 keeps of a thread-per-row walk) sums what it claims, here
on the OpenCL device at hand: each work-item its row of every array, with and without
local memory taken."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "opencl"))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "fidelity"))
import l1_capacity_probe  # noqa: E402


@pytest.mark.parametrize("arrays, pad", [(1, 0), (3, 64)])
def test_the_walk_sums_each_row_of_every_array(opencl_device, arrays, pad):
    import pyopencl as cl

    from mcl.opencl.device import runtime
    rt = runtime()
    prg = cl.Program(rt.context, l1_capacity_probe.SOURCE).build(
        options=[f"-DARRAYS={arrays}", f"-DPAD={pad}"])
    n, row, stride = 64, 40, 64 * 40 + 8
    host = np.random.default_rng(1).uniform(0, 1, arrays * stride).astype(np.float32)
    a = cl.Buffer(rt.context, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR,
                  hostbuf=host)
    out = cl.Buffer(rt.context, cl.mem_flags.WRITE_ONLY, 4 * n)
    cl.Kernel(prg, "walk")(rt.queue, (n,), (16,), a, out, np.int32(row), np.int64(stride))
    got = np.empty(n, np.float32)
    cl.enqueue_copy(rt.queue, got, out)
    want = sum(host[k * stride:k * stride + n * row].reshape(n, row).sum(axis=1)
               for k in range(arrays))
    np.testing.assert_allclose(got, want, rtol=1e-5)
