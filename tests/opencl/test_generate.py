"""Kernel generation: every leaf-level example gives OpenCL and a plan; the shape of
the generated code (flattened indices, fences, qualifiers, atomics, compile-time sizes)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import mcl
from mcl.diagnostics import McplError
from mcl.mcpl import parse
from mcl.opencl import generate, load_target
from mcl.opencl.plan import LaunchPlan, evaluate
from tests.opencl.conftest import EXAMPLES, leaf_examples


@pytest.mark.parametrize("file", leaf_examples(), ids=lambda f: f"{f.parent.name}/{f.stem}")
def test_every_leaf_example_generates(file):
    (k,) = generate(file)
    assert f"__kernel void {k.plan.kernel}(" in k.source
    # float literals stay single precision: no silent promotion to double
    assert "double" not in k.source
    plan = LaunchPlan.from_json(k.plan.to_json())
    assert plan.arguments == k.plan.arguments and plan.global_size == k.plan.global_size
    json.loads(k.plan.to_json())


def test_matmul_hopper_v2_code_and_plan():
    (k,) = generate(EXAMPLES / "matmul" / "hopper_v2.mcpl")
    src = k.source
    assert "__global float* restrict c" in src
    assert "__global const float* restrict a" in src
    assert "__local float l_a[1056] __attribute__((aligned(16)));" in src   # bk * (bm + pad)
    assert "float sums[64];" in src                  # private register tile
    assert "c[(MCL_OFFSET)ci * m + cj] = sums[ei * tn + ej];" in src
    assert src.count("barrier(CLK_LOCAL_MEM_FENCE);") == 2
    assert "const int t = get_local_id(0);" in src and "const int w = get_local_id(1);" in src
    assert "const int bj = get_group_id(0);" in src and "const int bi = get_group_id(1);" in src
    env = {"n": 300, "m": 129, "p": 7}
    plan = k.plan
    assert [evaluate(e, env) for e in plan.local_size] == [32, 8]
    assert [evaluate(e, env) for e in plan.num_groups] == [2, 3]
    assert [evaluate(e, env) for e in plan.global_size] == [64, 24]
    assert evaluate(plan.local_memory_bytes, env) == (8 * 132 + 8 * 128) * 4
    assert [a.name for a in plan.arguments] == ["n", "m", "p", "c", "a", "b"]
    c = plan.argument("c")
    assert c.written and not c.read and c.shape == ("n", "m")
    assert not plan.argument("a").written


def test_tiled_view_indexes_the_matrix_tile():
    (k,) = generate(EXAMPLES / "matmul" / "fermi_v1.mcpl")
    # a2[bi, l][ei, tj] of a float[nrBlocksN, y][x, nrThreadsM] view of a[n, p]
    assert "a[(MCL_OFFSET)(bi * x + ei) * p + l * nrThreadsM + tj]" in k.source


def test_float_atomic_add_uses_compare_and_swap():
    (k,) = generate(EXAMPLES / "reduction" / "hopper_v2.mcpl")
    assert "atomic_cmpxchg" in k.source
    assert "mcl_atomic_add_float_global(&result[0], l_data[0]);" in k.source
    # the loop compares the bits it swapped, not floats: a NaN never equals itself (the
    # loop would not end once the sum is NaN) and -0.0 equals 0.0 (an update lost)
    assert "while ((seen = atomic_cmpxchg(bits, old, as_uint(as_float(old) + v))) != old)" \
        in k.source
    (h,) = generate(EXAMPLES / "histogram" / "hopper_v1.mcpl")
    assert "atomic_add(&l_hist[w * nrBuckets + v[u]], 1);" in h.source
    assert "atomic_add(&hist[k], total);" in h.source


_LIBRARY_ATOMICS = """module ai;
import perfect;
import lib.atomics;
perfect void h(const int n, int[4] hist, int[n] image) {
  foreach (int i in n threads) {
    atomicInc(hist[image[i]]);
    atomicMax(hist[3], image[i]);
  }
}
"""


def test_library_atomics_are_the_hardware_atomics(opencl_device, tmp_path):
    """lib.atomics' bodies say what each operation does as if no other unit ran; the
    calls are OpenCL's atomic functions (they were the bodies, whose increments race:
    a histogram on PoCL lost counts), and a kernel's own function of the name is not."""
    (k,) = generate(parse(_LIBRARY_ATOMICS, "ai.mcpl"), "hopper")
    assert "atomic_inc(&hist[image[i]]);" in k.source
    assert "atomic_max(&hist[3], image[i]);" in k.source
    assert "x[0]++" not in k.source
    own = _LIBRARY_ATOMICS.replace("import lib.atomics;\n", "").replace(
        "perfect void h(", "perfect void atomicInc(int x) {\n  x += 2;\n}\n\nperfect void h(")
    own = own.replace("    atomicMax(hist[3], image[i]);\n", "")
    (o,) = generate(parse(own, "own.mcpl"), "hopper")
    assert "atomic_inc" not in o.source and "atomicInc(&hist[image[i]]);" in o.source
    f = tmp_path / "ai.mcpl"
    f.write_text(_LIBRARY_ATOMICS)
    n = 1 << 18
    image = np.zeros(n, np.int32)     # every unit updates the same bin
    got = mcl.compile(f, target="cpu")(n=n, hist=np.zeros(4, np.int32), image=image)
    assert list(got["hist"]) == [n, 0, 0, 0]


def test_parameters_that_size_arrays_are_compile_time():
    (k,) = generate(EXAMPLES / "convolution" / "hopper_v1.mcpl")
    assert [c.name for c in k.plan.compile_time] == ["fh", "fw"]
    assert [c.default for c in k.plan.compile_time] == [9, 9]
    assert "#define MCL_fh 9" in k.source and "#define fh MCL_fh" in k.source
    assert [a.name for a in k.plan.arguments] == ["h", "w", "output", "input", "filter"]
    assert "__constant float* restrict filter" in k.source
    assert evaluate(k.plan.local_memory_bytes, {"fh": 3, "fw": 5}) == (64 + 2) * (32 + 4) * 4


def test_an_array_sized_by_min_and_max_of_parameters(opencl_device):
    """A local array's size is an integer constant expression in C, where OpenCL's min
    and max are function calls: histogram hopper_v2's copies of its buckets,
    max(1, min(32, 8192 / nrBuckets)), become conditional expressions in the
    declaration, and the launch plan evaluates its bytes for any nrBuckets (the
    kernel was rejected at build time before)."""
    path = EXAMPLES / "histogram" / "hopper_v2.mcpl"
    (k,) = generate(path)
    (decl,) = [line for line in k.source.splitlines() if "__local int l_hist[" in line]
    assert "min(" not in decl and "max(" not in decl and "?" in decl
    assert evaluate(k.plan.local_memory_bytes, {"nrBuckets": 256}) == 256 * 32 * 4
    assert evaluate(k.plan.local_memory_bytes, {"nrBuckets": 1000}) == 1000 * 8 * 4
    rng = np.random.default_rng(3)
    values = rng.integers(0, 1000, 5000).astype(np.int32)
    got = mcl.compile(path)(n=5000, nrBuckets=1000, input=values,
                            hist=np.zeros(1000, np.int32))
    assert np.array_equal(got["hist"], np.bincount(values, minlength=1000))


def test_warp_synchronous_code_is_volatile():
    (k,) = generate(EXAMPLES / "reduction" / "hopper_v1.mcpl")
    assert "__local volatile float l_data[256];" in k.source
    assert k.plan.assumes_lockstep
    (k2,) = generate(EXAMPLES / "reduction" / "hopper_v2.mcpl")
    assert not k2.plan.assumes_lockstep and "volatile float l_data" not in k2.source


def test_xeon_phi_vectors_are_the_innermost_work_items():
    (k,) = generate(EXAMPLES / "matmul" / "xeon_phi_v3.mcpl")
    assert "const int v = get_local_id(0);" in k.source
    assert "float bTemp[16];" in k.source      # dev array per vector lane: private
    assert k.plan.local_size == ("16", "1")


def test_more_foreach_loops_than_dimensions_divide_the_id():
    src = """module m;
import cpu;
cpu void k(const int n, main float[n, n, n, n] a) {
  foreach (int i in n threads) { foreach (int j in n threads) {
    foreach (int k in n threads) { foreach (int l in n threads) {
      foreach (int v in 8 vectors) { a[i, j, k, l] = v; } } } } }
}
"""
    (k,) = generate(parse(src, "four.mcpl"), "cpu")
    assert "const int l = get_group_id(0);" in k.source
    assert "const int k = get_group_id(1);" in k.source
    assert "const int i = get_group_id(2) / n;" in k.source
    assert "const int j = get_group_id(2) % n;" in k.source
    assert [evaluate(e, {"n": 3}) for e in k.plan.num_groups] == [3, 3, 9]


def test_evaluate_has_c_semantics():
    assert evaluate("-7 / 2", {}) == -3
    assert evaluate("(n + 127) / 128 * min(4, m)", {"n": 129, "m": 9}) == 8
    with pytest.raises(McplError, match="size 'q'"):
        evaluate("q + 1", {})


def test_not_a_leaf_without_translation_is_a_clear_error():
    with pytest.raises(McplError) as e:
        generate(EXAMPLES / "matmul" / "gpu_v1.mcpl")
    assert "gpu" in str(e.value)


def test_every_leaf_has_a_complete_target():
    for leaf in ("fermi", "hopper", "xeon_phi", "cpu"):
        t = load_target(leaf)
        for s in t.hardware.memory_spaces():
            assert t.qualifier(s.name).startswith("__")
        assert set(t.par_groups) == {g.name for g in t.hardware.par_groups()}


def test_no_code_for_a_program_the_front_end_rejects(tmp_path):
    # foreach loops nested against the description: `mcl check` rejects it, so must gen
    src = tmp_path / "bad.mcpl"
    src.write_text("""module m;
import hopper;
hopper void f(const int n, global float[n] a) {
    foreach (int t in 32 threads) { foreach (int w in 1 warps) {
        foreach (int b in n blocks) { a[b] = 1.0; } } }
}
""")
    with pytest.raises(McplError) as e:
        generate(str(src))
    assert {d.code for d in e.value.diagnostics} >= {"mcpl-foreach-order"}
