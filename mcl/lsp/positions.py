"""Mapping between the compiler's positions and the editor's.

The compiler counts lines and columns from 1, columns in Unicode code points
(Python string indices), with an exclusive end column (:class:`mcl.diagnostics.Span`).
The Language Server Protocol counts from 0 and, unless the client negotiated
otherwise, measures columns in UTF-16 code units: a character outside the Basic
Multilingual Plane (an emoji in a comment) is one code point but two UTF-16 units.
"""

from __future__ import annotations

from lsprotocol import types as lsp

from mcl.diagnostics import Span

#: The encodings the server can speak, by their LSP names.
ENCODINGS = ("utf-16", "utf-8", "utf-32")


def _units(ch: str, encoding: str) -> int:
    """How many code units of ``encoding`` one code point takes."""
    cp = ord(ch)
    if encoding == "utf-16":
        return 2 if cp > 0xFFFF else 1
    if encoding == "utf-8":
        return 1 if cp < 0x80 else 2 if cp < 0x800 else 3 if cp < 0x10000 else 4
    return 1


class PositionMapper:
    """Converts positions of one text between compiler and LSP coordinates.

    Built once per document version; the lines are split lazily because most
    requests touch only a few of them."""

    def __init__(self, text: str, encoding: str = "utf-16"):
        if encoding not in ENCODINGS:
            raise ValueError(f"unknown position encoding {encoding!r}")
        self.text = text
        self.encoding = encoding
        # Lines without their terminators; "\r\n" and "\n" both end a line, as in
        # the compiler's LineIndex (which keeps "\r" in the column count of nothing).
        self.lines = text.split("\n")

    def line_text(self, line0: int) -> str:
        if 0 <= line0 < len(self.lines):
            return self.lines[line0]
        return ""

    # ---------------------------------------------------------------- columns

    def units_to_index(self, line0: int, character: int) -> int:
        """The code-point index in a line of an LSP ``character`` (clamped to the line)."""
        text = self.line_text(line0)
        if self.encoding == "utf-32":
            return max(0, min(character, len(text)))
        units = 0
        for i, ch in enumerate(text):
            if units >= character:
                return i
            units += _units(ch, self.encoding)
        return len(text)

    def index_to_units(self, line0: int, index: int) -> int:
        """The LSP ``character`` of a code-point index in a line."""
        text = self.line_text(line0)
        index = max(0, min(index, len(text)))
        if self.encoding == "utf-32":
            return index
        return sum(_units(ch, self.encoding) for ch in text[:index])

    # ---------------------------------------------------------------- positions

    def to_lsp(self, line: int, column: int) -> lsp.Position:
        """A compiler (1-based line, 1-based code-point column) as an LSP position."""
        line0 = max(0, line - 1)
        if line0 >= len(self.lines):
            # Past the end (a span that ends after the last newline): clamp to the end.
            line0 = len(self.lines) - 1
            return lsp.Position(line0, self.index_to_units(line0, len(self.lines[line0])))
        return lsp.Position(line0, self.index_to_units(line0, column - 1))

    def from_lsp(self, position: lsp.Position) -> tuple[int, int]:
        """An LSP position as the compiler's (1-based line, 1-based code-point column)."""
        line0 = max(0, min(position.line, len(self.lines) - 1))
        return line0 + 1, self.units_to_index(line0, position.character) + 1

    def offset(self, position: lsp.Position) -> int:
        """The code-point offset into the whole text of an LSP position."""
        line, column = self.from_lsp(position)
        return sum(len(s) + 1 for s in self.lines[: line - 1]) + column - 1

    def range(self, span: Span) -> lsp.Range:
        """A compiler span as an LSP range (both have an exclusive end)."""
        start = self.to_lsp(span.line, span.column)
        end = self.to_lsp(span.end_line, span.end_column)
        if (end.line, end.character) < (start.line, start.character):
            end = start
        return lsp.Range(start, end)

    def span(self, file: str, range_: lsp.Range) -> Span:
        """An LSP range as a compiler span of ``file``."""
        l1, c1 = self.from_lsp(range_.start)
        l2, c2 = self.from_lsp(range_.end)
        return Span(file, l1, c1, l2, c2)


def span_range(span: Span, text: str | None, encoding: str = "utf-16") -> lsp.Range:
    """An LSP range for a span of a file whose text may be unknown (then columns
    are taken as they are: exact for ASCII lines, the usual case of .hdl files)."""
    if text is not None:
        return PositionMapper(text, encoding).range(span)
    return lsp.Range(lsp.Position(max(0, span.line - 1), max(0, span.column - 1)),
                     lsp.Position(max(0, span.end_line - 1), max(0, span.end_column - 1)))
