"""The Python API and the `mcl translate` command: structure of the paper's Fig. 9,
inputs left alone, functions of other levels kept, bad input as diagnostics."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcl.diagnostics import McplError
from mcl.hdl import HardwareLibrary
from mcl.mcpl import ast, parse, parse_file, print_module
from mcl.translate import translate, translate_function
from tests.translate.helpers import EXAMPLES

MATMUL = EXAMPLES / "matmul" / "perfect.mcpl"


def _foreach_chain(s: ast.Stmt) -> list[ast.ForEach]:
    out = []
    while isinstance(s, ast.ForEach):
        out.append(s)
        body = s.body.statements
        s = next((x for x in body if isinstance(x, ast.ForEach)), None)
    return out


def test_matmul_perfect_to_gpu_has_the_structure_of_figure_9():
    f = translate(parse_file(MATMUL), "gpu").function("matmul")
    stmts = f.body.statements
    threads, blocks = stmts[0], stmts[1]
    assert isinstance(threads, ast.Declaration) and threads.name == "nrThreadsM"
    assert threads.init == ast.HwdRef(("gpu", "hierarchy", "blocks", "block", "threads",
                                       "max_nr_units"))
    assert isinstance(blocks, ast.Declaration) and blocks.name == "nrBlocksM"
    loops = _foreach_chain(stmts[2])
    assert [(x.var.name, x.group) for x in loops] == [("bi", "blocks"), ("bj", "blocks"),
                                                      ("tj", "threads")]
    assert ast.same(loops[0].size, ast.Name("n"))
    assert ast.same(loops[1].size, ast.Name("nrBlocksM"))
    inner = loops[2].body.statements
    assert ast.same(inner[0], ast.Declaration(ast.Type("int"), "i", init=ast.Name("bi")))
    assert ast.same(inner[1], parse("module x; perfect void f() { int j = bj * nrThreadsM + tj; }"
                                    ).functions[0].body.statements[0])
    guard = inner[2]
    assert isinstance(guard, ast.If)
    assert ast.same(guard.cond, ast.Binary("<", ast.Name("j"), ast.Name("m")))
    # the statements of Fig. 2 are kept inside the guard
    original = parse_file(MATMUL).function("matmul")
    body = original.body.statements[0].body.statements[0].body.statements
    assert ast.same(guard.then.statements, body)


def test_input_is_not_modified():
    module = parse_file(MATMUL)
    before = print_module(module)
    snapshot = parse_file(MATMUL)
    for to in ("accelerator", "gpu", "fermi", "xeon_phi"):
        translate(module, to)
    assert print_module(module) == before
    assert module == snapshot


def test_translate_to_own_level_is_the_identity():
    module = parse_file(MATMUL)
    assert ast.same(translate(module, "perfect"), module)


def test_translate_accepts_a_path():
    assert ast.same(translate(MATMUL, "gpu"), translate(parse_file(MATMUL), "gpu"))


TWO_LEVELS = """
module two;
import perfect;
import mic;
perfect void add(const int n = 8, main float[n] a) {
    foreach (int i in n threads) {
        a[i] = a[i] + 1.0;
    }
}
mic void twice(const int n = 8, dev float[n] a) {
    foreach (int i in n threads) {
        foreach (int v in 16 vectors) {
            a[i] = a[i] * 2.0;
        }
    }
}
"""


def test_functions_not_on_the_path_stay():
    module = parse(TWO_LEVELS, "two.mcpl")
    result = translate(module, "fermi")
    assert result.function("add").hardware == "fermi"
    assert ast.same(result.function("twice"), module.function("twice"))
    assert [i.dotted for i in result.imports] == ["fermi", "mic"]


def test_nested_foreach_of_another_group_and_memory_spaces():
    src = """
module m;
import gpu;
gpu void k(const int n = 64, dev float[n] a) {
    foreach (int b in 4 blocks) {
        local float[256] l;
        foreach (int t in 256 threads) {
            reg float[2] r;
            l[t] = a[b];
            barrier(local);
            a[b] = l[255 - t];
        }
    }
}
"""
    text = print_module(translate(parse(src, "m.mcpl"), "fermi"))
    assert "shared float[256] l;" in text
    assert "barrier(shared);" in text
    assert "global float[n] a" in text
    assert "reg float[2] r;" in text
    # 256 threads are 8 warps of exactly 32: known to divide, so no guard
    assert "if (" not in text
    assert "const int nrWarpsT = 256 / nrThreadsT;" in text


def test_no_path_is_a_diagnostic_at_the_function():
    module = parse(TWO_LEVELS.replace("perfect void add", "mic void add").replace(
        "main float", "dev float"), "two.mcpl")
    with pytest.raises(McplError) as e:
        translate(module, "fermi")
    d = e.value.diagnostics[0]
    assert d.code == "translate-no-path"
    assert d.span is not None and d.span.file == "two.mcpl" and d.span.line > 0
    assert d.hint


def test_no_path_up_to_the_top_level_says_nothing_is_above_it():
    with pytest.raises(McplError) as e:
        translate(EXAMPLES / "matmul" / "gpu.mcpl", "perfect")
    hint = e.value.diagnostics[0].hint
    assert "'perfect' is the top of the hierarchy" in hint and "no level" not in hint
    assert "translate to a level below 'gpu'" in hint

def test_translate_function_without_path():
    f = parse(TWO_LEVELS, "two.mcpl").function("twice")
    with pytest.raises(McplError) as e:
        translate_function(f, "gpu")
    assert e.value.diagnostics[0].code == "translate-no-path"


def test_unknown_target():
    with pytest.raises(McplError) as e:
        translate(parse_file(MATMUL), "fermy")
    d = e.value.diagnostics[0]
    assert d.code == "hdl-unknown-description"
    assert "fermi" in (d.hint or "")


BAD_CHILD = """
hardware_description flat;
specializes gpu;

parallelism hierarchy {
  memory_space dev {
    default;
  }
  par_group threads {
    max_nr_units = 1024;
    par_unit thread {
      memory_space reg {
        default;
      }
    }
  }
}

device flat {
  mem;
}

memory mem {
  space(dev);
  capacity = 1 GB;
}
"""

NO_LOCAL = BAD_CHILD.replace("flat", "nolocal").replace("""  par_group threads {
    max_nr_units = 1024;
    par_unit thread {
      memory_space reg {
        default;
      }
    }
  }""", """  par_group blocks {
    max_nr_units = 65535;
    par_unit block {
      par_group threads {
        max_nr_units = 1024;
        par_unit thread {
          memory_space reg {
            default;
          }
        }
      }
    }
  }""")


@pytest.mark.parametrize(("text", "name", "code"), [
    (BAD_CHILD, "flat", "hdl-child-hierarchy"),
    (NO_LOCAL, "nolocal", "hdl-child-memory-space"),
])
def test_description_breaking_the_child_rules(tmp_path: Path, text, name, code, run_cli):
    (tmp_path / f"{name}.hdl").write_text(text)
    lib = HardwareLibrary([tmp_path])
    with pytest.raises(McplError) as e:
        translate(parse_file(EXAMPLES / "matmul" / "gpu.mcpl"), name, library=lib)
    d = next(d for d in e.value.diagnostics if d.code == code)
    assert d.hint and "par_group" in d.hint  # the rule is part of the message
    status, out, err = run_cli("translate", "--to", name, "--hwd-path", tmp_path,
                               EXAMPLES / "matmul" / "gpu.mcpl")
    assert status == 1 and code in out + err


# ------------------------------------------------------------------ the command


def test_cli_prints_the_translation(run_cli):
    status, out, _ = run_cli("translate", "--to", "gpu", MATMUL)
    assert status == 0
    assert out == print_module(translate(parse_file(MATMUL), "gpu"))


def test_cli_writes_a_file(run_cli, tmp_path: Path):
    out = tmp_path / "fermi.mcpl"
    status, stdout, _ = run_cli("translate", "--to", "fermi", "--assume-divisible", MATMUL,
                                "-o", out)
    assert status == 0 and stdout == ""
    assert "--assume-divisible" in out.read_text()
    status, _, _ = run_cli("check", out)
    assert status == 0


def test_cli_no_path_exit_1_with_location(run_cli):
    status, out, err = run_cli("translate", "--to", "gpu", EXAMPLES / "matmul" / "mic.mcpl")
    assert status == 1
    text = out + err
    assert "mic.mcpl:" in text and "can be translated to 'gpu'" in text


def test_cli_unknown_target(run_cli):
    status, out, err = run_cli("translate", "--to", "nosuchlevel", MATMUL)
    assert status == 1 and "unknown hardware description" in out + err


def test_cli_reports_errors_of_the_input(run_cli, tmp_path: Path):
    bad = tmp_path / "bad.mcpl"
    bad.write_text(MATMUL.read_text().replace("c[i, j] = sum;", "c[i, j] = summ;"))
    status, out, err = run_cli("translate", "--to", "gpu", bad)
    assert status == 1 and "summ" in out + err


def test_a_module_that_does_not_check_is_not_translated(tmp_path):
    """What mcl.check gives for a file with a syntax error holds no function: translate
    raises the errors (or says there is nothing to translate), never returns an empty
    module as if it had worked."""
    from mcl.mcpl import check
    src = (EXAMPLES / "vector_add" / "perfect.mcpl").read_text().replace("b[i];", "b[i]")
    (tmp_path / "broken.mcpl").write_text(src)
    checked = check(str(tmp_path / "broken.mcpl"))
    with pytest.raises(McplError) as e:
        translate(checked, to="gpu")
    assert e.value.diagnostics[0].code == "mcpl-syntax"
    with pytest.raises(McplError) as e:
        translate(checked.module, to="gpu")
    assert e.value.diagnostics[0].code == "translate-no-function"


def test_a_crlf_module_prints_with_crlf_line_ends_only(tmp_path: Path):
    # Comments kept the "\r" of their line and every printed line ended in "\n":
    # the translation of a CRLF file mixed CRLF (comment lines) and LF.
    kernel = tmp_path / "perfect.mcpl"
    kernel.write_bytes(MATMUL.read_bytes().replace(b"\n", b"\r\n"))
    lf = print_module(translate(MATMUL, "gpu"))
    assert "\r" not in lf
    for module in (parse_file(kernel), parse(kernel.read_bytes().decode()), kernel):
        assert print_module(translate(module, "gpu")) == lf.replace("\n", "\r\n")
