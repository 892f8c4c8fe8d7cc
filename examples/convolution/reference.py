"""Reference for the convolution examples (the paper's Figure 16).

Parameters of every version (in this order): h, w (output size), fh, fw
(filter size) (inputs); output: float32[h, w] (output);
input: float32[h + fh - 1, w + fw - 1] (input, already padded);
filter: float32[fh, fw] (input).
output[i, j] = sum_{y, x} filter[y, x] * input[i + y, j + x] / (fh * fw).
"""

from __future__ import annotations

import numpy as np

KERNEL = "convolution"
INPUTS = ("input", "filter")
OUTPUTS = ("output",)

#: Small sizes for tests; several do not divide the tiles (16, 32, 64).
SIZES = [
    {"h": 1, "w": 1, "fh": 1, "fw": 1},
    {"h": 37, "w": 100, "fh": 9, "fw": 9},
    {"h": 100, "w": 37, "fh": 3, "fw": 5},
    {"h": 64, "w": 64, "fh": 9, "fw": 9},
    {"h": 130, "w": 67, "fh": 7, "fw": 3},
    # whole blocks of hopper_v4 (32 x 128 outputs; rows of w + fw - 1, a multiple of 4)
    {"h": 32, "w": 128, "fh": 9, "fw": 9},
    {"h": 64, "w": 256, "fh": 3, "fw": 5},
]

#: Table III: 4096 x 4096 with a 9 x 9 filter.
PAPER_SIZES = [{"h": 4096, "w": 4096, "fh": 9, "fw": 9}]

#: The sizes that grow with the problem (halved together to time a version on smaller
#: sizes first: mcl.opencl.sizing.size_ladder).
SCALE = ("h", "w")

#: Versions that are only correct when some sizes are multiples of a number (a key
#: may be a sum of sizes: the length of the input's rows); every other version is
#: correct for all sizes.
DIVISIBLE_BY = {
    "hopper_v4": {"h": 32, "w": 128, "w + fw - 1": 4},
    "hopper_v5": {"h": 32, "w": 128, "w + fw - 1": 4},
}

#: Versions written to be built with their sizes as compile-time constants
#: (`mcl run --specialize`, mcl.compile(specialize=True)).
SPECIALIZE = {"hopper_v4", "hopper_v5"}

TOLERANCE = {"rtol": 1e-4, "atol": 1e-5}


def inputs(rng: np.random.Generator, h: int, w: int, fh: int, fw: int) -> dict:
    return {
        "h": h, "w": w, "fh": fh, "fw": fw,
        "input": rng.uniform(-1.0, 1.0, (h + fh - 1, w + fw - 1)).astype(np.float32),
        "filter": rng.uniform(0.0, 1.0, (fh, fw)).astype(np.float32),
    }


def reference(h: int, w: int, fh: int, fw: int, input: np.ndarray,  # noqa: A002
              filter: np.ndarray, **_) -> dict:  # noqa: A002
    """Correlation (no filter flip) over the valid region, divided by fh * fw."""
    inp = input.astype(np.float64)
    out = np.zeros((h, w), dtype=np.float64)
    for y in range(fh):
        for x in range(fw):
            out += float(filter[y, x]) * inp[y:y + h, x:x + w]
    return {"output": (out / (fh * fw)).astype(np.float32)}


def flops(h: int, w: int, fh: int, fw: int, **_) -> int:
    return 2 * h * w * fh * fw


def bytes_moved(h: int, w: int, fh: int, fw: int, **_) -> int:
    return 4 * (h * w + (h + fh - 1) * (w + fw - 1) + fh * fw)
