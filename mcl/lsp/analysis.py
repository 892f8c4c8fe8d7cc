"""Checking one editor buffer: the compiler's diagnostics and resolution tables for a
document's current text, independent of the protocol (the server and the tests
call :func:`analyse` directly).

An MCPL buffer is parsed and checked with ``mcl.mcpl.check`` and, when it has no
error, given to the performance feedback of ``mcl.analyses``. A buffer that does
not parse still yields a module for symbols, hover and completion where
possible: the lines the parser stopped at are blanked (keeping every position)
and the text is parsed again. An HDL buffer is checked against the library with
``mcl.hdl.check_text``.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcl.diagnostics import Diagnostic, McplError, Severity
from mcl.lsp.settings import Settings
from mcl.mcpl import ast

log = logging.getLogger(__name__)

MCPL_EXTENSIONS = (".mcpl", ".mcl")
HDL_EXTENSIONS = (".hdl",)

#: How many times a broken buffer is re-parsed with one more line blanked.
MAX_REPAIRS = 4


def language_of(path: str, language_id: str | None = None) -> str | None:
    """``"mcpl"``, ``"hdl"`` or None, from the client's language id or the file extension."""
    if language_id in ("mcpl", "hdl"):
        return language_id
    suffix = Path(path).suffix.lower()
    if suffix in MCPL_EXTENSIONS:
        return "mcpl"
    if suffix in HDL_EXTENSIONS:
        return "hdl"
    return None


@dataclass
class Analysis:
    """What the compiler knows about one version of one document.

    ``diagnostics`` are the ones to show for this document (syntax, semantic,
    feedback; those located in other files are left out). ``feedback`` is the part
    of them that came from the analyses. ``checked`` is the checked module (of
    the repaired text when the buffer does not parse); ``module`` its AST (None
    if not even a repaired text parses). ``hardware`` is the description an HDL
    buffer defines."""

    file: str
    text: str
    language: str
    version: int | None = None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    feedback: list[Diagnostic] = field(default_factory=list)
    checked: Any = None
    module: ast.Module | None = None
    parses: bool = True
    hardware: Any = None
    settings: Settings = field(default_factory=Settings)

    @property
    def is_mcpl(self) -> bool:
        return self.language == "mcpl"

    def library(self) -> Any:
        """The hardware-description library the document was checked against."""
        from mcl.mcpl.resolve import hardware_library

        return hardware_library(self.settings.search_path)


def analyse(file: str, text: str, language: str, settings: Settings | None = None,
            version: int | None = None, parser: Any = None) -> Analysis:
    """Check ``text`` as the contents of ``file`` (a file-system path). ``parser`` (an
    :class:`mcl.lsp.incremental.IncrementalParser` kept per document) re-parses only
    the functions that changed since the previous version."""
    settings = settings or Settings()
    if language == "hdl":
        return _analyse_hdl(file, text, settings, version)
    return _analyse_mcpl(file, text, settings, version, parser)


def _parse(text: str, file: str, parser: Any) -> tuple[ast.Module | None, list[Diagnostic]]:
    from mcl.mcpl import parse

    if parser is not None:
        return parser.parse(text, file)
    try:
        return parse(text, file), []
    except McplError as e:
        return None, list(e.diagnostics)


def _analyse_mcpl(file: str, text: str, settings: Settings, version: int | None,
                  parser: Any = None) -> Analysis:
    from mcl.mcpl import check

    out = Analysis(file, text, "mcpl", version, settings=settings)
    module, syntax = _parse(text, file, parser)
    if module is not None and not syntax:
        checked = check(module, settings.search_path)
        return _checked(out, checked, settings, parser)
    # Syntax errors: show them (as `mcl check` does, only them), but keep a module
    # of the repaired text for the other features.
    return _repaired(out, text, syntax, settings, parser)


def _checked(out: Analysis, checked: Any, settings: Settings, parser: Any) -> Analysis:
    out.checked, out.module = checked, checked.module
    out.diagnostics = _own(checked.diagnostics, out.file)
    if not checked.has_errors and settings.feedback:
        cache = getattr(parser, "feedback_cache", None)
        out.feedback = _own(_run_feedback(checked, settings, cache), out.file)
        out.diagnostics += out.feedback
    return out


def _repaired(out: Analysis, text: str, syntax: list[Diagnostic], settings: Settings,
              parser: Any) -> Analysis:
    from mcl.mcpl import check

    file = out.file
    out.parses = False
    out.diagnostics = _own(syntax, file)
    repaired = text
    for _ in range(MAX_REPAIRS):
        lines = _error_lines(syntax)
        if not lines:
            break
        repaired = blank_lines(repaired, lines)
        module, syntax = _parse(repaired, file, parser)
        if module is None or syntax:
            continue
        out.module = module
        try:
            out.checked = check(module, settings.search_path)
        except Exception:  # the tables are a convenience here; never fail the buffer
            log.exception("checking the repaired text of %s failed", file)
        break
    return out


def _error_lines(diagnostics: list[Diagnostic]) -> set[int]:
    return {d.span.line for d in diagnostics if d.span is not None and d.span.line > 0}


_NOT_NEWLINE = re.compile(r"[^\n\r]")


def blank_lines(text: str, lines: set[int]) -> str:
    """``text`` with the given (1-based) lines replaced by spaces: every other
    character keeps its line and column."""
    parts = text.split("\n")
    for n in lines:
        if 1 <= n <= len(parts):
            parts[n - 1] = _NOT_NEWLINE.sub(" ", parts[n - 1])
    return "\n".join(parts)


def _run_feedback(checked: Any, settings: Settings, cache: dict | None = None
                  ) -> list[Diagnostic]:
    """Performance feedback of ``mcl.analyses``, per function, re-using the results of
    functions that did not change (``cache``, kept per document: the symbolic
    analyses take about 15 ms per function, too much for every keystroke in a long
    module). Feedback is advice: it is shown as information or hint whatever
    severity a pass chose, so it never looks like an error."""
    try:
        import mcl.analyses as analyses
    except ImportError:
        return []
    per_function = getattr(analyses, "function_feedback", None)
    passes = getattr(analyses, "PASSES", None)
    if per_function is None or passes is None:
        return []
    selected = set(settings.feedback_passes) if settings.feedback_passes is not None \
        else set(passes)
    values = dict(settings.values) or None
    names = {f.name: f for f in checked.module.functions}
    fresh: dict = {}
    found: list[Diagnostic] = []
    for f in checked.module.functions:
        hw = checked.hardware_of(f)
        if hw is None:
            continue
        # A function's feedback depends on its text, the functions it calls, its
        # level and the settings.
        callees = tuple(sorted({names[c.func] for c in ast.walk(f.body)
                                if isinstance(c, ast.Call) and c.func in names
                                and c.func != f.name}, key=lambda g: g.name))
        key = (f, callees, hw.name, tuple(sorted((values or {}).items())),
               tuple(sorted(selected)))
        got = cache.get(key) if cache is not None else None
        if got is None:
            try:
                got = list(per_function(f, checked, hw, values, selected))
            except McplError as e:
                got = list(e.diagnostics)
            except Exception:
                # A bug in one analysis must not take the other diagnostics with it.
                log.exception("performance feedback failed for %s", f.name)
                got = []
        fresh[key] = got
        found += got
    if cache is not None:
        cache.clear()
        cache.update(fresh)
    out: list[Diagnostic] = []
    seen: set[tuple] = set()
    for d in found:
        if (d.code, d.span, d.message) in seen:
            continue
        seen.add((d.code, d.span, d.message))
        if d.severity >= Severity.WARNING:
            import dataclasses

            d = dataclasses.replace(d, severity=Severity.INFO)
        out.append(d)
    return out


def _analyse_hdl(file: str, text: str, settings: Settings, version: int | None) -> Analysis:
    from mcl.hdl import check_text

    out = Analysis(file, text, "hdl", version, settings=settings)
    try:
        hardware, diags = check_text(text, file, settings.search_path)
    except McplError as e:
        hardware, diags = None, list(e.diagnostics)
    out.hardware = hardware
    out.parses = hardware is not None
    out.diagnostics = _own(diags, file)
    return out


def same_file(a: str, b: str) -> bool:
    if a == b:
        return True
    try:
        return Path(a).resolve() == Path(b).resolve()
    except OSError:
        return False


def _own(diagnostics: list[Diagnostic], file: str) -> list[Diagnostic]:
    """The diagnostics located in ``file`` plus those without a location (shown at the
    top of the document); problems inside imported files are reported by the
    compiler at the import statement already."""
    return [d for d in diagnostics if d.span is None or same_file(d.span.file, file)]
