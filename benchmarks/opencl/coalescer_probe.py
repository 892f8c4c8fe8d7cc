"""Do blocks on different SMs that read the same data at the same time share the
L2's reads? A probe for the L2 read traffic of tiled kernels (matmul's blocks read
the same tiles of a and b in the same phase; ncu counts up to half the L1 misses
as L2 reads there, benchmarks/results/fidelity/REPORT.md).

Each work-group streams a region of ``--region`` bytes in 128-bit loads (each
element read once by its group, so the L1 cannot help), ``s`` groups share a region,
and the grid is ``--groups`` work-groups of 256 work-items (one wave: one group per
SM with the default 132). How the groups that share a region are chosen:

* ``adjacent``: groups bid / s (neighbouring group ids, which the device starts on
  neighbouring SMs at the same time);
* ``spread``: groups bid % (groups / s) (the sharers spread over the grid);
* ``skewed``: adjacent, but each sharer starts its walk at its own offset
  (sharer j at j / s of the region, wrapping round), so that they never read the
  same element at the same time.

The kernel takes the number of groups as an argument: launched through the CUDA
driver, the OpenCL built-ins that read the launch state from the ``%envreg``
registers (get_num_groups) read 0 (ptx_driver.for_cuda). The kernels are built by
NVIDIA's OpenCL compiler and launched from their PTX
through the CUDA driver (benchmarks/fidelity/ptx_driver.py), so that ncu sees them;
run under ncu with the metrics of benchmarks/runs/coalescer_probe.sh. Each launch
prints its label; the counters come from ncu's log. Exits 2 without an NVIDIA
OpenCL device.

    ncu --csv --page raw --metrics ... python benchmarks/opencl/coalescer_probe.py
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
__kernel void stream_shared(__global const float4 *src, __global float *out,
                            int regionVecs, int sharers, int mode, int groups) {
  int bid = get_group_id(0);
  int region = mode == 1 ? bid % (groups / sharers) : bid / sharers;
  int start = mode == 2 ? (bid % sharers) * (regionVecs / sharers) : 0;
  __global const float4 *r = src + (long)region * regionVecs;
  float4 acc = (float4)(0.0f);
  for (int i = get_local_id(0); i < regionVecs; i += get_local_size(0)) {
    int k = start + i;
    if (k >= regionVecs) k -= regionVecs;
    acc += r[k];
  }
  out[get_global_id(0)] = acc.x + acc.y + acc.z + acc.w;
}
"""

MODES = {"adjacent": 0, "spread": 1, "skewed": 2}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--region", type=int, default=4 << 20, help="bytes per region")
    ap.add_argument("--groups", type=int, nargs="+", default=[132])
    ap.add_argument("--sharers", type=int, nargs="+", default=[1, 2, 4, 12, 33, 132])
    ap.add_argument("--modes", nargs="+", default=list(MODES), choices=list(MODES))
    ap.add_argument("--out", help="write the launches (label, grid, expected sectors) here")
    args = ap.parse_args()
    found = nvidia_queue("coalescer_probe")
    if found is None:
        return 2
    import ptx_driver as cu
    import pyopencl as cl

    from mcl.opencl.vendor import load
    _, ctx, _ = found
    prog = cl.Program(ctx, SOURCE).build()
    loaded = load(cu.for_cuda(prog.binaries[0]), "stream_shared", None)
    vecs = args.region // 16
    groups_max = max(args.groups)
    host = np.random.default_rng(0).uniform(0, 1, groups_max * vecs * 4).astype(np.float32)
    sums = host.reshape(groups_max, vecs * 4).sum(axis=1)
    mem = cu.DeviceArrays()
    src, out = mem.upload(host), mem.zeros(4 * groups_max * 256)
    rows = []
    for groups in args.groups:
        for mode in args.modes:
            for s in args.sharers:
                if groups % s or (mode == "skewed" and s == 1):
                    continue
                regions = groups // s
                label = f"groups={groups} mode={mode} sharers={s}"
                argv = [(src, None), (out, None), (vecs, "int32"), (s, "int32"),
                        (MODES[mode], "int32"), (groups, "int32")]
                try:
                    t = cu.launch(loaded, (groups,), (256,), argv)
                except Exception as e:  # noqa: BLE001 - a failed launch is a row
                    print(f"{label}: {e}", flush=True)
                    rows.append({"label": label, "error": str(e), "correct": False})
                    continue
                got = mem.download(out, np.zeros(groups * 256, np.float32))
                region_of = [(b % regions) if mode == "spread" else b // s
                             for b in range(groups)]
                per_group = got.reshape(groups, 256).sum(axis=1)
                ok = bool(np.allclose(per_group, sums[region_of], rtol=1e-3))
                rows.append({"label": label, "groups": groups, "mode": mode, "sharers": s,
                             "l1_miss_sectors": groups * args.region // 32,
                             "unique_sectors": regions * args.region // 32,
                             "time_s": t, "correct": ok})
                print(f"{label}: {t * 1e6:.1f} us, correct {ok}", flush=True)
    mem.free()
    loaded.unload()
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1))
    return 0 if all(r["correct"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
