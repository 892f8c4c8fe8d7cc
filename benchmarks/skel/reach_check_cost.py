"""What the check of reads beyond a MapOverlap's reach costs the Gaussian blur (8192^2,
one GPU): the skeleton as it is (the host reads the flags of a function whose offsets
are computed, once a call), without the host's read (the kernel's check alone), and
the hand-written kernel, alternated in blocks, medians of the calls with every queue
finished (as benchmarks/skel/run.py times them).

    python3 benchmarks/skel/reach_check_cost.py          (GPU machine)
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "examples" / "skel"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import gaussian_blur as ex  # noqa: E402
from handwritten import Handwritten  # noqa: E402

import mcl.skel as sk  # noqa: E402


def main() -> None:
    n = 1024 if "--quick" in sys.argv else 8192
    devs = sk.init(num_devices=1)
    hw = Handwritten(devs.context, devs.queues[0])
    (img,) = ex.inputs(n)
    M, W = sk.Matrix(img), ex.weights()
    checked, unchecked = ex.blur_skeleton(), ex.blur_skeleton()
    unchecked._computed_offsets = False         # the kernel's check alone
    bi, bo, bw = hw.buffer(img), hw.buffer(nbytes=img.nbytes), hw.buffer(ex.WEIGHTS)
    runs = {"skeleton (flags read)": lambda: checked(M, W),
            "skeleton (kernel check only)": lambda: unchecked(M, W),
            "hand-written": lambda: hw.blur(bi, bo, bw, n, n)}
    times: dict[str, list[float]] = {k: [] for k in runs}
    for f in runs.values():
        f()
        devs.finish()
    for _ in range(5):
        for name, f in runs.items():
            for _ in range(10):
                t = time.perf_counter()
                f()
                devs.finish()
                times[name].append(time.perf_counter() - t)
    hand = statistics.median(times["hand-written"])
    for name, ts in times.items():
        m = statistics.median(ts)
        print(f"{name:30s} {m * 1e3:8.3f} ms  hand-written / this {hand / m:.3f}")


if __name__ == "__main__":
    main()
