"""What the NVIDIA compiler makes of the memory-bound kernels' sweep (the GPU machine):
for every version of vector_add, black_scholes and gesummv and every sweep variant of
the H200 sweep's times (raw/h200_2026-12-02_sweep/), the figures mcl feedback reads
beside the GPU (mcl.opencl.vendor.resources_of: the CUDA driver's registers and local
memory, the bytes a warp keeps in flight in the SASS of ptxas and cuobjdump), and the
SASS itself, so that the estimate without a GPU can be compared with what the compiler
keeps in flight.

    python3 benchmarks/fidelity/sweep_in_flight.py --out DIR [--sass]

Writes DIR/sweep_in_flight.json ({case: {registers, local_bytes, in_flight} or
{error}}) and, with --sass, DIR/sass/<case>.sass. Exits 2 without an NVIDIA device.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import fidelity_cases as C  # noqa: E402
import fidelity_predict as P  # noqa: E402
from sweep_times import ok_rows  # noqa: E402

KERNELS = ("vector_add", "black_scholes", "gesummv")
SWEEP = HERE.parent / "results" / "fidelity" / "raw" / "h200_2026-12-02_sweep"


def _sass(case: C.Case, device) -> str | None:
    """The SASS of the case's kernel as mcl run builds it (no register limit)."""
    from mcl.opencl.generate import generate
    from mcl.opencl.sass import sass_of
    from mcl.opencl.vendor import max_registers, ptx_of
    k = generate(str(P.case_path(case)), "hopper", specialize=case.specialize)[0]
    options = [*k.plan.options_for(device.platform.name)]
    made = sass_of(ptx_of(device, k.source, options), max_registers(options))
    return made[1] if made else None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--sass", action="store_true", help="also write each case's SASS")
    args = ap.parse_args(argv)
    from mcl.opencl.vendor import nvidia_device, resources_of
    device = nvidia_device()
    if device is None:
        print("sweep_in_flight: no NVIDIA OpenCL device here", file=sys.stderr)
        return 2
    times = ok_rows(SWEEP / "sweep_times_1.json")
    ex = C.example_cases(list(KERNELS))
    cases = {c.name: c for c in ex + C.sweep_cases(ex)}
    names = [n for n in times if n in cases]
    args.out.mkdir(parents=True, exist_ok=True)
    rows: dict[str, dict] = {}
    start = time.monotonic()
    for i, name in enumerate(names, 1):
        case = dataclasses.replace(cases[name], sizes=dict(times[name]["sizes"]))
        try:
            res = resources_of(str(P.case_path(case)), case.sizes, "hopper",
                               specialize=case.specialize)
            r = next(iter(res.values()), None)
            rows[name] = ({"error": "the compiler gave no figures"} if r is None else
                          {"registers": r.registers, "local_bytes": r.spill_bytes,
                           "in_flight": r.in_flight})
            if args.sass:
                text = _sass(case, device)
                if text:
                    fn = re.sub(r"[^A-Za-z0-9_.-]", "_", name) + ".sass"
                    (args.out / "sass").mkdir(exist_ok=True)
                    (args.out / "sass" / fn).write_text(text)
        except Exception as e:  # noqa: BLE001 - a row with the message
            rows[name] = {"error": f"{type(e).__name__}: {e}"}
        print(f"[{i}/{len(names)} {time.monotonic() - start:.0f}s] {name}: {rows[name]}",
              flush=True)
    (args.out / "sweep_in_flight.json").write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
