"""How histogram's shared-memory versions depend on the data, which the feedback says
and the time model cannot know: hopper_v1 (a histogram per warp, l_hist[w, v[u]]) and
hopper_v2 (a copy of the buckets per lane, in the lane's own bank), or the --versions
named (gpu_v1 and nvidia_v1 too, translated to hopper), on 2^26 values (--n) drawn
three ways (or the --data named): uniform over 256 buckets (the time model's
assumption: v1's update takes the banks 3.15 times a warp, v2's once), reference.py's
data (half of the values in the 8 buckets 0, 32, ..., 224, all in bank 0), and one
bucket for every value (the lanes at one word: one pass for both). Each version is
checked against numpy's bincount, then timed behind mcl.opencl.conditions.keep_awake
(the best of --repeats), beside its predicted time at --level (h200: the H200's
description). --merge-free adds a twin of each version whose blocks do not merge their
bins into hist (its ``atomicAdd(hist[k], total)`` becomes a store where ``total`` is
-1, which it never is: the sums are still made, no update; its hist is checked to stay
zero): the difference is what the merges cost (mcl.analyses.atomics.queued_seconds).

    python benchmarks/opencl/histogram_data.py --out DIR [--device NVIDIA]
    python benchmarks/opencl/histogram_data.py --versions gpu_v1,nvidia_v1,hopper_v1,\
        hopper_v2 --data uniform,reference --merge-free --out DIR

Exits 2 without an OpenCL device.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from version_timing import predicted_times, timed_row  # noqa: E402

BUCKETS = 256
VERSIONS = ("hopper_v1", "hopper_v2")


def data(kind: str, rng: np.random.Generator, n: int) -> np.ndarray:
    if kind == "uniform":
        return rng.integers(0, BUCKETS, n).astype(np.int32)
    if kind == "one bucket":
        return np.full(n, 7, np.int32)
    from mcl.versions.sizes import load_reference
    return load_reference(ROOT / "examples" / "histogram")["inputs"](rng, n, BUCKETS)["input"]


def merge_free(source: str) -> str:
    """The version without its merge: ``atomicAdd(hist[k], X);`` a store where X is -1."""
    out, count = re.subn(r"atomicAdd\(hist\[k\], ([^;]+)\);", r"if (\1 == -1) { hist[k] = \1; }",
                         source)
    if count != 1:
        raise ValueError("the version has no one merge `atomicAdd(hist[k], ...)`")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path)
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--n", type=int, default=1 << 26, help="values (default 2^26)")
    ap.add_argument("--device", default=None, help="OpenCL device (default: MCL_DEVICE)")
    ap.add_argument("--level", default="h200", help="predict at this level (default h200)")
    ap.add_argument("--versions", default=",".join(VERSIONS),
                    help="histogram versions, comma-separated (default hopper_v1,hopper_v2)")
    ap.add_argument("--data", default="uniform,reference,one bucket",
                    help="kinds of data, comma-separated (uniform, reference, one bucket)")
    ap.add_argument("--merge-free", action="store_true",
                    help="also each version without its merge into hist")
    args = ap.parse_args()
    n = args.n
    import mcl
    sources = {v: ROOT / "examples" / "histogram" / f"{v}.mcpl"
               for v in args.versions.split(",")}
    if args.merge_free:
        twins = Path(tempfile.mkdtemp(prefix="histogram_merge_free_"))
        for v in list(sources):
            (twins / f"{v}.mcpl").write_text(merge_free(sources[v].read_text()))
            sources[f"{v} merge-free"] = twins / f"{v}.mcpl"
    try:
        # as mcl gen writes them: without the run-time index checks (index_check_cost.py)
        kernels = {v: mcl.compile(path, "hopper", device=args.device, check_writes=False)
                   for v, path in sources.items()}
    except Exception as e:  # no device, or no driver
        print(f"histogram_data: {e}", file=sys.stderr)
        return 2
    predicted = predicted_times(sources, args.level, {"n": n, "nrBuckets": BUCKETS})
    rng = np.random.default_rng(1)
    rows = []
    for kind in args.data.split(","):
        values = data(kind, rng, n)
        want = np.bincount(values, minlength=BUCKETS)
        for v, k in kernels.items():
            got = k(n=n, nrBuckets=BUCKETS, input=values, hist=np.zeros(BUCKETS, np.int32))
            ok = bool(np.array_equal(got["hist"], 0 * want if "merge-free" in v else want))
            rows.append(timed_row(k, v, predicted, args.repeats, ok, {"data": kind}, n=n,
                                  nrBuckets=BUCKETS, input=values,
                                  hist=np.zeros(BUCKETS, np.int32)))
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "histogram_data.json").write_text(json.dumps(
            {"n": n, "buckets": BUCKETS, "level": args.level, "rows": rows}, indent=1) + "\n")
    return 0 if all(r["correct"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
