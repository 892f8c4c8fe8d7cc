"""How fast the H100 serialises integer atomic updates of one element of global
memory (which its L2 performs): kernels in which every work-item, or one per
work-group, adds 1 to the same int (``one``), or in which the work-items of every
work-group each add to their own one of 256 ints, as a histogram's blocks merge
their bins (``bins``: each int updated once per work-group), over 2^10 to 2^16
work-groups of 256 work-items, timed with OpenCL profiling events (median of
--repeats after warm-up). The slope of time over updates of one element is what
one update of it costs when they queue (mcl.analyses.atomics' serialised updates,
hopper.target's ``atomic_update_seconds``); the result is checked (the counts must
add up) before a time is kept.

    python benchmarks/opencl/atomic_rate.py --out DIR

Exits 2 without an NVIDIA OpenCL device.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from probe_timing import line_fit, median_time, probe_setup, save  # noqa: E402

SOURCE = r"""
__kernel void every(__global int* x) { atomic_add(x, 1); }
__kernel void leader(__global int* x) { if (get_local_id(0) == 0) atomic_add(x, 1); }
__kernel void bins(__global int* x) { atomic_add(x + get_local_id(0), 1); }
__kernel void empty(__global int* x, int never) { if (get_global_id(0) == never) x[0] = 1; }
"""

LOCAL = 256


def main() -> int:
    found = probe_setup(__doc__, "atomic_rate", 10)
    if found is None:
        return 2
    args, dev, ctx, q = found
    import pyopencl as cl

    prg = cl.Program(ctx, SOURCE).build()
    x = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 * LOCAL)
    zero = np.zeros(LOCAL, np.int32)
    result: dict = {"device": dev.name, "driver": dev.driver_version, "local": LOCAL}
    # updates of the one element (or of each bin) per launch, by kernel
    updates = {"every": lambda g: g * LOCAL, "leader": lambda g: g, "bins": lambda g: g,
               "empty": lambda g: g}
    for name in ("every", "leader", "bins", "empty"):
        knl = cl.Kernel(prg, name)
        argv = [x] if name != "empty" else [x, np.int32(-1)]
        points = []
        for groups in (1 << 10, 1 << 12, 1 << 14, 1 << 16):
            if name != "empty":    # check first: the counts add up
                cl.enqueue_copy(q, x, zero)
                knl(q, (groups * LOCAL,), (LOCAL,), *argv).wait()
                got = np.empty(LOCAL, np.int32)
                cl.enqueue_copy(q, got, x)
                want = groups * LOCAL if name == "every" else groups
                seen = got[0] if name != "bins" else got.min()
                if seen != want:
                    print(f"{name}: {seen} updates counted, {want} made", file=sys.stderr)
                    return 1
            t = median_time(q, knl, (groups * LOCAL,), (LOCAL,), argv, args.repeats)
            points.append((updates[name](groups), t))
            print(f"{name:6s} {groups:6d} groups: {t * 1e6:9.2f} us", flush=True)
        per, fixed = line_fit(points)
        result[name] = {"points": points, "seconds_per_update": per, "fixed_seconds": fixed}
        print(f"{name}: {per * 1e9:.3f} ns per update of one element (per work-group for "
              f"empty), {fixed * 1e6:.2f} us fixed", flush=True)
    save(args.out, "atomic_rate.json", result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
