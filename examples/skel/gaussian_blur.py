"""Gaussian blur: MapOverlap with a 5x5 kernel and nearest-element padding. The weights
are an additional container argument in constant memory (``__constant``: every
work-item reads the same weight at once), as a hand-written blur would have them."""

import numpy as np

import mcl.skel as sk

WEIGHTS = np.outer([1, 4, 6, 4, 1], [1, 4, 6, 4, 1]).astype(np.float32) / 256

BLUR = """float blur(float_matrix_t m, __constant float* w) {
  float s = 0.0f;
  for (int i = -2; i <= 2; ++i)
    for (int j = -2; j <= 2; ++j)
      s += w[(i + 2) * 5 + j + 2] * get(m, i, j);
  return s;
}"""


def inputs(n, seed=0):
    return (np.random.default_rng(seed).random((n, n), dtype=np.float32),)


def blur_skeleton():
    return sk.MapOverlap(BLUR, 2, sk.NEAREST)


def weights():
    return sk.Vector(WEIGHTS.ravel(), distribution=sk.copy())


def run(image):
    return blur_skeleton()(sk.Matrix(image), weights()).to_numpy()


def reference(image):
    p = np.pad(image, 2, mode="edge")
    r, c = image.shape
    return sum(WEIGHTS[i + 2, j + 2] * p[2 + i:2 + i + r, 2 + j:2 + j + c]
               for i in range(-2, 3) for j in range(-2, 3))


if __name__ == "__main__":
    from _common import main
    raise SystemExit(main("gaussian blur", 1024, run, reference, inputs))
