"""End to end: hover, go to definition, completion, document symbols and code actions
answered by a real ``mcl lsp`` process to a real client."""

from __future__ import annotations

from pathlib import Path

import pytest
import pytest_asyncio
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException

from tests.lsp.conftest import EXAMPLES, ROOT, open_document, replace_all, wait_diagnostics

pytestmark = pytest.mark.asyncio(loop_scope="module")

GPU = EXAMPLES / "matmul" / "gpu.mcpl"
TEXT = GPU.read_text()


def where(snippet: str, word: str, text: str = TEXT) -> lsp.Position:
    """The position of ``word`` inside the first occurrence of ``snippet``."""
    offset = text.index(snippet) + snippet.index(word)
    line = text.count("\n", 0, offset)
    return lsp.Position(line, offset - (text.rfind("\n", 0, offset) + 1))


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def gpu_uri(client):
    uri = open_document(client, GPU)
    await wait_diagnostics(client, uri, 1)
    return uri


def doc(uri: str) -> lsp.TextDocumentIdentifier:
    return lsp.TextDocumentIdentifier(uri=uri)


async def hover_text(client, uri: str, pos: lsp.Position) -> str:
    h = await client.text_document_hover_async(lsp.HoverParams(doc(uri), pos))
    assert h is not None
    return h.contents.value


async def test_hover_on_a_variable_shows_type_space_and_memory(client, gpu_uri):
    text = await hover_text(client, gpu_uri, where("+= a[i", "a"))
    assert "dev float[n, p] a" in text
    assert "memory space **dev**" in text
    assert "capacity 4 GB" in text and "latency 400 cycles" in text


async def test_hover_on_a_foreach_shows_its_par_group_and_limits(client, gpu_uri):
    text = await hover_text(client, gpu_uri, where("in nrThreadsM threads", "threads"))
    assert "par_group **threads**" in text
    assert "at most 1024 units" in text


async def test_hover_on_a_description_reference_shows_its_value(client, gpu_uri):
    text = await hover_text(client, gpu_uri, where("threads.max_nr_units", "max_nr_units"))
    assert "= 1024" in text


async def test_definition_of_a_variable_is_its_declaration(client, gpu_uri):
    locs = await client.text_document_definition_async(lsp.DefinitionParams(
        doc(gpu_uri), where("c[i, j] = sum", "sum")))
    assert len(locs) == 1
    assert locs[0].uri == gpu_uri
    assert locs[0].range.start == where("float sum", "sum")


async def test_definition_of_a_par_group_jumps_into_the_library(client, gpu_uri):
    locs = await client.text_document_definition_async(lsp.DefinitionParams(
        doc(gpu_uri), where("bi in n blocks", "blocks")))
    assert locs and locs[0].uri.endswith("/mcl/hwdescs/gpu.hdl")
    hdl = (ROOT / "mcl" / "hwdescs" / "gpu.hdl").read_text().splitlines()
    line = hdl[locs[0].range.start.line]
    assert line[locs[0].range.start.character:locs[0].range.end.character] == "blocks"
    assert "par_group" in line


async def test_definition_of_the_level_and_of_an_import(client, gpu_uri):
    for pos in (where("gpu void", "gpu"), where("import gpu", "gpu")):
        locs = await client.text_document_definition_async(lsp.DefinitionParams(
            doc(gpu_uri), pos))
        assert locs and locs[0].uri.endswith("/mcl/hwdescs/gpu.hdl")


async def test_completion_offers_par_groups_in_a_foreach_header(client):
    text = TEXT.replace("        int i = bi;", "        foreach (int q in 4 \n        int i = bi;")
    path = EXAMPLES / "matmul" / "gpu_v1.mcpl"   # any path: the buffer is what counts
    uri = open_document(client, path, text)
    await wait_diagnostics(client, uri, 1)
    start = where("foreach (int q in 4 ", "foreach", text)
    pos = lsp.Position(start.line, start.character + len("foreach (int q in 4 "))
    items = await client.text_document_completion_async(lsp.CompletionParams(doc(uri), pos))
    labels = [i.label for i in items.items]
    assert "threads" in labels and "blocks" not in labels   # inside a threads loop


async def test_completion_of_property_paths_and_levels(client, gpu_uri):
    text = TEXT + "\n"
    uri = gpu_uri
    replace_all(client, uri, text.replace(
        "const int nrBlocksM", "const int x = gpu.hierarchy.blocks.block.threads.;\n"
        "  const int nrBlocksM"), 2)
    await wait_diagnostics(client, uri, 2)
    edited = text.replace("const int nrBlocksM", "const int x = gpu.hierarchy.blocks.block."
                          "threads.;\n  const int nrBlocksM")
    pos = where("threads.;", ";", edited)
    items = await client.text_document_completion_async(lsp.CompletionParams(doc(uri), pos))
    assert "max_nr_units" in [i.label for i in items.items]
    # at the start of a new top-level line: descriptions for the level slot
    lines = edited.count("\n")
    items = await client.text_document_completion_async(lsp.CompletionParams(
        doc(uri), lsp.Position(lines, 0)))
    labels = [i.label for i in items.items]
    assert {"perfect", "gpu", "fermi"} <= set(labels)
    replace_all(client, uri, TEXT, 3)
    await wait_diagnostics(client, uri, 3)


async def test_document_symbols_show_functions_and_foreach_structure(client, gpu_uri):
    syms = await client.text_document_document_symbol_async(
        lsp.DocumentSymbolParams(doc(gpu_uri)))
    fn = next(s for s in syms if s.name == "matmul")
    assert fn.kind == lsp.SymbolKind.Function
    loops = [c for c in fn.children if c.name.startswith("foreach")]
    assert loops[0].name == "foreach bi in n blocks"
    assert loops[0].children[0].name == "foreach bj in nrBlocksM blocks"


async def test_translate_action_creates_the_translated_file(client):
    path = EXAMPLES / "matmul" / "perfect.mcpl"
    uri = open_document(client, path)
    await wait_diagnostics(client, uri, 1)
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        doc(uri), lsp.Range(where("foreach", "foreach", path.read_text()),
                            where("foreach", "foreach", path.read_text())),
        lsp.CodeActionContext(diagnostics=[])))
    titles = [a.title for a in actions]
    assert "Translate 'matmul' to accelerator" in titles
    action = next(a for a in actions if a.title == "Translate 'matmul' to accelerator")
    resolved = await client.code_action_resolve_async(action)
    create, edit = resolved.edit.document_changes
    assert isinstance(create, lsp.CreateFile)
    assert create.uri.endswith("/examples/matmul/accelerator_2.mcpl")  # never overwrites
    new_text = edit.edits[0].new_text
    assert "accelerator void matmul(" in new_text and "import accelerator;" in new_text
    # Apply the edit as a client would: the new file checks without errors.
    target = Path(create.uri.removeprefix("file://"))
    new_uri = open_document(client, target, new_text)
    diags = await wait_diagnostics(client, new_uri, 1)
    assert not [d for d in diags if d.severity == lsp.DiagnosticSeverity.Error]


async def test_set_example_values_fills_in_missing_defaults(client):
    text = (EXAMPLES / "vector_add" / "perfect.mcpl").read_text()
    import re

    bare = re.sub(r"(const int \w+) = \d+", r"\1", text)
    assert bare != text
    uri = open_document(client, EXAMPLES / "vector_add" / "bare.mcpl", bare)
    await wait_diagnostics(client, uri, 1)
    pos = where("foreach", "foreach", bare)
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        doc(uri), lsp.Range(pos, pos), lsp.CodeActionContext(diagnostics=[])))
    action = next(a for a in actions if a.title.startswith("Set example values"))
    edits = action.edit.changes[uri]
    assert edits and all(e.new_text.startswith(" = ") for e in edits)


async def test_a_failing_request_is_an_error_and_the_next_one_works(client, gpu_uri):
    broken = lsp.CodeAction(title="x", data={"uri": gpu_uri, "action": "translate",
                                             "function": "matmul", "to": ["not", "a", "name"]})
    with pytest.raises(JsonRpcException):
        await client.code_action_resolve_async(broken)
    text = await hover_text(client, gpu_uri, where("+= a[i", "a"))
    assert "dev float[n, p] a" in text


# --------------------------------------------------------------------------- HDL documents

HDL = ROOT / "mcl" / "hwdescs" / "gpu.hdl"
HDL_TEXT = HDL.read_text()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def hdl_uri(client):
    uri = open_document(client, HDL, language="hdl")
    await wait_diagnostics(client, uri, 1)
    return uri


async def test_hover_in_a_description(client, hdl_uri):
    text = await hover_text(client, hdl_uri, where("space(local)", "local", HDL_TEXT))
    assert "memory_space **local**" in text and "private to each `block`" in text
    text = await hover_text(client, hdl_uri, where("threads.thread;", "thread;", HDL_TEXT))
    assert "par_unit **thread** (defined in `perfect`)" in text
    text = await hover_text(client, hdl_uri, where("specializes accelerator", "accelerator",
                                                   HDL_TEXT))
    assert "hardware description **accelerator**" in text
    text = await hover_text(client, hdl_uri, where("connects(mem", "mem", HDL_TEXT))
    assert "memory **mem**" in text and "capacity = 4 GB" in text


def hdl_line(uri: str, line: int) -> str:
    return Path(uri.removeprefix("file://")).read_text().splitlines()[line]


async def test_definition_in_a_description(client, hdl_uri):
    async def define(snippet: str, word: str) -> lsp.Location:
        locs = await client.text_document_definition_async(lsp.DefinitionParams(
            doc(hdl_uri), where(snippet, word, HDL_TEXT)))
        assert len(locs) == 1
        return locs[0]

    # into another description of the library
    loc = await define("accelerator.pcie", "pcie")
    assert loc.uri.endswith("/mcl/hwdescs/accelerator.hdl")
    line = hdl_line(loc.uri, loc.range.start.line)
    assert line[loc.range.start.character:loc.range.end.character] == "pcie"
    assert "interconnect" in line
    loc = await define("specializes accelerator", "accelerator")
    assert loc.uri.endswith("/mcl/hwdescs/accelerator.hdl")
    assert hdl_line(loc.uri, loc.range.start.line).startswith("hardware_description")
    loc = await define("threads.thread;", "thread;")
    assert loc.uri.endswith("/mcl/hwdescs/perfect.hdl")
    assert "par_unit thread" in hdl_line(loc.uri, loc.range.start.line)
    # within the same description
    loc = await define("slots(block", "block")
    assert loc.uri == hdl_uri
    line = HDL_TEXT.splitlines()[loc.range.start.line]
    assert "par_unit block" in line
    assert line[loc.range.start.character:loc.range.end.character] == "block"


async def test_completion_in_a_description(client, hdl_uri):
    pos = where("space(local)", "local", HDL_TEXT)
    items = await client.text_document_completion_async(lsp.CompletionParams(
        doc(hdl_uri), pos))
    assert {"dev", "local", "reg"} <= {i.label for i in items.items}


# --------------------------------------------------------------------------- broken documents


async def test_a_document_that_does_not_parse_still_gets_completion_and_symbols(client):
    # a half-typed statement in matmul, and a second function that is fine
    second = TEXT[TEXT.index("gpu void"):].replace("void matmul(", "void second(")
    text = TEXT.replace("        int i = bi;", "        int i = bi *\n        int i2 = bi;") \
        + "\n" + second
    uri = open_document(client, EXAMPLES / "matmul" / "broken.mcpl", text)
    diags = await wait_diagnostics(client, uri, 1)
    assert [d.code for d in diags] == ["mcpl-syntax"]
    syms = await client.text_document_document_symbol_async(lsp.DocumentSymbolParams(doc(uri)))
    functions = {s.name: s for s in syms if s.kind == lsp.SymbolKind.Function}
    assert set(functions) == {"matmul", "second"}
    loops = [c.name for c in functions["matmul"].children if c.name.startswith("foreach")]
    assert loops == ["foreach bi in n blocks"]
    # names in scope inside the broken function, and its level's memory spaces
    pos = where("c[i, j] = sum;", "c", text)
    items = await client.text_document_completion_async(lsp.CompletionParams(doc(uri), pos))
    labels = {i.label for i in items.items}
    assert {"a", "b", "c", "n", "sum", "bi", "tj"} <= labels
    assert {"local", "foreach", "second"} <= labels
    # hover still works in the broken function
    hover = await hover_text(client, uri, where("+= a[i", "a", text))
    assert "dev float[n, p] a" in hover


async def test_definition_of_functions_types_and_imported_modules(client):
    path = EXAMPLES / "histogram" / "perfect.mcpl"
    text = path.read_text() + """
type pair {
  float x;
  int y;
}

perfect float twice(float v) {
  return 2.0 * v;
}

perfect void use(const int n = 16, main float[n] out, main int[n] top) {
  foreach (int i in n threads) {
    pair q;
    q.x = 1.0;
    out[i] = twice(q.x);
    atomicMax(top[i], 3);
  }
}
"""
    uri = open_document(client, EXAMPLES / "histogram" / "more.mcpl", text)
    diags = await wait_diagnostics(client, uri, 1)
    assert not [d for d in diags if d.severity == lsp.DiagnosticSeverity.Error]

    async def define(snippet: str, word: str) -> lsp.Location:
        locs = await client.text_document_definition_async(lsp.DefinitionParams(
            doc(uri), where(snippet, word, text)))
        assert len(locs) == 1
        return locs[0]

    loc = await define("pair q", "pair")           # a record type
    assert loc.uri == uri and loc.range.start == where("type pair", "pair", text)
    loc = await define("twice(q", "twice")         # a function of this module
    assert loc.uri == uri and loc.range.start == where("float twice", "twice", text)
    loc = await define("atomicMax(top", "atomicMax")   # a function of an imported module
    lib = ROOT / "mcl" / "mcpl" / "lib" / "atomics.mcpl"
    assert loc.uri == lib.as_uri()
    assert loc.range.start == where("void atomicMax", "atomicMax", lib.read_text())
    loc = await define("import lib.atomics", "atomics")   # the imported module
    assert loc.uri == lib.as_uri()
