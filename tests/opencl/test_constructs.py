"""Constructs beyond one chain of foreach loops: loops side by side in one
work-group (phases), per-block arrays in global memory, and helper functions that
take arrays or write their parameters. Each runs on the OpenCL device (PoCL in CI)
against numpy, for sizes that do and do not divide the block size."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import mcl
from mcl.diagnostics import McplError
from mcl.mcpl import parse
from mcl.opencl import generate

KERNELS = Path(__file__).parent / "kernels"
SIZES = (1, 256, 700)


@pytest.mark.parametrize("n", SIZES)
def test_two_phases_side_by_side(opencl_device, n):
    k = mcl.compile(KERNELS / "two_phases.mcpl")
    x = np.random.default_rng(n).uniform(-1, 1, n).astype(np.float32)
    nb = (n + 255) // 256
    got = k(n=n, nb=nb, input=x, squares=np.zeros(n, np.float32),
            sums=np.zeros(nb, np.float32))
    np.testing.assert_allclose(got["squares"], x * x, rtol=1e-6)
    padded = np.zeros(nb * 256, np.float32)
    padded[:n] = x * x
    np.testing.assert_allclose(got["sums"], padded.reshape(nb, 256).sum(axis=1), rtol=1e-4)


def test_two_phases_code():
    (k,) = generate(KERNELS / "two_phases.mcpl")
    src = k.source
    # one work-group for both phases, as large as the larger one
    assert k.plan.local_size == ("32", "8")
    assert "reqd_work_group_size(32, 8, 1)" in src
    # the phases run one after the other
    assert src.count("barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);") == 1
    # the smaller phase is guarded, but its barriers are reached by every work-item
    assert "if (w < 4) {" in src
    assert "        barrier(CLK_LOCAL_MEM_FENCE);\n        for (int h = 64; h > 0; h >>= 1) {" \
        in src


@pytest.mark.parametrize("n", SIZES)
def test_per_block_array_in_global_memory(opencl_device, n):
    k = mcl.compile(KERNELS / "block_scratch.mcpl")
    scratch = k.plan.argument("partial")
    assert scratch.kind == "scratch" and scratch.shape == ("(n + 255) / 256", "8", "32")
    assert "partial_slices + (size_t)(b) * 256" in k.source
    x = np.random.default_rng(n).uniform(-1, 1, n).astype(np.float32)
    got = k(n=n, input=x)
    nb = (n + 255) // 256
    padded = np.zeros(nb * 256, np.float32)
    padded[:n] = x
    want = padded.reshape(nb, 256)[:, ::-1].reshape(-1)[:n]
    np.testing.assert_array_equal(got["output"], want)


@pytest.mark.parametrize(("n", "m"), [(1, 1), (40, 7), (64, 3)])
def test_helpers_with_arrays_and_written_parameters(opencl_device, n, m):
    k = mcl.compile(KERNELS / "helpers.mcpl")
    src = generate(KERNELS / "helpers.mcpl")[0].source     # as mcl gen writes it
    assert "inline void swap(__private float* a, __private float* b)" in src
    assert "inline float row_sum(int n, int m, int i, __global float* x)" in src
    assert "accumulate_global(&sums[i], last);" in src
    # the kernel mcl.compile launches checks the helpers' indices as it runs, which the
    # analyses do not follow (mcl.opencl.index_checks)
    assert "inline float row_sum(int n, int m, int i, __global float* x, int *mcl_bad, " \
        "int *mcl_bad_i, int *mcl_bad_n, int *mcl_bad_l, long *mcl_bad_il, long *mcl_bad_nl)" \
        in k.source and "x[(MCL_OFFSET)mcl_checked_index(i, n, " in k.source
    x = np.random.default_rng(m).uniform(-1, 1, (n, m)).astype(np.float32)
    got = k(n=n, m=m, x=x.copy(), sums=np.zeros(n, np.float32))
    np.testing.assert_array_equal(got["lasts"], x[:, -1])
    np.testing.assert_allclose(got["sums"], x.sum(axis=1) + x[:, 0], rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(got["x"], 2 * x)


def _module(body: str, params: str = "const int n, global float[n] a"):
    return parse(f"""module m;
import hopper;
hopper void k({params}) {{
{body}
}}
""", "m.mcpl")


def test_work_group_loops_side_by_side_are_refused():
    m = _module("""  foreach (int b in n blocks) { foreach (int w in 1 warps) {
    foreach (int t in 32 threads) { a[b] = 1.0; } } }
  foreach (int b in n blocks) { foreach (int w in 1 warps) {
    foreach (int t in 32 threads) { a[b] = 2.0; } } }""")
    with pytest.raises(McplError, match="cannot wait for all its work-groups"):
        generate(m)


def test_barrier_under_a_condition_of_a_smaller_phase_is_refused():
    m = _module("""  foreach (int b in n blocks) {
    shared float[64] s;
    foreach (int w in 2 warps) { foreach (int t in 32 threads) { s[w * 32 + t] = 1.0; } }
    foreach (int w in 1 warps) { foreach (int t in 32 threads) {
      if (a[b] > 0.0) { barrier(shared); }
      a[b] = s[t]; } } }""")
    with pytest.raises(McplError, match="would skip the barrier"):
        generate(m)


def test_helper_writing_a_value_that_is_not_a_variable_is_refused():
    m = parse("""module m;
import hopper;
hopper void bump(float x) { x += 1.0; }
hopper void k(const int n, global float[n] a) {
  foreach (int b in n blocks) { foreach (int w in 1 warps) {
    foreach (int t in 32 threads) { bump(a[b] * 2.0); } } }
}
""", "m.mcpl")
    # the front end refuses it before any code is generated
    with pytest.raises(McplError, match="'bump' is written, so it must be a variable"):
        generate(m)


_KERNEL_CALLED_DOT = """module k;
import hopper;
hopper void dot(const int n, global float[n] x, global float[n] y) {
  foreach (int b in (n + 255) / 256 blocks) {
    foreach (int w in 8 warps) {
      foreach (int t in 32 threads) {
        int i = b * 256 + w * 32 + t;
        if (i < n) {
          y[i] = 2.0 * x[i];
        }
      }
    }
  }
}
"""


def test_a_kernel_named_like_an_opencl_builtin_is_renamed(opencl_device, tmp_path):
    # `dot` is an OpenCL built-in: a kernel of that name does not build
    # (INVALID_KERNEL_NAME); it gets the mcl_ prefix that helpers of such names get
    path = tmp_path / "k.mcpl"
    path.write_text(_KERNEL_CALLED_DOT)
    (gen,) = generate(path)
    assert gen.plan.kernel == "mcl_dot" and "__kernel void mcl_dot(" in gen.source
    x = np.arange(300, dtype=np.float32)
    got = mcl.compile(path)(n=300, x=x, y=np.zeros(300, np.float32))
    np.testing.assert_array_equal(got["y"], 2 * x)
