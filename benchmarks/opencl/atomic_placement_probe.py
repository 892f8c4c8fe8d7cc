"""Whether the rate of integer atomic updates of a small array depends on where the
array lies in device memory: every work-item adds 1 to ``hist[idx[i]]`` (histogram
perfect's ``atomicAdd(hist[input[i]], 1)``, 256 ints, histogram's reference.py data or
values uniform over the 256), with ``hist`` at each of a range of byte offsets inside
one large buffer (``offsets``), and in each of a number of buffers of its own, allocated
one after the other (``buffers``). The same kernel with the same data took 21.4 ms at
2^26 work-items in one process and 10.7 ms in another (benchmarks/results/fidelity/raw/
h200_2026-12-01_times/README.md): the L2's units that perform the updates are chosen by
the address. Each count is checked against numpy's bincount, then timed with OpenCL
profiling events (median of --repeats after warm-up).

    python benchmarks/opencl/atomic_placement_probe.py --out DIR
    python benchmarks/opencl/atomic_placement_probe.py --device cpu   # checks the kernel

Exits 2 without the device asked for.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from atomic_spread_probe import _reference_data  # noqa: E402
from probe_timing import median_time, probe_setup, save  # noqa: E402

SOURCE = r"""
__kernel void add(__global const int* idx, __global int* hist, int offset) {
  atomic_add(hist + offset + idx[get_global_id(0)], 1);
}
"""

LOCAL = 256
BUCKETS = 256
#: offsets of hist inside the large buffer, in ints: every 1 kB up to 16 kB, every 256 kB
#: up to 4 MB, then every 2 MB (a large page) and 1 kB up to 256 MB
OFFSETS = ([k * 256 for k in range(16)] + [k * 65536 for k in range(1, 16)]
           + [k * (1 << 19) + 256 * (k % 8) for k in range(2, 129)])
#: buffers of 1 kB allocated one after the other
BUFFERS = 24


def main() -> int:
    def extra(ap):
        ap.add_argument("--log2n", type=int, default=24, help="work-items (2^N)")
    found = probe_setup(__doc__, "atomic_placement_probe", 5, extra=extra, cpu_twin=True)
    if found is None:
        return 2
    args, dev, ctx, q = found
    import pyopencl as cl

    gpu = args.device == "nvidia"
    n = 1 << (args.log2n if gpu else 14)
    knl = cl.Kernel(cl.Program(ctx, SOURCE).build(), "add")
    rng = np.random.default_rng(1)
    data = {"histogram reference data": _reference_data(n, rng).astype(np.int32),
            "uniform over 256 buckets": rng.integers(0, BUCKETS, n).astype(np.int32)}
    want = {k: np.bincount(v, minlength=BUCKETS) for k, v in data.items()}
    result: dict = {"device": dev.name, "driver": dev.driver_version, "n": n,
                    "local": LOCAL, "offsets": {}, "buffers": {}}

    def measure(name: str, idx_buf, hist, offset: int, size: int) -> float | None:
        cl.enqueue_copy(q, hist, np.zeros(size, np.int32))
        knl(q, (n,), (LOCAL,), idx_buf, hist, np.int32(offset)).wait()
        got = np.empty(size, np.int32)
        cl.enqueue_copy(q, got, hist)
        if not np.array_equal(got[offset:offset + BUCKETS], want[name]):
            raise SystemExit(f"{name} at {offset}: the counts differ from numpy's bincount")
        if not gpu:
            return None
        return median_time(q, knl, (n,), (LOCAL,), [idx_buf, hist, np.int32(offset)],
                           args.repeats)

    for name, idx in data.items():
        d_idx = cl.Buffer(ctx, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR, hostbuf=idx)
        size = OFFSETS[-1] + BUCKETS
        big = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 * size)
        rows = result["offsets"][name] = {}
        for off in OFFSETS if gpu else OFFSETS[:3]:
            t = measure(name, d_idx, big, off, size)
            rows[str(4 * off)] = t
            if t is not None:
                print(f"{name:26s} at byte {4 * off:8d}: {t * 1e3:7.3f} ms", flush=True)
        held = []      # kept alive, so that each new buffer lies elsewhere
        rows = result["buffers"][name] = []
        for b in range(BUFFERS if gpu else 2):
            hist = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 * BUCKETS)
            held.append(hist)
            t = measure(name, d_idx, hist, 0, BUCKETS)
            rows.append(t)
            if t is not None:
                print(f"{name:26s} buffer {b:2d}: {t * 1e3:7.3f} ms", flush=True)
        if not gpu:
            print(f"{name}: checked")
    save(args.out, "atomic_placement_probe.json", result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
