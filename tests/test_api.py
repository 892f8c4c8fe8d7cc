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

from mcl.diagnostics import McplError
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


# ---- bad input (an audit of the API as a user meets it)

@pytest.mark.parametrize("name", ["parse", "check", "feedback", "translate", "compile"])
@pytest.mark.parametrize(("value", "expected"), [
    (None, "not NoneType"),
    (42, "not int"),
    (b"examples/matmul/gpu.mcpl", "not bytes; decode it first"),
])
def test_what_is_no_text_path_or_module_is_a_type_error_naming_the_function(name, value,
                                                                            expected):
    """None was read as the file 'None' (no such file: None), bytes as a text that
    raised from inside the regular-expression module."""
    import mcl
    args = {"translate": {"to": "hopper"}}.get(name, {})
    with pytest.raises(TypeError, match=f"^mcl.{name}: .*{expected}"):
        getattr(mcl, name)(value, **args)


def test_mcpl_text_where_a_path_is_expected_says_so():
    import mcl
    text = (EXAMPLES / "matmul" / "gpu.mcpl").read_text()
    d = mcl.check(text).diagnostics[0]
    assert d.code == "mcpl-file" and d.message.startswith(
        "expected the path of an MCPL file, not MCPL text (37 lines beginning '// matmul")
    assert "mcl.parse(text)" in d.hint
    for call in (lambda: mcl.translate(text, to="hopper"), lambda: mcl.compile(text)):
        with pytest.raises(McplError, match="not MCPL text"):
            call()


def test_a_file_name_given_to_parse_as_text_gets_a_hint():
    import mcl
    with pytest.raises(McplError) as e:
        mcl.parse("examples/matmul/gpu.mcpl")
    assert e.value.diagnostics[0].hint == ("a str is MCPL text; to parse the file "
                                           "examples/matmul/gpu.mcpl, pass "
                                           "pathlib.Path('examples/matmul/gpu.mcpl')")


def test_check_takes_a_checked_module_and_no_single_search_directory():
    import mcl
    checked = mcl.check(EXAMPLES / "matmul" / "gpu.mcpl")
    assert mcl.check(checked).module == checked.module
    # a str was a list of one-letter directories
    with pytest.raises(TypeError, match=r"search_path is a list of directories, not one str: "
                                        r"search_path=\['examples'\]"):
        mcl.check(EXAMPLES / "matmul" / "gpu.mcpl", "examples")


@pytest.mark.parametrize(("kwargs", "error", "expected"), [
    ({"values": 5}, TypeError, "mcl.feedback: values maps parameter names to numbers"),
    ({"only": 42}, TypeError, "mcl.feedback: only is a pass name or a list of them, not 42"),
    ({"values": {"n": 2.5}}, McplError, "values: 'n' is an int parameter of 'matmul': it "
                                        "takes a whole number, not 2.5"),
])
def test_feedback_arguments_of_the_wrong_kind(kwargs, error, expected):
    import mcl
    with pytest.raises(error) as e:
        mcl.feedback(EXAMPLES / "matmul" / "gpu.mcpl", **kwargs)
    assert expected in str(e.value)


def test_translate_to_something_that_is_no_level_name():
    import mcl
    for to in (None, 42):
        with pytest.raises(TypeError, match="mcl.translate: to is the name of a hardware "
                                            "description"):
            mcl.translate(EXAMPLES / "matmul" / "gpu.mcpl", to=to)


def test_translating_a_leaf_level_further_down_says_it_is_a_leaf():
    import mcl
    with pytest.raises(McplError) as e:
        mcl.translate(EXAMPLES / "matmul" / "fermi.mcpl", to="hopper")
    d = e.value.diagnostics[0]
    assert d.code == "translate-no-path"
    assert "'fermi' is a leaf of the hierarchy, with no level below" in d.message
    assert "mcl.compile" in d.hint


def test_load_hardware_of_a_file_or_no_name(tmp_path):
    import mcl
    (tmp_path / "broken.hdl").write_text("hardware_description broken;\n  garbage {")
    for given in (tmp_path / "broken.hdl", str(tmp_path / "broken.hdl")):
        with pytest.raises(McplError) as e:
            mcl.load_hardware(given)
        assert "not a file" in str(e.value)
        assert e.value.diagnostics[0].hint.endswith(
            f"load_hardware('broken', search_path=['{tmp_path}'])")
    # as the hint says: the file's syntax error
    with pytest.raises(McplError, match="syntax error"):
        mcl.load_hardware("broken", search_path=[tmp_path])
    for name in (None, b"hopper"):
        with pytest.raises(TypeError, match="mcl.load_hardware: name is the name of a "
                                            "hardware description"):
            mcl.load_hardware(name)
    with pytest.raises(TypeError, match="search_path is a list of directories"):
        mcl.load_hardware("hopper", search_path=str(tmp_path))


def test_a_description_beside_the_kernel_is_found_from_python(tmp_path, monkeypatch):
    """`import mycpu;` with mycpu.hdl beside the kernel, on no search path: mcl.check,
    mcl.feedback, mcl.translate and mcl.compile find it, as the commands do."""
    import mcl
    from tests.test_cli import VADD_MYCPU, _level_beside
    monkeypatch.delenv("MCL_HWD_PATH", raising=False)
    monkeypatch.chdir(tmp_path.parent)
    _level_beside(tmp_path)
    kernel = tmp_path / "vadd.mcpl"
    kernel.write_text(VADD_MYCPU)
    checked = mcl.check(str(kernel))
    assert not checked.has_errors, [d.message for d in checked.errors]
    assert not [d for d in mcl.feedback(str(kernel)) if d.is_error]
    lowered = mcl.translate(str(kernel), to="mycpu")
    assert lowered.functions[0].hardware == "mycpu"
    low = tmp_path / "low.mcpl"
    low.write_text(mcl.mcpl.print_module(lowered))
    assert not mcl.check(low).has_errors
    pytest.importorskip("pyopencl")
    try:
        k = mcl.compile(low)
    except McplError as e:
        if "device" in str(e).lower():
            pytest.skip(str(e))
        raise
    a, b = np.arange(1000, dtype=np.float32), np.ones(1000, np.float32)
    assert np.array_equal(k(a=a, b=b)["c"], a + b)


@pytest.mark.parametrize("arg", ["search_path", "files"])
@pytest.mark.parametrize("value", ["examples", 42])
def test_a_hardware_library_of_one_name_or_a_number_is_a_type_error(arg, value):
    """HardwareLibrary("dir") read the str as the one-letter folders d, i, r."""
    import mcl
    with pytest.raises(TypeError, match=f"HardwareLibrary: {arg} is a list of"):
        mcl.HardwareLibrary(**{arg: value})
    assert "gpu" in mcl.HardwareLibrary(**{arg: []})
