"""The VS Code package in editors/vscode: its manifest is consistent, and its TextMate
grammars tokenise the examples as intended (with the vscode-textmate and
vscode-oniguruma npm packages, the engine VS Code uses; skipped without Node or
without ``npm ci --prefix editors/vscode``)."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from tests.lsp.conftest import ROOT

PACKAGE = ROOT / "editors" / "vscode"


def test_manifest_contributes_both_languages_and_their_grammars():
    manifest = json.loads((PACKAGE / "package.json").read_text())
    languages = {lang["id"]: lang for lang in manifest["contributes"]["languages"]}
    assert set(languages["mcpl"]["extensions"]) == {".mcpl", ".mcl"}
    assert languages["hdl"]["extensions"] == [".hdl"]
    for lang in languages.values():
        config = json.loads((PACKAGE / lang["configuration"]).read_text())
        assert config["comments"] == {"lineComment": "//", "blockComment": ["/*", "*/"]}
        assert ["{", "}"] in config["brackets"]
    for g in manifest["contributes"]["grammars"]:
        grammar = json.loads((PACKAGE / g["path"]).read_text())
        assert grammar["scopeName"] == g["scopeName"]
        assert g["language"] in languages
    assert (PACKAGE / manifest["main"]).is_file()
    settings = manifest["contributes"]["configuration"]["properties"]
    assert {"mcl.feedback.enabled", "mcl.values", "mcl.hwdPaths"} <= set(settings)


def test_grammars_tokenise_the_examples():
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the TextMate grammars are not tested")
    modules = PACKAGE / "node_modules"
    if not (modules / "vscode-textmate").is_dir() or not (modules / "vscode-oniguruma").is_dir():
        pytest.skip("npm packages missing: run `npm ci --prefix editors/vscode` to test the "
                    "TextMate grammars")
    run = subprocess.run([node, str(PACKAGE / "test" / "tokenize.js")], capture_output=True,
                         text=True, timeout=120, cwd=PACKAGE)
    report = json.loads(run.stdout.strip().splitlines()[-1])
    assert report["failures"] == [], report["failures"][:10]
    assert report["files"] > 20 and run.returncode == 0
