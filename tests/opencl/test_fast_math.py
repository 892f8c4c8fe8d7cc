"""Relaxed math (`mcl run --fast-math`, `mcl gen --fast-math`, compile(fast_math=True)):
the plan asks for -cl-fast-relaxed-math, results stay within the reference's tolerance,
and the time feedback says what the built-in functions would take with it."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.opencl.conftest import EXAMPLES

BS = EXAMPLES / "black_scholes" / "hopper_v2.mcpl"


def test_gen_puts_relaxed_math_in_the_plan(run_cli, tmp_path):
    code, out, err = run_cli("gen", "--fast-math", BS, "-o", tmp_path)
    assert code == 0, err
    plan = json.loads((tmp_path / "black_scholes.json").read_text())
    assert "-cl-fast-relaxed-math" in plan["build_options"]
    code, out, err = run_cli("gen", BS, "-o", tmp_path / "precise")
    plan = json.loads((tmp_path / "precise" / "black_scholes.json").read_text())
    assert "-cl-fast-relaxed-math" not in plan["build_options"]


def _device_name() -> str:
    from mcl.opencl.device import runtime
    return runtime().device.platform.name


def test_relaxed_black_scholes_is_within_the_tolerance(opencl_device):
    """On the selected device (PoCL here; NVIDIA's driver on the GPU machine)."""
    import runpy

    from mcl.opencl.runtime import compile as compile_kernel
    ref = runpy.run_path(str(BS.parent / "reference.py"))
    data = ref["inputs"](np.random.default_rng(3), 10_007)
    want = ref["reference"](**data)
    k = compile_kernel(BS, fast_math=True)
    assert "-cl-fast-relaxed-math" in k.plan.build_options
    got = k(**{n: (v.copy() if isinstance(v, np.ndarray) else v) for n, v in data.items()})
    for o in ("callResult", "putResult"):
        np.testing.assert_allclose(got[o], want[o], **ref["TOLERANCE"])


def test_run_says_it_runs_with_relaxed_math(opencl_device, run_cli):
    code, out, err = run_cli("run", BS, "--set", "n=1003", "--repeat", "1", "--fast-math")
    assert code == 0, err
    assert "relaxed math (-cl-fast-relaxed-math)" in out
    assert "callResult: matches the reference" in out


def test_the_time_feedback_says_what_relaxed_math_would_save():
    """black_scholes hopper_v2 at 4e6 options: exp, log, sqrt and 4 divisions an option
    take 11.3 us beyond one operation each with NVIDIA's precise math, 6.7 us relaxed
    (hopper.target's function_costs and function_costs_relaxed, measured on the H100)."""
    from mcl.analyses import feedback
    from mcl.mcpl import check
    [d] = [d for d in feedback(check(BS), only={"time"}, values={"n": 4_000_000})
           if d.code == "feedback-time"]
    precise, relaxed = sum(d.data["functions"].values()), \
        sum(d.data["functions_relaxed"].values())
    assert 10e-6 < precise < 13e-6 and 5.5e-6 < relaxed < 8e-6, (precise, relaxed)
    assert "with relaxed math (mcl run --fast-math" in d.message, d.message


def test_relaxed_math_on_nvidia():
    """GPU twin: NVIDIA's driver builds black_scholes relaxed and it stays within the
    reference's tolerance (benchmarks/opencl/bs_math.py times it: 6-14% faster)."""
    from mcl.opencl import vendor
    if vendor.nvidia_device() is None:
        pytest.skip("no NVIDIA OpenCL device")
    if "NVIDIA" not in _device_name():
        pytest.skip("the selected device is not NVIDIA's (MCL_DEVICE)")
    test_relaxed_black_scholes_is_within_the_tolerance(None)
