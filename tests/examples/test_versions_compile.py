"""Every version of examples/ that lies on the path to hopper is brought to the
hopper target (translation and OpenCL generation) and, where an OpenCL device can
build kernels, verified against its reference.py at the small test sizes."""

from __future__ import annotations

import pytest

from tests.examples.conftest import ROOT, load_case_study

mcpl_versions = load_case_study("mcpl_versions")
launch = load_case_study("launch")

KERNELS = ["matmul", "convolution", "histogram", "gesummv", "black_scholes", "spmv_csr",
           "reduction", "vector_add"]
VERSIONS = [(k, v["version"]) for k in KERNELS for v in mcpl_versions.versions(k)]


def _device_builds() -> str | None:
    """None if the default OpenCL device builds a trivial kernel, else why not."""
    try:
        from mcl.opencl.device import build_program, runtime
        build_program(runtime(None).context, "__kernel void f(__global float *a) { a[0] = 1; }")
    except Exception as e:
        return str(e).splitlines()[0][:200]
    return None


_NO_BUILD = _device_builds()


@pytest.mark.parametrize(("kernel", "version"), VERSIONS)
def test_generates_for_hopper(kernel, version):
    from mcl.opencl import generate
    [k] = generate(str(ROOT / "examples" / kernel / f"{version}.mcpl"), "hopper")
    assert "__kernel" in k.source and k.plan.global_size


@pytest.mark.parametrize(("kernel", "version"), VERSIONS)
def test_correct_on_opencl_device(kernel, version):
    if _NO_BUILD:
        pytest.skip(f"the OpenCL device cannot build kernels here: {_NO_BUILD}")
    ref = mcpl_versions.reference_module(kernel)
    kern = mcpl_versions.compile_version(ROOT / "examples" / kernel / f"{version}.mcpl", None)
    import pyopencl as cl
    if kern.plan.assumes_lockstep and not kern.device.type & cl.device_type.GPU:
        pytest.skip("the kernel relies on lock-step warps, which only a GPU provides")
    result = launch.verify_small_sizes(kern, ref, version)
    assert result["failed"] == [], result["failed"]
    assert result["checked"] > 0, "no size of reference.SIZES suits this version"
