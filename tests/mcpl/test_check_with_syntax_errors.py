"""check() of a text with syntax errors: the syntax errors, and the semantic
diagnostics of the items that parsed, without the errors that only follow
from an item that did not parse."""

from __future__ import annotations

from mcl.mcpl import check

HEADER = "module m;\nimport perfect;\n"


def _lines(result, code):
    return [d.span.line for d in result.diagnostics if d.code == code]


def test_semantic_errors_of_the_items_that_parsed_are_reported():
    src = HEADER + (
        "perfect void a() { int x = ; }\n"                        # line 3: syntax
        "perfect void b(int n, main float[n] v) {\n"              # line 4
        "  foreach (int i in n threads) { v[i] = q; }\n"          # line 5: undeclared
        "}\n"
        "perfect void c() { float z = 1 }\n")                     # line 7: syntax
    result = check("bad.mcpl", source=src)
    assert _lines(result, "mcpl-syntax") == [3, 7]
    assert _lines(result, "mcpl-undeclared") == [5]
    assert result.has_errors
    assert [f.name for f in result.module.functions] == ["b"]
    # In source order, syntax and semantic errors mixed.
    assert [d.span.line for d in result.diagnostics] == [3, 5, 7]


def test_calls_to_a_function_that_did_not_parse_are_not_unknown():
    src = HEADER + (
        "perfect float twice(float x) { return 2 * x }\n"          # line 3: syntax
        "perfect void k(int n, main float[n] v) {\n"
        "  foreach (int i in n threads) { v[i] = twice(v[i]) + thrice(v[i]); }\n"
        "}\n")
    result = check("bad.mcpl", source=src)
    unknown = [d for d in result.diagnostics if d.code == "mcpl-unknown-function"]
    # `twice` is defined (its definition has the syntax error); `thrice` is not.
    assert [d.message for d in unknown] == ["unknown function 'thrice'"]
    assert _lines(result, "mcpl-syntax") == [3]


def test_uses_of_a_type_that_did_not_parse_are_not_unknown():
    src = HEADER + (
        "type point { float x; float y }\n"                         # line 3: syntax
        "perfect void k(int n, main point[n] p, main float[n] v) {\n"
        "  foreach (int i in n threads) { v[i] = p[i].x + p[i].z + w; }\n"
        "}\n")
    result = check("bad.mcpl", source=src)
    codes = sorted(d.code for d in result.diagnostics)
    # Neither 'point' nor its fields are reported; the undeclared 'w' is.
    assert codes == ["mcpl-syntax", "mcpl-undeclared"], result.diagnostics


def test_a_broken_header_does_not_make_every_function_unimported():
    src = ("module m;\nimport perfect\nimport gpu;\n"            # line 2: no ';'
           "perfect void k(int n, main float[n] v) {\n"
           "  foreach (int i in n threads) {\n"
           "    v[i] = gpu.hierarchy.blocks.block.threads.max_nr_units + u;\n  }\n}\n")
    result = check("bad.mcpl", source=src)
    assert [d.code for d in result.diagnostics] == ["mcpl-syntax", "mcpl-undeclared"], \
        result.diagnostics


def test_a_stray_statement_does_not_hide_unknown_functions():
    src = HEADER + "perfect void k() { g(); }\nf();\n"
    result = check("bad.mcpl", source=src)
    assert sorted(d.code for d in result.diagnostics if d.is_error) == \
        ["mcpl-syntax", "mcpl-unknown-function"]


def test_importer_of_a_module_with_syntax_errors(tmp_path):
    (tmp_path / "helpers.mcpl").write_text(
        HEADER.replace("m;", "helpers;") +
        "perfect float twice(const float x) { return 2 * x }\n"
        "perfect float half(const float x) { return x / 2; }\n")
    main = tmp_path / "main.mcpl"
    main.write_text("module main;\nimport perfect;\nimport helpers;\n"
                    "perfect void k(int n, main float[n] a) {\n"
                    "  foreach (int i in n threads) {\n"
                    "    a[i] = twice(a[i]) + half(a[i]) + thrice(a[i]);\n  }\n}\n")
    result = check(main)
    assert sorted(d.code for d in result.diagnostics) == \
        ["mcpl-import-errors", "mcpl-unknown-function"], result.diagnostics
    assert "'thrice'" in next(d.message for d in result.diagnostics
                              if d.code == "mcpl-unknown-function")
    helpers = check(tmp_path / "helpers.mcpl")
    assert [d.code for d in helpers.diagnostics] == ["mcpl-syntax"]
    assert [f.name for f in helpers.module.functions] == ["half"]


def test_unreadable_file_still_gives_an_empty_module():
    result = check("/no/such/file.mcpl")
    assert result.module.functions == () and result.has_errors


def test_a_name_of_non_ascii_letters_is_told_what_names_are():
    for body in ("float \u00fc = 1.0;", "v[i] = \u00fc;"):
        line = f"  foreach (int i in n threads) {{ {body} }}"
        src = HEADER + f"perfect void f(const int n = 4, global float[n] v) {{\n{line}\n}}\n"
        [d] = [d for d in check("u.mcpl", source=src).diagnostics if d.code == "mcpl-syntax"]
        assert "found '\u00fc'" in d.message
        assert (d.span.line, d.span.column) == (4, line.index("\u00fc") + 1)
        assert d.hint == ("names in MCPL are written with ASCII letters, digits and '_': "
                          "'\u00fc' is not one of them")
