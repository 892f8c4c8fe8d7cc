"""Reads beyond a MapOverlap's or Stencil's reach through an offset computed at run
time (``get(m, i, 0)`` in a loop): a usage error on one device and on several (on
several the part does not store those rows: the result was silently wrong), while
reads within the reach stay correct, against numpy."""

from __future__ import annotations

import numpy as np
import pytest

import mcl.skel as sk
from mcl.diagnostics import McplError

#: rows -k..k weighted (so that a row read in the wrong place shows), and a literal
#: read left and right
ROWS = """float rows(float_matrix_t m, int k) {
  float s = 0.0f;
  for (int i = -k; i <= k; i++)
    s += (float)(i + 4) * get(m, i, 0);
  return 0.05f * s + 0.1f * (get(m, 0, 1) - get(m, 0, -1));
}"""

BEYOND = """float beyond(float_matrix_t m) {
  float s = 0.0f;
  for (int i = -3; i <= 3; i++) s += get(m, i, 0);
  return s;
}"""

M = (np.arange(9 * 6, dtype=np.float32).reshape(9, 6) % 7) - 3


def rows_ref(a, k, padding, neutral=0.0):
    p = np.pad(a, k + 1, mode="edge") if padding == sk.NEAREST else \
        np.pad(a, k + 1, constant_values=neutral)
    r, c = a.shape

    def at(dr, dc):
        return p[k + 1 + dr:k + 1 + dr + r, k + 1 + dc:k + 1 + dc + c]
    s = sum(np.float32(i + 4) * at(i, 0) for i in range(-k, k + 1))
    return np.float32(0.05) * s + np.float32(0.1) * (at(0, 1) - at(0, -1))


def reach_error(call):
    with pytest.raises(McplError) as e:
        call()
    d = e.value.diagnostics[0]
    assert d.code == "skel-reads-beyond-reach", d.message
    return d


def test_a_loop_offset_beyond_the_reach_is_refused_when_the_skeleton_is_made():
    """Rows -3..3 of a loop with literal bounds, size 1: known before the function runs,
    so refused at once (on two devices the parts hold one halo row, and the result was
    silently wrong), and a call within the reach reads no flags back."""
    d = reach_error(lambda: sk.MapOverlap(BEYOND, 1))
    assert d.message.startswith("'beyond' reads get(m, i, ...) at row offsets -3 .. 3, "
                                "beyond the MapOverlap's reach (size 1)")
    assert "size of at least 3" in d.hint
    d = reach_error(lambda: sk.Stencil(BEYOND, 1))
    assert "(1, 1, 1, 1)" in d.message and "(3, 1, 3, 1)" in d.hint
    assert not sk.MapOverlap(BEYOND, 3)._computed_offsets


@pytest.mark.parametrize("n", [1, 2])
def test_a_computed_offset_beyond_the_reach_is_an_error(on_devices, n):
    """Rows -k..k with k an argument, size 1, k = 3: refused when called, on one device
    too, so that a program that works on one device does not fail on two."""
    on_devices(n)
    mo = sk.MapOverlap(ROWS, 1)
    assert mo._computed_offsets
    d = reach_error(lambda: mo(sk.Matrix(M), 3))
    assert "'rows'" in d.message and "3 row(s) up and 3 row(s) down" in d.message
    assert "size 1" in d.message and "size of at least 3" in d.hint
    d = reach_error(lambda: sk.Stencil(ROWS, 1)(sk.Matrix(M), 3, iterations=3))
    assert "'rows'" in d.message and "(1, 1, 1, 1)" in d.message
    assert "(3, 1, 3, 1)" in d.hint


@pytest.mark.parametrize("n", [1, 2])
def test_the_check_is_per_call(on_devices, n):
    """A call within the reach after one beyond it is right (the flags are cleared),
    and the farthest row read is named, up and down apart."""
    on_devices(n)
    mo = sk.MapOverlap(ROWS, 1)
    img = sk.Matrix(M)
    assert np.allclose(mo(img, 1).to_numpy(), rows_ref(M, 1, sk.NEUTRAL), atol=1e-5)
    d = reach_error(lambda: mo(img, 2))
    assert "2 row(s) up and 2 row(s) down" in d.message
    assert np.allclose(mo(img, 1).to_numpy(), rows_ref(M, 1, sk.NEUTRAL), atol=1e-5)
    assert np.allclose(mo(img, 0).to_numpy(), rows_ref(M, 0, sk.NEUTRAL), atol=1e-5)
    up_only = sk.Stencil("float f(float_matrix_t m, int k) { return get(m, k, 0); }",
                         (2, 1, 0, 1))
    assert np.array_equal(up_only(sk.Matrix(M), -2).to_numpy(),
                          np.vstack([np.zeros((2, 6), np.float32), M[:-2]]))
    d = reach_error(lambda: up_only(sk.Matrix(M), 1, iterations=2))
    assert "1 row(s) down" in d.message and "row(s) up" not in d.message
    assert "(2, 1, 1, 1)" in d.hint


@pytest.mark.parametrize("n", [1, 2])
@pytest.mark.parametrize("padding", [sk.NEUTRAL, sk.NEAREST])
def test_computed_offsets_within_the_reach_are_right(on_devices, n, padding):
    on_devices(n)
    for size in (1, 2):
        got = sk.MapOverlap(ROWS, size, padding, neutral=1.5)(sk.Matrix(M), size)
        assert np.allclose(got.to_numpy(), rows_ref(M, size, padding, 1.5), atol=1e-4)
    for sync in (1, 2):
        st = sk.Stencil(ROWS, 2, padding, neutral=1.5, sync_every=sync)
        want = M
        for _ in range(4):
            want = rows_ref(want, 2, padding, 1.5)
        got = st(sk.Matrix(M), 2, iterations=4).to_numpy()
        assert np.allclose(got, want, rtol=1e-4, atol=1e-4)
