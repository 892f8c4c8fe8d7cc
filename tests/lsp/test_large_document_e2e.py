"""End to end: a 10 000-line document does not block the server. While its first
check runs (seconds: a cold parse, then feedback for hundreds of functions),
completion and the outline of that document and hover in another document are
answered; its diagnostics come later. No timing is asserted: only that the answers
come, and come before the check of the large document has finished."""

from __future__ import annotations

import asyncio
import importlib.util

import pytest
from lsprotocol import types as lsp

from tests.lsp.conftest import (
    EXAMPLES,
    close_document,
    open_document,
    position_of,
    wait_diagnostics,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")

MATMUL = EXAMPLES / "matmul" / "gpu.mcpl"
#: Generous: a request must not wait for the whole check, but CI machines are slow.
BOUND = 60.0


def _bench_module():
    """benchmarks/lsp_bench.py, whose generated() makes the large document."""
    path = EXAMPLES.parent / "benchmarks" / "lsp_bench.py"
    spec = importlib.util.spec_from_file_location("lsp_bench", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


generated = _bench_module().generated


def doc(uri: str) -> lsp.TextDocumentIdentifier:
    return lsp.TextDocumentIdentifier(uri=uri)


async def test_a_10000_line_document_stays_responsive(client):
    small_text = MATMUL.read_text()
    small = open_document(client, MATMUL)
    await wait_diagnostics(client, small, 1)

    big_text = generated(10_000)
    assert big_text.count("\n") >= 10_000
    functions = big_text.count("gpu void matmul")
    big = open_document(client, EXAMPLES / "matmul" / "generated_10000.mcpl", big_text)
    # in a foreach header of a function in the middle: par_groups of gpu
    header = position_of(big_text, "foreach (int tj in nrThreadsM threads)", "threads",
                         functions // 2)
    completion, outline, hover = await asyncio.wait_for(asyncio.gather(
        client.text_document_completion_async(lsp.CompletionParams(doc(big), header)),
        client.text_document_document_symbol_async(lsp.DocumentSymbolParams(doc(big))),
        client.text_document_hover_async(lsp.HoverParams(
            doc(small), position_of(small_text, "+= a[i", "a")))), BOUND)
    # all three answered before the large document's diagnostics were published
    assert big not in client.diagnostics

    assert "threads" in [i.label for i in completion.items]
    names = [s.name for s in outline if s.kind == lsp.SymbolKind.Function]
    assert len(names) == functions and f"matmul{functions // 2}" in names
    assert "memory space **dev**" in hover.contents.value
    close_document(client, big)   # its feedback stops; the server goes on serving
    close_document(client, small)
