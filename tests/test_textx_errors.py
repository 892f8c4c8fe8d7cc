"""The syntax-error helpers shared by the textX grammars (mcl.textx_errors), on a
small grammar of their own, and their use by MCPL, Lift and HDL."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from textx import metamodel_from_str
from textx.exceptions import TextXSyntaxError

from mcl import textx_errors
from mcl.diagnostics import LineIndex

GRAMMAR = """
Model: statements*=Statement;
Statement: name=ID '=' value=INT unit=Unit? ';';
Unit: /[a-z]+/;
Comment: /\\/\\/.*$/;
"""
TOKENS = re.compile(r"//[^\n]*|[A-Za-z_]\w*|\d+|\S")


@pytest.fixture(scope="module")
def mm():
    return metamodel_from_str(GRAMMAR)


def failure(mm, text: str) -> TextXSyntaxError:
    with pytest.raises(TextXSyntaxError) as e:
        mm.model_from_str(text)
    return e.value


def test_expected_rules_in_words(mm):
    e = failure(mm, "a = 1 B")
    words = textx_errors.describe_expected(e.expected_rules, {"Unit": "a unit"})
    assert words == ["a unit", "';'"]
    assert textx_errors.describe_expected(e.expected_rules, {"Unit": "a unit"},
                                          noise=("a unit",)) == ["';'"]
    # a rule without words is named as it is; a function may give the words
    assert textx_errors.describe_expected(failure(mm, "a =").expected_rules) == ["INT"]
    assert textx_errors.describe_expected(failure(mm, "a = 1; =").expected_rules,
                                          {"ID": "a name"}.get) == \
        ["a name", "the end of the file"]


@pytest.mark.parametrize("text, after", [
    ("a = 1\nb = 2;\n", "1"),                 # the next line's first token
    ("a = 1 // why\nb = 2;\n", "1"),          # a comment is no token
    ("a = 1\nkg = 2;\n", "1"),                # 'kg' was read as a unit of 1
    ("a = 1 kg = 2;\n", None),                # on the same line: where it is found
    ("a = 1;\nb = 2 kg c = 3;\n", None),
])
def test_missing_semicolon(mm, text, after):
    e = failure(mm, text)
    offset = textx_errors.error_offset(e, text)
    m = textx_errors.missing_semicolon(text, offset, TOKENS, mm.model_from_str)
    assert (m.group() if m else None) == after
    if m:
        assert LineIndex(text).position(m.end()) == (1, 6)


def test_operand_before():
    for line, operand in [("x = b[i]", "b[i]"), ("x = f(a, g(b))", "f(a, g(b))"),
                          ("x = a[i][j]", "a[i][j]"), ("x = 1024", "1024"),
                          ("x = (a + b)", "(a + b)"), ("x = a)", ")")]:
        last = list(TOKENS.finditer(line))[-1]
        assert textx_errors.operand_before(line, last, TOKENS) == operand


def test_end_of_file_span():
    span = textx_errors.end_of_file_span("a = 1\n  b\n\n \n", "f")
    assert (span.line, span.column) == (2, 4)
    span = textx_errors.end_of_file_span(" \n", "f")
    assert (span.line, span.column) == (1, 1)


@pytest.mark.parametrize("module", ["mcl/mcpl/builder.py", "mcl/lift/syntax.py",
                                    "mcl/hdl/syntax.py"])
def test_no_grammar_borrows_private_names_of_another(module):
    own = module.split("/")[1]
    tree = ast.parse(Path(__file__).parents[1].joinpath(module).read_text())
    borrowed = [f"{n.module}.{a.name}" for n in ast.walk(tree)
                if isinstance(n, ast.ImportFrom) and (n.module or "").startswith("mcl.")
                and n.module.split(".")[1] != own
                for a in n.names if a.name.startswith("_")]
    assert borrowed == []
