"""Reference for the held-out kernel matvec: yv = A xv."""

from __future__ import annotations

import numpy as np

TOLERANCE = {"rtol": 1e-4, "atol": 1e-4}
DIVISIBLE_BY: dict = {}


def _f32(rng, *shape, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, shape).astype(np.float32)


def inputs(rng: np.random.Generator, n: int, m: int, **_) -> dict:
    return {"n": n, "m": m, "A": _f32(rng, n, m), "xv": _f32(rng, m),
            "yv": np.zeros(n, np.float32)}


def reference(**d) -> dict:
    return {"yv": (d["A"].astype(np.float64) @ d["xv"].astype(np.float64)).astype(np.float32)}
