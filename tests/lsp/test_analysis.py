"""Checking one buffer (mcl.lsp.analysis), in process: what a document that does not
parse still offers, the per-function feedback cache and its cancellation."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcl.lsp.analysis import Cancelled, add_feedback, analyse
from mcl.lsp.positions import PositionMapper
from mcl.lsp.settings import Settings
from mcl.lsp.symbols import document_symbols

ROOT = Path(__file__).resolve().parents[2]
GPU = ROOT / "examples" / "matmul" / "gpu.mcpl"
TEXT = GPU.read_text()
SECOND = "\n" + TEXT[TEXT.index("gpu void"):].replace("void matmul(", "void second(")


def test_a_broken_line_is_blanked_so_its_function_keeps_its_tables():
    text = TEXT.replace("int i = bi;", "int i = bi +;")
    a = analyse(str(GPU), text, "mcpl")
    assert not a.parses and [d.code for d in a.diagnostics] == ["mcpl-syntax"]
    f = a.module.function("matmul")
    assert f is not None and a.checked is not None
    # the repaired module keeps every position of the buffer
    assert f.span == analyse(str(GPU), TEXT, "mcpl").module.function("matmul").span


def test_an_unrepairable_function_leaves_the_others_and_appears_in_the_outline():
    broken = (TEXT + SECOND).replace("void matmul(", "void matmul(((", 1)
    a = analyse(str(GPU), broken, "mcpl")
    assert not a.parses and a.diagnostics[0].code == "mcpl-syntax"
    assert [f.name for f in a.module.functions] == ["second"]
    names = [s.name for s in document_symbols(a, PositionMapper(broken))]
    assert "second" in names and "matmul" in names


def test_a_broken_header_still_gives_functions():
    broken = TEXT.replace("import gpu;", "import gpu")
    a = analyse(str(GPU), broken, "mcpl")
    assert not a.parses
    assert a.module.function("matmul") is not None


def test_feedback_of_unchanged_functions_is_reused():
    cache: dict = {}
    text = TEXT + SECOND
    first = analyse(str(GPU), text, "mcpl", feedback_cache=cache)
    assert first.feedback and len(cache) == 2
    reused = {id(v) for v in cache.values()}
    edited = text.replace("c[i, j] = sum;", "c[i, j] = sum + 0.0;", 1)
    again = analyse(str(GPU), edited, "mcpl", feedback_cache=cache)
    assert again.feedback
    assert len(cache) == 2 and len({id(v) for v in cache.values()} & reused) == 1


def test_feedback_stops_when_the_document_changed():
    tables = analyse(str(GPU), TEXT, "mcpl", feedback=False)
    assert tables.checked is not None and not tables.feedback
    cache: dict = {}
    with pytest.raises(Cancelled):
        add_feedback(tables, cache, cancelled=lambda: True)
    assert add_feedback(tables, cache, cancelled=lambda: False).feedback


def test_feedback_is_advice_never_an_error_and_follows_the_settings():
    a = analyse(str(GPU), TEXT, "mcpl")
    assert a.feedback and all(d.code.startswith("feedback-") for d in a.feedback)
    assert all(d.severity.name in ("INFO", "HINT") for d in a.feedback)
    off = analyse(str(GPU), TEXT, "mcpl", Settings(feedback=False))
    assert not off.feedback
    roofline = analyse(str(GPU), TEXT, "mcpl", Settings(feedback_passes=("roofline",)))
    assert {d.code for d in roofline.feedback} == {"feedback-roofline"}


def test_the_editor_analyses_a_version_as_mcl_run_builds_it():
    """convolution hopper_v4 is written for its sizes (reference.py: SPECIALIZE): the
    editor's feedback, as `mcl feedback`'s, analyses the specialised build, whose filter
    is passed by value: its global loads are the input's alone."""
    from pathlib import Path

    from mcl.lsp.analysis import _run_feedback
    from mcl.lsp.settings import Settings
    from mcl.mcpl import check

    path = Path(__file__).resolve().parents[2] / "examples" / "convolution" / "hopper_v4.mcpl"
    found = _run_feedback(check(str(path)), Settings(feedback_passes=("functions",)))
    (requests,) = [d for d in found if d.code == "feedback-requests"]
    assert requests.data["requests"] == 1179648


def test_a_description_beside_the_document_is_found_as_the_commands_find_it(tmp_path):
    """`import mycpu;` with mycpu.hdl in the document's folder (not in the settings'
    paths): checked, and its library has the level; an unsaved buffer has no folder."""
    from mcl.hdl.library import BUNDLED
    (tmp_path / "mycpu.hdl").write_text(
        (BUNDLED / "cpu.hdl").read_text()
        .replace("hardware_description cpu;", "hardware_description mycpu;")
        .replace("device cpu {", "device mycpu {"))
    text = ("module k;\nimport mycpu;\n\nmycpu void k(const int n = 64, main float[n] a) {\n"
            "  foreach (int i in n threads) { foreach (int v in 8 vectors) { a[i] = 1.0; } }\n"
            "}\n")
    a = analyse(str(tmp_path / "k.mcpl"), text, "mcpl", feedback=False)
    assert [d.code for d in a.diagnostics if d.is_error] == []
    assert "mycpu" in a.library() and str(tmp_path / "mycpu.hdl") in a.search_path
    unsaved = analyse("untitled:Untitled-1", text, "mcpl", feedback=False)
    assert "mcpl-unknown-import" in [d.code for d in unsaved.diagnostics]


def test_completing_an_import_of_a_saved_kernel_offers_the_descriptions_beside_it(tmp_path):
    """mycpu.hdl beside a kernel on disk: `import ` offers mycpu, as the check finds it."""
    from mcl.lsp import completion
    from mcl.lsp.analysis import analyse
    from mcl.lsp.settings import Settings
    from tests.test_cli import VADD_MYCPU, _level_beside
    _level_beside(tmp_path)
    kernel = tmp_path / "vadd.mcpl"
    kernel.write_text(VADD_MYCPU)
    analysis = analyse(str(kernel), VADD_MYCPU, "mcpl", Settings(), feedback=False)
    items = completion.complete("module m;\nimport \n", "mcpl", 2, 8, analysis, Settings())
    assert {"mycpu", "perfect"} <= {i.label for i in items}
