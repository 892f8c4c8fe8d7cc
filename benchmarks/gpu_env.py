"""What the GPU machine offers, and the bandwidth ceiling every memory-bound
kernel is compared with: an OpenCL device-to-device copy and a torch copy,
timed in the same run, each copy queued behind a short kernel that keeps the
device awake, as the kernels compared with them are timed.

    python benchmarks/gpu_env.py --out DIR      (writes DIR/gpu_env.json)
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
from pathlib import Path

import numpy as np


def opencl_copy(nbytes: int, repeats: int = 20) -> dict:
    import pyopencl as cl

    from mcl.opencl.device import describe, runtime

    rt = runtime(None)
    src = cl.Buffer(rt.context, cl.mem_flags.READ_WRITE, nbytes)
    dst = cl.Buffer(rt.context, cl.mem_flags.READ_WRITE, nbytes)
    cl.enqueue_fill_buffer(rt.queue, src, np.float32(1), 0, nbytes).wait()
    from mcl.opencl.conditions import keep_awake
    awake = keep_awake(rt.context, rt.queue)    # as the kernels compared with it are timed
    times = []
    for i in range(repeats + 3):
        awake()
        ev = cl.enqueue_copy(rt.queue, dst, src, byte_count=nbytes)
        ev.wait()
        if i >= 3:
            times.append((ev.profile.end - ev.profile.start) * 1e-9)
    t = statistics.median(times)
    info = describe(rt.device)
    return {"device": info.spec, "bytes": nbytes, "median_s": t,
            "GBps_read_plus_write": 2 * nbytes / t / 1e9}


def torch_awake(torch) -> None:
    """For torch what mcl.opencl.conditions.keep_awake is for OpenCL: the GPU kept busy
    for about 40 us, in which the timed call is queued behind it."""
    torch.cuda._sleep(80_000)


def torch_copy(nbytes: int, repeats: int = 20) -> dict | None:
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    a = torch.ones(nbytes // 4, device="cuda")
    b = torch.empty_like(a)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for i in range(repeats + 3):
        torch_awake(torch)
        start.record()
        b.copy_(a)
        end.record()
        torch.cuda.synchronize()
        if i >= 3:
            times.append(start.elapsed_time(end) * 1e-3)
    t = statistics.median(times)
    return {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "bytes": nbytes,
            "median_s": t, "GBps_read_plus_write": 2 * nbytes / t / 1e9}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="benchmarks/results")
    ap.add_argument("--mib", type=int, default=1024, help="buffer size in MiB")
    args = ap.parse_args()
    nbytes = args.mib * 2**20
    result = {"python": sys.version.split()[0], "machine": platform.node(),
              "opencl_copy": opencl_copy(nbytes), "torch_copy": torch_copy(nbytes)}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "gpu_env.json").write_text(json.dumps(result, indent=2))
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
