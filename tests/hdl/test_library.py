"""The bundled library: every description validates, the hierarchy, and the figures
analyses rely on."""

from __future__ import annotations

import pytest

from mcl.diagnostics import McplError
from mcl.hdl import UNLIMITED, HardwareLibrary, load_hardware
from mcl.hdl.units import COUNTABLE

LIB = HardwareLibrary()
NAMES = ["perfect", "accelerator", "gpu", "nvidia", "fermi", "hopper", "mic", "xeon_phi"]


@pytest.mark.parametrize("name", LIB.names())
def test_every_bundled_description_is_clean(name):
    assert LIB.diagnostics(name) == []


def test_library_has_the_paper_levels_and_hopper():
    assert set(NAMES) <= set(LIB.names())
    assert LIB.names()[0] == "perfect"


def test_hierarchy_queries():
    assert LIB.parent("fermi") == "nvidia"
    assert LIB.parent("perfect") is None
    assert LIB.children("nvidia") == ["fermi", "hopper"]
    assert LIB.ancestors("fermi") == ["nvidia", "gpu", "accelerator", "perfect"]
    assert LIB.path("perfect", "fermi") == ["perfect", "accelerator", "gpu", "nvidia", "fermi"]
    assert LIB.path("gpu", "gpu") == ["gpu"]
    assert LIB.is_descendant("xeon_phi", "accelerator")
    assert not LIB.is_descendant("accelerator", "xeon_phi")
    assert {"fermi", "h200", "xeon_phi"} <= set(LIB.leaves())
    # the H200 refines the H100's level (the same chip, its own memory); hopper keeps
    # its target file, as cpu does above xeon_e5_2630v3
    assert LIB.children("hopper") == ["h200"] and "hopper" not in LIB.leaves()
    assert "nvidia" not in LIB.leaves()


def test_path_to_a_level_that_is_not_below_is_an_error():
    with pytest.raises(McplError) as e:
        LIB.path("mic", "fermi")
    assert e.value.diagnostics[0].code == "hdl-no-path"


def test_unknown_name_suggests():
    with pytest.raises(McplError) as e:
        LIB.get("fermy")
    d = e.value.diagnostics[0]
    assert d.code == "hdl-unknown-description" and "fermi" in d.hint


def test_load_hardware_is_cached():
    assert load_hardware("gpu") is load_hardware("gpu")


def test_perfect_figures():
    p = load_hardware("perfect")
    assert [g.name for g in p.par_groups()] == ["threads"]
    assert p.par_group("threads").size is UNLIMITED
    assert p.executing_unit().name == "thread"
    assert p.default_memory_space().name == "main"
    assert p.default_memory_space(["threads"]).name == "reg"
    assert p.owner_of("main") is None
    assert p.owner_of("reg").name == "thread"
    assert p.memory_latency("main") == 1
    assert p.memory_bandwidth("main") is None      # unlimited
    assert p.peak_flops() is None                  # unlimited cores


def test_references_hold_the_real_block():
    perfect, acc, gpu = (load_hardware(n) for n in ("perfect", "accelerator", "gpu"))
    assert acc.par_group("threads") is perfect.par_group("threads")
    assert gpu.par_group("threads").unit is perfect.par_group("threads").unit
    assert gpu.par_group("threads").size == 1024


def test_gpu_spaces_and_speed():
    gpu = load_hardware("gpu")
    assert [g.name for g in gpu.par_groups()] == ["blocks", "threads"]
    assert gpu.owner_of("local").name == "block"
    assert [m.name for m in gpu.visible_memory_spaces([])] == ["dev"]
    assert [m.name for m in gpu.visible_memory_spaces(["blocks"])] == ["dev", "local"]
    assert [m.name for m in gpu.visible_memory_spaces(["blocks", "threads"])] == \
        ["dev", "local", "reg"]
    assert gpu.is_faster("local", "dev")
    assert not gpu.is_faster("dev", "local")
    assert gpu.spaces_by_speed()[0] == "reg"
    assert [m.name for m in gpu.memories_holding("local")] == ["on_chip"]
    assert gpu.resolve_property("gpu.hierarchy.blocks.block.threads.max_nr_units") == 1024
    assert gpu.resolve_property("hierarchy.blocks.max_nr_units") == 65535
    with pytest.raises(McplError):
        gpu.resolve_property("gpu.hierarchy.blocks.nothing")


def test_fermi_figures():
    f = load_hardware("fermi")
    assert [g.name for g in f.par_groups()] == ["blocks", "warps", "threads"]
    assert f.par_group("threads").exact and f.par_group("threads").size == 32
    assert [g.name for g in f.lockstep_par_groups()] == ["threads"]
    assert {c.name: c.cache_line_size for c in f.caches_for("global")} == {"l2": 128, "l1": 128}
    assert f.cache_line_size("l1") == 128
    slots = {s.holder.name: s for s in f.slots("block")}
    assert slots["smp"].per_holder == 8 and slots["smp"].total == 8 * 15
    assert f.max_resident("thread") == 1536 * 15
    on_chip = f.memories_holding("shared")[0]
    assert on_chip.capacity == 48 * 1024 and on_chip.nr_banks == 32
    assert f.memories_holding("reg")[0].capacity == 32768 * 4
    assert f.memory_bandwidth("global") == 177e9
    assert f.peak_flops() == pytest.approx(1344e9)
    assert f.read_only_spaces()[0].name == "constant"
    assert "shMem" in f.feedback_functions()
    assert f.is_faster("shared", "global")


def test_hopper_matches_hardware_md():
    h = load_hardware("hopper")
    assert LIB.parent("hopper") == "nvidia"
    assert [g.name for g in h.par_groups()] == ["blocks", "warps", "threads"]
    assert h.peak_flops() == pytest.approx(66.9e12, rel=1e-3)
    assert h.memory_bandwidth("global") == pytest.approx(3.35e12)
    assert {s.holder.name: s.per_holder for s in h.slots("warp")}["smp"] == 64
    assert h.max_resident("block") == 32 * 132
    # 64 k registers per SM: four partitions of 16 k, allocated per warp in units of 256
    regs = h.memories_holding("reg")[0]
    assert regs.capacity == 16384 * 4 and regs.allocation_unit == 256 * 4
    from mcl.analyses.resources import register_file_bytes
    assert register_file_bytes(h) == 65536 * 4
    assert h.cache_line_size("l2") == 128
    assert h.clock_frequency() == pytest.approx(1.98e9)


def test_xeon_phi_caches_and_vectors():
    x = load_hardware("xeon_phi")
    assert [g.name for g in x.par_groups()] == ["threads", "vectors"]
    assert [g.name for g in x.lockstep_par_groups()] == ["vectors"]
    assert {c.name: (c.capacity, c.cache_line_size) for c in x.caches_for("dev")} == \
        {"l1": (32 * 1024, 64), "l2": (512 * 1024, 64)}
    assert x.peak_flops() == pytest.approx(2.02e12, rel=1e-2)
    assert x.memory_bandwidth("dev") == 320e9


def test_cpu_level_has_countable_cores():
    c = load_hardware("cpu")
    assert c.max_resident("vector") is COUNTABLE
    assert c.peak_flops() is None


def test_user_directory_specialises_a_library_level(tmp_path):
    (tmp_path / "tiny.hdl").write_text(
        (LIB.file("gpu") and open(LIB.file("gpu")).read())
        .replace("hardware_description gpu;", "hardware_description tiny;")
        .replace("specializes accelerator;", "specializes gpu;")
        .replace("device gpu {", "device tiny {"))
    lib = HardwareLibrary([tmp_path])
    assert lib.parent("tiny") == "gpu" and "tiny" in lib.children("gpu")
    assert lib.diagnostics("tiny") == []
    assert lib.path("perfect", "tiny")[-2:] == ["gpu", "tiny"]


def test_missing_search_directory_is_a_diagnostic(tmp_path):
    lib = HardwareLibrary([tmp_path / "nope"])
    assert [d.code for d in lib.load_diagnostics] == ["hdl-path"]


def _broken_gpu(directory) -> str:
    """A user's gpu.hdl in ``directory`` with a missing ';' (it replaces the library's)."""
    path = directory / "gpu.hdl"
    path.write_text(open(LIB.file("gpu")).read()
                    .replace("max_nr_units = 1024;", "max_nr_units = 1024", 1))
    return str(path)


def test_a_user_description_that_does_not_parse_stays_in_the_hierarchy(tmp_path):
    path = _broken_gpu(tmp_path)
    lib = HardwareLibrary([tmp_path])
    assert "gpu" in lib and lib.is_broken("gpu") and not lib.is_bundled("gpu")
    assert lib.file("gpu") == path and lib.parent("gpu") == "accelerator"
    assert "gpu" in lib.children("accelerator") and lib.children("gpu") == ["amd", "nvidia"]
    assert lib.ancestors("fermi") == ["nvidia", "gpu", "accelerator", "perfect"]
    assert lib.roots() == ["perfect"]
    assert [d.code for d in lib.diagnostics("gpu")] == ["hdl-syntax"]
    assert lib.diagnostics("gpu")[0].span.file == path
    with pytest.raises(McplError) as e:
        lib.get("gpu")
    assert [d.code for d in e.value.diagnostics] == ["hdl-syntax"]


def test_descriptions_below_a_broken_one_say_so(tmp_path):
    path = _broken_gpu(tmp_path)
    lib = HardwareLibrary([tmp_path])
    for name in ("nvidia", "amd"):
        diags = lib.diagnostics(name)
        # not 'gpu is not a known hardware description' nor 'unresolved reference gpu....'
        assert {d.code for d in diags} == {"hdl-broken-dependency"}, diags
        assert all(r.span.file == path for d in diags for r in d.related)
    assert lib.diagnostics("fermi") == []
    assert lib.all_diagnostics().count(lib.diagnostics("gpu")[0]) == 1


def test_a_broken_perfect_on_the_path_keeps_the_library_one(tmp_path):
    (tmp_path / "perfect.hdl").write_text("hardware_description perfect;\nparallelism {\n")
    lib = HardwareLibrary([tmp_path])
    assert not lib.is_broken("perfect") and lib.file("perfect").endswith("perfect.hdl")
    assert "hdl-syntax" in [d.code for d in lib.diagnostics("perfect")]
    assert lib.get("gpu").name == "gpu"


# ---------------------------------------------------------------- descriptions beside a kernel

def _beside(folder, name: str, text_of: str = "cpu", declared: str | None = None):
    """``name.hdl`` in ``folder``: the library's ``text_of`` renamed ``declared``."""
    from mcl.hdl.library import BUNDLED
    declared = declared or name
    text = (BUNDLED / f"{text_of}.hdl").read_text()
    text = text.replace(f"hardware_description {text_of};", f"hardware_description {declared};")
    text = text.replace(f"device {text_of} {{", f"device {declared} {{")
    (folder / f"{name}.hdl").write_text(text)
    return folder / f"{name}.hdl"


def test_descriptions_beside_a_kernel_add_only_levels_found_nowhere_else(tmp_path):
    """After the search path, each NAME.hdl beside the kernel that declares NAME and that
    neither the library nor the path has; a copy of a library level is left out (it would
    replace the library's), and so is a file that declares another name."""
    from mcl.hdl.library import hardware_library, with_descriptions_beside
    mine = _beside(tmp_path, "mycpu")
    _beside(tmp_path, "cpu")                              # the library has cpu
    _beside(tmp_path, "named", declared="othername")     # not what `import named;` means
    kernel = tmp_path / "k.mcpl"
    assert with_descriptions_beside(["dir"], [kernel]) == ["dir", str(mine)]
    assert with_descriptions_beside([], [tmp_path]) == [str(mine)]   # a folder of versions
    lib = hardware_library(with_descriptions_beside([], [kernel]))
    assert "mycpu" in lib and lib.parent("mycpu") == "perfect"
    assert lib.is_bundled("cpu") and "othername" not in lib
    assert lib.diagnostics("mycpu") == []
    # with the folder on the search path, its files are the path's (and cpu replaces the
    # library's, as --hwd-path does): nothing is added twice
    assert with_descriptions_beside([str(tmp_path)], [kernel]) == [str(tmp_path)]


def test_a_broken_description_beside_a_kernel_is_added_so_that_its_import_says_why(tmp_path):
    from mcl.hdl.library import hardware_library, with_descriptions_beside
    broken = tmp_path / "mine.hdl"
    broken.write_text("hardware_description mine;\nspecializes perfect;\nparallelism {")
    path = with_descriptions_beside([], [tmp_path / "k.mcpl"])
    assert path == [str(broken)]
    lib = hardware_library(path)
    assert "mine" in lib and lib.is_broken("mine")


def test_no_description_beside_a_kernel_leaves_the_search_path_as_it_is(tmp_path):
    from mcl.hdl.library import with_descriptions_beside
    assert with_descriptions_beside(["a", "b"], [tmp_path / "k.mcpl"]) == ["a", "b"]
    assert with_descriptions_beside([], [tmp_path / "missing" / "k.mcpl"]) == []
