"""Reference for the held-out kernel dot: result[0] += x . y."""

from __future__ import annotations

import numpy as np

TOLERANCE = {"rtol": 1e-4, "atol": 1e-4}
DIVISIBLE_BY: dict = {}


def _f32(rng, *shape, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, shape).astype(np.float32)


def inputs(rng: np.random.Generator, n: int, **_) -> dict:
    return {"n": n, "x": _f32(rng, n, lo=0.0), "y": _f32(rng, n, lo=0.0),
            "result": np.zeros(1, np.float32)}


def reference(**d) -> dict:
    s = float(d["result"][0]) + float(np.dot(d["x"].astype(np.float64), d["y"].astype(np.float64)))
    return {"result": np.array([s], np.float32)}
