"""Parsing in worker processes (mcl.mcpl.parallel) gives exactly what parsing in
one process gives: the same Module, spans included, and the same diagnostics, on
every .mcpl file of the repository, on mutated ones and on a 10 000-line module;
and it falls back to one process cleanly."""

from __future__ import annotations

import importlib.util
import os
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcl.mcpl import parallel
from mcl.mcpl.builder import clear_cache, parse_partial

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted(p for p in [*ROOT.glob("examples/**/*.mcpl"), *ROOT.glob("mcl/**/*.mcpl"),
                             *ROOT.glob("tests/**/*.mcpl"), *ROOT.glob("examples/**/*.mcl")])
TOKEN = re.compile(r"//[^\n]*|/\*[\s\S]*?\*/|[A-Za-z_]\w*|\d+(?:\.\d*)?f?|<<=|>>=|"
                   r"[-+*/%&|^<>=!]=|&&|\|\||\+\+|--|\S")


def big_module() -> str:
    """The 10 000-line module of benchmarks/mcpl_parse.py."""
    spec = importlib.util.spec_from_file_location(
        "mcpl_parse_bench", ROOT / "benchmarks" / "mcpl_parse.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    return bench.big_module()


@st.composite
def mutated(draw):
    """An example with tokens deleted, duplicated or replaced by '}'."""
    text = draw(st.sampled_from(SOURCES)).read_text()
    for _ in range(draw(st.integers(1, 3))):
        tokens = [(m.start(), m.end()) for m in TOKEN.finditer(text)]
        a, b = tokens[draw(st.integers(0, len(tokens) - 1))]
        kind = draw(st.sampled_from(["delete", "duplicate", "brace"]))
        piece = {"delete": "", "duplicate": text[a:b] + " " + text[a:b], "brace": "}"}[kind]
        text = text[:a] + piece + text[b:]
    return text


def sequential(text: str, file: str):
    saved = os.environ.get("MCL_PARSE_WORKERS")
    os.environ["MCL_PARSE_WORKERS"] = "0"
    try:
        clear_cache()
        return parse_partial(text, file)
    finally:
        if saved is None:
            del os.environ["MCL_PARSE_WORKERS"]
        else:
            os.environ["MCL_PARSE_WORKERS"] = saved
        clear_cache()


@pytest.fixture
def workers_only(monkeypatch):
    """Every item of every module in its own batch, every batch to a worker."""
    monkeypatch.setenv("MCL_PARSE_WORKERS", "2")
    monkeypatch.setattr(parallel, "PARALLEL_MIN_CHARS", 0)
    monkeypatch.setattr(parallel, "BATCH_CHARS", 1)
    monkeypatch.setattr(parallel, "PARSE_HERE_TOO", False)
    if parallel._pool() is None:
        pytest.skip("no worker processes here (no fork, or other threads running)")


def in_workers(text: str, file: str):
    before = parallel.stats["worker_batches"]
    clear_cache()
    result = parse_partial(text, file)
    clear_cache()
    return result, parallel.stats["worker_batches"] - before


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_same_module_and_diagnostics_as_one_process(path, workers_only):
    text = path.read_text()
    result, batches = in_workers(text, str(path))
    assert result == sequential(text, str(path))
    module = result[0]
    assert batches == len(module.functions) + len(module.types) > 0


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(mutated())
def test_mutations_same_as_one_process(workers_only, text):
    assert in_workers(text, "m.mcpl")[0] == sequential(text, "m.mcpl")


@pytest.mark.slow  # about 5 s on two cores
def test_ten_thousand_lines(monkeypatch):
    monkeypatch.setenv("MCL_PARSE_WORKERS", "1")
    if parallel._pool() is None:
        pytest.skip("no worker processes here")
    text = big_module()
    assert text.count("\n") >= 10_000
    result, batches = in_workers(text, "big.mcpl")
    assert batches > 0 and not result[1]
    assert result == sequential(text, "big.mcpl")


def test_workers_leave_busy_cpus_alone(monkeypatch):
    monkeypatch.delenv("MCL_PARSE_WORKERS", raising=False)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(4)), raising=False)
    monkeypatch.setattr(parallel, "_others_running", lambda: 0)
    assert parallel.workers() == 3
    monkeypatch.setattr(parallel, "_others_running", lambda: 2)
    assert parallel.workers() == 2
    monkeypatch.setattr(parallel, "_others_running", lambda: 4)
    assert parallel.workers() == 0
    monkeypatch.setenv("MCL_PARSE_WORKERS", "2")
    assert parallel.workers() == 2


def test_small_modules_stay_in_this_process(monkeypatch):
    monkeypatch.setattr(parallel, "_pool", lambda: pytest.fail("a pool for a small module"))
    text = (ROOT / "examples" / "matmul" / "nvidia_v1.mcpl").read_text()
    clear_cache()
    parse_partial(text, "x.mcpl")


def test_falls_back_when_processes_cannot_be_made(monkeypatch):
    import multiprocessing

    def no_fork(method=None):
        raise ValueError("cannot find context for 'fork'")

    parallel.shutdown()
    monkeypatch.setattr(parallel, "PARALLEL_MIN_CHARS", 0)
    monkeypatch.setattr(parallel, "_unavailable", False)
    monkeypatch.setattr(multiprocessing, "get_context", no_fork)
    monkeypatch.setenv("MCL_PARSE_WORKERS", "2")
    text = (ROOT / "examples" / "matmul" / "nvidia_v1.mcpl").read_text()
    fallbacks = parallel.stats["fallbacks"]
    clear_cache()
    assert parse_partial(text, "x.mcpl") == sequential(text, "x.mcpl")
    assert parallel.stats["fallbacks"] == fallbacks + 1 and parallel._unavailable


def _dying_batch(file, hardware_names, jobs):
    os._exit(3)  # a worker killed (out of memory, say)


def test_falls_back_when_a_worker_dies(monkeypatch):
    parallel.shutdown()
    monkeypatch.setenv("MCL_PARSE_WORKERS", "1")
    monkeypatch.setattr(parallel, "_unavailable", False)
    monkeypatch.setattr(parallel, "PARALLEL_MIN_CHARS", 0)
    monkeypatch.setattr(parallel, "BATCH_CHARS", 1)
    monkeypatch.setattr(parallel, "PARSE_HERE_TOO", False)
    monkeypatch.setattr(parallel, "_build_batch", _dying_batch)
    if parallel._pool() is None:
        pytest.skip("no worker processes here")
    text = (ROOT / "examples" / "matmul" / "nvidia_v1.mcpl").read_text()
    fallbacks = parallel.stats["fallbacks"]
    clear_cache()
    assert parse_partial(text, "x.mcpl") == sequential(text, "x.mcpl")
    assert parallel.stats["fallbacks"] == fallbacks + 1 and parallel._executor is None


@pytest.mark.parametrize("depth", [60, 400])
def test_deep_nesting_same_as_one_process(workers_only, depth):
    """Nested too deeply to parse (400), or deep enough to strain pickling (60)."""
    text = "module m;\nimport perfect;\nperfect void f() { int x = " + "(" * depth + "1" + \
        ")" * depth + "; }\nperfect void g() { int y = " + "-" * 300 + "1; }\n"
    assert in_workers(text, "deep.mcpl")[0] == sequential(text, "deep.mcpl")
