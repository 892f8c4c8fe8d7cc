"""End to end: what a real ``mcl lsp`` process answers to documents in the middle of
being typed, unsaved documents and requests at odd places: diagnostics or nothing,
never a crash, a stopped server or a Python traceback."""

from __future__ import annotations

import pytest
from lsprotocol import types as lsp

from tests.lsp.conftest import EXAMPLES, replace_all, wait_diagnostics

pytestmark = pytest.mark.asyncio(loop_scope="module")

VECTOR_ADD = (EXAMPLES / "vector_add" / "perfect.mcpl").read_text()


def open_uri(client, uri: str, text: str, version: int = 1) -> str:
    client.consumed[uri] = len(client.published)
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(
        uri=uri, language_id="mcpl", version=version, text=text)))
    return uri


def no_traceback(diags: list[lsp.Diagnostic]) -> None:
    for d in diags:
        assert "Traceback" not in d.message and "internal error" not in d.message


async def still_answers(client, uri: str) -> None:
    symbols = await client.text_document_document_symbol_async(
        lsp.DocumentSymbolParams(lsp.TextDocumentIdentifier(uri)))
    assert symbols is not None


TYPING = {
    "empty": "",
    "comment": "// nothing yet\n",
    "unfinished": VECTOR_ADD.replace("c[i] = a[i] + b[i];", "c[i] = a[i] +"),
    "unclosed": VECTOR_ADD.rstrip().rstrip("}"),
    "header": "module m",
}


@pytest.mark.parametrize("name", sorted(TYPING))
async def test_an_unsaved_document_being_typed(client, name):
    uri = open_uri(client, f"untitled:Untitled-{name}", TYPING[name])
    diags = await wait_diagnostics(client, uri, 1)
    no_traceback(diags)
    text = TYPING[name]
    lines = text.split("\n")
    for pos in (lsp.Position(0, 0), lsp.Position(len(lines) + 5, 3),
                lsp.Position(0, 10_000), lsp.Position(len(lines) - 1, len(lines[-1]))):
        await client.text_document_hover_async(lsp.HoverParams(
            lsp.TextDocumentIdentifier(uri), pos))
        await client.text_document_definition_async(lsp.DefinitionParams(
            lsp.TextDocumentIdentifier(uri), pos))
        await client.text_document_completion_async(lsp.CompletionParams(
            lsp.TextDocumentIdentifier(uri), pos))
    await still_answers(client, uri)


async def test_many_quick_changes_end_with_the_last_version(client):
    uri = open_uri(client, "untitled:Untitled-quick", VECTOR_ADD)
    await wait_diagnostics(client, uri, 1)
    text = VECTOR_ADD
    for version in range(2, 80):
        text = VECTOR_ADD[: (version * 7) % len(VECTOR_ADD)]
        replace_all(client, uri, text, version)
    replace_all(client, uri, VECTOR_ADD, 80)
    diags = await wait_diagnostics(client, uri, 80)
    assert not [d for d in diags if d.severity == lsp.DiagnosticSeverity.Error]
    await still_answers(client, uri)


async def test_go_to_definition_in_an_unsaved_document_stays_in_it(client):
    uri = open_uri(client, "untitled:Untitled-definition", VECTOR_ADD)
    await wait_diagnostics(client, uri, 1)
    use = VECTOR_ADD.index("    c[i] = a[i]") + 4
    line = VECTOR_ADD.count("\n", 0, use)
    column = use - (VECTOR_ADD.rfind("\n", 0, use) + 1)
    found = await client.text_document_definition_async(lsp.DefinitionParams(
        lsp.TextDocumentIdentifier(uri), lsp.Position(line, column)))
    assert found and all(loc.uri == uri for loc in found)


async def test_old_mac_line_ends_are_line_ends(client):
    """A document whose lines end in a lone "\\r" (which the protocol counts as a line
    end) was one line to the compiler: after the first "//" comment the whole kernel
    was a comment, 'the file is empty but for comments'."""
    uri = open_uri(client, "untitled:Untitled-cr", VECTOR_ADD.replace("\n", "\r"))
    diags = await wait_diagnostics(client, uri, 1)
    assert not [d for d in diags if d.severity == lsp.DiagnosticSeverity.Error]
    assert [d.range for d in diags] == [d.range for d in await wait_diagnostics(
        client, open_uri(client, "untitled:Untitled-lf", VECTOR_ADD), 1)]
