"""``mcl hwd list / show / check``: output, exit codes, and bad input."""

from __future__ import annotations

import json

from tests.hdl.test_validate import VALID


def test_list_prints_the_tree(run_cli):
    code, out, err = run_cli("hwd", "list")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "perfect"
    assert any("fermi" in ln and "leaf" in ln for ln in lines)
    assert out.index("nvidia") < out.index("fermi")


def test_list_json(run_cli):
    code, out, _ = run_cli("hwd", "list", "--json")
    data = {d["name"]: d for d in json.loads(out)}
    assert code == 0 and data["hopper"]["parent"] == "nvidia" and not data["hopper"]["leaf"]
    # the H200 refines the H100's level: the same chip, its own memory
    assert data["h200"]["parent"] == "hopper" and data["h200"]["leaf"]


def test_show_fermi(run_cli):
    code, out, err = run_cli("hwd", "show", "fermi")
    assert code == 0, err
    assert "par_group warps: up to 32 units" in out
    assert "par_group threads: exactly 32 units" in out
    assert "slots for block: 8 per smp" in out
    assert "peak: 1.34 TFLOP/s" in out
    assert "lines of 128 B" in out


def test_show_json(run_cli):
    code, out, _ = run_cli("hwd", "show", "hopper", "--json")
    data = json.loads(out)
    assert code == 0 and data["executing_unit"] == "thread"
    assert [g["name"] for g in data["par_groups"]] == ["blocks", "warps", "threads"]


def test_show_unknown_name(run_cli):
    code, out, err = run_cli("hwd", "show", "fermy")
    assert code == 1
    assert "unknown hardware description 'fermy'" in err and "Traceback" not in err


def test_check_valid_and_invalid_files(run_cli, tmp_path):
    good = tmp_path / "user.hdl"
    good.write_text(VALID)
    code, out, err = run_cli("hwd", "check", good)
    assert code == 0, out + err
    bad = tmp_path / "bad.hdl"
    bad.write_text(VALID.replace("hardware_description user;", "hardware_description bad;")
                   .replace("device user {", "device bad {")
                   .replace("space(near);", "space(nearby);"))
    code, out, err = run_cli("hwd", "check", bad)
    assert code == 1
    assert f"{bad}:55:9: error: 'nearby' is not a memory space of 'bad'" in out
    assert "^~~~~~" in out and "help:" in out


def test_check_json(run_cli, tmp_path):
    bad = tmp_path / "user.hdl"
    bad.write_text(VALID.replace("capacity = 2 GB;", "capacity = 2 parsecs;"))
    code, out, _ = run_cli("hwd", "check", "--json", bad)
    data = json.loads(out)
    assert code == 1 and data[0]["code"] == "hdl-unknown-unit"
    assert data[0]["range"]["start"]["line"] == 33 - 5


def test_check_missing_file(run_cli, tmp_path):
    code, out, err = run_cli("hwd", "check", tmp_path / "nope.hdl")
    assert code == 1 and "no such file" in out and "Traceback" not in out + err


def test_check_syntax_error(run_cli, tmp_path):
    f = tmp_path / "user.hdl"
    f.write_text("hardware_description user;\nparallelism hierarchy {\n  memory_space x {\n")
    code, out, _ = run_cli("hwd", "check", f)
    # at the end of the last line, which the excerpt shows (not on the line after it)
    assert code == 1 and "hdl-syntax" in out and f"{f}:3:19" in out


def test_check_user_file_specialising_a_user_level(run_cli, tmp_path):
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "user.hdl").write_text(VALID)
    child = tmp_path / "child.hdl"
    child.write_text(VALID.replace("hardware_description user;", "hardware_description child;")
                     .replace("specializes perfect;", "specializes user;")
                     .replace("device user {", "device child {"))
    code, out, err = run_cli("hwd", "check", "--hwd-path", lib, child)
    assert code == 0, out + err
    code, out, err = run_cli("hwd", "check", child)
    assert code == 1 and "hdl-missing-parent" in out


def test_hwd_path_from_environment(run_cli, tmp_path, monkeypatch):
    (tmp_path / "user.hdl").write_text(VALID)
    monkeypatch.setenv("MCL_HWD_PATH", str(tmp_path))
    code, out, _ = run_cli("hwd", "list")
    assert code == 0 and "user" in out


def test_bad_hwd_path(run_cli, tmp_path):
    code, _, err = run_cli("hwd", "list", "--hwd-path", tmp_path / "nope")
    assert code == 1 and "does not exist" in err


def test_usage_errors(run_cli, tmp_path):
    code, _, _ = run_cli("hwd")
    assert code == 2
    code, _, _ = run_cli("hwd", "show")
    assert code == 2
    txt = tmp_path / "notes.txt"
    txt.write_text("x")
    code, _, err = run_cli("hwd", "check", txt)
    assert code == 2 and ".hdl" in err


def _user_gpu(directory, old: str = "", new: str = ""):
    """A copy of the library's gpu.hdl in ``directory``, with ``old`` replaced by ``new``."""
    from mcl.hdl.library import BUNDLED

    text = (BUNDLED / "gpu.hdl").read_text()
    if old:
        assert old in text
        text = text.replace(old, new, 1)
    path = directory / "gpu.hdl"
    path.write_text(text)
    return path


def _position(path, text: str, after: bool = False) -> str:
    """``line:column`` of the first ``text`` in the file (``after``: just after it)."""
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if text in line:
            return f"{number}:{line.index(text) + 1 + (len(text) if after else 0)}"
    raise AssertionError(text)


def test_list_shows_a_broken_user_description(run_cli, tmp_path):
    path = _user_gpu(tmp_path, "max_nr_units = 1024;", "max_nr_units = 1024")
    code, out, err = run_cli("hwd", "list", "--hwd-path", tmp_path)
    assert code == 0, err
    lines = out.splitlines()
    gpu = next(ln for ln in lines if ln.lstrip("│├└─ ").startswith("gpu "))
    assert f"INVALID: mcl hwd check --hwd-path {tmp_path} {path}" in gpu
    nvidia = next(ln for ln in lines if "nvidia" in ln)
    assert "depends on 'gpu', which does not parse" in nvidia
    assert lines.index(gpu) < lines.index(nvidia) and lines[0] == "perfect"


def test_a_kernel_for_a_broken_user_description_shows_its_syntax_error(run_cli, tmp_path):
    from tests.conftest import EXAMPLES

    path = _user_gpu(tmp_path, "max_nr_units = 1024;", "max_nr_units = 1024")
    code, out, err = run_cli("check", "--hwd-path", tmp_path, EXAMPLES / "matmul" / "gpu.mcpl")
    text = out + err
    assert code == 1
    at = _position(path, "max_nr_units = 1024", after=True)
    assert f"{path}:{at}: syntax error: expected ';' after '1024'" in text
    assert "imports itself" not in text and "unknown hardware description" not in text


def test_check_reports_a_missing_semicolon_after_the_statement(run_cli, tmp_path):
    path = _user_gpu(tmp_path, "max_nr_units = 1024;", "max_nr_units = 1024")
    code, out, _ = run_cli("hwd", "check", path)
    assert code == 1
    at = _position(path, "max_nr_units = 1024", after=True)
    assert f"{path}:{at}: error: syntax error: expected ';' after '1024' [hdl-syntax]" in out


def test_check_rejects_a_negative_capacity(run_cli, tmp_path):
    path = _user_gpu(tmp_path, "capacity = 4 GB;", "capacity = -4 GB;")
    code, out, _ = run_cli("hwd", "check", path)
    assert code == 1
    at = _position(path, "-4 GB")
    assert f"{path}:{at}: error: 'capacity' must be greater than 0, not -4 GB" in out


def test_check_summary_counts_what_it_shows(run_cli, tmp_path):
    # a copy of a library description: one info (it replaces the library's), no warning
    path = _user_gpu(tmp_path)
    code, out, _ = run_cli("hwd", "check", path)
    assert code == 0 and "info:" in out and "warning:" not in out
    assert out.splitlines()[-1] == "1 file(s) checked: no errors, 1 info"


def test_check_a_directory(run_cli, tmp_path):
    _user_gpu(tmp_path)
    code, out, err = run_cli("hwd", "check", tmp_path)
    assert code == 1 and "Traceback" not in out + err
    assert f"'{tmp_path}' is a directory; 'mcl hwd check' takes .hdl files" in out
    assert "no such file" not in out and f"{tmp_path}/*.hdl" in out


def test_check_a_file_named_twice_counts_it_once(run_cli):
    from tests.conftest import ROOT
    gpu = ROOT / "mcl" / "hwdescs" / "gpu.hdl"
    code, out, err = run_cli("hwd", "check", gpu, gpu.parent / "." / "gpu.hdl")
    assert code == 0 and "1 file(s) checked: no errors" in out + err, out + err


def test_check_a_file_that_is_not_utf8_says_where(run_cli, tmp_path):
    bad = tmp_path / "x.hdl"
    bad.write_bytes(b"hardware_description x;\n// \xff\n")
    code, out, err = run_cli("hwd", "check", bad)
    assert code == 1 and "byte 0xff on line 2 is not UTF-8 text" in out + err
    assert "save the file as UTF-8" in out + err


def test_check_a_file_that_would_replace_perfect(run_cli, tmp_path):
    # the library's 'perfect' stays, so the file holds no description of its own: its
    # errors were reported by `mcl check --hwd-path` and not by `mcl hwd check` (exit 0)
    from mcl.hdl.library import BUNDLED

    copy = tmp_path / "perfect.hdl"
    copy.write_text((BUNDLED / "perfect.hdl").read_text())
    code, out, _ = run_cli("hwd", "check", copy)
    assert code == 1 and f"{copy}:5:22: error:" in out and "hdl-replaces-perfect" in out
    copy.write_text((BUNDLED / "perfect.hdl").read_text()
                    .replace("capacity = unlimited B;", "capacity = ;", 1))
    code, out, _ = run_cli("hwd", "check", copy)
    assert code == 1 and "hdl-syntax" in out and f"{copy}:29:14" in out
