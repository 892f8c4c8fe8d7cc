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


# ------------------------------------------------------------------ sizes


SPLIT4 = ("userfun add(x: float, y: float): float = x + y\n"
          "p = fun(x: float[N]) => join o map(reduce(add, 0.0f)) o split(4) $ x\n")


@pytest.mark.parametrize("args", [["rewrite", "--list"], ["rewrite", "--rule", "map-to-mapGlb"],
                                  ["gen"], ["gen", "--rule", "map-to-mapGlb"]])
def test_a_size_a_split_does_not_divide_is_said_at_the_split(run_cli, tmp_path, args):
    """At N=10, split(4) does not type: rewrite --list printed no rewrite and exit 0,
    gen said the map was not lowered."""
    f = tmp_path / "split4.lift"
    f.write_text(SPLIT4)
    code, out, err = run_cli("lift", args[0], f, "--size", "N=10", *args[1:])
    assert code == 1 and out == "" and "Traceback" not in err
    assert f"{f}:2:57: error: split 4: 4 does not divide the array length 10" in err
    code, out, err = run_cli("lift", args[0], f, "--size", "N=12", *args[1:])
    assert "does not divide" not in err


# ------------------------------------------------------------------ explore's options


def test_a_negative_seed_is_refused(run_cli):
    """numpy takes no negative seed: it was an internal error once the search began."""
    code, out, err = run_cli("lift", "explore", SUM, "--size", "N=64", "--seed", "-1",
                             "--budget", "1")
    assert code == 2 and out == "" and "--seed: -1; give 0 or more" in err
    assert "Traceback" not in err
    from mcl.lift.explore import Evaluation, explore
    from mcl.lift.parser import parse_file
    from mcl.lift.rules import Limits
    with pytest.raises(McplError, match="seed -1: give 0 or more"):
        explore(parse_file(SUM), {"N": 64}, "random", budget=1, seed=-1, progress=False,
                limits=Limits(), evaluator=lambda p, ls: Evaluation("k", "e", "ok", 1.0, ls))


def test_inputs_larger_than_the_kernels_index_are_refused_before_they_are_made(run_cli):
    """N=99999999999: the random inputs (745 GiB) were a MemoryError traceback."""
    code, out, err = run_cli("lift", "explore", SUM, "--size", "N=99999999999",
                             "--budget", "1")
    assert code == 1 and "Traceback" not in err
    assert "'x' holds 99,999,999,999 elements at these sizes; the generated kernels index " \
           "with 32-bit integers" in err


def test_inputs_that_do_not_fit_in_memory_are_said(monkeypatch):
    from mcl.lift import explore_evaluate
    from mcl.lift.explore import Evaluator
    from mcl.lift.ir import bind_sizes
    from mcl.lift.parser import parse_file

    def no_memory(*_args, **_kwargs):
        raise MemoryError("Unable to allocate 8.00 GiB")
    monkeypatch.setattr(explore_evaluate, "random_inputs", no_memory)
    monkeypatch.setattr("mcl.opencl.device.runtime", lambda device=None: None)
    ev = Evaluator(bind_sizes(parse_file(SUM), {"N": 1 << 30}), {"N": 1 << 30})
    with pytest.raises(McplError, match="the inputs of 'sum' at N=1073741824 do not fit"):
        ev.setup()


@pytest.mark.skipif(not __import__("os").path.isdir("/proc/self"), reason="needs /proc")
def test_a_results_file_the_system_will_not_create_is_refused_before_the_search(run_cli):
    """Permissions allow root to write in /proc; the file was found missing only when
    the first candidate's result was saved."""
    code, out, err = run_cli("lift", "explore", SUM, "--size", "N=64", "--budget", "1",
                             "--results", "/proc/results.json")
    assert code == 1 and out == "" and "explore:" not in err
    assert "results file /proc/results.json cannot be written" in err


def test_explore_from_python_checks_the_program_at_its_sizes_and_the_results_path(tmp_path):
    """explore() searched split(4) at N=10 (every candidate ill-typed) and raised
    IsADirectoryError or FileNotFoundError at the first save of a results path that
    cannot be written."""
    from mcl.lift.explore import Evaluation, explore
    from mcl.lift.parser import parse
    from mcl.lift.rules import Limits

    def stand_in(prog, ls):
        return Evaluation("k", "e", "ok", 1.0, ls)
    options = dict(budget=1, progress=False, limits=Limits(), evaluator=stand_in)
    with pytest.raises(McplError, match="split 4: 4 does not divide the array length 10"):
        explore(parse(SPLIT4), {"N": 10}, "random", **options)
    with pytest.raises(McplError, match=f"results file {tmp_path} is a folder"):
        explore(parse(SPLIT4), {"N": 12}, "random", results_path=tmp_path, **options)
    assert explore(parse(SPLIT4), {"N": 12}, "random", **options).candidates()
