"""Checking one editor buffer: the compiler's diagnostics and resolution tables for a
document's current text, independent of the protocol (the server and the tests
call :func:`analyse` directly).

An MCPL buffer is parsed item by item with ``mcl.mcpl.builder.parse_partial``
(whose cache re-parses only the items that changed), checked with
``mcl.mcpl.check`` and, when it has no error, given to the performance feedback
of ``mcl.analyses``. A buffer that does not parse still yields a module for
symbols, hover and completion: the items that parse, with the item being typed
repaired by blanking the lines the parser stopped at (keeping every position).
An HDL buffer is checked against the library with ``mcl.hdl.check_text``.
"""

from __future__ import annotations

import dataclasses
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcl.diagnostics import Diagnostic, McplError, Severity
from mcl.lsp.settings import Settings
from mcl.mcpl import ast

log = logging.getLogger(__name__)

MCPL_EXTENSIONS = (".mcpl", ".mcl")
HDL_EXTENSIONS = (".hdl",)

#: How many times a broken buffer is re-parsed with more lines blanked.
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
    what parses, repaired, when the buffer does not parse); ``module`` its AST
    (None only for HDL documents). ``hardware`` is the description an HDL
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

    @property
    def search_path(self) -> tuple[str, ...]:
        """The settings' search path, and for a kernel saved on disk the descriptions
        beside it, as the commands read them (``import mylevel;`` finds ``mylevel.hdl``
        in the kernel's folder)."""
        return kernel_search_path(self.settings, self.file) if self.is_mcpl else \
            self.settings.search_path

    def library(self) -> Any:
        """The hardware-description library the document was checked against."""
        from mcl.hdl import hardware_library

        return hardware_library(self.search_path)


def kernel_search_path(settings: Settings, file: str) -> tuple[str, ...]:
    """``settings.search_path``, then the descriptions beside the kernel ``file`` that it
    lacks (mcl.hdl.library.with_descriptions_beside); an unsaved buffer (``untitled:``,
    not an absolute path) has no folder."""
    from mcl.hdl.library import with_descriptions_beside
    if not Path(file).is_absolute():
        return settings.search_path
    return tuple(with_descriptions_beside(settings.search_path, [file]))


class Cancelled(Exception):
    """The document changed (or was closed) while its feedback was computed: the
    result would be stale, so the work stops early."""


def analyse(file: str, text: str, language: str, settings: Settings | None = None,
            version: int | None = None, *, feedback: bool = True,
            feedback_cache: dict | None = None,
            cancelled: Callable[[], bool] | None = None) -> Analysis:
    """Check ``text`` as the contents of ``file`` (a file-system path).

    Parsing goes through ``mcl.mcpl.builder.parse_partial``, whose item cache
    re-parses only the top-level items whose text changed since an earlier
    version. With ``feedback`` False the performance feedback is left out (the
    server adds it later with :func:`add_feedback`, so that hover and completion
    need not wait for it). ``feedback_cache`` (a dict kept per document) keeps the
    feedback of functions that did not change; ``cancelled`` is asked between
    functions and stops the feedback with :class:`Cancelled`."""
    settings = settings or Settings()
    source = compiler_text(text)
    if language == "hdl":
        out = _analyse_hdl(file, source, settings, version)
    else:
        out = _analyse_mcpl(file, source, settings, version)
    if source is not text:
        # The client's text, for mapping positions: the mark is one character of
        # the first line to the client as it is to the compiler.
        out.text = text
    if feedback and language != "hdl":
        out = add_feedback(out, feedback_cache, cancelled)
    return out


def compiler_text(text: str) -> str:
    """``text`` as the compiler is given it: a leading byte-order mark (some clients send
    the one of the file as the first character) becomes a space, which it is to a
    reader; the parser took it for a token ("syntax error: expected 'package' or
    'module', found '\\ufeff'"). One character for another keeps every line and column."""
    if text.startswith("\ufeff"):
        return " " + text[1:]
    return text


def add_feedback(analysis: Analysis, feedback_cache: dict | None = None,
                 cancelled: Callable[[], bool] | None = None) -> Analysis:
    """``analysis`` with the performance feedback of its settings' passes added (a new
    Analysis; the same one when feedback does not apply: an HDL document, feedback
    switched off, a document with errors)."""
    checked = analysis.checked
    if (not analysis.is_mcpl or not analysis.parses or checked is None
            or checked.has_errors or not analysis.settings.feedback or analysis.feedback):
        return analysis
    found = _own(_run_feedback(checked, analysis.settings, feedback_cache, cancelled),
                 analysis.file)
    if not found:
        return analysis
    return dataclasses.replace(analysis, feedback=found,
                               diagnostics=analysis.diagnostics + found)


def _analyse_mcpl(file: str, text: str, settings: Settings, version: int | None
                  ) -> Analysis:
    from mcl.mcpl import check
    from mcl.mcpl.builder import parse_partial

    out = Analysis(file, text, "mcpl", version, settings=settings)
    module, syntax = parse_partial(text, file)
    if not syntax:
        checked = check(module, kernel_search_path(settings, file))
        out.checked, out.module = checked, checked.module
        out.diagnostics = _own(checked.diagnostics, file)
        return out
    # Syntax errors: show them (as `mcl check` does, only them), but keep a module
    # for the other features.
    out.parses = False
    out.diagnostics = _own(syntax, file)
    out.module = module
    out.module, out.checked = _repaired(text, file, module, syntax, settings)
    return out


def _repaired(text: str, file: str, module: ast.Module, syntax: list[Diagnostic],
              settings: Settings) -> tuple[ast.Module, Any]:
    """The module and check tables to use for a buffer that does not parse.

    ``parse_partial`` already returns the items that parse; the item being edited
    is missing from it. Blanking the lines the parser stopped at (every other
    character keeps its place) usually makes that item parse too, so that names
    in scope, hover and symbols keep working inside the function being typed.
    Only the blanked items are parsed again (the others come from the cache)."""
    from mcl.mcpl import check
    from mcl.mcpl.builder import parse_partial

    repaired = text
    for _ in range(MAX_REPAIRS):
        lines = _error_lines(syntax)
        if not lines:
            break
        # The parser often stops at the token after the mistake (`x = a *` then
        # `int y` on the next line stops at `y`): try the line before too.
        before = _lines_before(repaired, lines)
        attempts = [lines, before, lines | before] if before - lines else [lines]
        first: tuple[str, ast.Module, list[Diagnostic]] | None = None
        for blank in attempts:
            candidate_text = blank_lines(repaired, blank)
            candidate, errors = parse_partial(candidate_text, file)
            if first is None:
                first = (candidate_text, candidate, errors)
            if not errors:
                first = (candidate_text, candidate, errors)
                break
        assert first is not None
        repaired, candidate, syntax = first
        if _completeness(candidate) >= _completeness(module):
            module = candidate
        if not syntax:
            break
    try:
        checked = check(module, kernel_search_path(settings, file))
    except Exception:  # the tables are a convenience here; never fail the buffer
        log.exception("checking the repaired text of %s failed", file)
        checked = None
    return module, checked


def _completeness(module: ast.Module) -> tuple[bool, int]:
    # parse_partial names a module whose header does not parse "<error>".
    return module.name != "<error>", len(module.functions) + len(module.types)


def _lines_before(text: str, lines: set[int]) -> set[int]:
    """For each line, the closest line before it that is not blank."""
    parts = text.split("\n")
    out = set()
    for n in lines:
        k = n - 1
        while k >= 1 and not parts[k - 1].strip():
            k -= 1
        if k >= 1:
            out.add(k)
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


def _run_feedback(checked: Any, settings: Settings, cache: dict | None = None,
                  cancelled: Callable[[], bool] | None = None) -> list[Diagnostic]:
    """Performance feedback of ``mcl.analyses``, per function, re-using the results of
    functions that did not change (``cache``, kept per document: the symbolic
    analyses take about 15 ms per function, too much for every keystroke in a long
    module). Feedback is advice: it is shown as information or hint whatever
    severity a pass chose, so it never looks like an error."""
    from mcl.analyses import PASSES, function_feedback, ranked
    from mcl.versions.sizes import built_specialised

    selected = set(settings.feedback_passes) if settings.feedback_passes is not None \
        else set(PASSES)
    values = dict(settings.values) or None
    names = {f.name: f for f in checked.module.functions}
    file = getattr(checked.module, "file", None)
    # built as `mcl run` builds it: specialised where reference.py says so
    specialize = bool(file) and Path(file).is_file() and built_specialised(file)
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
               tuple(sorted(selected)), specialize)
        got = cache.get(key) if cache is not None else None
        if got is None:
            if cancelled is not None and cancelled():
                # Keep what was computed: the next version re-uses it.
                if cache is not None:
                    cache.update(fresh)
                raise Cancelled
            try:
                got = list(function_feedback(f, checked, hw, values, selected,
                                             specialize=specialize))
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
    return [dataclasses.replace(d, severity=Severity.INFO) if d.severity >= Severity.WARNING
            else d for d in ranked(found)]


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
