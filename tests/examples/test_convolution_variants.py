"""The convolution versions with other `const` values (benchmarks/opencl/
conv_variants.py sweeps them on the GPU): each variant is verified on the OpenCL
device of the tests (PoCL) against reference.py at its small sizes, which do not
divide the tiles; and the benchmark itself runs on that device."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.examples.conftest import load_case_study, load_script

ROOT = Path(__file__).resolve().parents[2]
CONV = ROOT / "examples" / "convolution"


mcpl_versions = load_case_study("mcpl_versions")
launch = load_case_study("launch")
cv = load_script(ROOT / "benchmarks" / "opencl" / "conv_variants.py", "conv_variants")


def _device_builds() -> str | None:
    try:
        from mcl.opencl.device import build_program, runtime
        build_program(runtime(None).context, "__kernel void f(__global float *a) { a[0] = 1; }")
    except Exception as e:
        return str(e).splitlines()[0][:200]
    return None


_NO_BUILD = _device_builds()
needs_device = pytest.mark.skipif(bool(_NO_BUILD), reason=f"no OpenCL device: {_NO_BUILD}")

#: The shapes the GPU sweep times: outputs per thread (rows x cols), filter rows
#: per pass (fg < fh: several passes, the last one partial), block shapes.
VARIANTS = [
    {"rows": "1", "cols": "8"},
    {"rows": "2", "cols": "4", "fg": "2"},
    {"rows": "8", "cols": "4", "fg": "3"},
    {"rows": "4", "cols": "8", "fg": "5"},
    {"rows": "4", "cols": "4", "nrWarps": "4", "tcols": "16"},
]


#: hopper v3's shapes (its input read from global memory, no shared tile)
V3_VARIANTS = [
    {"rows": "2", "cols": "8"},
    {"rows": "8", "cols": "4", "nrWarps": "8"},
    {"rows": "4", "cols": "8", "tcols": "16"},
]


def _label(values: dict) -> str:
    return " ".join(f"{k}={x}" for k, x in values.items())


@needs_device
@pytest.mark.parametrize("version, values",
                         [("hopper_v2", v) for v in VARIANTS]
                         + [("hopper_v3", v) for v in V3_VARIANTS],
                         ids=lambda x: x if isinstance(x, str) else _label(x))
def test_variant_is_correct(tmp_path, version, values):
    text = cv.override((CONV / f"{version}.mcpl").read_text(), values, f"{version}.mcpl")
    path = tmp_path / f"{version}.mcpl"
    path.write_text(text)
    kern = mcpl_versions.compile_version(path, None)
    result = launch.verify_small_sizes(kern, mcpl_versions.reference_module("convolution"), version)
    assert result["failed"] == [] and result["checked"] == len(
        mcpl_versions.reference_module("convolution").SIZES)


def test_override_needs_exactly_one_declaration():
    src = (CONV / "hopper_v2.mcpl").read_text()
    assert "const int rows = 8;" in cv.override(src, {"rows": "8"}, "f")
    assert "const int fh = 5," in cv.override(src, {"fh": "5"}, "f")   # a parameter default
    with pytest.raises(cv.VariantError, match="0 declarations 'const int nope"):
        cv.override(src, {"nope": "1"}, "f")


def test_specs_expand_to_the_product(tmp_path):
    vs = cv.expand([f"{CONV / 'hopper_v2.mcpl'} rows=2,4 cols=4,8 -cl-nv-maxrregcount=128",
                    str(CONV / "hopper_v1.mcpl")], tmp_path)
    assert [v["name"] for v in vs] == [
        "hopper_v2 rows=2 cols=4 -cl-nv-maxrregcount=128",
        "hopper_v2 rows=2 cols=8 -cl-nv-maxrregcount=128",
        "hopper_v2 rows=4 cols=4 -cl-nv-maxrregcount=128",
        "hopper_v2 rows=4 cols=8 -cl-nv-maxrregcount=128", "hopper_v1"]
    assert "const int cols = 8;" in Path(vs[1]["mcpl"]).read_text()
    assert cv.merge_options(["-cl-nv-maxrregcount=255", "-DX=1"],
                            ["-cl-nv-maxrregcount=128"]) == ["-DX=1", "-cl-nv-maxrregcount=128"]
    with pytest.raises(cv.VariantError, match="neither NAME=VALUE"):
        cv.expand([f"{CONV / 'hopper_v2.mcpl'} rows"], tmp_path)


def test_without_an_nvidia_device_the_benchmark_exits_2(capsys):
    if cv.nvidia_device() is not None:
        pytest.skip("an NVIDIA device is present")
    assert cv.main([str(CONV / "hopper_v2.mcpl"), "--size", "64"]) == 2
    assert "no NVIDIA OpenCL device" in capsys.readouterr().err


@needs_device
def test_the_benchmark_runs_and_verifies_on_the_test_device(tmp_path, capsys):
    from mcl.opencl.device import describe, runtime
    spec = describe(runtime(None).queue.device).spec
    code = cv.main([str(CONV / "hopper_v1.mcpl"), f"{CONV / 'hopper_v2.mcpl'} rows=2 fg=4",
                    "--size", "70", "--filter", "5", "--repeats", "1", "--device", spec,
                    "--out", str(tmp_path)])
    assert code == 0
    res = json.loads((tmp_path / "conv_variants_70_70_5_5.json").read_text())
    rows = res["variants"]
    assert set(rows) == {"hopper_v1", "hopper_v2 rows=2 fg=4"}
    assert all(r["ok"] and r["best_ms"] > 0 and 0 < r["of_roofline"] for r in rows.values())
    assert res["best"] in rows and res["bound_ms"] > 0
    assert "of roofline" in capsys.readouterr().out
