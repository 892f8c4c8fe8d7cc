"""A description's performance_feedback("name") names a function the compiler knows:
an unknown name is an error at the string, with the known names and the closest one."""

from __future__ import annotations

from mcl.hdl import language as L
from mcl.hdl.build import feedback_function_names
from tests.hdl.test_commands import _position


def _nvidia(directory, old: str = "", new: str = ""):
    """The library's nvidia.hdl in ``directory`` with ``old`` replaced by ``new``."""
    from mcl.hdl.library import BUNDLED

    text = (BUNDLED / "nvidia.hdl").read_text()
    assert old in text
    path = directory / "nvidia.hdl"
    path.write_text(text.replace(old, new, 1))
    return path


def test_an_unknown_feedback_function_is_an_error_at_its_name(run_cli, tmp_path):
    path = _nvidia(tmp_path, 'performance_feedback("shMem")', 'performance_feedback("nosuch")')
    code, out, err = run_cli("hwd", "check", path)
    assert code == 1 and "Traceback" not in out + err
    where = _position(path, '"nosuch"')
    assert f"{path}:{where}: error: no feedback function is called 'nosuch' " \
           "[hdl-unknown-feedback]" in out
    assert "known: shMem, coalescing, bankConflicts" in out


def test_a_misspelt_feedback_function_gets_the_closest_name(check):
    text = _nvidia_text().replace('performance_feedback("shMem")',
                                  'performance_feedback("shmem")', 1)
    model, diags = check(text, "nvidia")
    [d] = [d for d in diags if d.code == "hdl-unknown-feedback"]
    assert d.is_error and "did you mean 'shMem'?" in d.hint


def test_the_known_feedback_functions_are_accepted(check):
    model, diags = check(_nvidia_text(), "nvidia")
    assert model is not None and not [d for d in diags if d.is_error]
    assert model.feedback_functions() == ["shMem"]


def test_the_language_lists_the_functions_the_analyses_provide():
    import mcl.analyses  # noqa: F401 (its modules register the functions)
    from mcl.analyses import functions

    bundled = {n for n, fn in functions._REGISTRY.items() if fn.__module__.startswith("mcl.")}
    assert set(L.FEEDBACK_FUNCTIONS) == bundled
    assert set(functions.registered()) <= set(feedback_function_names())


def test_a_function_registered_by_a_program_is_known(check):
    from mcl.analyses import functions

    @functions.feedback_function("myFeedback")
    def mine(view):
        return []

    try:
        text = _nvidia_text().replace('performance_feedback("shMem")',
                                      'performance_feedback("myFeedback")', 1)
        model, diags = check(text, "nvidia")
        assert not [d for d in diags if d.is_error]
    finally:
        functions._REGISTRY.pop("myFeedback", None)


def _nvidia_text() -> str:
    from mcl.hdl.library import BUNDLED

    return (BUNDLED / "nvidia.hdl").read_text()

