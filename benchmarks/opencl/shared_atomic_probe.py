"""What a warp's atomic update of shared memory costs as its lanes' words fall: the
feedback says that a histogram's ``lhist[data[i]]`` takes the banks once where the
lanes fall in different banks and up to 32 times where they fall at different words
of one bank (mcl.analyses.bank_data), and that the time model counts it as random words would.
Each work-item of 1056 work-groups of 256 (8 an SM on the H100 and H200) adds 1 to a
word of a 1024-int local array --iters times, the word chosen by its lane:

* ``banks``: lane l at word l (32 banks, one word each);
* ``word K``: K lanes at one word (lane / K), the words in different banks;
* ``bank K``: K lanes at different words of one bank (a K-way bank conflict);
* ``data``: the word read from device memory, as a histogram reads it: uniform over
  256 bins, or hist256's data (benchmarks/fidelity/heldout_kernels/hist256: half of
  the values in 8 bins 32 apart, one bank).

Each kernel's counts are checked (every update lands) before its time is kept; the
time per warp update is the median launch over the updates an SM makes, in cycles of
the device's highest clock.

    python benchmarks/opencl/shared_atomic_probe.py --out DIR

Exits 2 without an NVIDIA OpenCL device.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from probe_timing import median_time, probe_setup, save  # noqa: E402

SOURCE = r"""
__kernel void probe(__global int* out, __global const uchar* data, int iters, int k,
                    int mode) {
  __local int h[1024];
  int lid = get_local_id(0);
  for (int i = lid; i < 1024; i += get_local_size(0)) h[i] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  int lane = lid & 31;
  int word = mode == 0 ? lane
           : mode == 1 ? lane / k
           : (lane % (32 / k)) + (lane / (32 / k)) * 32;
  if (mode == 3) {
    size_t at = get_global_id(0);
    size_t stride = get_global_size(0);
    for (int it = 0; it < iters; it++) atomic_add(&h[data[at + it * stride]], 1);
  } else {
    for (int it = 0; it < iters; it++) atomic_add(&h[word], 1);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int i = lid; i < 1024; i += get_local_size(0)) atomic_add(&out[i], h[i]);
}
"""

LOCAL = 256
GROUPS = 132 * 8
SMS = 132


#: the held-out histogram whose data the probe reads as well
HIST256 = Path(__file__).resolve().parents[1] / "fidelity" / "heldout_kernels" / "hist256"


def _data(rng, n: int, hot: bool) -> np.ndarray:
    """``n`` bytes: uniform over 256 bins, or hist256's reference data (``hot``)."""
    if not hot:
        return rng.integers(0, 256, n).astype(np.uint8)
    import importlib.util
    spec = importlib.util.spec_from_file_location("hist256_reference",
                                                  HIST256 / "reference.py")
    reference = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(reference)
    return reference.inputs(rng, n)["data"]


def main() -> int:
    found = probe_setup(__doc__, "shared_atomic_probe", 10,
                        lambda ap: ap.add_argument("--iters", type=int, default=512))
    if found is None:
        return 2
    args, dev, ctx, q = found
    import pyopencl as cl

    prg = cl.Program(ctx, SOURCE).build()
    knl = cl.Kernel(prg, "probe")
    iters = args.iters
    n = GROUPS * LOCAL * iters
    rng = np.random.default_rng(7)
    mf = cl.mem_flags
    out = cl.Buffer(ctx, mf.READ_WRITE, 4 * 1024)
    clock = dev.max_clock_frequency * 1e6
    warp_updates = GROUPS * LOCAL // 32 * iters / SMS      # an SM's warp updates
    cases = [("banks", 0, 1, None)] + [(f"word {k}", 1, k, None) for k in (2, 4, 8, 32)] \
        + [(f"bank {k}", 2, k, None) for k in (2, 4, 8, 16, 32)] \
        + [("data uniform", 3, 1, False), ("data hist256", 3, 1, True)]
    result: dict = {"device": dev.name, "driver": dev.driver_version, "groups": GROUPS,
                    "local": LOCAL, "iters": iters, "clock_hz": clock, "rows": []}
    empty = cl.Buffer(ctx, mf.READ_ONLY, 1)
    for name, mode, k, hot in cases:
        data = empty
        if hot is not None:
            host = _data(rng, n, hot)
            data = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=host)
        argv = [out, data, np.int32(iters), np.int32(k), np.int32(mode)]
        cl.enqueue_copy(q, out, np.zeros(1024, np.int32))
        knl(q, (GROUPS * LOCAL,), (LOCAL,), *argv).wait()
        got = np.empty(1024, np.int32)
        cl.enqueue_copy(q, got, out)
        if int(got.sum()) != GROUPS * LOCAL * iters:
            print(f"{name}: {int(got.sum())} updates landed of {GROUPS * LOCAL * iters}",
                  file=sys.stderr)
            return 1
        t = median_time(q, knl, (GROUPS * LOCAL,), (LOCAL,), argv, args.repeats)
        cycles = t * clock / warp_updates
        result["rows"].append({"case": name, "seconds": t, "cycles_per_warp_update": cycles})
        print(f"{name:14s} {t * 1e6:9.1f} µs  {cycles:6.2f} cycles a warp update per SM")
    base = result["rows"][0]["cycles_per_warp_update"]
    for r in result["rows"]:
        r["relative"] = r["cycles_per_warp_update"] / base
    save(args.out, "shared_atomic_probe.json", result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
