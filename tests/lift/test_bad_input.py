"""Bad input to the `mcl lift` commands and to mcl.lift's Python API: each is said
with what was wrong (and where, when there is a place), a non-zero exit status and
no Python traceback; none gives output that looks right and is not."""

from __future__ import annotations

import pytest
from conftest import PROGRAMS

from mcl.diagnostics import McplError

SUM = PROGRAMS / "sum.lift"
SUM_TEXT = SUM.read_text()


# ------------------------------------------------------------------ files


@pytest.mark.parametrize("command", ["check", "print", "rewrite", "gen", "explore"])
def test_a_program_that_is_not_utf8_is_located_not_a_traceback(run_cli, tmp_path, command):
    f = tmp_path / "latin1.lift"
    f.write_bytes(SUM_TEXT.encode().replace(b"\n", b"\n// caf\xe9\n", 1))
    code, out, err = run_cli("lift", command, f)
    assert code == 1 and out == "" and "Traceback" not in err
    assert f"{f}:2:7: error: this file is not UTF-8 text (byte 0xe9)" in err


def test_a_byte_order_mark_is_not_part_of_the_program(run_cli, tmp_path):
    f = tmp_path / "bom.lift"
    f.write_bytes(b"\xef\xbb\xbf" + SUM_TEXT.encode())
    code, out, err = run_cli("lift", "check", f)
    assert code == 0 and ": sum(x: float[N]) : float[1]" in out, err


def test_parse_file_says_a_file_is_not_utf8(tmp_path):
    from mcl.lift.parser import parse_file
    f = tmp_path / "api.lift"
    f.write_bytes(b"\xff" + SUM_TEXT.encode())
    with pytest.raises(McplError) as e:
        parse_file(f)
    [d] = e.value.diagnostics
    assert d.code == "lift-encoding" and (d.span.line, d.span.column) == (1, 1)
