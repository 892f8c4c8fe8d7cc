"""A compiled kernel called with bad arguments, as a new user would call it (an audit of
``k(...)`` and ``mcl run --set``): each mistake gets a message that names the argument
and what the kernel's parameter takes, never a traceback or a wrong answer."""

from __future__ import annotations

import numpy as np
import pytest

import mcl
from mcl.diagnostics import McplError
from tests.opencl.conftest import EXAMPLES


@pytest.fixture(scope="module")
def matmul():
    from tests.opencl.conftest import _device_problem
    problem = _device_problem()
    if problem:
        pytest.skip(problem)
    return mcl.compile(EXAMPLES / "matmul" / "perfect.mcpl", "hopper")


def _error(kernel, **kwargs):
    with pytest.raises(McplError) as e:
        kernel(**kwargs)
    return e.value.diagnostics[0]


# ---- a mistyped keyword (it was: "has no parameter 'pp'" and the list, no suggestion)

@pytest.mark.parametrize(("typo", "meant"), [("pp", "p"), ("bb", "b"), ("N", "n")])
def test_a_mistyped_keyword_is_told_the_parameter_it_likely_means(matmul, typo, meant):
    a, b = np.zeros((4, 2), np.float32), np.zeros((2, 3), np.float32)
    given = {"n": 4, "m": 3, "p": 2, "a": a, "b": b}
    given[typo] = given.pop(meant)
    d = _error(matmul, **given)
    assert d.code == "opencl-unknown-argument"
    assert f"no parameter '{typo}'" in d.message
    assert d.hint.startswith(f"did you mean '{meant}'?")


def test_a_keyword_like_no_parameter_gets_no_suggestion(matmul):
    d = _error(matmul, n=4, m=3, p=2, a=np.zeros((4, 2), np.float32),
               b=np.zeros((2, 3), np.float32), zz=1)
    assert "did you mean" not in d.hint and "its parameters: n, m, p, c, a, b" in d.hint


def test_set_of_a_mistyped_size_is_told_the_size_it_likely_means(run_cli):
    code, _, err = run_cli("run", "--target", "hopper", EXAMPLES / "vector_add" /
                           "perfect.mcpl", "--set", "N=100")
    assert code == 2
    assert "--set N: 'vector_add' has no size parameter 'N' (did you mean 'n'?" in err
    assert "Traceback" not in err


def test_set_of_an_array_says_that_mcl_run_fills_it(run_cli):
    code, _, err = run_cli("run", "--target", "hopper", EXAMPLES / "vector_add" /
                           "perfect.mcpl", "--set", "a=3")
    assert code == 2
    assert "'a' is an array parameter of 'vector_add', which mcl run fills with random " \
        "data" in err
