"""`mcl feedback --level LEVEL`: the feedback a translated version would get, with
locations in the translated text (named FILE@LEVEL) and a first note at the
original function that says so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcl.analyses import feedback
from mcl.analyses.level import feedback_at_level
from mcl.cli import main
from mcl.mcpl import check

ROOT = Path(__file__).resolve().parents[2]
MATMUL = ROOT / "examples" / "matmul"


@pytest.fixture(scope="module")
def perfect_at_gpu():
    return feedback_at_level(check(MATMUL / "perfect.mcpl"), "gpu")


def test_first_note_at_the_original_says_where_locations_point(perfect_at_gpu):
    first = perfect_at_gpu.diagnostics[0]
    assert first.code == "feedback-level"
    assert first.span.file == str(MATMUL / "perfect.mcpl")
    assert "translated from 'perfect' to 'gpu'" in first.message
    assert perfect_at_gpu.file == str(MATMUL / "perfect.mcpl") + "@gpu"
    assert perfect_at_gpu.file in first.message
    assert first.related and first.related[0].span.file == perfect_at_gpu.file
    assert first.data["translated_source"] == perfect_at_gpu.text


def test_every_location_is_in_the_translated_text(perfect_at_gpu):
    lines = perfect_at_gpu.text.splitlines()
    rest = perfect_at_gpu.diagnostics[1:]
    assert rest
    for d in rest:
        assert d.span.file == perfect_at_gpu.file
        assert 1 <= d.span.line <= len(lines)
        assert d.span.column <= len(lines[d.span.line - 1]) + 1
        for r in d.related:
            assert r.span.file == perfect_at_gpu.file
            assert 1 <= r.span.line <= len(lines)
    [local] = [d for d in rest if d.code == "feedback-faster-memory"]
    text = lines[local.span.line - 1][local.span.column - 1:]
    assert text.startswith("a[i, k]")
    [wpt] = [d for d in rest if d.code == "feedback-work-per-thread"]
    assert lines[wpt.span.line - 1].strip().startswith("foreach (int bi in n blocks)")


def test_same_feedback_as_the_hand_written_gpu_version(perfect_at_gpu):
    """examples/matmul/gpu.mcpl is what translation gives (the paper's Figure 9):
    the translated text gets the same messages in the same order."""
    by_hand = feedback(check(MATMUL / "gpu.mcpl"))
    got = [(d.code, d.message) for d in perfect_at_gpu.diagnostics[1:]]
    assert got == [(d.code, d.message) for d in by_hand]


def test_cli_shows_translated_lines(capsys):
    rc = main(["feedback", "--level", "gpu", str(MATMUL / "perfect.mcpl"), "--color", "never"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "[feedback-level]" in out.splitlines()[0]
    assert "perfect.mcpl@gpu:" in out
    # caret lines under the translated source: names that only the translation has
    assert "foreach (int tj in nrThreadsM threads)" in out or "tj" in out
    assert "sum += a[i, k] * b[k, j];" in out


def test_cli_json_carries_the_translated_text(capsys):
    rc = main(["feedback", "--level", "fermi", str(MATMUL / "perfect.mcpl"), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert rc == 0
    assert data[0]["code"] == "feedback-level"
    source = data[0]["data"]["translated_source"]
    assert "fermi void matmul" in source
    named = data[0]["data"]["translated_file"]
    assert all(d["file"] == named for d in data[1:])
    assert {d["code"] for d in data[1:]} >= {"feedback-ops", "feedback-occupancy"}


def test_level_that_cannot_be_reached_is_an_error(capsys):
    rc = main(["feedback", "--level", "perfect", str(MATMUL / "gpu.mcpl")])
    assert rc == 1
    assert "translate-no-path" in capsys.readouterr().out


def test_unknown_level_is_a_usage_error(capsys):
    rc = main(["feedback", "--level", "no_such_level", str(MATMUL / "perfect.mcpl")])
    assert rc == 2
    assert "unknown hardware description 'no_such_level'" in capsys.readouterr().err
