"""`mcl translate` on odd command lines a new user may give: the output naming the
kernel itself, a level that moves no function."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.translate.helpers import EXAMPLES

VECTOR_ADD = EXAMPLES / "vector_add" / "perfect.mcpl"


def _run(run_cli, *argv):
    code, out, err = run_cli("translate", *argv)
    assert "Traceback" not in out + err
    return code, out, err


def test_output_naming_the_kernel_itself_is_refused_and_the_source_kept(run_cli,
                                                                        tmp_path: Path):
    kernel = tmp_path / "perfect.mcpl"
    shutil.copy(VECTOR_ADD, kernel)
    before = kernel.read_text()
    for output in (kernel, tmp_path / "." / "perfect.mcpl"):
        code, out, err = _run(run_cli, "--to", "gpu", kernel, "-o", output)
        assert code == 2 and out == ""
        assert "it is the kernel being translated" in err
        assert "-o " + str(tmp_path / "perfect_gpu.mcpl") in err
    assert kernel.read_text() == before


MIXED = """\
module mixed;

import perfect;
import gpu;

perfect void scale(const int n = 100, float[n] a, float[n] b) {
  foreach (int i in n threads) {
    a[i] = 2.0 * b[i];
  }
}

gpu void add(const int n = 100, dev float[n] c, dev float[n] x) {
  foreach (int bi in (n + 31) / 32 blocks) {
    foreach (int ti in 32 threads) {
      int i = bi * 32 + ti;
      if (i < n) {
        c[i] = c[i] + x[i];
      }
    }
  }
}
"""


def test_a_level_that_moves_no_function_of_a_mixed_module_is_an_error(run_cli,
                                                                       tmp_path: Path):
    kernel = tmp_path / "mixed.mcpl"
    kernel.write_text(MIXED)
    output = tmp_path / "out.mcpl"
    code, out, err = _run(run_cli, "--to", "perfect", kernel, "-o", output)
    assert code == 1 and not output.exists()
    assert f"{kernel}:6:1: error: no function of module 'mixed' moves to 'perfect': " \
           "'scale' is written for 'perfect' already and 'add' (gpu) is not above it" \
           in out + err
    # a level that one of them reaches still translates it
    code, out, err = _run(run_cli, "--to", "gpu", kernel)
    assert code == 0 and "gpu void scale(" in out and "gpu void add(" in out


def _line_ends(data: bytes) -> set[bytes]:
    """The line terminators ``data`` uses: b"\\r\\n", b"\\n" or both."""
    return {b"\r\n" if data[i - 1:i] == b"\r" else b"\n"
            for i, c in enumerate(data) if c == ord("\n")}


def test_a_crlf_kernel_is_translated_with_crlf_line_ends_only(run_cli, tmp_path: Path):
    # The source's comments kept their "\r" and the printed lines had none: every
    # comment line ended in CRLF, every other line in LF.
    kernel = tmp_path / "perfect.mcpl"
    kernel.write_bytes(VECTOR_ADD.read_bytes().replace(b"\n", b"\r\n")
                       + b"/* a block\r\n   comment */\r\n")
    code, out, err = _run(run_cli, "--to", "gpu", kernel)
    assert code == 0, err
    assert _line_ends(out.encode()) == {b"\r\n"}
    assert "\r\r" not in out and "/* a block\r\n   comment */\r\n" in out
    output = tmp_path / "gpu.mcpl"
    code, _, err = _run(run_cli, "--to", "gpu", kernel, "-o", output)
    assert code == 0, err
    assert output.read_bytes() == out.encode()
    # an LF kernel stays LF
    code, out, err = _run(run_cli, "--to", "gpu", VECTOR_ADD)
    assert code == 0, err
    assert _line_ends(out.encode()) == {b"\n"}


def _windows_text_files(monkeypatch) -> None:
    """Files opened for writing text as on Windows: newline=None (the default) writes
    each "\\n" as "\\r\\n"; newline="" writes the text as it is."""
    import builtins
    import io

    real = io.open

    def open_(file, mode="r", buffering=-1, encoding=None, errors=None, newline=None,
              closefd=True, opener=None):
        if "b" not in mode and set(mode) & set("wax+") and newline is None:
            newline = "\r\n"
        return real(file, mode, buffering, encoding, errors, newline, closefd, opener)

    monkeypatch.setattr(io, "open", open_)
    monkeypatch.setattr(builtins, "open", open_)


def test_output_files_get_the_line_ends_of_the_result_on_windows_too(run_cli, tmp_path: Path,
                                                                     monkeypatch):
    # write_output_file wrote text with the platform's newline translation: on Windows
    # a translated CRLF kernel was written with "\r\r\n", an LF one with CRLF
    kernel = tmp_path / "perfect.mcpl"
    kernel.write_bytes(VECTOR_ADD.read_bytes().replace(b"\n", b"\r\n"))
    crlf, lf = tmp_path / "crlf_gpu.mcpl", tmp_path / "lf_gpu.mcpl"
    _windows_text_files(monkeypatch)
    code, _, err = _run(run_cli, "--to", "gpu", kernel, "-o", crlf)
    assert code == 0, err
    code, _, err = _run(run_cli, "--to", "gpu", VECTOR_ADD, "-o", lf)
    assert code == 0, err
    monkeypatch.undo()
    assert _line_ends(crlf.read_bytes()) == {b"\r\n"} and b"\r\r" not in crlf.read_bytes()
    assert _line_ends(lf.read_bytes()) == {b"\n"}
    assert crlf.read_bytes() == lf.read_bytes().replace(b"\n", b"\r\n")
    # the same without the emulation: the bytes the command prints
    _, out, _ = _run(run_cli, "--to", "gpu", kernel)
    assert crlf.read_bytes() == out.encode()


def _windows_stdout(monkeypatch):
    """Standard output as on Windows: a text layer that writes "\\n" as "\\r\\n", over
    bytes; returns the bytes."""
    import io
    import sys

    raw = io.BytesIO()
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(raw, encoding="utf-8",
                                                        newline="\r\n"))
    return raw


def test_a_crlf_translation_on_a_windows_stdout_is_crlf_not_cr_cr_lf(tmp_path: Path,
                                                                     monkeypatch):
    # print() of the CRLF result went through the text layer, which wrote each "\r\n"
    # as "\r\r\n" on Windows
    import sys

    from mcl.cli import main

    kernel = tmp_path / "perfect.mcpl"
    kernel.write_bytes(VECTOR_ADD.read_bytes().replace(b"\n", b"\r\n"))
    expected = tmp_path / "gpu.mcpl"
    assert main(["translate", "--to", "gpu", str(kernel), "-o", str(expected)]) == 0
    raw = _windows_stdout(monkeypatch)
    assert main(["translate", "--to", "gpu", str(kernel)]) == 0
    sys.stdout.flush()
    assert raw.getvalue() == expected.read_bytes()
    assert _line_ends(raw.getvalue()) == {b"\r\n"} and b"\r\r" not in raw.getvalue()
    # an LF result is printed through the text layer, as before: the platform's line
    # ends on a Windows stdout (CRLF), LF elsewhere
    raw = _windows_stdout(monkeypatch)
    assert main(["translate", "--to", "gpu", str(VECTOR_ADD)]) == 0
    sys.stdout.flush()
    assert _line_ends(raw.getvalue()) == {b"\r\n"} and b"\r\r" not in raw.getvalue()
