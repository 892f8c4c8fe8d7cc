"""One diagnostic type for the whole compiler: syntax errors, semantic errors and
performance feedback, rendered like a compiler on a terminal or as JSON for tools."""

from __future__ import annotations

import bisect
import enum
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path


class Severity(enum.IntEnum):
    """Ordered so that ``max()`` of a list gives the worst one."""

    HINT = 1
    INFO = 2
    WARNING = 3
    ERROR = 4

    @property
    def label(self) -> str:
        return {Severity.HINT: "hint", Severity.INFO: "info",
                Severity.WARNING: "warning", Severity.ERROR: "error"}[self]


@dataclass(frozen=True, order=True)
class Span:
    """A range of source text. Lines and columns count from 1; the end column is
    exclusive. ``file`` is the path as the user gave it (or ``<string>``)."""

    file: str
    line: int
    column: int
    end_line: int
    end_column: int

    @staticmethod
    def point(file: str, line: int, column: int) -> Span:
        return Span(file, line, column, line, column + 1)

    def merge(self, other: Span | None) -> Span:
        if other is None or other.file != self.file:
            return self
        start = min((self.line, self.column), (other.line, other.column))
        end = max((self.end_line, self.end_column), (other.end_line, other.end_column))
        return Span(self.file, start[0], start[1], end[0], end[1])

    def contains(self, line: int, column: int) -> bool:
        return (self.line, self.column) <= (line, column) < (self.end_line, self.end_column) \
            or (self.line, self.column) == (line, column)

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


class LineIndex:
    """Maps character offsets of a text to 1-based (line, column); the text may start
    at line ``line`` and column ``column`` of a file (an item of a module), which
    positions and spans then count from."""

    def __init__(self, text: str, line: int = 1, column: int = 1):
        self.text = text
        self._starts = [0, *(m.end() for m in re.finditer("\n", text))]
        self._line = line - 1
        self._column = column - 1

    def position(self, offset: int) -> tuple[int, int]:
        offset = max(0, min(offset, len(self.text)))
        line = bisect.bisect_right(self._starts, offset) - 1
        column = offset - self._starts[line] + 1
        if line == 0:
            column += self._column
        return line + 1 + self._line, column

    def offset(self, line: int, column: int) -> int:
        """The offset of a 1-based (line, column) relative to this text."""
        line = max(1, min(line, len(self._starts)))
        return min(self._starts[line - 1] + column - 1, len(self.text))

    def span(self, file: str, start: int, end: int) -> Span:
        l1, c1 = self.position(start)
        l2, c2 = self.position(max(end, start + 1) if end <= start else end)
        return Span(file, l1, c1, l2, c2)

    def line_text(self, line: int) -> str:
        if not 1 <= line <= len(self._starts):
            return ""
        start = self._starts[line - 1]
        end = self._starts[line] - 1 if line < len(self._starts) else len(self.text)
        return self.text[start:end].rstrip("\r")


@dataclass(frozen=True)
class Related:
    span: Span
    message: str


@dataclass(frozen=True)
class Diagnostic:
    """What was found, where, why it matters (``message``) and what to try (``hint``).

    ``code`` is a stable identifier such as ``hdl-unknown-reference`` or
    ``feedback-reuse``; tools and tests match on it, never on the message."""

    severity: Severity
    code: str
    message: str
    span: Span | None = None
    hint: str | None = None
    related: tuple[Related, ...] = ()
    data: dict = field(default_factory=dict, compare=False, hash=False)

    @property
    def is_error(self) -> bool:
        return self.severity == Severity.ERROR

    def to_json(self) -> dict:
        out: dict = {"severity": self.severity.label, "code": self.code, "message": self.message}
        if self.span is not None:
            out["file"] = self.span.file
            out["range"] = {"start": {"line": self.span.line, "column": self.span.column},
                            "end": {"line": self.span.end_line, "column": self.span.end_column}}
        if self.hint:
            out["hint"] = self.hint
        if self.related:
            out["related"] = [{"file": r.span.file, "line": r.span.line,
                               "column": r.span.column, "message": r.message}
                              for r in self.related]
        if self.data:
            out["data"] = self.data
        return out


def article(word: str) -> str:
    """``word`` with its indefinite article, as a message says it: 'an int', 'an
    IndexVector', 'a float', 'a uint' and 'a ushort' (said 'you-int'), 'an unsigned', 'a
    uniform' but 'an uninitialised'."""
    low = word.lower()
    spoken = low[:1] in ("a", "e", "i", "o") or (
        low.startswith("un") and (not low.startswith("uni") or low.startswith("unin")))
    return f"{'an' if spoken else 'a'} {word}"


def error(code: str, message: str, span: Span | None = None, hint: str | None = None,
          related: Sequence[Related] = ()) -> Diagnostic:
    return Diagnostic(Severity.ERROR, code, message, span, hint, tuple(related))


def warning(code: str, message: str, span: Span | None = None, hint: str | None = None,
            related: Sequence[Related] = ()) -> Diagnostic:
    return Diagnostic(Severity.WARNING, code, message, span, hint, tuple(related))


def info(code: str, message: str, span: Span | None = None, hint: str | None = None,
         related: Sequence[Related] = ()) -> Diagnostic:
    return Diagnostic(Severity.INFO, code, message, span, hint, tuple(related))


class McplError(Exception):
    """An error the user caused. Carries diagnostics; the CLI prints them and exits 1."""

    def __init__(self, diagnostics: Diagnostic | Iterable[Diagnostic]):
        if isinstance(diagnostics, Diagnostic):
            diagnostics = [diagnostics]
        self.diagnostics: list[Diagnostic] = list(diagnostics)
        super().__init__("\n".join(d.message for d in self.diagnostics))


def has_errors(diagnostics: Iterable[Diagnostic]) -> bool:
    return any(d.is_error for d in diagnostics)


def sort_key(d: Diagnostic):
    s = d.span
    return (s.file, s.line, s.column) if s else ("", 0, 0)


class SourceCache:
    """Reads source files once for rendering carets; texts given directly win."""

    def __init__(self, texts: dict[str, str] | None = None):
        self._index: dict[str, LineIndex | None] = {}
        for name, text in (texts or {}).items():
            self._index[name] = LineIndex(text)

    def add(self, file: str, text: str) -> None:
        self._index[file] = LineIndex(text)

    def line(self, file: str, line: int) -> str:
        if file not in self._index:
            try:
                self._index[file] = LineIndex(Path(file).read_text(encoding="utf-8",
                                                                   errors="replace"))
            except OSError:
                self._index[file] = None
        idx = self._index[file]
        return idx.line_text(line) if idx else ""


def render_text(diagnostics: Iterable[Diagnostic], sources: SourceCache | None = None,
                color: bool = False) -> str:
    """Render like gcc/rustc: ``file:line:col: error: message``, the source line,
    a caret line, then the hint and related locations."""
    sources = sources or SourceCache()
    colors = {Severity.ERROR: "\033[1;31m", Severity.WARNING: "\033[1;35m",
              Severity.INFO: "\033[1;36m", Severity.HINT: "\033[1;32m"}
    out: list[str] = []
    for d in diagnostics:
        label = d.severity.label
        if color:
            label = f"{colors[d.severity]}{label}\033[0m"
        where = f"{d.span}: " if d.span else "mcl: "
        out.append(f"{where}{label}: {d.message} [{d.code}]")
        if d.span:
            src = sources.line(d.span.file, d.span.line)
            if src:
                expanded = src.expandtabs(4)
                prefix = src[: d.span.column - 1].expandtabs(4)
                width = (d.span.end_column - d.span.column
                         if d.span.end_line == d.span.line else len(src) - d.span.column + 1)
                width = max(1, min(width, max(1, len(expanded) - len(prefix))))
                out.append(f"  {d.span.line:>4} | {expanded}")
                out.append(f"       | {' ' * len(prefix)}^{'~' * (width - 1)}")
        if d.hint:
            out.append(f"       = help: {d.hint}")
        for r in d.related:
            out.append(f"       = note: {r.span}: {r.message}")
    return "\n".join(out)


def render_json(diagnostics: Iterable[Diagnostic]) -> str:
    return json.dumps([d.to_json() for d in diagnostics], indent=2)


def check_summary(diagnostics: Iterable[Diagnostic], files: int) -> str:
    """The last line of `mcl check` and `mcl hwd check`: how many diagnostics of each
    severity they printed (infos and hints are "info", not warnings)."""
    diagnostics = list(diagnostics)
    errors = sum(1 for d in diagnostics if d.severity == Severity.ERROR)
    warnings = sum(1 for d in diagnostics if d.severity == Severity.WARNING)
    infos = sum(1 for d in diagnostics if d.severity < Severity.WARNING)
    extra = f", {infos} info" if infos else ""
    if errors == 0:
        found = "no errors" + (f", {warnings} warning(s)" if warnings else "") + extra
    else:
        found = f"{errors} error(s), {warnings} warning(s){extra}"
    return f"{files} file(s) checked: {found}"
