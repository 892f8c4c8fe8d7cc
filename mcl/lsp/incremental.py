"""Re-parsing only what changed: a module is cut into its header (module, imports) and
top-level items (types, functions), each item is parsed on its own and cached by
its text, so an edit inside one function re-parses that function only.

The textX parser needs about a millisecond per line (benchmarks/results/mcpl_parse.md),
too slow to re-parse a 2 000-line buffer at every keystroke. An item is parsed
in a text that keeps its lines where they are (a one-line module header, then
empty lines), so its spans are the ones a parse of the whole buffer gives; a
cached item that moved is shifted by whole lines. When the buffer cannot be cut
cleanly (two items on one line, text after the last item) the whole buffer is
parsed as usual. tests/lsp/test_incremental.py checks that both give the same AST.
"""

from __future__ import annotations

import dataclasses
import re
from collections import OrderedDict

from mcl.diagnostics import Diagnostic, McplError, Span
from mcl.mcpl import ast

_SCAN = re.compile(r"//[^\n]*|/\*[\s\S]*?\*/|[{};]")
_STUB = "module __item__;"


def split(text: str) -> tuple[int, list[tuple[int, int]]] | None:
    """(end of the header, [(start, end) of each item]) as offsets, every item starting
    at the beginning of a line; None if the text cannot be cut that way."""
    depth = 0
    last_semicolon = -1
    items: list[tuple[int, int]] = []
    start: int | None = None
    for m in _SCAN.finditer(text):
        tok = m.group()
        if tok.startswith("/"):
            continue
        if tok == "{":
            if depth == 0 and start is None:
                if items:
                    start = items[-1][1]
                else:
                    if last_semicolon < 0:
                        return None
                    start = text.find("\n", last_semicolon)
                    if start < 0:
                        return None
                    start += 1
            depth += 1
        elif tok == "}":
            depth -= 1
            if depth < 0:
                return None
            if depth == 0:
                end = text.find("\n", m.end())
                end = len(text) if end < 0 else end + 1
                if text[m.end():end].strip():
                    return None  # something else on the line of the closing brace
                assert start is not None
                items.append((start, end))
                start = None
        elif tok == ";" and depth == 0:
            if items:
                return None  # a top-level statement after an item: let the parser say
            last_semicolon = m.start()
    if depth != 0 or start is not None or not items:
        return None
    if text[items[-1][1]:].strip():
        return None
    return items[0][0], items


def _shift_span(span: Span, lines: int) -> Span:
    if span.line <= 0:
        return span
    return Span(span.file, span.line + lines, span.column, span.end_line + lines,
                span.end_column)


def _shift(node: ast.Node, lines: int) -> ast.Node:
    if lines == 0:
        return node
    return ast.transform(node, lambda n: dataclasses.replace(n, span=_shift_span(n.span, lines)))


def _shift_diagnostic(d: Diagnostic, lines: int) -> Diagnostic:
    if d.span is None or lines == 0:
        return d
    return dataclasses.replace(d, span=_shift_span(d.span, lines))


@dataclasses.dataclass(frozen=True)
class _Parsed:
    line: int                                  # the line the item started on
    node: ast.Node | None                      # its Function or TypeDef
    errors: tuple[Diagnostic, ...] = ()


class IncrementalParser:
    """Parses successive versions of one buffer, re-using the items that did not change."""

    def __init__(self, capacity: int = 2000):
        self._items: OrderedDict[tuple[str, str], _Parsed] = OrderedDict()
        self._capacity = capacity
        #: feedback per function of this buffer (filled by mcl.lsp.analysis)
        self.feedback_cache: dict = {}

    def parse(self, text: str, file: str) -> tuple[ast.Module | None, list[Diagnostic]]:
        """The module (None if even the header does not parse) and the syntax errors.
        With errors, the module holds the items that parse."""
        from mcl.mcpl import parse

        cut = split(text)
        if cut is None:
            try:
                return parse(text, file), []
            except McplError as e:
                return None, list(e.diagnostics)
        header_end, items = cut
        try:
            header = parse(text[:header_end], file)
        except McplError as e:
            return None, list(e.diagnostics)
        types: list[ast.TypeDef] = []
        functions: list[ast.Function] = []
        errors: list[Diagnostic] = []
        for start, end in items:
            line = text.count("\n", 0, start) + 1
            node, errs = self._item(text[start:end], line, file)
            errors += errs
            if isinstance(node, ast.TypeDef):
                types.append(node)
            elif isinstance(node, ast.Function):
                functions.append(node)
        module = dataclasses.replace(header, types=tuple(types), functions=tuple(functions))
        return module, errors

    def _item(self, chunk: str, line: int, file: str
              ) -> tuple[ast.Node | None, list[Diagnostic]]:
        from mcl.mcpl import parse

        key = (file, chunk)
        got = self._items.get(key)
        if got is None:
            # The stub header takes line 1, empty lines keep the item on its own lines.
            padded = _STUB + "\n" * (line - 1) + chunk
            try:
                m = parse(padded, file)
                node = (m.functions + m.types)[0] if (m.functions or m.types) else None
                got = _Parsed(line, node)
            except McplError as e:
                got = _Parsed(line, None, tuple(e.diagnostics))
            self._items[key] = got
            while len(self._items) > self._capacity:
                self._items.popitem(last=False)
        else:
            self._items.move_to_end(key)
        delta = line - got.line
        node = _shift(got.node, delta) if got.node is not None else None
        return node, [_shift_diagnostic(d, delta) for d in got.errors]
