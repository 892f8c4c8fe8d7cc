"""What spmv_csr's gathers cost: every version (translated to hopper) on reference.py's
matrix (65536 x 131072, density 0.001: each row about 131 columns drawn at random, so a
warp's ``x[colIdx[k]]`` touches about 32 lines), and on the same matrix with its column
indices replaced: in order (``colIdx[k] = k mod nrCols``: a warp's gather reads
neighbouring words, one or two lines, still after the load of its indices) and all one
column (every lane the same word). The values, the row pointers and the traffic of
``values`` and ``colIdx`` stay; what changes is what ``x[colIdx[k]]`` asks of the L1
and the L2. Each version is checked against numpy (reference.py's product on the same
arrays), then timed behind mcl.opencl.conditions.keep_awake (best of --repeats),
beside its predicted time at --level (which takes the columns as drawn at random).

    python benchmarks/opencl/spmv_data.py --out DIR [--device NVIDIA]

Exits 2 without an OpenCL device.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from version_timing import predicted_times, timed_row  # noqa: E402

VERSIONS = ("perfect", "gpu_v1", "nvidia_v1", "hopper_v1")
SIZES = {"nrRows": 65536, "nrCols": 131072}


def columns(kind: str, col_idx: np.ndarray, nr_cols: int) -> np.ndarray:
    if kind == "random":
        return col_idx
    if kind == "in order":
        return (np.arange(col_idx.size, dtype=np.int64) % nr_cols).astype(np.int32)
    return np.zeros_like(col_idx)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path)
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--device", default=None, help="OpenCL device (default: MCL_DEVICE)")
    ap.add_argument("--level", default="h200", help="predict at this level (default h200)")
    ap.add_argument("--rows", type=int, default=SIZES["nrRows"], help="rows (default 65536)")
    args = ap.parse_args()
    import mcl
    from mcl.versions.sizes import load_reference
    reference = load_reference(ROOT / "examples" / "spmv_csr")

    data = reference["inputs"](np.random.default_rng(1), args.rows, SIZES["nrCols"])
    sizes = {"nrRows": args.rows, "nrCols": SIZES["nrCols"], "nnz": len(data["colIdx"])}
    paths = {v: ROOT / "examples" / "spmv_csr" / f"{v}.mcpl" for v in VERSIONS}
    try:
        # as mcl gen writes them: without the run-time index checks (index_check_cost.py)
        kernels = {v: mcl.compile(p, "hopper", device=args.device, check_writes=False)
                   for v, p in paths.items()}
    except Exception as e:  # no device, or no driver
        print(f"spmv_data: {e}", file=sys.stderr)
        return 2
    predicted = predicted_times(paths, args.level, sizes)
    rows = []
    for kind in ("random", "in order", "one column"):
        arrays = dict(data, colIdx=columns(kind, data["colIdx"], SIZES["nrCols"]))
        arrays = {k: v for k, v in arrays.items() if isinstance(v, np.ndarray)}
        want = reference["reference"](**sizes, **arrays)["y"]
        for v, k in kernels.items():
            got = k(**sizes, **arrays)["y"]
            ok = bool(np.allclose(got, want, rtol=1e-3, atol=1e-3))
            rows.append(timed_row(k, v, predicted, args.repeats, ok, {"columns": kind},
                                  **sizes, **arrays))
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "spmv_data.json").write_text(json.dumps(
            {**sizes, "level": args.level, "rows": rows}, indent=1) + "\n")
    return 0 if all(r["correct"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
