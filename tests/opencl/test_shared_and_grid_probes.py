"""Four probes of the GPU machine (benchmarks/opencl/shared_atomic_probe.py,
grid_balance_probe.py, histogram_data.py, outer_product_probe.py: timed on the GPU
machine) compute what they claim, here on the OpenCL device at hand: every shared-memory
update lands whatever the lanes' words, the grid-stride read sums every element once
whatever the grid, both histogram versions count each kind of data as numpy does, and
the outer products add up as numpy's."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "opencl"))
import grid_balance_probe  # noqa: E402
import histogram_data  # noqa: E402
import outer_product_probe  # noqa: E402
import shared_atomic_probe  # noqa: E402


@pytest.mark.parametrize("mode,k,hot", [(0, 1, None), (1, 4, None), (2, 8, None),
                                        (3, 1, False), (3, 1, True)])
def test_every_shared_update_lands(opencl_device, mode, k, hot):
    import pyopencl as cl

    from mcl.opencl.device import runtime
    rt = runtime()
    groups, local, iters = 4, shared_atomic_probe.LOCAL, 8
    mf = cl.mem_flags
    host = shared_atomic_probe._data(np.random.default_rng(1), groups * local * iters,
                                     bool(hot)) if hot is not None else np.zeros(1, np.uint8)
    data = cl.Buffer(rt.context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=host)
    out = cl.Buffer(rt.context, mf.READ_WRITE, 4 * 1024)
    cl.enqueue_copy(rt.queue, out, np.zeros(1024, np.int32))
    prg = cl.Program(rt.context, shared_atomic_probe.SOURCE).build()
    prg.probe(rt.queue, (groups * local,), (local,), out, data, np.int32(iters), np.int32(k),
              np.int32(mode))
    got = np.empty(1024, np.int32)
    cl.enqueue_copy(rt.queue, got, out)
    assert got.sum() == groups * local * iters
    if mode == 3:   # the words the data chose, each as often as the data chose it
        assert np.array_equal(got[:256], np.bincount(host, minlength=256))


@pytest.mark.parametrize("groups", [3, 7])
def test_the_grid_stride_read_sums_every_element_once(opencl_device, groups):
    import pyopencl as cl

    from mcl.opencl.device import runtime
    rt = runtime()
    n, local = 5000, grid_balance_probe.LOCAL
    host = np.random.default_rng(4).uniform(0, 1, (n, 4)).astype(np.float32)
    src = cl.Buffer(rt.context, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR,
                    hostbuf=host)
    out = cl.Buffer(rt.context, cl.mem_flags.WRITE_ONLY, 4 * groups * local)
    prg = cl.Program(rt.context, grid_balance_probe.SOURCE).build()
    prg.stride(rt.queue, (groups * local,), (local,), src, out, np.int32(n))
    got = np.empty(groups * local, np.float32)
    cl.enqueue_copy(rt.queue, got, out)
    assert got.sum(dtype=np.float64) == pytest.approx(host.sum(dtype=np.float64), rel=1e-5)


def test_histogram_versions_on_three_kinds_of_data(opencl_device, tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["histogram_data.py", "--n", "5000", "--repeats", "1",
                                      "--out", str(tmp_path)])
    assert histogram_data.main() == 0
    rows = json.loads((tmp_path / "histogram_data.json").read_text())["rows"]
    assert {(r["data"], r["version"]) for r in rows} == {
        (d, v) for d in ("uniform", "reference", "one bucket") for v in histogram_data.VERSIONS}
    assert all(r["correct"] and r["seconds"] > 0 and r["predicted_seconds"] for r in rows)


def test_the_outer_products_add_up(opencl_device):
    import pyopencl as cl

    from mcl.opencl.device import runtime
    rt = runtime()
    items, steps, s, tm, tn = 64, 5, np.float32(0.999), 2, 3
    prg = cl.Program(rt.context, outer_product_probe.SOURCE).build(
        options=[f"-DTM={tm}", f"-DTN={tn}"])
    out = cl.Buffer(rt.context, cl.mem_flags.WRITE_ONLY, 4 * items)
    prg.outer(rt.queue, (items,), (items,), out, np.int32(steps), s)
    got = np.empty(items, np.float32)
    cl.enqueue_copy(rt.queue, got, out)
    g = np.arange(items, dtype=np.float64)[:, None]
    a = g * 1e-7 + np.arange(tm)
    b = g * 2e-7 - np.arange(tn)
    acc = np.zeros((items, tm, tn))
    for _ in range(steps):
        acc += a[:, :, None] * b[:, None, :]
        a, b = a * float(s) + 0.5, b * float(s) - 0.25
    np.testing.assert_allclose(got, acc.sum(axis=(1, 2)), rtol=1e-4)
