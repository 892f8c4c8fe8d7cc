"""The MCPL parser: every form of LANGUAGE.md section 2, precedence, comments, errors."""

from __future__ import annotations

import pytest

from mcl.diagnostics import McplError
from mcl.mcpl import ast, parse, print_expr


def body(src: str) -> tuple[ast.Stmt, ...]:
    return parse(f"module t;\nperfect void f() {{\n{src}\n}}\n").functions[0].body.statements


def expr(src: str) -> ast.Expr:
    s = body(f"x = {src};")[0]
    assert isinstance(s, ast.Assign)
    return s.value


def test_matmul_figure_2():
    m = parse("""
module matmul;
import perfect;

perfect void matmul(int n, int m, int p,
                    main float[n, m] c,
                    main float[n, p] a, main float[p, m] b) {
  foreach (int i in n threads) {
    foreach (int j in m threads) {
      float sum = 0.0;
      for (int k = 0; k < p; k++) {
        sum += a[i, k] * b[k, j];
      }
      c[i, j] = sum;
    }
  }
}
""", "mm.mcpl")
    assert m.name == "matmul" and m.imports[0].path == ("perfect",)
    f = m.functions[0]
    assert (f.hardware, f.name, f.return_type.name) == ("perfect", "matmul", "void")
    c = f.params[3]
    assert (c.space, c.type.name, c.name) == ("main", "float", "c")
    assert [[e.id for e in level] for level in c.type.dims] == [["n", "m"]]
    outer = f.body.statements[0]
    assert isinstance(outer, ast.ForEach) and outer.group == "threads"
    assert outer.var.name == "i" and outer.size == ast.Name("n", span=outer.size.span)
    assert outer.span.file == "mm.mcpl" and outer.span.line == 8 and outer.span.column == 3


def test_legacy_header_forms():
    m = parse("package a.b;\nmodule m\nexport f, g;\nimport perfect;\nimport lib.atomics;\n"
              "type point { float x; float y; }\n"
              "perfect void f(const int n = 2048, main point[n] ps) { }\n")
    assert m.package == "a.b" and m.exports == ("f", "g")
    assert m.imports[1].path == ("lib", "atomics")
    assert m.types[0].fields[1].name == "y"
    p = m.functions[0].params[0]
    assert p.const and p.default == ast.Literal(2048, span=p.default.span)


def test_declarations_split_words():
    stmts = body("shared float[x][n] l_a; float s; mytype r; local mytype q; const int k = 2;"
                 "reg float[4] v as float[2][2] v2 as float[4] v3;")
    d = stmts[0]
    assert (d.space, d.type.name, d.name, len(d.type.dims)) == ("shared", "float", "l_a", 2)
    assert (stmts[1].space, stmts[1].name) == (None, "s")
    assert (stmts[2].type.name, stmts[2].name) == ("mytype", "r")
    assert (stmts[3].space, stmts[3].type.name) == ("local", "mytype")
    assert stmts[4].const and stmts[4].init.value == 2
    assert [v.name for v in stmts[5].views] == ["v2", "v3"]


def test_statements():
    s = body("a as float[nb, k][ts, t] a2; barrier(local); x++; --y; x <<= 2; f(a, b);"
             "while (x) break; if (a) continue; else return; return x;"
             "foreach (reg int i in n threads) ;")
    kinds = [type(x).__name__ for x in s]
    assert kinds == ["AsStatement", "Barrier", "IncDec", "IncDec", "Assign", "ExprStmt",
                     "While", "If", "Return", "ForEach"]
    assert s[0].views[0].type.dims[1][0].id == "ts"
    assert s[3].op == "--" and s[4].op == "<<="
    assert isinstance(s[6].body, ast.Break)
    assert s[9].var.space == "reg" and s[9].body == ast.Block((), span=s[9].body.span)


def test_tiled_access():
    e = expr("t[bi, bj][ti, tj] + r.x[2].y")
    assert isinstance(e.left, ast.Index) and len(e.left.groups) == 2
    assert isinstance(e.right, ast.Field) and isinstance(e.right.base, ast.Index)


@pytest.mark.parametrize("src, expected", [
    ("a + b * c", "a + b * c"),
    ("(a + b) * c", "(a + b) * c"),
    ("a - b - c", "a - b - c"),
    ("a - (b - c)", "a - (b - c)"),
    ("a < b == c < d", "a < b == c < d"),
    ("a || b && c | d ^ e & f", "a || b && c | d ^ e & f"),
    ("a << 1 + 2", "a << 1 + 2"),
    ("-a * !b", "-a * !b"),
    ("(float) a / 2", "(float) a / 2"),
    ("(float) (a / 2)", "(float) (a / 2)"),
    ("c ? a : b ? d : e", "c ? a : b ? d : e"),
    ("(c ? a : b) + 1", "(c ? a : b) + 1"),
    ("1.0f + 1e-3 + .5 + 2L", "1.0f + 0.001 + 0.5 + 2L"),
    ("true && false", "true && false"),
    ("min(a, max(b, 0))", "min(a, max(b, 0))"),
])
def test_precedence_round_trip(src, expected):
    assert print_expr(expr(src)) == expected


def test_precedence_tree():
    e = expr("a + b * c - d")
    assert e.op == "-" and e.left.op == "+" and e.left.right.op == "*"
    assert e.span.column == 5 and e.span.end_column == 18


def test_float_literals():
    e = expr("1.5f")
    assert e == ast.Literal(1.5, "float", "f", span=e.span)
    assert expr("0x1F").value == 31


def test_hardware_reference():
    m = parse("module m; import gpu;\ngpu void f() { int t = gpu.hierarchy.blocks.block."
              "threads.max_nr_units; }")
    init = m.functions[0].body.statements[0].init
    assert isinstance(init, ast.HwdRef) and init.path[-1] == "max_nr_units"


def test_comments_attach_to_statements():
    m = parse("// file\nmodule m;\nimport perfect;\n// the kernel\nperfect void f() {\n"
              "  // first\n  int x = 1; // why\n\n  /* block */\n  x++;\n  // at the end\n}\n")
    f = m.functions[0]
    assert m.comments == ("// file",)
    assert f.comments == ("// the kernel",)
    a, b = f.body.statements
    assert a.comments == ("// first", "// why")
    assert b.comments == ("", "/* block */")
    assert f.body.end_comments == ("// at the end",)


def test_a_parameter_may_name_several_memory_spaces():
    """The legacy `reg main float r`: an argument in any of the spaces."""
    m = parse("module m;\nperfect void f(reg main float r, const int n) { }", "p.mcl")
    r, n = m.functions[0].params
    assert (r.space, r.alternatives) == ("reg", ("main",)) and n.alternatives == ()


@pytest.mark.parametrize("src, message, line, col", [
    ("perfect void f() { x = ; }", "expected an expression, found ';'", 2, 24),
    ("perfect void f() { float x = 1 }", "expected an operator or ';', found '}'", 2, 32),
    ("perfect void f() {", "expected a statement or '}', found the end of the file", 2, 19),
    ("perfect void f() { int = 3; }", "found 'int'", 2, 20),
    ("perfect void f() { x = float; }", "expected an expression, found 'float'", 2, 24),
    ("perfect void f() { float[n]; }", "found 'float'", 2, 20),
    ("perfect void f() { shared float[n]; }", "has no name", 2, 20),
    ("perfect void f() { 3 = x; }", "cannot be assigned", 2, 20),
    ("perfect void f() { shared global float[n] a; }", "two memory spaces", 2, 20),
])
def test_syntax_errors(src, message, line, col):
    with pytest.raises(McplError) as e:
        parse("module m;\n" + src, "bad.mcpl")
    d = e.value.diagnostics[0]
    assert message in d.message
    assert (d.span.file, d.span.line, d.span.column) == ("bad.mcpl", line, col)
    assert d.code.startswith("mcpl-")


def test_several_builder_errors_reported():
    with pytest.raises(McplError) as e:
        parse("module m;\nperfect void f() { x = float; y = int; }")
    assert len(e.value.diagnostics) == 2


IN_FOREACH = ("perfect void f(int n, main float[n] a) {{\n"
              "  foreach (int i in n threads) {{\n    {}\n  }}\n}}")


@pytest.mark.parametrize("src, word, keyword, col", [
    # (the text after `module m;`, the misspelled word, the keyword, its column on line 4)
    (IN_FOREACH.format("forech (int j in n threads) { }"), "forech", "foreach", 5),
    (IN_FOREACH.format("if (i > 0) { a[i] = 1.0; } esle { a[i] = 2.0; }"), "esle", "else", 32),
    (IN_FOREACH.format("whle (i > 0) { a[i] = 1.0; }"), "whle", "while", 5),
    (IN_FOREACH.format("fro (int k = 0; k < n; k++) { }"), "fro", "for", 5),
    (IN_FOREACH.format("float s = a[i]; retrun s + 1.0;"), "retrun", "return", 21),
    (IN_FOREACH.format("if (i > 0) forech (int j in n threads) { }"), "forech", "foreach", 16),
    # a comment with ';' and '{' before the statement does not hide its start
    (IN_FOREACH.format("/* ; { */ forech (int j in n threads) { }"), "forech", "foreach", 15),
    # two letters swapped: too short a word for difflib's ratio
    (IN_FOREACH.format("fi (i > 0) { a[i] = 1.0; }"), "fi", "if", 5),
])
def test_misspelled_keyword_in_a_function(src, word, keyword, col):
    with pytest.raises(McplError) as e:
        parse("module m;\n" + src, "bad.mcpl")
    (d,) = e.value.diagnostics
    assert d.code == "mcpl-syntax" and f"'{word}' is not a keyword" in d.message
    assert d.hint == f"did you mean '{keyword}'?"
    assert (d.span.line, d.span.column, d.span.end_column) == (4, col, col + len(word))
    # where the parse failed (after the word) is a note, with what was expected there
    assert d.related and "expected" in d.related[0].message


def test_the_reported_misspelled_foreach():
    text = """module m;
import perfect;

perfect void vector_add(const int n, main float[n] c, main float[n] a) {
  forech (int i in n threads) {
    c[i] = a[i];
  }
}
"""
    with pytest.raises(McplError) as e:
        parse(text, "va.mcpl")
    (d,) = e.value.diagnostics
    assert (d.span.line, d.span.column) == (5, 3) and d.hint == "did you mean 'foreach'?"
    (note,) = d.related
    assert (note.span.line, note.span.column) == (5, 15) and "found 'i'" in note.message


@pytest.mark.parametrize("src, word, keyword, line", [
    ("modul m;\nimport perfect;\n", "modul", "module", 1),
    ("module m;\nimprot perfect;\n", "improt", "import", 2),
    ("module m;\ntpye point { float x; }\n", "tpye", "type", 2),
    ("module m;\ncosnt float PI = 3.14;\n", "cosnt", "const", 2),
])
def test_misspelled_keyword_at_the_top_level(src, word, keyword, line):
    with pytest.raises(McplError) as e:
        parse(src, "bad.mcpl")
    d = e.value.diagnostics[0]
    assert f"'{word}' is not a keyword" in d.message and d.hint == f"did you mean '{keyword}'?"
    assert (d.span.line, d.span.column) == (line, 1)


@pytest.mark.parametrize("statement", [
    "fore(a, i n);",                 # a call with a missing ',': not a `for` header
    "form (i) = 2;",                 # not shaped like any keyword's statement
    "a[i] = 1.0 +;",
])
def test_no_keyword_hint_for_other_syntax_errors(statement):
    with pytest.raises(McplError) as e:
        parse("module m;\n" + IN_FOREACH.format(statement), "bad.mcpl")
    (d,) = e.value.diagnostics
    assert "did you mean" not in (d.hint or "") and "not a keyword" not in d.message


def test_binary_operators_know_where_they_are():
    (s,) = body("x = (a + 1) /* why */ / b;")
    assert (s.value.op, s.value.op_span.line, s.value.op_span.column) == ("/", 3, 23)
    assert (s.value.left.op_span.column, s.value.left.op_span.end_column) == (8, 9)


def test_no_statement_keyword_hint_for_a_function_header():
    # `retina` is close to `return`, but a function header is no statement
    with pytest.raises(McplError) as e:
        parse("module m;\nretina void f(int n {\n}\n", "bad.mcpl")
    assert "did you mean" not in (e.value.diagnostics[0].hint or "")


MISSING_SEMICOLON = ("module m;\nimport perfect;\n"
                     "perfect void f(int n, float[n] a, float[n] b) {{\n"
                     "  foreach (int i in n threads) {{\n    {}\n  }}\n}}\n")


@pytest.mark.parametrize("statements, after, line, col", [
    # (the statements in the loop body, what the ';' is missing after, where)
    ("a[i] = b[i]\n    for (int k = 0; k < n; k++) { }", "b[i]", 5, 16),
    ("float s = f(b[i], 2.0)\n    a[i] = s;", "f(b[i], 2.0)", 5, 27),
    ("a[i] = 1.0\n    // a comment between\n    a[i] = 2.0;", "1.0", 5, 15),
    ("a[i] = b[i]\n    }", "b[i]", 5, 16),
])
def test_missing_semicolon_is_reported_after_the_statement(statements, after, line, col):
    """Like a C compiler (and `hwd check`): not at the next line's first token."""
    from mcl.mcpl.builder import parse_whole

    text = MISSING_SEMICOLON.format(statements)
    for parser in (parse, parse_whole):
        with pytest.raises(McplError) as e:
            parser(text, "bad.mcpl")
        d = e.value.diagnostics[0]
        assert d.message == f"syntax error: expected ';' after '{after}'"
        assert (d.span.line, d.span.column) == (line, col)
        assert d.hint == "statements and declarations end with ';'"


def test_missing_semicolon_of_the_header():
    with pytest.raises(McplError) as e:
        parse("module m;\nimport perfect\n\nperfect void f() { }\n", "bad.mcpl")
    d = e.value.diagnostics[0]
    assert d.message == "syntax error: expected ';' after 'perfect'"
    assert (d.span.line, d.span.column) == (2, 15)


@pytest.mark.parametrize("ending", ["", "\n", "\n\n  \n"])
def test_an_error_at_the_end_of_the_file_is_on_its_last_line(ending):
    """Not on the line after the final newline, which no editor shows."""
    with pytest.raises(McplError) as e:
        parse("module m;\nperfect void f() {\n  int x = 1;" + ending, "bad.mcpl")
    d = e.value.diagnostics[0]
    assert "found the end of the file" in d.message
    assert (d.span.line, d.span.column) == (3, 13)
