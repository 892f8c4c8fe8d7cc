"""Foreach loops over lanes as loops inside a work-item (cpu.target maps `vectors`
to lanes; mcl.opencl.lanes): the generated code, vectors where the lanes touch
adjacent elements, and the semantics of lanes on PoCL where control flow differs
between them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import mcl
from mcl.diagnostics import McplError
from mcl.mcpl import parse
from mcl.opencl import generate

ROOT = Path(__file__).resolve().parents[2]


def gen(src: str):
    [k] = generate(parse(src, "lanes.mcpl"), "cpu")
    return k


DIVERGENT = """module lanes;
import cpu;
cpu void k(const int n, main float[n, 8] out, main float[n] x) {
  foreach (int t in n threads) {
    main float[8] shared;
    foreach (int v in 8 vectors) {
      float s = 0.0;
      int steps = v + t % 3;          // a loop bound that differs between lanes
      for (int i = 0; i < steps; i++) {
        if (i == 4 && v % 2 == 1) {
          break;                      // under a condition on the lane
        }
        s += x[t] * i;
      }
      if (v < 4) {
        s = -s;
      } else {
        s = s + 100.0;
      }
      shared[v] = s;
      barrier(main);                  // every lane has written its element
      out[t, v] = shared[(v + 1) % 8] + s;
    }
  }
}
"""


def divergent_reference(x: np.ndarray) -> np.ndarray:
    n = x.size
    s = np.zeros((n, 8), np.float32)
    for t in range(n):
        for v in range(8):
            acc = np.float32(0)
            for i in range(v + t % 3):
                if i == 4 and v % 2 == 1:
                    break
                acc += x[t] * i
            s[t, v] = -acc if v < 4 else acc + 100
    return s[:, [(v + 1) % 8 for v in range(8)]] + s


def test_lanes_are_a_loop_inside_one_work_item():
    k = gen(DIVERGENT)
    assert k.plan.local_size == ["1"] or set(k.plan.local_size) == {"1"}
    assert "get_local_id" not in k.source
    assert "for (int v = 0; v < 8; v++)" in k.source
    # the lane value s lives on across the barrier: one element per lane
    assert "float8 s[1];" in k.source


def test_adjacent_lanes_become_vectors():
    src = (ROOT / "examples" / "matmul" / "cpu_v1.mcpl").read_text()
    k = gen(src)
    assert "float16 cTemp[12];" in k.source          # per-lane accumulators as vectors
    # 16 lanes: loaded and stored as two halves of 8 (no float16 crosses a call, which
    # PoCL cannot build for CPUs without AVX-512)
    assert ("(float16)(vload8(0, &b[(MCL_OFFSET)k * m + j0 + ej_2 * nrVectors + 0]), "
            "vload8(0, (&b[(MCL_OFFSET)k * m + j0 + ej_2 * nrVectors + 0]) + 8))") in k.source
    assert "vstore8(v_vector.hi, 0, (&c[" in k.source
    assert "vload16" not in k.source and "vstore16" not in k.source
    # the guarded edge path stays a loop over the lanes, element by element
    assert "((__private float*)cEdge)[" in k.source


def test_divergent_lanes_compute_what_the_foreach_means(opencl_device):
    k = mcl.compile(parse(DIVERGENT, "lanes.mcpl"), "cpu")
    x = np.random.default_rng(3).uniform(-1, 1, 13).astype(np.float32)
    got = k(n=13, x=x)["out"]
    np.testing.assert_allclose(got, divergent_reference(x), rtol=1e-5, atol=1e-4)


def test_a_return_among_lanes_is_refused():
    src = DIVERGENT.replace("s = -s;", "return;")
    with pytest.raises(McplError, match="return inside a foreach over 'vectors'"):
        gen(src)


def test_a_barrier_under_a_lane_condition_is_refused():
    src = DIVERGENT.replace("      barrier(main);", "      if (v < 2) { barrier(main); }")
    with pytest.raises(McplError, match="barrier under a condition or in a loop"):
        gen(src)
