"""Reference for the held-out kernel rowsum: the sum of each row."""

from __future__ import annotations

import numpy as np

TOLERANCE = {"rtol": 1e-4, "atol": 1e-4}
DIVISIBLE_BY: dict = {}


def _f32(rng, *shape, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, shape).astype(np.float32)


def inputs(rng: np.random.Generator, n: int, m: int, **_) -> dict:
    return {"n": n, "m": m, "mat": _f32(rng, n, m), "sums": np.zeros(n, np.float32)}


def reference(**d) -> dict:
    return {"sums": d["mat"].astype(np.float64).sum(axis=1).astype(np.float32)}
