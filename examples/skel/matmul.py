"""Matrix multiplication: AllPairs in its zip-reduce form (SkelCL's specialised
skeleton: a register-blocked kernel, 128 x 128 blocks of C per work-group from tiles
of A and B in local memory, 8 x 8 results per work-item; the environment variable
MCL_SKEL_ALLPAIRS_TILE or tile= picks other tiles); A and C block, B copy distributed."""

import numpy as np

import mcl.skel as sk

MULT = "float mult(float x, float y) { return x * y; }"
ADD = "float add(float x, float y) { return x + y; }"


def inputs(n, seed=0):
    rng = np.random.default_rng(seed)
    return rng.random((n, n), dtype=np.float32), rng.random((n, n), dtype=np.float32)


def skeleton():
    return sk.AllPairs(zip=MULT, reduce=ADD, identity=0.0)


def run(a, b):
    return skeleton()(sk.Matrix(a), sk.Matrix(b)).to_numpy()


def reference(a, b):
    return a @ b


if __name__ == "__main__":
    from _common import main
    raise SystemExit(main("matrix multiplication", 512, run, reference, inputs, rtol=1e-3))
