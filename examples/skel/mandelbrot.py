"""Mandelbrot set: a Map over an IndexVector (each element computes its pixel from
its index); iteration counts as ints."""

import numpy as np

import mcl.skel as sk

MANDEL = """int mandel(int i, int width, int height, int max_iter) {
  float x0 = -2.0f + 3.0f * (i % width) / width;
  float y0 = -1.5f + 3.0f * (i / width) / height;
  float x = 0.0f, y = 0.0f;
  int k = 0;
  while (k < max_iter && x * x + y * y <= 4.0f) {
    float t = x * x - y * y + x0;
    y = 2.0f * x * y + y0;
    x = t;
    ++k;
  }
  return k;
}"""
MAX_ITER = 100


def inputs(n, seed=0):
    return n, n


def skeleton():
    return sk.Map(MANDEL)


def run(width, height):
    return skeleton()(sk.IndexVector(width * height), width, height, MAX_ITER).to_numpy()


def reference(width, height):
    i = np.arange(width * height)
    x0 = (np.float32(-2.0) + np.float32(3.0) * (i % width).astype(np.float32)
          / np.float32(width)).astype(np.float32)
    y0 = (np.float32(-1.5) + np.float32(3.0) * (i // width).astype(np.float32)
          / np.float32(height)).astype(np.float32)
    x = np.zeros_like(x0)
    y = np.zeros_like(y0)
    k = np.zeros(i.shape, np.int32)
    for _ in range(MAX_ITER):
        live = x * x + y * y <= 4
        t = x * x - y * y + x0
        y = np.where(live, np.float32(2) * x * y + y0, y).astype(np.float32)
        x = np.where(live, t, x).astype(np.float32)
        k += live
    return k


if __name__ == "__main__":
    from _common import main
    # float rounding near the set's edge may differ in a few pixels: compare counts
    raise SystemExit(main("mandelbrot", 512, lambda w, h: (run(w, h) != reference(w, h)).mean()
                          < 0.01, lambda w, h: True, inputs))
