"""Registration of the request handlers (hover, definition, completion, symbols, code
actions) on the server. Each handler converts positions and results between LSP
and compiler coordinates; the logic lives in modules that know nothing of pygls."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from lsprotocol import types as lsp

from mcl.lsp.analysis import Analysis
from mcl.lsp.convert import path_to_uri, uri_to_path
from mcl.lsp.navigation import file_text
from mcl.lsp.positions import PositionMapper

#: How long completion and document symbols wait for the check of a document before
#: answering from an older analysis or from the text alone (seconds).
ANSWER_WITHIN = 0.5


def _location(ls: Any, span: Any, analysis: Any) -> lsp.Location:
    text = file_text(span.file, analysis)
    mapper = PositionMapper(text, ls.encoding) if text is not None else None
    if mapper is not None:
        rng = mapper.range(span)
    else:
        rng = lsp.Range(lsp.Position(max(0, span.line - 1), max(0, span.column - 1)),
                        lsp.Position(max(0, span.end_line - 1), max(0, span.end_column - 1)))
    return lsp.Location(path_to_uri(span.file), rng)


def register(server: Any, wrap: Callable) -> None:
    """Register every request handler on ``server``; ``wrap`` logs their failures."""
    from mcl.lsp import actions, completion, hover, navigation, symbols

    @server.feature(lsp.TEXT_DOCUMENT_HOVER)
    @wrap
    async def on_hover(ls: Any, params: lsp.HoverParams) -> lsp.Hover | None:
        analysis = await ls.analysis(params.text_document.uri)
        if analysis is None:
            return None
        mapper = ls.mapper(analysis.text)
        line, col = mapper.from_lsp(params.position)
        found = hover.hover(analysis, line, col)
        if found is None:
            return None
        text, span = found
        return lsp.Hover(lsp.MarkupContent(lsp.MarkupKind.Markdown, text), mapper.range(span))

    @server.feature(lsp.TEXT_DOCUMENT_DEFINITION)
    @wrap
    async def on_definition(ls: Any, params: lsp.DefinitionParams) -> list[lsp.Location]:
        analysis = await ls.analysis(params.text_document.uri)
        if analysis is None:
            return []
        line, col = ls.mapper(analysis.text).from_lsp(params.position)
        return [_location(ls, s, analysis)
                for s in navigation.definition(analysis, line, col)]

    @server.feature(lsp.TEXT_DOCUMENT_COMPLETION,
                    lsp.CompletionOptions(trigger_characters=[".", " ", "("]))
    @wrap
    async def on_completion(ls: Any, params: lsp.CompletionParams) -> lsp.CompletionList:
        uri = params.text_document.uri
        doc = ls.document(uri)
        if doc is None:
            return lsp.CompletionList(is_incomplete=False, items=[])
        text, _, lang = doc
        # An older analysis is good enough for names in scope; waiting for a check
        # of a large document at every keystroke is not: without any analysis yet
        # (a large document just opened) the answer is lexical.
        analysis = await ls.analysis(uri, fresh=False, wait=ANSWER_WITHIN)
        line, col = ls.mapper(text).from_lsp(params.position)
        items = completion.complete(text, lang, line, col, analysis, ls.settings)
        return lsp.CompletionList(is_incomplete=False, items=items)

    @server.feature(lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    @wrap
    async def on_symbols(ls: Any, params: lsp.DocumentSymbolParams
                         ) -> list[lsp.DocumentSymbol]:
        uri = params.text_document.uri
        doc = ls.document(uri)
        if doc is None:
            return []
        text, version, lang = doc
        analysis = await ls.analysis(uri, wait=ANSWER_WITHIN)
        if analysis is None or analysis.text != text:
            # Still checking (a large document): the outline of the text as it is.
            analysis = Analysis(uri_to_path(uri), text, lang, version, parses=False)
        return symbols.document_symbols(analysis, ls.mapper(analysis.text))

    @server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION, lsp.CodeActionOptions(
        code_action_kinds=[lsp.CodeActionKind.RefactorRewrite, lsp.CodeActionKind.QuickFix,
                           lsp.CodeActionKind.Refactor],
        resolve_provider=True))
    @wrap
    async def on_code_action(ls: Any, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
        analysis = await ls.analysis(params.text_document.uri)
        if analysis is None or not analysis.is_mcpl:
            return []
        mapper = ls.mapper(analysis.text)
        span = mapper.span(analysis.file, params.range)
        resolve = _client_resolves_edits(ls)
        return actions.code_actions(analysis, span, params.text_document.uri, mapper,
                                    ls.settings, lazy=resolve)

    @server.feature(lsp.CODE_ACTION_RESOLVE)
    @wrap
    async def on_code_action_resolve(ls: Any, action: lsp.CodeAction) -> lsp.CodeAction:
        data = action.data if isinstance(action.data, dict) else {}
        uri = data.get("uri")
        analysis = await ls.analysis(uri) if uri else None
        if analysis is None:
            return action
        return actions.resolve(action, analysis, ls.mapper(analysis.text), ls.settings)

    @server.command(actions.COMPARE_COMMAND)
    async def on_compare_with_previous(ls: Any, uri: str) -> str:
        """Show the feedback diff to the previous version and return it (Markdown)."""
        analysis = await ls.analysis(uri)
        if analysis is None:
            return "the document is not open"
        # In the server's worker thread: the compiler's caches are not shared between threads.
        text = await asyncio.get_running_loop().run_in_executor(
            ls.worker, actions.compare_with_previous, analysis, ls.settings)
        ls.window_show_message(lsp.ShowMessageParams(lsp.MessageType.Info, text))
        return text


def _client_resolves_edits(ls: Any) -> bool:
    """Whether the client can ask for an action's edit later (codeAction/resolve)."""
    caps = ls.client_capabilities
    try:
        props = caps.text_document.code_action.resolve_support.properties
    except AttributeError:
        return False
    return "edit" in (props or [])
