"""How fast the host learns that a device finished, by the way it waits: a tiny kernel
then a 4-byte read, waited for (a) through the read's event (clWaitForEvents), (b) as
a blocking read, (c) with clFinish on the queue. The wake-up latency of a wait is part
of every skeleton call that returns a value (Reduce) and of every halo exchange.

    python3 benchmarks/skel/wait_probe.py [--reps 2000]"""

import argparse
import statistics
import time

import numpy as np
import pyopencl as cl


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=2000)
    ap.add_argument("--spin", type=int, default=4000, help="iterations of the long kernel "
                    "(4000: about half a millisecond on an H100)")
    args = ap.parse_args()
    dev = next(d for p in cl.get_platforms() for d in p.get_devices())
    ctx = cl.Context([dev])
    q = cl.CommandQueue(ctx)
    prg = cl.Program(ctx, "__kernel void k(__global float* x) { x[get_global_id(0)] += 1.0f; }"
                     ).build()
    k = prg.k
    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4096)
    out = np.empty(1, np.float32)
    # pinned host memory: a mapped ALLOC_HOST_PTR buffer (what mcl.skel stages halos in)
    host = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.ALLOC_HOST_PTR, 4096)
    pinned, _ = cl.enqueue_map_buffer(q, host, cl.map_flags.READ | cl.map_flags.WRITE, 0,
                                      (1024,), np.float32)

    def event_wait():
        k(q, (256,), (256,), buf)
        ev = cl.enqueue_copy(q, out, buf, is_blocking=False)
        ev.wait()

    def wait_for_events():
        k(q, (256,), (256,), buf)
        ev = cl._enqueue_read_buffer(q, buf, out, 0, None, False)
        q.flush()
        cl.wait_for_events([ev])

    def blocking():
        k(q, (256,), (256,), buf)
        cl._enqueue_read_buffer(q, buf, out, 0, None, True)

    def finish():
        k(q, (256,), (256,), buf)
        cl._enqueue_read_buffer(q, buf, out, 0, None, False)
        q.finish()

    def pinned_nonblocking_read_only():
        k(q, (256,), (256,), buf)
        cl._enqueue_read_buffer(q, buf, pinned[:1], 0, None, False)

    def pinned_blocking():
        k(q, (256,), (256,), buf)
        cl._enqueue_read_buffer(q, buf, pinned[:1], 0, None, True)

    def pinned_write_only():
        k(q, (256,), (256,), buf)
        cl._enqueue_write_buffer(q, buf, pinned[:1], 0, None, False)

    def launch_only():
        k(q, (256,), (256,), buf)

    def launch_flush():
        k(q, (256,), (256,), buf)
        q.flush()

    def flush_idle():
        q.flush()

    def finish_idle():
        q.finish()

    def nonblocking_read_only():
        k(q, (256,), (256,), buf)
        cl._enqueue_read_buffer(q, buf, out, 0, None, False)

    # a kernel of about half a millisecond: how long after it ends does each kind of
    # wait return (the wake-up, not the enqueue)
    slow = cl.Program(ctx, """__kernel void spin(__global float* x, int n) {
        float a = x[get_global_id(0)];
        for (int i = 0; i < n; ++i) a = a * 0.999f + 0.001f;
        x[get_global_id(0)] = a; }""").build().spin
    big = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 * 132 * 2048)
    pq = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)

    def long_wait(kind, iters) -> float:
        """Enqueue the long kernel and wait for it by ``kind``: the host's seconds beyond
        the kernel's own length (as the device measured it)."""
        t0 = time.perf_counter()
        ev = slow(pq, (132 * 2048,), (256,), big, np.int32(iters))
        if kind == "finish":
            pq.finish()
        elif kind == "event":
            ev.wait()
        else:
            cl._enqueue_read_buffer(pq, buf, out, 0, None, True)
        return time.perf_counter() - t0 - (ev.profile.end - ev.profile.start) / 1e9

    print(dev.name)
    iters = args.spin
    for _ in range(3):
        long_wait("finish", iters)
    ev = slow(pq, (132 * 2048,), (256,), big, np.int32(iters))
    pq.finish()
    print(f"long kernel: {(ev.profile.end - ev.profile.start) / 1e3:.0f} us")
    for kind in ("finish", "event", "blocking read"):
        walls = [long_wait(kind, iters) for _ in range(50)]
        print(f"enqueue + wait for a long kernel, beyond the kernel ({kind:14s}): median "
              f"{statistics.median(walls) * 1e6:6.1f} us  p10 {np.percentile(walls, 10) * 1e6:6.1f}"
              f"  p90 {np.percentile(walls, 90) * 1e6:6.1f}")
    for name, f in [("kernel enqueue only (no wait)", launch_only),
                    ("kernel enqueue + flush", launch_flush),
                    ("flush of an idle queue", flush_idle),
                    ("finish of an idle queue", finish_idle),
                    ("kernel + non-blocking read (no wait)", nonblocking_read_only),
                    ("event.wait() of a non-blocking read", event_wait),
                    ("flush + wait_for_events", wait_for_events),
                    ("blocking read", blocking), ("non-blocking read + finish", finish),
                    ("kernel + non-blocking read to pinned", pinned_nonblocking_read_only),
                    ("kernel + blocking read to pinned", pinned_blocking),
                    ("kernel + non-blocking write from pinned", pinned_write_only)]:
        for _ in range(50):
            f()
        q.finish()
        ts = []
        for _ in range(args.reps):
            t0 = time.perf_counter()
            f()
            ts.append(time.perf_counter() - t0)
        q.finish()
        print(f"{name:40s} median {statistics.median(ts) * 1e6:7.1f} us  "
              f"p10 {np.percentile(ts, 10) * 1e6:7.1f}  p90 {np.percentile(ts, 90) * 1e6:7.1f}")


if __name__ == "__main__":
    main()
