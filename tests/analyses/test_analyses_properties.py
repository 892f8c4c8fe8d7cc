"""Property tests of the analyses: example kernels mutated (statements deleted,
duplicated or swapped; tokens changed) so that they still parse and check get
feedback that never raises, and every diagnostic points into the file."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from mcl.analyses import PASSES, feedback
from mcl.analyses.level import feedback_at_level
from mcl.diagnostics import Span
from mcl.mcpl import check

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").rglob("*.mcpl"))

#: a statement on a line of its own without braces: deleting, duplicating or
#: swapping it keeps the braces balanced
SIMPLE = re.compile(r"^\s*[^{}\s/][^{}]*;\s*(//.*)?$")
TOKEN = re.compile(r"\b\d+\b|<=|>=|==|!=|[-+*/<>]|\b[A-Za-z_]\w*\b")
REPLACEMENTS = {
    "number": ["0", "1", "2", "3", "7", "32", "1024"],
    "operator": ["+", "-", "*", "/"],
    "comparison": ["<", "<=", ">", ">=", "==", "!="],
}


def _kind(token: str) -> str:
    if token.isdigit():
        return "number"
    if token in REPLACEMENTS["operator"]:
        return "operator"
    if token in REPLACEMENTS["comparison"]:
        return "comparison"
    return "name"


@st.composite
def mutated(draw):
    """(path, text): an example with 1-3 statement or token mutations."""
    path = draw(st.sampled_from(EXAMPLES))
    lines = path.read_text().splitlines()
    for _ in range(draw(st.integers(1, 3))):
        simple = [i for i, line in enumerate(lines) if SIMPLE.match(line)]
        what = draw(st.sampled_from(["delete", "duplicate", "swap", "token", "name"]))
        if what in ("delete", "duplicate", "swap") and simple:
            i = draw(st.sampled_from(simple))
            if what == "delete":
                del lines[i]
            elif what == "duplicate":
                lines.insert(i, lines[i])
            else:
                j = draw(st.sampled_from(simple))
                lines[i], lines[j] = lines[j], lines[i]
        elif simple or lines:
            # a token of a statement: numbers, operators and comparisons change to one of
            # their kind; a name to another name of the same statement (a[i, k] -> a[k, k])
            i = draw(st.sampled_from(simple or list(range(len(lines)))))
            code, sep, comment = lines[i].partition("//")
            tokens = list(TOKEN.finditer(code))
            if not tokens:
                continue
            t = draw(st.sampled_from(tokens))
            kind = _kind(t.group())
            if kind == "name":
                names = [u.group() for u in tokens if _kind(u.group()) == "name"]
                new = draw(st.sampled_from(names))
            else:
                new = draw(st.sampled_from(REPLACEMENTS[kind]))
            lines[i] = code[:t.start()] + new + code[t.end():] + sep + comment
    return str(path), "\n".join(lines) + "\n"


def assert_in_text(span: Span | None, file: str, text: str) -> None:
    """``span`` is a place of ``text`` (the file ``file``)."""
    lines = text.splitlines()
    assert span is not None
    assert span.file == file
    assert 1 <= span.line <= len(lines)
    assert 1 <= span.column <= len(lines[span.line - 1]) + 1
    assert (span.end_line, span.end_column) >= (span.line, span.column)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(mutated(), st.sampled_from([None, {"n": 100}, {"n": 1, "m": 3, "p": 5}]))
def test_mutated_kernels_get_feedback_in_the_file(case, values):
    path, text = case
    checked = check(path, source=text)
    assume(not checked.has_errors and checked.module.functions)
    # the sizes the kernel has (a name it has not is refused: feedback-unknown-value)
    params = {p.name for f in checked.module.functions for p in f.params}
    values = {k: v for k, v in values.items() if k in params} if values else values
    diagnostics = feedback(checked, values=values)  # any exception here is a bug
    for d in diagnostics:
        assert d.code.startswith("feedback-")
        assert d.message
        assert_in_text(d.span, path, text)
        for r in d.related:
            assert_in_text(r.span, path, text)


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(mutated(), st.sets(st.sampled_from(PASSES), min_size=1, max_size=3))
def test_mutated_kernels_any_selection_of_passes(case, only):
    path, text = case
    checked = check(path, source=text)
    assume(not checked.has_errors and checked.module.functions)
    for d in feedback(checked, only=only):
        assert_in_text(d.span, path, text)


LEVELS = ["accelerator", "gpu", "nvidia", "fermi", "hopper", "mic", "xeon_phi", "cpu"]


@pytest.mark.parametrize("level", LEVELS)
def test_every_level_below_perfect_places_feedback_in_the_translated_text(level):
    perfect = sorted((ROOT / "examples").glob("*/perfect.mcpl"))
    for path in perfect:
        checked = check(path)
        at = feedback_at_level(checked, level)
        if not at.text:  # a translation the kernel does not allow: its errors, at the kernel
            assert all(d.is_error for d in at.diagnostics)
            continue
        source = path.read_text()
        first, *rest = at.diagnostics
        assert first.code == "feedback-level"
        assert_in_text(first.span, str(path), source)
        for d in rest:
            assert_in_text(d.span, at.file, at.text)
            for r in d.related:
                assert_in_text(r.span, at.file, at.text)
