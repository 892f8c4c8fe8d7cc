"""Reference for the held-out kernel matmul_tiled: c = a @ b."""

from __future__ import annotations

import numpy as np

TOLERANCE = {"rtol": 1e-4, "atol": 1e-4}
DIVISIBLE_BY: dict = {}


def _f32(rng, *shape, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, shape).astype(np.float32)


def inputs(rng: np.random.Generator, n: int, m: int, p: int, **_) -> dict:
    return {"n": n, "m": m, "p": p, "a": _f32(rng, n, p), "b": _f32(rng, p, m),
            "c": np.zeros((n, m), np.float32)}


def reference(**d) -> dict:
    c = d["a"].astype(np.float64) @ d["b"].astype(np.float64)
    return {"c": c.astype(np.float32)}
