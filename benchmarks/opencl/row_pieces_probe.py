"""How fast device memory serves rows read in pieces: a 8192 x 4096 float matrix
(128 MB) summed row by row, each warp going along its rows in steps, as gesummv's
versions read A and B. Per step a warp loads U floats a lane, 32 apart (a piece of
128 U contiguous bytes, all its loads in flight before they are summed); the G warps
of a group share a row, their pieces side by side (the group's piece 128 U G bytes);
a group goes along R rows at once. Blocks of 8 warps, one block per 8 / G x R rows,
launched in waves as gesummv's are (``--pad``: rows that many floats further apart than
their 16 kB). Each launch cold (behind a write and a read of a
buffer larger than the L2, as the fidelity harness times the examples), the median of
``--repeats``; every row sum checked.

What the time model needs from it: whether the bytes a row gives per step (the piece)
or the rows in flight at once set how far below the stream bandwidth such reads run.
gesummv on the H200 (2026-11-30): gpu_v1 (G 8, U 1: 1 kB a step) 36.7 us, nvidia_v1
(G 8, U 1, R 4) 40.9, hopper_v1 (G 1, U 4) 40.1, hopper_v2 (G 1, 4 kB runs) 34.2,
hopper_v3 (G 8, 1 kB a warp: 8 kB a step) 32.7, for 134 MB.

With ``--out``, each shape's SASS too (ptxas and cuobjdump, probe_sass.sass_figures): the
loads it issues in a row, the latencies a warp waits in an iteration of the loop over a
row's steps and the bytes it keeps in flight each, its loads and branches in
sass_lines.txt, the SASS in sass/. ``--unroll K`` puts ``#pragma unroll K`` on the loop
over a row's steps.

    python benchmarks/opencl/row_pieces_probe.py --out DIR [--unroll K] [--device cpu]

Exits 2 without an NVIDIA OpenCL device (``--device cpu``: PoCL, 256 rows, for the check).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from probe_sass import sass_figures  # noqa: E402
from probe_timing import median_time, probe_setup, save  # noqa: E402

SOURCE = r"""
__kernel __attribute__((reqd_work_group_size(256, 1, 1)))
void rows(__global const float *restrict m, __global float *restrict out, const int cols,
          const int pitch) {
  __local float part[256];
  const int lid = get_local_id(0), t = lid & 31, w = lid >> 5;
  const int group = w / G, p = w % G;
  const int row0 = (get_group_id(0) * (8 / G) + group) * R;
  float acc[R];
  #pragma unroll
  for (int r = 0; r < R; r++) acc[r] = 0.0f;
  UNROLL_STEPS
  for (int j0 = p * 32 * U; j0 < cols; j0 += G * 32 * U) {
    float v[R][U];
    #pragma unroll
    for (int r = 0; r < R; r++)
      #pragma unroll
      for (int u = 0; u < U; u++)
        v[r][u] = m[(size_t)(row0 + r) * pitch + j0 + u * 32 + t];
    #pragma unroll
    for (int r = 0; r < R; r++)
      #pragma unroll
      for (int u = 0; u < U; u++)
        acc[r] += v[r][u];
  }
  // every loop over r unrolled: acc and v stay in registers (a loop with a barrier
  // left rolled would index acc at run time and put it in local memory)
  #pragma unroll
  for (int r = 0; r < R; r++) {
    part[lid] = acc[r];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (t == 0) {
      float s = 0.0f;
      for (int k = 0; k < 32; k++) s += part[lid + k];
      out[(row0 + r) * G + p] = s;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
}
"""

COLS = 4096
ROWS = 8192
#: (U, G, R): floats a lane a step, warps sharing a row, rows a group reads at once; the
#: shapes of gesummv's versions first
SHAPES = [(1, 8, 1), (1, 8, 4), (4, 1, 1), (32, 1, 1), (4, 8, 1),
          (1, 1, 1), (2, 1, 1), (8, 1, 1), (16, 1, 1), (1, 8, 2), (2, 8, 1), (8, 8, 1),
          (16, 8, 1), (4, 1, 4), (1, 1, 4), (8, 1, 2), (1, 2, 1), (1, 4, 1), (4, 2, 1)]


def extra(ap) -> None:
    ap.add_argument("--pad", type=int, default=0,
                    help="floats between the end of a row and the start of the next "
                         "(rows 16 kB apart without: whether the stride matters)")
    ap.add_argument("--unroll", type=int, default=0,
                    help="'#pragma unroll K' on the loop over a row's steps (1: not "
                         "unrolled; without: as the compiler chooses): whether the loads a "
                         "warp keeps in flight set the times")


def main() -> int:
    found = probe_setup(__doc__, "row_pieces_probe", 10, extra, cpu_twin=True)
    if found is None:
        return 2
    args, dev, ctx, q = found
    cpu = args.device == "cpu"
    rows = 256 if cpu else ROWS
    import pyopencl as cl

    from mcl.opencl.conditions import cache_flush
    pitch = COLS + args.pad
    host = np.zeros((rows, pitch), np.float32)
    host[:, :COLS] = (np.arange(rows) % 7 + 1)[:, None]
    host[:, :COLS:3] += 1.0
    want = host.astype(np.float64).sum(axis=1)
    mat = cl.Buffer(ctx, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR, hostbuf=host)
    out = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 * rows * 8)
    cold = None if cpu else cache_flush(ctx, q)
    suffix = (f"_pad{args.pad}" if args.pad else "") + \
        (f"_unroll{args.unroll}" if args.unroll else "")
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "sass_lines.txt").unlink(missing_ok=True)
    source = SOURCE.replace("UNROLL_STEPS",
                            f"#pragma unroll {args.unroll}" if args.unroll else "")
    results = []
    for u, g, r in SHAPES:
        prog = cl.Program(ctx, source).build(options=[f"-DU={u}", f"-DG={g}", f"-DR={r}"])
        knl = prog.rows
        groups = rows // ((8 // g) * r)
        argv = (mat, out, np.int32(COLS), np.int32(pitch))
        knl(q, (groups * 256,), (256,), *argv).wait()
        got = np.empty(rows * g, np.float32)
        cl.enqueue_copy(q, got, out).wait()
        sums = got.reshape(rows, g).astype(np.float64).sum(axis=1)
        ok = bool(np.allclose(sums, want, rtol=1e-6))
        t = median_time(q, knl, (groups * 256,), (256,), argv, args.repeats, before=cold)
        row = {"U": u, "G": g, "R": r, "pad": args.pad, "unroll": args.unroll,
               "warp_piece_bytes": 128 * u, "row_piece_bytes": 128 * u * g, "blocks": groups,
               "seconds": t, "bandwidth": 4 * rows * COLS / t, "correct": ok}
        if not cpu and args.out is not None:
            row.update(sass_figures(bytes(prog.get_info(cl.program_info.BINARIES)[0]),
                                    args.out, f"U{u}_G{g}_R{r}{suffix}"))
        results.append(row)
        print(f"U {u:2d} G {g} R {r}: piece {128 * u:5d} B a warp, {128 * u * g:5d} B a row, "
              f"{groups:5d} blocks: {t * 1e6:7.1f} us, {row['bandwidth'] / 1e12:5.2f} TB/s, "
              f"loads in a row {row.get('loads_together', '-')}, bytes a round "
              f"{row.get('bytes_a_round', '-')}, correct {ok}", flush=True)
    save(args.out, f"row_pieces_probe{suffix}.json",
         {"device": dev.name, "rows": rows, "cols": COLS, "pad": args.pad,
          "unroll": args.unroll, "results": results})
    return 0 if all(r["correct"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
