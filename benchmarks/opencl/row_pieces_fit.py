"""Little's law through row_pieces_probe's times: each shape's bytes in flight from its
SASS (mcl.opencl.sass: the bytes a warp keeps in flight a round, times the warps its
registers let an SM hold), and the memory part (T_b^q + T_l^q)^(1/q) of
mcl.analyses.timing with T_l = bytes / (bytes in flight / latency), q the h200 target's
memory_queue_exponent, T_b and the latency fitted to the shapes that read one row at a
time (least rms of the log error). Prints a table of the shapes and the fit, with what
the fit leaves to the shapes that read several rows at once.

    python benchmarks/opencl/row_pieces_fit.py RESULTS/row_pieces_unroll.json
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

SMS, WARPS_A_BLOCK, BLOCK_SLOTS, REGISTERS = 132, 8, 8, 65536


def blocks_an_sm(registers: int) -> int:
    """Blocks of 256 threads an H200 SM holds at ``registers`` a thread (allocated in 8s)."""
    return min(BLOCK_SLOTS, REGISTERS // (math.ceil(registers / 8) * 8 * 256))


def shapes(results: dict) -> list[dict]:
    out = []
    for build, run in sorted(results.items()):
        for r in run["results"]:
            per_sm = blocks_an_sm(r["registers"])
            warps = min(per_sm * SMS, r["blocks"]) * WARPS_A_BLOCK
            out.append({**r, "build": build, "blocks_an_sm": per_sm, "warps": warps,
                        "in_flight": warps * r["bytes_a_round"],
                        "bytes": 4 * run["rows"] * run["cols"]})
    return out


def memory_time(tb: float, bytes_: float, in_flight: float, latency_s: float,
                q: float) -> float:
    tl = bytes_ / (in_flight / latency_s)
    return (tb ** q + tl ** q) ** (1 / q)


def fit(rows: list[dict], q: float, clock: float) -> tuple[float, float, float]:
    """(T_b, latency in cycles, rms log error) over ``rows``."""
    best = None
    for tb in np.arange(30e-6, 36e-6, 0.125e-6):
        for cycles in range(300, 2000, 25):
            errs = [math.log(memory_time(tb, r["bytes"], r["in_flight"], cycles / clock, q)
                             / r["seconds"]) for r in rows]
            rms = math.sqrt(sum(e * e for e in errs) / len(errs))
            if best is None or rms < best[2]:
                best = (float(tb), cycles, rms)
    return best


def main() -> int:
    if len(sys.argv) != 2 or not Path(sys.argv[1]).is_file():
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    from mcl.analyses.timing_rates import queue_exponent
    from mcl.hdl.library import load_hardware
    hw = load_hardware("h200")
    q, clock = queue_exponent(hw), hw.clock_frequency()
    rows = shapes(json.loads(Path(sys.argv[1]).read_text()))
    tb, cycles, rms = fit([r for r in rows if r["R"] == 1], q, clock)
    print(f"q {q} (h200.target), clock {clock / 1e9:.2f} GHz: T_b {tb * 1e6:.2f} us, latency "
          f"{cycles} cycles, rms log error {rms:.3f} over the {sum(r['R'] == 1 for r in rows)} "
          "shapes of one row at a time\n")
    print("| build | U G R | registers | blocks an SM | loads in a row | rounds | bytes a "
          "round | kB in flight an SM | µs | fit |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in sorted(rows, key=lambda r: (r["in_flight"], r["seconds"])):
        t = memory_time(tb, r["bytes"], r["in_flight"], cycles / clock, q)
        print(f"| {r['build']} | {r['U']} {r['G']} {r['R']} | {r['registers']} | "
              f"{r['blocks_an_sm']} | {r['loads_together']} | {r['rounds']} | "
              f"{r['bytes_a_round']:.0f} | {r['in_flight'] / SMS / 1024:.1f} | "
              f"{r['seconds'] * 1e6:.1f} | {100 * (t / r['seconds'] - 1):+.0f}% |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
