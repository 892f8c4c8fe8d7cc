"""Syntax errors of Lift programs as diagnostics, the way MCPL reports them: ``expected
')' or ',' ..., found 'x'`` (words, never the grammar's regular expressions), located
at the token found, or, at the end of the input, just after the last character of the
file (a line the source excerpt can show).

The words for literal tokens and the end of the file, and the place of an error at the
end of the file, are those of every textX grammar (:mod:`mcl.textx_errors`); this
module only names the regular expressions of ``lift.tx``."""

from __future__ import annotations

import re
from typing import Any

from mcl import textx_errors
from mcl.diagnostics import Diagnostic, LineIndex, error

#: The regular expressions of lift.tx, in words (a regex missing here is "something
#: else", never shown as written).
REGEX_WORDS = {
    r"\._(\d+)": "'._0' (a tuple component)",
    r"[-+*\/]": "an operator",
    r"∘|o(?![\w])": "'o' (composition)",
    r"fun(?![\w])|λ|[\\]": "a lambda (fun)",
    r"(float|int|double|bool)(2|3|4|8|16)?(?![\w])": "a type (float, int, ...)",
    r"[^\]]+": "a size",
    r"-?\d+(\.\d*)?([eE][-+]?\d+)?[fF]?(?![\w])": "a number",
    r"\d+(\.\d*)?([eE][-+]?\d+)?[fF]?(?![\w])": "a number",
    r"[A-Za-z_][A-Za-z0-9_]*": "a name",
    r"==|!=": "an operator",
    r"<=|>=|<|>": "an operator",
    r"[-+]": "an operator",
    r"[*\/%]": "an operator",
    r"[-!]": "an expression",
}

#: Continuations possible after (almost) any expression: named only when nothing else is.
_NOISE = ("'._0' (a tuple component)",)
#: What an expression may start with (named together: "an expression").
_STARTS = ("an expression", "a name", "a number", "'('", "a lambda (fun)")
#: Named first: what closes an open construct is the likeliest fix.
_CLOSERS = ("')'", "']'", "','", "';'")

_TOKEN_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d[\w.]*|\S")
_SPACE_RE = re.compile(r"(?:\s+|//[^\n]*|#[^\n]*|/\*[\s\S]*?\*/)*")


def expected_words(rules: list[Any] | None) -> list[str]:
    """What the parser expected, in words, without repetitions."""
    words: list[str] = []
    for rule in rules or []:
        pattern = getattr(rule, "to_match", None)
        if type(rule).__name__ in ("Not", "And"):   # lookaheads (`!Keyword`): no token
            continue
        if type(rule).__name__ == "RegExMatch":
            w = REGEX_WORDS.get(pattern or "", "something else")
        else:
            w = textx_errors.rule_word(rule) or "something else"
        if w not in words:
            words.append(w)
    if len(words) > 1:
        words = [w for w in words if w not in _NOISE and w != "something else"] or words
    if "an expression" in words or {"a name", "a number"} <= set(words):
        # where any expression may start: one word for its many first tokens
        first = words.index(next(w for w in words if w in _STARTS))
        words = [w for w in words if w not in _STARTS]
        words.insert(first, "an expression")
    return sorted(words, key=lambda w: (w not in _CLOSERS, _CLOSERS.index(w)
                                        if w in _CLOSERS else 0))


def syntax_diagnostic(exc: Any, text: str, file: str) -> Diagnostic:
    """The diagnostic of textX's syntax error ``exc`` in ``text``."""
    index = LineIndex(text)
    offset = textx_errors.error_offset(exc, text)
    start = _SPACE_RE.match(text, min(offset, len(text))).end()
    m = _TOKEN_RE.match(text, start)
    if m:
        found = f"'{m.group()}'"
        span = index.span(file, m.start(), m.end())
    else:   # just after the last character: a line of the file, shown with a caret
        found = textx_errors.END_OF_FILE
        span = textx_errors.end_of_file_span(text, file, index)
    words = expected_words(getattr(exc, "expected_rules", None))
    name = re.search(r"([A-Za-z_]\w*)(?:\s|//[^\n]*|#[^\n]*)*$", text[:start])
    if words == ["'='"] and name and (not m or m.group() != "(") and \
            text[:name.start(1)].strip() and not text[:name.start(1)].rstrip().endswith(";"):
        # `f x`: x was read as the name of a new definition (`x = ...`)
        x = name.group(1)
        return error("lift-syntax", f"syntax error: expected '$' before '{x}' (to apply a "
                     f"function to it) or '=' after it (to define '{x}')",
                     index.span(file, name.start(1), name.end(1)),
                     hint=f"a function is applied with '$': f $ {x}")
    if len(words) > 6:
        words = words[:6] + ["..."]
    what = " or ".join(words) if words else "something else"
    if found == "'.'" and "'o' (composition)" in words:
        hint = "functions are composed with 'o' (or '∘'): f o g, not f . g"
    elif "')'" in words and not m:
        hint = "check that every '(' has a matching ')'"
    elif m and "')'" in words and "','" in words:
        hint = f"a ')' or ',' may be missing before {found}"
    else:
        hint = "the syntax of Lift programs: mcl/lift/lift.tx"
    return error("lift-syntax", f"syntax error: expected {what}, found {found}", span, hint)


__all__ = ["syntax_diagnostic", "expected_words", "REGEX_WORDS"]
