import json

from mcl.diagnostics import (
    Diagnostic,
    LineIndex,
    McplError,
    Related,
    Severity,
    SourceCache,
    Span,
    error,
    render_json,
    render_text,
)


def test_line_index_maps_offsets_both_ways():
    idx = LineIndex("ab\ncde\n\nf")
    assert idx.position(0) == (1, 1)
    assert idx.position(3) == (2, 1)
    assert idx.position(5) == (2, 3)
    assert idx.position(8) == (4, 1)
    assert idx.offset(2, 3) == 5
    assert idx.line_text(2) == "cde"
    assert idx.line_text(3) == ""
    assert idx.span("f", 3, 6) == Span("f", 2, 1, 2, 4)


def test_text_rendering_has_location_source_line_caret_and_hint():
    src = SourceCache({"k.mcpl": "int x;\n  float y = z;\n"})
    d = error("mcpl-undefined", "'z' is not defined", Span("k.mcpl", 2, 13, 2, 14),
              hint="declare z before use",
              related=[Related(Span("k.mcpl", 1, 1, 1, 4), "x declared here")])
    text = render_text([d], src)
    lines = text.splitlines()
    assert lines[0] == "k.mcpl:2:13: error: 'z' is not defined [mcpl-undefined]"
    assert lines[1].endswith("|   float y = z;")
    assert lines[2].index("^") == lines[1].index("z")
    assert "help: declare z before use" in text
    assert "note: k.mcpl:1:1: x declared here" in text


def test_json_rendering_round_trips_fields():
    d = Diagnostic(Severity.INFO, "feedback-reuse", "reused", Span("a", 1, 2, 1, 5))
    data = json.loads(render_json([d]))
    assert data == [{"severity": "info", "code": "feedback-reuse", "message": "reused",
                     "file": "a", "range": {"start": {"line": 1, "column": 2},
                                            "end": {"line": 1, "column": 5}}}]


def test_error_carries_diagnostics():
    e = McplError(error("x", "boom"))
    assert e.diagnostics[0].code == "x" and "boom" in str(e)
    assert max(Severity) == Severity.ERROR
