"""Reference for the held-out kernel saxpy4: ys = alpha xs + ys."""

from __future__ import annotations

import numpy as np

TOLERANCE = {"rtol": 1e-4, "atol": 1e-4}
DIVISIBLE_BY: dict = {}


def _f32(rng, *shape, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, shape).astype(np.float32)


def inputs(rng: np.random.Generator, n: int, alpha: float, **_) -> dict:
    return {"n": n, "alpha": alpha, "xs": _f32(rng, n), "ys": _f32(rng, n)}


def reference(**d) -> dict:
    return {"ys": (d["alpha"] * d["xs"].astype(np.float64) + d["ys"]).astype(np.float32)}
