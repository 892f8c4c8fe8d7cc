"""What vector_add's grid-stride loop takes with G work-groups: the kernel mcl generates
for vector_add nvidia_v1 and hopper_v1 (which differ only in G: 1024 and 1056, and run
1.0-1.6% apart on the H200 where the time model predicts them level), with G a run-time
argument, over G around and beyond one round of resident work-groups, the three arrays
in their own buffers (as mcl runs them) or in one buffer P floats apart (``packed``:
whether the distance of the arrays, a power of two in bytes when P = 0, or the stride of
the loop, G x 1024 floats, decides it). Each launch cold (the L2 flushed clean before
it, as the fidelity harness times the examples), the best and the median of
``--repeats``, every G twice in an order that alternates; each result checked.

    python benchmarks/opencl/grid_stride_probe.py --out DIR [--device cpu]

Exits 2 without an NVIDIA OpenCL device (``--device cpu``: PoCL, a small n, the check).
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from probe_timing import launch_times, probe_setup, save  # noqa: E402

#: vector_add nvidia_v1 as mcl generates it, nrBlocks an argument, the arrays at offsets
SOURCE = r"""
__attribute__((reqd_work_group_size(32, 8, 1)))
__kernel void vector_add(const int n, const int nrBlocks,
                         __global float* restrict cbase, __global const float* restrict abase,
                         __global const float* restrict bbase, const int oc, const int oa,
                         const int ob)
{
    __global float* restrict c = cbase + oc;
    __global const float* restrict a = abase + oa;
    __global const float* restrict b = bbase + ob;
    const int nrThreads = 256;
    const int unroll = 4;
    const int chunk = unroll * nrThreads;
    const int stride = chunk * nrBlocks;
    const int bi = get_group_id(0);
    const int w = get_local_id(1);
    const int t = get_local_id(0);
    int tid = w * 32 + t;
    for (int i = bi * chunk + tid; i < n; i += stride) {
        #pragma unroll
        for (int u = 0; u < unroll; u++) {
            int k = i + u * nrThreads;
            if (k < n) {
                c[k] = a[k] + b[k];
            }
        }
    }
}
"""


def _extra(ap) -> None:
    ap.add_argument("--n", type=int, default=1 << 24, help="elements an array (2^24)")


def main() -> int:
    found = probe_setup(__doc__, "grid_stride_probe", 10, extra=_extra, cpu_twin=True)
    if found is None:
        return 2
    args, dev, ctx, q = found
    import pyopencl as cl

    from mcl.opencl.conditions import cache_flush
    cpu = getattr(args, "device", "nvidia") == "cpu"
    n = 1 << 16 if cpu else args.n
    sms = dev.max_compute_units
    chunk = 1024
    grids = sorted({1000, 1008, 1016, 1024, 1032, 1040, 1048, 1056, 1064, 1088, 1152, 2048,
                    6 * sms, 7 * sms, 8 * sms, -(-n // chunk)})
    if cpu:
        grids = [4, 7, 8, 64]
    layouts = {"separate": None, "packed": 0, "packed+1024": 1024, "packed+65792": 65792}
    rng = np.random.default_rng(1)
    a_host = rng.random(n, dtype=np.float32)
    b_host = rng.random(n, dtype=np.float32)
    want = a_host + b_host
    mf = cl.mem_flags
    prog = cl.Program(ctx, SOURCE).build()
    knl = prog.vector_add
    flush = None if cpu else cache_flush(ctx, q)
    rows = []
    ok_all = True
    for name, pad in layouts.items():
        if pad is None:
            a = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a_host)
            b = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=b_host)
            c = cl.Buffer(ctx, mf.READ_WRITE, 4 * n)
            offsets = (0, 0, 0)
        else:
            step = n + pad
            whole = cl.Buffer(ctx, mf.READ_WRITE, 4 * 3 * step)
            cl.enqueue_copy(q, whole, a_host, dst_offset=0).wait()
            cl.enqueue_copy(q, whole, b_host, dst_offset=4 * step).wait()
            a = b = c = whole
            offsets = (2 * step, 0, step)      # c, a, b
        times: dict[int, list[float]] = {g: [] for g in grids}
        for rep in range(2):
            for g in (grids if rep == 0 else grids[::-1]):
                argv = (np.int32(n), np.int32(g), c, a, b, *(np.int32(o) for o in offsets))
                cl.enqueue_fill_buffer(q, c, np.float32(-1), 4 * offsets[0], 4 * n).wait()
                knl(q, (32 * g, 8), (32, 8), *argv).wait()
                got = np.empty(n, np.float32)
                cl.enqueue_copy(q, got, c, src_offset=4 * offsets[0]).wait()
                ok = bool(np.array_equal(got, want))
                ok_all &= ok
                times[g] += launch_times(q, knl, (32 * g, 8), (32, 8), argv, args.repeats,
                                         before=flush)
                if not ok:
                    print(f"{name} G={g}: WRONG RESULT", flush=True)
        for g in grids:
            best, med = min(times[g]), statistics.median(times[g])
            rounds = n / (chunk * g)
            rows.append({"layout": name, "pad": pad, "groups": g, "rounds": rounds,
                         "best_s": best, "median_s": med, "correct": ok_all})
            print(f"{name:13s} G={g:5d} ({g / sms:5.2f} an SM, {rounds:6.2f} rounds): "
                  f"best {best * 1e6:7.2f} us, median {med * 1e6:7.2f} us", flush=True)
    save(args.out, "grid_stride_probe.json", {"device": dev.name, "n": n, "sms": sms,
                                              "repeats": args.repeats, "rows": rows})
    return 0 if ok_all else 1


if __name__ == "__main__":
    sys.exit(main())
