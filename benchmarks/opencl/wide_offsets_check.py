"""Arrays of 2^31 elements or more on the GPU: gesummv (examples/gesummv/hopper_v1.mcpl)
at n = 50000, its A and B 2.5e9 floats (10 GB each), against numpy.

``--offsets int`` builds the kernel as mcl did before it knew such sizes (the element
offsets ``i * n + j`` in 32 bits, which wrap round past row 42949), ``--offsets auto``
as mcl builds it now (``-D MCL_OFFSET=long`` at these sizes). Run each in a process of
its own: the 32-bit build reads memory far from its arrays. ``--time N`` times the two
builds at a size where 32 bits suffice (n = N), what the 64-bit offsets cost there.

    python benchmarks/opencl/wide_offsets_check.py --offsets auto --out auto.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

KERNEL = ROOT / "examples" / "gesummv" / "hopper_v1.mcpl"


def compiled(offsets: str):
    import mcl
    from mcl.opencl.plan import LaunchPlan
    if offsets == "int":
        LaunchPlan.offset_option = lambda self, env: None
    elif offsets == "long":
        LaunchPlan.offset_option = lambda self, env: "-DMCL_OFFSET=long"
    return mcl.compile(KERNEL)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--offsets", choices=("int", "long", "auto"), default="auto")
    ap.add_argument("--n", type=int, default=50000)
    ap.add_argument("--time", type=int, metavar="N", help="time at n = N instead")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    k = compiled(args.offsets)
    n = args.time or args.n
    rng = np.random.default_rng(0)
    start = time.perf_counter()
    a = rng.random((n, n), dtype=np.float32) - 0.5
    b = rng.random((n, n), dtype=np.float32) - 0.5
    x = rng.random(n, dtype=np.float32) - 0.5
    made = time.perf_counter() - start
    row = {"offsets": args.offsets, "n": n, "elements": n * n, "device": k.device.name,
           "option": k.plan.offset_option({"n": n}) if args.offsets == "auto" else None}
    if args.time:
        row["seconds"] = k.time(repeat=20, n=n, alpha=1.5, beta=1.2, A=a, B=b, x=x,
                                y=np.zeros(n, np.float32))
    else:
        out = k(n=n, alpha=1.5, beta=1.2, A=a, B=b, x=x, y=np.zeros(n, np.float32))["y"]
        want = 1.5 * (a @ x) + 1.2 * (b @ x)
        wrong = ~np.isclose(out, want, rtol=1e-3, atol=1e-3)
        row.update(wrong_rows=int(wrong.sum()),
                   first_wrong_row=int(np.argmax(wrong)) if wrong.any() else None,
                   max_error=float(np.nanmax(np.abs(out - want))))
    row["setup_seconds"] = made
    print(json.dumps(row))
    if args.out:
        args.out.write_text(json.dumps(row, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
