"""Dot product: Zip (multiply) then Reduce (add), as in the SkelCL chapter."""

import numpy as np

import mcl.skel as sk

MULT = "float mult(float x, float y) { return x * y; }"
SUM = "float sum(float x, float y) { return x + y; }"


def inputs(n, seed=0):
    rng = np.random.default_rng(seed)
    return rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)


def run(a, b):
    mult, total = sk.Zip(MULT), sk.Reduce(SUM, identity=0.0)
    return total(mult(sk.Vector(a), sk.Vector(b))).to_numpy()[0]


def reference(a, b):
    return np.dot(a.astype(np.float64), b)


if __name__ == "__main__":
    from _common import main
    raise SystemExit(main("dot product", 1 << 20, run, reference, inputs, rtol=1e-3))
