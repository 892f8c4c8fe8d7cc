"""Reference for the held-out kernel scan_blocks: an inclusive prefix sum within
each block of 256 elements (the last block may be partial)."""

from __future__ import annotations

import numpy as np

TOLERANCE = {"rtol": 1e-4, "atol": 1e-4}
DIVISIBLE_BY: dict = {}

BLOCK = 256


def _f32(rng, *shape, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, shape).astype(np.float32)


def inputs(rng: np.random.Generator, n: int, **_) -> dict:
    return {"n": n, "x": _f32(rng, n), "out": np.zeros(n, np.float32)}


def reference(**d) -> dict:
    x = d["x"].astype(np.float64)
    n = x.shape[0]
    out = np.empty(n, np.float64)
    for b0 in range(0, n, BLOCK):
        out[b0:b0 + BLOCK] = np.cumsum(x[b0:b0 + BLOCK])
    return {"out": out.astype(np.float32)}
