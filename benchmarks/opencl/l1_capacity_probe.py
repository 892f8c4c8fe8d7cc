"""How much of a thread-per-row walk does an SM's L1 keep? A probe for the L1 misses of
kernels whose threads each walk their own row (gesummv perfect, spmv_csr perfect: one
thread per row, consecutive threads a row apart, so a warp's request touches 32 lines
and a sector is read again by the same thread 7 more times, one iteration later each).

Each work-item t walks ``rowLen`` floats of row t of each of ``ARRAYS`` arrays
(row-major, a row ``rowLen`` floats long). In one iteration of the walk, the resident
work-groups of an SM touch threads x ARRAYS lines of 128 bytes: the *footprint*. Where
the L1 keeps the footprint from one iteration to the next, each sector is fetched
once (8 floats of it read); where it keeps none, 8 times. ``PAD`` floats of local
memory per work-group (touched, so the compiler keeps them) take their part of the
SM's on-chip memory from the L1 and cap the resident groups.

The grid is ``--waves`` x 132 x resident groups: every SM holds as many groups as fit
(the CUDA occupancy API's count, printed). The kernels are built by NVIDIA's OpenCL
compiler and launched from their PTX through the CUDA driver
(benchmarks/fidelity/ptx_driver.py), so that ncu sees them: run under ncu with the
metrics of benchmarks/runs/l1_capacity_probe.sh; each launch prints its label and the
JSON file (``--out``) holds, in launch order, each configuration and the sectors it
must fetch at least (compulsory). Exits 2 without an NVIDIA OpenCL device.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks" / "fidelity"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from probe_timing import nvidia_queue  # noqa: E402

SOURCE = r"""
__kernel void walk(__global const float *a, __global float *out, int rowLen,
                   long arrayStride) {
  int t = get_global_id(0);
  __global const float *row = a + (long)t * rowLen;
  float acc = 0.0f;
#if PAD > 0
  __local float pad[PAD];
  for (int i = get_local_id(0); i < PAD; i += get_local_size(0)) pad[i] = (float)i;
  barrier(CLK_LOCAL_MEM_FENCE);
  acc = pad[(get_local_id(0) * 7) % PAD] - pad[(get_local_id(0) * 7) % PAD];
#endif
  for (int j = 0; j < rowLen; j++) {
#pragma unroll
    for (int m = 0; m < ARRAYS; m++) acc += row[m * arrayStride + j];
  }
  out[t] = acc;
}
"""

#: (threads per work-group, arrays, local floats per work-group, groups per SM or 0 for
#: as many as fit): footprints from 192 kB to 1 MB per SM with every thread slot taken,
#: the same walks with local memory taken, and gesummv perfect's (one group of 1024 an SM)
CONFIGS = [(t, m, 0, 0) for t in (256, 512, 768, 896, 960, 1024) for m in (1, 2)] + \
    [(1024, m, 0, 0) for m in (3, 4)] + \
    [(1024, 1, p, 0) for p in (2048, 8192, 16384)] + \
    [(512, 2, p, 0) for p in (2048, 8192, 12288)] + \
    [(1024, m, 0, 1) for m in (1, 2, 3)] + [(512, 2, 0, 1)]
SMS = 132


def summary(launches: str, ncu_csv: str) -> list[dict]:
    """The launches of a ``--out`` file beside ncu's counters of them (its CSV log, in
    launch order): per configuration the shared memory the driver configured, the L1
    left beside it, and the sectors fetched from the L2 per compulsory sector (1: each
    fetched once; 8: every float of a sector fetched again)."""
    from report import ncu_kernels
    rows = [r for r in json.loads(Path(launches).read_text()) if "error" not in r]
    counted = ncu_kernels(Path(ncu_csv))

    def num(r, name):
        return float(r[name].replace(",", ""))
    out = []
    for r, c in zip(rows, counted, strict=True):
        shared = num(c, "launch__shared_mem_config_size")
        misses = num(c, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum") - \
            num(c, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum")
        out.append(dict(r, shared_config_bytes=shared, l1_bytes=int((256 << 10) - shared),
                        fetched_per_sector=misses / r["compulsory_sectors"]))
    return out


def table(rows: list[dict]) -> str:
    """The rows of :func:`summary` as a Markdown table."""
    out = ["| row (floats) | threads x groups an SM | arrays | local memory a group | L1 "
           "| lines an iteration | sectors fetched per compulsory sector |",
           "| ---: | --- | ---: | ---: | ---: | ---: | ---: |"]
    for r in rows:
        groups = r.get("groups_per_sm", r["resident"])
        out.append(f"| {r.get('row', 256)} | {r['threads']} x {groups} | {r['arrays']} "
                   f"| {r['pad_bytes'] >> 10} kB | {r['l1_bytes'] >> 10} kB "
                   f"| {r['footprint_bytes'] >> 10} kB | {r['fetched_per_sector']:.2f} |")
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--row", type=int, nargs="+", default=[256],
                    help="floats per row (a walk's length; rows lie this far apart)")
    ap.add_argument("--only", type=int, nargs="*",
                    help="the configurations of these indices into CONFIGS alone")
    ap.add_argument("--skew", type=int, default=0,
                    help="floats added to the distance between the arrays (0: they lie "
                    "a multiple of 64 kB apart, their rows' lines in the same L1 sets)")
    ap.add_argument("--waves", type=int, default=1, help="rounds of resident groups")
    ap.add_argument("--out", help="write the launches (label, configuration, compulsory "
                    "sectors, resident groups) here")
    ap.add_argument("--summary", nargs=2, metavar=("LAUNCHES", "NCU_CSV"),
                    help="print the table of a run (its --out file and ncu's log) and exit")
    args = ap.parse_args()
    if args.summary:
        print(table(summary(*args.summary)))
        return 0
    found = nvidia_queue("l1_capacity_probe")
    if found is None:
        return 2
    import ptx_driver as cu

    from mcl.opencl.vendor import context, load
    _, ctx, _ = found
    context()                      # the CUDA driver's, before its allocations
    rows = []
    mem = cu.DeviceArrays()
    configs = [CONFIGS[i] for i in args.only] if args.only else CONFIGS
    # threads at most (an SM holds 2048), and the arrays
    most = max(t * (g or 2048 // t) for t, _, _, g in configs) * SMS * args.waves
    arrays = max(m for _, m, _, _ in configs)
    for row in args.row:
        stride = most * row + args.skew
        host = np.resize(np.arange(997, dtype=np.float32) * 1e-3, arrays * stride)
        src, out = mem.upload(host), mem.zeros(4 * most)
        for threads, m, pad, per_sm in configs:
            rows.append(_walk(cu, load, ctx, src, out, host, row, stride, threads, m, pad,
                              per_sm, args.waves))
        mem.free()
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1))
    return 0 if all(r["correct"] for r in rows) else 1


def _walk(cu, load, ctx, src, out, host, row, stride, threads, m, pad, per_sm, waves):
    """One configuration built, launched and checked: its row of the JSON file."""
    import pyopencl as cl
    prog = cl.Program(ctx, SOURCE).build(options=[f"-DARRAYS={m}", f"-DPAD={pad}"])
    loaded = load(cu.for_cuda(prog.binaries[0]), "walk", None)
    resident = loaded.occupancy(threads)
    per_sm = min(per_sm or resident, resident)
    groups = SMS * per_sm * waves
    n = groups * threads
    label = f"row={row} threads={threads} arrays={m} pad={pad} groups/SM={per_sm}"
    argv = [(src, None), (out, None), (row, "int32"), (stride, "int64")]
    try:
        t = cu.launch(loaded, (groups,), (threads,), argv)
    except Exception as e:  # noqa: BLE001 - a failed launch is a row
        print(f"{label}: {e}", flush=True)
        return {"label": label, "error": str(e), "correct": False}
    finally:
        loaded.unload()
    got = cu.DeviceArrays.download(out, np.zeros(n, np.float32))
    want = sum(host[k * stride:k * stride + n * row].reshape(n, row).sum(axis=1, dtype=np.float64)
               for k in range(m))
    ok = bool(np.allclose(got, want, rtol=1e-3))
    footprint = per_sm * threads * m * 128
    print(f"{label}: footprint {footprint >> 10} kB, {t * 1e6:.1f} us, correct {ok}",
          flush=True)
    return {"label": label, "row": row, "threads": threads, "arrays": m, "pad_bytes": 4 * pad,
            "groups_per_sm": per_sm, "resident": resident, "groups": groups,
            "footprint_bytes": footprint, "compulsory_sectors": n * m * row * 4 // 32,
            "requested_sectors": n * m * row, "time_s": t, "correct": ok}


if __name__ == "__main__":
    sys.exit(main())
