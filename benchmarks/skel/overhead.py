"""Host-side cost of a skeleton call: many calls on tiny data (one element, a 1x1 or
small matrix), so that the time is the Python and OpenCL enqueue work of the call,
not the kernels. Runs on any OpenCL platform (PoCL gives several CPU devices with
POCL_DEVICES="pthread pthread").

    POCL_DEVICES="pthread pthread" python3 benchmarks/skel/overhead.py [--calls 1000]

Prints microseconds per call for Map, Zip, MapOverlap, Map over an IndexVector and a
Stencil iteration, on 1 and 2 devices (as many as the platform has, up to 2)."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("POCL_DEVICES", "pthread pthread")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import numpy as np  # noqa: E402

import mcl.skel as sk  # noqa: E402


def per_call(fn, devs, calls: int, rounds: int = 5) -> tuple[float, float]:
    """(CPU time of the calling thread, wall time) in microseconds per call, the best of
    ``rounds`` rounds. The thread's CPU time is the host-side work of a call (Python and
    the OpenCL enqueues) without the CPU devices' worker threads, and holds on a busy
    machine; the wall time includes waiting for the devices."""
    for _ in range(20):
        fn()
    devs.finish()
    cpu = wall = float("inf")
    for _ in range(rounds):
        c0, t0 = time.thread_time(), time.perf_counter()
        for _ in range(calls):
            fn()
        devs.finish()
        cpu = min(cpu, (time.thread_time() - c0) / calls * 1e6)
        wall = min(wall, (time.perf_counter() - t0) / calls * 1e6)
    return cpu, wall


def cases(ndev: int):
    one = sk.Vector(np.ones(1, np.float32))
    two = sk.Vector(np.ones(ndev, np.float32))
    m = sk.Map("float f(float x) { return x + 1.0f; }")
    z = sk.Zip("float g(float x, float y, float a) { return a * x + y; }")
    idx = sk.IndexVector(ndev)
    mi = sk.Map("int h(int i, int w) { return i * w; }")
    mat = sk.Matrix(np.ones((4 * ndev, 4), np.float32))
    mo = sk.MapOverlap("float b(float_matrix_t m) { return get(m, -1, 0) + get(m, 1, 0); }",
                       1, sk.NEAREST)
    st = sk.Stencil("float s(float_matrix_t m) { return 0.5f * (get(m, -1, 0) + "
                    "get(m, 1, 0)); }", 1, sk.NEAREST)
    return {
        "Map, 1 element": lambda: m(one),
        f"Map, {ndev} element(s) (one per device)": lambda: m(two),
        f"Zip with a scalar, {ndev} element(s)": lambda: z(two, two, 2.0),
        f"Map over an IndexVector of {ndev}": lambda: mi(idx, 3),
        f"MapOverlap, {4 * ndev}x4": lambda: mo(mat),
        f"Stencil, {4 * ndev}x4, 10 iterations (per iteration)": lambda: st(mat, iterations=10),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=1000)
    ap.add_argument("--profile", action="store_true", help="cProfile the 2-device Map")
    args = ap.parse_args()
    results = {}
    import pyopencl as cl
    have = max(len(p.get_devices()) for p in cl.get_platforms())
    for ndev in range(1, min(2, have) + 1):
        devs = sk.init(num_devices=ndev)
        for name, fn in cases(ndev).items():
            div = 10 if name.startswith("Stencil") else 1
            cpu, wall = (x / div for x in per_call(fn, devs, args.calls))
            results[(name, ndev)] = (cpu, wall)
            print(f"{ndev} device(s)  host CPU {cpu:7.1f} us  wall {wall:7.1f} us  {name}",
                  flush=True)
        if args.profile and ndev == min(2, have):
            import cProfile
            import pstats
            one = sk.Vector(np.ones(ndev, np.float32))
            m = sk.Map("float f(float x) { return x + 1.0f; }")
            pr = cProfile.Profile()
            pr.enable()
            for _ in range(args.calls):
                m(one)
            devs.finish()
            pr.disable()
            pstats.Stats(pr).sort_stats("tottime").print_stats(25)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
