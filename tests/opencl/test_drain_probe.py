"""The kernel of benchmarks/opencl/drain_probe.py (which times, on the GPU machine, the
same read by work-groups of longer and longer lives) reads what it claims, here on the
OpenCL device at hand: work-item t of group g sums element g * 256 * k + i * 256 + t of
each of its k steps."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "opencl"))
import drain_probe  # noqa: E402


@pytest.mark.parametrize("k", [1, 3])
def test_each_work_item_sums_its_steps_of_its_groups_chunk(opencl_device, k):
    import pyopencl as cl

    from mcl.opencl.device import runtime
    rt = runtime()
    local, groups = drain_probe.LOCAL, 4
    vecs = groups * local * k
    host = np.random.default_rng(2).uniform(0, 1, (vecs, 4)).astype(np.float32)
    src = cl.Buffer(rt.context, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR,
                    hostbuf=host)
    out = cl.Buffer(rt.context, cl.mem_flags.WRITE_ONLY, 4 * groups * local)
    prg = cl.Program(rt.context, drain_probe.SOURCE).build()
    prg.walk(rt.queue, (groups * local,), (local,), src, out, np.int32(k))
    got = np.empty(groups * local, np.float32)
    cl.enqueue_copy(rt.queue, got, out)
    want = host.sum(axis=1).reshape(groups, k, local).sum(axis=1).ravel()
    np.testing.assert_allclose(got, want, rtol=1e-5)
