"""Parsing HDL text: the textX grammar ``hdl.tx`` turned into the project's own syntax
tree (frozen dataclasses with spans). textX objects never leave this module.

The syntax tree is what the text says, nothing resolved: references are names,
quantities are unevaluated expressions with a unit spelling. :mod:`mcl.hdl.build`
gives them meaning."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from mcl import textx_errors
from mcl.diagnostics import Diagnostic, LineIndex, McplError, Related, Span, error

GRAMMAR = Path(__file__).with_name("hdl.tx")


# --------------------------------------------------------------------------- expressions

@dataclass(frozen=True)
class Num:
    """A number literal; ``value`` is an int where the text is integral."""

    value: int | float
    span: Span


@dataclass(frozen=True)
class Name:
    """A (qualified) identifier, ``cores.core[*]`` has ``all_units`` set."""

    parts: tuple[str, ...]
    all_units: bool
    span: Span

    @property
    def text(self) -> str:
        return ".".join(self.parts) + ("[*]" if self.all_units else "")


@dataclass(frozen=True)
class OperationSym:
    """An operation in ``op(...)``: ``(+)`` gives symbol ``+``."""

    symbol: str
    span: Span


@dataclass(frozen=True)
class Str:
    value: str
    span: Span


@dataclass(frozen=True)
class BinOp:
    op: str
    left: Expr
    right: Expr
    span: Span


@dataclass(frozen=True)
class Neg:
    operand: Expr
    span: Span


Expr = Num | Name | OperationSym | Str | BinOp | Neg


# --------------------------------------------------------------------------- statements

@dataclass(frozen=True)
class UnitText:
    text: str
    span: Span


@dataclass(frozen=True)
class PropertyStmt:
    """``name = value unit;``"""

    name: str
    name_span: Span
    value: Expr
    unit: UnitText | None
    span: Span


@dataclass(frozen=True)
class ArgStmt:
    """``name(arg, ...);`` such as ``slots(thread, 4);``"""

    name: str
    name_span: Span
    args: tuple[Expr, ...]
    span: Span


@dataclass(frozen=True)
class NameStmt:
    """``name;``: a flag (``default``) or a reference to a block (``on_chip``)."""

    name: Name
    span: Span


@dataclass(frozen=True)
class BlockStmt:
    keyword: str
    keyword_span: Span
    name: str
    name_span: Span
    statements: tuple[Statement, ...]
    span: Span


Statement = BlockStmt | PropertyStmt | ArgStmt | NameStmt


@dataclass(frozen=True)
class DescriptionSyntax:
    """One ``.hdl`` file as written."""

    name: str
    name_span: Span
    parent: str | None
    parent_span: Span | None
    blocks: tuple[BlockStmt, ...]
    file: str
    span: Span
    text: str


# --------------------------------------------------------------------------- parsing

@cache
def _metamodel():
    from textx import metamodel_from_file

    return metamodel_from_file(str(GRAMMAR), skipws=True, ws=" \t\r\n")


class _Converter:
    """Walks a textX model once, building the syntax tree with spans."""

    def __init__(self, text: str, file: str):
        self.file = file
        self.index = LineIndex(text)

    def span(self, obj) -> Span:
        return self.index.span(self.file, obj._tx_position, obj._tx_position_end)

    def description(self, model, text: str) -> DescriptionSyntax:
        name_start = text.find(model.name, model._tx_position + len("hardware_description"))
        name_span = self.index.span(self.file, name_start, name_start + len(model.name))
        parent = parent_span = None
        if model.specializes is not None:
            parent = model.specializes.base
            s = model.specializes
            start = text.find(parent, s._tx_position + len("specializes"))
            parent_span = self.index.span(self.file, start, start + len(parent))
        return DescriptionSyntax(model.name, name_span, parent, parent_span,
                                 tuple(self.block(b) for b in model.blocks), self.file,
                                 self.span(model), text)

    def _word_span(self, obj, word: str, after: int = 0) -> Span:
        """Span of ``word`` inside ``obj``'s text, searching from offset ``after``."""
        start = self.index.text.find(word, max(obj._tx_position, after))
        if start < 0:
            start = obj._tx_position
        return self.index.span(self.file, start, start + len(word))

    def block(self, b) -> BlockStmt:
        kw_span = self._word_span(b, b.keyword)
        kw_end = self.index.offset(kw_span.end_line, kw_span.end_column)
        name_span = self._word_span(b, b.name, kw_end)
        return BlockStmt(b.keyword, kw_span, b.name, name_span,
                         tuple(self.statement(s) for s in b.statements), self.span(b))

    def statement(self, s) -> Statement:
        kind = type(s).__name__
        if kind == "Block":
            return self.block(s)
        if kind == "Property":
            unit = UnitText(" ".join(s.unit.text.split()).replace(" ", ""), self.span(s.unit)) \
                if s.unit is not None else None
            return PropertyStmt(s.name, self._word_span(s, s.name), self.expr(s.value), unit,
                                self.span(s))
        if kind == "ArgStatement":
            return ArgStmt(s.name, self._word_span(s, s.name),
                           tuple(self.expr(a) for a in s.args), self.span(s))
        return NameStmt(self.name(s.ref), self.span(s))

    def name(self, q) -> Name:
        return Name(tuple(q.parts), bool(q.all_units), self.span(q))

    def expr(self, e) -> Expr:
        kind = type(e).__name__
        if kind == "Sum":
            return self._fold(e.terms, e.ops, e)
        if kind == "Product":
            return self._fold(e.factors, e.ops, e)
        if kind == "Unary":
            inner = self.expr(e.atom)
            return Neg(inner, self.span(e)) if e.neg else inner
        if kind == "Paren":
            return self.expr(e.expr)
        if kind == "Operation":
            return OperationSym(e.symbol, self.span(e))
        if kind == "Number":
            text = e.text
            value: int | float = int(text) if text.isdigit() else float(text)
            return Num(value, self.span(e))
        if kind == "String":
            return Str(e.value, self.span(e))
        if kind == "QualName":
            return self.name(e)
        raise AssertionError(f"unexpected HDL expression node {kind}")

    def _fold(self, items, ops, node) -> Expr:
        result = self.expr(items[0])
        for op, item in zip(ops, items[1:], strict=True):
            right = self.expr(item)
            result = BinOp(op, result, right, result.span.merge(right.span))
        return result


def parse_text(text: str, file: str = "<string>") -> DescriptionSyntax:
    """Parse HDL source text. Raises :class:`McplError` with one diagnostic
    (file, line, column and what was expected) on a syntax error."""
    from textx.exceptions import TextXSyntaxError

    try:
        model = _metamodel().model_from_str(text)
    except TextXSyntaxError as e:
        raise McplError(_syntax_diagnostic(e, text, file)) from None
    except RecursionError:
        # Absurdly deep nesting (only generated input does this) is still the
        # user's input, not a bug: answer with a diagnostic at the start.
        raise McplError(error("hdl-syntax", "the description is nested too deeply to parse",
                              Span.point(file, 1, 1),
                              "split deeply nested expressions or blocks")) from None
    return _Converter(text, file).description(model, text)


def parse_file(path: str | Path) -> DescriptionSyntax:
    """Read and parse an ``.hdl`` file; a missing or unreadable file is a diagnostic."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        raise McplError(error("hdl-file", f"cannot read hardware description '{path}': {reason}",
                              None, "check the path; descriptions are .hdl files")) from None
    return parse_text(text, str(path))


def _syntax_diagnostic(e, text: str, file: str) -> Diagnostic:
    index = LineIndex(text)
    if not _TOKEN_RE.sub(_blank_comment, text).strip():
        return error("hdl-syntax", "the file is empty: a hardware description starts with "
                                   "'hardware_description NAME;'",
                     textx_errors.end_of_file_span(text, file, index),
                     "for example 'hardware_description mygpu;', 'specializes gpu;' and "
                     "the blocks (see the descriptions that `mcl hwd list` shows)")
    expected = _expected(e)
    offset = textx_errors.error_offset(e, text)
    found = text[offset:offset + 1]
    related: list[Related] = []
    if found:
        end = offset
        while end < len(text) and (text[end].isalnum() or text[end] == "_"):
            end += 1
        found_text = repr(text[offset:max(end, offset + 1)])
        span = index.span(file, offset, offset + 1)
    else:
        found_text = textx_errors.END_OF_FILE
        span = textx_errors.end_of_file_span(text, file, index)
    message = f"syntax error: found {found_text}"
    if expected:
        message += f", expected {expected}"
    hint = _syntax_hint(text[offset:offset + 40], expected)
    if "';'" in expected:
        after = textx_errors.missing_semicolon(text, offset, _TOKEN_RE,
                                               _metamodel().model_from_str)
        if after is not None:
            # Like a C compiler: the ';' is missing where the statement ends, not where
            # the parser noticed (the start of the next line).
            line, col = index.position(after.end())
            return error("hdl-syntax", f"syntax error: expected ';' after "
                                       f"{after.group()!r}", Span.point(file, line, col), hint)
    tokens = [m for m in _TOKEN_RE.finditer(text, 0, offset)
              if not m.group().startswith(("//", "/*"))]
    better = _token_hint(tokens, text, offset, expected)
    if better is not None:
        hint = better
    if not found and "'}'" in expected:
        opened = _unclosed_block(tokens)
        if opened is not None:
            start = opened[0]
            line, col = index.position(start.start())
            what = " ".join(m.group() for m in opened)
            message = f"syntax error: '{what} {{' is not closed: the file ends before its '}}'"
            hint = "add '}' where the block ends"
            related.append(Related(index.span(file, start.start(), opened[-1].end()),
                                   f"'{what}' starts here"))
    return error("hdl-syntax", message, span, hint, related)


def _blank_comment(m: re.Match[str]) -> str:
    return " " if m.group().startswith(("//", "/*")) else m.group()


def _statement_start(tokens: list[re.Match[str]]) -> list[re.Match[str]]:
    """The tokens of the statement that the last of ``tokens`` belongs to."""
    i = len(tokens)
    while i > 0 and tokens[i - 1].group() not in (";", "{", "}"):
        i -= 1
    return tokens[i:]


def _token_hint(tokens: list[re.Match[str]], text: str, offset: int,
                expected: str) -> str | None:
    """A hint for a few mistakes the grammar alone describes badly: a misspelt
    ``specializes``, a unit written in two words (``2 G Hz``), a decimal comma, a
    '}' too many."""
    from mcl.hdl.build import suggest

    statement = _statement_start(tokens)
    nxt = _TOKEN_RE.match(text, offset)
    found = nxt.group() if nxt else ""
    if "'{'" in expected and len(statement) == 2 and statement[0].group() != "specializes":
        close = suggest(statement[0].group(), ["specializes"])
        if close:
            return f"did you mean '{close}'? a description names its parent with " \
                   "'specializes NAME;'"
    if "';'" in expected and tokens and tokens[-1].group() in _PREFIXES and found:
        return f"write the unit in one word: '{tokens[-1].group()}{found}'"
    if found == "," and tokens and tokens[-1].group().isdigit():
        return "decimals are written with a point: 2.5 GHz, not 2,5 GHz"
    if found == "}" and "end of the file" in expected:
        return "this '}' closes no block: remove it, or look for a '}' too many above"
    return None


_PREFIXES = ("k", "M", "G", "T")


def _unclosed_block(tokens: list[re.Match[str]]) -> list[re.Match[str]] | None:
    """The words before the innermost '{' of ``tokens`` that no '}' closes
    (``device mygpu``), or None."""
    stack: list[int] = []
    for i, m in enumerate(tokens):
        if m.group() == "{":
            stack.append(i)
        elif m.group() == "}" and stack:
            stack.pop()
    if not stack:
        return None
    words = _statement_start(tokens[:stack[-1]])
    return words or None


# Comments and strings are whole tokens (comments are skipped where a ';' may be
# missing); the rest are names, numbers and single characters.
_TOKEN_RE = re.compile(r'//[^\n]*|/\*.*?\*/|"[^"\n]*"?|[A-Za-z_]\w*|\d+(?:\.\d+)?'
                       r'(?:[eE][+-]?\d+)?|\S', re.S)


def _expected(e) -> str:
    names: list[str] = []
    for r in getattr(e, "expected_rules", None) or []:
        label = getattr(r, "to_match", None) or getattr(r, "rule_name", "") or str(r)
        if textx_errors.rule_word(r) is None:
            continue   # a comment is possible everywhere and says nothing
        if getattr(r, "rule_name", "") == "EOF":
            label = textx_errors.END_OF_FILE
        elif label in ("ID", "STRING"):
            label = {"ID": "a name", "STRING": "a string"}[label]
        elif label.startswith("\\d"):
            label = "a number"
        elif label.startswith("[A-Za-z]"):
            label = "a unit"
        elif len(label) <= 24 and not label.startswith(("/", "[", "(", "\\")):
            label = f"'{label}'"
        else:
            continue
        if label not in names:
            names.append(label)
    if "a number" in names:
        # where a value may start: '-', '(', a number, a name or a string
        names = ["a value"] + [n for n in names if n not in
                               ("'-'", "'('", "a number", "a name", "a string")]
    if not names:
        return ""
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


def _syntax_hint(rest: str, expected: str) -> str:
    if "';'" in expected:
        return "end the statement with ';'"
    if "'}'" in expected:
        return "close the block with '}' or add a statement: a block, 'name = value;', " \
               "'name(args);' or a reference 'name;'"
    if rest.startswith("hardware") or "'hardware_description'" in expected:
        return "a description starts with 'hardware_description NAME;'"
    return "see the HDL grammar in LANGUAGE.md section 1"
