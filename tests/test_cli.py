import pytest


def test_help_lists_commands(run_cli):
    code, out, _ = run_cli("--help")
    assert code == 0 and "devices" in out


def test_no_command_is_a_usage_error(run_cli):
    code, out, _ = run_cli()
    assert code == 2 and "usage" in out


def test_unknown_command_is_a_usage_error(run_cli):
    code, _, err = run_cli("frobnicate")
    assert code == 2 and "invalid choice" in err


def test_devices_lists_pocl(run_cli):
    code, out, _ = run_cli("devices")
    assert code == 0 and "default:" in out


def test_devices_names_a_compiler_that_miscompiles_the_tiled_kernel(run_cli, monkeypatch):
    from mcl.opencl import device
    monkeypatch.setattr(device, "miscompiles_tiled_kernels",
                        lambda dev: device.build_problem(dev) is None)
    code, out, _ = run_cli("devices")
    assert code == 0 and "note: its compiler (PoCL 5) miscompiles mcl.skel's " \
        "register-blocked AllPairs kernel: AllPairs runs a plain kernel there" in out


def test_assignments_parse_integers_and_reject_malformed_items():
    import pytest

    from mcl.cli import UsageError, parse_assignments
    assert parse_assignments(["n=2048", "m=0x10"], "--set") == {"n": 2048, "m": 16}
    assert parse_assignments(["d=0.001"], "--set", allow_float=True) == {"d": 0.001}
    for bad in (["n"], ["=3"], ["n=x"], ["d=0.5"]):
        with pytest.raises(UsageError):
            parse_assignments(bad, "--set")


def test_each_command_is_registered_by_the_component_the_table_names():
    from mcl.cli import COMMAND_COMPONENTS, COMPONENTS, build_parser
    everything = build_parser()._subparsers._group_actions[0].choices
    assert set(everything) == set(COMMAND_COMPONENTS)
    for command, component in COMMAND_COMPONENTS.items():
        assert component in COMPONENTS
        only = build_parser(command)._subparsers._group_actions[0].choices
        assert command in only, f"{component} does not register '{command}'"


def test_usage_errors_of_commands_are_usage_errors_under_python_dash_m():
    """`python -m mcl.cli` runs cli.py as __main__; the commands raise mcl.cli's
    UsageError, which must still be caught as one (not an internal error)."""
    import subprocess
    import sys

    from tests.conftest import EXAMPLES, child_env
    env = child_env()
    done = subprocess.run([sys.executable, "-m", "mcl.cli", "feedback",
                           str(EXAMPLES / "matmul" / "gpu.mcpl"), "--set", "n=2.5"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 2, done.stderr
    assert "--set n: '2.5' is not an integer" in done.stderr
    assert "Traceback" not in done.stderr


def test_an_output_path_that_cannot_be_written_is_an_error_not_a_bug(run_cli, tmp_path):
    from tests.conftest import EXAMPLES
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    code, _, err = run_cli("gen", "--target", "hopper", EXAMPLES / "matmul" / "hopper_v3.mcpl",
                           "-o", blocker / "out")
    assert code == 2, err      # a usage error: -o names where no folder can be made
    assert err == f"mcl gen: error: cannot write to '{blocker / 'out'}': '{blocker}' is a " \
        "file, not a folder (-o names the folder the .cl source and the launch plan are " \
        "written to)\n"


#: each command that writes into a folder: its command line before the folder (VERSIONS:
#: a folder of one version of vector_add), its name and option in the message, and the
#: files it writes there
OUTPUT_FOLDER_COMMANDS = {
    "gen": (["gen", "--target", "hopper", "examples/vector_add/hopper_v1.mcpl", "-o"],
            "mcl gen", "-o", ["vector_add.cl", "vector_add.json"]),
    "lift gen": (["lift", "gen", "mcl/lift/programs/scal.lift", "--size", "N=8", "--rule",
                  "map-to-mapGlb", "-o"], "mcl lift gen", "-o", ["kernel.cl", "plan.json"]),
    "versions": (["versions", "VERSIONS", "--no-time", "-q", "--report"], "mcl versions",
                 "--report", ["index.html", "report.md"]),
}


def _output_command(name: str, folder, tmp_path):
    import shutil

    from tests.conftest import EXAMPLES, ROOT
    argv, command, option, files = OUTPUT_FOLDER_COMMANDS[name]
    if "VERSIONS" in argv:
        versions = tmp_path / "vector_add"
        versions.mkdir(exist_ok=True)
        for f in ("perfect.mcpl", "reference.py"):
            shutil.copy(EXAMPLES / "vector_add" / f, versions / f)
        argv = [str(versions) if a == "VERSIONS" else a for a in argv]
    argv = [str(ROOT / a) if a.startswith(("examples/", "mcl/")) else a for a in argv]
    return [*argv, folder], command, option, files


@pytest.mark.parametrize("name", OUTPUT_FOLDER_COMMANDS)
def test_each_output_folder_that_cannot_be_written_is_said_alike(name, run_cli, tmp_path,
                                                                 monkeypatch):
    """A file where the folder goes, a file where a folder above it goes, a folder that
    is not writable and one that cannot be made: one wording, exit status 2, for every
    command that writes into a folder, and nothing written or run."""
    import os
    from pathlib import Path

    afile = tmp_path / "afile"
    afile.write_text("keep")
    readonly = tmp_path / "readonly"
    readonly.mkdir()
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: Path(p) != readonly and
                        real_access(p, mode, **kw))
    cases = [(afile, "it is a file"),
             (afile / "sub", f"'{afile}' is a file, not a folder"),
             (readonly, "the folder is not writable"),
             (readonly / "new", f"no folder can be made in '{readonly}' (it is not writable)")]
    for folder, reason in cases:
        argv, command, option, _ = _output_command(name, folder, tmp_path)
        code, out, err = run_cli(*argv)
        assert code == 2, (folder, err)
        assert err.startswith(f"{command}: error: cannot write to '{folder}': {reason} "
                              f"({option} names the folder "), (folder, err)
        assert out == "" and "Traceback" not in err
    assert afile.read_text() == "keep" and list(readonly.iterdir()) == []


@pytest.mark.parametrize("name", OUTPUT_FOLDER_COMMANDS)
def test_an_output_folder_that_cannot_be_made_is_said_with_the_reason(name, run_cli, tmp_path,
                                                                     monkeypatch):
    from pathlib import Path

    folder = tmp_path / "new"
    real_mkdir = Path.mkdir

    def refuse(self, *args, **kwargs):
        if self == folder:
            raise OSError(30, "Read-only file system", str(self))
        return real_mkdir(self, *args, **kwargs)
    argv, command, option, _ = _output_command(name, folder, tmp_path)
    monkeypatch.setattr(Path, "mkdir", refuse)
    code, _, err = run_cli(*argv)
    assert code == 2, err
    assert f"{command}: error: cannot write to '{folder}': the folder cannot be made " \
        f"(read-only file system) ({option} names the folder " in err


@pytest.mark.parametrize("name", OUTPUT_FOLDER_COMMANDS)
def test_an_output_folder_is_made_with_its_parents(name, run_cli, tmp_path):
    folder = tmp_path / "a" / "b"
    argv, _, _, files = _output_command(name, folder, tmp_path)
    code, _, err = run_cli(*argv)
    assert code == 0, err
    assert all((folder / f).is_file() for f in files)


#: each command that writes one file: its command line before the file, its name and option
#: in the message
OUTPUT_FILE_COMMANDS = {
    "translate": (["translate", "--to", "gpu", "examples/matmul/perfect.mcpl", "-o"],
                  "mcl translate", "-o"),
    "lift from-mcpl": (["lift", "from-mcpl", "examples/vector_add/perfect.mcpl", "-o"],
                       "mcl lift from-mcpl", "-o"),
}


@pytest.mark.parametrize("name", OUTPUT_FILE_COMMANDS)
def test_each_output_file_that_cannot_be_written_is_said_alike(name, run_cli, tmp_path):
    """A folder where the file goes, a missing folder above it, a file in the place of
    that folder: the wording of the output folders, exit status 2, nothing written (the
    missing folder not made); a writable place gets the file."""
    from tests.conftest import ROOT
    argv, command, option = OUTPUT_FILE_COMMANDS[name]
    argv = [str(ROOT / a) if a.startswith(("examples/", "mcl/")) else a for a in argv]
    folder = tmp_path / "folder"
    folder.mkdir()
    afile = tmp_path / "afile"
    afile.write_text("keep")
    cases = [(folder, "it is a folder"),
             (tmp_path / "nope" / "out", f"the folder '{tmp_path / 'nope'}' does not exist"),
             (afile / "out", f"'{afile}' is a file, not a folder")]
    for target, reason in cases:
        code, out, err = run_cli(*argv, target)
        assert code == 2, (target, err)
        assert err.startswith(f"{command}: error: cannot write to '{target}': {reason} "
                              f"({option} names the file "), (target, err)
        assert out == "" and "Traceback" not in err
    assert afile.read_text() == "keep" and list(folder.iterdir()) == []
    assert not (tmp_path / "nope").exists()
    code, out, err = run_cli(*argv, tmp_path / "written")
    assert code == 0 and out == "", err
    assert (tmp_path / "written").read_text().strip()


#: each option that names where a command writes, the command line around it
EMPTY_PATH_COMMANDS = {
    "translate -o": ["translate", "--to", "gpu", "examples/matmul/perfect.mcpl", "-o"],
    "translate --output=": ["translate", "--to", "gpu", "examples/matmul/perfect.mcpl",
                            "--output="],
    "gen -o": ["gen", "--target", "hopper", "examples/vector_add/hopper_v1.mcpl", "-o"],
    "lift gen -o": ["lift", "gen", "mcl/lift/programs/scal.lift", "--size", "N=8", "--rule",
                    "map-to-mapGlb", "-o"],
    "lift from-mcpl -o": ["lift", "from-mcpl", "examples/vector_add/perfect.mcpl", "-o"],
    "lift explore --results": ["lift", "explore", "mcl/lift/programs/scal.lift", "--budget",
                               "1", "--results"],
    "versions --report": ["versions", "examples/vector_add", "--no-time", "-q", "--report"],
    "lsp --log-file": ["lsp", "--log-file"],
}


@pytest.mark.parametrize("name", EMPTY_PATH_COMMANDS)
def test_an_empty_output_path_is_a_usage_error(name, run_cli, tmp_path, monkeypatch):
    """`-o ''` was taken as no -o: the result printed (translate, lift gen, lift
    from-mcpl), written into the current folder (gen), or no report, results file or log
    written. Now an empty path is a usage error that names the option; nothing runs."""
    from tests.conftest import ROOT
    monkeypatch.chdir(tmp_path)
    argv = [str(ROOT / a) if a.startswith(("examples/", "mcl/")) else a
            for a in EMPTY_PATH_COMMANDS[name]]
    if not argv[-1].endswith("="):
        argv.append("")
    code, out, err = run_cli(*argv)
    option = name.split()[-1].rstrip("=")
    assert code == 2, (out, err)
    assert out == "" and "Traceback" not in err
    assert f"error: argument {option}" in err or f"/{option}: " in err, err
    assert "an empty path" in err, err
    assert list(tmp_path.iterdir()) == []


def test_a_hardware_description_directory_that_does_not_exist_is_an_error(run_cli, tmp_path,
                                                                           monkeypatch):
    from tests.conftest import EXAMPLES
    missing = tmp_path / "nothere"
    for command in (["check"], ["feedback"], ["translate", "--to", "hopper"]):
        code, out, err = run_cli(*command, "--hwd-path", missing, EXAMPLES / "matmul" / "gpu.mcpl")
        assert code == 1 and out == "", command
        assert f"hardware-description directory '{missing}' does not exist" in err
    monkeypatch.setenv("MCL_HWD_PATH", str(missing))
    code, _, err = run_cli("check", EXAMPLES / "matmul" / "gpu.mcpl")
    assert code == 1 and "MCL_HWD_PATH" in err


def test_a_hardware_description_file_on_the_path_is_read_and_another_file_is_an_error(
        run_cli, tmp_path):
    """--hwd-path mycpu.hdl reads that description (as its folder would); a file that is
    no description is 'a file, not a folder', not 'does not exist'."""
    elsewhere = tmp_path / "k"
    elsewhere.mkdir()
    _level_beside(tmp_path)
    kernel = elsewhere / "vadd.mcpl"
    kernel.write_text(VADD_MYCPU)
    code, out, err = run_cli("check", "--hwd-path", tmp_path / "mycpu.hdl", kernel)
    assert code == 0 and "no errors" in err, out + err
    (tmp_path / "notes.txt").write_text("")
    code, out, err = run_cli("check", "--hwd-path", tmp_path / "notes.txt", kernel)
    assert code == 1 and f"'{tmp_path / 'notes.txt'}' is a file, not a folder" in err


def test_every_option_and_argument_of_every_command_explains_itself():
    import argparse

    from mcl.cli import build_parser

    def parsers(p, name="mcl"):
        yield name, p
        for action in p._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub_name, sub in action.choices.items():
                    yield from parsers(sub, f"{name} {sub_name}")

    missing = [f"{name} {a.option_strings[0] if a.option_strings else a.dest}"
               for name, p in parsers(build_parser()) for a in p._actions
               if not isinstance(a, argparse._HelpAction | argparse._SubParsersAction)
               and not a.help]
    assert missing == []


def test_a_name_given_twice_with_two_values_is_a_usage_error():
    import pytest

    from mcl.cli import UsageError, parse_assignments
    with pytest.raises(UsageError, match=r"--set gives n twice \(n=10 and n=20\)"):
        parse_assignments(["n=10", "m=3", "n=20"], "--set")
    assert parse_assignments(["n=10", "n=0xa"], "--set") == {"n": 10}    # the same value


def _sum_kernel(tmp_path, terms: int):
    f = tmp_path / f"sum{terms}.mcpl"
    f.write_text(f"module sum{terms};\nimport perfect;\n"
                 "perfect void k(const int n, float[n] a, float[n] c) {\n"
                 "  foreach (int i in n threads) { c[i] = "
                 + " + ".join(["a[i]"] * terms) + "; }\n}\n")
    return f


def test_a_long_expression_is_checked_and_a_far_too_long_one_is_an_error(tmp_path, run_cli):
    """600 terms were a RecursionError (an internal error with a traceback); 20000 are
    more than the commands follow: an error that says what to do."""
    code, out, err = run_cli("check", _sum_kernel(tmp_path, 600))
    assert code == 0, err
    code, out, err = run_cli("check", _sum_kernel(tmp_path, 20000))
    assert code == 1 and "Traceback" not in out + err
    assert "sum20000.mcpl:1:1: error: sum20000.mcpl nests too deeply to be checked" in out + err


# ------------------------------------------------ a user's description beside the kernel

VADD_MYCPU = """module vadd;
import perfect;
import mycpu;

perfect void vadd(const int n = 1000, main float[n] c, main float[n] a, main float[n] b) {
  foreach (int i in n threads) { c[i] = a[i] + b[i]; }
}
"""


def _level_beside(folder) -> None:
    """``mycpu.hdl`` and its target in ``folder``: the library's cpu under another name."""
    from mcl.hdl.library import BUNDLED
    text = (BUNDLED / "cpu.hdl").read_text()
    (folder / "mycpu.hdl").write_text(
        text.replace("hardware_description cpu;", "hardware_description mycpu;")
        .replace("device cpu {", "device mycpu {"))
    (folder / "mycpu.target").write_text((BUNDLED / "cpu.target").read_text())


def test_a_description_beside_the_kernel_is_found_by_every_command(run_cli, tmp_path,
                                                                   monkeypatch):
    """`import mycpu;` with mycpu.hdl in the kernel's folder, not on any search path (nor
    the working directory): each command that reads the kernel finds it."""
    kernels = tmp_path / "kernels"
    kernels.mkdir()
    _level_beside(kernels)
    perfect = kernels / "perfect.mcpl"
    perfect.write_text(VADD_MYCPU)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MCL_HWD_PATH", raising=False)
    code, out, err = run_cli("check", perfect)
    assert code == 0 and "no errors" in err, out + err
    code, out, err = run_cli("feedback", "--level", "mycpu", perfect)
    assert code == 0 and "error" not in out, out + err
    lowered = kernels / "mycpu.mcpl"
    code, out, err = run_cli("translate", "--to", "mycpu", perfect, "-o", lowered)
    assert code == 0, out + err
    assert "mycpu void vadd(" in lowered.read_text()
    code, out, err = run_cli("feedback", lowered)
    assert code == 0 and "error" not in out, out + err
    code, out, err = run_cli("gen", lowered, "-o", tmp_path / "out")
    assert code == 0 and (tmp_path / "out" / "vadd.cl").is_file(), out + err
    code, out, err = run_cli("gen", "--target", "mycpu", perfect, "-o", tmp_path / "out2")
    assert code == 0 and (tmp_path / "out2" / "vadd.cl").is_file(), out + err
    code, out, err = run_cli("run", lowered, "--repeat", "1")
    assert code == 0 and "vadd at mycpu" in out and "c: matches vadd (the perfect " \
        "version, translated to mycpu)" in out, out + err
    code, out, err = run_cli("versions", kernels, "--no-time", "-q")
    assert code == 0 and "mycpu: level mycpu, run as mycpu, consistent" in out, out + err


def test_a_copy_of_a_library_description_beside_the_kernel_does_not_replace_it(run_cli,
                                                                               tmp_path):
    """A cpu.hdl beside the kernel (here one that does not even parse) leaves `import
    cpu;` the library's, with a warning that says so; on --hwd-path it replaces it."""
    from mcl.hdl.library import BUNDLED
    (tmp_path / "cpu.hdl").write_text((BUNDLED / "cpu.hdl").read_text() + "\nnot hdl")
    kernel = tmp_path / "k.mcpl"
    kernel.write_text("module k;\nimport cpu;\n")
    code, out, err = run_cli("check", kernel)
    assert code == 0, out + err
    assert "k.mcpl:2:1: warning: 'cpu.hdl' beside this file is not read: 'cpu' is the " \
        "library's [mcpl-description-beside]" in out
    assert f"give --hwd-path {tmp_path} (it then replaces the library's 'cpu')" in out
    code, out, err = run_cli("check", "--hwd-path", tmp_path, kernel)
    assert code == 1 and "hardware description 'cpu' has errors" in out


@pytest.mark.parametrize("command", ["feedback", "run"])
def test_a_set_value_beyond_the_parameters_type_is_a_usage_error(run_cli, command):
    """`--set n=99999999999` for an `int n` made `mcl feedback` enumerate ~10^9 points
    (minutes of system time); the value is refused before anything runs."""
    import time

    from tests.conftest import EXAMPLES
    begin = time.monotonic()
    code, _, err = run_cli(command, EXAMPLES / "matmul" / "hopper_v5.mcpl",
                           "--set", "n=99999999999")
    assert code == 2, err
    assert "--set n=99999999999: 'n' is an int parameter of 'matmul', whose values are " \
           "-2147483648 .. 2147483647" in err
    assert time.monotonic() - begin < 30


def test_set_values_beyond_any_float_and_whole_decimals_are_read_alike():
    """--set n=1e400 (or inf, nan) was read as inf by mcl run and said as 'n=inf ...
    takes whole numbers'; n=1e3, which mcl run took as 1000, was 'not an integer' to mcl
    feedback; n=1e12 was said as n=1000000000000.0."""
    from mcl.cli import UsageError, check_parameter_values, parse_assignments
    from mcl.mcpl import check
    from tests.conftest import EXAMPLES
    for allow_float in (False, True):
        for text in ("1e400", "inf", "-inf", "nan"):
            with pytest.raises(UsageError, match=f"--set n: '{text}' is not a finite number"):
                parse_assignments([f"n={text}"], "--set", allow_float=allow_float)
    got = parse_assignments(["n=1e3"], "--set")
    assert got == {"n": 1000} and isinstance(got["n"], int)
    with pytest.raises(UsageError, match="'7.5' is not an integer"):
        parse_assignments(["n=7.5"], "--set")
    fn = check(str(EXAMPLES / "vector_add" / "hopper_v1.mcpl")).module.functions
    with pytest.raises(UsageError, match=r"--set n=1000000000000: 'n' is an int parameter"):
        check_parameter_values(fn, parse_assignments(["n=1e12"], "--set", allow_float=True),
                               "--set")
