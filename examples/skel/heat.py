"""Heat equation: an explicit 5-point Stencil iterated many times; the devices
exchange only their halo rows between iterations."""

import numpy as np

import mcl.skel as sk

HEAT = """float heat(float_matrix_t m) {
  float c = get(m, 0, 0);
  return c + 0.2f * (get(m, -1, 0) + get(m, 1, 0) + get(m, 0, -1) + get(m, 0, 1) - 4.0f * c);
}"""
ITERATIONS = 100


def inputs(n, seed=0):
    t = np.zeros((n, n), np.float32)
    t[n // 4: n // 2, n // 4: n // 2] = 100.0
    return (t,)


def stencil(sync_every=1):
    return sk.Stencil(HEAT, 1, sk.NEAREST, sync_every=sync_every)


def run(t, iterations=ITERATIONS):
    return stencil()(sk.Matrix(t), iterations=iterations).to_numpy()


def reference(t, iterations=ITERATIONS):
    for _ in range(iterations):
        p = np.pad(t, 1, mode="edge")
        t = t + np.float32(0.2) * (p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:]
                                   - 4 * t)
    return t


if __name__ == "__main__":
    from _common import main
    raise SystemExit(main("heat equation", 512, run, reference, inputs, atol=1e-3))
