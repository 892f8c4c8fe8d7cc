"""Cold launches: a kernel launched after the device's caches were flushed holds none
of its data in them and no dirty line whose write-back it would pay for, as Nsight
Compute flushes them before the launches it counts and as the feedback's predicted
time assumes (mcl.analyses.timing). ``mcl run --cold`` times kernels so; the fidelity
harness (benchmarks/fidelity/measure.py) too.

Back to back, a memory-bound kernel runs slower: on an H200, gesummv, black_scholes
and vector_add 10-17% (benchmarks/results/perf/h200_2026-11-30/warm_cold.md), the
previous launch's dirty lines written back during the next, and more besides.
"""

from __future__ import annotations

import numpy as np

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


def cache_flush(context, queue, nbytes: int = FLUSH_BYTES, clean: bool = True):
    """A function that enqueues on ``queue`` what evicts the caches before a launch: a
    write of ``nbytes`` (at most a quarter of the device's memory) and, where
    ``clean``, a read of them, which leaves the caches without dirty lines (without it
    they hold up to their size of the write's)."""
    import pyopencl as cl
    dev = queue.device
    nbytes = min(nbytes, dev.global_mem_size // 4) // 16 * 16
    buf = cl.Buffer(context, cl.mem_flags.READ_WRITE, nbytes)
    out = cl.Buffer(context, cl.mem_flags.READ_WRITE, 4)
    scrub = cl.Program(context, _SCRUB).build().scrub
    n = nbytes // 16
    items = dev.max_compute_units * 2048

    def before() -> None:
        cl.enqueue_fill_buffer(queue, buf, np.uint32(0), 0, nbytes)
        if clean:
            scrub(queue, (items,), None, buf, out, np.uint32(n))
    return before
