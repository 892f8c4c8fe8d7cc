"""Counted loops: unrolled, and copies in runs of 4 turned into vector accesses with
an element-by-element fallback (mcl.opencl.vectorize). Results on the OpenCL device
(PoCL in CI) for aligned, misaligned and partial runs; the shape of the code; the
loops that must stay scalar."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import mcl
from mcl.mcpl import ast, parse
from mcl.opencl import generate, vectorize

KERNELS = Path(__file__).parent / "kernels"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.parametrize("n, m, offset", [(3, 64, 0), (2, 70, 0), (2, 64, 1), (4, 130, 3),
                                          (1, 3, 2)])
def test_runs_give_the_same_result_aligned_or_not(opencl_device, n, m, offset):
    k = mcl.compile(KERNELS / "runs.mcpl")
    x = np.random.default_rng(m + offset).uniform(-1, 1, (n, m + offset)).astype(np.float32)
    got = k(n=n, m=m, offset=offset, input=x, output=np.zeros((n, m), np.float32))
    np.testing.assert_array_equal(got["output"], 2 * x[:, offset:])


def test_runs_code():
    (k,) = generate(KERNELS / "runs.mcpl")
    src = k.source
    # global runs: a vector path checked at run time (m and offset are unknown) ...
    assert "*(__global const float4*)&input[(MCL_OFFSET)i * (m + offset) + offset + c]" in src
    assert "if (c0 + 3 < m" in src   # one lane decides a bound that grows with u
    assert "((size_t)&input[" in src and "((size_t)&output[" in src
    # ... local runs at offsets that are multiples of 4: no check, no fallback
    assert "*(__local float4*)&row[4 * t + u] = (float4)(x[u], x[u + 1], x[u + 2], x[u + 3]);" \
        in src
    assert "((size_t)&row" not in src
    assert "__local float row[64] __attribute__((aligned(16)));" in src
    # a computation is not a copy: unrolled only
    assert "#pragma unroll\n    for (int u = 0; u < 4; u++) {\n        x[u] = 2.0f * x[u];" in src


def _kernel(body: str, decls: str = "") -> str:
    text = f"""module t;
import hopper;
hopper void t(const int n, global float[n] a, global float[n] b) {{
  foreach (int i in n / 64 blocks) {{
    shared float[64] s;
    foreach (int w in 1 warps) {{
      foreach (int t in 16 threads) {{
        reg float[8] x;
        float acc = 0.0;
        {decls}
        {body}
        b[i * 64 + t] = acc + x[0];
      }}
    }}
  }}
}}
"""
    (k,) = generate(parse(text, "t.mcpl"))
    return k.source


@pytest.mark.parametrize("body", [
    # stride 2: not adjacent
    "for (int u = 0; u < 4; u++) { x[u] = a[i * 64 + 8 * t + 2 * u]; }",
    # C division in the index
    "for (int u = 0; u < 4; u++) { x[u] = a[i * 64 + (4 * t + u) / 2]; }",
    # a written array read at another index: reordering would change the result
    "for (int u = 0; u < 4; u++) { s[4 * t + u] = s[4 * t + u + 1]; }",
    # accumulation into a scalar
    "for (int u = 0; u < 4; u++) { acc = acc + a[i * 64 + 4 * t + u]; }",
    # a call
    "for (int u = 0; u < 4; u++) { x[u] = sqrt(a[i * 64 + 4 * t + u]); }",
    # trip count not a multiple of 4
    "for (int u = 0; u < 6; u++) { x[u] = a[i * 64 + 4 * t + u]; }",
    # trip count not a constant
    "for (int u = 0; u < n % 8; u++) { x[u] = a[i * 64 + 4 * t + u]; }",
])
def test_loops_that_stay_scalar(body):
    assert "float4" not in _kernel(body)


def test_constant_trip_counts_are_unrolled_and_others_not():
    src = _kernel("for (int u = 0; u < 8; u++) { x[u] = 1.0; }"
                  "for (int u = 0; u < n % 8; u++) { x[u] = 2.0; }")
    assert "#pragma unroll\n    for (int u = 0; u < 8; u++)" in src
    assert "#pragma unroll\n    for (int u = 0; u < n % 8; u++)" not in src


def test_longer_loops_run_in_chunks_of_4():
    src = _kernel("for (int u = 0; u < 8; u++) { x[u] = a[i * 64 + 8 * t + u]; }")
    assert "for (int u_run = 0; u_run < 8; u_run += 4)" in src
    assert "*(__global const float4*)&a[i * 64 + 8 * t + u]" in src


@pytest.mark.parametrize("text, k, expected", [
    ("8 * t + 4", 4, True),
    ("8 * t + 2", 4, False),
    ("(c * 8 + q) * 132 + 4 * ti", 4, True),
    ("(c * 8 + q) * 130 + 4 * ti", 4, False),
    ("t / 2 * 4", 4, True),       # an unknown integer times 4
    ("(4 * t) / 2", 4, False),    # C division: unknown
    ("bc + 4", 4, True),          # bc = (t % 32) * 4, declared once and never assigned
    ("n * t", 4, False),
])
def test_multiple_of(text, k, expected):
    e = parse(f"module m; perfect void f(int t) {{ int z = {text}; }}", "m.mcpl") \
        .functions[0].body.statements[0].init
    fixed = {"bc": parse("module m; perfect void f(int t) { int z = (t % 32) * 4; }", "m.mcpl")
             .functions[0].body.statements[0].init}

    def constant(x: ast.Expr) -> int | None:
        return x.value if isinstance(x, ast.Literal) and x.kind == "int" else None

    assert vectorize.multiple_of(e, k, lambda n: fixed.get(n.id), constant) is expected


def test_matmul_v6_uses_vector_loads_everywhere_it_can():
    (k,) = generate(EXAMPLES / "matmul" / "hopper_v6.mcpl")
    src = k.source
    assert src.count("*(__global const float4*)&a[") == 2       # phase 0 and the next phases
    assert src.count("*(__global const float4*)&b[") == 2
    assert src.count("*(__local const float4*)&l_a[") == 1      # the fragments
    assert src.count("*(__local const float4*)&l_b[") == 1
    assert "*(__global float4*)&c[" in src


VIEWS = """module v;
import hopper;
hopper void v(const int n, const int m, global float[n, m] out, global float[n, m] inp) {
  const int q = m / 4;
  inp as float[n, q, 4] in3;
  out as float[n, q, 4] out3;
  foreach (int i in n blocks) {
    foreach (int w in 1 warps) {
      foreach (int t in 32 threads) {
        reg float[4] x;
        for (int j = t; j < q; j += 32) {
          for (int e = 0; e < 4; e++) {
            x[e] = in3[i, j, e];
          }
          for (int e = 0; e < 4; e++) {
            x[e] = 3.0 * x[e];
          }
          for (int e = 0; e < 4; e++) {
            out3[i, j, e] = x[e];
          }
        }
      }
    }
  }
}
"""


def test_reshaping_views_give_vector_accesses_without_run_time_checks(tmp_path,
                                                                        opencl_device):
    f = tmp_path / "v.mcpl"
    f.write_text(VIEWS)
    (k,) = generate(f, "hopper")
    # runs of 4 innermost elements of a view that reshapes a buffer: aligned whatever n, m
    assert "*(__global const float4*)&inp[((MCL_OFFSET)i * q + j) * 4 + e]" in k.source
    assert "*(__global float4*)&out[((MCL_OFFSET)i * q + j) * 4 + e]" in k.source
    assert "& 15" not in k.source
    # a store through a view does not make the output an input: no `out` is given
    x = np.random.default_rng(0).uniform(-1, 1, (3, 8)).astype(np.float32)
    got = mcl.compile(f, target="hopper")(n=3, m=8, inp=x)
    np.testing.assert_allclose(got["out"], 3 * x, rtol=1e-6)


def _sized_kernel(body: str) -> str:
    """A kernel whose parameter k sizes a private array (so it is a compile-time
    constant, default 9)."""
    text = f"""module t;
import hopper;
hopper void t(const int n, const int k = 9, global float[n] b, constant float[k] f) {{
  foreach (int i in n / 32 blocks) {{
    foreach (int w in 1 warps) {{
      foreach (int t in 32 threads) {{
        reg float[k] z;
        float acc = 0.0;
        {body}
        b[i * 32 + t] = acc + z[0];
      }}
    }}
  }}
}}
"""
    (k,) = generate(parse(text, "t.mcpl"))
    return k.source


def test_build_time_trip_counts_are_unrolled():
    # k is fixed when the program is built: the compiler knows the trip count
    src = _sized_kernel("for (int y = 0; y < k; y++) { acc += f[y]; }"
                        "for (int y = 1; y <= k + 2; y++) { acc += f[y % k]; }")
    assert "#pragma unroll\n    for (int y = 0; y < k; y++)" in src
    assert "#pragma unroll\n    for (int y = 1; y <= k + 2; y++)" in src
    # ... but not where the count depends on a run-time value or is large by default
    src = _sized_kernel("for (int y = 0; y < k * n; y++) { acc += f[y % k]; }"
                        "for (int y = 0; y < k * 4; y++) { acc += f[y % k]; }")
    assert "#pragma unroll" not in src


def test_convolution_v2_unrolls_the_filter_loops():
    (k,) = generate(EXAMPLES / "convolution" / "hopper_v2.mcpl")
    src = k.source
    lines = [s.strip() for s in src.splitlines()]
    for loop in ("for (int r = 0; r < rows + fg - 1; r++) {", "for (int x = 0; x < fw; x++) {",
                 "for (int v = 0; v < lw / 4; v++) {"):
        assert lines[lines.index(loop) - 1] == "#pragma unroll", loop
    assert "*(__local const float4*)&l_in[" in src
    assert "*(__global const float4*)&input[" in src
    assert "*(__global float4*)&output[" in src
