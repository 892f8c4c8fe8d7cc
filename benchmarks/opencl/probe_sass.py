"""The SASS figures of a probe's kernel (unrolled_loads_probe.py, row_pieces_probe.py):
mcl.opencl.sass's reading of NVIDIA's code (the loads a warp issues in a row, the
latencies it waits in its hot loop and the bytes it keeps in flight each), with the SASS
kept beside the probe's results."""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
from mcl.opencl.sass import loads_together, rounds, sass_of  # noqa: E402


def sass_figures(ptx: bytes, work: Path, stem: str) -> dict:
    """The SASS of the NVIDIA OpenCL program binary ``ptx`` (made launchable as the
    fidelity harness launches it, ptx_driver.for_cuda; through ptxas and cuobjdump,
    where they are on the PATH): ``loads_together``, the hot loop's ``rounds`` and
    ``bytes_a_round``, the branches and the registers; its loads, stores and branches
    appended to ``work``/sass_lines.txt under ``stem``, the whole SASS in
    ``work``/sass/``stem``.sass.txt."""
    fidelity = str(ROOT / "benchmarks" / "fidelity")
    if fidelity not in sys.path:
        sys.path.insert(0, fidelity)
    from ptx_driver import for_cuda
    made = sass_of(for_cuda(ptx))
    if made is None or made[1] is None:
        return {"sass": "no SASS: ptxas or cuobjdump missing or failed"}
    info, sass = made
    (work / "sass").mkdir(exist_ok=True)
    (work / "sass" / f"{stem}.sass.txt").write_text(sass)
    with open(work / "sass_lines.txt", "a") as listing:
        listing.write(f"== {stem}\n" + "".join(
            f"{i}: {line.strip()}\n" for i, line in enumerate(sass.splitlines(), 1)
            if re.search(r"LDG|STG|\bBRA\b|EXIT", line)))
    most, branches = loads_together(sass)
    hot = rounds(sass)
    regs = re.search(r"Used (\d+) registers", info)
    return {"loads_together": most, "branches": branches,
            "rounds": hot.rounds if hot else None,
            "bytes_a_round": hot.bytes_a_round if hot else None,
            "registers": int(regs.group(1)) if regs else None}
