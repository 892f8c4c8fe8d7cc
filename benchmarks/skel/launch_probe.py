"""What a multi-device call costs beyond its kernels, by how the host launches and
waits: the hand-written Mandelbrot kernel split over 1 or 2 devices (half the rows
each), in one context holding every device (as mcl.skel) or one context per device,
the host waiting with clFinish per queue, with clWaitForEvents, or polling the
kernels' events (clGetEventInfo) until they complete; or reading 4 bytes of each
result after the kernel, as a blocking read (read) or polling the read's event
(readpoll). Per mode: the median wall time
of a call, the devices' time (profiling: from the first kernel's start to the last
command's end), and when each device's kernel started after the first one.

    python3 benchmarks/skel/launch_probe.py [--size 8192] [--iters 100] [--reps 50]"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import pyopencl as cl

sys.path.insert(0, str(Path(__file__).resolve().parent))
from handwritten import SOURCE  # noqa: E402

COMPLETE = cl.command_execution_status.COMPLETE
HOST = np.empty(16, np.int32)


def setup(devices, shared: bool):
    ctxs = [cl.Context(devices)] * len(devices) if shared else [cl.Context([d])
                                                                for d in devices]
    prop = cl.command_queue_properties.PROFILING_ENABLE
    queues = [cl.CommandQueue(c, d, properties=prop)
              for c, d in zip(ctxs, devices, strict=True)]
    progs = {}
    kernels = []
    for c in ctxs:
        if id(c) not in progs:
            progs[id(c)] = cl.Program(c, SOURCE).build()
        kernels.append(cl.Kernel(progs[id(c)], "hand_mandel"))
    return ctxs, queues, kernels


def call(queues, kernels, bufs, n, iters, wait: str):
    k = len(queues)
    rows = n // k
    evs = []
    for q, kern, b in zip(queues, kernels, bufs, strict=True):
        kern.set_args(b, np.int32(n), np.int32(rows), np.int32(iters))
        evs.append(cl.enqueue_nd_range_kernel(q, kern, (rows * n,), (256,)))
    kernels_evs = evs
    if wait.startswith("read"):     # then 4 bytes of each device's result to the host
        evs = [cl._enqueue_read_buffer(q, b, HOST[:1], 0, None, wait == "read")
               for q, b in zip(queues, bufs, strict=True)]
        if wait == "read":
            return kernels_evs, evs
    for q in queues:
        q.flush()
    if wait == "finish":
        for q in queues:
            q.finish()
    elif wait == "reversed":        # the last device enqueued waited for first
        for q in reversed(queues):
            q.finish()
    elif wait == "marker":          # the first queue waits for the others' kernels
        cl.enqueue_marker(queues[0], wait_for=evs[1:]) if len(evs) > 1 else None
        queues[0].flush()
        queues[0].finish()
    elif wait == "events":          # one call per context
        for e in evs:
            e.wait()
    else:                           # poll, readpoll
        for e in evs:
            while e.command_execution_status != COMPLETE:
                pass
    return kernels_evs, evs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=int, default=8192)
    ap.add_argument("--iters", type=int, default=100)
    ap.add_argument("--reps", type=int, default=50)
    args = ap.parse_args()
    gpus = [d for p in cl.get_platforms() for d in p.get_devices()
            if d.type & cl.device_type.GPU] or \
        [d for p in cl.get_platforms() for d in p.get_devices()]
    n = args.size
    print(f"{gpus[0].name} x{len(gpus)}, Mandelbrot {n}x{n}, {args.iters} iterations, "
          f"median of {args.reps}")
    print(f"{'devices':>7} {'context':>9} {'wait':>7} {'wall us':>9} {'kernel us':>10} "
          f"{'beyond us':>10} {'starts us':>12}")
    for ndev in sorted({1, min(2, len(gpus))}):
        for shared in (True, False):
            if ndev == 1 and not shared:
                continue
            devs = gpus[:ndev]
            ctxs, queues, kernels = setup(devs, shared)
            bufs = [cl.Buffer(c, cl.mem_flags.READ_WRITE, n * (n // ndev) * 4)
                    for c in ctxs]
            for wait in ("finish", "reversed", "marker", "events", "poll", "read",
                         "readpoll"):
                if wait == "marker" and not shared:
                    continue
                for _ in range(3):
                    call(queues, kernels, bufs, n, args.iters, wait)
                walls, kern, starts = [], [], []
                for _ in range(args.reps):
                    t0 = time.perf_counter()
                    evs, last = call(queues, kernels, bufs, n, args.iters, wait)
                    walls.append(time.perf_counter() - t0)
                    s = [e.profile.start for e in evs]
                    kern.append(max(e.profile.end for e in last) - min(s))
                    starts.append([(x - min(s)) / 1e3 for x in s])
                w, kk = statistics.median(walls) * 1e6, statistics.median(kern) / 1e3
                st = [statistics.median(c) for c in zip(*starts, strict=True)]
                print(f"{ndev:>7} {'shared' if shared else 'own':>9} {wait:>7} {w:9.1f} "
                      f"{kk:10.1f} {w - kk:10.1f} {' '.join(f'{x:.0f}' for x in st):>12}",
                      flush=True)
    if len(gpus) > 1:
        breakdown(gpus, n, args.iters, args.reps)
    for ndev in sorted({1, min(2, len(gpus))}):
        skel_breakdown(n, args.iters, args.reps, ndev)
    skel_breakdown(n, args.iters, args.reps, 1, dot=True)


def breakdown(gpus, n, iters, reps):
    """Host times (us from the call's start) at which each step of a 2-device call
    returns: set arguments and enqueue on each device, flush, then clFinish on each."""
    ctxs, queues, kernels = setup(gpus[:2], True)
    rows = n // 2
    bufs = [cl.Buffer(ctxs[0], cl.mem_flags.READ_WRITE, n * rows * 4) for _ in queues]
    marks = []
    for r in range(reps + 3):
        t = [time.perf_counter()]
        for q, kern, b in zip(queues, kernels, bufs, strict=True):
            kern.set_args(b, np.int32(n), np.int32(rows), np.int32(iters))
            t.append(time.perf_counter())
            cl.enqueue_nd_range_kernel(q, kern, (rows * n,), (256,))
            t.append(time.perf_counter())
        for q in queues:
            q.flush()
        t.append(time.perf_counter())
        for q in queues:
            q.finish()
            t.append(time.perf_counter())
        if r >= 3:
            marks.append([(x - t[0]) * 1e6 for x in t[1:]])
    print_steps("2-device call", ["args0", "enq0", "args1", "enq1", "flush", "finish0",
                                  "finish1"], marks)


def skel_breakdown(n, iters, reps, ndev, dot=False):
    """The same host times for mcl.skel's Map over an index vector (the Mandelbrot
    example; with ``dot``, the dot product's Reduce read back) on ``ndev`` devices:
    each kernel enqueue and read, the call's return, the flush, and clFinish on each
    queue."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "skel"))
    import dot_product
    import mandelbrot

    import mcl.skel as sk
    gpu = any(d.type & cl.device_type.GPU
              for p in cl.get_platforms() for d in p.get_devices())
    devs = sk.init(num_devices=ndev, device_type="GPU" if gpu else None)
    if dot:
        x, y = dot_product.inputs(n * n)
        X, Y = sk.Vector(x), sk.Vector(y)
        X._ensure(sk.block())
        Y._ensure(sk.block())
        mult, total = dot_product.skeletons()

        def call():
            dot_product.dot(mult, total, X, Y).to_numpy()
    else:
        f, idx = mandelbrot.skeleton(), sk.IndexVector(n * n)

        def call():
            f(idx, n, n, iters)
    marks, t, names = [], [], []
    saved = {k: getattr(cl, k) for k in ("enqueue_nd_range_kernel", "_enqueue_read_buffer")}

    def spying(name, orig):
        def spy(*a, **k):
            ev = orig(*a, **k)
            t.append(time.perf_counter())
            names.append(name)
            return ev
        return spy
    for k, orig in saved.items():
        setattr(cl, k, spying("read" if "read" in k else "enq", orig))
    try:
        for r in range(reps + 3):
            t.clear()
            names.clear()
            t.append(time.perf_counter())
            call()
            t.append(time.perf_counter())
            devs.flush()
            t.append(time.perf_counter())
            for q in devs.queues:
                q.finish()
                t.append(time.perf_counter())
            if r >= 3:
                marks.append([(x - t[0]) * 1e6 for x in t[1:]])
    finally:
        for k, orig in saved.items():
            setattr(cl, k, orig)
    what = "Reduce(Zip) (dot product)" if dot else "Map over an index vector (Mandelbrot)"
    print_steps(f"mcl.skel {what} on {ndev} device(s)",
                [*names, "return", "flush", *(f"finish{i}" for i in range(ndev))], marks)


def print_steps(what: str, names: list[str], marks: list[list[float]]) -> None:
    """The median over the calls ``marks`` of the time each step ``names`` returned."""
    med = [statistics.median(c) for c in zip(*marks, strict=True)]
    print(f"{what}, host time when each step returned (us): "
          + ", ".join(f"{a} {m:.1f}" for a, m in zip(names, med, strict=True)))


if __name__ == "__main__":
    main()
