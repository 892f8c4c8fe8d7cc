"""An unsaved document (an ``untitled:`` URI, no file on disk), in process: its own
URI in locations, and nothing read from or written to the folder the server runs in."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcl.diagnostics import Span
from mcl.lsp import actions, completion
from mcl.lsp.analysis import analyse
from mcl.lsp.convert import path_to_uri, uri_to_path
from mcl.lsp.positions import PositionMapper
from mcl.lsp.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
TEXT = (ROOT / "examples" / "vector_add" / "perfect.mcpl").read_text()
URI = "untitled:Untitled-1"


@pytest.fixture
def unsaved(tmp_path, monkeypatch):
    """The analysis of an unsaved buffer, with the server running in a folder of
    other kernels (whose names an unsaved buffer must not pick up)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "other.mcpl").write_text(TEXT)
    return analyse(uri_to_path(URI), TEXT, "mcpl", Settings(), feedback=False)


def test_an_unsaved_document_keeps_its_uri():
    assert path_to_uri(uri_to_path(URI)) == URI
    assert path_to_uri(uri_to_path("file:///tmp/a%20b.mcpl")) == "file:///tmp/a%20b.mcpl"


def test_translating_an_unsaved_document_asks_to_save_it_first(unsaved, tmp_path):
    found = actions.code_actions(unsaved, Span(unsaved.file, 10, 1, 10, 1), URI,
                                 PositionMapper(TEXT), Settings(), lazy=False)
    translations = [a for a in found if a.title.startswith("Translate")]
    assert translations
    for a in translations:
        assert a.edit is None and a.disabled is not None
        assert "save the document" in a.disabled.reason
    # nothing compares it with the kernels of the server's working directory
    assert not [a for a in found if a.command is not None]


def test_completing_an_import_of_an_unsaved_document_offers_no_neighbours(unsaved):
    text = "module m;\nimport \n"
    items = completion.complete(text, "mcpl", 2, 8, unsaved, Settings())
    assert "perfect" in [i.label for i in items]
    assert "other" not in [i.label for i in items]
