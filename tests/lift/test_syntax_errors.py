"""Syntax and name errors of Lift programs: what was expected in words (never the
grammar's regular expressions), located inside the file (at its end: just after the
last character), rendered with the source line and a caret like MCPL's."""

from __future__ import annotations

import re

import pytest
from conftest import PROGRAMS

from mcl.diagnostics import McplError, SourceCache, render_text
from mcl.lift.parser import parse

PAREN = """userfun add(a: float, b: float): float = a + b

sum = fun(x: float[N]) =>
  reduce(add, 0.0f $ x
"""

#: Signs of a regular expression of the grammar leaking into a message.
REGEX = re.compile(r"\\|\(\?|\[[^\]']*[-^][^\]']*\]|\|")


def _error(text: str, file: str = "t.lift"):
    with pytest.raises(McplError) as e:
        parse(text, file)
    return e.value.diagnostics[0]


def test_a_missing_paren_at_the_end_of_the_file():
    d = _error(PAREN, "paren.lift")
    assert d.code == "lift-syntax"
    assert d.message.startswith("syntax error: expected ')' or ','")
    assert "an operator" in d.message and d.message.endswith("found the end of the file")
    assert not REGEX.search(d.message), d.message
    # just after the last character of the 4-line file, not on a line 5
    assert (d.span.line, d.span.column) == (4, 23)
    text = render_text([d], SourceCache({"paren.lift": PAREN}))
    assert text.splitlines()[0].startswith("paren.lift:4:23: error: syntax error:")
    assert "     4 |   reduce(add, 0.0f $ x" in text
    assert "       |                       ^" in text


@pytest.mark.parametrize("text, expected, found, where", [
    ("s = fun(x: float[N]) => map( $ x", "expected ')' or an expression", "'$'", (1, 30)),
    ("userfun f(x: float): float = x +\n", "expected an expression",
     "the end of the file", (1, 33)),
    ("s = fun(x: float[N]) => ma p(f) $ x\n", "expected '='", "'('", (1, 29)),
])
def test_syntax_errors_say_what_was_expected_in_words(text, expected, found, where):
    d = _error(text)
    assert expected in d.message and d.message.endswith(f"found {found}"), d.message
    assert (d.span.line, d.span.column) == where


@pytest.mark.parametrize("name", ["gemv", "stencil"])
def test_no_prefix_of_a_program_gives_a_regex_or_a_location_outside_the_file(name):
    text = (PROGRAMS / f"{name}.lift").read_text()
    lines = text.splitlines()
    seen = 0
    for cut in range(1, len(text), 3):
        prefix = text[:cut]
        try:
            parse(prefix, "p.lift")
        except McplError as e:
            d = e.diagnostics[0]
            if d.code != "lift-syntax":
                continue
            seen += 1
            assert not REGEX.search(d.message), (prefix, d.message)
            assert " Not " not in d.message    # textX's name of a lookahead (!Keyword)
            assert 1 <= d.span.line <= len(prefix.splitlines() or [""]) <= len(lines)
            assert d.span.column <= len(prefix.splitlines()[d.span.line - 1]) + 1
    assert seen > 20


def test_an_undeclared_variable_of_a_userfun_is_located_at_its_name():
    d = _error("userfun f(x: float): float = x + z\nmain = fun(x: float[N]) => map(f) $ x\n")
    assert d.code == "lift-name" and "'z'" in d.message
    assert (d.span.line, d.span.column, d.span.end_column) == (1, 34, 35)
    assert "parameters: x" in d.hint


def test_an_unknown_function_of_a_userfun_is_located_at_its_name():
    d = _error("userfun f(x: float): float =\n  x + foo(x)\nmain = fun(x: float[N]) => "
               "map(f) $ x\n")
    assert d.code == "lift-name" and "'foo'" in d.message
    assert (d.span.line, d.span.column, d.span.end_column) == (2, 7, 10)


def test_an_empty_file_defines_no_program(run_cli, tmp_path):
    f = tmp_path / "empty.lift"
    f.write_text("")
    code, _, err = run_cli("lift", "check", f)
    assert code == 1 and "defines no program" in err and "internal error" not in err


def test_cli_renders_the_excerpt(run_cli, tmp_path):
    f = tmp_path / "paren.lift"
    f.write_text(PAREN)
    code, out, err = run_cli("lift", "check", f)
    assert code == 1
    assert f"{f}:4:23: error: syntax error: expected ')'" in err
    assert "  reduce(add, 0.0f $ x" in err and "^" in err


@pytest.mark.parametrize("text, where", [
    ("userfun add(x: float, y: float): float = x + y\n"
     "g = fun(x: float[N]) => reduce(add, 0.0f) x\n", (2, 43)),
    ("userfun add(x: float, y: float): float = x + y\n"
     "g = fun(x: float[N]) =>\n  reduce(add, 0.0f)\n  x // the input\n", (4, 3)),
])
def test_a_missing_dollar_is_named_at_the_data_not_at_the_end_of_the_file(text, where):
    d = _error(text)    # (was: expected '=', found the end of the file)
    assert d.message == ("syntax error: expected '$' before 'x' (to apply a function to "
                         "it) or '=' after it (to define 'x')")
    assert (d.span.line, d.span.column) == where
    assert "f $ x" in d.hint


def test_a_dot_for_composition_gets_the_hint_of_o():
    d = _error("userfun add(x: float, y: float): float = x + y\n"
               "g = fun(x: float[N]) => reduce(add, 0.0f) . map(fun(v) => v) $ x\n")
    assert d.message.endswith("found '.'") and (d.span.line, d.span.column) == (2, 43)
    assert "composed with 'o'" in d.hint
