"""SAXPY, Y <- a*X + Y: a Zip with an additional scalar argument (SkelCL listing)."""

from pathlib import Path

import numpy as np

import mcl.skel as sk

SAXPY = "float saxpy(float x, float y, float a) { return a * x + y; }"


def inputs(n, seed=0):
    rng = np.random.default_rng(seed)
    return rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32), np.float32(2.5)


def run(x, y, a, mcpl=False):
    funcs = Path(__file__).parent / "mcpl" / "funcs.mcpl"
    func = sk.mcpl_function(funcs, "saxpy") if mcpl else SAXPY
    return sk.Zip(func)(sk.Vector(x), sk.Vector(y), a).to_numpy()


def reference(x, y, a):
    return a * x + y


if __name__ == "__main__":
    from _common import main

    def flag(ap):
        ap.add_argument("--mcpl", action="store_true",
                        help="the MCPL function of mcpl/funcs.mcpl")

    raise SystemExit(main("saxpy", 1 << 20, lambda x, y, a, args: run(x, y, a, args.mcpl),
                          reference, inputs, extra=flag))
