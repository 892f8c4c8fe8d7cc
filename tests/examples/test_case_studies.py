"""Tests of the case-study benchmark scripts (benchmarks/case_studies): the driver
in quick mode with stand-in kernels (verification and bookkeeping, no timing
asserted) and the report on synthetic results."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.examples.conftest import load_case_study

ROOT = Path(__file__).resolve().parents[2]


run = load_case_study("run")
mcpl_versions = load_case_study("mcpl_versions")
launch = load_case_study("launch")
baselines = load_case_study("baselines")
report = load_case_study("report")


def test_versions_follow_the_hopper_path():
    names = [v["version"] for v in mcpl_versions.versions("matmul")]
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


def _fake_compile(path: Path, device, specialize: bool = False):
    ref = mcpl_versions.reference_module(path.parent.name)
    if path.stem == "gpu_v1":
        raise RuntimeError("cannot translate")
    return _NumpyKernel(ref, wrong=path.stem == "gpu_v2")


def test_quick_run_verifies_and_records(tmp_path):
    pytest.importorskip("pyopencl")
    try:
        launch.Launcher.__init__  # noqa: B018
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
    # with what `mcl feedback` of gpu_v2 says of the step, at the run's sizes
    finding = next(f for f in text.splitlines() if "**gpu_v2** is slower" in f)
    assert "`mcl feedback` of gpu_v2 " in finding
    assert "hopper_v1" not in [f for f in text.splitlines() if "is slower than" in f][0][:20]
    assert "reaches 95% of the primary (target 90%): met" in text
    assert "wrong: results differ" in text


def test_a_finding_quotes_the_feedback_that_predicts_it():
    """matmul hopper_v6 is measured slower than hopper_v5, and its feedback says so."""
    said = report.step_feedback("matmul", "hopper_v6", {"n": 2048, "m": 2048, "p": 2048})
    # measured on the H200 at 2048^3: 434 and 403 us (tests/analyses/fidelity/h200_times.json)
    assert said.startswith("`mcl feedback` of hopper_v6 predicts it: \"this version is "
                           "predicted slower than hopper_v5 (436 µs against 404 µs"), said
    assert "could not be asked" in report.step_feedback("matmul", "no_such", {"n": 4})


def test_report_main_writes_markdown(tmp_path):
    path = tmp_path / "results.json"
    path.write_text(json.dumps(_synthetic()))
    assert report.main([str(path), "--out", str(tmp_path), "--no-plots"]) == 0
    assert (tmp_path / "REPORT.md").read_text().startswith("# Case studies of issue 10")


def test_report_names_the_runs_gpu_and_how_it_timed(tmp_path):
    data = _synthetic()
    data["meta"].update(gpu="NVIDIA H200", timing="each timed run queued behind X")
    path = tmp_path / "results.json"
    path.write_text(json.dumps(data))
    assert report.main([str(path), "--out", str(tmp_path), "--no-plots"]) == 0
    text = (tmp_path / "REPORT.md").read_text()
    assert text.startswith("# Case studies of issue 10: stepwise refinement on the H200\n")
    assert "CUDA events for torch; each timed run queued behind X)." in text


class _CostedKernel(_NumpyKernel):
    """A stand-in whose time is a cost model (seconds per element), not a clock."""

    def __init__(self, ref, wrong: bool, per_element: float):
        super().__init__(ref, wrong)
        self.per_element = per_element


def _costed_compile(path: Path, device, specialize: bool = False):
    ref = mcpl_versions.reference_module(path.parent.name)
    per_element = 1e-3 if path.stem == "perfect" else 1e-9
    return _CostedKernel(ref, wrong=path.stem == "gpu_v2", per_element=per_element)


def _fake_timer(kernel, args, device):
    def one_run() -> float:
        return kernel.per_element * int(args["n"])
    one_run.method = "fake cost model"
    return one_run


def test_driver_measures_a_too_slow_version_at_a_smaller_size(tmp_path):
    """The perfect reduction at 1 ms per element would take 100 s at the quick size
    (n = 100 000): it is measured (and verified) at the largest ladder size predicted
    to take 20 / 4 s, marked, and every later version still runs at the full size."""
    results = run.main(["--quick", "--kernels", "reduction", "--out", str(tmp_path),
                        "--max-version-s", "20"],
                       compile_fn=_costed_compile, timer_fn=_fake_timer)
    saved = json.loads((tmp_path / "results.json").read_text())
    assert saved["meta"]["max_version_s"] == 20
    the_run = saved["kernels"]["reduction"]["runs"][0]
    entries = {v["version"]: v for v in the_run["results"]}
    perfect = entries["perfect"]
    assert perfect["status"] == "ok"
    assert perfect["sizes"] == {"n": 3125}
    assert perfect["reduced"]["paper_sizes"] == {"n": 100_000}
    assert perfect["reduced"]["predicted_paper_s"] == pytest.approx(100.0)
    assert perfect["timing"]["median_s"] == pytest.approx(3.125)
    assert perfect["verification"]["ok"]  # verified at the size it ran at
    assert perfect["work"]["bytes"] == 4 * 3125
    for name, v in entries.items():
        if name == "perfect":
            continue
        assert "reduced" not in v and "sizes" not in v, name
        assert v["status"] == ("wrong" if name == "gpu_v2" else "ok"), name
    assert results["kernels"]["reduction"]["runs"][0]["results"][0]["sizes"] == {"n": 3125}
    # the report marks the row and never divides times at different sizes
    text = report.render(saved, plots=None)
    row = next(ln for ln in text.splitlines() if ln.startswith("| perfect "))
    assert "†" in row and "ok, reduced size" in row
    assert "**perfect** was measured at n = 3125, not at the paper size" in text
    assert "(perfect measured at n = 3125: ratio of GB/s)" in text


def test_time_repeatedly_keeps_within_its_budget():
    calls = []

    def one_run():
        calls.append(1)
        return 1.5
    t = launch.time_repeatedly(one_run, warmup=2, repeats=10, budget_s=6.0)
    assert len(calls) <= 4 and t["repeats"] >= 1
    calls.clear()
    t = launch.time_repeatedly(one_run, warmup=2, repeats=10, budget_s=2.0)
    assert calls == [1] and t["repeats"] == 1


# ----------------------------------------------------------------------------- roofline label

def test_matmul_bound_is_labelled_compute():
    """The H100 report said "memory-bound" for matmul's 2.05 ms at 4096^3, which is
    137 GFLOP at 66.9 TFLOP/s: the label came from the analyses' pessimistic ``bound``
    while the time was the compulsory bound (``best_bound``)."""
    sizes = {"n": 4096, "m": 4096, "p": 4096}
    a = baselines.analyses_roofline(ROOT / "examples" / "matmul" / "perfect.mcpl", sizes)
    if "error" in a:
        pytest.skip(a["error"])
    assert a["bound"] == "bandwidth" and a["best_bound"] == "compute"
    roof = {"flops": 2 * 4096 ** 3, "bytes": 0, "bound_s": 1.0, "bound_by": "memory"}
    baselines.use_analyses_bound(roof, a)
    assert roof["bound_by"] == "compute"
    assert roof["bound_s"] == pytest.approx(2 * 4096 ** 3 / a["peak_flops"])
    # a memory-bound kernel keeps its label
    b = baselines.analyses_roofline(ROOT / "examples" / "reduction" / "perfect.mcpl",
                                    {"n": 2 ** 28})
    if "error" not in b:
        roof = {"flops": 2 ** 28, "bound_s": 1.0}
        baselines.use_analyses_bound(roof, b)
        assert roof["bound_by"] == "memory"


def test_report_derives_the_bound_label_from_the_figures():
    """results.json of the H100 run (before the fix) says "memory" for a bound that
    equals flops / peak; the report says compute."""
    data = _synthetic()
    the_run = data["kernels"]["reduction"]["runs"][0]
    the_run["roofline"] = {"flops": 137438953472, "bytes": 0, "peak_flops": 66908160000000.0,
                           "bandwidth": 3.35e12, "bound_s": 0.0020541433731251914,
                           "bound_by": "memory", "source": "test"}
    assert "(compute-bound, test)" in report.render(data, plots=None)
    the_run["roofline"]["bound_s"] = 0.01  # larger than the compute time: memory
    assert "(memory-bound, test)" in report.render(data, plots=None)


def test_a_run_cut_short_keeps_verified_versions(tmp_path):
    """Verification follows each measurement: a run stopped in the middle of a kernel
    (the H100 run was killed inside the reduction) keeps what it verified."""
    def compile_then_stop(path: Path, device, specialize: bool = False):
        if path.stem == "gpu_v3":
            raise KeyboardInterrupt  # stands in for the kill: not an Exception
        return _costed_compile(path, device)
    with pytest.raises(KeyboardInterrupt):
        run.main(["--quick", "--kernels", "reduction", "--out", str(tmp_path)],
                 compile_fn=compile_then_stop, timer_fn=_fake_timer)
    saved = json.loads((tmp_path / "results.json").read_text())
    entries = saved["kernels"]["reduction"]["runs"][0]["results"]
    assert [v["version"] for v in entries] == ["perfect", "gpu_v1", "gpu_v2"]
    assert [v["verification"]["ok"] for v in entries] == [True, True, False]
    assert entries[2]["status"] == "wrong"
    assert "gpu_v2" in report.render(saved, plots=None)


def test_launcher_times_a_compiled_kernel_behind_the_awake_kernel():
    """The case studies time an MCL kernel through its prepared launch, each run
    queued behind mcl.opencl.conditions.keep_awake: a profiled time per run (the
    event waited for before it is read)."""
    pytest.importorskip("pyopencl")
    try:
        from mcl.opencl.device import runtime
        runtime(None)
    except Exception as e:  # no OpenCL device at all
        pytest.skip(f"no OpenCL device: {e}")
    import mcl
    kernel = mcl.compile(str(ROOT / "examples" / "vector_add" / "hopper_v1.mcpl"),
                         target="hopper")
    n = 4096
    args = {"n": n, "a": np.ones(n, np.float32), "b": np.ones(n, np.float32)}
    launcher = launch.Launcher(kernel, args, None)
    awakened = []
    real = launcher.before
    launcher.before = lambda: (awakened.append(1), real())
    assert launcher.method == "prepared launch event"
    times = [launcher() for _ in range(3)]
    assert all(t > 0 for t in times) and len(awakened) == 3
