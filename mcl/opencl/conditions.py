"""What a timed launch is enqueued behind: the conditions ``mcl run``, the fidelity
harness and the benchmarks time kernels in.

* **Awake** (:func:`keep_awake`, the default of ``mcl run``): each timed launch queued
  right behind a short kernel that computes and touches no memory. A launch enqueued
  on an idle device pays for its waking in its own profiled time: on an H200, gesummv
  at n = 4096 is profiled at 38 us launched so and at 35 us behind such a kernel, as
  ncu times it (its ``gpu__time_duration``, 34-35 us, whatever the caches hold);
  queued behind another launch of itself, 38 us again
  (benchmarks/opencl/launch_modes.py, benchmarks/results/perf/h200_2026-11-30/
  launch_modes.md). The caches hold what the previous launch left in them: the
  lines of the kernel's data the last-level cache kept, and its dirty lines, whose
  write-back the launch pays for (vector_add: 53-55 us awake, 50-51 cold).
* **Cold** (:func:`cache_flush`, ``mcl run --cold``): each launch behind a write and a
  read of 256 MB, so that the caches hold none of the kernel's data and no dirty
  line, as Nsight Compute flushes them before the launches it counts and as the
  feedback's predicted time assumes (mcl.analyses.timing).
"""

from __future__ import annotations

import numpy as np

from mcl.opencl.device import quiet_build

#: bytes written and then read before a cold launch: five times the largest last-level
#: cache of the GPUs the library describes (the H100's and H200's 50 MB L2)
FLUSH_BYTES = 256 << 20

#: reads the flush buffer (zeros) without writing: the caches end clean
_SCRUB = """
__kernel void scrub(__global const uint4 *a, __global uint *out, const uint n) {
  uint4 acc = (uint4)(0);
  for (uint i = get_global_id(0); i < n; i += get_global_size(0)) acc ^= a[i];
  if (acc.x == 0x9e3779b9u) out[0] = acc.y;
}
"""

#: a chain of multiply-adds in every work-item, no memory touched (the store never
#: happens): about 40 us on an H100 or H200 with 20000 steps
_SPIN = """
__kernel void spin(__global float *out, const int steps) {
  float a = (float)get_global_id(0), b = 1.0001f;
  for (int i = 0; i < steps; i++) a = a * b + 1e-7f;
  if (a == 12345.0f) out[0] = a;
}
"""
SPIN_STEPS = 20000


def cache_flush(context, queue, nbytes: int = FLUSH_BYTES, clean: bool = True,
                write: bool = True):
    """A function that enqueues on ``queue`` what evicts the caches before a launch: a
    write of ``nbytes`` (at most a quarter of the device's memory) and, where
    ``clean``, a read of them, which leaves the caches without dirty lines (without it
    they hold up to their size of the write's). ``write=False``: the read alone, of a
    buffer written once here (the caches left holding other clean lines)."""
    import pyopencl as cl
    dev = queue.device
    nbytes = min(nbytes, dev.global_mem_size // 4) // 16 * 16
    buf = cl.Buffer(context, cl.mem_flags.READ_WRITE, nbytes)
    out = cl.Buffer(context, cl.mem_flags.READ_WRITE, 4)
    scrub = quiet_build(cl.Program(context, _SCRUB)).scrub
    n = nbytes // 16
    items = dev.max_compute_units * 2048
    if not write:
        cl.enqueue_fill_buffer(queue, buf, np.uint32(0), 0, nbytes).wait()

    def before() -> None:
        if write:
            cl.enqueue_fill_buffer(queue, buf, np.uint32(0), 0, nbytes)
        if clean or not write:
            scrub(queue, (items,), None, buf, out, np.uint32(n))
    return before


def keep_awake(context, queue, steps: int = SPIN_STEPS):
    """A function that enqueues on ``queue`` a kernel that computes for ``steps``
    dependent multiply-adds in every work-item a GPU's units hold and touches no
    memory: the launch enqueued after it finds the device awake and is queued before
    the device reaches it. On a CPU device, a work-item per compute unit."""
    import pyopencl as cl
    dev = queue.device
    out = cl.Buffer(context, cl.mem_flags.READ_WRITE, 4)
    spin = quiet_build(cl.Program(context, _SPIN)).spin
    gpu = bool(dev.type & cl.device_type.GPU)
    items = dev.max_compute_units * (2048 if gpu else 1)

    def before() -> None:
        spin(queue, (items,), None, out, np.int32(steps))
    return before
