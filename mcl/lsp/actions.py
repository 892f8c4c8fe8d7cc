"""Code actions on an MCPL function: "translate this function to LEVEL" for each child
of its level (a workspace edit that creates the translated module next to the
file), "set example values" (the parameter defaults the analyses use when
they need a number, taken from the configuration or a default), and "compare with
the previous version" (a command that shows the feedback diff of the refinement step
that led to this version, see mcl.versions)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp

from mcl.diagnostics import McplError, Span
from mcl.lsp.analysis import Analysis, compiler_text
from mcl.lsp.convert import path_to_uri
from mcl.lsp.positions import PositionMapper
from mcl.lsp.settings import Settings
from mcl.mcpl import ast

#: The example value given to an integer parameter that the configuration says nothing of.
DEFAULT_INT = 1024
DEFAULT_FLOAT = 1.0
_NUMERIC = ("int", "long", "float", "double")


def code_actions(analysis: Analysis, span: Span, uri: str, mapper: PositionMapper,
                 settings: Settings, lazy: bool = True) -> list[lsp.CodeAction]:
    """The actions for the function(s) the range touches. With ``lazy`` the edit of a
    translation is computed only when the client resolves the action."""
    module = analysis.module
    if module is None:
        return []
    out: list[lsp.CodeAction] = []
    for f in module.functions:
        if not _overlaps(f.span, span):
            continue
        out += _translate_actions(analysis, f, uri, mapper, settings, lazy)
        action = set_example_values(analysis, f, uri, mapper, settings)
        if action is not None:
            out.append(action)
        action = compare_action(analysis, f, uri)
        if action is not None:
            out.append(action)
    return out


def _overlaps(a: Span, b: Span) -> bool:
    return (a.line, a.column) <= (b.end_line, b.end_column) and \
        (b.line, b.column) <= (a.end_line, a.end_column)


# --------------------------------------------------------------------------- translation


def _translate_actions(analysis: Analysis, f: ast.Function, uri: str, mapper: PositionMapper,
                       settings: Settings, lazy: bool) -> list[lsp.CodeAction]:
    if not analysis.parses:
        return []  # translating a half-typed function would write half a program
    lib = analysis.library()
    if f.hardware not in lib:
        return []
    out = []
    for child in lib.children(f.hardware):
        action = lsp.CodeAction(
            title=f"Translate '{f.name}' to {child}", kind=lsp.CodeActionKind.RefactorRewrite,
            data={"uri": uri, "action": "translate", "function": f.name, "to": child})
        if not saved(analysis):
            # The translation is a new file beside this one: an unsaved buffer has no
            # folder (its path would make a file named "untitled:..." at the root).
            action.disabled = lsp.CodeActionDisabled(
                reason="save the document first: the translated module is written to a "
                       "new file beside it")
            action.data = None
            out.append(action)
            continue
        out.append(action if lazy else resolve(action, analysis, mapper, settings))
    return out


def saved(analysis: Analysis) -> bool:
    """Whether the document is a file on disk (not an editor's ``untitled:`` buffer),
    so that files beside it can be found and written."""
    return Path(analysis.file).is_absolute()


def resolve(action: lsp.CodeAction, analysis: Analysis, mapper: PositionMapper,
            settings: Settings) -> lsp.CodeAction:
    """Fill in the edit of an action that :func:`code_actions` left lazy."""
    data = action.data if isinstance(action.data, dict) else {}
    if data.get("action") != "translate" or analysis.module is None or not saved(analysis):
        return action
    f = analysis.module.function(data.get("function", ""))
    if f is None:
        return action
    try:
        text, target = translated_module(analysis, f, data["to"], settings)
    except McplError as e:
        # Shown by the client instead of an edit: why this function cannot go down.
        action.disabled = lsp.CodeActionDisabled(reason=e.diagnostics[0].message
                                                 if e.diagnostics else str(e))
        return action
    new_uri = path_to_uri(str(target))
    action.edit = lsp.WorkspaceEdit(document_changes=[
        lsp.CreateFile(uri=new_uri, options=lsp.CreateFileOptions(overwrite=False,
                                                                  ignore_if_exists=False)),
        lsp.TextDocumentEdit(
            text_document=lsp.OptionalVersionedTextDocumentIdentifier(uri=new_uri, version=None),
            edits=[lsp.TextEdit(range=lsp.Range(lsp.Position(0, 0), lsp.Position(0, 0)),
                                new_text=text)]),
    ])
    return action


def translated_module(analysis: Analysis, f: ast.Function, to: str, settings: Settings
                      ) -> tuple[str, Path]:
    """The printed module holding ``f`` translated to ``to``, and the file to create."""
    from mcl.mcpl import print_module
    from mcl.translate import translate

    module = analysis.module
    assert module is not None
    base = module.name.removesuffix(f"_{f.hardware}")
    single = dataclasses.replace(module, functions=(f,), name=f"{base}_{to}",
                                 comments=(f"// '{f.name}' translated from {f.hardware} "
                                           f"to {to} by mcl",))
    translated = translate(single, to, library=analysis.library(),
                           search_path=analysis.search_path)
    return print_module(translated), _new_file(Path(analysis.file), f.hardware, to)


def _new_file(source: Path, level: str, to: str) -> Path:
    """``perfect.mcpl`` -> ``accelerator.mcpl``; ``kernel.mcpl`` -> ``kernel_gpu.mcpl``;
    a number is added rather than overwrite a file."""
    stem = to if source.stem == level else f"{source.stem.removesuffix('_' + level)}_{to}"
    candidate = source.with_name(stem + source.suffix)
    n = 2
    while candidate.exists():
        candidate = source.with_name(f"{stem}_{n}{source.suffix}")
        n += 1
    return candidate


# --------------------------------------------------------------------------- example values


def set_example_values(analysis: Analysis, f: ast.Function, uri: str, mapper: PositionMapper,
                       settings: Settings) -> lsp.CodeAction | None:
    """Give numeric constant parameters an example value: the configured one (which
    also replaces a different default) or a plain default for those that have none."""
    edits = []
    names = []
    for p in f.params:
        if p.type.is_array or p.type.name not in _NUMERIC or p.span.line <= 0:
            continue
        configured = settings.values.get(p.name)
        if p.default is not None and (configured is None or _same_value(p.default, configured)):
            continue
        value = configured if configured is not None else (
            DEFAULT_INT if p.type.name in ("int", "long") else DEFAULT_FLOAT)
        written = _literal(value, p.type.name)
        if p.default is not None and p.default.span.line > 0:
            rng = mapper.range(p.default.span)
            edits.append(lsp.TextEdit(range=rng, new_text=written))
        else:
            end = mapper.to_lsp(p.span.end_line, p.span.end_column)
            edits.append(lsp.TextEdit(range=lsp.Range(end, end), new_text=f" = {written}"))
        names.append(f"{p.name} = {written}")
    if not edits:
        return None
    return lsp.CodeAction(
        title=f"Set example values of '{f.name}': {', '.join(names)}",
        kind=lsp.CodeActionKind.RefactorRewrite,
        edit=lsp.WorkspaceEdit(changes={uri: edits}))


def _same_value(expr: ast.Expr, value: Any) -> bool:
    return isinstance(expr, ast.Literal) and expr.value == value


def _literal(value: Any, type_name: str) -> str:
    if type_name in ("int", "long"):
        return str(int(value))
    return repr(float(value))


# --------------------------------------------------------------------------- versions

#: The command of "compare with the previous version"; its argument is the document's URI.
COMPARE_COMMAND = "mcl.compareWithPreviousVersion"


def compare_action(analysis: Analysis, f: ast.Function, uri: str) -> lsp.CodeAction | None:
    """Offered where the folder holds other versions (finding which one this version
    refines checks them all, so that waits until the command runs)."""
    here = Path(analysis.file)
    # an unsaved buffer has no folder of versions (Path("untitled:1").parent is the
    # server's working directory)
    if not analysis.parses or not saved(analysis) or \
            not any(p.name != here.name for p in here.parent.glob("*.mcpl")):
        return None
    title = f"Compare '{f.name}' with the previous version (feedback diff)"
    return lsp.CodeAction(title=title, command=lsp.Command(title, COMPARE_COMMAND,
                                                                  arguments=[uri]))


def compare_with_previous(analysis: Analysis, settings: Settings) -> str:
    """The feedback diff (Markdown) between the version this document refines and the
    document as it is in the editor."""
    from mcl.versions import previous_version
    from mcl.versions.steps import describe

    try:
        found = previous_version(analysis.file, compiler_text(analysis.text),
                                 analysis.search_path)
    except McplError as e:
        return e.diagnostics[0].message if e.diagnostics else str(e)
    if found is None:
        return (f"{Path(analysis.file).name} refines no other version in its folder "
                "(it is the highest level, or its level has no version above it)")
    return describe(found[1])
