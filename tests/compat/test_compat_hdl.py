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
