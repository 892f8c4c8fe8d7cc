"""Reference for the held-out kernel stencil1d: a 3-point stencil, the ends copied."""

from __future__ import annotations

import numpy as np

TOLERANCE = {"rtol": 1e-4, "atol": 1e-4}
DIVISIBLE_BY: dict = {}


def _f32(rng, *shape, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, shape).astype(np.float32)


def inputs(rng: np.random.Generator, n: int, **_) -> dict:
    return {"n": n, "vin": _f32(rng, n), "vout": np.zeros(n, np.float32)}


def reference(**d) -> dict:
    v = d["vin"].astype(np.float64)
    out = v.copy()
    out[1:-1] = 0.25 * v[:-2] + 0.5 * v[1:-1] + 0.25 * v[2:]
    return {"vout": out.astype(np.float32)}
