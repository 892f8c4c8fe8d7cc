"""What limits black_scholes on the GPU: its versions built with NVIDIA's precise math
(the default: OpenCL's exp, log, sqrt and division to full float precision) and with
the relaxed math options, timed as the case studies time them (median of warm
launches, OpenCL profiling events) beside a kernel that moves the same bytes with no
arithmetic, each verified against reference.py first; the PTX instructions of each.

    python benchmarks/opencl/bs_math.py [--n 4000000] [--repeats 30] [--out DIR]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import runpy
import statistics
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

VERSIONS = ("gpu_v1", "nvidia_v1", "hopper_v1", "hopper_v2")
OPTIONS = {
    "precise": [],
    "mad": ["-cl-mad-enable"],
    "relaxed": ["-cl-fast-relaxed-math"],
}

COPY = """
__kernel void bs_copy(__global float4* restrict call, __global float4* restrict put,
                      __global const float4* restrict price,
                      __global const float4* restrict strike,
                      __global const float4* restrict years, const int n4) {
    for (int i = get_global_id(0); i < n4; i += get_global_size(0)) {
        float4 p = price[i], s = strike[i], y = years[i];
        call[i] = p + s;
        put[i] = s + y;
    }
}
"""


def ptx_instructions(ptx: str) -> dict[str, int]:
    """Instructions of the PTX, and the special-function ones among them."""
    body = [ln.strip() for ln in ptx.splitlines()
            if ln.strip().endswith(";") and not ln.strip().startswith((".", "//"))]
    return {"instructions": len(body),
            "sfu (ex2, lg2, rcp, sqrt, rsqrt)": sum(bool(re.match(
                r"(ex2|lg2|rcp|sqrt|rsqrt)\.", b)) for b in body),
            "div": sum(b.startswith("div.") for b in body)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=4_000_000)
    ap.add_argument("--repeats", type=int, default=30)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--platform", default="NVIDIA", help="part of the OpenCL platform's name")
    args = ap.parse_args()

    import pyopencl as cl
    import pyopencl.array  # noqa: F401 - cl.array

    from mcl.opencl import generate
    from mcl.opencl.runtime import Kernel

    plat = next(p for p in cl.get_platforms() if args.platform in p.name)
    dev = plat.get_devices()[0]
    ctx = cl.Context([dev])
    queue = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
    ref = runpy.run_path(str(ROOT / "examples" / "black_scholes" / "reference.py"))
    data = ref["inputs"](np.random.default_rng(0), args.n)
    want = ref["reference"](**data)
    nbytes = ref["bytes_moved"](n=args.n)
    rows = []

    def timed(launch) -> tuple[float, float]:
        ts = []
        for i in range(args.repeats + 3):
            ev = launch()
            ev.wait()
            if i >= 3:
                ts.append((ev.profile.end - ev.profile.start) * 1e-9)
        return statistics.median(ts), min(ts)

    # the same bytes, no arithmetic
    mf = cl.mem_flags
    bufs = [cl.Buffer(ctx, mf.READ_WRITE, 4 * args.n) for _ in range(5)]
    copy = cl.Program(ctx, COPY).build().bs_copy
    groups = 132 * 8
    med, best = timed(lambda: copy(queue, (groups * 256,), (256,), *bufs,
                                   np.int32(args.n // 4)))
    rows.append({"version": "copy of the same bytes", "median_us": med * 1e6,
                 "min_us": best * 1e6, "GBps": nbytes / med / 1e9})
    print(f"{'copy of the same bytes':32s} {med * 1e6:8.2f} us  {nbytes / med / 1e9:6.0f} GB/s")
    for v in VERSIONS:
        (gen,) = generate(ROOT / "examples" / "black_scholes" / f"{v}.mcpl", "hopper")
        for label, extra in OPTIONS.items():
            plan = dataclasses.replace(gen.plan,
                                       build_options=(*gen.plan.build_options, *extra))
            k = Kernel(dataclasses.replace(gen, plan=plan), ctx, queue)
            row = {"version": v, "options": label}
            try:
                got = k(**{name: (val.copy() if isinstance(val, np.ndarray) else val)
                           for name, val in data.items()})
                tol = ref["TOLERANCE"]
                err = max(float(np.max(np.abs(got[o] - want[o])
                                       / (tol["atol"] + tol["rtol"] * np.abs(want[o]))))
                          for o in ("callResult", "putResult"))
                row["within_tolerance"] = bool(err <= 1.0)
                row["error_over_tolerance"] = err
                program = k.program(k.sizes(data))
                ptx = bytes(program.get_info(cl.program_info.BINARIES)[0]).decode(
                    errors="replace")
                row.update(ptx_instructions(ptx))
                dev_args = {name: (cl.array.to_device(queue, val)
                                   if isinstance(val, np.ndarray) else val)
                            for name, val in data.items()}

                def launch(k=k, dev_args=dev_args):
                    k(**dev_args)
                    return k.last_event
                med, best = timed(launch)
                row.update(median_us=med * 1e6, min_us=best * 1e6, GBps=nbytes / med / 1e9)
                print(f"{v + ' ' + label:32s} {med * 1e6:8.2f} us  {nbytes / med / 1e9:6.0f} GB/s"
                      f"  {'ok' if row['within_tolerance'] else 'OUT OF TOLERANCE'}"
                      f" ({err:.2f} of it)  PTX {row['instructions']} instructions, "
                      f"{row['sfu (ex2, lg2, rcp, sqrt, rsqrt)']} sfu, {row['div']} div")
            except Exception as e:  # an experiment reports every failure and goes on
                row["error"] = str(e)[:2000]
                print(f"{v + ' ' + label:32s} FAILED: {str(e)[:300]}")
            rows.append(row)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "bs_math.json").write_text(json.dumps(
            {"device": dev.name, "n": args.n, "bytes": nbytes, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
