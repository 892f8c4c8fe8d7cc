"""Reference for the held-out kernel softmax_rows: a softmax along each row."""

from __future__ import annotations

import numpy as np

TOLERANCE = {"rtol": 1e-4, "atol": 1e-6}
DIVISIBLE_BY: dict = {}


def _f32(rng, *shape, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, shape).astype(np.float32)


def inputs(rng: np.random.Generator, n: int, m: int, **_) -> dict:
    return {"n": n, "m": m, "x": _f32(rng, n, m, lo=-8.0, hi=8.0),
            "out": np.zeros((n, m), np.float32)}


def reference(**d) -> dict:
    x = d["x"].astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return {"out": (e / e.sum(axis=1, keepdims=True)).astype(np.float32)}
