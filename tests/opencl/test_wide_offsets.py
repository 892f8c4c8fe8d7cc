"""Element offsets into arrays of 2^31 elements or more: the generated kernel computes
the offsets into its multi-dimensional arrays in device memory as ``MCL_OFFSET``, an
int unless the program is built with ``-D MCL_OFFSET=long``, which the runtime does
at sizes where such an array holds 2^31 elements or more (a 50000 x 50000 matrix of
floats, 10 GB: in 32 bits its row offsets wrap round past row 42949)."""

from __future__ import annotations

import numpy as np

from tests.opencl.conftest import EXAMPLES


def _gesummv():
    from mcl.opencl import generate
    (k,) = generate(EXAMPLES / "gesummv" / "hopper_v1.mcpl", "h200")
    return k


def test_offsets_into_device_arrays_of_two_dimensions_are_cast():
    k = _gesummv()
    assert "ta[u] += A[(MCL_OFFSET)i * n + j] * xj;" in k.source
    assert "#ifndef MCL_OFFSET\n#define MCL_OFFSET int\n#endif" in k.source
    # arrays of one dimension, and local ones, are indexed as before
    assert "x[j]" in k.source and "(MCL_OFFSET)w" not in k.source
    assert k.plan.wide_offsets == ("A", "B")


def test_a_kernel_without_such_arrays_has_no_macro():
    from mcl.opencl import generate
    (k,) = generate(EXAMPLES / "vector_add" / "hopper_v1.mcpl")
    assert "MCL_OFFSET" not in k.source and k.plan.wide_offsets == ()


def test_the_plan_asks_for_64_bits_only_where_an_array_needs_them():
    plan = _gesummv().plan
    assert plan.offset_option({"n": 4096}) is None
    assert plan.offset_option({"n": 46340}) is None            # 2147395600 elements
    assert plan.offset_option({"n": 46341}) == "-DMCL_OFFSET=long"   # 2147488281
    assert plan.offset_option({}) is None     # a build for inspection, without sizes
    from mcl.opencl.plan import LaunchPlan
    assert LaunchPlan.from_json(plan.to_json()).wide_offsets == ("A", "B")


def test_the_64_bit_build_computes_the_same(monkeypatch):
    """The build the runtime makes for large sizes, forced at a small one (the sizes
    that need it take 20 GB): the same result as numpy, built with the option."""
    import mcl
    from mcl.opencl import device as devices
    from mcl.opencl.plan import LaunchPlan
    built = []
    real = devices.build_program

    def recorded(context, source, options, *args, **kwargs):
        built.append(list(options))
        return real(context, source, options, *args, **kwargs)

    monkeypatch.setattr(devices, "build_program", recorded)
    monkeypatch.setattr(LaunchPlan, "offset_option", lambda self, env: "-DMCL_OFFSET=long")
    k = mcl.compile(EXAMPLES / "gesummv" / "hopper_v1.mcpl")
    rng = np.random.default_rng(1)
    n = 300
    a, b = (rng.random((n, n), dtype=np.float32) for _ in range(2))
    x = rng.random(n, dtype=np.float32)
    out = k(n=n, alpha=1.5, beta=1.2, A=a, B=b, x=x, y=np.zeros(n, np.float32))
    assert np.allclose(out["y"], 1.5 * a @ x + 1.2 * b @ x, rtol=1e-4)
    assert any("-DMCL_OFFSET=long" in o for o in built)


def test_host_code_builds_wide_where_asked_and_refuses_such_sizes_otherwise(tmp_path):
    from mcl.opencl.host_c import host_code
    header, source = host_code(_gesummv())
    assert "compile this file with\n * -D MCL_WIDE_OFFSETS" in header
    assert '#ifdef MCL_WIDE_OFFSETS\n#define MCL_OFFSET_OPTION " -DMCL_OFFSET=long"' in source
    assert ("#ifndef MCL_WIDE_OFFSETS\n    if ((double)(n) * (double)(n) >= 2147483648.0)\n"
            "        return CL_INVALID_BUFFER_SIZE;") in source
    from tests.opencl.test_host_c import compile_c
    (tmp_path / "gesummv_host.h").write_text(header)
    (tmp_path / "gesummv_host.c").write_text(source)
    for wide in ([], ["-DMCL_WIDE_OFFSETS"]):
        r = compile_c(tmp_path / "gesummv_host.c", tmp_path / "h.o", *wide)
        assert r.returncode == 0, r.stderr
