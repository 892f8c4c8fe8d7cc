"""Fixtures of the language-server tests: a real client (pytest-lsp) talking over stdio
to a real ``mcl lsp`` process, and helpers to open documents and wait for their
diagnostics."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import make_test_lsp_client

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
SERVER = [sys.executable, "-m", "mcl.cli", "lsp"]

#: Settings every test server starts with: no debounce keeps the tests quick.
INIT_OPTIONS = {"mcl": {"debounceMs": 0}}


def capabilities() -> lsp.ClientCapabilities:
    """What VS Code announces, which includes code-action resolve and snippets."""
    return client_capabilities("visual-studio-code")


def recording_client() -> LanguageClient:
    """pytest-lsp's client that also keeps every ``publishDiagnostics`` in
    ``client.published``: its ``wait_for_notification`` has one waiter per method, so a
    notification that arrives right after another one (two documents re-checked
    after a configuration change) would be lost to it."""
    client = make_test_lsp_client()
    client.published = []       # every PublishDiagnosticsParams, in arrival order
    client.consumed = {}        # uri -> index in ``published`` after its last wait
    features = client.protocol.fm.features
    original = features[lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]

    def record(params: lsp.PublishDiagnosticsParams) -> None:
        client.published.append(params)
        original(params)

    features[lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = record
    return client


CONFIG = ClientServerConfig(server_command=SERVER, client_factory=recording_client)


@pytest_lsp.fixture(config=CONFIG, scope="module")
async def client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(lsp.InitializeParams(
        capabilities=capabilities(), root_uri=ROOT.as_uri(),
        initialization_options=INIT_OPTIONS))
    yield
    await lsp_client.shutdown_session()


async def wait_diagnostics(client: LanguageClient, uri: str, version: int | None = None,
                           timeout: float = 30.0) -> list[lsp.Diagnostic]:
    """The diagnostics the server publishes for ``uri`` (for ``version`` if given): the
    first such publication since the document was opened that no earlier wait
    returned."""
    got = await collect_diagnostics(client, {uri: version}, client.consumed.get(uri, 0),
                                    timeout)
    return got[uri]


async def collect_diagnostics(client: LanguageClient, versions: dict[str, int | None],
                              since: int = 0, timeout: float = 30.0
                              ) -> dict[str, list[lsp.Diagnostic]]:
    """The first diagnostics published for each of several documents (``{uri: version}``,
    None: any version) at or after index ``since`` of ``client.published`` (take
    ``len(client.published)`` before sending what makes the server publish)."""
    got: dict[str, list[lsp.Diagnostic]] = {}

    async def wait() -> None:
        i = since
        while True:
            while i < len(client.published):
                params = client.published[i]
                i += 1
                if params.uri in versions and params.uri not in got and \
                        versions[params.uri] in (None, params.version):
                    got[params.uri] = list(params.diagnostics)
                    client.consumed[params.uri] = i
            if len(got) == len(versions):
                return
            await asyncio.sleep(0.01)
    await asyncio.wait_for(wait(), timeout)
    return got


def open_document(client: LanguageClient, path: Path, text: str | None = None,
                  language: str = "mcpl", version: int = 1) -> str:
    uri = path.as_uri()
    client.consumed[uri] = len(client.published)   # what was published before is old
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(
        uri=uri, language_id=language, version=version,
        text=path.read_text(encoding="utf-8") if text is None else text)))
    return uri


def replace_all(client: LanguageClient, uri: str, text: str, version: int) -> None:
    """Send the whole new text as one change (as a client without incremental sync)."""
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
        [lsp.TextDocumentContentChangeWholeDocument(text=text)]))


def edit(client: LanguageClient, uri: str, version: int, line: int, start: int, end: int,
         text: str) -> None:
    """Replace characters ``start..end`` of 0-based ``line`` (an incremental change)."""
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
        [lsp.TextDocumentContentChangePartial(
            range=lsp.Range(lsp.Position(line, start), lsp.Position(line, end)), text=text)]))



def close_document(client: LanguageClient, uri: str) -> None:
    client.text_document_did_close(lsp.DidCloseTextDocumentParams(
        lsp.TextDocumentIdentifier(uri=uri)))


def text_at(text: str, rng: lsp.Range) -> str:
    """The text a (single-line, ASCII) range covers."""
    lines = text.split("\n")
    if rng.start.line != rng.end.line:
        return lines[rng.start.line][rng.start.character:]
    return lines[rng.start.line][rng.start.character:rng.end.character]


def position_of(text: str, snippet: str, word: str | None = None, nth: int = 0
                ) -> lsp.Position:
    """The position of ``word`` (default: the start) inside the ``nth`` occurrence of
    ``snippet``."""
    offset = -1
    for _ in range(nth + 1):
        offset = text.index(snippet, offset + 1)
    if word is not None:
        offset += snippet.index(word)
    line = text.count("\n", 0, offset)
    return lsp.Position(line, offset - (text.rfind("\n", 0, offset) + 1))
