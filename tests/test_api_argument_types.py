"""The public API given an argument of the wrong kind says which argument and what it
takes (a TypeError from the function called), never an AttributeError from deep inside
or silence: a library that is no HardwareLibrary, a search path holding numbers,
resources that are no Resources, a level name that is no str."""

from __future__ import annotations

import pytest

from tests.conftest import EXAMPLES

MATMUL = EXAMPLES / "matmul" / "gpu.mcpl"


def _calls():
    import mcl
    return {
        "feedback-resources": lambda v: mcl.feedback(MATMUL, resources=v),
        "feedback-library": lambda v: mcl.feedback(MATMUL, library=v),
        "translate-library": lambda v: mcl.translate(MATMUL, to="nvidia", library=v),
        "check-search_path": lambda v: mcl.check(MATMUL, v),
        "translate-search_path": lambda v: mcl.translate(MATMUL, to="nvidia", search_path=v),
        "load_hardware-search_path": lambda v: mcl.load_hardware("gpu", v),
        "HardwareLibrary-search_path": lambda v: mcl.HardwareLibrary(v),
        "HardwareLibrary-texts": lambda v: mcl.HardwareLibrary(texts=v),
        "HardwareLibrary.get-name": lambda v: mcl.HardwareLibrary().get(v),
        "HardwareLibrary.ancestors-name": lambda v: mcl.HardwareLibrary().ancestors(v),
    }


@pytest.mark.parametrize(("call", "value", "expected"), [
    ("feedback-resources", 42, "mcl.feedback: resources maps function names to "
                               "mcl.analyses.Resources (a dict), not int 42"),
    ("feedback-resources", {"matmul": 32}, "mcl.feedback: resources maps function names"),
    ("feedback-library", 42, "mcl.feedback: library is a list of directories or an "
                             "mcl.HardwareLibrary, not int"),
    ("feedback-library", "examples", "mcl.feedback: library is a list of directories or an "
                                     "mcl.HardwareLibrary, not one str"),
    ("translate-library", 42, "mcl.translate: library is an mcl.HardwareLibrary or None, "
                              "not int 42"),
    ("translate-library", ["examples"], "directories of descriptions go in search_path"),
    ("check-search_path", [1, 2], "mcl.check: search_path holds int 1: each of its entries "
                                  "is a path"),
    ("check-search_path", {"a": 1}, "mcl.check: search_path is a list of directories, "
                                    "not dict"),
    ("translate-search_path", [None], "mcl.translate: search_path holds NoneType None"),
    ("load_hardware-search_path", [3.5], "mcl.load_hardware: search_path holds float 3.5"),
    ("HardwareLibrary-search_path", [1], "HardwareLibrary: search_path holds int 1"),
    ("HardwareLibrary-texts", 42, "HardwareLibrary: texts maps file paths to their text"),
    ("HardwareLibrary.get-name", 42, "HardwareLibrary.get: name is the name of a hardware "
                                     "description (a str), not int 42"),
    ("HardwareLibrary.get-name", ["gpu"], "HardwareLibrary.get: name is the name of a "
                                          "hardware description (a str), not list"),
    ("HardwareLibrary.ancestors-name", None, "HardwareLibrary: name is the name of a "
                                             "hardware description (a str), not NoneType"),
])
def test_an_argument_of_the_wrong_kind_is_named(call, value, expected):
    with pytest.raises(TypeError) as e:
        _calls()[call](value)
    assert expected in str(e.value)


def test_feedback_checks_with_the_descriptions_of_a_library_it_is_given(tmp_path):
    import mcl
    from mcl.hdl.library import BUNDLED

    (tmp_path / "mygpu.hdl").write_text((BUNDLED / "nvidia.hdl").read_text().replace(
        "hardware_description nvidia;", "hardware_description mygpu;").replace(
        "device nvidia {", "device mygpu {"))
    kernel = tmp_path / "elsewhere" / "k.mcpl"
    kernel.parent.mkdir()
    kernel.write_text("module k;\nimport mygpu;\n\nmygpu void k(const int n = 64, "
                      "global float[n] a) {\n  foreach (int b in 1 blocks) {\n"
                      "    foreach (int t in n threads) {\n      a[t] = 1.0;\n    }\n  }\n}\n")
    # before, a HardwareLibrary passed as library was ignored: mygpu was not found
    mcl.feedback(kernel, library=mcl.HardwareLibrary([tmp_path]))
    mcl.feedback(kernel, library=[tmp_path])
    with pytest.raises(mcl.McplError, match="mygpu"):
        mcl.feedback(kernel)
