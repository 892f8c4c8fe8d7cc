"""Reference for the held-out kernel conv3x3: a 3x3 convolution of a padded image."""

from __future__ import annotations

import numpy as np

TOLERANCE = {"rtol": 1e-4, "atol": 1e-4}
DIVISIBLE_BY: dict = {}


def _f32(rng, *shape, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, shape).astype(np.float32)


def inputs(rng: np.random.Generator, h: int, w: int, **_) -> dict:
    return {"h": h, "w": w, "img": _f32(rng, h + 2, w + 2),
            "filt": _f32(rng, 3, 3, lo=0.0), "out": np.zeros((h, w), np.float32)}


def reference(**d) -> dict:
    img = d["img"].astype(np.float64)
    f = d["filt"].astype(np.float64)
    h, w = d["h"], d["w"]
    out = np.zeros((h, w))
    for y in range(3):
        for x in range(3):
            out += f[y, x] * img[y:y + h, x:x + w]
    return {"out": out.astype(np.float32)}
