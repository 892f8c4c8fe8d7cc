"""The refinement tree from a folder (levels and file names), from `// refines:`
comments and from a file's git history; bad folders give located messages."""

from __future__ import annotations

import os
import subprocess

import pytest

from mcl.versions import discover
from tests.versions.conftest import EXAMPLES, copy_versions


def test_matmul_tree_follows_levels_and_numbers():
    vs = discover.from_folder(EXAMPLES / "matmul")
    parent = {v.name: v.parent for v in vs.versions}
    assert vs.kernel == "matmul"
    assert parent["perfect"] is None
    assert parent["gpu"] == "accelerator"
    assert parent["gpu_v2"] == "gpu_v1"
    assert parent["nvidia"] == "gpu_v3"          # the last version of the level above
    assert parent["hopper"] == "nvidia_v1"
    assert parent["fermi"] == "nvidia_v1"
    assert parent["mic"] == "accelerator"
    assert parent["xeon_phi"] == "mic_v2"
    order = [v.name for v in vs.versions]
    assert order.index("gpu_v3") < order.index("nvidia") < order.index("hopper_v6")
    assert not vs.all_problems


def test_refines_comment_names_the_parent(tmp_path):
    d = copy_versions(tmp_path / "v", "matmul", ["perfect", "gpu", "gpu_v1", "gpu_v2"])
    text = (d / "gpu_v2.mcpl").read_text()
    (d / "gpu_v2.mcpl").write_text("// refines: gpu.mcpl\n" + text)
    v1_text = (d / "gpu_v1.mcpl").read_text()
    (d / "gpu_v1.mcpl").write_text("// refines: nothing_v9.mcpl\n" + v1_text)
    vs = discover.from_folder(d)
    v2, v1 = vs.get("gpu_v2"), vs.get("gpu_v1")
    assert (v2.parent, v2.why_parent) == ("gpu", "refines comment")
    [p] = v1.problems
    assert p.code == "versions-unknown-parent" and p.span.line == 1 and p.span.column == 1
    assert v1.parent == "gpu"                    # falls back to the level order


def _git(cwd, *args):
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"}
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env=env)


def test_git_history_of_three_versions_in_order(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    kernel = repo / "matmul.mcpl"
    for i, name in enumerate(["gpu", "gpu_v1", "gpu_v2"]):
        kernel.write_text((EXAMPLES / "matmul" / f"{name}.mcpl").read_text())
        _git(repo, "add", "matmul.mcpl")
        _git(repo, "commit", "-q", "-m", f"step {i}: {name}")
    vs = discover.from_path(kernel)
    assert [v.commit["subject"] for v in vs.versions] == \
        ["step 0: gpu", "step 1: gpu_v1", "step 2: gpu_v2"]
    assert [v.text for v in vs.versions] == \
        [(EXAMPLES / "matmul" / f"{n}.mcpl").read_text() for n in ["gpu", "gpu_v1", "gpu_v2"]]
    names = [v.name for v in vs.versions]
    assert all(n.startswith("matmul@") for n in names)
    assert [v.parent for v in vs.versions] == [None, names[0], names[1]]
    assert all(v.usable for v in vs.versions)
    # an uncommitted edit is the newest version
    kernel.write_text(kernel.read_text() + "\n// tweak\n")
    vs = discover.from_path(kernel)
    assert [v.name for v in vs.versions][-1] == "matmul@working-copy"
    assert len(vs.versions) == 4


def test_a_commit_of_another_kernel_is_no_step_of_the_history(tmp_path):
    # the commit that held vector_add was left out, yet the next commit refined it
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    kernel = repo / "matmul.mcpl"
    steps = [("matmul", "gpu"), ("vector_add", "gpu_v1"), ("matmul", "gpu_v1"),
             ("matmul", "gpu_v2")]
    for i, (folder, name) in enumerate(steps):
        kernel.write_text((EXAMPLES / folder / f"{name}.mcpl").read_text())
        _git(repo, "add", "matmul.mcpl")
        _git(repo, "commit", "-q", "-m", f"step {i}")
    vs = discover.from_path(kernel)
    assert vs.kernel == "matmul" and len(vs.versions) == 4
    other = vs.versions[-1]     # listed after the tree
    assert other.commit["subject"] == "step 1" and other.other_kernel == "vector_add"
    assert [p.code for p in other.problems] == ["versions-other-kernel"]
    assert other.parent is None
    kept = vs.versions[:3]
    assert [v.commit["subject"] for v in kept] == ["step 0", "step 2", "step 3"]
    assert [v.parent for v in kept] == [None, kept[0].name, kept[1].name]


def test_folder_without_mcpl_file(tmp_path):
    (tmp_path / "notes.txt").write_text("no kernel here")
    vs = discover.from_folder(tmp_path)
    [p] = vs.problems
    # a folder has no line to point at: the message names it
    assert p.code == "versions-no-mcpl-file" and p.is_error and p.span is None
    assert p.message.startswith(f"{tmp_path}: ")


def test_mixed_kernels_are_left_out_with_a_located_message(tmp_path):
    d = copy_versions(tmp_path / "v", "matmul", ["perfect", "gpu", "gpu_v1"])
    (d / "vadd.mcpl").write_text((EXAMPLES / "vector_add" / "gpu_v1.mcpl").read_text())
    vs = discover.from_folder(d)
    assert vs.kernel == "matmul"
    other = vs.get("vadd")
    [p] = other.problems
    assert p.code == "versions-other-kernel" and "vector_add" in p.message
    assert p.span.file.endswith("vadd.mcpl") and p.span.line > 1
    assert not other.usable and all(vs.get(n).usable for n in ["perfect", "gpu", "gpu_v1"])


@pytest.mark.parametrize("kernel", ["reduction", "convolution"])
def test_every_example_folder_has_one_root(kernel):
    vs = discover.from_folder(EXAMPLES / kernel)
    assert [v.name for v in vs.versions if v.parent is None] == ["perfect"]


def test_command_on_a_folder_without_mcpl_file(tmp_path):
    import sys

    from tests.versions.conftest import ROOT
    (tmp_path / "empty").mkdir()
    out = subprocess.run([sys.executable, "-m", "mcl.cli", "versions", str(tmp_path / "empty"),
                          "-q", "--report", str(tmp_path / "out")], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert f"error: {tmp_path / 'empty'}: the folder holds no MCPL file" in out.stderr
    assert ":1:1" not in out.stderr and "versions of 'None'" not in out.stderr
    md = (tmp_path / "out" / "report.md").read_text()
    assert "holds no MCPL file" in md and "No versions found" in md


def test_a_file_that_is_not_utf8_is_a_version_with_its_problem(tmp_path):
    """One unreadable file among the versions is reported as check reports it, not a
    crash of the whole set (nor of the feedback of a sibling, which compares with it)."""
    d = copy_versions(tmp_path / "v", "vector_add", ["perfect", "gpu_v1"])
    (d / "other.mcpl").write_bytes(b"\xff\xfe")
    vs = discover.from_folder(d)
    [p] = vs.get("other").problems
    assert p.code == "mcpl-encoding" and p.span.file.endswith("other.mcpl")
    assert not vs.get("other").usable and vs.get("gpu_v1").usable


def test_feedback_beside_a_file_that_is_not_utf8(tmp_path, run_cli):
    d = copy_versions(tmp_path / "v", "vector_add", ["perfect", "gpu_v1"])
    (d / "other.mcpl").write_bytes(b"\xff\xfe")
    code, out, err = run_cli("feedback", d / "gpu_v1.mcpl")
    assert code == 0, err
    assert "feedback-" in out


def test_report_into_a_file_is_refused_before_the_work(tmp_path, run_cli):
    (tmp_path / "f").write_text("")
    code, _, err = run_cli("versions", EXAMPLES / "vector_add", "--report", tmp_path / "f")
    assert code == 2 and f"mcl versions: error: cannot write to '{tmp_path / 'f'}': it is a " \
        "file (--report names the folder" in err


def test_a_file_that_is_not_mcpl_is_refused_not_read_as_mcpl(tmp_path, run_cli):
    """reference.py given as the version was read as MCPL (a syntax error at every line,
    '1 version of `None`'); a text file not in git stood for its whole folder."""
    d = copy_versions(tmp_path / "v", "vector_add", ["perfect", "gpu_v1"])
    (d / "notes.txt").write_text("notes\n")
    for f in (EXAMPLES / "vector_add" / "reference.py", d / "notes.txt"):
        code, out, err = run_cli("versions", f, "-q")
        assert code == 1 and f"error: {f}: not an MCPL file (.mcpl) [versions-not-mcpl]" in err
        assert "mcpl-syntax" not in err and "None" not in out + err
    # among several files too
    code, _, err = run_cli("versions", d / "gpu_v1.mcpl", d / "reference.py", "-q")
    assert code == 1 and f"{d / 'reference.py'}: not an MCPL file" in err
    assert "mcpl-syntax" not in err


def test_a_folder_among_several_paths_is_not_said_to_be_missing(tmp_path, run_cli):
    """It was 'no such file'."""
    d = copy_versions(tmp_path / "v", "vector_add", ["perfect", "gpu_v1"])
    code, _, err = run_cli("versions", d, d / "gpu_v1.mcpl", "-q")
    assert code == 1 and "no such file" not in err
    assert f"error: {d}: a folder among 2 paths [versions-folder-among-files]" in err


def test_a_version_set_without_a_kernel_is_not_of_none(tmp_path, run_cli):
    d = tmp_path / "v"
    d.mkdir()
    (d / "only.mcpl").write_text("int f() { return 1 }\n")
    code, out, err = run_cli("versions", d, "-q", "--report", tmp_path / "out")
    assert code == 1 and "None" not in out
    assert out.startswith("1 version and no kernel among them;")
    assert "None" not in (tmp_path / "out" / "report.md").read_text()
    assert "None" not in (tmp_path / "out" / "index.html").read_text()


def test_a_folder_or_a_dangling_link_named_mcpl_is_left_out_with_a_message(tmp_path, run_cli):
    """Either made the whole command fail with 'old.mcpl: no such file' and 'give
    existing .mcpl files', though no file was given."""
    d = copy_versions(tmp_path / "v", "vector_add", ["perfect", "gpu_v1"])
    (d / "old.mcpl").mkdir()
    vs = discover.from_folder(d)
    [p] = vs.problems
    assert p.code == "versions-not-a-file" and not p.is_error
    assert p.message == f"{d / 'old.mcpl'}: a folder, not a version: left out"
    assert [v.name for v in vs.versions] == ["perfect", "gpu_v1"]
    (d / "gone.mcpl").symlink_to(tmp_path / "nothing")
    code, out, err = run_cli("versions", d, "-q", "--no-time", "--sizes", "n=37")
    assert code == 1 and "no such file" not in err
    assert f"error: {d / 'gone.mcpl'}: not a readable file (a link to nothing?), not a " \
        "version: left out [versions-not-a-file]" in err
    assert "2 versions of `vector_add`" in out and "gpu_v1: level gpu" in out


def test_a_git_history_with_a_version_that_is_not_utf8(tmp_path):
    """A committed version or a working copy that is not UTF-8 was mcl's traceback
    (UnicodeDecodeError); each is now a version with its problem."""
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    kernel = repo / "vadd.mcpl"
    kernel.write_text((EXAMPLES / "vector_add" / "gpu_v1.mcpl").read_text())
    _git(repo, "add", "vadd.mcpl")
    _git(repo, "commit", "-q", "-m", "good")
    kernel.write_bytes(b"\xff\xfe")
    vs = discover.from_path(kernel)         # the working copy
    good, bad = vs.versions
    assert good.usable and bad.name == "vadd@working-copy"
    [p] = bad.problems
    assert p.code == "mcpl-encoding" and p.span.file == str(kernel)
    _git(repo, "commit", "-q", "-am", "not utf-8")
    vs = discover.from_path(kernel)         # a commit (the same working copy: no third)
    good, bad = vs.versions
    assert good.usable and bad.commit["subject"] == "not utf-8"
    [p] = bad.problems
    assert p.code == "mcpl-encoding" and p.message.endswith("(byte 0xff)")
    assert p.span.file.startswith(f"{kernel.resolve()}@")
