"""Reference for the histogram examples: counts of values in nrBuckets buckets.

Parameters of every version (in this order): n, nrBuckets (sizes, inputs);
input: int32[n] with values in [0, nrBuckets) (input); hist: int32[nrBuckets]
(input and output: the kernels *add* the counts, so the caller zeroes it;
`inputs` does).
"""

from __future__ import annotations

import numpy as np

KERNEL = "histogram"
INPUTS = ("input", "hist")
OUTPUTS = ("hist",)

#: Small sizes for tests; n mostly not a multiple of the block size (256).
SIZES = [
    {"n": 1, "nrBuckets": 256},
    {"n": 37, "nrBuckets": 256},
    {"n": 100, "nrBuckets": 7},
    {"n": 1000, "nrBuckets": 256},
    {"n": 100_003, "nrBuckets": 256},
    {"n": 5000, "nrBuckets": 1000},
]

#: Table III: 256 buckets over 16384 x 16384 values.
PAPER_SIZES = [{"n": 16384 * 16384, "nrBuckets": 256}]

DIVISIBLE_BY: dict = {}

#: Integer counts: exact.
TOLERANCE = {"rtol": 0.0, "atol": 0.0}


def inputs(rng: np.random.Generator, n: int, nrBuckets: int) -> dict:  # noqa: N803
    """Values with structure: half uniform over the buckets, half concentrated
    on a few buckets (contention, as in images), shuffled."""
    uniform = rng.integers(0, nrBuckets, n // 2 + n % 2)
    hot = rng.integers(0, max(1, nrBuckets // 32), n // 2) * 32 % nrBuckets
    values = np.concatenate([uniform, hot])
    rng.shuffle(values)
    return {
        "n": n, "nrBuckets": nrBuckets,
        "input": values.astype(np.int32),
        "hist": np.zeros(nrBuckets, dtype=np.int32),
    }


def reference(n: int, nrBuckets: int, input: np.ndarray, hist: np.ndarray, **_) -> dict:  # noqa: A002, N803
    counts = np.bincount(input, minlength=nrBuckets).astype(np.int64)
    return {"hist": (hist.astype(np.int64) + counts).astype(np.int32)}


def bytes_moved(n: int, nrBuckets: int, **_) -> int:  # noqa: N803
    return 4 * n
