"""Unit tests of the mapping between compiler spans (1-based, code points) and LSP
positions (0-based, UTF-16 code units by default)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lsprotocol import types as lsp

from mcl.diagnostics import LineIndex, Span
from mcl.lsp.positions import PositionMapper, span_range

TEXT = "module m;\n// caf\u00e9 \U0001F600 x\nint y;\n"


def test_ascii_positions_shift_by_one():
    m = PositionMapper(TEXT)
    assert m.to_lsp(1, 1) == lsp.Position(0, 0)
    assert m.to_lsp(3, 5) == lsp.Position(2, 4)
    assert m.from_lsp(lsp.Position(2, 4)) == (3, 5)


def test_utf16_counts_astral_characters_twice():
    m = PositionMapper(TEXT)
    line = TEXT.splitlines()[1]
    x = line.index("x") + 1              # code-point column of 'x'
    assert m.to_lsp(2, x) == lsp.Position(1, x - 1 + 1)   # the emoji is 2 UTF-16 units
    assert m.from_lsp(lsp.Position(1, x)) == (2, x)


def test_utf8_and_utf32_encodings():
    line = TEXT.splitlines()[1]
    x = line.index("x") + 1
    assert PositionMapper(TEXT, "utf-32").to_lsp(2, x).character == x - 1
    # 'é' is 2 bytes, the emoji 4: 3 extra bytes before 'x'
    assert PositionMapper(TEXT, "utf-8").to_lsp(2, x).character == x - 1 + 1 + 3


def test_positions_past_the_end_are_clamped():
    m = PositionMapper(TEXT)
    assert m.from_lsp(lsp.Position(0, 99)) == (1, len("module m;") + 1)
    assert m.from_lsp(lsp.Position(99, 0))[0] == len(TEXT.split("\n"))
    assert m.to_lsp(1, 999) == lsp.Position(0, len("module m;"))


def test_span_to_range_keeps_the_exclusive_end():
    m = PositionMapper(TEXT)
    r = m.range(Span("f", 3, 5, 3, 6))   # 'y'
    assert r == lsp.Range(lsp.Position(2, 4), lsp.Position(2, 5))
    assert m.span("f", r) == Span("f", 3, 5, 3, 6)


def test_a_generated_span_maps_to_the_start():
    assert PositionMapper(TEXT).range(Span("<generated>", 0, 0, 0, 0)).start == lsp.Position(0, 0)


def test_span_range_without_text_assumes_ascii():
    assert span_range(Span("f", 2, 3, 2, 7), None) == lsp.Range(lsp.Position(1, 2),
                                                                 lsp.Position(1, 6))


def test_unknown_encoding_is_refused():
    with pytest.raises(ValueError):
        PositionMapper("", "utf-7")


@given(st.text(alphabet=st.sampled_from("ab \n\u00e9\U0001F600\t"), max_size=40),
       st.sampled_from(["utf-16", "utf-8", "utf-32"]))
def test_round_trip_through_lsp_matches_the_compiler_line_index(text, encoding):
    index = LineIndex(text)
    m = PositionMapper(text, encoding)
    for offset in range(len(text) + 1):
        line, col = index.position(offset)
        pos = m.to_lsp(line, col)
        assert m.from_lsp(pos) == (line, col)
        assert m.offset(pos) == offset
