"""Reference for the matmul examples: c = a @ b in float32.

Parameters of every version (in this order): n, m, p (sizes, inputs);
c: float32[n, m] (output); a: float32[n, p], b: float32[p, m] (inputs).
"""

from __future__ import annotations

import numpy as np

KERNEL = "matmul"
INPUTS = ("a", "b")
OUTPUTS = ("c",)

#: Small sizes for tests; several do not divide the block sizes of the GPU
#: versions (16, 64, 128, 256), nor the 16 vector lanes of mic.
SIZES = [
    {"n": 1, "m": 1, "p": 1},
    {"n": 37, "m": 100, "p": 19},
    {"n": 100, "m": 37, "p": 61},
    {"n": 64, "m": 64, "p": 64},
    {"n": 130, "m": 129, "p": 257},
    # multiples for the versions of DIVISIBLE_BY, with an m that divides nothing
    {"n": 8, "m": 40, "p": 256},
    {"n": 24, "m": 300, "p": 512},
    # whole 128 x 128 (hopper_v10) and 128 x 256 (hopper_v11) tiles and 16-deep
    # phases, p not a power of two
    {"n": 128, "m": 256, "p": 48},
]

#: The sizes of the paper (2048^3, Table II) and of the H100 case study (4096^3).
PAPER_SIZES = [
    {"n": 2048, "m": 2048, "p": 2048},
    {"n": 4096, "m": 4096, "p": 4096},
]

#: The sizes that grow with the problem (halved together to time a version on smaller
#: sizes first: mcl.opencl.sizing.size_ladder).
SCALE = ("n", "m", "p")

#: Versions that are only correct when some sizes are multiples of a number
#: (they tile `a` with a view); every other version is correct for all sizes.
DIVISIBLE_BY = {
    "nvidia_v1": {"n": 4, "p": 256},
    "fermi": {"n": 4, "p": 256},
    "fermi_v1": {"n": 8, "p": 128},
    "hopper": {"n": 4, "p": 256},
    "hopper_v10": {"n": 128, "m": 128, "p": 16},
    "hopper_v11": {"n": 128, "m": 256, "p": 16},
    "hopper_v12": {"n": 128, "m": 256, "p": 16},
}

#: Versions written to be built with their sizes as compile-time constants
#: (`mcl run --specialize`, mcl.compile(specialize=True)): `mcl run` and the case
#: studies build them so.
SPECIALIZE = {"hopper_v10", "hopper_v11", "hopper_v12"}

#: Float32 sums of p products in a different order than numpy.
TOLERANCE = {"rtol": 1e-4, "atol": 2e-3}


def inputs(rng: np.random.Generator, n: int, m: int, p: int) -> dict:
    """Random inputs in [-1, 1) and the sizes."""
    return {
        "n": n, "m": m, "p": p,
        "a": rng.uniform(-1.0, 1.0, (n, p)).astype(np.float32),
        "b": rng.uniform(-1.0, 1.0, (p, m)).astype(np.float32),
    }


def reference(n: int, m: int, p: int, a: np.ndarray, b: np.ndarray, **_) -> dict:
    """c = a b, accumulated in float64 and rounded to float32."""
    c = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)
    assert c.shape == (n, m)
    return {"c": c}


def flops(n: int, m: int, p: int, **_) -> int:
    """Floating-point operations (a multiply and an add per term)."""
    return 2 * n * m * p
