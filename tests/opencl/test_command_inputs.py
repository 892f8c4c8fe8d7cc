"""`mcl gen` and `mcl run` given what a new user types: an -o that cannot be a folder,
a file of several kernels without --function, a device named only by MCL_DEVICE.
Each gives a message that says what to change and a non-zero exit status."""

from __future__ import annotations

from tests.opencl.conftest import EXAMPLES

HOPPER = EXAMPLES / "vector_add" / "hopper_v1.mcpl"

TWO_KERNELS = """module two;
import perfect;

perfect void add(const int n = 100, main float[n] c, main float[n] a) {
  foreach (int i in n threads) { c[i] = a[i] + 1.0; }
}

perfect void scale(const int m = 50, main float[m] d) {
  foreach (int i in m threads) { d[i] = d[i] * 2.0; }
}
"""


def test_gen_into_a_folder_under_a_file_names_the_file(run_cli, tmp_path):
    (tmp_path / "f").write_text("")
    code, out, err = run_cli("gen", HOPPER, "-o", tmp_path / "f" / "sub")
    assert code == 2 and not out
    assert f"mcl gen: error: cannot write to '{tmp_path / 'f' / 'sub'}': " \
        f"'{tmp_path / 'f'}' is a file, not a folder" in err


def test_gen_into_a_folder_that_cannot_be_created_says_so(run_cli, monkeypatch, tmp_path):
    from pathlib import Path

    def refuse(self, *args, **kwargs):
        raise PermissionError(13, "Permission denied", str(self))
    monkeypatch.setattr(Path, "mkdir", refuse)
    code, _, err = run_cli("gen", HOPPER, "-o", tmp_path / "new")
    assert code == 2
    assert f"mcl gen: error: cannot write to '{tmp_path / 'new'}': the folder cannot be " \
        "made (permission denied)" in err


def test_gen_where_a_file_cannot_be_written_names_it(run_cli, tmp_path):
    """A folder in the place of the .cl file: only the bare OSError was said
    (``mcl: error: PATH: Is a directory``, exit status 1); now the usage error of an
    output that cannot be written, naming the command, the file and -o."""
    out = tmp_path / "out"
    (out / "vector_add.cl").mkdir(parents=True)
    code, printed, err = run_cli("gen", HOPPER, "-o", out)
    assert code == 2 and not printed, err
    assert err == f"mcl gen: error: cannot write to '{out / 'vector_add.cl'}': is a " \
        "directory (-o names the folder the .cl source and the launch plan are written " \
        "to)\n"


def test_gen_on_a_full_disk_says_so(run_cli, monkeypatch, tmp_path):
    """A full disk is said when the text is flushed, by an OSError without a file name:
    that was an internal error with a traceback. Now it is the same usage error, for
    each file gen writes (the C host code's too)."""
    from pathlib import Path

    real = Path.write_text
    for name in ("vector_add.cl", "vector_add.json", "vector_add_host.h",
                 "vector_add_host.c"):
        def full(self, *args, name=name, **kwargs):
            if self.name == name:
                raise OSError(28, "No space left on device")
            return real(self, *args, **kwargs)
        monkeypatch.setattr(Path, "write_text", full)
        out = tmp_path / name
        code, _, err = run_cli("gen", "--host", "c", HOPPER, "-o", out)
        assert code == 2, err
        assert err.startswith(f"mcl gen: error: cannot write to '{out / name}': no space "
                              "left on device (-o names the folder "), err
        assert "Traceback" not in err


def _windows_text_files(monkeypatch) -> None:
    """Files opened for writing text as on Windows: newline=None (the default) writes
    each "\\n" as "\\r\\n", and the default encoding is not utf-8."""
    import builtins
    import io

    real = io.open

    def open_(file, mode="r", buffering=-1, encoding=None, errors=None, newline=None,
              closefd=True, opener=None):
        if "b" not in mode and set(mode) & set("wax+"):
            newline = "\r\n" if newline is None else newline
            encoding = encoding or "utf-16"
        return real(file, mode, buffering, encoding, errors, newline, closefd, opener)

    monkeypatch.setattr(io, "open", open_)
    monkeypatch.setattr(builtins, "open", open_)


def test_gen_writes_its_files_exactly_as_generated(run_cli, monkeypatch, tmp_path):
    """gen wrote with the platform's newline translation and the locale's encoding: on
    Windows each line of the .cl source ended in "\\r\\n". Now each file has the bytes
    of the generated text in utf-8, "\\n" line ends, wherever it runs."""
    from mcl.opencl.generate import generate
    from mcl.opencl.host_c import host_code

    kernel, = generate(HOPPER)
    header, source = host_code(kernel, None)
    _windows_text_files(monkeypatch)
    code, _, err = run_cli("gen", "--host", "c", HOPPER, "-o", tmp_path)
    monkeypatch.undo()
    assert code == 0, err
    cl = (tmp_path / "vector_add.cl").read_bytes()
    assert cl == kernel.source.encode("utf-8")
    assert b"\n" in cl and b"\r" not in cl
    assert (tmp_path / "vector_add.json").read_bytes() == kernel.plan.to_json().encode()
    assert (tmp_path / "vector_add_host.h").read_bytes() == header.encode()
    assert (tmp_path / "vector_add_host.c").read_bytes() == source.encode()


def test_run_of_several_kernels_without_function_names_the_option(run_cli, tmp_path):
    path = tmp_path / "two.mcpl"
    path.write_text(TWO_KERNELS)
    code, out, err = run_cli("run", "-t", "cpu", path, "--repeat", "1")
    assert code == 1 and not out
    assert "two.mcpl:8:1: error: two.mcpl has several kernels (add, scale)" in err
    assert "--function add" in err and "--function scale" in err
    assert "function=..." not in err


def test_run_of_several_kernels_is_refused_before_anything_is_generated(run_cli, tmp_path,
                                                                        monkeypatch):
    """The refusal comes from the checked module: no OpenCL generated (the runtime's own
    refusal comes after generating every kernel), no reference.py run, no device."""
    import importlib

    from mcl.opencl import commands, runtime
    generate = importlib.import_module("mcl.opencl.generate")

    def not_now(*args, **kwargs):
        raise AssertionError("called before the several kernels were refused")
    monkeypatch.setattr(generate._KernelGen, "run", not_now)
    monkeypatch.setattr(generate, "generate", not_now)
    monkeypatch.setattr(runtime, "compile", not_now)
    monkeypatch.setattr(commands, "load_reference", not_now)
    path = tmp_path / "two.mcpl"
    path.write_text(TWO_KERNELS)
    code, out, err = run_cli("run", "-t", "cpu", path, "--repeat", "1")
    assert code == 1 and not out, err
    assert "error: two.mcpl has several kernels (add, scale); mcl run runs one" in err
    assert "help: choose one with --function add (or --function scale)" in err
    assert "AssertionError" not in err and "internal error" not in err


def test_a_device_named_by_the_environment_says_so(opencl_device, run_cli, monkeypatch):
    monkeypatch.setenv("MCL_DEVICE", "no-such-device")
    code, _, err = run_cli("run", HOPPER, "--set", "n=100", "--repeat", "1")
    assert code == 1
    assert "no OpenCL device matches MCL_DEVICE='no-such-device'" in err
    assert "unset MCL_DEVICE" in err
    code, _, err = run_cli("run", HOPPER, "--set", "n=100", "--repeat", "1",
                           "--device", "no-such-device")
    assert code == 1
    assert "no OpenCL device matches 'no-such-device'" in err and "MCL_DEVICE" not in err


def test_compile_refuses_several_kernels_before_generating_any(tmp_path, monkeypatch):
    """mcl.compile of a module of several kernels without function=: an error naming
    them, before any kernel is generated (the generator's per-kernel step never runs)."""
    import importlib

    import pytest

    import mcl
    from mcl.diagnostics import McplError
    G = importlib.import_module("mcl.opencl.generate")   # the module, not the function
    two = tmp_path / "two.mcpl"
    two.write_text(TWO_KERNELS)

    def generated(*args, **kwargs):
        raise AssertionError("a kernel was generated before the several kernels were refused")
    monkeypatch.setattr(G, "_KernelGen", generated)
    with pytest.raises(McplError) as e:
        mcl.compile(two, target="cpu")
    assert e.value.diagnostics[0].code == "opencl-several-kernels"
    assert "several kernels (add, scale)" in str(e.value)
