"""Latency of the language server as an editor sees it: from sending a
``textDocument/didChange`` to receiving the ``publishDiagnostics`` of that version
(syntax + semantic + feedback, with the default debounce), measured with a real
LSP client (pygls) talking to a real ``mcl lsp`` process over stdio.

Cases: the matmul example (target ≲ 300 ms) and a generated 2 000-line module
(target ≲ 1 s). Then responsiveness: a generated 10 000-line module opened cold,
with completion and the outline of it and a hover in another document sent at
once, a hover in it after those, and its first diagnostics. Each edit
alternates between breaking and repairing one statement in the middle of the
document. The reference, measured in the same run, is the
in-process ``mcl.mcpl.check`` of the same text (best of three, so with
mcl.mcpl's item cache warm, as the server's is after the first version), so the
ratio shows what the server adds (debounce, protocol, feedback of the edited
function, thread hand-over).

Run: python benchmarks/lsp_bench.py [--write] [--edits N]
(--write updates benchmarks/results/lsp.md)."""

from __future__ import annotations

import argparse
import asyncio
import platform
import statistics
import sys
import time
from pathlib import Path

from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient

ROOT = Path(__file__).resolve().parent.parent
MATMUL = ROOT / "examples" / "matmul" / "gpu.mcpl"
RESULTS = ROOT / "benchmarks" / "results" / "lsp.md"


def generated(lines: int) -> str:
    """A module of at least ``lines`` lines: copies of the gpu matmul function."""
    text = MATMUL.read_text()
    head, body = text[: text.index("gpu void")], text[text.index("gpu void"):]
    parts, k = [head], 0
    while sum(p.count("\n") for p in parts) < lines:
        parts.append("\n" + body.replace("void matmul(", f"void matmul{k}("))
        k += 1
    return "".join(parts)


class Client:
    """A pygls client that records when each version's diagnostics arrive."""

    def __init__(self) -> None:
        self.client = LanguageClient("lsp-bench", "1")
        self.arrived: dict[tuple[str, int | None], asyncio.Future] = {}

        @self.client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_diagnostics(params: lsp.PublishDiagnosticsParams) -> None:
            fut = self.arrived.get((params.uri, params.version))
            if fut is not None and not fut.done():
                fut.set_result((time.perf_counter(), params.diagnostics))

    def expect(self, uri: str, version: int) -> asyncio.Future:
        fut = asyncio.get_running_loop().create_future()
        self.arrived[(uri, version)] = fut
        return fut

    async def start(self) -> None:
        await self.client.start_io(sys.executable, "-m", "mcl.cli", "lsp")
        await self.client.initialize_async(lsp.InitializeParams(
            capabilities=lsp.ClientCapabilities(), root_uri=ROOT.as_uri()))
        self.client.initialized(lsp.InitializedParams())

    async def stop(self) -> None:
        await self.client.shutdown_async(None)
        self.client.exit(None)
        await self.client.stop()


async def measure(client: Client, path: Path, text: str, edits: int) -> list[float]:
    """Milliseconds from didChange to the diagnostics of that version, per edit."""
    uri = path.as_uri()
    fut = client.expect(uri, 1)
    client.client.text_document_did_open(lsp.DidOpenTextDocumentParams(
        lsp.TextDocumentItem(uri=uri, language_id="mcpl", version=1, text=text)))
    await asyncio.wait_for(fut, 600)
    lines = text.split("\n")
    # the `c[i, j] = sum;` of the function in the middle of the document
    targets = [i for i, s in enumerate(lines) if "c[i, j] = sum;" in s]
    line = targets[len(targets) // 2]
    col = lines[line].index("sum;")
    times = []
    for k in range(edits):
        version = k + 2
        new, old = ("nope", 3) if k % 2 == 0 else ("sum", 4)
        fut = client.expect(uri, version)
        start = time.perf_counter()
        client.client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
            [lsp.TextDocumentContentChangePartial(
                range=lsp.Range(lsp.Position(line, col), lsp.Position(line, col + old)),
                text=new)]))
        arrived, diags = await asyncio.wait_for(fut, 600)
        errors = [d for d in diags if d.severity == lsp.DiagnosticSeverity.Error]
        assert bool(errors) == (new == "nope"), "the server published the wrong result"
        times.append((arrived - start) * 1000)
    client.client.text_document_did_close(lsp.DidCloseTextDocumentParams(
        lsp.TextDocumentIdentifier(uri)))
    return times


def reference_ms(path: Path, text: str, runs: int = 3) -> float:
    """In-process parse + check of the same text (best of ``runs``)."""
    from mcl.mcpl import check

    check(str(path), source=text)
    best = float("inf")
    for _ in range(runs):
        t = time.perf_counter()
        check(str(path), source=text)
        best = min(best, time.perf_counter() - t)
    return best * 1000


async def responsiveness(client: Client, lines: int) -> dict:
    """A document of ``lines`` lines opened cold: when the completion, outline and
    hover (in another document) sent right after the ``didOpen`` are answered, and
    when the document's first diagnostics arrive (milliseconds after the didOpen)."""
    small = MATMUL.as_uri()
    fut = client.expect(small, 1)
    client.client.text_document_did_open(lsp.DidOpenTextDocumentParams(
        lsp.TextDocumentItem(uri=small, language_id="mcpl", version=1,
                             text=MATMUL.read_text())))
    await asyncio.wait_for(fut, 600)
    text = generated(lines)
    uri = MATMUL.with_name(f"generated_{lines}.mcpl").as_uri()
    src = text.split("\n")
    middle = [i for i, s in enumerate(src) if "foreach (int tj in nrThreadsM threads)" in s]
    line = middle[len(middle) // 2]
    header = lsp.Position(line, src[line].index("threads)"))
    hover_line = next(i for i, s in enumerate(MATMUL.read_text().split("\n")) if "+= a[i" in s)
    hover_at = lsp.Position(hover_line, MATMUL.read_text().split("\n")[hover_line].index("a[i"))
    doc = lsp.TextDocumentIdentifier(uri=uri)

    async def timed(request) -> float:
        await request
        return (time.perf_counter() - start) * 1000

    diagnostics = client.expect(uri, 1)
    start = time.perf_counter()
    client.client.text_document_did_open(lsp.DidOpenTextDocumentParams(
        lsp.TextDocumentItem(uri=uri, language_id="mcpl", version=1, text=text)))
    completion, outline, hover = await asyncio.gather(
        timed(client.client.text_document_completion_async(lsp.CompletionParams(doc, header))),
        timed(client.client.text_document_document_symbol_async(
            lsp.DocumentSymbolParams(doc))),
        timed(client.client.text_document_hover_async(lsp.HoverParams(
            lsp.TextDocumentIdentifier(uri=small), hover_at))))
    hover_big = await timed(client.client.text_document_hover_async(lsp.HoverParams(
        doc, lsp.Position(line, src[line].index("tj")))))
    arrived, _ = await asyncio.wait_for(diagnostics, 600)
    for u in (uri, small):
        client.client.text_document_did_close(lsp.DidCloseTextDocumentParams(
            lsp.TextDocumentIdentifier(u)))
    return {"lines": text.count("\n"), "completion": completion, "outline": outline,
            "hover_other": hover, "hover_big": hover_big,
            "diagnostics": (arrived - start) * 1000}


async def run(edits: int) -> list[dict]:
    cases = [("matmul gpu.mcpl", MATMUL, MATMUL.read_text(), 300),
             ("generated 2000 lines", MATMUL.with_name("generated_2000.mcpl"), generated(2000),
              1000)]
    client = Client()
    await client.start()
    rows = []
    try:
        for name, path, text, target in cases:
            times = await measure(client, path, text, edits)
            rows.append({"case": name, "lines": text.count("\n"),
                         "median": statistics.median(times), "max": max(times),
                         "reference": reference_ms(path, text), "target": target})
        large = await responsiveness(client, 10_000)
    finally:
        await client.stop()
    return rows, large


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help=f"write {RESULTS.relative_to(ROOT)}")
    ap.add_argument("--edits", type=int, default=10, help="edits per case (default 10)")
    args = ap.parse_args()
    rows, large = asyncio.run(run(args.edits))
    table = ["| case | lines | didChange → diagnostics (median) | max | in-process check "
             "(reference) | ratio | target |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        table.append(f"| {r['case']} | {r['lines']} | {r['median']:.0f} ms | {r['max']:.0f} ms "
                     f"| {r['reference']:.0f} ms | {r['median'] / r['reference']:.1f}× "
                     f"| ≲ {r['target']} ms |")
    table += ["", f"A {large['lines']}-line document opened cold; milliseconds from its "
              "`didOpen` until each answer:", "",
              "| completion in it | outline of it | hover in another document "
              "| hover in it | its first diagnostics |", "| --- | --- | --- | --- | --- |",
              f"| {large['completion']:.0f} ms | {large['outline']:.0f} ms "
              f"| {large['hover_other']:.0f} ms | {large['hover_big']:.0f} ms "
              f"| {large['diagnostics']:.0f} ms |"]
    print("\n".join(table))
    if args.write:
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        RESULTS.write_text(
            "# Language server: didChange → published diagnostics\n\n"
            f"Machine: {platform.machine()}, Python {platform.python_version()}; "
            f"{args.edits} edits per case, default debounce; "
            "`python benchmarks/lsp_bench.py --write`.\n\n" + "\n".join(table) + "\n")


if __name__ == "__main__":
    main()
