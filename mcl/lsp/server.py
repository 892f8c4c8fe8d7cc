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
import queue
import re
import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import Any

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol, lsp_method

from mcl import __version__
from mcl.hdl import forget_hardware_libraries
from mcl.lsp.analysis import Analysis, Cancelled, add_feedback, analyse, language_of
from mcl.lsp.convert import to_lsp_diagnostic, uri_to_path
from mcl.lsp.positions import PositionMapper
from mcl.lsp.settings import Settings

log = logging.getLogger(__name__)


class _Worker(Executor):
    """Runs submitted calls one after the other in one daemon thread.

    One thread: checks of one server never run at the same time, so the
    compiler's per-process caches (parsed items, hardware libraries) are never
    used concurrently. A daemon thread: on ``exit`` the server must not wait for
    the check of a 10 000-line document to finish. A call cancelled before it
    started (its document changed again) is skipped."""

    def __init__(self) -> None:
        self._calls: queue.SimpleQueue = queue.SimpleQueue()
        threading.Thread(target=self._loop, name="mcl-check", daemon=True).start()

    def submit(self, fn: Callable, /, *args: Any, **kwargs: Any) -> Future:
        future: Future = Future()
        self._calls.put((future, fn, args, kwargs))
        return future

    def _loop(self) -> None:
        while True:
            future, fn, args, kwargs = self._calls.get()
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(fn(*args, **kwargs))
            except BaseException as e:  # handed to whoever awaits the future
                future.set_exception(e)


_LONE_CR = re.compile(r"\r(?!\n)")


def line_ends(text: str) -> str:
    """``text`` with each lone carriage return (old Mac line ends) as a newline: the
    protocol counts "\r" as a line end, the compiler only "\n" and "\r\n"; one
    character for another keeps every offset, and lines are then the client's."""
    if "\r" not in text:
        return text
    return _LONE_CR.sub("\n", text)


def _in_order(change: Any) -> tuple[Any, lsp.Range | None]:
    """An incremental change whose range ends before it starts (a client that sent a
    backwards selection as it is), with its range put in order; and the range as the
    client sent it, or None when it was in order. pygls applies a reversed range
    wrongly: on one line it duplicated the characters between the two ends, across
    lines it dropped the change, and the server's copy no longer matched the editor."""
    rng = getattr(change, "range", None)
    if rng is None:
        return change, None
    start, end = rng.start, rng.end
    if (start.line, start.character) <= (end.line, end.character):
        return change, None
    ordered = lsp.TextDocumentContentChangePartial(
        range=lsp.Range(end, start), text=change.text, range_length=change.range_length)
    return ordered, rng


class _Protocol(LanguageServerProtocol):
    """pygls's protocol, with each change checked before pygls applies it to its copy of
    the document."""

    @lsp_method(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: lsp.DidChangeTextDocumentParams) -> Any:
        changes = []
        for change in params.content_changes:
            change, reversed_range = _in_order(change)
            if reversed_range is not None:
                s, e = reversed_range.start, reversed_range.end
                message = (f"mcl: the client sent a change of {params.text_document.uri} "
                           f"whose range ends ({e.line}:{e.character}) before it starts "
                           f"({s.line}:{s.character}); applied it from "
                           f"{e.line}:{e.character} to {s.line}:{s.character} "
                           "(a bug in the editor or its LSP client)")
                log.warning("%s", message)
                self._server.window_log_message(
                    lsp.LogMessageParams(lsp.MessageType.Warning, message))
            changes.append(change)
        params.content_changes = changes
        yield from super().lsp_text_document__did_change(params)


class MclLanguageServer(LanguageServer):
    """The server's state: settings, the latest analysis of each open document and
    the pending (debounced) checks.

    A check has two phases in the worker thread: parsing and checking (the
    tables hover, definition and completion need: stored as soon as they are
    ready), then performance feedback (about 15 ms per changed function, stopped
    early when the document changes again); the diagnostics of a version are
    published once, with its feedback."""

    def __init__(self) -> None:
        super().__init__("mcl", __version__,
                         text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental,
                         protocol_cls=_Protocol)
        self.settings = Settings()
        self.analyses: dict[str, Analysis] = {}
        self._pending: dict[str, asyncio.Task] = {}
        # The first phase running for a document: (text, settings, future); requests
        # for the same text share it instead of queueing another.
        self._inflight: dict[str, tuple[str, Settings, asyncio.Future]] = {}
        # Per document, the feedback of functions that did not change.
        self._feedback_caches: dict[str, dict] = {}
        # The latest version of each open document, read by the worker thread to
        # notice that its work has become stale.
        self._versions: dict[str, int | None] = {}
        self._worker = _Worker()

    @property
    def worker(self) -> Executor:
        """The one thread that runs the compiler for this server."""
        return self._worker

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
        return line_ends(doc.source), doc.version, lang

    def opened(self, uri: str, version: int | None) -> None:
        self._versions[uri] = version

    def closed(self, uri: str) -> None:
        task = self._pending.pop(uri, None)
        if task is not None:
            task.cancel()
        self._versions.pop(uri, None)
        self.analyses.pop(uri, None)
        self._inflight.pop(uri, None)
        self._feedback_caches.pop(uri, None)

    def _is_current(self, uri: str, text: str) -> bool:
        current = self.document(uri)
        return current is not None and current[0] == text

    async def analysis(self, uri: str, fresh: bool = True,
                       wait: float | None = None) -> Analysis | None:
        """The analysis of a document's current text, without its feedback unless that
        is ready (computed now if the latest one is older). With ``fresh`` False an
        older analysis is good enough (completion prefers it to waiting); with
        ``wait``, at most that many seconds are spent waiting, after which the
        latest analysis (maybe None) is returned and the check goes on."""
        doc = self.document(uri)
        if doc is None:
            return None
        text, version, lang = doc
        have = self.analyses.get(uri)
        if have is not None and ((have.text == text and have.settings is self.settings)
                                 or not fresh):
            return have
        future = self._tables(uri, text, lang, version)
        if wait is None:
            return await asyncio.shield(future)
        try:
            return await asyncio.wait_for(asyncio.shield(future), wait)
        except TimeoutError:
            return have

    def _tables(self, uri: str, text: str, lang: str, version: int | None) -> asyncio.Future:
        """The first phase (parse and check, no feedback) for this text, shared."""
        settings = self.settings
        got = self._inflight.get(uri)
        if got is not None and got[0] == text and got[1] is settings:
            return got[2]
        future = asyncio.get_running_loop().run_in_executor(
            self._worker, functools.partial(analyse, uri_to_path(uri), text, lang, settings,
                                            version, feedback=False))
        self._inflight[uri] = (text, settings, future)

        def done(f: asyncio.Future) -> None:
            got = self._inflight.get(uri)
            if got is not None and got[2] is f:
                del self._inflight[uri]
            if f.cancelled() or f.exception() is not None:
                return
            have = self.analyses.get(uri)
            if self._is_current(uri, text) and settings is self.settings and \
                    (have is None or have.text != text or have.settings is not settings):
                self.analyses[uri] = f.result()

        future.add_done_callback(done)
        return future

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
            settings = self.settings
            result = await asyncio.shield(self._tables(uri, text, lang, version))
            if not self._is_current(uri, text) or settings is not self.settings:
                return  # edited meanwhile: a newer check is already scheduled

            def stale() -> bool:  # asked by the worker thread between functions
                return self._versions.get(uri) != version or self.settings is not settings

            cache = self._feedback_caches.setdefault(uri, {})
            result = await asyncio.get_running_loop().run_in_executor(
                self._worker, functools.partial(add_feedback, result, cache, stale))
            if not self._is_current(uri, text) or settings is not self.settings:
                return
            self.analyses[uri] = result
            self.publish(uri, result)
        except (asyncio.CancelledError, Cancelled):
            return
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
        ls.opened(params.text_document.uri, params.text_document.version)
        ls.schedule_check(params.text_document.uri, 0)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    async def did_change(ls: MclLanguageServer,
                         params: lsp.DidChangeTextDocumentParams) -> None:
        ls.opened(params.text_document.uri, params.text_document.version)
        ls.schedule_check(params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    async def did_save(ls: MclLanguageServer, params: lsp.DidSaveTextDocumentParams) -> None:
        path = uri_to_path(params.text_document.uri)
        if language_of(path) == "hdl":
            # Kernels are checked against the descriptions on disk: a saved
            # description changes what every open kernel means.
            forget_hardware_libraries()
            ls.recheck_all()

    @server.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    async def did_change_watched_files(ls: MclLanguageServer,
                                       params: lsp.DidChangeWatchedFilesParams) -> None:
        # The editor package watches **/*.hdl: a description changed on disk
        # (saved elsewhere, created, deleted) changes what open kernels mean.
        if any(language_of(uri_to_path(c.uri)) == "hdl" for c in params.changes):
            forget_hardware_libraries()
            ls.recheck_all()

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    async def did_close(ls: MclLanguageServer, params: lsp.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        ls.closed(uri)
        ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri, []))

    @server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(ls: MclLanguageServer,
                                       params: lsp.DidChangeConfigurationParams) -> None:
        ls.configure(params.settings)
        forget_hardware_libraries()
        ls.recheck_all()

    features.register(server, _logged)
    return server
