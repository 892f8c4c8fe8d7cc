"""Bad input never crashes the front end: unreadable, empty, huge and mutated files."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcl.mcpl import check

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").rglob("*.mcpl"))
TOKEN = re.compile(r"//[^\n]*|[A-Za-z_]\w*|\d+(?:\.\d*)?f?|<<=|>>=|[-+*/%&|^<>=!]=|&&|\|\||"
                   r"\+\+|--|\S")


def test_missing_file():
    c = check("/no/such/file.mcpl")
    assert [d.code for d in c.diagnostics] == ["mcpl-file"]


def test_not_utf8(tmp_path):
    f = tmp_path / "latin1.mcpl"
    f.write_bytes(b"module m;\n// caf\xe9\n")
    (d,) = check(f).diagnostics
    assert d.code == "mcpl-encoding" and (d.span.line, d.span.column) == (2, 7)
    assert "UTF-8" in d.hint


@pytest.mark.parametrize("text, what", [
    ("", "the file is empty:"), ("\n  \n", "the file is empty:"),
    ("// to do\n/* later */\n", "the file is empty but for comments:"),
])
def test_empty_file(tmp_path, text, what):
    f = tmp_path / "empty.mcpl"
    f.write_text(text)
    (d,) = check(f).diagnostics
    assert d.code == "mcpl-syntax" and (d.span.line, d.span.column) == (1, 1)
    # says what is wrong and what the grammar wants first, not a list of expected tokens
    assert d.message.startswith(what) and "`module NAME;`" in d.message
    assert "`package NAME;`" in d.message and "expected" not in d.message


def test_expected_tokens_do_not_mention_comments():
    d = check("m.mcpl", source="// a kernel\nfoo bar;").diagnostics[0]
    assert d.message == "syntax error: expected 'package' or 'module', found 'foo'"


def test_directory(tmp_path):
    assert check(tmp_path).diagnostics[0].code == "mcpl-file"


@pytest.fixture
def commands_recursion_limit():
    """The recursion limit mcl's commands run with (mcl.cli.DEEPEST), as after main()."""
    import sys

    from mcl.cli import DEEPEST
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, DEEPEST))
    yield
    sys.setrecursionlimit(old)


@pytest.mark.parametrize("depth, code", [(400, None), (5000, "mcpl-syntax"),
                                         (50_000, "mcpl-syntax")])
def test_deep_nesting_is_parsed_or_a_diagnostic(commands_recursion_limit, depth, code):
    """400 parentheses deep is a program like another under the commands' recursion
    limit; far deeper input is a diagnostic, not a crash."""
    src = "module m;\nimport perfect;\nperfect void f() { int x = " + "(" * depth + "1" + \
        ")" * depth + "; }\n"
    c = check("deep.mcpl", source=src)
    assert [d.code for d in c.diagnostics][:1] == ([code] if code else [])


@pytest.mark.slow  # about 8 s: textX needs that long for 10 000 lines (see benchmarks/)
def test_huge_module(tmp_path):
    fn = ("perfect void k{0}(int n, main float[n] a) {{\n"
          "    foreach (int i in n threads) {{\n        a[i] = a[i] * 2.0 + {0};\n    }}\n}}\n")
    text = "module big;\nimport perfect;\n" + "".join(fn.format(k) for k in range(2000))
    assert text.count("\n") >= 10_000
    f = tmp_path / "big.mcpl"
    f.write_text(text)
    c = check(f)
    assert c.diagnostics == [] and len(c.module.functions) == 2000


def test_cli_check(run_cli, tmp_path):
    code, out, err = run_cli("check", *EXAMPLES[:3])
    assert code == 0 and out == "" and err == "3 file(s) checked: no errors\n"
    bad = tmp_path / "bad.mcpl"
    bad.write_text("module m;\nimport perfect;\nperfect void f(int n) {\n"
                   "  foreach (int i in n threads) { q = 1; r = 2; }\n}\n")
    code, out, err = run_cli("check", bad)
    assert code == 1 and out.count("error:") == 2 and "bad.mcpl:4:34" in out
    assert err == "1 file(s) checked: 2 error(s), 0 warning(s)\n"
    code, out, err = run_cli("check", "--json", bad)
    assert code == 1 and '"code": "mcpl-undeclared"' in out and err == ""
    code, _, _ = run_cli("check", tmp_path / "missing.mcpl")
    assert code == 1


def test_cli_check_counts_infos_apart(run_cli, monkeypatch, tmp_path):
    """Infos (feedback, notes of the hardware library) are not warnings."""
    from mcl.diagnostics import info, warning
    from mcl.mcpl import resolve

    class Checked:
        def __init__(self, diagnostics):
            self.diagnostics = diagnostics

    shown = [info("x-info", "for your information"), warning("x-warn", "careful")]
    monkeypatch.setattr(resolve, "check", lambda f, path=None: Checked(shown[:1]))
    assert run_cli("check", "a.mcpl")[2] == "1 file(s) checked: no errors, 1 info\n"
    monkeypatch.setattr(resolve, "check", lambda f, path=None: Checked(shown))
    assert run_cli("check", "a.mcpl")[2] == \
        "1 file(s) checked: no errors, 1 warning(s), 1 info\n"


def test_a_broken_hardware_description_is_one_error(run_cli, tmp_path):
    """The import of a description with a syntax error is reported once; what only
    follows from its absence (not imported, no default memory space) is not."""
    text = (ROOT / "mcl" / "hwdescs" / "gpu.hdl").read_text()
    assert "max_nr_units = 1024;" in text
    (tmp_path / "gpu.hdl").write_text(text.replace("max_nr_units = 1024;",
                                                   "max_nr_units = 1024", 1))
    kernel = ROOT / "examples" / "matmul" / "gpu.mcpl"
    c = check(kernel, [tmp_path])
    assert [d.code for d in c.diagnostics] == ["mcpl-bad-hardware"]
    (note,) = c.diagnostics[0].related
    assert note.message == "syntax error: expected ';' after '1024' [hdl-syntax]"
    for command in ("check", "feedback"):
        code, out, _ = run_cli(command, "--hwd-path", tmp_path, kernel)
        assert code == 1 and out.count(": error: ") == 1 and "mcpl-bad-hardware" in out


@st.composite
def mutated(draw):
    path = draw(st.sampled_from(EXAMPLES))
    tokens = TOKEN.findall(path.read_text())
    for _ in range(draw(st.integers(1, 3))):
        if not tokens:
            break
        i = draw(st.integers(0, len(tokens) - 1))
        kind = draw(st.sampled_from(["delete", "duplicate", "swap"]))
        if kind == "delete":
            del tokens[i]
        elif kind == "duplicate":
            tokens.insert(i, tokens[i])
        elif i + 1 < len(tokens):
            tokens[i], tokens[i + 1] = tokens[i + 1], tokens[i]
    return str(path), "\n".join(tokens)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_mutated_examples_never_raise(case):
    path, text = case
    result = check(path, source=text)  # any exception here is a bug
    for d in result.diagnostics:
        assert d.span is None or d.span.line >= 1


@pytest.mark.parametrize("default, type_, says", [
    ("99999999999", "int", "the example value 99999999999 of 'n' does not fit its type 'int' "
                           "(-2147483648 .. 2147483647)"),
    ("-3000000000", "int", "the example value -3000000000 of 'n' does not fit its type 'int'"),
    ("2.5", "int", "the example value 2.5 of 'n' is no whole number: 'n' is an int parameter"),
    ("2.5", "long", "the example value 2.5 of 'n' is no whole number"),
    ("1e40", "float", "does not fit its type 'float'"),
])
def test_a_parameter_default_its_type_cannot_hold_is_an_error(default, type_, says):
    """An example value beyond the parameter's type was accepted (a default of
    99999999999 made `mcl feedback` run for minutes); it is an error at the default."""
    text = (f"module m;\nimport perfect;\nperfect void f(const {type_} n = {default}, "
            "float[10] a) {\n  foreach (int i in 10 threads) { a[i] = 1.0; }\n}\n")
    errors = [d for d in check("m.mcpl", source=text).diagnostics if d.is_error]
    assert [d.code for d in errors] == ["mcpl-bad-default"], errors
    assert says in errors[0].message
    column = text.splitlines()[2].index(default) + 1
    assert (errors[0].span.line, errors[0].span.column) == (3, column)


def test_parameter_defaults_that_fit_are_accepted():
    text = ("module m;\nimport perfect;\nperfect void f(const int n = 2147483647, "
            "const long k = 99999999999, const int c = 2.0, const float x = 0.5, "
            "float[10] a) {\n  foreach (int i in 10 threads) { a[i] = 1.0; }\n}\n")
    assert not [d for d in check("m.mcpl", source=text).diagnostics if d.is_error]


def test_a_file_without_its_module_line_is_told_to_start_with_one():
    """`import x;` first was told that 'import' cannot be used as a name."""
    (d,) = check("m.mcpl", source="import x;\n").diagnostics
    assert (d.span.line, d.span.column) == (1, 1)
    assert "reserved word" not in d.hint and "`module NAME;`" in d.hint


def test_a_reserved_word_where_a_name_is_expected_is_said_so():
    text = "module m;\nimport perfect;\nperfect void f(int import) {\n}\n"
    d = check("m.mcpl", source=text).diagnostics[0]
    assert d.hint == "'import' is a reserved word of MCPL and cannot be used as a name"


_CONSTANT_ACCESSES = """module m;
import perfect;
perfect void f(float[10] a) {
  foreach (int z in -4 threads) {
    float[2, 3] t;
    t[5, 0] = 1.0;
    t[-1, 0] = 2.0;
    t[1, 2] = 3.0;
    a[z] = t[1, 2];
  }
}
"""


def test_constant_indices_outside_the_array_and_a_negative_foreach_count_are_errors():
    """`t[5, 0]` of a float[2, 3], `t[-1, 0]` and `foreach (int z in -4 threads)` passed
    mcl check (feedback only warned of the indices; gen wrote the code)."""
    errors = [(d.code, d.span.line, d.span.column, d.message)
              for d in check("m.mcpl", source=_CONSTANT_ACCESSES).diagnostics if d.is_error]
    assert errors == [
        ("mcpl-bad-size", 4, 21, "the number of units of a foreach cannot be negative, not -4"),
        ("mcpl-index-range", 6, 7, "index 5 of 't' is outside its dimension (0 .. 1)"),
        ("mcpl-index-range", 7, 7, "index -1 of 't' is outside its dimension (0 .. 1)"),
    ]
