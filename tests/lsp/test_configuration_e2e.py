"""End to end: the configuration (initializationOptions, then
workspace/didChangeConfiguration) decides which feedback passes run, the parameter
values the analyses use and where extra hardware descriptions are found; each
setting changes what the server publishes."""

from __future__ import annotations

import re

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from tests.lsp.conftest import (
    CONFIG,
    EXAMPLES,
    ROOT,
    capabilities,
    close_document,
    collect_diagnostics,
    open_document,
    wait_diagnostics,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")

GPU = EXAMPLES / "matmul" / "gpu.mcpl"
INFO_OR_HINT = (lsp.DiagnosticSeverity.Information, lsp.DiagnosticSeverity.Hint)


def own_description(directory) -> None:
    """A description 'mygpu' (the library's gpu with at most 256 threads per block)
    that only an extra hardware-description path makes known."""
    text = (ROOT / "mcl" / "hwdescs" / "gpu.hdl").read_text()
    text = text.replace("hardware_description gpu;", "hardware_description mygpu;")
    text = text.replace("device gpu {", "device mygpu {")
    (directory / "mygpu.hdl").write_text(text)


@pytest_lsp.fixture(config=CONFIG, scope="module")
async def configured(lsp_client: LanguageClient, request):
    hw = request.getfixturevalue("tmp_path_factory").mktemp("hwdescs")
    own_description(hw)
    lsp_client.hw = hw
    await lsp_client.initialize_session(lsp.InitializeParams(
        capabilities=capabilities(), root_uri=ROOT.as_uri(),
        initialization_options={"mcl": {
            "debounceMs": 0, "feedback": {"passes": ["reuse", "roofline"]},
            "values": {"n": 64}, "hwdPaths": [str(hw)]}}))
    yield
    await lsp_client.shutdown_session()


def feedback(diags: list[lsp.Diagnostic]) -> list[lsp.Diagnostic]:
    return [d for d in diags if str(d.code).startswith("feedback-")]


def errors(diags: list[lsp.Diagnostic]) -> list[lsp.Diagnostic]:
    return [d for d in diags if d.severity == lsp.DiagnosticSeverity.Error]


def kernel_for_mygpu(configured) -> tuple:
    # in a folder of its own: a description beside a kernel is found without the path
    path = configured.hw.with_name(configured.hw.name + "_kernels") / "kernel.mcpl"
    return path, re.sub(r"\bgpu\b", "mygpu", GPU.read_text())


async def test_initialization_options_choose_passes_and_values(configured):
    uri = open_document(configured, GPU)
    diags = await wait_diagnostics(configured, uri, 1)
    fb = feedback(diags)
    assert {d.code for d in fb} == {"feedback-reuse", "feedback-roofline"}
    assert all(d.severity in INFO_OR_HINT for d in fb)
    # the value of n from the configuration, not the parameter's default (2048)
    assert any("(n = 64 times)" in d.message for d in fb)
    assert not any("(n = 2048 times)" in d.message for d in fb)
    close_document(configured, uri)


async def test_an_extra_description_path_from_the_initialization_options(configured):
    path, text = kernel_for_mygpu(configured)
    uri = open_document(configured, path, text)
    diags = await wait_diagnostics(configured, uri, 1)
    assert not errors(diags)
    assert any("'mygpu'" in d.message for d in feedback(diags))
    close_document(configured, uri)


async def test_did_change_configuration_changes_what_is_published(configured):
    since = len(configured.published)
    gpu = open_document(configured, GPU)
    path, text = kernel_for_mygpu(configured)
    mine = open_document(configured, path, text)
    await collect_diagnostics(configured, {gpu: 1, mine: 1}, since)

    async def configure(settings: dict) -> dict[str, list[lsp.Diagnostic]]:
        since = len(configured.published)
        configured.workspace_did_change_configuration(
            lsp.DidChangeConfigurationParams(settings={"mcl": settings}))
        return await collect_diagnostics(configured, {gpu: 1, mine: 1}, since)

    # other passes
    got = await configure({"feedback": {"passes": ["ops", "work-per-thread"]}})
    assert {d.code for d in feedback(got[gpu])} == {"feedback-ops", "feedback-work-per-thread"}
    # other parameter values
    got = await configure({"feedback": {"passes": ["reuse"]}, "values": {"n": 128}})
    assert {d.code for d in feedback(got[gpu])} == {"feedback-reuse"}
    assert any("(n = 128 times)" in d.message for d in feedback(got[gpu]))
    # without the extra path 'mygpu' is unknown; with it again, known
    got = await configure({"hwdPaths": []})
    assert any(d.code == "mcpl-unknown-import" for d in errors(got[mine]))
    assert not errors(got[gpu])
    got = await configure({"hwdPaths": [str(configured.hw)]})
    assert not errors(got[mine]) and feedback(got[mine])
    # feedback off, then on again
    got = await configure({"feedback": False})
    assert not feedback(got[gpu]) and not feedback(got[mine])
    got = await configure({"feedback": {"enabled": True, "passes": None}})
    codes = {d.code for d in feedback(got[gpu])}
    assert {"feedback-ops", "feedback-reuse", "feedback-roofline"} <= codes
    close_document(configured, gpu)
    close_document(configured, mine)


async def test_a_description_changed_on_disk_is_read_again(configured):
    path, text = kernel_for_mygpu(configured)
    mine = open_document(configured, path, text)
    assert not errors(await wait_diagnostics(configured, mine, 1))
    hdl = configured.hw / "mygpu.hdl"
    original = hdl.read_text()
    try:
        hdl.write_text(original.replace("memory_space local", "memory_space shared"))
        since = len(configured.published)
        configured.workspace_did_change_watched_files(lsp.DidChangeWatchedFilesParams(
            [lsp.FileEvent(hdl.as_uri(), lsp.FileChangeType.Changed)]))
        got = await collect_diagnostics(configured, {mine: 1}, since)
        # the description is now broken (a memory holds `local`, which is gone)
        assert any(d.code == "mcpl-bad-hardware" for d in errors(got[mine]))
    finally:
        hdl.write_text(original)
        since = len(configured.published)
        configured.workspace_did_change_watched_files(lsp.DidChangeWatchedFilesParams(
            [lsp.FileEvent(hdl.as_uri(), lsp.FileChangeType.Changed)]))
        await collect_diagnostics(configured, {mine: 1}, since)
    close_document(configured, mine)
