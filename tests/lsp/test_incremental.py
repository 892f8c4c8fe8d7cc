"""The incremental parser of the language server gives the AST and syntax errors a
parse of the whole buffer gives, and re-uses functions that did not change."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcl.diagnostics import McplError
from mcl.lsp.analysis import analyse
from mcl.lsp.incremental import IncrementalParser, split
from mcl.mcpl import parse

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").rglob("*.mcpl"))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: str(p.relative_to(ROOT)))
def test_items_parsed_alone_equal_the_whole_parse(path):
    text = path.read_text()
    assert split(text) is not None
    module, errors = IncrementalParser().parse(text, str(path))
    full = parse(text, str(path))
    assert not errors
    # spans take part in ==: positions are exactly those of the whole parse
    assert module.functions == full.functions and module.types == full.types
    assert module.imports == full.imports


def test_a_moved_function_is_reused_and_shifted():
    path = ROOT / "examples" / "matmul" / "gpu.mcpl"
    text = path.read_text()
    two = text + "\n" + text[text.index("gpu void"):].replace("void matmul(", "void other(")
    parser = IncrementalParser()
    parser.parse(two, str(path))
    moved = two.replace("module matmul_gpu;", "module matmul_gpu;\n\n")
    module, errors = parser.parse(moved, str(path))
    assert not errors
    assert module.functions == parse(moved, str(path)).functions


def test_syntax_errors_are_those_of_the_whole_parse():
    path = ROOT / "examples" / "matmul" / "gpu.mcpl"
    text = path.read_text().replace("c[i, j] = sum;", "c[i, j] = sum")
    _, errors = IncrementalParser().parse(text, str(path))
    with pytest.raises(McplError) as e:
        parse(text, str(path))
    assert [d.span for d in errors] == [d.span for d in e.value.diagnostics]


def test_a_broken_buffer_still_has_a_module_for_symbols_and_completion():
    path = ROOT / "examples" / "matmul" / "gpu.mcpl"
    text = path.read_text().replace("int i = bi;", "int i = bi +;")
    a = analyse(str(path), text, "mcpl", parser=IncrementalParser())
    assert not a.parses and [d.code for d in a.diagnostics] == ["mcpl-syntax"]
    assert a.module is not None and a.module.function("matmul") is not None
