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


# ---- a bool parameter (it was: the OpenCL compiler's 'bool cannot be used as the type
# of a kernel parameter' for every call, and True refused as "takes an integer")

FLAG = """module flag;
import perfect;
perfect void flip(const int n, const bool neg, float[n] x, float[n] out) {
  foreach (int i in n threads) {
    if (neg) { out[i] = -x[i]; } else { out[i] = x[i]; }
  }
}
"""


@pytest.fixture
def flip(tmp_path, opencl_device):
    f = tmp_path / "perfect.mcpl"
    f.write_text(FLAG)
    return mcl.compile(f, "hopper")


@pytest.mark.parametrize("neg", [True, False, np.True_, 1, 0])
def test_a_bool_parameter_takes_true_and_false(flip, neg):
    x = np.arange(4, dtype=np.float32)
    assert np.array_equal(flip(n=4, neg=neg, x=x)["out"], -x if neg else x)


@pytest.mark.parametrize("neg", [2, -1, 0.5, "yes", None])
def test_a_bool_parameter_refuses_what_is_no_truth_value(flip, neg):
    d = _error(flip, n=4, neg=neg, x=np.zeros(4, np.float32))
    assert d.code == "opencl-bad-scalar"
    assert f"'neg' is a bool parameter of 'flip': it takes True or False (or 1 or 0), " \
        f"not {neg!r}" == d.message


def test_mcl_run_sets_a_bool_parameter(tmp_path, run_cli, opencl_device):
    f = tmp_path / "perfect.mcpl"
    f.write_text(FLAG)
    code, out, err = run_cli("run", "--target", "hopper", f, "--set", "n=8", "--set",
                             "neg=1", "--repeat", "1")
    assert code == 0, err
    assert "neg=1" in out
    code, _, err = run_cli("run", "--target", "hopper", f, "--set", "n=8", "--set",
                           "neg=2", "--repeat", "1")
    assert code == 1 and "it takes True or False (or 1 or 0), not 2" in err


# ---- a bool array (it was: numpy's bool arrays refused as "takes uint8", and mcl run's
# random masks bytes of 0 to 15, which a kernel's bool is not)

MASK = """module mask;
import perfect;
perfect void keep(const int n, bool[n] m, float[n] x, float[n] out) {
  foreach (int i in n threads) {
    if (m[i] == true) { out[i] = x[i]; } else { out[i] = 0.0; }
  }
}
"""


@pytest.fixture
def keep(tmp_path, opencl_device):
    f = tmp_path / "perfect.mcpl"
    f.write_text(MASK)
    return mcl.compile(f, "hopper")


def test_a_bool_array_takes_numpy_bools(keep):
    import pyopencl.array as cla
    m, x = np.array([True, False, True, True]), np.arange(1, 5, dtype=np.float32)
    assert np.array_equal(keep(n=4, m=m, x=x)["out"], np.where(m, x, 0))
    assert np.array_equal(keep(n=4, m=m[::-1], x=x)["out"], np.where(m[::-1], x, 0))
    assert np.array_equal(keep(n=4, m=m.astype(np.uint8), x=x)["out"], np.where(m, x, 0))
    assert np.array_equal(keep(n=4, m=cla.to_device(keep.queue, m), x=x)["out"],
                          np.where(m, x, 0))
    assert np.array_equal(keep(n=4, m=m.tolist(), x=x)["out"], np.where(m, x, 0))


def test_random_bools_of_mcl_run_are_0_or_1(keep):
    from mcl.opencl.runtime import random_arguments
    data = random_arguments(keep.plan, {"n": 1000}, np.random.default_rng(0))
    assert set(np.unique(data["m"])) == {0, 1} and data["m"].dtype == np.uint8


# ---- what a shape or dtype refusal says (it was: "takes (8, 4) with these sizes", with
# no word of the sizes, nor that p came from the shape of another array; a float where
# an array is declared was "has dtype float64 (a float, ...)"; a scalar in place of the
# array that gives the sizes was "needs the sizes fh, fw")

def test_a_wrong_shape_names_the_declaration_and_where_each_size_came_from(matmul):
    d = _error(matmul, a=np.zeros((8, 8), np.float32), b=np.zeros((4, 4), np.float32))
    assert d.code == "opencl-bad-shape"
    assert d.message == ("'b' has shape (4, 4), but 'matmul' takes (8, 4) for its parameter "
                         "`float[p, m] b` at p=8 (from the shape of 'a'), m=4 (from the "
                         "shape of 'b')")
    d = _error(matmul, n=4, m=3, p=2, a=np.zeros((2, 4), np.float32),
               b=np.zeros((2, 3), np.float32))
    assert d.message.endswith("takes (4, 2) for its parameter `float[n, p] a` at n=4 "
                              "(given), p=2 (given)")


@pytest.mark.parametrize("value", [3.0, np.float32(3), np.array(3, np.float32)])
def test_a_single_value_for_an_array_is_told_it_takes_an_array(matmul, value):
    d = _error(matmul, n=4, m=3, p=2, a=value, b=np.zeros((2, 3), np.float32))
    assert d.code == "opencl-bad-shape"
    assert d.message == (f"'a' is a single value ({value!r}), but 'matmul' takes an array "
                         "of shape (4, 2) for its parameter `float[n, p] a`")


def test_a_wrong_dtype_names_the_declaration(matmul):
    d = _error(matmul, a=np.zeros((4, 2)), b=np.zeros((2, 3), np.float32))
    assert d.message == ("'a' has dtype float64, but 'matmul' takes float32 for its "
                         "parameter `float[n, p] a`")
    d = _error(matmul, a=[[1, 2]], b=np.zeros((2, 3), np.float32))
    assert "(a list, as numpy reads it)" in d.message


def test_a_missing_size_names_the_array_of_other_dimensions_that_would_give_it(matmul):
    d = _error(matmul, m=3, a=np.zeros(8, np.float32), b=np.zeros((2, 3), np.float32))
    assert d.code == "opencl-missing-size"
    assert d.message == ("'matmul' needs the size n; 'a' would give n, but has shape (8,), "
                         "not the 2 dimensions of `float[n, p] a`")


# ---- a scalar out of its type's range (it was: "pass a smaller n" for a value below
# the range too, and a 10**400 printed whole, 401 digits in one line)

def test_a_scalar_below_its_range_is_told_to_be_larger(matmul):
    d = _error(matmul, n=-2**40, m=3, p=2)
    assert d.code == "opencl-scalar-range"
    assert d.hint.startswith("pass a larger n, or declare it `long`")
    assert _error(matmul, n=2**40, m=3, p=2).hint.startswith("pass a smaller n")


def test_a_huge_whole_number_is_told_by_its_digits(matmul):
    d = _error(matmul, n=10**400, m=3, p=2)
    assert d.message == ("'n' is an int parameter of 'matmul': a whole number of 401 digits "
                         "does not fit it (-2147483648 .. 2147483647)")


def test_compile_at_a_level_without_a_target_says_how_to_name_one():
    """vector_add nvidia_v1 is written for 'nvidia', which has no target file: the error
    names the levels that have one and how to give it, from the CLI and from Python."""
    with pytest.raises(McplError) as e:
        mcl.compile(EXAMPLES / "vector_add" / "nvidia_v1.mcpl")
    [d] = e.value.diagnostics
    assert d.code == "opencl-no-target" and "'nvidia' has no code-generation target" in d.message
    assert "hopper" in d.hint and "--target LEVEL" in d.hint
    assert "mcl.compile(path, target=LEVEL)" in d.hint
    k = mcl.compile(EXAMPLES / "vector_add" / "nvidia_v1.mcpl", target="hopper")
    assert k is not None
