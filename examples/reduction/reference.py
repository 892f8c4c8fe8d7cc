"""Reference for the reduction examples: the sum of a vector of floats.

Parameters of every version (in this order): n (size, input);
input: float32[n] (input); result: float32[1] (input and output: the kernels
*add* the sum to result[0], so the caller sets it to 0; `inputs` does).
"""

from __future__ import annotations

import numpy as np

KERNEL = "reduction"
INPUTS = ("input", "result")
OUTPUTS = ("result",)

#: Small sizes for tests; most do not divide the block sizes (256, 512, 1024).
SIZES = [
    {"n": 1},
    {"n": 37},
    {"n": 100},
    {"n": 256},
    {"n": 1000},
    {"n": 4097},
    {"n": 300_001},
]

#: Seed 000 / Lift reduction benchmark size: 2^28 floats (1 GiB).
PAPER_SIZES = [{"n": 2 ** 28}]

#: Every version is correct for every n.
DIVISIBLE_BY: dict = {}

#: Float32 sums in a different order: relative to the sum of magnitudes.
TOLERANCE = {"rtol": 1e-4, "atol": 1e-3}


def inputs(rng: np.random.Generator, n: int) -> dict:
    """Random values in [0, 1) (a sum without cancellation) and result = 0."""
    return {
        "n": n,
        "input": rng.random(n, dtype=np.float32),
        "result": np.zeros(1, dtype=np.float32),
    }


def reference(n: int, input: np.ndarray, result: np.ndarray, **_) -> dict:  # noqa: A002
    """result[0] + sum(input), accumulated in float64."""
    assert input.shape == (n,)
    total = float(result[0]) + float(np.sum(input, dtype=np.float64))
    return {"result": np.array([total], dtype=np.float32)}


def bytes_moved(n: int, **_) -> int:
    """Bytes read from device memory (the figure of merit is bandwidth)."""
    return 4 * n
