"""The kernels of benchmarks/opencl/overlap_probe.py (which times them on the GPU
machine, for the target files' overlap_exponent) compute what they claim, here on
the OpenCL device at hand, and its fit recovers a known exponent."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "opencl"))
import overlap_probe as probe  # noqa: E402

N = 1 << 12


@pytest.mark.parametrize("q", [1.0, 2.8, 4.6])
def test_the_fit_recovers_the_exponent(q):
    points = [(1.0, c, (1.0 + c ** q) ** (1 / q)) for c in (0.5, 0.8, 1.0, 1.5, 2.5)]
    assert probe.fit_exponent(points) == pytest.approx(q, abs=0.05)
    assert probe.fit_exponent([]) is None


def test_the_kernels_compute_and_copy(opencl_device):
    import pyopencl as cl

    from mcl.opencl.device import runtime
    rt = runtime()
    prg = cl.Program(rt.context, probe.SOURCE).build()
    a, b = (cl.Buffer(rt.context, cl.mem_flags.READ_WRITE, 16 * N) for _ in range(2))
    src = np.arange(4 * N, dtype=np.float32) / N
    cl.enqueue_copy(rt.queue, b, src)
    out = np.empty(4 * N, np.float32)

    def run(name, items, local, k):
        cl.enqueue_fill_buffer(rt.queue, a, np.float32(-7), 0, 16 * N)
        cl.Kernel(prg, name)(rt.queue, (items,), (local,), a, b, np.int32(N), np.int32(k))
        cl.enqueue_copy(rt.queue, out, a)
        return out.copy()

    expect = src.copy()
    for _ in range(5):
        expect = expect * np.float32(0.999) + src
    assert np.allclose(run("fma_both", 256, 64, 5), expect, rtol=1e-5)
    # l[lid] = (lid, 1, 2, 3); the work-items add l[(lid + i) & 255] for i < 2
    lid = np.arange(N) % 256
    added = np.stack([lid + (lid + 1) % 256, np.full(N, 2), np.full(N, 4), np.full(N, 6)], 1)
    assert np.allclose(run("local_both", 512, 256, 2), src + added.ravel(), rtol=1e-5)
    for k in (1, 2, 4):
        assert np.array_equal(run("copy_blocks", N // k, 64, k), src)
    assert np.array_equal(run("copy_rounds", 256, 64, 1), src)
    for name in ("fma_alone", "local_alone", "no_copy_blocks"):
        assert (run(name, 256, 64 if name != "local_alone" else 256, 3) == -7).all()
