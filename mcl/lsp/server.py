"""The MCL language server (pygls): diagnostics while the programmer types, and hover,
go to definition, completion, symbols and code actions for MCPL and HDL documents.

Checking runs in one worker thread so that the protocol stays responsive on
large documents; a check starts once edits have paused for ``debounce_ms`` and
its result is published only if the document has not changed meanwhile, so a
client never sees diagnostics of an older text after a newer edit.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer

from mcl import __version__
from mcl.lsp.analysis import Analysis, analyse, language_of
from mcl.lsp.convert import to_lsp_diagnostic, uri_to_path
from mcl.lsp.incremental import IncrementalParser
from mcl.lsp.positions import PositionMapper
from mcl.lsp.settings import Settings

log = logging.getLogger(__name__)


class MclLanguageServer(LanguageServer):
    """The server's state: settings, the latest analysis of each open document and
    the pending (debounced) checks."""

    def __init__(self) -> None:
        super().__init__("mcl", __version__,
                         text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental)
        self.settings = Settings()
        self.analyses: dict[str, Analysis] = {}
        self._pending: dict[str, asyncio.Task] = {}
        self.parsers: dict[str, IncrementalParser] = {}
        # One thread: checks of one server never run at the same time, so the
        # compiler's per-process caches are never used concurrently.
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mcl-check")

    # ------------------------------------------------------------------ documents

    @property
    def encoding(self) -> str:
        enc = self.workspace.position_encoding
        return str(getattr(enc, "value", enc) or "utf-16")

    def mapper(self, text: str) -> PositionMapper:
        return PositionMapper(text, self.encoding)

    def document(self, uri: str) -> tuple[str, int | None, str | None] | None:
        """(text, version, language) of an open document, or None if it is not open
        or not one the server handles."""
        doc = self.workspace.text_documents.get(uri)
        if doc is None:
            return None
        lang = language_of(uri_to_path(uri), doc.language_id)
        if lang is None:
            return None
        return doc.source, doc.version, lang

    async def analysis(self, uri: str, fresh: bool = True) -> Analysis | None:
        """The analysis of a document's current text (computed now if the latest one is
        older, unless ``fresh`` is False: completion prefers an older answer to waiting)."""
        doc = self.document(uri)
        if doc is None:
            return None
        text, version, lang = doc
        have = self.analyses.get(uri)
        if have is not None and (have.text == text or not fresh):
            return have
        result = await self._run(uri, text, lang, version)
        current = self.document(uri)
        if current is not None and current[1] == version:
            self.analyses[uri] = result
        return result

    async def _run(self, uri: str, text: str, lang: str, version: int | None) -> Analysis:
        parser = self.parsers.setdefault(uri, IncrementalParser())
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(
            self._worker, functools.partial(analyse, uri_to_path(uri), text, lang,
                                            self.settings, version, parser))

    # ------------------------------------------------------------------ diagnostics

    def schedule_check(self, uri: str, delay: float | None = None) -> None:
        """Check a document after ``delay`` seconds (the debounce), replacing any
        check of it that has not finished."""
        old = self._pending.pop(uri, None)
        if old is not None:
            old.cancel()
        if delay is None:
            delay = self.settings.debounce_ms / 1000
        self._pending[uri] = asyncio.get_running_loop().create_task(self._check(uri, delay))

    async def _check(self, uri: str, delay: float) -> None:
        try:
            if delay > 0:
                await asyncio.sleep(delay)
            doc = self.document(uri)
            if doc is None:
                return
            text, version, lang = doc
            result = await self._run(uri, text, lang, version)
            current = self.document(uri)
            if current is None or current[1] != version or current[0] != text:
                return  # edited meanwhile: a newer check is already scheduled
            self.analyses[uri] = result
            self.publish(uri, result)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("checking %s failed", uri)
            self.window_log_message(lsp.LogMessageParams(
                lsp.MessageType.Error, f"mcl: internal error while checking {uri} "
                                       "(a bug in mcl; see the server log)"))
        finally:
            if self._pending.get(uri) is asyncio.current_task():
                del self._pending[uri]

    def publish(self, uri: str, result: Analysis) -> None:
        mapper = self.mapper(result.text)
        feedback = {id(d) for d in result.feedback}
        diagnostics = [to_lsp_diagnostic(d, mapper, id(d) in feedback)
                       for d in result.diagnostics]
        self.text_document_publish_diagnostics(
            lsp.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics,
                                         version=result.version))

    def recheck_all(self) -> None:
        """Check every open document again (after the configuration or a hardware
        description on disk changed)."""
        for uri in list(self.workspace.text_documents):
            if self.document(uri) is not None:
                self.schedule_check(uri, 0)

    def configure(self, options: Any) -> None:
        self.settings = self.settings.merged(options)


def _logged(fn: Callable) -> Callable:
    """Log an exception of a request with its context; pygls then answers the request
    with an error response and the server goes on serving."""
    @functools.wraps(fn)
    async def wrapper(ls: MclLanguageServer, params: Any) -> Any:
        try:
            return await fn(ls, params)
        except Exception:
            log.exception("request %s failed", fn.__name__)
            raise
    return wrapper


def create_server() -> MclLanguageServer:
    """A server with every feature registered (a new one per call: tests start many)."""
    from mcl.lsp import features

    server = MclLanguageServer()

    @server.feature(lsp.INITIALIZE)
    def initialize(ls: MclLanguageServer, params: lsp.InitializeParams) -> None:
        ls.configure(params.initialization_options)

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    async def did_open(ls: MclLanguageServer, params: lsp.DidOpenTextDocumentParams) -> None:
        ls.schedule_check(params.text_document.uri, 0)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    async def did_change(ls: MclLanguageServer,
                         params: lsp.DidChangeTextDocumentParams) -> None:
        ls.schedule_check(params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    async def did_save(ls: MclLanguageServer, params: lsp.DidSaveTextDocumentParams) -> None:
        path = uri_to_path(params.text_document.uri)
        if language_of(path) == "hdl":
            # Kernels are checked against the descriptions on disk: a saved
            # description changes what every open kernel means.
            features.forget_hardware_library()
            ls.recheck_all()

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    async def did_close(ls: MclLanguageServer, params: lsp.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        task = ls._pending.pop(uri, None)
        if task is not None:
            task.cancel()
        ls.analyses.pop(uri, None)
        ls.parsers.pop(uri, None)
        ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri, []))

    @server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(ls: MclLanguageServer,
                                       params: lsp.DidChangeConfigurationParams) -> None:
        ls.configure(params.settings)
        features.forget_hardware_library()
        ls.recheck_all()

    features.register(server, _logged)
    return server
