"""Reference for the held-out kernel transpose_padded: at = a transposed."""

from __future__ import annotations

import numpy as np

TOLERANCE = {"rtol": 1e-4, "atol": 1e-4}
DIVISIBLE_BY: dict = {}


def _f32(rng, *shape, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, shape).astype(np.float32)


def inputs(rng: np.random.Generator, rows: int, cols: int, **_) -> dict:
    return {"rows": rows, "cols": cols, "a": _f32(rng, rows, cols),
            "at": np.zeros((cols, rows), np.float32)}


def reference(**d) -> dict:
    return {"at": d["a"].T.copy()}
