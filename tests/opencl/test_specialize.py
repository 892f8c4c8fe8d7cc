"""Sizes as compile-time constants (generate/compile(specialize=True), --specialize):
the kernel loses its size parameters, the plan lists them as compile-time sizes, and
the runtime builds one program per size; results equal the general kernel's."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np

import mcl
from mcl.opencl import generate

ROOT = Path(__file__).resolve().parents[2]
V10 = ROOT / "examples" / "matmul" / "hopper_v10.mcpl"


def test_specialised_sizes_leave_the_signature():
    (general,) = generate(V10, "hopper")
    (special,) = generate(V10, "hopper", specialize=True)
    assert [a.name for a in general.plan.arguments][:3] == ["n", "m", "p"]
    assert [a.name for a in special.plan.arguments] == ["c", "a", "b"]
    assert [c.name for c in special.plan.compile_time] == ["n", "m", "p"]
    assert "#define n MCL_n" in special.source and "n specialised" in special.source


def test_one_program_per_size_and_the_same_results(opencl_device):
    k = mcl.compile(V10, target="hopper", specialize=True)
    rng = np.random.default_rng(3)
    for n, m, p in [(128, 256, 48), (256, 128, 16)]:
        a = rng.uniform(-1, 1, (n, p)).astype(np.float32)
        b = rng.uniform(-1, 1, (p, m)).astype(np.float32)
        got = k(n=n, m=m, p=p, a=a, b=b)["c"]
        np.testing.assert_allclose(got, a @ b, rtol=1e-4, atol=1e-4)
    assert len(k._programs) == 2


def test_run_command_specialize(opencl_device):
    out = subprocess.run([sys.executable, "-m", "mcl.cli", "run", "--target", "hopper",
                          str(V10), "--set", "n=128", "--set", "m=128", "--set", "p=32",
                          "--specialize", "--repeat", "1"],
                         capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert "matches the reference" in out.stdout
