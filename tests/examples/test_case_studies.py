"""Tests of the case-study benchmark scripts (benchmarks/case_studies): the driver
in quick mode with stand-in kernels (verification and bookkeeping, no timing
asserted) and the report on synthetic results."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "benchmarks" / "case_studies"


def _load(name: str):
    sys.path.insert(0, str(CASES))
    spec = importlib.util.spec_from_file_location(f"case_studies_{name}", CASES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


run = _load("run")
report = _load("report")


def test_versions_follow_the_hopper_path():
    names = [v["version"] for v in run.versions("matmul")]
    assert names[0] == "perfect"
    assert names.index("gpu_v3") < names.index("nvidia_v1") < names.index("hopper_v1")
    # other branches of the hierarchy cannot be translated to hopper
    assert not any(n.startswith(("mic", "xeon_phi", "fermi")) for n in names)


class _NumpyKernel:
    """Stands in for a compiled version: the reference, optionally spoiled."""

    def __init__(self, ref, wrong: bool):
        self.ref, self.wrong = ref, wrong

    def __call__(self, **args):
        if not isinstance(args.get("input"), np.ndarray):
            return None  # the timing call with device arrays
        out = self.ref.reference(**args)
        if self.wrong:
            out = {k: 2 * v + 1 for k, v in out.items()}
        return out


def _fake_compile(path: Path, device):
    ref = run.reference_module(path.parent.name)
    if path.stem == "gpu_v1":
        raise RuntimeError("cannot translate")
    return _NumpyKernel(ref, wrong=path.stem == "gpu_v2")


def test_quick_run_verifies_and_records(tmp_path):
    pytest.importorskip("pyopencl")
    try:
        run.Launcher.__init__  # noqa: B018
        from mcl.opencl.device import runtime
        runtime(None)
    except Exception as e:  # no OpenCL device at all
        pytest.skip(f"no OpenCL device: {e}")
    results = run.main(["--quick", "--kernels", "reduction", "--out", str(tmp_path)],
                       compile_fn=_fake_compile)
    saved = json.loads((tmp_path / "results.json").read_text())
    assert saved["kernels"].keys() == results["kernels"].keys() == {"reduction"}
    entries = saved["kernels"]["reduction"]["runs"][0]["results"]
    status = {v["version"]: v["status"] for v in entries}
    assert status["perfect"] == "ok"
    assert status["gpu_v1"] == "not compiled"
    assert status["gpu_v2"] == "wrong"
    entry = next(v for v in entries if v["version"] == "perfect")
    assert entry["timing"]["repeats"] == 3 and entry["timing"]["median_s"] >= 0


def _synthetic() -> dict:
    def version(name, level, t):
        return {"version": name, "level": level, "file": f"examples/k/{name}.mcpl",
                "status": "ok", "timing": {"median_s": t}}
    return {
        "meta": {"quick": False, "warmup": 2, "repeats": 10},
        "ceiling": {"opencl_copy": {"GBps_read_plus_write": 1000.0}},
        "kernels": {"reduction": {"metric": "GB/s", "primary_ref": "torch.sum", "runs": [{
            "sizes": {"n": 1000},
            "roofline": {"flops": 0, "bytes": 4e9, "bound_s": 2e-3, "bound_by": "memory",
                         "source": "test"},
            "references": [{"name": "torch.sum", "primary": True, "status": "ok",
                            "timing": {"median_s": 4.2e-3}}],
            "results": [version("perfect", "perfect", 40e-3),
                        version("gpu_v1", "gpu", 10e-3),
                        version("gpu_v2", "gpu", 12e-3),
                        version("hopper_v1", "hopper", 4.4e-3),
                        {"version": "hopper_v2", "level": "hopper", "status": "wrong",
                         "reason": "results differ"}],
        }]}},
    }


def test_report_tables_findings_and_targets(tmp_path):
    text = report.render(_synthetic(), plots=None)
    # figure of merit: 4e9 bytes in 4.4 ms = 909 GB/s; 4.2 / 4.4 of torch.sum
    row = next(ln for ln in text.splitlines() if ln.startswith("| hopper_v1 "))
    assert "909" in row and "95%" in row and "9.09" in row
    assert "**gpu_v2** is slower than gpu_v1" in text
    assert "hopper_v1" not in [f for f in text.splitlines() if "is slower than" in f][0][:20]
    assert "reaches 95% of the primary (target 90%): met" in text
    assert "wrong: results differ" in text


def test_report_main_writes_markdown(tmp_path):
    path = tmp_path / "results.json"
    path.write_text(json.dumps(_synthetic()))
    assert report.main([str(path), "--out", str(tmp_path), "--no-plots"]) == 0
    assert (tmp_path / "REPORT.md").read_text().startswith("# Case studies of issue 10")
