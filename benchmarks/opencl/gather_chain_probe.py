"""Whether a gather that waits for its index adds its time to the rest of a vector-CSR
spmv (spmv_csr gpu_v1: a warp a row, lane ``k = start + lane`` stepping by 32, a tree
of the partial sums in local memory), or overlaps it. The same kernel on reference.py's
matrix (65536 x 131072, density 0.001), the element of ``x`` each non-zero multiplies
chosen five ways:

* ``dependent``: ``x[(colIdx[k] * mul) & mask]``, the address read from memory in the
  same iteration (spmv's gather: the warp waits for ``colIdx[k]``, then for ``x``);
* ``hashed``: ``x[mix(k) & mask]``, as spread, its address computed (``colIdx[k]`` still
  loaded and summed apart): nothing to wait for before the gather;
* ``in order``: ``x[k & mask]``, a line or two a warp, computed;
* ``dependent in order``: ``x[ordered[k] & mask]``, ``ordered`` holding k: the lines of
  ``in order``, their address read from memory in the same iteration (``colIdx[k]``
  loaded beside it);
* ``none``: no gather, ``values[k]`` alone (``colIdx[k]`` still loaded and summed).

and ``x`` 32 kB (every gather an L1 hit), 512 kB (the example's, part of it in the L1)
and 8 MB (the L2's). The time of each beside ``none``'s says what a gather costs and
whether waiting for its index makes that cost add to the streams'.

    python benchmarks/opencl/gather_chain_probe.py --out DIR
    python benchmarks/opencl/gather_chain_probe.py --device cpu   # checks the kernels

Exits 2 without the device asked for.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from l2_request_probe import MIX_SOURCE, mix  # noqa: E402
from probe_timing import median_time, probe_setup, save  # noqa: E402

ROWS_A_BLOCK = 8
WARP = 32

#: the spmv_csr example, whose reference.py makes the matrix
SPMV = Path(__file__).resolve().parents[2] / "examples" / "spmv_csr"

#: each variant's step; ``isum`` keeps colIdx's load alive where the address does not
#: need it
COLUMNS = {
    "dependent": "sum += values[k] * x[(colIdx[k] * mul) & mask];",
    "hashed": "isum += colIdx[k]; sum += values[k] * x[mix((uint)k) & (uint)mask];",
    "in order": "isum += colIdx[k]; sum += values[k] * x[k & mask];",
    "dependent in order": "isum += colIdx[k]; sum += values[k] * x[ordered[k] & mask];",
    "none": "isum += colIdx[k]; sum += values[k];",
}

SOURCE = MIX_SOURCE + r"""
__kernel void spmv(__global float* y, __global const int* rowPtr,
                   __global const int* colIdx, __global const int* ordered,
                   __global const float* values, __global const float* x,
                   int nrRows, int mul, int mask) {
  __local float l_sum[ROWS][32];
  int lane = get_local_id(0), rr = get_local_id(1);
  int r = get_group_id(0) * ROWS + rr;
  float sum = 0.0f;
  int isum = 0;
  if (r < nrRows) {
    for (int k = rowPtr[r] + lane; k < rowPtr[r + 1]; k += 32) {
      COLUMN
    }
  }
  l_sum[rr][lane] = sum + (float)isum * 0.0f;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = 16; s > 0; s >>= 1) {
    if (lane < s) l_sum[rr][lane] += l_sum[rr][lane + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lane == 0 && r < nrRows) y[r] = l_sum[rr][0];
}
""".replace("ROWS", str(ROWS_A_BLOCK))

#: floats of x: every gather an L1 hit, the example's 512 kB, the L2's 8 MB
X_SIZES = (1 << 13, 1 << 17, 1 << 21)


def columns(kind: str, col_idx: np.ndarray, mul: int, mask: int) -> np.ndarray:
    """The element of x each non-zero multiplies (-1: none), as the kernel picks it."""
    k = np.arange(col_idx.size, dtype=np.int64)
    if kind == "dependent":
        return (col_idx.astype(np.int64) * mul) & mask
    if kind == "hashed":
        return (mix(k) & np.uint64(mask)).astype(np.int64)
    if kind in ("in order", "dependent in order"):
        return k & mask
    return np.full(col_idx.size, -1, np.int64)


def expected(row_ptr, values, x, cols) -> np.ndarray:
    terms = np.where(cols < 0, values, values * x[np.maximum(cols, 0)]).astype(np.float64)
    sums = np.concatenate([[0.0], np.cumsum(terms)])
    return (sums[row_ptr[1:]] - sums[row_ptr[:-1]]).astype(np.float32)


def main() -> int:
    found = probe_setup(__doc__, "gather_chain_probe", 20, cpu_twin=True)
    if found is None:
        return 2
    args, dev, ctx, q = found
    import pyopencl as cl

    from mcl.versions.sizes import load_reference
    reference = load_reference(SPMV)

    cpu = args.device == "cpu"
    rows, cols = (512, 4096) if cpu else (65536, 131072)
    data = reference["inputs"](np.random.default_rng(1), rows, cols,
                            density=0.03 if cpu else 0.001)
    row_ptr, col_idx = data["rowPtr"], data["colIdx"]
    values = data["values"]
    nnz = col_idx.size
    prgs = {kind: cl.Program(ctx, SOURCE.replace("COLUMN", code)).build()
            for kind, code in COLUMNS.items()}
    mf = cl.mem_flags

    def buf(a):
        return cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)

    d_row_ptr, d_col_idx, d_values = buf(row_ptr), buf(col_idx), buf(values)
    d_ordered = buf(np.arange(nnz, dtype=np.int32))
    d_y = cl.Buffer(ctx, mf.WRITE_ONLY, 4 * rows)
    groups = -(-rows // ROWS_A_BLOCK)
    gsize, lsize = (groups * WARP, ROWS_A_BLOCK), (WARP, ROWS_A_BLOCK)
    result: dict = {"device": dev.name, "driver": dev.driver_version, "nrRows": rows,
                    "nnz": int(nnz), "rows": []}
    rng = np.random.default_rng(2)
    for size in X_SIZES if not cpu else (1 << 8, 1 << 12, 1 << 14):
        x = rng.uniform(-1, 1, size).astype(np.float32)
        d_x = buf(x)
        mul = max(1, size // cols) | 1
        for kind, prg in prgs.items():
            knl = cl.Kernel(prg, "spmv")
            argv = [d_y, d_row_ptr, d_col_idx, d_ordered, d_values, d_x, np.int32(rows),
                    np.int32(mul), np.int32(size - 1)]
            knl(q, gsize, lsize, *argv).wait()
            got = np.empty(rows, np.float32)
            cl.enqueue_copy(q, got, d_y)
            want = expected(row_ptr, values, x, columns(kind, col_idx, mul, size - 1))
            if not np.allclose(got, want, rtol=1e-3, atol=1e-3):
                print(f"{kind}, x of {size} floats: wrong sums", file=sys.stderr)
                return 1
            t = median_time(q, knl, gsize, lsize, argv, args.repeats)
            result["rows"].append({"columns": kind, "x_floats": size, "seconds": t})
            print(f"x {size * 4 / 1024:6.0f} kB  {kind:18s}: {t * 1e6:8.1f} us", flush=True)
    save(args.out, "gather_chain_probe.json", result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
