"""End to end: clients that send what the protocol does not expect — a change whose
range ends before it starts, a document that begins with a byte-order mark — get a
document the server keeps in step with the editor and diagnostics where they belong."""

from __future__ import annotations

import asyncio

import pytest
from lsprotocol import types as lsp

from mcl.lsp.analysis import analyse
from mcl.lsp.positions import PositionMapper
from tests.lsp.conftest import EXAMPLES, edit, wait_diagnostics

#: The end-to-end tests share one server (the module-scoped ``client`` fixture).
E2E = pytest.mark.asyncio(loop_scope="module")

VECTOR_ADD = (EXAMPLES / "vector_add" / "perfect.mcpl").read_text()
#: The kernel from its module line: line 0 holds code, so positions on it are checked.
KERNEL = VECTOR_ADD[VECTOR_ADD.index("module"):]
BAD_IMPORT = KERNEL.replace("module vector_add_perfect;",
                            "module vector_add_perfect; import nosuch;")


def open_uri(client, uri: str, text: str, version: int = 1) -> str:
    client.consumed[uri] = len(client.published)
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(
        uri=uri, language_id="mcpl", version=version, text=text)))
    return uri


def change(client, uri: str, version: int, start: tuple[int, int], end: tuple[int, int],
           text: str) -> None:
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
        [lsp.TextDocumentContentChangePartial(
            range=lsp.Range(lsp.Position(*start), lsp.Position(*end)), text=text)]))


def errors(diags: list[lsp.Diagnostic]) -> list[lsp.Diagnostic]:
    return [d for d in diags if d.severity == lsp.DiagnosticSeverity.Error]


async def warning_about(client, uri: str) -> lsp.LogMessageParams:
    for _ in range(500):
        found = [m for m in client.log_messages
                 if m.type == lsp.MessageType.Warning and uri in m.message]
        if found:
            return found[-1]
        await asyncio.sleep(0.01)
    raise AssertionError(f"no warning logged about {uri}: {client.log_messages}")


@E2E
async def test_a_reversed_range_on_one_line_is_applied_in_order(client):
    """pygls applied start 5, end 4 as 'keep up to 5, insert, keep from 4': the
    character between the two ends doubled ("bqb"), and the server checked text the
    editor did not show."""
    uri = open_uri(client, "untitled:Untitled-reversed-line", KERNEL)
    assert not errors(await wait_diagnostics(client, uri, 1))
    lines = KERNEL.split("\n")
    line = next(i for i, s in enumerate(lines) if "c[i] = a[i] + b[i];" in s)
    b = lines[line].index("b[i]")
    change(client, uri, 2, (line, b + 1), (line, b), "q")
    diags = errors(await wait_diagnostics(client, uri, 2))
    assert len(diags) == 1 and "'q'" in diags[0].message and "bqb" not in diags[0].message
    assert diags[0].range.start == lsp.Position(line, b)
    warning = await warning_about(client, uri)
    assert "ends" in warning.message and "before it starts" in warning.message
    # The server's copy is the editor's: putting 'b' back leaves a kernel without errors.
    edit(client, uri, 3, line, b, b + 1, "b")
    assert not errors(await wait_diagnostics(client, uri, 3))


@E2E
async def test_a_reversed_range_over_lines_is_not_dropped(client):
    """Across lines pygls dropped such a change without a word."""
    uri = open_uri(client, "untitled:Untitled-reversed-lines", KERNEL)
    assert not errors(await wait_diagnostics(client, uri, 1))
    lines = KERNEL.split("\n")
    first = next(i for i, s in enumerate(lines) if "foreach" in s)
    # Remove the foreach line and the statement in it (the two lines after 'first').
    change(client, uri, 2, (first + 2, 0), (first, 0), "")
    lines = lines[:first] + lines[first + 2:]
    # The closing brace of the removed foreach is left: a syntax error in the right place.
    diags = errors(await wait_diagnostics(client, uri, 2))
    assert diags, "the change was dropped: the kernel still has no error"
    await warning_about(client, uri)
    change(client, uri, 3, (first, 0), (first, 0), "  foreach (int i in n threads) {\n"
           "    c[i] = a[i] + b[i];\n")
    assert not errors(await wait_diagnostics(client, uri, 3))


@E2E
async def test_a_leading_byte_order_mark_is_no_syntax_error(client):
    """The mark was "syntax error: expected 'package' or 'module', found '\\ufeff'"."""
    uri = open_uri(client, "untitled:Untitled-bom", "\ufeff" + KERNEL)
    diags = await wait_diagnostics(client, uri, 1)
    assert not errors(diags), [d.message for d in diags]


@E2E
async def test_positions_after_a_byte_order_mark_are_the_clients(client):
    uri = open_uri(client, "untitled:Untitled-bom-positions", "\ufeff" + BAD_IMPORT)
    diags = errors(await wait_diagnostics(client, uri, 1))
    assert len(diags) == 1 and "nosuch" in diags[0].message
    statement = "import nosuch;"
    column = ("\ufeff" + BAD_IMPORT).index(statement)     # the mark is one UTF-16 unit
    assert diags[0].range == lsp.Range(lsp.Position(0, column),
                                       lsp.Position(0, column + len(statement)))
    # An edit on the first line, counted by the client with the mark, lands right.
    change(client, uri, 2, (0, column), (0, column + len(statement)), "")
    assert not errors(await wait_diagnostics(client, uri, 2))
    plain = open_uri(client, "untitled:Untitled-no-bom", KERNEL)
    await wait_diagnostics(client, plain, 1)
    got, want = [await client.text_document_document_symbol_async(
        lsp.DocumentSymbolParams(lsp.TextDocumentIdentifier(u))) for u in (uri, plain)]
    assert [(s.name, s.range) for s in got] == [(s.name, s.range) for s in want]


@pytest.mark.parametrize(("encoding", "mark_units"), [("utf-16", 1), ("utf-8", 3),
                                                      ("utf-32", 1)])
def test_a_byte_order_mark_counts_in_every_position_encoding(encoding, mark_units):
    plain = analyse("/tmp/plain.mcpl", BAD_IMPORT, "mcpl", feedback=False)
    marked = analyse("/tmp/marked.mcpl", "\ufeff" + BAD_IMPORT, "mcpl", feedback=False)
    assert marked.text.startswith("\ufeff")
    [p], [m] = plain.diagnostics, marked.diagnostics
    assert p.message == m.message
    got = PositionMapper(marked.text, encoding).range(m.span)
    want = PositionMapper(plain.text, encoding).range(p.span)
    assert (got.start.character, got.end.character) == (
        want.start.character + mark_units, want.end.character + mark_units)


def test_an_hdl_buffer_with_a_byte_order_mark_parses():
    text = (EXAMPLES.parent / "mcl" / "hwdescs" / "gpu.hdl").read_text()
    assert not [d for d in analyse("/tmp/gpu.hdl", "\ufeff" + text, "hdl").diagnostics
                if d.severity.name == "ERROR"]
