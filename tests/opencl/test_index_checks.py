"""Indices the data choose, checked as the kernel runs (mcl.opencl.index_checks).

``x[colIdx[k]]`` outside x killed PoCL's process (a segmentation fault) and on a GPU
read another array's elements without a word. The kernels mcl.compile launches check
such an index against its dimension; one outside fails the call with the access's
file, line and column, its index and the dimension's extent. The checks run on PoCL
here; the GPU runs the same code (tests/opencl/test_run_command.py on NVIDIA's
driver)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import mcl
from mcl.diagnostics import McplError
from mcl.opencl.generate import generate
from tests.opencl.conftest import EXAMPLES

KERNELS = EXAMPLES.parent / "tests" / "opencl" / "kernels"


def _csr(rows: int, per_row: int, cols: int):
    row_ptr = np.arange(0, rows * per_row + 1, per_row, dtype=np.int32)
    col_idx = (np.arange(rows * per_row) * 7 % cols).astype(np.int32)
    values = np.arange(1, rows * per_row + 1, dtype=np.float32) / 8
    x = np.arange(cols, dtype=np.float32)
    return row_ptr, col_idx, values, x


def _expected(row_ptr, col_idx, values, x):
    return np.array([sum(values[k] * x[col_idx[k]] for k in range(row_ptr[r], row_ptr[r + 1]))
                     for r in range(len(row_ptr) - 1)], np.float32)


@pytest.fixture
def spmv(opencl_device):
    return mcl.compile(EXAMPLES / "spmv_csr" / "perfect.mcpl", "hopper")


def _error(call) -> tuple[str, object]:
    with pytest.raises(McplError) as e:
        call()
    d = e.value.diagnostics[0]
    return d.message, d


def test_a_gathered_element_outside_its_array_fails_the_call(spmv):
    row_ptr, col_idx, values, x = _csr(8, 2, 16)
    args = dict(nrRows=8, nrCols=16, nnz=16, rowPtr=row_ptr, values=values, x=x)
    assert np.allclose(spmv(colIdx=col_idx, **args)["y"], _expected(row_ptr, col_idx, values, x))
    bad = col_idx.copy()
    bad[5] = 1_000_000         # far outside: PoCL's process died of it
    message, d = _error(lambda: spmv(colIdx=bad, **args))
    assert d.code == "opencl-data-out-of-bounds"
    assert (d.span.line, d.span.column) == (18, 26)     # x[colIdx[k]] in perfect.mcpl
    assert "x[colIdx[k]] reached index 1,000,000, where x has 16 elements (in the work-item " \
        "of OpenCL global id (2, 0)); the index comes from the data" in message
    bad[5] = -1
    assert "reached index -1, where x has 16 elements" in _error(
        lambda: spmv(colIdx=bad, **args))[0]
    # the record is the launch's own: right data run right again
    assert np.allclose(spmv(colIdx=col_idx, **args)["y"], _expected(row_ptr, col_idx, values, x))


def test_a_loop_whose_bounds_the_data_choose_is_checked_at_each_access(spmv):
    """rowPtr's last entry past nnz: k runs beyond values and colIdx."""
    row_ptr, col_idx, values, x = _csr(8, 2, 16)
    row_ptr[-1] = 20
    message, d = _error(lambda: spmv(nrRows=8, nrCols=16, nnz=16, rowPtr=row_ptr,
                                     colIdx=col_idx, values=values, x=x))
    # the work-item's last index outside: k runs to 19
    assert re.search(r"reached index 1[6-9], where", message), message
    assert "has 16 elements (in the work-item of OpenCL global id (7, 0))" in message
    assert any(f"{a}[k] reached" in message for a in ("values", "colIdx"))


def test_an_update_of_a_bin_the_data_choose(opencl_device):
    """histogram: atomicAdd(hist[input[i]], 1) with a value beyond the buckets."""
    k = mcl.compile(EXAMPLES / "histogram" / "perfect.mcpl", "hopper")
    data = (np.arange(1000) % 256).astype(np.int32)
    hist = np.zeros(256, np.int32)
    assert (k(n=1000, nrBuckets=256, input=data, hist=hist)["hist"]
            == np.bincount(data, minlength=256)).all()
    data[999] = 256
    message, d = _error(lambda: k(n=1000, nrBuckets=256, input=data, hist=hist))
    assert "hist[input[i]] reached index 256, where hist has 256 elements (in the work-item " \
        "of OpenCL global id (" in message
    with pytest.raises(McplError, match="hist has 256 elements"):
        k.time(repeat=1, n=1000, nrBuckets=256, input=data, hist=hist)


def test_an_index_of_a_second_dimension_and_of_a_helper(opencl_device):
    k = mcl.compile(KERNELS / "gather.mcpl")
    n, m = 40, 7
    idx = (np.arange(n) % m).astype(np.int32)
    x = np.arange(m, dtype=np.float32)
    grid = np.arange(n * m, dtype=np.float32).reshape(n, m)
    out = k(n=n, m=m, idx=idx, x=x, grid=grid)["out"]
    assert np.allclose(out, x[idx] + grid[np.arange(n), idx // 2])
    idx[33] = 7             # x[7] is outside x; grid[33, 3] is inside
    message, d = _error(lambda: k(n=n, m=m, idx=idx, x=x, grid=grid))
    assert d.span.line == 8 and "x[j] reached index 7, where x has 7 elements (in the " \
        "work-item of OpenCL global id (33, 0)); the analyses do not follow the indices of " \
        "a helper function" in message
    x = np.arange(16, dtype=np.float32)
    idx[33] = 14            # x[14] is inside a larger x; grid[33, 7] is not
    message, d = _error(lambda: k(n=n, m=16, idx=idx, x=x,
                                  grid=np.zeros((n, 7), np.float32)))
    assert "wrong shape" in message or "shape" in message   # the shapes disagree first
    grid = np.arange(n * 16, dtype=np.float32).reshape(n, 16)
    idx[33] = 40
    message, d = _error(lambda: k(n=n, m=16, idx=idx, x=np.zeros(16, np.float32), grid=grid))
    assert "reached index" in message


def test_only_the_kernels_mcl_compile_launches_check(opencl_device):
    """mcl gen's kernel is the kernel as written, and so is one compiled with
    check_writes=False; a kernel whose indices the data do not choose is unchanged."""
    path = EXAMPLES / "spmv_csr" / "perfect.mcpl"
    for k in (generate(path, "hopper")[0], mcl.compile(path, "hopper", check_writes=False)):
        assert "mcl_checked_index" not in k.source and "mcl_fault" not in k.source
        assert all(a.kind != "fault" for a in k.plan.arguments)
    checked = mcl.compile(path, "hopper")
    assert checked.source.count("mcl_checked_index(") == 4  # the function and 3 accesses
    assert checked.plan.arguments[-1].kind == "fault"
    assert "index_sites" not in checked.plan.to_json()
    for version in ("vector_add/hopper_v1", "matmul/hopper_v12"):
        path = EXAMPLES / f"{version}.mcpl"
        assert mcl.compile(path).source == generate(path)[0].source


def test_a_long_index_and_a_work_item_that_returns_early(opencl_device):
    """x[j] with j a long: checked in 64 bits; a work-item that returns right after its
    index outside (j >= m) still records it."""
    k = mcl.compile(KERNELS / "gather_return.mcpl")
    assert "x[mcl_checked_index_long(j, m, " in k.source
    n, m = 40, 9
    idx = (np.arange(n) % m).astype(np.int32)
    x = np.arange(1, m + 1, dtype=np.float32)
    out = np.zeros(n, np.float32)
    got = k(n=n, m=m, idx=idx, x=x, out=out)["out"]
    assert np.allclose(got, np.where(idx == 0, x[idx], x[idx] + x[idx - 1]))
    idx[20] = 9
    message, d = _error(lambda: k(n=n, m=m, idx=idx, x=x, out=out))
    assert d.span.line == 17 and "x[j] reached index 9, where x has 9 elements (in the " \
        "work-item of OpenCL global id (20, 0))" in message
    idx[20] = 3
    idx[3] = 1 << 30
    message, d = _error(lambda: k(n=n, m=m, idx=idx, x=x, out=out))
    assert "x[j] reached index 1,073,741,824, where x has 9 elements" in message
    idx[3] = -5             # past the return: the later int index is recorded first
    message, d = _error(lambda: k(n=n, m=m, idx=idx, x=x, out=out))
    assert "x[idx[i] - 1] reached index -6, where x has 9 elements" in message
