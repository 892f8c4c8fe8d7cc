"""How the NVIDIA GPU's device memory answers the bytes a kernel keeps in flight: a kernel
that reads 256 MB as runs of 4 floats (float4) in a grid-stride loop, each work-item
with U independent loads outstanding (U = 1 .. 8, a build-time size), over grids of
k work-groups per SM (all resident at once) of 64 or 256 work-items, timed with OpenCL
profiling events (median of --repeats after warm-up; the sum checked against numpy).
Bytes in flight, as mcl.analyses.timing counts them: warps x U x 512 B. Their
throughput against the model's memory time, bytes / bandwidth x (1 + (bandwidth x
latency / bytes in flight)^p)^(1/p) with the description's latency: the bandwidth the
reads reach with the most in flight and the exponent p that fits best (p = 1, the sum
of the two times, was the model's assumption), written to inflight.json.

    python benchmarks/opencl/inflight_probe.py --out DIR [--copy]

``--copy``: each run read is also written to a second buffer, every launch cold: how
stores in the traffic change what the loads in flight reach (inflight_copy.json).

Exits 2 without an NVIDIA OpenCL device (``--device cpu``: the kernels on PoCL, 1 MB,
checked).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from probe_timing import median_time, probe_setup, save  # noqa: E402

SOURCE = r"""
__kernel void reads(__global const float4* a, __global float* out, int n4) {
  int stride = get_global_size(0);
  float4 acc = (float4)(0.0f);
  int i = get_global_id(0);
  for (; i + (U - 1) * stride < n4; i += U * stride) {
    float4 v[U];
    #pragma unroll
    for (int u = 0; u < U; u++) v[u] = a[i + u * stride];
    #pragma unroll
    for (int u = 0; u < U; u++) acc += v[u];
  }
  for (; i < n4; i += stride) acc += a[i];
  out[get_global_id(0)] = acc.x + acc.y + acc.z + acc.w;
}
"""

#: ``--copy``: the same loads, each run then written to a second buffer (reads and
#: stores in the traffic, as vector_add's and black_scholes'), after all U are in
COPY_SOURCE = r"""
__kernel void copies(__global const float4* a, __global float4* c, int n4) {
  int stride = get_global_size(0);
  int i = get_global_id(0);
  for (; i + (U - 1) * stride < n4; i += U * stride) {
    float4 v[U];
    #pragma unroll
    for (int u = 0; u < U; u++) v[u] = a[i + u * stride];
    #pragma unroll
    for (int u = 0; u < U; u++) c[i + u * stride] = 2.0f * v[u];
  }
  for (; i < n4; i += stride) c[i] = 2.0f * a[i];
}
"""

#: bytes a warp's float4 load takes, as mcl.analyses.timing counts it (a request per run)
REQUEST = 512


def _latency_s() -> float:
    """The device memory's latency in the hopper description, in seconds."""
    from mcl.hdl import load_hardware
    hw = load_hardware("hopper")
    return float(hw.memory_latency("global")) / float(hw.clock_frequency())


def model(bytes_: float, inflight: float, bw: float, p: float, latency_s: float) -> float:
    """The time model's memory part for these reads (mcl.analyses.timing_rates.memory_time)."""
    from mcl.analyses.timing_rates import memory_time
    return memory_time(bytes_ / bw, bytes_ * latency_s / inflight, p)


def fit(rows: list[dict], latency_s: float) -> dict:
    """The bandwidth and exponent that fit the times best (least squares on log time),
    and how well the sum (p = 1) fits at its best bandwidth."""
    top = max(r["bytes"] / r["seconds"] for r in rows)
    bandwidths = np.linspace(0.9 * top, 1.2 * top, 61)

    def error(bw: float, p: float) -> float:
        return sum((np.log(model(r["bytes"], r["inflight"], bw, p, latency_s))
                    - np.log(r["seconds"])) ** 2 for r in rows)

    err, bw, p = min((error(bw, p), bw, p) for bw in bandwidths
                     for p in np.linspace(0.5, 8, 151))
    err_sum = min(error(bw, 1.0) for bw in bandwidths)
    n = len(rows)
    return {"bandwidth": float(bw), "p": float(p), "rms_log_error": float(np.sqrt(err / n)),
            "rms_log_error_p1": float(np.sqrt(err_sum / n)), "top_throughput": float(top)}


def main() -> int:
    def more(ap):
        ap.add_argument("--mbytes", type=int, default=256)
        ap.add_argument("--copy", action="store_true",
                        help="write each run read to a second buffer (bytes: both), "
                             "cold (behind a cache flush); results in inflight_copy.json")
    found = probe_setup(__doc__, "inflight_probe", 10, more, cpu_twin=True)
    if found is None:
        return 2
    args, dev, ctx, q = found
    if args.device == "cpu":    # the kernels checked on PoCL: 1 MB, one repeat
        args.mbytes, args.repeats = 1, 1
    import pyopencl as cl

    sms = dev.max_compute_units
    latency_s = _latency_s()
    n4 = args.mbytes * (1 << 20) // 16
    rng = np.random.default_rng(1)
    host = rng.random(n4 * 4, dtype=np.float32)
    a = cl.Buffer(ctx, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR, hostbuf=host)
    if args.copy:
        out = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 16 * n4)
        from mcl.opencl.conditions import cache_flush
        cold = cache_flush(ctx, q)
    else:
        out = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 * sms * 8 * 256)
        cold = None
    want = None if args.copy else float(host.astype(np.float64).sum())
    rows = []
    for unroll in (1, 2, 4, 8):
        prog = cl.Program(ctx, COPY_SOURCE if args.copy else SOURCE).build(
            options=[f"-DU={unroll}"])
        knl = cl.Kernel(prog, "copies" if args.copy else "reads")
        for local in (64, 256):
            for per_sm in (1, 2, 4, 8):
                groups = sms * per_sm
                glob = groups * local
                argv = [a, out, np.int32(n4)]
                knl(q, (glob,), (local,), *argv).wait()
                if args.copy:
                    got = np.empty(n4 * 4, np.float32)
                    cl.enqueue_copy(q, got, out)
                    wrong = not np.array_equal(got, 2.0 * host)
                else:
                    got = np.empty(glob, np.float32)
                    cl.enqueue_copy(q, got, out)
                    wrong = abs(float(got.astype(np.float64).sum()) - want) > 1e-3 * want
                if wrong:
                    print(f"U={unroll} local={local} k={per_sm}: wrong result", file=sys.stderr)
                    return 1
                t = median_time(q, knl, (glob,), (local,), argv, args.repeats, before=cold)
                warps = groups * local // 32
                row = {"unroll": unroll, "local": local, "groups_per_sm": per_sm,
                       "inflight": warps * unroll * REQUEST,
                       "bytes": n4 * 16 * (2 if args.copy else 1), "read_bytes": n4 * 16,
                       "seconds": t}
                rows.append(row)
                print(f"U={unroll} local={local:4d} k={per_sm}: in flight "
                      f"{row['inflight'] / 2**20:7.2f} MB, {t * 1e6:8.1f} us, "
                      f"{row['bytes'] / t / 1e9:7.0f} GB/s", flush=True)
    result = {"device": dev.name, "driver": dev.driver_version, "latency_s": latency_s,
              "copy": args.copy, "rows": rows, "fit": fit(rows, latency_s)}
    print(json.dumps(result["fit"]))
    save(args.out, "inflight_copy.json" if args.copy else "inflight.json", result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
