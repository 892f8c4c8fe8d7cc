"""Hardware descriptions written for earlier MCL releases (issue 17, items 1-3 and 11):
a file on the search path that is also checked by name, a user's own levels that
replace the library's, and requirements no analysis needs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mcl.diagnostics import Severity
from mcl.hdl import HardwareLibrary

BUNDLED = Path(__file__).resolve().parents[2] / "mcl" / "hwdescs"


def _gpu_text(blocks: int, threads: int, name: str = "gpu", parent: str = "accelerator") -> str:
    """The library's gpu description with other numbers of units (and another name)."""
    text = (BUNDLED / "gpu.hdl").read_text()
    text = text.replace("max_nr_units = 65535;", f"max_nr_units = {blocks};")
    text = text.replace("max_nr_units = 1024;", f"max_nr_units = {threads};")
    text = re.sub(r"hardware_description gpu;", f"hardware_description {name};", text)
    text = text.replace("specializes accelerator;", f"specializes {parent};")
    return text.replace("device gpu {", f"device {name} {{")


def _codes(diags, severity=None):
    return [d.code for d in diags if severity is None or d.severity == severity]


def test_a_file_on_the_search_path_checked_by_name_is_one_definition(tmp_path, run_cli):
    descs = tmp_path / "descs"
    descs.mkdir()
    (descs / "mygpu.hdl").write_text(_gpu_text(65535, 1024, "mygpu", "gpu"))
    lib = HardwareLibrary([descs], files=[descs / "mygpu.hdl"])
    assert "hdl-duplicate-description" not in _codes(lib.diagnostics("mygpu"))
    code, out, err = run_cli("hwd", "check", "--hwd-path", descs, descs / "mygpu.hdl")
    assert code == 0, out + err
    assert "defined twice" not in out + err


def test_two_files_with_one_name_are_still_reported(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    for d in (a, b):
        (d / "mygpu.hdl").write_text(_gpu_text(65535, 1024, "mygpu", "gpu"))
    lib = HardwareLibrary([a, b])
    assert "hdl-duplicate-description" in _codes(lib.diagnostics("mygpu"))


def test_a_users_levels_replace_the_librarys_with_a_note(tmp_path):
    descs = tmp_path / "descs"
    descs.mkdir()
    # The user's gpu has more blocks and threads than the library's; their child
    # splits them accordingly, which the library's gpu would not allow.
    (descs / "gpu.hdl").write_text(_gpu_text(131072, 2048))
    (descs / "mygpu.hdl").write_text(_gpu_text(131072, 2048, "mygpu", "gpu"))
    lib = HardwareLibrary([descs])
    assert lib.file("gpu") == str(descs / "gpu.hdl")
    notes = [d for d in lib.diagnostics("gpu") if d.code == "hdl-replaces-library"]
    assert len(notes) == 1 and notes[0].severity == Severity.INFO
    assert "replaces the library's 'gpu'" in notes[0].message
    assert notes[0].related and notes[0].related[0].span.file.endswith("hwdescs/gpu.hdl")
    assert _codes(lib.diagnostics("mygpu"), Severity.ERROR) == []
    # Against the library's gpu the same child does not refine its parent.
    alone = HardwareLibrary(files=[descs / "mygpu.hdl"])
    assert "hdl-child-hierarchy" in _codes(alone.diagnostics("mygpu"), Severity.ERROR)


def test_a_user_level_is_known_to_calls_between_levels(tmp_path):
    """A kernel for the user's child may call a function written for its parent:
    the check asks the library of the search path, not the bundled one."""
    from mcl.mcpl.resolve import check

    descs = tmp_path / "descs"
    descs.mkdir()
    (descs / "mygpu.hdl").write_text(_gpu_text(65535, 1024, "mygpu", "gpu"))
    src = tmp_path / "k.mcpl"
    src.write_text("""module k;
import gpu;
import mygpu;

gpu float twice(const float x) {
    return 2.0 * x;
}

mygpu void scale(const int n = 1024, dev float[n] a) {
    foreach (int b in n / 256 blocks) {
        foreach (int t in 256 threads) {
            a[b * 256 + t] = twice(a[b * 256 + t]);
        }
    }
}
""")
    checked = check(src, [descs])
    assert not checked.has_errors, checked.errors


LEGACY_PARTS = """
execution_group processors {
  nr_units = 8;
  execution_unit processor {
    slots(block, 1);
    slots(thread, 512);
    lsus;
    cache_l1;
  }
}

cache cache_l1 {
  space(dev);
  capacity = 16 kB;
}

load_store_group lsus {
  nr_units = 16;
  load_store_unit lsu {
  }
}

load_store_group empty_lsus {
  nr_units = 4;
}
"""


def _legacy_gpu() -> str:
    """A generic GPU in the style of the first releases: a device named after the
    product, a cache without line size, load/store units without instructions."""
    text = _gpu_text(65535, 1024)
    text = text.replace("device gpu {", "device geforce {")
    text = text.replace("  processors;\n}", "  processors;\n  legacy;\n}", 1)
    text += LEGACY_PARTS.replace("execution_group processors", "execution_group legacy")
    return text.replace("    lsus;\n    cache_l1;", "    lsus;\n    empty_lsus;\n    cache_l1;")


@pytest.fixture
def legacy_gpu(tmp_path) -> HardwareLibrary:
    descs = tmp_path / "descs"
    descs.mkdir()
    (descs / "gpu.hdl").write_text(_legacy_gpu())
    return HardwareLibrary([descs])


def test_requirements_no_analysis_needs_are_warnings(legacy_gpu):
    diags = legacy_gpu.diagnostics("gpu")
    assert _codes(diags, Severity.ERROR) == []
    warnings = {d.message: d for d in diags if d.severity == Severity.WARNING}
    wanted = ["cache 'cache_l1' has no cache_line_size",
              "load_store_unit 'lsu' has no instructions",
              "load_store_group 'empty_lsus' has no load_store_unit",
              "the device block of 'gpu' is named 'geforce'"]
    for w in wanted:
        assert w in warnings, sorted(warnings)
    # Each says what is lost (or what is assumed) in its hint.
    assert "cache analysis" in warnings[wanted[0]].hint
    assert "cost of its loads and stores" in warnings[wanted[1]].hint
    assert "taken as the device of 'gpu'" in warnings[wanted[3]].hint


def test_a_device_named_after_the_product_is_the_device(legacy_gpu):
    hwd = legacy_gpu.get("gpu")
    assert hwd.device is not None and hwd.device.name == "geforce"
    assert any(b.name == "mem" for b in hwd.device_blocks())


def test_two_devices_none_named_like_the_description_is_an_error(tmp_path):
    descs = tmp_path / "descs"
    descs.mkdir()
    text = _gpu_text(65535, 1024).replace("device gpu {", "device one {")
    text += "\ndevice two {\n  mem;\n}\n"
    (descs / "gpu.hdl").write_text(text)
    assert "hdl-missing-device" in _codes(HardwareLibrary([descs]).diagnostics("gpu"),
                                          Severity.ERROR)


# ---- item 11: the levels users of earlier releases target


def test_amd_and_intel_levels_are_in_the_hierarchy():
    lib = HardwareLibrary()
    assert lib.path("perfect", "hd7970") == ["perfect", "accelerator", "gpu", "amd", "hd7970"]
    assert lib.path("perfect", "xeon_e5_2630v3") == ["perfect", "cpu", "xeon_e5_2630v3"]
    assert {"hd7970", "xeon_e5_2630v3"} <= set(lib.leaves())
    for name in ("amd", "hd7970", "xeon_e5_2630v3"):
        assert lib.diagnostics(name) == [], name


def test_hd7970_figures():
    from mcl.hdl import load_hardware

    h = load_hardware("hd7970")
    assert [g.name for g in h.par_groups()] == ["blocks", "wavefronts", "threads"]
    assert h.par_group("threads").exact and h.par_group("threads").size == 64
    assert [g.name for g in h.lockstep_par_groups()] == ["threads"]
    assert h.peak_flops() == pytest.approx(2048 * 2 * 0.925e9)         # 3.79 TFLOP/s
    assert h.max_resident("thread") == 2560 * 32
    lds = h.memories_holding("local")[0]
    assert lds.capacity == 64 * 1024 and lds.nr_banks == 32
    assert {c.name: c.cache_line_size for c in h.caches_for("global")} == {"l2": 64, "l1": 64}
    assert h.read_only_spaces()[0].name == "constant"


def test_xeon_figures():
    from mcl.hdl import load_hardware

    x = load_hardware("xeon_e5_2630v3")
    assert x.peak_flops() == pytest.approx(8 * 2.4e9 * 16 * 2)          # 614 GFLOP/s
    assert {c.name: c.capacity for c in x.caches_for("main")} == {
        "l1": 32 * 1024, "l2": 256 * 1024, "l3": 20 * 1024 * 1024}


@pytest.mark.parametrize("leaf", ["hd7970", "xeon_e5_2630v3"])
def test_the_new_leaves_generate_opencl_that_runs(leaf, pocl):
    """Generated for the AMD GPU or the Xeon, run here on the CPU device (PoCL): the
    results must be right; timings would say nothing about those machines."""
    import numpy as np

    import mcl

    k = mcl.compile(str(BUNDLED.parents[1] / "examples" / "matmul" / "perfect.mcpl"),
                    target=leaf)
    rng = np.random.default_rng(3)
    a, b = rng.random((64, 32), np.float32), rng.random((32, 48), np.float32)
    assert np.allclose(k(n=64, m=48, p=32, a=a, b=b)["c"], a @ b, rtol=1e-4)


def test_the_cache_analysis_says_it_needs_a_line_size(tmp_path):
    """On a description whose cache has no cache_line_size (a warning there), the
    cache analysis says once which accesses it cannot judge and why."""
    import mcl

    corpus_hdl = Path(__file__).resolve().parent / "corpus" / "hdl"
    src = tmp_path / "k.mcl"
    src.write_text("""module k;
import tahiti;

tahiti void scale(const int n = 4096, global float[n] a) {
  foreach (int b in n / 256 blocks) {
    foreach (int t in 256 threads) {
      a[b * 256 + t] = 2.0 * a[b * 256 + t];
    }
  }
}
""")
    checked = mcl.check(str(src), [corpus_hdl])
    assert not checked.has_errors, checked.errors
    notes = [d for d in mcl.feedback(checked) if "not judged for the cache" in d.message]
    assert len(notes) == 1 and "cache_line_size of 'l1' in 'tahiti'" in notes[0].message
    assert notes[0].span.line == 7 and "cache_line_size = 64 B" in notes[0].hint
