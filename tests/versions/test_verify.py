"""Cross-level verification on the OpenCL device (PoCL without a GPU): the bundled
examples agree with their reference; a planted off-by-one in a tile loop is caught at
sizes that do not divide the tile, with its first differing element; a version that
does not check, and a size a version cannot run at, are located messages while the
other versions are still verified."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from mcl.versions import discover
from mcl.versions.verify import verify
from tests.versions.conftest import EXAMPLES, ROOT, copy_versions, needs_device

pytestmark = needs_device

KERNELS = ["convolution", "gesummv", "histogram", "black_scholes", "spmv_csr", "reduction",
           "vector_add"]


@pytest.mark.parametrize("kernel", KERNELS)
def test_example_versions_verify_clean(kernel):
    vs = discover.from_folder(EXAMPLES / kernel)
    r = verify(vs, sizes="small")
    assert r.against == "reference.py"
    assert not r.problems
    # a device with less local memory than a version's tile needs at some small size
    # (NVIDIA's 48 kB: convolution hopper_v2 with a 70 x 90 filter) refuses the launch
    # there, a warning located at the tile's declaration that names the sizes; nothing
    # else may be a problem
    refused = [d for d in vs.all_problems if d.code == "opencl-local-memory"]
    assert all(" (at " in d.message and d.span is not None for d in refused), refused
    assert len(refused) == len(vs.all_problems), vs.all_problems
    verdicts = {v.name: r.verdict(v.name) for v in vs.versions}
    assert not r.inconsistent, verdicts
    # every version ran somewhere, except kernels that need lock-step warps (GPU only)
    for v in vs.versions:
        statuses = {c.status for c in r.checks[v.name]}
        assert "ok" in statuses or statuses == {"skipped"}, (v.name, r.checks[v.name])
    assert sum(v.startswith("consistent") for v in verdicts.values()) >= len(verdicts) - 1


def test_matmul_command_verifies_every_version_clean():
    """`mcl versions examples/matmul --sizes small --json`: the whole command."""
    out = subprocess.run([sys.executable, "-m", "mcl.cli", "versions", "examples/matmul",
                          "--sizes", "small", "--json", "-q"], cwd=ROOT,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    data = json.loads(out.stdout)
    verdicts = {v: d["verdict"] for v, d in data["verification"]["versions"].items()}
    files = len(list((ROOT / "examples" / "matmul").glob("*.mcpl")))
    assert len(verdicts) == files and set(verdicts.values()) == {"consistent"}, verdicts
    sizes = [s["values"] for s in data["verification"]["sizes"]]
    assert {"n": 1, "m": 1, "p": 1} in sizes
    assert any(s["p"] % 16 and s["n"] % 4 for s in sizes)           # divides no tile
    steps = {(s["parent"], s["child"]) for s in data["steps"]}
    assert ("nvidia_v1", "hopper") in steps and ("cpu_v2", "cpu_v3") in steps
    assert len(steps) == files - 1   # a tree
    step = next(s for s in data["steps"] if s["child"] == "gpu_v1")
    # exactly the message that prompted gpu_v1 is gone; the statistics only changed
    [gone] = step["feedback_disappeared"]
    assert gone["code"] == "feedback-faster-memory"
    assert "local memory can be leveraged for a[i, k]" in gone["message"]
    assert {c["after"]["code"] for c in step["feedback_changed"]} >= \
        {"feedback-ops", "feedback-roofline"}
    timed = {t["version"]: t for t in data["timings"]}
    assert timed["hopper_v5"]["bound_s"] > 0
    # perfect has no numbers of its own; on a device a level describes it has that level's
    assert timed["perfect"]["bound_s"] is None or timed["perfect"]["at"] != "perfect"


def _planted(tmp_path):
    d = copy_versions(tmp_path / "v", "matmul", ["perfect", "gpu", "hopper_v1"])
    good = (d / "hopper_v1.mcpl").read_text()
    bug = good.replace("const int nrPhases = (p + bk - 1) / bk;", "const int nrPhases = p / bk;")
    assert bug != good
    (d / "hopper_v2.mcpl").write_text(bug)       # the last partial tile of k is dropped
    return d


def test_planted_off_by_one_in_tile_loop_is_caught(tmp_path):
    d = _planted(tmp_path)
    vs = discover.from_folder(d)
    r = verify(vs, sizes="small")
    assert r.inconsistent == ["hopper_v2"]
    by_label = dict(zip([s.label for s in r.size_sets], r.checks["hopper_v2"], strict=True))
    assert by_label["divisible"].status == "ok"               # p = 256: whole tiles only
    bad = by_label["non-divisible"]                           # p = 70: 6 of 70 k dropped
    assert bad.status == "differs"
    assert bad.first["output"] == "c" and bad.first["index"] == [0, 0]
    assert bad.first["mismatches"] > 0 and bad.first["value"] != bad.first["expected"]
    assert "first c[0, 0] =" in bad.detail
    for name in ["perfect", "gpu", "hopper_v1"]:
        assert r.verdict(name) == "consistent"


def test_planted_bug_fails_the_command(tmp_path):
    d = _planted(tmp_path)
    out = subprocess.run([sys.executable, "-m", "mcl.cli", "versions", str(d), "-q",
                          "--sizes", "n=100,m=130,p=70;n=8,m=64,p=256"], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 1
    assert "hopper_v2: level hopper, run as h200, INCONSISTENT" in out.stdout
    assert "n=100, m=130, p=70: differs:" in out.stdout and "first c[0, 0]" in out.stdout


def test_bad_versions_are_located_and_the_others_still_verified(tmp_path):
    d = copy_versions(tmp_path / "v", "matmul", ["perfect", "gpu", "gpu_v1", "gpu_v2"])
    text = (d / "gpu_v2.mcpl").read_text()
    (d / "gpu_v2.mcpl").write_text(text.replace("l_a[k] = a[i, k];", "l_a[k] = a[i, kk];"))
    # p floats of local memory (gpu_v1's row of a) one more than the device holds
    from mcl.opencl.device import select_device
    big = select_device().local_mem_size // 4 + 1
    vs = discover.from_folder(d)
    r = verify(vs, sizes=f"n=3,m=5,p=7;n=2,m=3,p={big}")
    [bad] = vs.get("gpu_v2").problems
    assert bad.is_error and bad.span.file.endswith("gpu_v2.mcpl") and "kk" in bad.message
    assert r.verdict("gpu_v2") == "left out"
    [local] = vs.get("gpu_v1").problems
    assert local.code == "opencl-local-memory" and f"p={big}" in local.message
    line = (d / "gpu_v1.mcpl").read_text().splitlines()[local.span.line - 1]
    assert "local float[p] l_a" in line                       # at the declaration
    assert [c.status for c in r.checks["gpu_v1"]] == ["ok", "error"]
    assert [c.status for c in r.checks["gpu"]] == ["ok", "ok"]
    assert r.verdict("perfect") == r.verdict("gpu") == "consistent"


def test_timing_path_on_the_cpu_device(tmp_path):
    """On a GPU every version is timed; --time forces it on PoCL (the GPU test's twin)."""
    from mcl.versions import versions, write_report

    d = copy_versions(tmp_path / "v", "vector_add", ["perfect", "gpu_v1", "hopper_v1"])
    r = versions(d, sizes="n=37", time_it=True, repeat=3, cold=False,
                 timing_values={"n": 100_000})
    assert r.timing_sizes == {"n": 100_000} and r.launches == "warm"
    measured = {t.version: t.measured_s for t in r.timings.values()}
    assert all(s is not None and 0 < s < 1 for s in measured.values()), measured
    hopper = r.timings["hopper_v1"]
    assert hopper.bound_s > 0 and hopper.predicted_s >= hopper.bound_s
    files = write_report(r, tmp_path / "out")
    svg = (tmp_path / "out" / "time.svg").read_text()
    assert "measured (best of N)" in svg
    assert "measured" in (tmp_path / "out" / "roofline.svg").read_text()
    assert len(files) == 4


def test_without_reference_py_the_highest_version_is_the_reference(tmp_path):
    d = _planted(tmp_path)
    (d / "reference.py").unlink()
    vs = discover.from_folder(d)
    r = verify(vs, sizes="n=100,m=130,p=70;n=8,m=64,p=256")
    assert r.against == "perfect"
    assert [c.status for c in r.checks["perfect"]] == ["reference", "reference"]
    assert r.verdict("gpu") == r.verdict("hopper_v1") == "consistent"
    assert [c.status for c in r.checks["hopper_v2"]] == ["differs", "ok"]
    # a highest version that does not check is left out: the next one is the reference
    (d / "perfect.mcpl").write_text((d / "perfect.mcpl").read_text().replace("c[i, j] = sum;",
                                                                           "c[i, j] = sum"))
    vs = discover.from_folder(d)
    r = verify(vs, sizes="n=100,m=130,p=70")
    assert r.against == "gpu" and r.verdict("perfect") == "left out"
    assert vs.get("perfect").problems[0].span.file.endswith("perfect.mcpl")
    assert r.inconsistent == ["hopper_v2"] and r.verdict("hopper_v1") == "consistent"


@pytest.mark.parametrize(("sizes", "message"), [
    ("n=abc", "'n=abc' is not NAME=NUMBER"),
    ("n=3,m=4", "gives no value for p"),
    ("n=3,n=4,m=4,p=4", "gives n twice"),
])
def test_bad_sizes_are_a_message_not_a_traceback(sizes, message):
    out = subprocess.run([sys.executable, "-m", "mcl.cli", "versions", "examples/matmul", "-q",
                          "--sizes", sizes], cwd=ROOT, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert message in out.stderr


def test_times_are_predicted_at_the_level_that_describes_the_device(tmp_path, monkeypatch):
    """On a device a target file says a level describes (h200.target: "NVIDIA H200"),
    each version's roofline bound and predicted time are that level's, as `mcl feedback
    --level h200` gives them, so that they stand beside the times measured there; on
    PoCL, which none describes, each version's own level's."""
    from mcl.analyses.level import feedback_at_level
    from mcl.opencl import target
    from mcl.versions import versions

    assert target.described_by("NVIDIA CUDA:NVIDIA H200") == "h200"
    assert target.described_by("NVIDIA CUDA:NVIDIA H100 80GB HBM3") == "hopper"
    assert target.described_by("Portable Computing Language:cpu-x86") is None
    d = copy_versions(tmp_path / "v", "vector_add", ["perfect", "gpu_v1", "hopper_v1"])
    # a device no level describes, whichever this machine has (on the GPU machine: h200)
    monkeypatch.setattr(target, "described_by", lambda name, search_path=(): None)
    own = versions(d, sizes="n=37", time_it=False, timing_values={"n": 1 << 20})
    assert {t.at for t in own.timings.values()} <= {"perfect", "gpu", "hopper"}
    assert own.timings["perfect"].bound_s is None
    monkeypatch.setattr(target, "described_by", lambda name, search_path=(): "h200")
    r = versions(d, sizes="n=37", time_it=False, timing_values={"n": 1 << 20})
    assert {t.at for t in r.timings.values()} == {"h200"}
    assert all(t.bound_s and t.predicted_s >= t.bound_s for t in r.timings.values())
    gpu_v1 = r.timings["gpu_v1"]
    [time] = [x for x in feedback_at_level(own.versions.get("gpu_v1").checked, "h200",
                                           values={"n": 1 << 20}, only=("time",)).diagnostics
              if x.code == "feedback-time"]
    assert gpu_v1.predicted_s == time.data["seconds"]
    assert gpu_v1.predicted_s < own.timings["gpu_v1"].predicted_s / 5   # 'gpu': 150 GB/s
    from mcl.versions.report import at_text
    assert r.described == "h200" and r.device_level == "h200"
    assert at_text(r).startswith("at h200, the level that describes")
    assert own.device_level is None and at_text(own) == "at each version's own level"


def test_a_version_of_another_branch_says_where_its_prediction_is():
    """Beside versions predicted at the device's level (h200), one of another branch
    (fermi, a leaf that is not above it) keeps its own level's figures, and says so."""
    from mcl.versions.api import Result
    from mcl.versions.report import at_text, elsewhere
    from mcl.versions.timing import Timing
    rows = [Timing("gpu_v1", "gpu", at="h200"), Timing("hopper_v1", "hopper", at="h200"),
            Timing("fermi_v1", "fermi", at="fermi")]
    r = Result(None, timings={t.version: t for t in rows}, described="h200")
    assert r.device_level == "h200"
    assert elsewhere(rows[2], "h200") == " (bound and prediction at fermi, not the device's h200)"
    assert elsewhere(rows[1], "h200") == ""
    assert "the other branches' at their own level" in at_text(r)
    # a device described by a level none of the versions was predicted at: their own
    only_fermi = Result(None, timings={"fermi_v1": rows[2]}, described="h200")
    assert only_fermi.device_level is None
    assert at_text(only_fermi) == "at each version's own level"


@pytest.mark.parametrize("option, cold", [((), True), (("--cold",), True), (("--warm",), False)])
def test_mcl_versions_times_cold_launches_unless_asked_for_warm_ones(tmp_path, monkeypatch,
                                                                      run_cli, option, cold):
    """The table puts the measured time beside the time predicted for a cold launch, so
    the launches are cold unless --warm asks for the steady state."""
    from mcl.versions import api
    asked = []
    monkeypatch.setattr(api, "measure", lambda *a, **kw: asked.append(kw["cold"]))
    d = copy_versions(tmp_path / "v", "vector_add", ["perfect", "gpu_v1"])
    code, out, err = run_cli("versions", d, "--sizes", "n=37", "--time", "-q", *option)
    assert code == 0, err
    assert asked == [cold]
    assert f"best of the {'cold' if cold else 'warm'} launches" in out
    code, _, err = run_cli("versions", d, "--cold", "--warm")
    assert code == 2 and "not allowed with argument" in err


def test_cold_timing_flushes_before_each_launch(tmp_path, monkeypatch):
    """`mcl versions --cold` times each launch after a flush of the caches, the launch
    the predicted time is for, and says so."""
    from mcl.opencl import conditions
    from mcl.versions import versions
    flushes = []

    def counting(context, queue, *a, **kw):
        real = original(context, queue, nbytes=1 << 20)
        def before():
            flushes.append(1)
            real()
        return before

    original = conditions.cache_flush
    monkeypatch.setattr(conditions, "cache_flush", counting)
    d = copy_versions(tmp_path / "v", "vector_add", ["perfect", "hopper_v1"])
    r = versions(d, sizes="n=37", time_it=True, repeat=2, cold=True,
                 timing_values={"n": 4096})
    assert r.cold and all(t.measured_s for t in r.timings.values())
    assert len(flushes) >= 2 * 2        # each timed launch of both versions


@pytest.mark.parametrize(("sizes", "message"), [
    ("n=-1", "--sizes 'n=-1': n is a size of the kernel: it cannot be negative"),
    ("n=1.5", "--sizes 'n=1.5': n is a size of the kernel (int): give a whole number, not 1.5"),
    ("n=1e3", "give a whole number, not 1000.0"),
    ("n=3000000000", "n = 3000000000 is more than its type int holds (2147483647)"),
])
def test_sizes_that_are_no_size_are_refused_before_the_work(run_cli, sizes, message):
    """They were 'inputs for n=-1 could not be made: ValueError: negative dimensions are
    not allowed' at each size, after every version was compiled (n=3000000000: arrays of
    12 GB each were allocated)."""
    code, out, err = run_cli("versions", EXAMPLES / "vector_add", "-q", "--no-time",
                             "--sizes", sizes)
    assert code == 1 and out == ""
    assert message in err and "[versions-bad-sizes]" in err


def _broken_reference(tmp_path, text: str):
    d = copy_versions(tmp_path / "v", "vector_add", ["perfect", "gpu_v1"], reference=False)
    (d / "reference.py").write_text(text)
    return d


_REFERENCE = (EXAMPLES / "vector_add" / "reference.py").read_text()


def test_a_reference_py_that_calls_sys_exit(tmp_path, run_cli):
    """mcl versions exited silently with the status reference.py gave sys.exit."""
    d = _broken_reference(tmp_path, "import sys\nsys.exit(3)\n")
    code, _, err = run_cli("versions", d, "-q", "--no-time")
    assert code == 1
    assert f"{d / 'reference.py'}: could not be run: it called sys.exit(3)" in err
    d = _broken_reference(tmp_path / "2", _REFERENCE.replace(
        "    return {\n", "    import sys\n    sys.exit('no inputs')\n    return {\n", 1))
    vs = discover.from_folder(d)
    r = verify(vs, sizes="n=37")
    [p] = r.problems
    assert p.message == f"{d / 'reference.py'}: inputs() failed at n=37: it called " \
        "sys.exit('no inputs')"


def test_reference_py_without_reference_function_is_an_error(tmp_path):
    """It was silently ignored: the versions were compared with the highest one."""
    d = _broken_reference(tmp_path, _REFERENCE.replace("def reference(", "def referenc("))
    vs = discover.from_folder(d)
    r = verify(vs, sizes="n=37")
    [p] = r.problems
    assert p.is_error and p.code == "versions-reference"
    assert p.message.startswith(f"{d / 'reference.py'} defines no function reference()")
    assert r.against == "perfect" and r.verdict("gpu_v1") == "consistent"


def test_reference_outputs_that_the_kernel_has_not_are_an_error(tmp_path):
    """reference() returning {'cc': ...} (the kernel's output is c) compared nothing,
    and every version was consistent."""
    d = _broken_reference(tmp_path, _REFERENCE.replace('{"c": (a + b)', '{"cc": (a + b)'))
    vs = discover.from_folder(d)
    r = verify(vs, sizes="n=37;n=100")
    [p] = r.problems
    assert p.is_error and p.code == "versions-reference-outputs"
    assert "reference() returns 'cc', which the kernel has no parameter of" in p.message
    assert "n, c, a, b" in p.hint
    assert not any(r.verdict(v.name).startswith("consistent") for v in vs.versions)


@pytest.mark.parametrize(("old", "new", "message"), [
    ('return {"c": (a + b).astype(np.float32)}', "return 5",
     "reference() failed at n=37: TypeError: it returned int, not a dict of the outputs"),
    ("    return {\n", "    return 7\n    return {\n",
     "inputs() failed at n=37: TypeError: it returned int, not a dict of the arguments"),
])
def test_reference_py_functions_that_return_no_dict(tmp_path, old, new, message):
    """'AttributeError: 'int' object has no attribute 'items'' and 'inputs for n=37
    could not be made: TypeError: 'int' object is not iterable': neither said which
    function of which file."""
    d = _broken_reference(tmp_path, _REFERENCE.replace(old, new, 1))
    r = verify(discover.from_folder(d), sizes="n=37")
    [p] = r.problems
    assert p.message == f"{d / 'reference.py'}: {message} by name"


@pytest.mark.parametrize(("option", "message"), [
    (["--repeat", "0", "--time"], "--repeat 0: time at least 1 launch"),
    (["--repeat", "-3", "--time"], "--repeat -3: time at least 1 launch"),
    (["--seed", "-1"], "--seed -1: a seed is an integer of 0 or more"),
])
def test_repeat_and_seed_out_of_range_are_usage_errors(run_cli, option, message):
    """Both were mcl's traceback (Kernel.time's ValueError, numpy's SeedSequence) after
    every version was compiled and run."""
    code, out, err = run_cli("versions", EXAMPLES / "vector_add", "-q", "--sizes", "n=37",
                             *option)
    assert code == 2 and out == "" and "Traceback" not in err
    assert f"mcl: error: {message}" in err


@pytest.mark.parametrize(("assignment", "message"), [
    ("n=-5", "--set 'n=-5': n is a size of the kernel: it cannot be negative"),
    ("zz=5", "--set zz=5: the kernel 'vector_add' has no parameter zz"),
])
def test_set_of_no_size_or_no_parameter_is_refused(run_cli, assignment, message):
    """Both ran with exit status 0: n=-5 left the roofline and predicted times out
    without a word, zz=5 was ignored."""
    code, out, err = run_cli("versions", EXAMPLES / "vector_add", "-q", "--no-time",
                             "--sizes", "n=37", "--set", assignment)
    assert code == 1 and out == ""
    assert f"mcl: error: {message} [versions-bad-sizes]" in err


def test_a_mistyped_target_is_said_once_before_any_version_runs(run_cli, monkeypatch):
    import mcl.versions as V

    def ran(*args, **kwargs):
        raise AssertionError("the versions ran before the target was checked")
    monkeypatch.setattr(V, "versions", ran)
    code, out, err = run_cli("versions", ROOT / "examples" / "vector_add", "--target", "hoper",
                             "-q", "--no-time")
    assert code == 1 and out == ""
    assert err.count("unknown hardware description 'hoper'") == 1
    assert "did you mean 'hopper'?" in err
