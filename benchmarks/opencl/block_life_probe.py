"""How long a work-group holds its slot: a copy of 2^24 floats (64 MB read, 64 MB
written), one element a work-item, in work-groups of 64, 256 or 1024 work-items, with
as many of them resident per SM as the device allows or fewer (local memory each
work-group allocates and does not use, at most 48 kB: 2 to 32 resident). Each work-group loads,
waits for its loads and stores, so a slot serves its work-groups one after the other:
where the rounds of work-groups over the resident slots times a work-group's life
exceed the traffic's time at the bandwidth, they set the time. The times against the
rounds give the life of a work-group that waits for one load (the slope) under the
load the others put on the memory; the same with 4 loads a work-item in flight
together (float4), and with two loads one after the other (the second's address read
by the first).

    python benchmarks/opencl/block_life_probe.py --out DIR

Exits 2 without an NVIDIA OpenCL device.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from probe_timing import line_fit, median_time, probe_setup, save  # noqa: E402

SOURCE = r"""
__kernel void copy1(__global float* out, __global const float* in, int pad) {
  __local float room[LOCAL_FLOATS];
  int g = get_global_id(0);
  if (pad < 0) room[get_local_id(0)] = 0.0f;   /* never: the room stays allocated */
  out[g] = in[g];
}
__kernel void copy4(__global float4* out, __global const float4* in, int pad) {
  __local float room[LOCAL_FLOATS];
  int g = get_global_id(0);
  if (pad < 0) room[get_local_id(0)] = 0.0f;
  out[g] = in[g];
}
__kernel void chase(__global float* out, __global const float* in, __global const int* at,
                    int pad) {
  __local float room[LOCAL_FLOATS];
  int g = get_global_id(0);
  if (pad < 0) room[get_local_id(0)] = 0.0f;
  out[g] = in[at[g]];
}
"""

#: floats copied
N = 1 << 24
#: work-group sizes and the resident work-groups per SM each is timed at
SHAPES = ((64, (32, 16, 8, 5)), (256, (8, 5)), (1024, (2,)))
#: local memory an SM has for work-groups (bytes; the H100 and H200: 228 kB less 1 kB
#: a work-group the driver reserves)
SM_LOCAL = 233472


def local_floats(resident: int) -> int:
    """Floats of local memory that let at most ``resident`` work-groups share an SM (no
    more than a work-group may have, 48 kB: for fewer the work-items limit them)."""
    return max(1, min((SM_LOCAL // resident - 1024) // 4 - 64, 49152 // 4 - 16))


def main() -> int:
    found = probe_setup(__doc__, "block_life_probe", 10)
    if found is None:
        return 2
    args, dev, ctx, q = found
    import pyopencl as cl

    sms = dev.max_compute_units
    a, b = (cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 * N) for _ in range(2))
    at = cl.Buffer(ctx, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR,
                   hostbuf=np.arange(N, dtype=np.int32))
    cl.enqueue_fill_buffer(q, b, np.float32(1.0), 0, 4 * N)
    programs: dict[int, object] = {}
    rows = []
    for kernel, items, argv in (("copy1", N, (a, b)), ("copy4", N // 4, (a, b)),
                                ("chase", N, (a, b, at))):
        points = []
        for local, residents in SHAPES:
            for resident in residents:
                floats = local_floats(resident)
                if floats not in programs:
                    programs[floats] = cl.Program(ctx, SOURCE).build(
                        options=[f"-DLOCAL_FLOATS={floats}"])
                knl = cl.Kernel(programs[floats], kernel)
                t = median_time(q, knl, (items,), (local,), (*argv, np.int32(0)), args.repeats)
                groups = items // local
                rounds = groups / (resident * sms)
                points.append((rounds, t))
                rows.append({"kernel": kernel, "local": local, "resident": resident,
                             "groups": groups, "rounds": rounds, "median_s": t})
                print(f"{kernel} {local:4d} work-items, {resident:2d} resident: {groups:6d} "
                      f"groups, {rounds:6.1f} rounds, {t * 1e6:7.1f} us "
                      f"({t / rounds * 1e9:6.0f} ns a round)", flush=True)
        many = [p for p in points if p[0] >= 30]
        if len(many) >= 2:
            slope, fixed = line_fit(many)
            print(f"{kernel}: {slope * 1e9:.0f} ns a round beyond {fixed * 1e6:.1f} us "
                  f"(rounds >= 30)", flush=True)
            rows.append({"kernel": kernel, "fit": "rounds >= 30", "seconds_per_round": slope,
                         "fixed_s": fixed})
    save(args.out, "block_life_probe.json", {"device": dev.name, "n": N, "sms": sms,
                                             "rows": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
