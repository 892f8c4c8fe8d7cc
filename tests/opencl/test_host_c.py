"""`mcl gen --host c`: the header and source compile with the system C compiler
against the OpenCL headers (skipped when the machine has none)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.opencl.conftest import EXAMPLES

HEADER_DIRS = ("/usr/include", "/usr/local/include", "/opt/homebrew/include")


def _opencl_include() -> str | None:
    for d in HEADER_DIRS:
        if (Path(d) / "CL" / "cl.h").is_file():
            return d
    return None


def compile_c(c_file: Path, out: Path, *flags: str) -> subprocess.CompletedProcess:
    """``c_file`` compiled to ``out`` with the system C compiler as C99, every warning an
    error (the test skipped where the machine has no compiler or no OpenCL headers)."""
    cc = shutil.which("gcc") or shutil.which("cc")
    include = _opencl_include()
    if cc is None or include is None:
        pytest.skip("no C compiler or no OpenCL headers (CL/cl.h) on this machine")
    return subprocess.run([cc, "-std=c99", "-Wall", "-Werror", *flags, "-c", "-I", include,
                           str(c_file), "-o", str(out)], capture_output=True, text=True)


@pytest.mark.parametrize("example", ["matmul/hopper_v2.mcpl", "convolution/hopper_v1.mcpl",
                                     "reduction/hopper_v2.mcpl", "matmul/hopper_v10.mcpl"])
def test_host_code_compiles(run_cli, tmp_path, example):
    code, out, err = run_cli("gen", "--host", "c", EXAMPLES / example, "-o", tmp_path)
    assert code == 0, err
    (c_file,) = tmp_path.glob("*_host.c")
    r = compile_c(c_file, tmp_path / "host.o")
    assert r.returncode == 0, r.stderr


def test_host_code_names_the_plan():
    from mcl.opencl import generate
    from mcl.opencl.host_c import host_code
    (k,) = generate(EXAMPLES / "convolution" / "hopper_v1.mcpl")
    header, source = host_code(k)
    assert "cl_int convolution_create(cl_context context, cl_device_id device, int fh, int fw" \
        in header
    assert "-DMCL_fh=%ld -DMCL_fw=%ld" in source
    assert "size_t global[2] = {(size_t)((w + 32 - 1) / 32 * 32)" in source
    assert "clEnqueueNDRangeKernel(queue, kernel, 2, NULL, global, local" in source


def test_host_code_refuses_sizes_a_view_does_not_cover():
    # hopper_v10 reads a through p / 16 phases of 16: at p = 20 its view covers 2048 of
    # a's 2560 elements; the launch returns CL_INVALID_VALUE instead of a wrong result
    from mcl.opencl import generate
    from mcl.opencl.host_c import host_code
    (k,) = generate(EXAMPLES / "matmul" / "hopper_v10.mcpl")
    _, source = host_code(k)
    assert ("    if ((long)((n) * (p / 16) * (16)) != (long)((n) * (p)))\n"
            "        return CL_INVALID_VALUE;   /* view a3 of a, hopper_v10.mcpl line 39 */"
            ) in source
    assert source.index("CL_INVALID_VALUE") < source.index("clSetKernelArg(kernel, 0")


def test_host_code_passes_a_small_constant_array_by_value(run_cli, tmp_path):
    """Built specialised, convolution hopper_v4's filter is a struct argument: the host
    passes the host array's bytes (as many as the sizes of the build make), and the
    result compiles."""
    from mcl.opencl import generate
    from mcl.opencl.host_c import host_code
    (k,) = generate(EXAMPLES / "convolution" / "hopper_v4.mcpl", specialize=True)
    header, source = host_code(k)
    assert "const float *filter" in header
    assert ("err |= clSetKernelArg(kernel, 2, (size_t)(fh) * (size_t)(fw) * sizeof(float), "
            "filter);") in source
    code, _, err = run_cli("gen", "--specialize", "--host", "c",
                           EXAMPLES / "convolution" / "hopper_v4.mcpl", "-o", tmp_path)
    assert code == 0, err
    (c_file,) = tmp_path.glob("*_host.c")
    r = compile_c(c_file, tmp_path / "host.o")
    assert r.returncode == 0, r.stderr
