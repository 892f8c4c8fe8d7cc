"""Splits MCPL module text into its top-level items without parsing them.

The header (``package``/``module``/``export``/``import``) and each ``type``
definition and function are found by tracking braces and comments (MCPL has
no string literals), keeping exact character offsets. The builder parses each
item with textX on its own (mcl.mcpl.builder): a syntax error then stays in
its item, and an item whose text did not change need not be parsed again.

The split is exact for every program the grammar accepts: an item starts at
its first token and ends after its closing ``}`` (a ``type`` definition also
takes an optional ``;``). For broken text it is a best guess; the builder
asks :func:`resync_point` for a place to start over when an item does not
parse (a missing ``}`` otherwise swallows the rest of the file).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: The same comment syntax as the grammar's ``Comment`` rule.
COMMENT_RE = re.compile(r"//[^\n]*|/\*[\s\S]*?\*/")
_SPACE_RE = re.compile(r"(?:\s+|//[^\n]*|/\*[\s\S]*?\*/)*")
_WORD_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# What matters to the scanner: comments (skipped whole), braces and ';'.
_TOKEN_RE = re.compile(r"//[^\n]*|/\*[\s\S]*?\*/|[{};]")
# A line that starts a top-level item: `type name {` or `hw type[dims] name(`.
_ITEM_START_RE = re.compile(
    r"^(?:type[ \t]+[A-Za-z_]\w*\s*\{|[A-Za-z_]\w*[ \t]+[A-Za-z_]\w*"
    r"(?:[ \t]*\[[^\]\n]*\])*[ \t]+[A-Za-z_]\w*[ \t]*\()", re.MULTILINE)
_HEADER_WORDS = ("package", "module", "export", "import")


@dataclass(frozen=True)
class Item:
    """A top-level item: ``source[start:end]``. ``kind`` is "type", "const" or
    "function" (anything else is parsed as a function)."""

    start: int
    end: int
    kind: str

    def text(self, source: str) -> str:
        return source[self.start:self.end]


def skip_space(source: str, pos: int) -> int:
    """The offset of the first token at or after ``pos`` (skips blanks and comments)."""
    return _SPACE_RE.match(source, pos).end()


def header(source: str) -> tuple[int, int]:
    """(end of the header, start of the first item). The header is the leading
    run of statements that start with a header keyword or end with ';' before
    any '{'; it ends after its last statement."""
    n = len(source)
    end = 0
    pos = skip_space(source, 0)
    while pos < n:
        m = _WORD_RE.match(source, pos)
        word = m.group() if m else ""
        if word in ("type", "const"):
            break
        if word == "module":
            # `module name;` with an optional ';' (a legacy form).
            p = skip_space(source, m.end())
            name = _WORD_RE.match(source, p)
            if name:
                p = name.end()
                q = skip_space(source, p)
                if source.startswith(";", q):
                    p = q + 1
                end = p
                pos = skip_space(source, p)
                continue
        stop = _next_token(source, pos, "{};")
        if stop is None or source[stop] != ";":
            if word not in _HEADER_WORDS:
                break
            # An unfinished header statement (`import perfect` without ';'):
            # it ends with its line, so that its error is reported there.
            eol = source.find("\n", pos)
            end = n if eol < 0 else eol
            pos = skip_space(source, end)
            continue
        end = stop + 1
        pos = skip_space(source, end)
    return end, pos


def next_item(source: str, pos: int) -> Item:
    """The item that starts at ``pos`` (the offset of a token)."""
    m = _WORD_RE.match(source, pos)
    word = m.group() if m else ""
    kind = word if word in ("type", "const") else "function"
    open_ = _next_token(source, pos, "{};")
    if open_ is None:
        return Item(pos, _end_of_tokens(source, pos), kind)
    if source[open_] != "{":
        return Item(pos, open_ + 1, kind)  # `f();` or a stray '}': a broken item
    depth = 0
    for t in _TOKEN_RE.finditer(source, open_):
        c = t.group()
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                end = t.end()
                if kind == "type":
                    q = skip_space(source, end)
                    if source.startswith(";", q):
                        end = q + 1
                return Item(pos, end, kind)
    return Item(pos, _end_of_tokens(source, pos), kind)


def items(source: str, pos: int) -> list[Item]:
    """All items from ``pos`` (the start of the first item) to the end."""
    out = []
    n = len(source)
    while pos < n:
        item = next_item(source, pos)
        out.append(item)
        pos = skip_space(source, item.end)
    return out


def split(source: str) -> tuple[int, list[Item]]:
    """(end of the header, the items)."""
    end, first = header(source)
    return end, items(source, first)


def resync_point(source: str, item: Item) -> int | None:
    """The start of a line inside ``item`` (after its first line) that looks like
    the start of another item and is not inside a comment, or None. Used only
    when the item does not parse."""
    comments = [(c.start(), c.end()) for c in COMMENT_RE.finditer(source, item.start, item.end)]
    for m in _ITEM_START_RE.finditer(source, item.start + 1, item.end):
        q = m.start()
        if not any(a <= q < b for a, b in comments):
            return q
    return None


def _next_token(source: str, pos: int, chars: str) -> int | None:
    for t in _TOKEN_RE.finditer(source, pos):
        if t.group() in chars:
            return t.start()
    return None


def _end_of_tokens(source: str, pos: int) -> int:
    """The end of the last token of ``source`` (trailing blanks and comments excluded)."""
    end = len(source.rstrip())
    while True:
        for c in COMMENT_RE.finditer(source, pos):
            if c.end() >= end and c.start() < end:
                end = len(source[:c.start()].rstrip())
                break
        else:
            return max(end, pos)
