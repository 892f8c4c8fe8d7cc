"""How many read requests per second the L2 serves when each brings one sector (a
gather, ``x[colIdx[k]]``), against requests of whole lines: kernels that read an
8 MB table, which stays in the L2, 64 times per work-item, at addresses a hash
of (work-item, step) chooses:

* ``gather``: each work-item its own random float: every lane of a warp a sector of
  its own, one L2 request each;
* ``lines``: each warp one random 128-byte line, a float per lane: one request of 4
  sectors per warp.

Over 264 to 4224 work-groups of 256 work-items, timed with OpenCL profiling
events (median of --repeats after warm-up); the sums are checked against numpy.
Requests per second: lanes x 64 (gather) or warps x 64 (lines) over the time.

    python benchmarks/opencl/l2_request_probe.py --out DIR

Exits 2 without an NVIDIA OpenCL device.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from probe_timing import median_time, probe_setup, save  # noqa: E402

STEPS = 64
TABLE = 1 << 21          # floats: 8 MB
LOCAL = 256

#: the hash that picks the addresses (lowbias32), in OpenCL C; :func:`mix` on the host
MIX_SOURCE = r"""
inline uint mix(uint x) {
  x ^= x >> 16; x *= 0x7feb352dU; x ^= x >> 15; x *= 0x846ca68bU; x ^= x >> 16;
  return x;
}
"""

SOURCE = MIX_SOURCE + r"""
__kernel void gather(__global const float *table, __global float *out, uint mask) {
  uint g = get_global_id(0);
  float s = 0.0f;
  for (uint i = 0; i < STEPS; i++) s += table[mix(g * STEPS + i) & mask];
  out[g] = s;
}
__kernel void lines(__global const float *table, __global float *out, uint mask) {
  uint g = get_global_id(0);
  uint warp = g / 32, lane = g % 32;
  float s = 0.0f;
  for (uint i = 0; i < STEPS; i++) s += table[((mix(warp * STEPS + i) & mask) & ~31U) + lane];
  out[g] = s;
}
""".replace("STEPS", str(STEPS))


def mix(x: np.ndarray) -> np.ndarray:
    """MIX_SOURCE's hash of each of ``x`` (as uint32), on the host."""
    x = x.astype(np.uint64) & 0xFFFFFFFF
    x ^= x >> 16
    x = (x * 0x7FEB352D) & 0xFFFFFFFF
    x ^= x >> 15
    x = (x * 0x846CA68B) & 0xFFFFFFFF
    x ^= x >> 16
    return x


def expected(kind: str, table: np.ndarray, n: int) -> np.ndarray:
    g = np.arange(n, dtype=np.uint64)
    steps = np.arange(STEPS, dtype=np.uint64)
    if kind == "gather":
        idx = mix(g[:, None] * STEPS + steps[None, :]) & (TABLE - 1)
    else:
        warp, lane = g // 32, g % 32
        idx = ((mix(warp[:, None] * STEPS + steps[None, :]) & (TABLE - 1))
               & ~np.uint64(31)) + lane[:, None]
    return table[idx.astype(np.int64)].sum(axis=1)


def main() -> int:
    found = probe_setup(__doc__, "l2_request_probe", 10)
    if found is None:
        return 2
    args, dev, ctx, q = found
    import pyopencl as cl

    prg = cl.Program(ctx, SOURCE).build()
    table = np.random.default_rng(0).uniform(0, 1, TABLE).astype(np.float32)
    mf = cl.mem_flags
    dtable = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=table)
    most = 4224 * LOCAL
    dout = cl.Buffer(ctx, mf.WRITE_ONLY, 4 * most)
    result: dict = {"device": dev.name, "driver": dev.driver_version, "rows": []}
    for kind in ("gather", "lines"):
        knl = cl.Kernel(prg, kind)
        for groups in (264, 1056, 4224):
            n = groups * LOCAL
            argv = [dtable, dout, np.uint32(TABLE - 1)]
            knl(q, (n,), (LOCAL,), *argv).wait()
            got = np.empty(n, np.float32)
            cl.enqueue_copy(q, got, dout)
            if not np.allclose(got, expected(kind, table.astype(np.float64), n), rtol=1e-4):
                print(f"{kind}: wrong sums", file=sys.stderr)
                return 1
            t = median_time(q, knl, (n,), (LOCAL,), argv, args.repeats)
            requests = n * STEPS if kind == "gather" else n // 32 * STEPS
            sectors = requests * (1 if kind == "gather" else 4)
            row = {"kernel": kind, "groups": groups, "seconds": t, "requests": requests,
                   "requests_per_s": requests / t, "sector_bytes_per_s": sectors * 32 / t}
            result["rows"].append(row)
            print(f"{kind:6s} {groups:5d} groups: {t * 1e6:8.1f} us, "
                  f"{requests / t / 1e9:6.1f} G requests/s, "
                  f"{sectors * 32 / t / 1e12:5.2f} TB/s of sectors", flush=True)
    save(args.out, "l2_request_probe.json", result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
