"""What a user who gets a description wrong sees: syntax errors in words, with the
place and a hint; descriptions the hierarchy cannot place; the commands' help."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.hdl.test_commands import _user_gpu


def _check(run_cli, path):
    code, out, err = run_cli("hwd", "check", path)
    assert "Traceback" not in out + err
    return code, out


# --------------------------------------------------------------------------- syntax


def test_an_empty_file_is_said_to_be_empty(run_cli, tmp_path):
    for text in ("", "// only a comment\n"):
        path = tmp_path / "empty.hdl"
        path.write_text(text)
        code, out = _check(run_cli, path)
        assert code == 1
        assert f"{path}:1:" in out and "the file is empty" in out
        assert "\\/\\/" not in out   # the grammar's comment rule is no word for a user


def test_expected_words_never_show_the_grammar(run_cli, tmp_path):
    path = _user_gpu(tmp_path, "hardware_description gpu;", "hardware_descripton gpu;")
    code, out = _check(run_cli, path)
    assert code == 1
    assert "found 'hardware_descripton', expected 'hardware_description'" in out
    assert "\\/\\/" not in out and ".*?" not in out


def test_a_brace_too_many(run_cli, tmp_path):
    path = _user_gpu(tmp_path)
    path.write_text(path.read_text() + "}\n")
    code, out = _check(run_cli, path)
    assert code == 1
    assert "found '}', expected the end of the file" in out and "'EOF'" not in out
    assert "closes no block" in out


def test_an_unclosed_block_names_where_it_starts(run_cli, tmp_path):
    path = _user_gpu(tmp_path, "  processors;\n}", "  processors;\n")
    code, out = _check(run_cli, path)
    assert code == 1
    assert "'device gpu {' is not closed" in out
    line = next(n for n, t in enumerate(path.read_text().splitlines(), 1)
                if t.startswith("device gpu"))
    assert f"note: {path}:{line}:1: 'device gpu' starts here" in out
    # the error points at the last line of the file, which the excerpt can show
    last = len(path.read_text().rstrip().splitlines())
    assert f"{path}:{last}:" in out


@pytest.mark.parametrize("written, typed, hint", [
    ("specializes accelerator;", "specialises accelerator;", "did you mean 'specializes'?"),
    ("clock_frequency = 1 GHz;", "clock_frequency = 1 G Hz;",
     "write the unit in one word: 'GHz'"),
    ("clock_frequency = 1 GHz;", "clock_frequency = 1,5 GHz;",
     "decimals are written with a point"),
    ("capacity = 4 GB;", "capacity = ;", "found ';', expected a value"),
], ids=["misspelt specializes", "unit in two words", "decimal comma", "missing value"])
def test_a_common_typo_gets_a_hint(run_cli, tmp_path, written, typed, hint):
    code, out = _check(run_cli, _user_gpu(tmp_path, written, typed))
    assert code == 1 and hint in out


# --------------------------------------------------------------------------- list


def _minimal(name: str, parent: str) -> str:
    return (f"hardware_description {name};\nspecializes {parent};\n"
            "parallelism hierarchy {\n  memory_space main { default; }\n"
            "  par_group threads {\n    nr_units = unlimited;\n"
            "    par_unit thread { memory_space reg { default; } }\n  }\n}\n"
            f"device {name} {{ }}\n")


def test_list_shows_descriptions_in_a_cycle_of_specializes(run_cli, tmp_path):
    (tmp_path / "ca.hdl").write_text(_minimal("ca", "cb"))
    (tmp_path / "cb.hdl").write_text(_minimal("cb", "ca"))
    (tmp_path / "cc.hdl").write_text(_minimal("cc", "cc"))
    code, out, err = run_cli("hwd", "list", "--hwd-path", tmp_path)
    assert code == 0, err
    for name in ("ca", "cb", "cc"):
        line = next(ln for ln in out.splitlines()
                    if ln.lstrip("│├└─ ").startswith(name + " "))
        assert "INVALID: in a cycle of 'specializes'" in line
        assert f"mcl hwd check --hwd-path {tmp_path} {tmp_path / name}.hdl" in line


def test_list_says_how_to_see_an_error_that_needs_the_other_descriptions(run_cli, tmp_path):
    # two files define 'gpu': the check must see both, so the command names the directory
    _user_gpu(tmp_path)
    (tmp_path / "other.hdl").write_text((tmp_path / "gpu.hdl").read_text())
    code, out, err = run_cli("hwd", "list", "--hwd-path", tmp_path)
    assert code == 0, err
    line = next(ln for ln in out.splitlines() if ln.lstrip("│├└─ ").startswith("gpu "))
    command = line.split("INVALID: ")[1].rstrip(")")
    code, out, _ = run_cli(*command.split()[1:])
    assert code == 1 and "defined twice" in out


# --------------------------------------------------------------------------- show


def test_show_with_the_path_of_a_file_names_the_description(run_cli, tmp_path):
    (tmp_path / "mine.hdl").write_text(_minimal("mine", "perfect"))
    code, out, err = run_cli("hwd", "show", tmp_path / "mine.hdl")
    assert code == 1 and "Traceback" not in out + err
    assert f"'{tmp_path / 'mine.hdl'}' is the path of a file; mcl hwd show takes the name" \
        in err
    assert f"mcl hwd show mine --hwd-path {tmp_path}" in err
    code, out, err = run_cli("hwd", "show", "mine", "--hwd-path", tmp_path)
    assert code == 0, err


# --------------------------------------------------------------------------- numbers


def test_numbers_too_large_are_errors_not_crashes(run_cli, tmp_path):
    huge = "9" * 400
    for value in (f"{huge} / 7 B", "1e400 B", f"{huge} B", "2e30 GB"):
        path = _user_gpu(tmp_path, "capacity = 4 GB;", f"capacity = {value};")
        code, out = _check(run_cli, path)
        assert code == 1, value
        assert "this number is too large" in out and "internal error" not in out, value
        code, out, err = run_cli("hwd", "show", "gpu", "--hwd-path", tmp_path)
        assert code == 1 and "Traceback" not in out + err and "inf" not in out


def test_large_numbers_that_fit_are_kept(check):
    from tests.hdl.test_validate import VALID

    hwd, diags = check(VALID.replace("capacity = 2 GB;", "capacity = 1000000 TB;"))
    assert not [d for d in diags if d.is_error]


def test_each_hwd_command_explains_itself_in_its_help(run_cli):
    for command in ("list", "show", "check"):
        code, out, _ = run_cli("hwd", command, "--help")
        assert code == 0
        assert out.count("\n\n") >= 2 and "--hwd-path" in out, command
        description = out.split("\n\n")[1]
        assert len(description.split()) > 15, (command, description)


def test_an_editor_buffer_gets_its_own_errors_once(tmp_path):
    """An empty buffer of a file the library reads too (gpu.hdl) said 'the file is empty'
    twice; an unreadable file beside a broken buffer added its error to the buffer's."""
    from mcl.hdl import check_text
    gpu = Path(__file__).resolve().parents[2] / "mcl" / "hwdescs" / "gpu.hdl"
    _, diags = check_text("", str(gpu))
    assert [d.code for d in diags] == ["hdl-syntax"] and "empty" in diags[0].message
    (tmp_path / "bad.hdl").write_bytes(b"\xff\xfe")
    broken = tmp_path / "broken.hdl"
    _, diags = check_text("hardware_description broken\nspecializes gpu;\n{\n", str(broken),
                          [str(tmp_path)])
    assert [(d.code, d.span.file) for d in diags] == [("hdl-syntax", str(broken))]


@pytest.mark.parametrize("value", ["99999999999999999999999", "2147483648"])
def test_a_number_of_units_beyond_a_foreach_count_is_an_error(run_cli, tmp_path, value):
    """`max_nr_units = 99999999999999999999999;` passed `hwd check` (and feedback at
    that level ran past a minute); no foreach (an int count) can use more units."""
    from tests.hdl.test_commands import _position
    path = _user_gpu(tmp_path, "max_nr_units = 65535;", f"max_nr_units = {value};")
    code, out = _check(run_cli, path)
    assert code == 1
    assert f"{path}:{_position(path, value)}: error: 'max_nr_units' cannot be more than " \
           f"2147483647" in out


def test_a_number_of_units_of_a_foreach_count_is_accepted(run_cli, tmp_path):
    path = _user_gpu(tmp_path, "max_nr_units = 65535;", "max_nr_units = 2147483647;")
    assert _check(run_cli, path)[0] == 0


def _user_fermi(directory, old: str, new: str):
    from mcl.hdl.library import BUNDLED

    text = (BUNDLED / "fermi.hdl").read_text()
    assert old in text
    path = directory / "fermi.hdl"
    path.write_text(text.replace(old, new, 1))
    return path


@pytest.mark.parametrize("old, new, severity, says", [
    ("slots(thread, 1536)", "slots(thread, 0)", "error",
     "a number of slots must be greater than 0, not 0"),
    ("op((+), 1)", "op((+), 0)", "error", "an operation cannot take 0 cycles"),
    ('op("sqrt"', 'op("frobnicate"', "warning", "no MCPL operation is called 'frobnicate'"),
    ("cache_line_size = 128 B", "cache_line_size = 3 B", "error",
     "a cache line is a power of two bytes up to 4 kB, not 3 B"),
    ("cache_line_size = 128 B", "cache_line_size = 64 MB", "error",
     "a cache line is a power of two bytes up to 4 kB, not 64 MB"),
    ("op((-), 1);", "op((+), 2);", "error", "operation '+' is given twice"),
    ("connects(mem, l2)", "connects(mem, mem)", "error",
     "connects(...) names the same block twice"),
    # mcl feedback took it for no latency at all: vector_add 8.05 ms, not 86.7
    ("latency = 400 cycles", "latency = unlimited", "error",
     "'latency' must be a number, not 'unlimited'"),
    ("latency = 400 cycles", "latency = countable", "error",
     "'latency' must be a number, not 'countable'"),
])
def test_a_description_that_cannot_be_right_is_reported_where_it_is_wrong(
        run_cli, tmp_path, old, new, severity, says):
    """These passed `hwd check` without a word."""
    from tests.hdl.test_commands import _position
    path = _user_fermi(tmp_path, old, new)
    code, out = _check(run_cli, path)
    assert code == (1 if severity == "error" else 0), out
    line = _position(path, new).split(":")[0]
    assert f"{path}:{line}:" in out and f"{severity}: {says}" in out, out


def test_the_units_of_a_group_connected_to_each_other_are_accepted(run_cli, tmp_path):
    """connects(g.u[*], g.u[*]) joins the units of a group to each other (the NVLink
    between the GPUs of mcl/skel/nodes/h200x2.hdl); the check for a block connected
    to itself rejected it."""
    path = _user_fermi(tmp_path, "connects(l2, smps.smp[*])",
                       "connects(smps.smp[*], smps.smp[*])")
    code, out = _check(run_cli, path)
    assert code == 0 and "same block" not in out and "to each other" not in out, out


def test_the_units_of_a_group_of_one_connected_to_each_other_is_an_error(run_cli, tmp_path):
    """With one unit in the group, 'each other' is the unit itself."""
    from tests.hdl.test_commands import _position
    path = _user_fermi(tmp_path, "connects(l2, smps.smp[*])",
                       "connects(smps.smp[*], smps.smp[*])")
    text = path.read_text()
    assert text.count("nr_units = 15;") == 1
    path.write_text(text.replace("nr_units = 15;", "nr_units = 1;"))
    code, out = _check(run_cli, path)
    line = _position(path, "connects(smps").split(":")[0]
    assert code == 1, out
    assert f"{path}:{line}:" in out and "error: connects(smps.smp[*], smps.smp[*]) joins " \
        "the units of 'smps' to each other, but it has one unit" in out, out



@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")
def test_a_named_pipe_among_the_descriptions_is_an_error_not_a_hang(tmp_path):
    """A named pipe called x.hdl in a --hwd-path folder, or beside a kernel, made
    `mcl hwd list` and `mcl check` wait for a writer for ever; `hwd check x.hdl` called
    it 'no such file'. Each command runs in a child that a time limit ends."""
    import subprocess
    import sys

    from tests.conftest import EXAMPLES, child_env

    os.mkfifo(tmp_path / "x.hdl")
    kernel = tmp_path / "k.mcpl"
    kernel.write_text((EXAMPLES / "vector_add" / "perfect.mcpl").read_text())

    def run(*argv):
        try:
            r = subprocess.run([sys.executable, "-m", "mcl.cli", *map(str, argv)],
                               capture_output=True, text=True, env=child_env(), timeout=60)
        except subprocess.TimeoutExpired:
            pytest.fail(f"mcl {' '.join(map(str, argv))} waited for a writer of the pipe")
        return r.returncode, r.stdout + r.stderr

    for argv in (("hwd", "list", "--hwd-path", tmp_path), ("hwd", "check", tmp_path / "x.hdl")):
        code, out = run(*argv)
        assert code == 1 and "Traceback" not in out, out
        assert f"cannot read hardware description '{tmp_path / 'x.hdl'}': not a regular " \
               "file" in out, out
    code, out = run("check", kernel)
    assert code == 0, out


def test_check_of_a_file_not_named_after_its_description_warns(run_cli, tmp_path):
    """`mcl hwd check fermi.hdl` of a file that describes 'fermo' passed without a word,
    while a kernel's `import fermi` gets the library's fermi, not this file: a warning
    now (an error where a search finds the file, as before)."""
    from mcl.hdl.library import BUNDLED
    text = (BUNDLED / "fermi.hdl").read_text()
    assert "hardware_description fermi;" in text
    path = tmp_path / "fermi.hdl"
    path.write_text(text.replace("hardware_description fermi;", "hardware_description fermo;"))
    code, out = _check(run_cli, path)
    assert code == 0, out
    assert "warning: the description 'fermo' is in a file named 'fermi.hdl' [hdl-file-name]" \
        in out and "import fermi does not find it" in out, out
    code, out, err = run_cli("hwd", "show", "fermo", "--hwd-path", tmp_path)
    assert code == 1 and "error: the description 'fermo' is in a file named 'fermi.hdl'" \
        in out + err, out + err
