"""The kernels of benchmarks/opencl/phase_probe.py and barrier_probe.py (which time
them on the GPU machine: whether a block's barriers keep its traffic and arithmetic
apart, and what a chain of barriers costs) compute what they claim, here on the
OpenCL device at hand: the steps and the tree give their values, the kernels timed
'alone' store nothing."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "opencl"))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "fidelity"))
import barrier_probe  # noqa: E402
import phase_probe  # noqa: E402

GROUPS = 4
LOCAL, PER = phase_probe.LOCAL, phase_probe.PER


def test_the_phase_kernels_compute_what_they_claim(opencl_device):
    import pyopencl as cl

    from mcl.opencl.device import runtime
    rt = runtime()
    prg = cl.Program(rt.context, phase_probe.SOURCE).build()
    n = GROUPS * LOCAL * PER
    src = (np.arange(4 * n, dtype=np.float32) + 1) / n
    a, b = (cl.Buffer(rt.context, cl.mem_flags.READ_WRITE, 16 * n) for _ in range(2))
    cl.enqueue_copy(rt.queue, b, src)
    out = np.empty(4 * n, np.float32)

    def run(name, k):
        cl.enqueue_fill_buffer(rt.queue, a, np.float32(-7), 0, 16 * n)
        cl.Kernel(prg, name)(rt.queue, (GROUPS * LOCAL,), (LOCAL,), a, b, np.int32(k))
        cl.enqueue_copy(rt.queue, out, a)
        return out.copy()

    stepped = src.copy()
    for _ in range(3):
        stepped = stepped * np.float32(0.999) + src
    for name in ("barrier_both", "free_both"):
        assert np.allclose(run(name, 3), stepped, rtol=1e-5)
    assert np.array_equal(run("copy", 0), src)
    # each work-group's values divided by the sum of their first two lanes
    rows = src.reshape(GROUPS, PER * LOCAL, 4)
    totals = rows[:, :, 0].sum(1) + rows[:, :, 1].sum(1)
    assert np.allclose(run("tree_both", 8), (rows / totals[:, None, None]).ravel(), rtol=1e-4)
    for name in ("barrier_alone", "free_alone", "tree_alone"):
        assert (run(name, 3) == -7).all()


@pytest.mark.parametrize("local", [64, 256])
def test_the_barrier_kernels_store_nothing(opencl_device, local):
    import pyopencl as cl

    from mcl.opencl.device import runtime
    rt = runtime()
    prg = cl.Program(rt.context, barrier_probe.SOURCE).build(
        options=[f"-DLOCAL={local}", f"-DLOG2={local.bit_length() - 1}"])
    out = cl.Buffer(rt.context, cl.mem_flags.READ_WRITE, 4 * local * GROUPS)
    got = np.empty(local * GROUPS, np.float32)
    for name in ("tree", "bare"):
        cl.enqueue_fill_buffer(rt.queue, out, np.float32(-7), 0, 4 * local * GROUPS)
        cl.Kernel(prg, name)(rt.queue, (local * GROUPS,), (local,), out, np.int32(16))
        cl.enqueue_copy(rt.queue, got, out)
        assert (got == -7).all(), name
