"""Reference for the gesummv examples (PolyBench): y = alpha A x + beta B x.

Parameters of every version (in this order): n (size), alpha, beta (scalars)
(inputs); y: float32[n] (output); A, B: float32[n, n], x: float32[n] (inputs).
"""

from __future__ import annotations

import numpy as np

KERNEL = "gesummv"
INPUTS = ("A", "B", "x")
OUTPUTS = ("y",)

#: Small sizes for tests; several do not divide 8, 32, 128 or 256.
SIZES = [{"n": 1}, {"n": 37}, {"n": 100}, {"n": 256}, {"n": 1000}]

#: Table III: 4096 x 4096.
PAPER_SIZES = [{"n": 4096}]

DIVISIBLE_BY: dict = {}

TOLERANCE = {"rtol": 1e-4, "atol": 1e-3}


def inputs(rng: np.random.Generator, n: int, alpha: float = 1.5, beta: float = 1.2) -> dict:
    return {
        "n": n, "alpha": np.float32(alpha), "beta": np.float32(beta),
        "A": rng.uniform(-1.0, 1.0, (n, n)).astype(np.float32),
        "B": rng.uniform(-1.0, 1.0, (n, n)).astype(np.float32),
        "x": rng.uniform(-1.0, 1.0, n).astype(np.float32),
    }


def reference(n: int, alpha: float, beta: float, A: np.ndarray, B: np.ndarray,  # noqa: N803
              x: np.ndarray, **_) -> dict:
    x64 = x.astype(np.float64)
    y = float(alpha) * (A.astype(np.float64) @ x64) + float(beta) * (B.astype(np.float64) @ x64)
    return {"y": y.astype(np.float32)}


def flops(n: int, **_) -> int:
    return 4 * n * n + 3 * n


def bytes_moved(n: int, **_) -> int:
    return 4 * (2 * n * n + 2 * n)
