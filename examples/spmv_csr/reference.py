"""Reference for the spmv_csr examples: y = A x, A sparse in CSR form.

Parameters of every version (in this order): nrRows, nrCols, nnz (sizes,
inputs); y: float32[nrRows] (output); rowPtr: int32[nrRows + 1],
colIdx: int32[nnz], values: float32[nnz], x: float32[nrCols] (inputs).
rowPtr[0] = 0, rowPtr[nrRows] = nnz, non-decreasing; the non-zeros of row r
are k in rowPtr[r] .. rowPtr[r + 1] - 1, with column colIdx[k].
"""

from __future__ import annotations

import numpy as np

KERNEL = "spmv_csr"
INPUTS = ("rowPtr", "colIdx", "values", "x")
OUTPUTS = ("y",)

#: Small sizes for tests (`density` is not a kernel parameter: `inputs` uses it
#: to choose nnz). Includes empty rows, rows longer than 64 and a 1 x 1 matrix.
SIZES = [
    {"nrRows": 1, "nrCols": 1, "density": 1.0},
    {"nrRows": 37, "nrCols": 100, "density": 0.1},
    {"nrRows": 100, "nrCols": 37, "density": 0.3},
    {"nrRows": 64, "nrCols": 1000, "density": 0.2},
    {"nrRows": 1000, "nrCols": 2000, "density": 0.01},
]

#: Table III: 65536 x 131072, uniformly random at density 0.001 (about 8.6e6
#: non-zeros, ~131 per row).
PAPER_SIZES = [{"nrRows": 65536, "nrCols": 131072, "density": 0.001}]

#: The sizes that grow with the problem (halved together to time a version on smaller
#: sizes first: mcl.opencl.sizing.size_ladder).
SCALE = ("nrRows", "nrCols")

DIVISIBLE_BY: dict = {}

TOLERANCE = {"rtol": 1e-4, "atol": 1e-4}


def inputs(rng: np.random.Generator, nrRows: int, nrCols: int,  # noqa: N803
           density: float = 0.001, nnz: int | None = None) -> dict:
    """A random CSR matrix: each row gets a binomial number of distinct,
    sorted random columns (mean nrCols * density); values and x in [-1, 1)."""
    if nnz is None:
        counts = rng.binomial(nrCols, density, nrRows)
    else:  # spread a given nnz over the rows
        counts = np.bincount(rng.integers(0, nrRows, nnz), minlength=nrRows)
        counts = np.minimum(counts, nrCols)
    row_ptr = np.zeros(nrRows + 1, dtype=np.int64)
    np.cumsum(counts, out=row_ptr[1:])
    total = int(row_ptr[-1])
    col_idx = np.empty(total, dtype=np.int32)
    for r in range(nrRows):
        c = int(counts[r])
        if c:
            cols = rng.choice(nrCols, c, replace=False) if c * 4 > nrCols else \
                np.unique(rng.integers(0, nrCols, c * 2))[:c]
            if len(cols) < c:  # rare: too few distinct draws; fall back
                cols = rng.choice(nrCols, c, replace=False)
            col_idx[row_ptr[r]:row_ptr[r + 1]] = np.sort(cols)
    return {
        "nrRows": nrRows, "nrCols": nrCols, "nnz": total,
        "y": np.zeros(nrRows, dtype=np.float32),
        "rowPtr": row_ptr.astype(np.int32),
        "colIdx": col_idx,
        "values": rng.uniform(-1.0, 1.0, total).astype(np.float32),
        "x": rng.uniform(-1.0, 1.0, nrCols).astype(np.float32),
    }


def reference(nrRows: int, nrCols: int, nnz: int, rowPtr: np.ndarray,  # noqa: N803
              colIdx: np.ndarray, values: np.ndarray, x: np.ndarray, **_) -> dict:  # noqa: N803
    assert rowPtr.shape == (nrRows + 1,) and int(rowPtr[-1]) == nnz
    products = values.astype(np.float64) * x.astype(np.float64)[colIdx]
    y = np.zeros(nrRows, dtype=np.float64)
    rows = np.repeat(np.arange(nrRows), np.diff(rowPtr))
    np.add.at(y, rows, products)
    return {"y": y.astype(np.float32)}


def flops(nnz: int, **_) -> int:
    return 2 * nnz


def bytes_moved(nrRows: int, nnz: int, **_) -> int:
    """CSR arrays and y once, x once per non-zero (an upper bound)."""
    return 4 * (nrRows + 1) + 8 * nnz + 4 * nnz + 4 * nrRows
