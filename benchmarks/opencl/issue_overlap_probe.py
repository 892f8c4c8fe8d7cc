"""How the issue slots and the load-store path (local memory's banks) overlap: kernels
whose work-items go round a loop like a tiled matmul's inner loop, each step reading
RA float4 of one local array and CB float4 of another (128-bit reads, 32 consecutive
float4 a warp: no bank conflict) and making the 16 RA CB multiply-adds of their outer
product into as many accumulators. Each shape is timed three ways: both; the
multiply-adds alone (their operands read once, before the loop: the same issue slots
less the reads); the reads alone (each float4 added into one accumulator: 4 additions
a read). Shapes from 2 reads to 32 multiply-adds (the banks' part the longer) to 6
reads to 128 (the issue slots' the longer), each in a grid of 1, 2 and 4 work-groups
of 256 work-items an SM (2, 4 and 8 warps a scheduler), the work an SM does the same;
then all again with the reads from two arrays of 8 kB in device memory, which the L1
holds (the load-store path's global loads: the time model's memory-instructions part).
With T_i and T_l the times alone and T both (each less an empty kernel's), the exponent
q of T = (T_i^q + T_l^q)^(1/q) is fitted over the points where neither is more than 3
times the other, per residency and over all: infinity is perfect overlap (the longer
alone), 1 none. mcl.analyses.timing combines its issue part with its shared-memory and
memory-instructions parts so (the target file's ``issue_overlap_exponent``).

    python benchmarks/opencl/issue_overlap_probe.py --out DIR [--spaces local global]
        [--device cpu]

Exits 2 without an NVIDIA OpenCL device (``--device cpu``: the kernels on PoCL at a
small size, their results checked; their times say nothing).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from overlap_probe import comparable, fit_exponent  # noqa: E402
from probe_timing import median_time, probe_setup, save  # noqa: E402

#: (RA, CB): float4 read a step from each local array
SHAPES = ((1, 1), (2, 1), (2, 2), (3, 2), (4, 2), (3, 3))
#: where the reads read: local memory, or device memory the L1 holds (global loads)
SPACES = ("local", "global")
#: work-groups of LOCAL work-items an SM
RESIDENT = (1, 2, 4)
LOCAL = 256
#: steps a work-item makes with one work-group an SM (fewer with more, the same work an SM)
STEPS = 2048
#: local float4 of each array: 16 rows of 32 (two halves of 8 rows the steps alternate)
ROWS = 16


def source(ra: int, cb: int, mode: str, space: str = "local") -> str:
    """The kernel ``probe`` of shape (ra, cb): ``mode`` both, fma (the multiply-adds
    alone) or lds (the reads alone); ``space`` local, or global: the same reads of two
    arrays of 8 kB in device memory (``ga``, ``gb``, as the local ones are filled), which
    the L1 cache holds, through the load-store path's global loads."""
    acc = [(i, x, j, y) for i in range(ra) for x in "xyzw" for j in range(cb) for y in "xyzw"]
    if space == "global":
        lines = ["__kernel void probe(__global float* out, int k, "
                 "__global const float4* la, __global const float4* lb) {",
                 "  int lid = get_local_id(0), lane = lid & 31;"]
    else:
        lines = ["__kernel void probe(__global float* out, int k) {",
                 f"  __local float4 la[{ROWS * 32}];",
                 f"  __local float4 lb[{ROWS * 32}];",
                 "  int lid = get_local_id(0), lane = lid & 31;",
                 f"  for (int e = lid; e < {ROWS * 32}; e += get_local_size(0)) {{",
                 "    la[e] = (float4)(e * 1e-3f, 1.0f, 0.5f, 0.25f);",
                 "    lb[e] = (float4)(1.0f, e * 1e-3f, 0.125f, 2.0f);",
                 "  }",
                 "  barrier(CLK_LOCAL_MEM_FENCE);"]
    if mode == "lds":
        lines += [f"  float4 sa{i} = (float4)(0.0f);" for i in range(ra)]
        lines += [f"  float4 sb{j} = (float4)(0.0f);" for j in range(cb)]
    else:
        lines += [f"  float c{n} = 0.0f;" for n in range(len(acc))]
    if mode == "fma":
        lines += [f"  float4 a{i} = la[{i} * 32 + lane];" for i in range(ra)]
        lines += [f"  float4 b{j} = lb[{j} * 32 + lane];" for j in range(cb)]
    lines += ["  for (int s = 0; s < k; s += 8) {",
              "    int off = ((s >> 3) & 1) * 8 * 32 + lane;"]
    for u in range(8):
        lines.append("    {")
        if mode != "fma":
            lines += [f"    float4 a{i} = la[{(u * ra + i) % 8 * 32} + off];" for i in range(ra)]
            lines += [f"    float4 b{j} = lb[{(u * cb + j) % 8 * 32} + off];" for j in range(cb)]
        if mode == "lds":
            lines += [f"    sa{i} += a{i};" for i in range(ra)]
            lines += [f"    sb{j} += b{j};" for j in range(cb)]
        else:
            lines += [f"    c{n} = fma(a{i}.{x}, b{j}.{y}, c{n});"
                      for n, (i, x, j, y) in enumerate(acc)]
        lines.append("    }")
    lines.append("  }")
    if mode == "lds":
        total = " + ".join([f"dot(sa{i}, (float4)(1.0f))" for i in range(ra)]
                           + [f"dot(sb{j}, (float4)(1.0f))" for j in range(cb)])
    else:
        total = " + ".join(f"c{n}" for n in range(len(acc)))
    lines += [f"  out[get_global_id(0)] = {total};", "}"]
    return "\n".join(lines) + "\n"


def expected(ra: int, cb: int, mode: str, k: int, lid: np.ndarray) -> np.ndarray:
    """What ``probe`` writes for the work-items of local ids ``lid`` (float64)."""
    rows = np.arange(ROWS * 32)
    la = np.stack([rows * 1e-3, np.ones_like(rows, float), 0.5 + 0 * rows,
                   0.25 + 0 * rows], axis=1)
    lb = np.stack([np.ones_like(rows, float), rows * 1e-3, 0.125 + 0 * rows,
                   2.0 + 0 * rows], axis=1)
    lane = lid & 31
    total = np.zeros(lid.shape)
    for s in range(0, k, 8):
        half = ((s >> 3) & 1) * 8 * 32
        for u in range(8):
            a = [la[(u * ra + i) % 8 * 32 + half + lane] if mode != "fma"
                 else la[i * 32 + lane] for i in range(ra)]
            b = [lb[(u * cb + j) % 8 * 32 + half + lane] if mode != "fma"
                 else lb[j * 32 + lane] for j in range(cb)]
            if mode == "lds":
                total += sum(x.sum(axis=1) for x in a + b)
            else:
                total += sum(x.sum(axis=1) for x in a) * sum(y.sum(axis=1) for y in b)
    return total


def main() -> int:
    found = probe_setup(__doc__, "issue_overlap_probe", 10, cpu_twin=True, extra=lambda ap: (
        ap.add_argument("--spaces", nargs="+", choices=SPACES, default=list(SPACES),
                        help="where the reads read (default: both)")))
    if found is None:
        return 2
    args, dev, ctx, q = found
    import pyopencl as cl

    cpu = getattr(args, "device", "nvidia") == "cpu"
    sms = 2 if cpu else dev.max_compute_units
    out = cl.Buffer(ctx, cl.mem_flags.WRITE_ONLY, 4 * sms * LOCAL * max(RESIDENT))
    rows = np.arange(ROWS * 32, dtype=np.float32)
    one = np.ones_like(rows)
    flags = cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR
    ga, gb = (cl.Buffer(ctx, flags, hostbuf=np.ascontiguousarray(np.stack(cols, axis=1)))
              for cols in ([rows * np.float32(1e-3), one, 0.5 * one, 0.25 * one],
                           [one, rows * np.float32(1e-3), 0.125 * one, 2.0 * one]))
    empty = cl.Program(ctx, "__kernel void empty(__global float* o) { }").build()
    t_empty = 0.0 if cpu else median_time(q, empty.empty, (LOCAL,), (LOCAL,), (out,),
                                          args.repeats)
    result = {"device": dev.name, "local": LOCAL, "sms": sms, "empty_s": t_empty,
              "rows": [], "q": {}}
    for space in args.spaces:
        result["q"][space] = {}
        if family(args, cl, ctx, q, cpu, sms, out, (ga, gb), t_empty, space, result) != 0:
            return 1
    save(args.out, "issue_overlap_probe.json", result)
    return 0


def family(args, cl, ctx, q, cpu, sms, out, arrays, t_empty, space, result) -> int:
    """The shapes and residencies of ``space``'s reads, into ``result``."""
    points_all = []
    for resident in RESIDENT:
        k = 16 if cpu else STEPS // resident
        items = sms * resident * LOCAL
        points = []
        for ra, cb in SHAPES:
            times = {}
            for mode in ("both", "fma", "lds"):
                prg = cl.Program(ctx, source(ra, cb, mode, space)).build()
                argv = (out, np.int32(k)) + (arrays if space == "global" else ())
                if cpu:
                    prg.probe(q, (items,), (LOCAL,), *argv).wait()
                    got = np.empty(items, np.float32)
                    cl.enqueue_copy(q, got, out)
                    want = expected(ra, cb, mode, k, np.arange(items) % LOCAL)
                    if not np.allclose(got, want, rtol=1e-4):
                        print(f"{space} {ra}x{cb} {mode}: wrong result", file=sys.stderr)
                        return 1
                    times[mode] = 1.0
                else:
                    times[mode] = median_time(q, prg.probe, (items,), (LOCAL,), argv,
                                              args.repeats) - t_empty
            both, fma, lds = times["both"], times["fma"], times["lds"]
            row = {"space": space, "resident": resident, "ra": ra, "cb": cb, "k": k,
                   "multiply_adds_a_step": 16 * ra * cb, "reads_a_step": ra + cb,
                   "both_s": both, "fma_alone_s": fma, "lds_alone_s": lds}
            q_here = None
            if not cpu and comparable(lds, fma):
                points.append((fma, lds, both))
                q_here = fit_exponent([(fma, lds, both)])
            row["q"] = q_here
            result["rows"].append(row)
            print(f"{space}, {resident} a SM, {ra}x{cb}: both {both * 1e6:8.2f} us, multiply-adds "
                  f"alone {fma * 1e6:8.2f}, reads alone {lds * 1e6:8.2f}, both / longer "
                  f"{both / max(fma, lds):5.3f}" + (f", q {q_here:.2f}" if q_here else ""),
                  flush=True)
        result["q"][space][str(resident)] = fit_exponent(points) if not cpu else None
        points_all += points
        print(f"{space}, {resident} work-groups an SM: q = "
              f"{result['q'][space][str(resident)]} over {len(points)} points", flush=True)
    result["q"][space]["all"] = fit_exponent(points_all) if not cpu else None
    print(f"{space}: q = {result['q'][space]['all']} over {len(points_all)} points")
    return 0


if __name__ == "__main__":
    sys.exit(main())
