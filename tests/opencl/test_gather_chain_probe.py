"""The kernels of benchmarks/opencl/gather_chain_probe.py (which times, on the GPU
machine, spmv_csr's vector rows with the element of x each non-zero multiplies chosen
five ways) compute what the probe checks them against, here on the OpenCL device at
hand: row r's sum of values[k] * x[c(k)] over its non-zeros, c as the variant picks."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks" / "opencl"))
import gather_chain_probe as probe  # noqa: E402

from mcl.lift.from_mcpl import reference_module  # noqa: E402

#: the example's reference.py, by its path (other tests import other examples' as
#: ``reference``)
reference = reference_module(probe.SPMV / "perfect.mcpl")


@pytest.mark.parametrize("kind", list(probe.COLUMNS))
def test_each_variant_sums_its_rows(opencl_device, kind):
    import pyopencl as cl

    from mcl.opencl.device import runtime
    rt = runtime()
    rows, size = 40, 1 << 10
    data = reference.inputs(np.random.default_rng(3), rows, 300, density=0.3)
    row_ptr, col_idx, values = data["rowPtr"], data["colIdx"], data["values"]
    x = np.random.default_rng(4).uniform(-1, 1, size).astype(np.float32)
    mf = cl.mem_flags

    def buf(a):
        return cl.Buffer(rt.context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)

    y = cl.Buffer(rt.context, mf.WRITE_ONLY, 4 * rows)
    prg = cl.Program(rt.context, probe.SOURCE.replace("COLUMN", probe.COLUMNS[kind])).build()
    groups = -(-rows // probe.ROWS_A_BLOCK)
    mul = 3
    cl.Kernel(prg, "spmv")(rt.queue, (groups * probe.WARP, probe.ROWS_A_BLOCK),
                           (probe.WARP, probe.ROWS_A_BLOCK), y, buf(row_ptr), buf(col_idx),
                           buf(np.arange(col_idx.size, dtype=np.int32)), buf(values),
                           buf(x), np.int32(rows), np.int32(mul), np.int32(size - 1))
    got = np.empty(rows, np.float32)
    cl.enqueue_copy(rt.queue, got, y)
    want = probe.expected(row_ptr, values, x, probe.columns(kind, col_idx, mul, size - 1))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
