"""Dot product: Reduce (add) of Zip (multiply), as in the SkelCL chapter; the Zip is
deferred (``.lazy``), so Reduce computes the products in its own kernel and reads X
and Y once, without a temporary vector of products."""

import numpy as np

import mcl.skel as sk

MULT = "float mult(float x, float y) { return x * y; }"
SUM = "float sum(float x, float y) { return x + y; }"


def inputs(n, seed=0):
    rng = np.random.default_rng(seed)
    return rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)


def skeletons():
    return sk.Zip(MULT), sk.Reduce(SUM, identity=0.0)


def dot(mult, total, x, y):
    """x . y for Vectors x and y, as a one-element Vector."""
    return total(mult.lazy(x, y))


def run(a, b):
    mult, total = skeletons()
    return dot(mult, total, sk.Vector(a), sk.Vector(b)).to_numpy()[0]


def reference(a, b):
    return np.dot(a.astype(np.float64), b)


if __name__ == "__main__":
    from _common import main
    raise SystemExit(main("dot product", 1 << 20, run, reference, inputs, rtol=1e-3))
