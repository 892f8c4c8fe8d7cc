"""What the syntax diagnostics of the three textX grammars (MCPL, Lift, HDL) have in
common: the expected rules in words, where a syntax error at the end of a file is
shown, and where a ';' that the parser expected is most likely missing.

Each grammar keeps its own words for its rule names; this module only knows textX's
and Arpeggio's kinds of rules."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping
from typing import Any

from mcl.diagnostics import LineIndex, Span

#: The word of the end of the file (Arpeggio's rule ``EOF``).
END_OF_FILE = "the end of the file"


RuleWords = Mapping[str, str] | Callable[[str], str | None]


def rule_word(rule: Any, rule_words: RuleWords | None = None) -> str | None:
    """One rule that the parser expected, in words: a literal token or a keyword
    quoted (``'}'``, ``'foreach'``), a named rule by ``rule_words`` (a table or a
    function of the rule's name; the name itself where it gives nothing), the end
    of the file; None for a comment, which is possible everywhere and so says
    nothing. An unnamed regular expression that is not a keyword is "something
    else": a grammar's regular expressions are never shown as written."""
    to_match = getattr(rule, "to_match", None)
    name = getattr(rule, "rule_name", "") or getattr(rule, "name", "")
    if name == "Comment" or (to_match or "").startswith(("\\/\\/", "\\/\\*")):
        return None
    if type(rule).__name__ == "StrMatch" and to_match:
        return f"'{to_match}'"
    if not name.strip() or name.startswith("RegExMatch"):
        # textX turns keywords into anonymous regexes (autokwd).
        word = (to_match or "").removesuffix(r"\b")
        return f"'{word}'" if word.isidentifier() else "something else"
    if name == "EOF":
        return END_OF_FILE
    w = rule_words(name) if callable(rule_words) else (rule_words or {}).get(name)
    return w or name or "something else"


def describe_expected(rules: list[Any] | None,
                      rule_words: RuleWords | None = None,
                      noise: Collection[str] = ()) -> list[str]:
    """What the parser expected (textX's ``expected_rules``), in words (see
    :func:`rule_word`), without repetitions, in the parser's order. Words in
    ``noise`` (continuations possible after almost anything) are left out where
    anything else is expected: naming them only hides what is missing."""
    words: list[str] = []
    for rule in rules or []:
        w = rule_word(rule, rule_words)
        if w is not None and w not in words:
            words.append(w)
    if len(words) > 1 and any(w not in noise for w in words):
        words = [w for w in words if w not in noise]
    return words


def error_offset(exc: Any, text: str) -> int:
    """The offset in ``text`` (the text that was parsed) of textX's syntax error ``exc``."""
    offset = getattr(exc.__cause__, "position", None)
    if offset is None:
        offset = LineIndex(text).offset(int(exc.line or 1), int(exc.col or 1))
    return offset


def end_of_file_span(text: str, file: str, index: LineIndex | None = None) -> Span:
    """Where an error found at the end of ``text`` is shown: just after its last
    character that is not blank (a line that the source excerpt can show, where a
    final newline would give the line after the last), 1:1 in a blank file."""
    if not text.strip():
        return Span.point(file, 1, 1)
    end = len(text.rstrip())
    return (index or LineIndex(text)).span(file, end, end)


def missing_semicolon(text: str, offset: int, tokens: re.Pattern[str],
                      parse: Callable[[str], Any], *,
                      comments: tuple[str, ...] = ("//", "/*"),
                      ends: str = ";{}") -> re.Match[str] | None:
    """Where a ';' that the parser expected at the token at ``offset`` of ``text``
    is most likely missing: the token of an earlier line after which it goes, or
    None (it goes at ``offset``, where the parser noticed).

    A statement's end is only noticed at the next token, often on the next line:
    when that token starts its line, the ';' belongs after the token before it.
    The next line's first words may even have been taken into the statement (in
    HDL, ``max_nr_units = 1024`` before ``perfect.hierarchy.threads;`` reads
    ``perfect`` as a unit), so the last token of an earlier line is accepted as
    well when nothing between it and ``offset`` ends a statement (a token in
    ``ends``) and a ';' inserted after it lets ``parse`` get past ``offset``.

    ``tokens`` splits the grammar's text into tokens (comments whole: tokens that
    start with one of ``comments`` are skipped); ``parse`` parses a text of the
    grammar as the failed parse did, raising textX's syntax error."""
    found = [m for m in tokens.finditer(text, 0, offset)
             if not m.group().startswith(comments)]
    if not found:
        return None
    line_start = text.rfind("\n", 0, offset) + 1
    if found[-1].end() <= line_start:
        return found[-1]
    earlier = [m for m in found if m.end() <= line_start]
    if not earlier:
        return None
    candidate = earlier[-1]
    between = found[len(earlier):]
    if candidate.group() in ends or any(m.group() in ends for m in between):
        return None   # the earlier line ends another statement
    from textx.exceptions import TextXSyntaxError

    fixed = text[:candidate.end()] + ";" + text[candidate.end():]
    try:
        parse(fixed)
    except TextXSyntaxError as e:
        if error_offset(e, fixed) <= offset + 1:
            return None
    except RecursionError:
        return None
    return candidate


_OPENING = {")": "(", "]": "["}


def operand_before(text: str, token: re.Match[str], tokens: re.Pattern[str],
                   longest: int = 32) -> str:
    """The text of the operand that ends with ``token``: ``b[i]``, ``f(x, y)`` or
    ``a[i][j]`` for the ']' or ')' that closes it on its line; the token's own text
    otherwise, or where the operand is longer than ``longest`` characters."""
    line_start = text.rfind("\n", 0, token.start()) + 1
    before = list(tokens.finditer(text, line_start, token.end()))
    i = len(before) - 1
    while i >= 0 and before[i].group() in _OPENING:
        depth = 0
        for j in range(i, -1, -1):
            t = before[j].group()
            depth += (t in _OPENING) - (t in _OPENING.values())
            if depth == 0:
                break
        if depth != 0:
            return token.group()
        i = j - 1          # what the bracketed part follows: a name, another one
        if i < 0 or not re.fullmatch(r"[A-Za-z_]\w*|[)\]]", before[i].group()):
            i += 1
            break
    operand = text[before[max(i, 0)].start():token.end()]
    return operand if len(operand) <= longest else token.group()


__all__ = ["END_OF_FILE", "rule_word", "describe_expected", "error_offset",
           "end_of_file_span", "missing_semicolon", "operand_before"]
