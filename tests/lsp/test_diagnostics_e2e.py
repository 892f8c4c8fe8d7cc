"""End to end: diagnostics of MCPL and HDL documents published to a real client."""

from __future__ import annotations

import pytest
from lsprotocol import types as lsp

from tests.lsp.conftest import EXAMPLES, ROOT, edit, open_document, text_at, wait_diagnostics

pytestmark = pytest.mark.asyncio(loop_scope="module")

MATMUL = EXAMPLES / "matmul" / "gpu.mcpl"


async def test_a_correct_example_has_no_error(client):
    uri = open_document(client, MATMUL)
    diags = await wait_diagnostics(client, uri, 1)
    assert not [d for d in diags if d.severity == lsp.DiagnosticSeverity.Error]


async def test_an_edit_introduces_and_fixes_an_error(client):
    path = EXAMPLES / "matmul" / "perfect.mcpl"
    text = path.read_text()
    uri = open_document(client, path)
    assert not [d for d in await wait_diagnostics(client, uri, 1)
                if d.severity == lsp.DiagnosticSeverity.Error]
    # `c[i, j] = sum;` -> `c[i, j] = total;`: an undeclared name
    line = next(i for i, s in enumerate(text.splitlines()) if "c[i, j] = sum;" in s)
    col = text.splitlines()[line].index("sum;")
    edit(client, uri, 2, line, col, col + 3, "total")
    diags = await wait_diagnostics(client, uri, 2)
    errors = [d for d in diags if d.severity == lsp.DiagnosticSeverity.Error]
    assert len(errors) == 1
    assert errors[0].range.start == lsp.Position(line, col)
    assert errors[0].range.end == lsp.Position(line, col + 5)
    assert errors[0].source == "mcl" and errors[0].code
    edit(client, uri, 3, line, col, col + 5, "sum")
    diags = await wait_diagnostics(client, uri, 3)
    assert not [d for d in diags if d.severity == lsp.DiagnosticSeverity.Error]


async def test_a_syntax_error_is_an_error_at_its_place(client):
    path = EXAMPLES / "vector_add" / "perfect.mcpl"
    lines = path.read_text().splitlines()
    # drop the ';' of the first statement that ends with one inside a function
    n = next(i for i, s in enumerate(lines) if s.strip().endswith(";") and s.startswith("    "))
    lines[n] = lines[n].rstrip()[:-1]
    text = "\n".join(lines) + "\n"
    uri = open_document(client, path, text)
    diags = await wait_diagnostics(client, uri, 1)
    assert [d.code for d in diags] == ["mcpl-syntax"]
    assert diags[0].severity == lsp.DiagnosticSeverity.Error
    assert n <= diags[0].range.start.line <= n + 1


async def test_stale_results_are_never_published_after_a_newer_edit(client):
    path = EXAMPLES / "matmul" / "accelerator.mcpl"
    text = path.read_text()
    uri = open_document(client, path)
    await wait_diagnostics(client, uri, 1)
    # Three quick edits; whatever arrives last must describe version 4.
    broken = text.replace("c[i, j] = sum;", "c[i, j] = nope;")
    for version, t in ((2, broken), (3, text), (4, broken)):
        client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
            [lsp.TextDocumentContentChangeWholeDocument(text=t)]))
    diags = await wait_diagnostics(client, uri, 4)
    errors = [d for d in diags if d.severity == lsp.DiagnosticSeverity.Error]
    assert len(errors) == 1 and "nope" in errors[0].message


async def test_a_hardware_description_is_checked(client):
    path = ROOT / "mcl" / "hwdescs" / "gpu.hdl"
    text = path.read_text()
    uri = open_document(client, path, language="hdl")
    assert not [d for d in await wait_diagnostics(client, uri, 1)
                if d.severity == lsp.DiagnosticSeverity.Error]
    broken = text.replace("memory_space", "memory_spice", 1)
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        lsp.VersionedTextDocumentIdentifier(uri=uri, version=2),
        [lsp.TextDocumentContentChangeWholeDocument(text=broken)]))
    diags = await wait_diagnostics(client, uri, 2)
    assert any(d.severity == lsp.DiagnosticSeverity.Error for d in diags)


async def test_feedback_is_information_or_hints_with_codes_on_the_exact_range(client):
    text = MATMUL.read_text()
    uri = open_document(client, MATMUL, version=5)
    diags = await wait_diagnostics(client, uri, 5)
    feedback = [d for d in diags if d.source == "mcl feedback"]
    assert feedback and len(feedback) == len(diags)   # the example has no error
    assert all(d.severity in (lsp.DiagnosticSeverity.Information,
                              lsp.DiagnosticSeverity.Hint) for d in feedback)
    assert all(str(d.code).startswith("feedback-") and d.data["code"] == d.code
               for d in feedback)
    codes = {d.code for d in feedback}
    assert {"feedback-ops", "feedback-roofline", "feedback-reuse"} <= codes
    # a reuse finding marks the array access it is about, and says what to try
    reuse = [d for d in feedback if d.code == "feedback-reuse"]
    assert {text_at(text, d.range) for d in reuse} == {"a[i, k]", "b[k, j]"}
    assert all("\nhelp: " in d.message for d in reuse)
    # the function-wide ones start at the function's header
    ops = next(d for d in feedback if d.code == "feedback-ops")
    assert text_at(text, ops.range).startswith("gpu void matmul(")
