"""How the L2 takes integer atomic updates that a warp's lanes spread over several
elements: every work-item adds 1 to ``hist[idx[i]]`` (histogram perfect's
``atomicAdd(hist[input[i]], 1)``), with the indices of a warp's lanes laid out by a
pattern: all one word; k words of one 32-B sector; k sectors of one 128-B line; k
lines side by side; k words 4 kB apart; each warp its own word; drawn at random over
256 buckets (side by side or 4 kB apart); histogram's reference.py data (half of the
values on 8 buckets); every lane its own word (no contention). Each pattern's counts
are checked against numpy's bincount, then timed with OpenCL profiling events (median
of --repeats after warm-up). The time per warp, against the distinct words, sectors
and lines a warp's request touches, says what the L2 serialises
(mcl.analyses.atomics, the target file's ``atomic_update_interval``).

    python benchmarks/opencl/atomic_spread_probe.py --out DIR
    python benchmarks/opencl/atomic_spread_probe.py --device cpu   # checks the kernel

Exits 2 without the device asked for.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from probe_timing import median_time, probe_setup, save  # noqa: E402

SOURCE = r"""
__kernel void add(__global const int* idx, __global int* hist) {
  atomic_add(hist + idx[get_global_id(0)], 1);
}
"""

LOCAL = 256
WARP = 32
#: words between the elements of the "far" patterns (4 kB)
FAR = 1024


def _reference_data(n: int, rng: np.random.Generator) -> np.ndarray:
    """histogram's reference.py values (half uniform over 256 buckets, half on 8)."""
    from mcl.versions.sizes import load_reference
    ref = load_reference(Path(__file__).resolve().parents[2] / "examples" / "histogram")
    return ref["inputs"](rng, n, 256)["input"]


def patterns(n: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """The index array of each pattern, ``n`` work-items."""
    gid = np.arange(n, dtype=np.int64)
    lane, warp = gid % WARP, gid // WARP
    out = {"same word": np.zeros(n, np.int64)}
    for k in (2, 4, 8):
        out[f"{k} words of a sector"] = lane % k
    for k in (2, 4):
        out[f"{k} sectors of a line"] = (lane % k) * 8
    out["32 words of a line"] = lane
    for k in (2, 4, 8, 32):
        out[f"{k} lines side by side"] = (lane % k) * 32
    for k in (2, 4, 8, 32):
        out[f"{k} words 4 kB apart"] = (lane % k) * FAR
    out["a word per warp (256)"] = warp % 256
    out["uniform over 256 buckets"] = rng.integers(0, 256, n)
    out["uniform over 256 buckets 4 kB apart"] = rng.integers(0, 256, n) * FAR
    out["histogram reference data"] = _reference_data(n, rng).astype(np.int64)
    out["a word per lane"] = gid
    return {k: v.astype(np.int32) for k, v in out.items()}


def touched(idx: np.ndarray) -> dict[str, float]:
    """Distinct words, 32-B sectors and 128-B lines a warp's request touches, on
    average over the warps (of the first 2^16 warps)."""
    w = idx[: (min(idx.size, WARP << 16) // WARP) * WARP].reshape(-1, WARP).astype(np.int64)

    def distinct(a: np.ndarray) -> float:
        s = np.sort(a, axis=1)
        return float(np.mean(1 + np.count_nonzero(np.diff(s, axis=1), axis=1)))
    return {"words": distinct(w), "sectors": distinct(w // 8), "lines": distinct(w // 32),
            "most_updated_share": float(np.bincount(idx).max() / idx.size)}


def main() -> int:
    def extra(ap):
        ap.add_argument("--log2n", type=int, default=24, help="work-items (2^N)")
    found = probe_setup(__doc__, "atomic_spread_probe", 5, extra=extra, cpu_twin=True)
    if found is None:
        return 2
    args, dev, ctx, q = found
    import pyopencl as cl

    n = 1 << (args.log2n if args.device == "nvidia" else 16)
    prg = cl.Program(ctx, SOURCE).build()
    knl = cl.Kernel(prg, "add")
    rng = np.random.default_rng(1)
    result: dict = {"device": dev.name, "driver": dev.driver_version, "n": n,
                    "local": LOCAL, "patterns": {}}
    for name, idx in patterns(n, rng).items():
        size = int(idx.max()) + 1
        d_idx = cl.Buffer(ctx, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR, hostbuf=idx)
        hist = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 * size)
        cl.enqueue_copy(q, hist, np.zeros(size, np.int32))
        knl(q, (n,), (LOCAL,), d_idx, hist).wait()
        got = np.empty(size, np.int32)
        cl.enqueue_copy(q, got, hist)
        if not np.array_equal(got, np.bincount(idx, minlength=size)):
            print(f"{name}: the counts differ from numpy's bincount", file=sys.stderr)
            return 1
        row = touched(idx)
        if args.device == "nvidia":
            t = median_time(q, knl, (n,), (LOCAL,), [d_idx, hist], args.repeats)
            row.update(seconds=t, ns_per_warp=t / (n // WARP) * 1e9)
            print(f"{name:38s} {t * 1e3:8.3f} ms  {row['ns_per_warp']:7.3f} ns a warp  "
                  f"words {row['words']:5.2f} sectors {row['sectors']:5.2f} "
                  f"lines {row['lines']:5.2f}", flush=True)
        else:
            print(f"{name:38s} checked", flush=True)
        result["patterns"][name] = row
    save(args.out, "atomic_spread_probe.json", result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
