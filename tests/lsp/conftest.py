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

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
SERVER = [sys.executable, "-m", "mcl.cli", "lsp"]

#: Settings every test server starts with: no debounce keeps the tests quick.
INIT_OPTIONS = {"mcl": {"debounceMs": 0}}


def capabilities() -> lsp.ClientCapabilities:
    """What VS Code announces, which includes code-action resolve and snippets."""
    return client_capabilities("visual-studio-code")


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER), scope="module")
async def client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(lsp.InitializeParams(
        capabilities=capabilities(), root_uri=ROOT.as_uri(),
        initialization_options=INIT_OPTIONS))
    yield
    await lsp_client.shutdown_session()


async def wait_diagnostics(client: LanguageClient, uri: str, version: int | None = None,
                           timeout: float = 30.0) -> list[lsp.Diagnostic]:
    """The diagnostics the server publishes for ``uri`` (for ``version`` if given)."""
    async def wait() -> list[lsp.Diagnostic]:
        while True:
            params = await client.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
            if params.uri == uri and (version is None or params.version == version):
                return list(params.diagnostics)
    return await asyncio.wait_for(wait(), timeout)


def open_document(client: LanguageClient, path: Path, text: str | None = None,
                  language: str = "mcpl", version: int = 1) -> str:
    uri = path.as_uri()
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
