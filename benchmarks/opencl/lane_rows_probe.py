"""How long the load-store path of an SM takes for a warp's load whose lanes each read
their own row (gesummv perfect's ``A[i, j]``, spmv_csr perfect's ``values[k]``): every
work-item sums ``steps`` consecutive floats of its row, the rows ``stride`` floats
apart, with 8 or 32 warps an SM whose rows stay in the L1 (each sector is missed once
and then hit 7 times). The time over the warp requests an SM makes, in cycles, against
the 128-B lines a request touches, says what the time model's ``memory instructions``
part should count (mcl.analyses.timing: a cycle per line); strides of a power of two
(lines that fall in the same sets of the L1) against strides a line longer tell
whether where the lines fall matters: the lanes' words in the L1's 32 banks of 4 B
(``bank_degree``: the most lanes at different lines in one bank), and rows of random
length one after the other as CSR's (``csr``).

    python benchmarks/opencl/lane_rows_probe.py --out DIR
    python benchmarks/opencl/lane_rows_probe.py --device cpu   # checks the kernel

Exits 2 without the device asked for.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from probe_timing import median_time, probe_setup, save  # noqa: E402

SOURCE = r"""
__kernel void rows(__global const float* a, __global float* out, int stride, int steps) {
  size_t g = get_global_id(0);
  const __global float* p = a + g * (size_t)stride;
  float s = 0.0f;
  for (int j = 0; j < steps; j++) s += p[j];
  out[g] = s;
}
__kernel void pieces(__global const float* a, __global float* out, int stride, int group,
                     int steps) {
  size_t g = get_global_id(0);
  size_t row = g / group;
  const __global float* p = a + row * (size_t)stride + g % group;
  float s = 0.0f;
  for (int j = 0; j < steps; j++) s += p[j];
  out[g] = s;
}
__kernel void csr_rows(__global const float* a, __global const int* start,
                       __global float* out, int steps) {
  size_t g = get_global_id(0);
  const __global float* p = a + start[g];
  float s = 0.0f;
  for (int j = 0; j < steps; j++) s += p[j];
  out[g] = s;
}
"""

LOCAL = 256
WARP = 32
STEPS = 256
#: floats between neighbouring lanes' rows: coalesced (1), a sector (8), a line (32),
#: spmv_csr's rows (131 on average), powers of two up to gesummv perfect's 4096 and
#: each a line (32 floats) longer; strides whose lanes' words fall in 32, 8, 4 or 2
#: banks of 4 B (33 and 129; 36 and 132; 40; 48). Below STEPS (256) the lanes' rows
#: overlap: a lane reads sectors its neighbours fetched.
STRIDES = (1, 8, 32, 33, 36, 40, 48, 64, 128, 129, 131, 132, 160, 256, 288, 1024, 1056,
           4096, 4128)
#: rows that do not overlap, whose lanes' words one bank holds at most 1 of (257, 1025,
#: 4097), 4 (260, 4100), 8 (264), 16 (272) and 32 (288)
APART = (257, 260, 264, 272, 288, 1025, 4097, 4100)
#: lanes a row in the --pieces runs: groups of this many neighbouring lanes read
#: neighbouring floats of their row (32 / G rows, 32 / G lines or twice that a request),
#: their rows PIECE floats apart (words of every row in the same banks: as many a bank
#: as rows) or PIECE + G (each row's words in banks of their own: one a bank)
GROUPS = (16, 8, 4, 2, 1)
PIECE = 1024
#: rows of random length, one after the other (CSR's): each lane starts its row at the
#: sum of the lengths before it, STEPS and a Poisson count of this mean (spmv_csr
#: perfect's 131: the rows start at random words of their lines, as its rows do)
CSR_MEAN = 131


def lines_a_request(starts: np.ndarray) -> float:
    """128-B lines a warp's request touches, on average over the warps and their first
    32 steps (the lanes' rows starting at the floats ``starts``)."""
    w = starts[: min(starts.size, WARP << 10) // WARP * WARP].reshape(-1, WARP)
    out = []
    for j in range(32):
        s = np.sort(((w + j) * 4) // 128, axis=1)
        out.append(np.mean(1 + np.count_nonzero(np.diff(s, axis=1), axis=1)))
    return float(np.mean(out))


def bank_degree(starts: np.ndarray) -> float:
    """The most distinct words of a warp's lanes one bank of the L1 holds (the time
    model's count, mcl.analyses.banks.degree, with the banks h200.hdl gives the L1's
    storage), on average over the warps and their first 32 steps."""
    from mcl.analyses.banks import degree
    from mcl.analyses.timing_rates import first_level_banks
    from mcl.hdl import load_hardware
    banks = first_level_banks(load_hardware("h200"), "global")
    w = starts[: min(starts.size, WARP << 7) // WARP * WARP].reshape(-1, WARP)
    return float(np.mean([degree([[int(x) + j for x in row]], 4, banks)
                          for j in range(32) for row in w]))


def main() -> int:
    def extra(ap):
        ap.add_argument("--apart", action="store_true",
                        help="only rows that do not overlap (APART) and CSR's")
        ap.add_argument("--pieces", action="store_true",
                        help="only requests of 2 to 32 rows a warp (GROUPS)")
    found = probe_setup(__doc__, "lane_rows_probe", 10, extra=extra, cpu_twin=True)
    if found is None:
        return 2
    args, dev, ctx, q = found
    import pyopencl as cl

    sms = dev.max_compute_units
    clock = dev.max_clock_frequency * 1e6
    prg = cl.Program(ctx, SOURCE).build()
    knl, csr_knl = cl.Kernel(prg, "rows"), cl.Kernel(prg, "csr_rows")
    pieces_knl = cl.Kernel(prg, "pieces")
    result: dict = {"device": dev.name, "driver": dev.driver_version, "sms": sms,
                    "clock_hz": clock, "steps": STEPS, "local": LOCAL, "runs": []}
    plans = ((8, 1), (32, 4)) if args.device == "nvidia" else ((8, 1),)
    for warps, blocks_an_sm in plans:
        groups = sms * blocks_an_sm if args.device == "nvidia" else 4
        n = groups * LOCAL
        rng = np.random.default_rng(1)
        csr = np.concatenate([[0], np.cumsum(STEPS + rng.poisson(CSR_MEAN, n))])
        shapes = [(s, 1) for s in (*(APART if args.apart else STRIDES), "csr")]
        if args.pieces:
            shapes = [(PIECE + extra, g) for g in GROUPS for extra in (0, g)]
        for stride, group in shapes:
            gid = np.arange(n, dtype=np.int64)
            starts = csr[:n] if stride == "csr" else (gid // group) * stride + gid % group
            size = int(starts[-1]) + STEPS
            a = cl.Buffer(ctx, cl.mem_flags.READ_ONLY, 4 * size)
            cl.enqueue_fill_buffer(q, a, np.float32(1.0), 0, 4 * size)
            out = cl.Buffer(ctx, cl.mem_flags.WRITE_ONLY, 4 * n)
            if stride == "csr":
                start = cl.Buffer(ctx, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR,
                                  hostbuf=starts.astype(np.int32))
                kernel, argv = csr_knl, [a, start, out, np.int32(STEPS)]
            elif group > 1:
                kernel = pieces_knl
                argv = [a, out, np.int32(stride), np.int32(group), np.int32(STEPS)]
            else:
                kernel, argv = knl, [a, out, np.int32(stride), np.int32(STEPS)]
            kernel(q, (n,), (LOCAL,), *argv).wait()
            got = np.empty(n, np.float32)
            cl.enqueue_copy(q, got, out)
            if not np.all(got == STEPS):
                print(f"stride {stride}: sums differ from {STEPS}", file=sys.stderr)
                return 1
            row = {"warps_an_sm": warps, "stride": stride, "group": group,
                   "lines": lines_a_request(starts), "bank_degree": bank_degree(starts)}
            if args.device == "nvidia":
                t = median_time(q, kernel, (n,), (LOCAL,), argv, args.repeats)
                requests = warps * STEPS         # warp loads an SM makes
                row.update(seconds=t, cycles_a_request=t * clock / requests)
                row["cycles_a_line"] = row["cycles_a_request"] / row["lines"]
                print(f"{warps:2d} warps an SM, stride {stride!s:>5}, {group:2d} lanes a row: "
                      f"{t * 1e6:8.2f} us, "
                      f"{row['cycles_a_request']:6.2f} cycles a request of "
                      f"{row['lines']:5.2f} lines ({row['cycles_a_line']:.2f} a line), "
                      f"banks {row['bank_degree']:5.2f} deep", flush=True)
            else:
                print(f"stride {stride!s:>5}, {group:2d} lanes a row: checked, "
                      f"{row['lines']:5.2f} lines, banks "
                      f"{row['bank_degree']:5.2f} deep", flush=True)
            result["runs"].append(row)
    save(args.out, "lane_rows_probe.json", result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
