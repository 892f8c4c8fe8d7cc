"""The public Python API of ``mcl``: each name stays what the README says it is,
whatever was imported before (a subpackage such as ``mcl.translate`` shares its name
with an API function)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re

import numpy as np
import pytest

from tests.conftest import EXAMPLES, ROOT


def import_every_module():
    import mcl
    names = [m.name for m in pkgutil.walk_packages(mcl.__path__, "mcl.")]
    assert {"mcl.hdl", "mcl.mcpl", "mcl.analyses", "mcl.translate", "mcl.opencl",
            "mcl.lift", "mcl.lsp"} <= set(names)
    for name in names:
        importlib.import_module(name)


def test_each_public_name_is_its_api_object_after_every_module_was_imported():
    import mcl
    import_every_module()
    assert set(mcl.__all__) == set(mcl._API)
    for name in mcl.__all__:
        home, attr = mcl._API[name].split(":")
        expected = getattr(importlib.import_module(home), attr)
        # twice: the first access may import the home module as a side effect
        assert getattr(mcl, name) is expected, name
        assert getattr(mcl, name) is expected, name
        assert not inspect.ismodule(getattr(mcl, name))
    from mcl import translate
    assert callable(translate) and not inspect.ismodule(translate)


def test_subpackages_stay_importable_by_their_names():
    import_every_module()
    import mcl.translate
    from mcl.translate import translate_function
    assert callable(translate_function)
    assert inspect.isfunction(mcl.translate)
    assert importlib.import_module("mcl.translate").translate is importlib.import_module(
        "mcl.translate.api").translate


def test_each_api_function_works_after_every_module_was_imported():
    import mcl
    import_every_module()
    hopper = mcl.load_hardware("hopper")
    assert hopper.name == "hopper"
    assert isinstance(mcl.HardwareLibrary(), mcl.HardwareLibrary)
    assert mcl.parse((EXAMPLES / "matmul" / "gpu.mcpl").read_text()).functions
    checked = mcl.check(EXAMPLES / "matmul" / "gpu.mcpl")
    assert list(mcl.feedback(checked, values={"n": 4096}))
    lower = mcl.translate(checked.module, to="hopper")
    assert lower is not checked.module and lower.functions
    k = mcl.compile(EXAMPLES / "vector_add" / "perfect.mcpl", target="hopper")
    a, b = np.arange(8, dtype=np.float32), np.ones(8, dtype=np.float32)
    out = k(n=8, a=a, b=b)
    assert np.allclose(next(iter(out.values())), a + b)


def test_the_readme_python_section_runs_after_every_module_was_imported(monkeypatch, capsys):
    import_every_module()
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"From Python:\s*```python\n(.*?)```", readme, re.S)
    assert block, "README has no Python section"
    monkeypatch.chdir(ROOT)
    scope: dict = {}
    exec(compile(block.group(1), "README.md", "exec"), scope)  # noqa: S102
    a, b, c = scope["a"], scope["b"], scope["c"]
    assert np.allclose(c, a @ b, rtol=1e-3, atol=1e-3)
    assert capsys.readouterr().out


@pytest.mark.parametrize("name", ["translate", "compile", "check"])
def test_from_mcl_import_gives_the_function(name):
    import_every_module()
    scope: dict = {}
    exec(f"from mcl import {name} as f", scope)  # noqa: S102
    assert inspect.isfunction(scope["f"])


def test_feedback_on_a_module_with_errors_raises_them():
    import mcl
    from mcl.diagnostics import McplError
    with pytest.raises(McplError, match="no such file: nosuch.mcpl"):
        mcl.feedback("nosuch.mcpl")
    with pytest.raises(McplError, match="no such file"):
        mcl.feedback(mcl.check("nosuch.mcpl"))


def test_feedback_with_an_unknown_pass_names_the_passes():
    import mcl
    from mcl.diagnostics import McplError
    with pytest.raises(McplError, match="unknown pass 'nosuch'") as e:
        mcl.feedback(EXAMPLES / "matmul" / "gpu.mcpl", only=["nosuch"])
    assert "roofline" in e.value.diagnostics[0].hint
    only_roofline = mcl.feedback(EXAMPLES / "matmul" / "gpu.mcpl", only="roofline")
    assert [d.code for d in only_roofline] == ["feedback-roofline"]


def test_translate_takes_a_checked_module_as_feedback_does():
    import mcl
    checked = mcl.check(EXAMPLES / "matmul" / "gpu.mcpl")
    lower = mcl.translate(checked, to="hopper")
    assert lower.function("matmul").hardware == "hopper"


def test_parse_of_a_path_parses_the_file():
    import mcl
    path = EXAMPLES / "matmul" / "gpu.mcpl"
    module = mcl.parse(path)
    assert module.name == "matmul_gpu" and module.functions[0].span.file == str(path)
