"""A grid of fewer blocks than SMs: the held-out nbody kernel (one block of 256 threads
per 256 bodies, every block walking all n bodies) timed at sizes whose grids have
fewer, as many and more blocks than the GPU has SMs, against the feedback's
predicted times at the ``h200`` level.

    python3 benchmarks/fidelity/grid_scaling.py measure --out DIR   # the GPU machine
    python3 benchmarks/fidelity/grid_scaling.py compare DIR/grid_scaling.json [--md F]

With the work per SM constant in its arithmetic, a grid of 32 or 64 blocks on 132 SMs
takes the time of a full one at a fraction of the size: the arithmetic and the issue
slots of the idle SMs do not help. ``measure`` verifies the result against
reference.py at the sizes whose reference fits in memory (n up to 16384) and times
every size cold (the L2 flushed clean before each launch, best of 10).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
if sys.argv[1:2] == ["compare"]:     # predicted at the machine's own description
    os.environ.setdefault("MCL_FIDELITY_LEVEL", "h200")

import fidelity_cases as C  # noqa: E402

KERNEL = "heldout/nbody/hopper"
#: 32, 64, 132 and 264 blocks of 256 threads
SIZES = (8192, 16384, 33792, 67584)
#: the largest n whose float64 reference (n^2 x 3 differences) fits in memory
VERIFY_UP_TO = 16384


def _case(n: int) -> C.Case:
    case = next(c for c in C.heldout_cases() if c.name == KERNEL)
    return dataclasses.replace(case, sizes={**case.sizes, "n": n})


def measure(out: Path) -> int:
    import numpy as np
    import pyopencl as cl
    from measure import Generated, matches, nvidia_device

    from mcl.opencl.conditions import cache_flush
    from mcl.opencl.runtime import Kernel
    _, dev = nvidia_device()
    ctx = cl.Context([dev])
    queue = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
    before = cache_flush(ctx, queue)
    work = Path(tempfile.mkdtemp(prefix="mcl-grid-"))
    rows = []
    for n in SIZES:
        case = _case(n)
        ref = C.reference_of(case)
        gen = Generated(case, work)
        k = Kernel(gen.kernel, ctx, queue)
        args = ref.inputs(np.random.default_rng(1), **case.sizes)
        call = {p: args[p] for p in k.plan.parameters if p in args}
        row = {"n": n, "blocks": int(np.prod(gen.groups))}
        if n <= VERIFY_UP_TO:
            got = k(**{p: (v.copy() if isinstance(v, np.ndarray) else v)
                       for p, v in call.items()})
            ok, err = matches(got["acc"], ref.reference(**args)["acc"], ref.TOLERANCE)
            row.update(verified=ok, max_error=err)
        row["time_s"] = k.time(repeat=10, warmup=2, before=before, **call)
        print(f"n={n}: {row}", flush=True)
        rows.append(row)
    out.mkdir(parents=True, exist_ok=True)
    (out / "grid_scaling.json").write_text(json.dumps({"device": dev.name, "rows": rows},
                                                      indent=1) + "\n")
    return 0 if all(r.get("verified", True) for r in rows) else 1


def compare(path: Path, md: Path | None) -> int:
    import fidelity_predict as P
    data = json.loads(path.read_text())
    lines = [f"nbody on {data['device']}: measured (cold, best of 10) against the feedback's "
             f"predicted time at the `{C.TARGET}` level", "",
             "| n | blocks | measured | predicted (limiter) | error |",
             "| --- | --- | --- | --- | --- |"]
    for r in data["rows"]:
        p = P.predicted_time(_case(r["n"]))
        err = p["seconds"] / r["time_s"] - 1
        lines.append(f"| {r['n']} | {r['blocks']} | {r['time_s'] * 1e6:.0f} µs | "
                     f"{p['seconds'] * 1e6:.0f} µs ({p['limiter']}) | {err:+.0%} |")
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if md:
        md.write_text(text)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("measure", help="time nbody at the sizes (the GPU machine)")
    m.add_argument("--out", type=Path, required=True)
    c = sub.add_parser("compare", help="the measured against the predicted times")
    c.add_argument("json", type=Path)
    c.add_argument("--md", type=Path)
    args = ap.parse_args(argv)
    return measure(args.out) if args.cmd == "measure" else compare(args.json, args.md)


if __name__ == "__main__":
    sys.exit(main())
