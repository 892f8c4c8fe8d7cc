"""Does a compute-bound grid take as long as its busiest SM? fma_block_probe.py's
``stream8`` kernel (8 independent chains of multiply-adds a work-item, no device memory
in the loop, which one work-group of 256 already keeps an SM's schedulers busy with) in
G work-groups of 256 over G around multiples of the SMs. Where an SM's blocks share its
issue slots, the kernel takes ceil(G / SMs) blocks' time: G = 8 x SMs + 1 as long as
9 x SMs, the time model's ``busiest_share`` (mcl.analyses.timing); where the device
spread the work finer, it would follow G / SMs. Each time the median of ``--repeats``
launches behind the awake kernel; each result checked against the first work-group's.

    python benchmarks/opencl/grid_rounds_probe.py --out DIR [--kernel K --local L] [--device cpu]

``--kernel outer_4x4 --local 1024``: a kernel of more registers in groups of 1024, one
resident an SM, so that the grid runs many rounds of one block each (``--local`` 256 by
default: 8 resident an SM).

Exits 2 without an NVIDIA OpenCL device (``--device cpu``: PoCL, a few groups, the check).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from fma_block_probe import SOURCE  # noqa: E402
from probe_timing import median_time, probe_setup, save  # noqa: E402


def expected(kernel: str, n: int, k: int, s: float) -> np.ndarray:
    """What work-items 0 .. n-1 of fma_block_probe.py's ``stream8`` or ``outer_RxC``
    store, in closed form (float64): stream8's 8 chains acc = acc * s + 1 from
    g * 1e-6 + i; outer's sum over its k steps of a_i * b_j * s^(2 step)."""
    g = np.arange(n, dtype=np.float64) * np.float32(1e-6)
    if kernel == "stream8":
        sk = s ** k
        return sum((g + i) * sk + (1 - sk) / (1 - s) for i in range(8))
    shape = kernel.removeprefix("outer_").split("x")
    r, c = (int(shape[0]), int(shape[1])) if len(shape) == 2 else (8, 8)
    steps = (1 - s ** (2 * k)) / (1 - s * s)
    return (r * g + r * (r - 1) / 2) * sum(0.5 * j + 1.0 for j in range(c)) * steps


def _figures(dev, kernel: str, local: int) -> tuple[int | None, int | None]:
    """The kernel's registers and resident work-groups of ``local`` an SM, from the CUDA
    driver (None, None where it cannot be asked)."""
    try:
        from mcl.opencl.vendor import load, ptx_of
        loaded = load(ptx_of(dev, SOURCE, []), kernel, None)
    except Exception as e:  # noqa: BLE001 - the figures are missing, the times stand
        print(f"(no CUDA driver figures: {e})")
        return None, None
    try:
        return loaded.registers, loaded.occupancy(local)
    finally:
        loaded.unload()


def _extra(ap) -> None:
    ap.add_argument("--kernel", default="stream8", help="a kernel of fma_block_probe.py")
    ap.add_argument("--local", type=int, default=256, help="work-items a group")


def main() -> int:
    found = probe_setup(__doc__, "grid_rounds_probe", 7, extra=_extra, cpu_twin=True)
    if found is None:
        return 2
    args, dev, ctx, q = found
    import pyopencl as cl
    LOCAL = args.local  # noqa: N806

    from mcl.opencl.conditions import keep_awake
    cpu = getattr(args, "device", "nvidia") == "cpu"
    sms = dev.max_compute_units
    k = 64 if cpu else 4096
    grids = sorted({1, 2, 3} if cpu else
                   {sms // 2, sms, sms + 1, 2 * sms, 2 * sms + 1, 4 * sms, 4 * sms - 4,
                    4 * sms + 1, 8 * sms, 8 * sms + 1, 8 * sms + sms // 3, 9 * sms,
                    9 * sms + 1, 16 * sms, 16 * sms + 1})
    knl = getattr(cl.Program(ctx, SOURCE).build(), args.kernel)
    registers, resident = (None, None) if cpu else _figures(dev, args.kernel, LOCAL)
    print(f"{args.kernel} in groups of {LOCAL}: {registers} registers, {resident} "
          f"resident an SM (the CUDA driver)", flush=True)
    s = np.float32(0.999)
    out = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 * LOCAL * max(grids))
    awake = None if cpu else keep_awake(ctx, q)
    rows, ok_all = [], True
    for g in grids:
        argv = (out, np.int32(k), s)
        knl(q, (g * LOCAL,), (LOCAL,), *argv).wait()
        got = np.empty(g * LOCAL, np.float32)
        cl.enqueue_copy(q, got, out).wait()
        ok = bool(np.allclose(got, expected(args.kernel, g * LOCAL, k, float(s)),
                              rtol=1e-3))
        ok_all &= ok
        t = median_time(q, knl, (g * LOCAL,), (LOCAL,), argv, args.repeats, before=awake)
        busiest = math.ceil(g / sms)
        rows.append({"groups": g, "per_sm": g / sms, "busiest": busiest, "seconds": t,
                     "correct": ok})
        print(f"G={g:5d} ({g / sms:6.2f} an SM, busiest {busiest:3d}): {t * 1e6:9.2f} us, "
              f"{t * 1e6 / busiest:8.3f} us a busiest block, correct {ok}", flush=True)
    save(args.out, f"grid_rounds_probe_{args.kernel}_{LOCAL}.json",
         {"device": dev.name, "sms": sms, "kernel": args.kernel, "local": LOCAL,
          "iterations": k, "registers": registers, "resident": resident, "rows": rows})
    return 0 if ok_all else 1


if __name__ == "__main__":
    sys.exit(main())
