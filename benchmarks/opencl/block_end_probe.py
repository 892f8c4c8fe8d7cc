"""When the work-groups of a grid that is resident all at once end their streams, and
how much of the atomic updates they make at their end (histogram's merges of each
block's bins into ``hist``, a reduction's one update a block) the rest of the kernel
hides.

A grid-stride read of float4s (summed, one float written a work-item) by G
work-groups, every one of them resident at once (as many an SM as the device holds of
the size); at its end each work-group stamps the time (NVIDIA's ``%globaltimer``,
read by inline PTX), then makes ``passes`` passes of atomic increments over 256 ints
(1 kB, as histogram's merges: a warp request updates 32 adjacent ints). Per grid:

* the stream's time alone (passes = 0) and the end stamps of its work-groups: when
  they end, from the first start;
* the merges alone (no stream: every work-group at once, less what a launch of the
  kernel doing nothing takes) and with the stream, at 1 to 64 passes: what the stream
  hides of them;
* the exposure that a queue of the merges, each work-group's arriving when its stream
  ends and served one after the other at the rate the merges alone take, predicts from
  the stamps (:func:`queued_exposure`), and the spread ``D`` such that the exposure is
  ``max(0, A - D)`` for merges of ``A`` alone, as a share of the stream's time less an
  empty launch's.

    python benchmarks/opencl/block_end_probe.py --out DIR [--device cpu]

Exits 2 without an NVIDIA OpenCL device (``--device cpu``: PoCL, the sums, the merges
and the stamps' order checked; its times say nothing).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from probe_timing import median_time, probe_setup, save  # noqa: E402

SOURCE = r"""
#define BINS 256
#ifdef NV_TIMER
static inline ulong stamp(__global uint *ticket) {
  ulong t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
#else
static inline ulong stamp(__global uint *ticket) { return atomic_inc(ticket); }
#endif

__kernel void stream_merge(__global const float4 *in, __global float *out,
                           __global int *hist, __global ulong *stamps,
                           __global uint *ticket, int n, int passes) {
  int t = get_local_id(0), b = get_group_id(0), size = get_local_size(0);
  ulong start = 0;
  if (t == 0) start = stamp(ticket);
  float4 acc = (float4)(0.0f);
  for (int i = get_global_id(0); i < n; i += get_global_size(0)) acc += in[i];
  out[get_global_id(0)] = acc.x + acc.y + acc.z + acc.w;
  barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
  if (t == 0) {
    stamps[2 * b] = start;
    stamps[2 * b + 1] = stamp(ticket);
  }
  for (int p = 0; p < passes; p++)
    for (int k = t; k < BINS; k += size) atomic_inc(&hist[k]);
}
"""

#: (work-items a work-group, float4 elements read)
GRIDS = ((256, 1 << 24), (128, 1 << 24), (1024, 1 << 24), (256, 1 << 22))
PASSES = (1, 4, 16, 64)
BINS = 256


def queued_exposure(ends: np.ndarray, merges_s: float) -> float:
    """Seconds the merges add after the last stream ends, where each work-group's share
    of ``merges_s`` (what they all take alone) arrives when its stream ends (``ends``,
    seconds) and the shares are served one after the other."""
    share = merges_s / len(ends)
    free = 0.0
    for e in np.sort(ends):
        free = max(free, e) + share
    return max(0.0, free - float(np.max(ends)))


def spread(ends: np.ndarray, merges_s: float) -> float:
    """The ``D`` of exposure = max(0, A - D) that :func:`queued_exposure` gives for
    merges of ``merges_s``."""
    return merges_s - queued_exposure(ends, merges_s)


class Grid:
    """The probe's kernel over ``data`` in ``groups`` work-groups of ``size``, with its
    buffers."""

    def __init__(self, ctx, q, knl, data: np.ndarray, size: int, groups: int):
        import pyopencl as cl
        self.q, self.knl, self.size, self.groups = q, knl, size, groups
        self.items = size * groups
        rw = cl.mem_flags.READ_WRITE
        self.bufs = (cl.Buffer(ctx, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR,
                               hostbuf=data),
                     cl.Buffer(ctx, rw, 4 * self.items), cl.Buffer(ctx, rw, 4 * BINS),
                     cl.Buffer(ctx, rw, 16 * groups), cl.Buffer(ctx, rw, 4))

    def _argv(self, elements: int, passes: int) -> tuple:
        return (*self.bufs, np.int32(elements), np.int32(passes))

    def run(self, elements: int, passes: int) -> list[np.ndarray]:
        """One launch, its results read back: (sums, bins, stamps)."""
        import pyopencl as cl
        _, out, hist, stamps, ticket = self.bufs
        for buf, nbytes in ((hist, 4 * BINS), (ticket, 4)):
            cl.enqueue_fill_buffer(self.q, buf, np.int32(0), 0, nbytes)
        self.knl(self.q, (self.items,), (self.size,), *self._argv(elements, passes)).wait()
        got = [np.empty(self.items, np.float32), np.empty(BINS, np.int32),
               np.empty(2 * self.groups, np.uint64)]
        for host, buf in zip(got, (out, hist, stamps), strict=True):
            cl.enqueue_copy(self.q, host, buf)
        return got

    def timed(self, elements: int, passes: int, repeats: int) -> float:
        """The median seconds of ``repeats`` launches."""
        return median_time(self.q, self.knl, (self.items,), (self.size,),
                           self._argv(elements, passes), repeats)


def main() -> int:
    found = probe_setup(__doc__, "block_end_probe", 10, cpu_twin=True)
    if found is None:
        return 2
    args, dev, ctx, q = found
    import pyopencl as cl

    cpu = args.device == "cpu"
    try:
        prg = cl.Program(ctx, SOURCE).build(options=[] if cpu else ["-D", "NV_TIMER"])
    except cl.RuntimeError as e:
        print(f"block_end_probe: the kernel does not build: {e}", file=sys.stderr)
        return 1
    knl = cl.Kernel(prg, "stream_merge")
    sms = dev.max_compute_units
    grids = ((64, 1 << 12),) if cpu else GRIDS
    result = {"device": dev.name, "sms": sms, "bins": BINS, "grids": []}
    bad = 0
    for size, n in grids:
        groups = 4 if cpu else sms * (2048 // size)
        items = size * groups
        data = (np.arange(4 * n, dtype=np.float32) % 13).reshape(n, 4)
        grid = Grid(ctx, q, knl, data, size, groups)
        sums, bins, st = grid.run(n, 2)
        g = np.arange(items)
        want = np.array([data[i::items].sum() for i in g]) if cpu else None
        ok = bool(np.all(bins == 2 * groups)) and (
            want is None or np.allclose(sums, want, rtol=1e-5))
        if cpu:
            ok = ok and sorted(st.tolist()) == list(range(2 * groups))
            bad += not ok
            print(f"grid {groups} x {size}: {'ok' if ok else 'WRONG'}", flush=True)
            continue
        if not ok:
            print(f"grid {groups} x {size}: WRONG merges", flush=True)
            bad += 1
            continue

        stream, empty = (grid.timed(n, 0, args.repeats),
                         grid.timed(0, 0, args.repeats))
        _, _, st = grid.run(n, 0)
        starts, ends = st[0::2].astype(np.float64), st[1::2].astype(np.float64)
        ends = (ends - starts.min()) * 1e-9
        span = float(ends.max())
        row = {"work_items": size, "work_groups": groups, "float4s": n,
               "stream_s": stream, "empty_launch_s": empty, "stamp_span_s": span,
               "ends_quantiles_of_span": {str(p): float(np.quantile(ends, p / 100) / span)
                                          for p in (0, 10, 25, 50, 75, 90, 100)},
               "merges": []}
        print(f"grid {groups} x {size}, {16 * n / 2**20:.0f} MB: stream {stream * 1e6:.1f} us "
              f"(an empty launch {empty * 1e6:.1f}),"
              f" stamps span {span * 1e6:.1f} us; ends at "
              + ", ".join(f"{k}%: {v:.3f}" for k, v in row["ends_quantiles_of_span"].items()),
              flush=True)
        for passes in PASSES:
            alone = grid.timed(0, passes, args.repeats) - empty
            both = grid.timed(n, passes, args.repeats)
            exposed = both - stream
            predicted = queued_exposure(ends, alone)
            row["merges"].append({
                "passes": passes, "alone_s": alone, "with_stream_s": both,
                "exposed_s": exposed, "queued_exposure_s": predicted,
                "spread_measured_of_stream": (alone - exposed) / (stream - empty),
                "spread_from_stamps_of_stream": spread(ends, alone) / (stream - empty)})
            print(f"  {passes:3d} passes: alone {alone * 1e6:7.2f} us, with the stream "
                  f"{both * 1e6:7.2f}: exposed {exposed * 1e6:6.2f} us (queue of the stamps: "
                  f"{predicted * 1e6:6.2f}); D / stream {(alone - exposed) / (stream - empty):.3f} "
                  f"(stamps: {spread(ends, alone) / (stream - empty):.3f})", flush=True)
        result["grids"].append(row)
    if cpu:
        return 1 if bad else 0
    save(args.out, "block_end_probe.json", result)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
