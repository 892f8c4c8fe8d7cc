"""The compiler's :class:`~mcl.diagnostics.Diagnostic` as an LSP diagnostic, and file
paths as URIs. One conversion for every kind: syntax and semantic errors keep
their severity, performance feedback is information or a hint."""

from __future__ import annotations

import re

from lsprotocol import types as lsp
from pygls.uris import from_fs_path, to_fs_path

from mcl.diagnostics import Diagnostic, Severity
from mcl.lsp.positions import PositionMapper, span_range

SEVERITY = {
    Severity.ERROR: lsp.DiagnosticSeverity.Error,
    Severity.WARNING: lsp.DiagnosticSeverity.Warning,
    Severity.INFO: lsp.DiagnosticSeverity.Information,
    Severity.HINT: lsp.DiagnosticSeverity.Hint,
}


#: A URI's scheme (two letters or more: ``C:`` starts a Windows path).
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]+:")


def path_to_uri(path: str) -> str:
    """The ``file:`` URI of a path; a document's URI that :func:`uri_to_path` kept (an
    unsaved ``untitled:`` buffer) is returned as it is."""
    if _SCHEME.match(path):
        return path
    return from_fs_path(path) or path


def uri_to_path(uri: str) -> str:
    """The file-system path of a ``file:`` URI; other URIs (``untitled:``) are kept as
    they are, so that they still name the document in spans."""
    path = to_fs_path(uri) if uri.startswith("file:") else None
    return path or uri


def to_lsp_diagnostic(d: Diagnostic, mapper: PositionMapper, feedback: bool = False
                      ) -> lsp.Diagnostic:
    """One diagnostic for the document ``mapper`` maps; without a span it marks the
    start of the document. The message is self-contained: the hint follows it."""
    if d.span is not None and d.span.line > 0:
        rng = mapper.range(d.span)
    else:
        rng = lsp.Range(lsp.Position(0, 0), lsp.Position(0, 0))
    message = d.message if not d.hint else f"{d.message}\nhelp: {d.hint}"
    related = [
        lsp.DiagnosticRelatedInformation(
            lsp.Location(path_to_uri(r.span.file), span_range(r.span, None)), r.message)
        for r in d.related if r.span is not None and r.span.line > 0
    ]
    data = {"code": d.code}
    if d.data:
        # Only what JSON can carry; analyses may keep sympy objects in ``data``.
        data["data"] = {k: v if isinstance(v, str | int | float | bool) or v is None else str(v)
                        for k, v in d.data.items()}
    return lsp.Diagnostic(
        range=rng, message=message, severity=SEVERITY[d.severity], code=d.code,
        source="mcl feedback" if feedback else "mcl",
        related_information=related or None, data=data)
