"""`mcl versions` on odd input a new user may give: refines comments that go round in
a circle, a version that names itself as its parent."""

from __future__ import annotations

from pathlib import Path

from mcl.versions import discover
from tests.versions.conftest import EXAMPLES, copy_versions

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


def _with_another_kernel(tmp_path: Path) -> Path:
    """matmul's perfect, gpu, gpu_v1 and gpu_v2, and vadd.mcpl: vector_add at gpu (a
    number 0 of level gpu, like gpu.mcpl), which refines matmul's gpu.mcpl."""
    folder = copy_versions(tmp_path / "v", "matmul", ["perfect", "gpu", "gpu_v1", "gpu_v2"])
    (folder / "vadd.mcpl").write_text("// refines: gpu.mcpl\n"
                                      + (EXAMPLES / "vector_add" / "gpu_v1.mcpl").read_text())
    return folder


def test_a_version_of_another_kernel_is_no_node_of_the_tree(tmp_path):
    # vadd was left out with an error, yet it stayed in the tree: it refined matmul's
    # gpu (its refines comment) and, by level order, matmul's gpu_v1 refined vadd.
    folder = _with_another_kernel(tmp_path)
    vs = discover.from_folder(folder)
    vadd = vs.get("vadd")
    assert [p.code for p in vadd.problems] == ["versions-other-kernel"]
    assert vadd.parent is None and vadd.why_parent == ""
    assert not any(v.parent == "vadd" for v in vs.versions)
    parents = {v.name: v.parent for v in vs.versions}
    assert parents == {"perfect": None, "gpu": "perfect", "gpu_v1": "gpu",
                       "gpu_v2": "gpu_v1", "vadd": None}
    # after the tree of the kernel, not among its roots
    assert [v.name for v in vs.versions] == ["perfect", "gpu", "gpu_v1", "gpu_v2", "vadd"]


def test_a_refines_comment_naming_another_kernels_version_is_told_so(tmp_path):
    folder = _with_another_kernel(tmp_path)
    _refines(folder, "gpu_v2", "vadd")
    vs = discover.from_folder(folder)
    v2 = vs.get("gpu_v2")
    (p,) = v2.problems
    assert p.code == "versions-unknown-parent" and not p.is_error and p.span.line == 1
    assert "another kernel" in p.message and "vector_add" in p.message
    assert (v2.parent, v2.why_parent) == ("gpu_v1", "level order")


def test_the_tree_shows_another_kernels_version_apart_with_a_note(tmp_path):
    from mcl.versions.api import Result
    from mcl.versions.report import _tree_lines

    vs = discover.from_folder(_with_another_kernel(tmp_path))
    lines = _tree_lines(Result(vs))
    assert [(depth, name) for depth, name, _ in lines] == [
        (0, "perfect"), (1, "gpu"), (2, "gpu_v1"), (3, "gpu_v2"), (0, "vadd")]
    assert "another kernel" in lines[-1][2] and "vector_add" in lines[-1][2]


def test_the_json_says_why_each_version_is_not_usable(tmp_path):
    # vadd was "parent": null, "usable": false in the JSON and nothing said why (another
    # kernel); nor for a version that does not check, is not UTF-8 or holds no kernel
    from mcl.versions.api import Result

    folder = _with_another_kernel(tmp_path)
    (folder / "broken.mcpl").write_text("module broken;\nperfect void f(\n")
    (folder / "latin1.mcpl").write_bytes(b"// caf\xe9\nmodule latin1;\n")
    (folder / "nokernel.mcpl").write_text("module nokernel;\nimport perfect;\n"
                                          "perfect void f(const int n) {\n}\n")
    data = Result(discover.from_folder(folder)).to_json()
    why = {v["name"]: (v["usable"], v["why_unusable"], v["other_kernel"])
           for v in data["versions"]}
    assert why == {"perfect": (True, "", None), "gpu": (True, "", None),
                   "gpu_v1": (True, "", None), "gpu_v2": (True, "", None),
                   "vadd": (False, "another kernel", "vector_add"),
                   "broken": (False, "errors", None), "latin1": (False, "unreadable", None),
                   "nokernel": (False, "no kernel", None)}
    vadd = next(v for v in data["versions"] if v["name"] == "vadd")
    assert vadd["parent"] is None and vadd["why_parent"] == ""


def test_why_unusable_names_the_errors_of_the_verification(tmp_path):
    # the verification adds an error to a version it cannot run: no leaf below its
    # level, or OpenCL that cannot be generated; the version is then not usable
    from mcl.diagnostics import error, warning

    vs = discover.from_folder(copy_versions(tmp_path / "v", "vector_add", ["perfect", "gpu_v1"]))
    perfect, gpu_v1 = vs.get("perfect"), vs.get("gpu_v1")
    perfect.problems.append(error("versions-no-leaf", "no leaf"))
    gpu_v1.problems.append(error("opencl-unsupported", "cannot be generated"))
    assert (perfect.usable, perfect.why_unusable) == (False, "no leaf")
    assert (gpu_v1.usable, gpu_v1.why_unusable) == (False, "compile error")
    # a warning leaves it usable, with no reason
    gpu_v1.problems.pop()
    gpu_v1.problems.append(warning("versions-unknown-parent", "only a warning"))
    assert (gpu_v1.usable, gpu_v1.why_unusable) == (True, "")
