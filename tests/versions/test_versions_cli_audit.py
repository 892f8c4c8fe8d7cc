"""`mcl versions` on odd input a new user may give: refines comments that go round in
a circle, a version that names itself as its parent."""

from __future__ import annotations

from pathlib import Path

from mcl.versions import discover
from tests.versions.conftest import copy_versions

NAMES = ["perfect", "gpu_v1", "nvidia_v1", "hopper_v1"]


def _refines(folder: Path, version: str, parent: str) -> None:
    f = folder / f"{version}.mcpl"
    f.write_text(f"// refines: {parent}.mcpl\n" + f.read_text())


def test_a_cycle_of_refines_comments_is_an_error_and_the_tree_stays_a_tree(tmp_path):
    folder = copy_versions(tmp_path / "v", "vector_add", NAMES)
    _refines(folder, "perfect", "nvidia_v1")   # perfect -> nvidia_v1 -> gpu_v1 -> perfect
    vs = discover.from_folder(folder)
    cycles = [p for p in vs.problems if p.code == "versions-refines-cycle"]
    assert len(cycles) == 1 and cycles[0].is_error
    assert cycles[0].span.file == str(folder / "perfect.mcpl") and cycles[0].span.line == 1
    assert "perfect -> nvidia_v1 -> gpu_v1 -> perfect" in cycles[0].message
    # the versions are still run: the error is the set's, not theirs
    assert all(v.usable for v in vs.versions)
    parents = {v.name: v.parent for v in vs.versions}
    assert parents == {"perfect": None, "gpu_v1": "perfect", "nvidia_v1": "gpu_v1",
                       "hopper_v1": "nvidia_v1"}


def test_two_cycles_are_each_broken(tmp_path):
    folder = copy_versions(tmp_path / "v", "vector_add", NAMES)
    _refines(folder, "perfect", "nvidia_v1")
    _refines(folder, "gpu_v1", "hopper_v1")    # gpu_v1 -> hopper_v1 -> nvidia_v1 -> gpu_v1
    vs = discover.from_folder(folder)
    assert len([p for p in vs.problems if p.code == "versions-refines-cycle"]) == 2
    roots = [v.name for v in vs.versions if v.parent is None]
    assert roots == ["perfect"]
    assert [v.name for v in vs.versions] == NAMES


def test_the_command_exits_1_on_a_cycle_and_prints_a_flat_tree(tmp_path, run_cli):
    folder = copy_versions(tmp_path / "v", "vector_add", NAMES)
    _refines(folder, "perfect", "nvidia_v1")
    code, out, err = run_cli("versions", "-q", "--sizes", "n=37", "--no-time", folder)
    text = out + err
    assert "Traceback" not in text
    assert code == 1
    assert f"{folder / 'perfect.mcpl'}:1:1: error: the refines comments go round" in text
    assert "\n      hopper_v1:" in out and "\n        " not in out


def test_a_version_that_refines_itself_is_told_so(tmp_path):
    folder = copy_versions(tmp_path / "v", "vector_add", NAMES)
    _refines(folder, "gpu_v1", "gpu_v1")
    vs = discover.from_folder(folder)
    (p,) = [p for p in vs.all_problems if p.code == "versions-unknown-parent"]
    assert "names this version itself" in p.message
    assert "gpu_v1.mcpl" not in (p.hint or "")
    assert vs.get("gpu_v1").parent == "perfect"
