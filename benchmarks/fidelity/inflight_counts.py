"""The bytes a warp keeps in flight: the time model's count (mcl.analyses.timing.
bytes_in_flight, with the compiler's registers of the record) against what NVIDIA's
compiler made of each recorded example and held-out kernel (mcl.opencl.sass: the bytes a
warp has in flight for each latency its hot loop waits, from the SASS that
benchmarks/runs/row_pieces_unroll.sh records in kernels_in_flight.json). Little's law
divides by this count, so where the two differ the latency part is off by their ratio.

    python benchmarks/fidelity/inflight_counts.py RESULTS/kernels_in_flight.json
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))
sys.path.insert(0, str(HERE))
import fidelity_cases as C  # noqa: E402
from fidelity_predict import hopper_view  # noqa: E402
from measure import case_file_name  # noqa: E402

RECORD = HERE.parents[1] / "tests" / "analyses" / "fidelity" / "h200_times.json"


def model_bytes(case: C.Case, registers: int | None) -> float | None:
    """The time model's bytes in flight a warp of ``case`` at hopper."""
    from mcl.analyses.occupancy import occupancy
    from mcl.analyses.stats import main_space
    from mcl.analyses.timing import bytes_in_flight
    view = hopper_view(case, registers)
    space = main_space(view.num)
    flight = bytes_in_flight(view, occupancy(view), space) if space else None
    return flight.bytes if flight else None


def main() -> int:
    if len(sys.argv) != 2 or not Path(sys.argv[1]).is_file():
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    sass = json.loads(Path(sys.argv[1]).read_text())
    registers = json.loads(RECORD.read_text())["registers"]
    cases = C.example_cases(None) + C.heldout_cases()
    print("| kernel | registers | model: bytes a warp | SASS: loads, rounds | SASS: bytes a "
          "round | model / SASS |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    ratios = {}
    for case in cases:
        figures = sass.get(case_file_name(case.name))
        if not figures or not figures.get("bytes_a_round"):
            continue
        regs = registers.get(case.name, figures.get("registers"))
        model = model_bytes(case, regs)
        if model is None:
            continue
        ratios[case.name] = model / figures["bytes_a_round"]
        print(f"| {case.name} | {regs} | {model:.0f} | {figures['hot_loop_loads']}, "
              f"{figures['rounds']} | {figures['bytes_a_round']:.0f} | "
              f"{ratios[case.name]:.2f} |")
    values = list(ratios.values())
    near = sum(0.8 <= r <= 1.25 for r in values)
    print(f"\n{len(values)} kernels: the model's count within 0.8-1.25 of the SASS's for "
          f"{near}; more for {sum(r > 1.25 for r in values)}, fewer for "
          f"{sum(r < 0.8 for r in values)}; median ratio {statistics.median(values):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
