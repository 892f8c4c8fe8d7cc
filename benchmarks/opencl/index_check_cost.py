"""What the run-time index checks cost (mcl.opencl.index_checks): every version of the
examples whose indices the data choose (spmv_csr: ``values[k]``, ``colIdx[k]`` and
``x[colIdx[k]]`` in a loop bounded by ``rowPtr``; histogram: the buckets
``hist[input[i]]``), translated to hopper, compiled twice, as mcl.compile does by
default (the indices checked as the kernel runs) and with ``check_writes=False`` (the
kernel as mcl gen writes it). Both are checked against reference.py on its inputs at the
paper's sizes (spmv_csr 65536 x 131072 at density 0.001; histogram 2^26 values), then
timed in --rounds alternating rounds, each the best of --repeats launches behind
mcl.opencl.conditions.keep_awake. The table gives the best of the rounds and the ratio
checked / unchecked.

    python benchmarks/opencl/index_check_cost.py --out DIR [--device NVIDIA]

Exits 2 without an OpenCL device, 1 where a result is wrong.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

KERNELS = {
    "spmv_csr": ({"nrRows": 65536, "nrCols": 131072}, "y"),
    "histogram": ({"n": 1 << 26, "nrBuckets": 256}, "hist"),
}
VERSIONS = ("perfect", "gpu_v1", "nvidia_v1", "hopper_v1", "hopper_v2")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path)
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--device", default=None, help="OpenCL device (default: MCL_DEVICE)")
    ap.add_argument("--scale", type=float, default=1.0,
                    help="scale the sizes (a quick check on a CPU device: 0.01)")
    args = ap.parse_args()
    import mcl
    from mcl.opencl.conditions import keep_awake
    from mcl.versions.sizes import load_reference

    rows, ok_all = [], True
    for kernel, (sizes, output) in KERNELS.items():
        folder = ROOT / "examples" / kernel
        ref = load_reference(folder)
        first = next(iter(sizes))
        sizes = {**sizes, first: max(64, int(sizes[first] * args.scale))}
        data = ref["inputs"](np.random.default_rng(1), **sizes)
        arrays = {k: v for k, v in data.items() if isinstance(v, np.ndarray)}
        scalars = {k: v for k, v in data.items() if not isinstance(v, np.ndarray)}
        want = ref["reference"](**scalars, **arrays)[output]
        for v in VERSIONS:
            path = folder / f"{v}.mcpl"
            if not path.exists():
                continue
            try:
                pair = {checked: mcl.compile(path, "hopper", device=args.device,
                                             check_writes=checked)
                        for checked in (True, False)}
            except Exception as e:  # no device, or no driver
                print(f"index_check_cost: {e}", file=sys.stderr)
                return 2
            sites = pair[True].source.count("mcl_checked_index(") - 1
            correct = {c: bool(np.allclose(k(**scalars, **arrays)[output], want, rtol=1e-3,
                                           atol=1e-3)) for c, k in pair.items()}
            ok_all &= all(correct.values())
            best = {True: float("inf"), False: float("inf")}
            for _ in range(args.rounds):
                for c, k in pair.items():
                    awake = keep_awake(k.context, k.queue)
                    best[c] = min(best[c], k.time(repeat=args.repeats, before=awake,
                                                  **scalars, **arrays))
            row = {"kernel": kernel, "version": v, "checked_indices": sites,
                   "checked_seconds": best[True], "unchecked_seconds": best[False],
                   "ratio": best[True] / best[False], "correct": correct[True] and
                   correct[False]}
            rows.append(row)
            print(f"{kernel:10s} {v:10s} {sites} checks: {best[True] * 1e6:8.1f} us checked, "
                  f"{best[False] * 1e6:8.1f} us unchecked, ratio {row['ratio']:.3f}, "
                  f"correct {row['correct']}", flush=True)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "index_check_cost.json").write_text(json.dumps(
            {"repeats": args.repeats, "rounds": args.rounds, "scale": args.scale,
             "rows": rows}, indent=1) + "\n")
        lines = ["| kernel | version | checked indices | checked µs | unchecked µs | ratio |",
                 "| --- | --- | ---: | ---: | ---: | ---: |"]
        lines += [f"| {r['kernel']} | {r['version']} | {r['checked_indices']} | "
                  f"{r['checked_seconds'] * 1e6:.1f} | {r['unchecked_seconds'] * 1e6:.1f} | "
                  f"{r['ratio']:.3f} |" for r in rows]
        (args.out / "index_check_cost.md").write_text("\n".join(lines) + "\n")
    return 0 if ok_all else 1


if __name__ == "__main__":
    raise SystemExit(main())
