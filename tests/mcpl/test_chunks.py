"""Item-by-item parsing (mcl.mcpl.chunks + builder): the same Module as a
whole-file parse, spans included; every broken item reported; the item cache."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcl.diagnostics import McplError
from mcl.mcpl import ast, builder, check, chunks, parse
from mcl.mcpl.builder import clear_cache, parse_partial, parse_whole

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted(p for p in [*ROOT.glob("examples/**/*.mcpl"), *ROOT.glob("mcl/**/*.mcpl"),
                             *ROOT.glob("tests/**/*.mcpl"), *ROOT.glob("examples/**/*.mcl")])
HEADER = "module m;\nimport perfect;\n"


def test_there_are_sources():
    assert len(SOURCES) > 20


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_same_module_and_spans_as_whole_file_parse(path):
    text = path.read_text()
    whole = parse_whole(text, str(path))
    clear_cache()
    cold = parse(text, str(path))
    warm = parse(text, str(path))
    # `==` compares spans too (ast.same() would ignore them).
    assert cold == whole and warm == whole
    # Items that moved down by three lines come from the cache, their spans shifted.
    moved = text.replace("\n", "\n\n\n\n", 1) if text.count("\n") > 1 else text
    assert parse(moved, str(path)) == parse_whole(moved, str(path))


@pytest.mark.parametrize("text", [
    # comments between, before and after items, after a closing brace, inside items
    HEADER + "// f\nperfect void f() {\n  int x = 1; } // after f\n// g\n"
    "perfect void g() { /* } { */ }\n// the end\n",
    "// only a module\nmodule m // legacy: no ';'\n/* x */ perfect void f() { }\n",
    "module m;\ntype t { int a; /* in */ float b; } ; // after\nperfect void f() {}",
    "module m;\nexport f;\nimport lib.atomics;\nimport perfect; // hw\n\n"
    "perfect void f(int n = 2) {\n  // lead\n\n  int x = perfect.a.b; // why\n  // end\n}",
    "package a.b;\nmodule m;\n  perfect void f() {}   perfect void g() {}",
    "module m;",
    "module m;\n// nothing else\n",
])
def test_comment_and_layout_forms(text):
    clear_cache()
    assert parse(text, "t.mcpl") == parse_whole(text, "t.mcpl")
    assert parse(text, "t.mcpl") == parse_whole(text, "t.mcpl")


def test_split():
    text = "module m;\nimport perfect;\n// c {\ntype t { int a; };\n" \
           "perfect void f() { /* } */ if (x) { } }\nperfect void g() {}\n"
    end, items = chunks.split(text)
    assert text[:end] == "module m;\nimport perfect;"
    assert [i.text(text) for i in items] == [
        "type t { int a; };", "perfect void f() { /* } */ if (x) { } }", "perfect void g() {}"]
    assert [i.kind for i in items] == ["type", "function", "function"]


BROKEN = HEADER + """\
perfect void a() { int x = ; }
perfect void b() { int y = 1; }
perfect void c() { float z = 1 }
perfect void d() { foreach (int i in 4 threads) { y = i; } }
"""


def test_every_broken_function_is_reported():
    with pytest.raises(McplError) as e:
        parse(BROKEN, "bad.mcpl")
    assert [(d.code, d.span.line) for d in e.value.diagnostics] == \
        [("mcpl-syntax", 3), ("mcpl-syntax", 5)]
    assert [f.name for f in e.value.partial.functions] == ["b", "d"]
    module, diags = parse_partial(BROKEN, "bad.mcpl")
    assert module == e.value.partial and diags == e.value.diagnostics


def test_check_reports_every_syntax_error():
    result = check("bad.mcpl", source=BROKEN)
    assert [d.span.line for d in result.diagnostics if d.code == "mcpl-syntax"] == [3, 5]


def test_missing_closing_brace_does_not_swallow_the_rest():
    text = HEADER + "perfect void a() {\n  int x = 1;\n\nperfect void b() { }\n" \
        "perfect void c() { x = ; }\nperfect void d() { }\n"
    module, diags = parse_partial(text, "bad.mcpl")
    assert [d.span.line for d in diags] == [6, 7]
    assert "expected a statement or '}', found 'perfect'" in diags[0].message
    assert [f.name for f in module.functions] == ["b", "d"]


def test_header_and_item_errors_together():
    text = "module m;\nimport perfect\nperfect void f() { x = ; }\nperfect void g() { }\n"
    with pytest.raises(McplError) as e:
        parse(text, "bad.mcpl")
    first, second = e.value.diagnostics
    # the missing ';' is reported after the import, not at the next line's 'perfect'
    assert "expected ';' after 'perfect'" in first.message
    assert (first.span.line, first.span.column) == (2, 15)
    assert "found ';'" in second.message and second.span.line == 3
    assert [f.name for f in e.value.partial.functions] == ["g"]


def test_builder_errors_of_several_items():
    with pytest.raises(McplError) as e:
        parse(HEADER + "perfect void f() { x = float; }\nperfect void g() { 3 = x; }\n")
    assert [d.span.line for d in e.value.diagnostics] == [3, 4]


def _counting(monkeypatch) -> list[str]:
    parsed: list[str] = []
    original = builder._parse_item

    def parse_item(text):
        parsed.append(text)
        return original(text)

    monkeypatch.setattr(builder, "_parse_item", parse_item)
    return parsed


def test_an_edit_parses_only_the_changed_item(monkeypatch):
    fns = [f"perfect void k{k}(int n) {{\n  int x = {k};\n}}\n" for k in range(5)]
    text = HEADER + "".join(fns)
    clear_cache()
    parsed = _counting(monkeypatch)
    parse(text)
    assert len(parsed) == 5
    parsed.clear()
    edited = text.replace("int x = 2;", "int x = 2;\n  x++;")
    assert parse(edited) == parse_whole(edited)
    assert parsed == ["perfect void k2(int n) {\n  int x = 2;\n  x++;\n}"]
    parsed.clear()
    assert parse(edited, "other.mcpl") == parse_whole(edited, "other.mcpl")
    assert len(parsed) == 5  # spans name the file: another file is another key


def test_cache_follows_hardware_names():
    fn = "perfect void f() { int x = nvidia.max; }\n"
    with_import = "module m;\nimport nvidia;\n" + fn
    without = "module m;\n\n" + fn
    clear_cache()
    for text in (with_import, without, with_import):
        m = parse(text)
        assert m == parse_whole(text)
    x = parse(without).functions[0].body.statements[0].init
    assert isinstance(x, ast.Field)
    assert isinstance(parse(with_import).functions[0].body.statements[0].init, ast.HwdRef)


def test_cache_is_bounded(monkeypatch):
    monkeypatch.setattr(builder, "CACHE_SIZE", 3)
    clear_cache()
    parse(HEADER + "".join(f"perfect void k{k}() {{}}\n" for k in range(10)))
    assert len(builder._cache) == 3


TOKEN = re.compile(r"//[^\n]*|/\*[\s\S]*?\*/|[A-Za-z_]\w*|\d+(?:\.\d*)?f?|<<=|>>=|"
                   r"[-+*/%&|^<>=!]=|&&|\|\||\+\+|--|\S")


@st.composite
def mutated(draw):
    path = draw(st.sampled_from(SOURCES))
    text = path.read_text()
    tokens = [(m.start(), m.end()) for m in TOKEN.finditer(text)]
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(tokens) - 1))
        a, b = tokens[i]
        kind = draw(st.sampled_from(["delete", "duplicate", "brace"]))
        piece = {"delete": "", "duplicate": text[a:b] + " " + text[a:b], "brace": "}"}[kind]
        text = text[:a] + piece + text[b:]
        tokens = [(m.start(), m.end()) for m in TOKEN.finditer(text)]
    return text


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_mutations_agree_with_whole_file_parse(text):
    try:
        whole = parse_whole(text, "m.mcpl")
    except McplError as e:
        with pytest.raises(McplError) as mine:
            parse(text, "m.mcpl")
        assert mine.value.diagnostics  # every error is reported, the first one included
        first = e.diagnostics[0]
        assert any(d.span == first.span for d in mine.value.diagnostics) or \
            mine.value.diagnostics[0].span.line <= first.span.line
    else:
        assert parse(text, "m.mcpl") == whole
