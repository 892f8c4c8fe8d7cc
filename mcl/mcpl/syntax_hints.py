"""What a syntax error probably means, for the diagnostics of the builder: a
misspelled keyword (``forech (int i in n threads)`` parses as a call of
``forech`` and fails further on) and a file that holds no code at all."""

from __future__ import annotations

import re

from mcl.diagnostics import Diagnostic, LineIndex, Related, Span, error
from mcl.mcpl import chunks
from mcl.mcpl.build_ast import RESERVED

# One level of nested parentheses inside a parenthesised header.
_PARENS = r"\((?:[^();{}]|\([^();{}]*\))*\)"

#: For each keyword of the grammar (mcpl.tx) that starts a statement or an item:
#: what follows it in that construct. A word that is close to the keyword and
#: followed by this is taken for a misspelling of it.
KEYWORD_SHAPES: dict[str, re.Pattern[str]] = {kw: re.compile(shape) for kw, shape in {
    "foreach": r"\s*\([^;(){}]*\sin\s",
    "for": r"\s*\((?:[^;(){}]|\([^;(){}]*\))*;",
    "while": r"\s*" + _PARENS + r"\s*[{A-Za-z_]",
    "if": r"\s*" + _PARENS + r"\s*[{A-Za-z_]",
    "else": r"\s*(?:\{|if\b)",
    "return": r"[ \t]+[A-Za-z_0-9(!~-]",
    "barrier": r"\s*\(\s*[A-Za-z_]\w*\s*\)\s*;",
    "break": r"\s*;",
    "continue": r"\s*;",
    "module": r"\s+[A-Za-z_]\w*\s*;",
    "package": r"\s+[A-Za-z_][\w.]*\s*;",
    "import": r"\s+[A-Za-z_][\w.]*\s*;",
    "export": r"\s+[A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*\s*;",
    "type": r"\s+[A-Za-z_]\w*\s*\{",
    "const": r"\s+[A-Za-z_]\w*(?:\s*\[[^\]]*\])*\s+[A-Za-z_]\w*\s*=",
}.items()}
assert KEYWORD_SHAPES.keys() <= RESERVED
#: The keywords that start a line of the header or a top-level item; the others
#: start statements, inside a function's braces.
TOP_LEVEL = frozenset({"module", "package", "import", "export", "type", "const"})

_TOKEN_RE = re.compile(r"[A-Za-z_]\w*|\d[\w.]*|\S")
_WORD_RE = re.compile(r"[A-Za-z_]\w*")
_CONTROL = ("if", "while", "for", "foreach")


def _blank(text: str) -> str:
    """``text`` with comments replaced by spaces (offsets kept)."""
    return chunks.COMMENT_RE.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), text)


def statement_start(text: str, start: int, offset: int) -> tuple[int, bool]:
    """(the offset of the first token of the statement, header line or item that
    the token at ``offset`` belongs to, whether that is at the top level: outside
    every brace); ``text[start:]`` is the item that holds it, without comments."""
    begin: int | None = None
    parens: list[bool] = []    # per open '(': whether it is the header of if/for/...
    braces = 0
    previous = ""
    for m in _TOKEN_RE.finditer(text, start, offset):
        token = m.group()
        if begin is None:
            begin = m.start()
        if token == "(":
            parens.append(previous in _CONTROL)
        elif token == ")":
            if parens and parens.pop() and not parens:
                begin = None        # the body of the if/for/while starts next
        elif not parens and (token in (";", "{", "}") or token == "else"):
            begin = None
            braces += {"{": 1, "}": -1}.get(token, 0)
        previous = token
    return (begin if begin is not None else chunks.skip_space(text, offset)), braces <= 0


def misspelled_keyword(source: str, base: int, offset: int
                       ) -> tuple[int, int, str, str] | None:
    """(start, end, word, keyword) when the statement that a syntax error at
    ``offset`` is in starts with a word that is close to a keyword and looks
    like that keyword's construct otherwise (``forech (int i in n threads)``);
    ``source[base:]`` is the item that did not parse."""
    from mcl.mcpl.check_common import closest

    text = _blank(source[base:offset + 400])
    begin, top = statement_start(text, 0, offset - base)
    m = _WORD_RE.match(text, begin)
    if m is None or m.group() in RESERVED:
        return None
    rest = text[m.end():]
    candidates = [kw for kw, shape in KEYWORD_SHAPES.items()
                  if (kw in TOP_LEVEL) == top and shape.match(rest)]
    word = m.group()
    keyword = closest(word, candidates) or next(
        (kw for kw in candidates if _transposed(word, kw)), None)   # fi: too short for difflib
    if keyword is None:
        return None
    return base + m.start(), base + m.end(), m.group(), keyword


def _transposed(word: str, keyword: str) -> bool:
    """Whether ``word`` is ``keyword`` with two neighbouring letters swapped."""
    diff = [i for i, (a, b) in enumerate(zip(word, keyword, strict=False)) if a != b]
    return len(word) == len(keyword) and len(diff) == 2 and diff[1] == diff[0] + 1 and \
        word[diff[0]] == keyword[diff[1]] and word[diff[1]] == keyword[diff[0]]


def keyword_diagnostic(source: str, base: int, offset: int, index: LineIndex, file: str,
                       at: Span, what: str, found: str) -> Diagnostic | None:
    """The diagnostic of a syntax error at ``offset`` (``at``, 'expected ``what``,
    found ``found``') caused by a misspelled keyword, or None if it looks like
    none was. It points at the misspelled word; the place where the parse
    failed is a note."""
    guess = misspelled_keyword(source, base, offset)
    if guess is None:
        return None
    start, end, word, keyword = guess
    span = index.span(file, start, end)
    if span == at:      # the parse failed at the word itself
        return error("mcpl-syntax", f"syntax error: '{word}' is not a keyword of MCPL "
                     f"(expected {what})", span, f"did you mean '{keyword}'?")
    return error("mcpl-syntax", f"syntax error: '{word}' is not a keyword of MCPL", span,
                 f"did you mean '{keyword}'?",
                 [Related(at, f"read as a name, '{word}' makes the parse fail here: "
                              f"expected {what}, found {found}")])


def empty_file(source: str, file: str) -> Diagnostic | None:
    """The diagnostic of a file with nothing but blanks and comments, or None."""
    if _blank(source).strip():
        return None
    what = "empty" if not source.strip() else "empty but for comments"
    return error("mcpl-syntax",
                 f"the file is {what}: an MCPL file starts with `module NAME;` "
                 "(or `package NAME;` and then `module NAME;`)",
                 Span.point(file, 1, 1),
                 "for example `module vector_add;`, then imports such as `import perfect;` "
                 "and the functions")
