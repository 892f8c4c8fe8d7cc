"""Reference for the vector_add examples: c = a + b.

Parameters of every version (in this order): n (size, input);
c: float32[n] (output); a, b: float32[n] (inputs).
"""

from __future__ import annotations

import numpy as np

KERNEL = "vector_add"
INPUTS = ("a", "b")
OUTPUTS = ("c",)

#: Small sizes for tests; most do not divide the block size (256).
SIZES = [{"n": 1}, {"n": 37}, {"n": 100}, {"n": 256}, {"n": 1000}, {"n": 100_003}]

#: A bandwidth-bound size: 3 x 256 MiB.
PAPER_SIZES = [{"n": 2 ** 26}]

#: Every version is correct for every n.
DIVISIBLE_BY: dict = {}

TOLERANCE = {"rtol": 0.0, "atol": 0.0}


def inputs(rng: np.random.Generator, n: int) -> dict:
    return {
        "n": n,
        "a": rng.standard_normal(n, dtype=np.float32),
        "b": rng.standard_normal(n, dtype=np.float32),
    }


def reference(n: int, a: np.ndarray, b: np.ndarray, **_) -> dict:
    """c = a + b in float32 (exact: one rounding, as on the device)."""
    return {"c": (a + b).astype(np.float32)}


def bytes_moved(n: int, **_) -> int:
    return 12 * n
