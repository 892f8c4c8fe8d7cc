"""How a kernel's memory instructions (global loads the L1 serves) overlap the traffic
its other loads bring from the L2 or from device memory: the one pair of the time
model's ``overlap_exponent`` that no probe had measured (h200.target's "memory
instructions" = 2.8 was taken from local memory's overlap with the traffic,
benchmarks/opencl/overlap_probe.py).

A grid that fills the device (8 work-groups of 256 an SM) goes round a stream of
float4, each warp a 512-B run a step, and makes K more loads a step of 128-B lines of
a 16 kB array that the L1 holds (a warp-coalesced float each; the line changes with the
step, so nothing is hoisted). Each K is timed three ways:

* ``both``: the stream from its buffer and the K loads;
* ``hits``: the same loads, the stream's float4 read from a 4 kB array instead (every
  load an L1 hit: the memory instructions' time T_e, the stream's own requests included);
* ``stream``: K = 0 (the traffic's time T_m).

in two families: ``l2``, a 16 MB buffer read --passes times, each pass from 7/16 of
the way along (the L2 holds it, an SM's L1 not what it reads next: the time model's
``l2 bandwidth`` part, the L1-L2 link), and ``dram``, a 512 MB buffer
read once (its ``memory`` part). With T both (each less an empty kernel's), the
exponent q of T = (T_e^q + T_m^q)^(1/q) is fitted over the points where neither time
is more than 3 times the other: infinity is perfect overlap, 1 none (their sum).
mcl.analyses.timing combines its memory-instructions part with the memory parts so.

    python benchmarks/opencl/link_overlap_probe.py --out DIR
    python benchmarks/opencl/link_overlap_probe.py --device cpu    # checks the kernels

Exits 2 without the device asked for.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from overlap_probe import comparable, fit_exponent  # noqa: E402
from probe_timing import median_time, probe_setup, save  # noqa: E402

#: work-items per work-group, work-groups per SM
LOCAL = 256
RESIDENT = 8
#: floats of the array the L1 holds (32 + the most K lines of 128 B: 16 kB), float4 of
#: the stream's stand-in (4 kB)
SMALL = 32 * (32 + 96)
SMALL4 = 256
#: the families: (buffer MB, passes) and the loads a step K timed
FAMILIES = {"l2": (16, None), "dram": (512, 1)}
STEPS = {"l2": (0, 1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 24),
         "dram": (0, 4, 8, 12, 16, 24, 32, 40, 48, 64, 96)}


def source(k: int, mode: str) -> str:
    """The kernel ``probe`` with ``k`` L1 loads a step; ``mode`` both or hits (the
    stream's float4 from the 4 kB array ``small4``). A step's loads are lines
    ``base``, ``base + 1``, ... of ``small``, base one of 32 lines chosen by the step:
    an address and an immediate offset each, no index arithmetic between them."""
    stream = "big[j]" if mode == "both" else f"small4[i & {SMALL4 - 1}]"
    loads = "".join(f"    s += line[{32 * j}];\n" for j in range(k))
    return (
        "__kernel void probe(__global const float4* big, __global const float4* small4,\n"
        "                    __global const float* small, __global float* out,\n"
        "                    int n4, int passes, int rot) {\n"
        "  size_t g = get_global_id(0), stride = get_global_size(0);\n"
        "  int lane = get_local_id(0) & 31;\n"
        "  float4 v = (float4)(0.0f);\n"
        "  float s = 0.0f;\n"
        "  for (int p = 0; p < passes; p++)\n"
        "   for (size_t i = g; i < (size_t)n4; i += stride) {\n"
        "    size_t j = i + (size_t)p * rot % (size_t)n4;\n"
        "    if (j >= (size_t)n4) j -= n4;\n"
        f"    __global const float* line = small + ((int)(i >> 5) * 37 & 31) * 32 + lane;\n"
        f"    v += {stream};\n"
        f"{loads}"
        "   }\n"
        "  out[g] = v.x + v.y + v.z + v.w + s;\n"
        "}\n")


def filled(n4: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The stream (float4 j: j % 5, 1, 2, j % 3), the array the L1 holds (element e:
    e % 7 + 1) and the stream's stand-in (element e: e % 3): small whole numbers, whose
    sums float32 keeps exact, that differ with the index read."""
    j = np.arange(n4)
    big = np.stack([j % 5, np.ones(n4), 2 * np.ones(n4), j % 3], axis=1).astype(np.float32)
    return (big, (np.arange(SMALL) % 7 + 1).astype(np.float32),
            (np.arange(4 * SMALL4) % 3).astype(np.float32))


def expected(items: int, n4: int, passes: int, rot: int, k: int, mode: str) -> np.ndarray:
    """What ``probe`` writes for each work-item (the arrays of :func:`filled`)."""
    big, small, small4 = (a.astype(np.float64) for a in filled(n4))
    g = np.arange(items)
    lane = g % LOCAL % 32
    total = np.zeros(items)
    for p in range(passes):
        for i0 in range(0, n4, items):
            i = g + i0
            live = i < n4
            i = np.where(live, i, 0)
            if mode == "both":
                v = big[(i + p * rot % n4) % n4].sum(axis=1)
            else:
                v = small4.reshape(SMALL4, 4)[i & (SMALL4 - 1)].sum(axis=1)
            base = ((i >> 5) * 37 & 31) * 32 + lane
            s = sum(small[base + 32 * jj] for jj in range(k)) if k else 0.0
            total += np.where(live, v + s, 0.0)
    return total


def main() -> int:
    def extra(ap):
        ap.add_argument("--passes", type=int, default=64,
                        help="passes over the 16 MB buffer of the l2 family (default 64)")
        ap.add_argument("--families", nargs="+", choices=sorted(FAMILIES),
                        default=list(FAMILIES), help="which (default both)")
        ap.add_argument("--sass", type=int, nargs="*", default=[],
                        help="K whose kernels' SASS is kept in --out (ptxas, cuobjdump)")
    found = probe_setup(__doc__, "link_overlap_probe", 10, extra=extra, cpu_twin=True)
    if found is None:
        return 2
    args, dev, ctx, q = found
    import pyopencl as cl

    cpu = args.device == "cpu"
    sms = 2 if cpu else dev.max_compute_units
    items = sms * RESIDENT * LOCAL
    flags = cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR
    _, small_host, small4_host = filled(1)
    small = cl.Buffer(ctx, flags, hostbuf=small_host)
    small4 = cl.Buffer(ctx, flags, hostbuf=small4_host)
    out = cl.Buffer(ctx, cl.mem_flags.WRITE_ONLY, 4 * items)
    empty = cl.Program(ctx, "__kernel void empty(__global float* o) { }").build()
    t_empty = 0.0 if cpu else median_time(q, empty.empty, (LOCAL,), (LOCAL,), (out,),
                                          args.repeats)
    result = {"device": dev.name, "driver": dev.driver_version, "sms": sms,
              "work_items": items, "local": LOCAL, "empty_s": t_empty, "families": {}}
    programs: dict = {}
    for family in args.families:
        mb, passes = FAMILIES[family]
        passes = passes or args.passes
        n4 = mb * (1 << 20) // 16
        if cpu:
            # fewer elements, not a multiple of the grid, so that each pass's rotation
            # gives a work-item other elements than its own and a wrong index shows
            mb, passes, n4 = 1, 2, 61600
        big = cl.Buffer(ctx, flags, hostbuf=filled(n4)[0])
        # each pass starts 7/16 of the buffer further on (a multiple of a warp's run):
        # an SM reads other lines than in the pass before, which its L1 does not hold
        rot = (7 * n4 // 16) // 32 * 32
        argv = (big, small4, small, out, np.int32(n4), np.int32(passes), np.int32(rot))
        rows, points = [], []
        memory = None
        for k in STEPS[family][:4] if cpu else STEPS[family]:
            times = {}
            for mode in ("both", "hits"):
                if (k, mode) not in programs:
                    programs[k, mode] = cl.Kernel(cl.Program(ctx, source(k, mode)).build(),
                                                  "probe")
                knl = programs[k, mode]
                knl(q, (items,), (LOCAL,), *argv).wait()
                got = np.empty(items, np.float32)
                cl.enqueue_copy(q, got, out)
                if cpu and not np.array_equal(got, expected(items, n4, passes, rot, k, mode)):
                    print(f"{family} K = {k} {mode}: wrong sums", file=sys.stderr)
                    return 1
                times[mode] = 0.0 if cpu else median_time(
                    q, knl, (items,), (LOCAL,), argv, args.repeats) - t_empty
            if k == 0:
                memory = times["both"]
            row = {"k": k, "both_s": times["both"], "hits_s": times["hits"]}
            q_here = None
            if not cpu and k and comparable(memory, times["hits"]):
                points.append((times["hits"], memory, times["both"]))
                q_here = fit_exponent([points[-1]])
            row["q"] = q_here
            rows.append(row)
            if cpu:
                print(f"{family} K = {k}: checked", flush=True)
            else:
                print(f"{family} K = {k:3d}: both {times['both'] * 1e6:8.2f} us, hits alone "
                      f"{times['hits'] * 1e6:8.2f}, traffic alone {memory * 1e6:8.2f}, "
                      f"both / longer {times['both'] / max(times['hits'], memory):5.3f}"
                      + (f", q {q_here:.2f}" if q_here else ""), flush=True)
        q_fit = None if cpu else fit_exponent(points)
        result["families"][family] = {"mb": mb, "passes": passes, "bytes": 16 * n4 * passes,
                                      "memory_s": memory, "rows": rows, "q": q_fit,
                                      "points": len(points)}
        if not cpu:
            print(f"{family}: traffic {16 * n4 * passes / memory / 1e12:.2f} TB/s; "
                  f"q = {q_fit} over {len(points)} points", flush=True)
        big.release()
    if args.sass and args.out is not None and not cpu:
        from probe_sass import sass_figures
        args.out.mkdir(parents=True, exist_ok=True)
        result["sass"] = {
            f"{mode}_{k}": sass_figures(cl.Program(ctx, source(k, mode)).build().get_info(
                cl.program_info.BINARIES)[0], args.out, f"{mode}_{k}")
            for k in args.sass for mode in ("both", "hits")}
    save(args.out, "link_overlap_probe.json", result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
