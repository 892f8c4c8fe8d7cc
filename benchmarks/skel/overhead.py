"""Host-side cost of a skeleton call: many calls on tiny data (one element, a 1x1 or
small matrix), so that the time is the Python and OpenCL enqueue work of the call,
not the kernels. Runs on any OpenCL platform (PoCL gives several CPU devices with
POCL_DEVICES="pthread pthread").

    POCL_DEVICES="pthread pthread" python3 benchmarks/skel/overhead.py [--calls 1000]

Prints microseconds per call for Map, Zip, MapOverlap, Map over an IndexVector and a
Stencil iteration (per iteration of calls of 10 and of 110 iterations, and the cost of
one more iteration without the call's own), on 1 and 2 devices (as many as the platform
has, up to 2). ``--peer-copies 0`` copies halo rows through pinned host memory, as on
GPUs (PoCL's CPU devices copy peer to peer by default)."""

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


def iterations(name: str) -> int:
    """The iterations of a case (its time is given per iteration), 1 if it has none."""
    return int(name.split(" iterations")[0].split()[-1]) if " iterations" in name else 1


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
        f"Stencil, {4 * ndev}x4, 110 iterations (per iteration)": lambda: st(mat,
                                                                         iterations=110),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=1000)
    ap.add_argument("--profile", action="store_true", help="cProfile the 2-device Map")
    ap.add_argument("--peer-copies", type=int, choices=(0, 1), default=None,
                    help="halo rows between devices peer to peer (1) or through pinned host "
                         "memory (0, the default for GPUs); default: the platform's")
    args = ap.parse_args()
    results = {}
    import pyopencl as cl
    have = max(len(p.get_devices()) for p in cl.get_platforms())
    for ndev in range(1, min(2, have) + 1):
        peer = None if args.peer_copies is None else bool(args.peer_copies)
        devs = sk.init(num_devices=ndev, peer_copies=peer)
        for name, fn in cases(ndev).items():
            its = iterations(name)
            calls = args.calls if its < 100 else max(1, args.calls // 10)
            cpu, wall = (x / its for x in per_call(fn, devs, calls))
            results[(name, ndev)] = (cpu, wall)
            print(f"{ndev} device(s)  host CPU {cpu:7.1f} us  wall {wall:7.1f} us  {name}",
                  flush=True)
        tens = [k for k in results if k[1] == ndev and k[0].startswith("Stencil")]
        (c10, w10), (c110, w110) = results[tens[0]], results[tens[1]]
        print(f"{ndev} device(s)  host CPU {(110 * c110 - 10 * c10) / 100:7.1f} us  wall "
              f"{(110 * w110 - 10 * w10) / 100:7.1f} us  Stencil, each iteration beyond "
              "the 10th (halos every iteration)", flush=True)
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
