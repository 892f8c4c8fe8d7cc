"""Reference for the held-out kernel hist256: a 256-bin histogram of bytes (half of
them in 8 hot bins)."""

from __future__ import annotations

import numpy as np

TOLERANCE = {"rtol": 1e-4, "atol": 1e-4}
DIVISIBLE_BY: dict = {}


def _f32(rng, *shape, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, shape).astype(np.float32)


def inputs(rng: np.random.Generator, n: int, **_) -> dict:
    hot = rng.integers(0, 8, n // 2) * 32
    data = np.concatenate([rng.integers(0, 256, n - n // 2), hot]).astype(np.uint8)
    rng.shuffle(data)
    return {"n": n, "data": data, "bins": np.zeros(256, np.int32)}


def reference(**d) -> dict:
    counts = np.bincount(d["data"], minlength=256)
    return {"bins": (d["bins"] + counts).astype(np.int32)}
