"""Reference for the held-out kernel jacobi2d: one 5-point Jacobi step, the border copied."""

from __future__ import annotations

import numpy as np

TOLERANCE = {"rtol": 1e-4, "atol": 1e-4}
DIVISIBLE_BY: dict = {}


def _f32(rng, *shape, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, shape).astype(np.float32)


def inputs(rng: np.random.Generator, n: int, m: int, **_) -> dict:
    return {"n": n, "m": m, "grid": _f32(rng, n, m),
            "gridnew": np.zeros((n, m), np.float32)}


def reference(**d) -> dict:
    g = d["grid"].astype(np.float64)
    out = g.copy()
    out[1:-1, 1:-1] = 0.25 * (g[:-2, 1:-1] + g[2:, 1:-1] + g[1:-1, :-2] + g[1:-1, 2:])
    return {"gridnew": out.astype(np.float32)}
