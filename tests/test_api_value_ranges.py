"""mcl.feedback's values are held to their parameters' types as ``--set`` holds them:
a number an int or float parameter cannot hold is an McplError naming the parameter,
its type and its range, at the parameter."""

from __future__ import annotations

import pytest

from mcl.diagnostics import McplError
from tests.conftest import EXAMPLES

MATMUL = EXAMPLES / "matmul" / "gpu.mcpl"
BLACK_SCHOLES = EXAMPLES / "black_scholes" / "perfect.mcpl"


@pytest.mark.parametrize(("path", "values", "expected"), [
    (MATMUL, {"n": 99999999999},
     "values: 'n' is an int parameter of 'matmul', whose values are -2147483648 .. "
     "2147483647: 99999999999 does not fit it"),
    (MATMUL, {"n": 1e40}, "'n' is an int parameter of 'matmul', whose values are"),
    (BLACK_SCHOLES, {"riskFree": 1e39},
     "values: 'riskFree' is a float parameter of 'black_scholes', whose values are "
     "about -3.4e38 .. 3.4e38: 1e+39 does not fit it"),
])
def test_a_value_beyond_its_parameters_type_is_an_error(path, values, expected):
    import mcl
    with pytest.raises(McplError) as e:
        mcl.feedback(path, values=values)
    [d] = e.value.diagnostics
    assert d.code == "feedback-bad-value" and expected in d.message
    assert d.span is not None and d.span.file.endswith(path.name)
    assert d.hint == f"give {next(iter(values))} a value in that range"


def test_values_at_the_ends_of_the_range_are_taken():
    import mcl
    mcl.feedback(MATMUL, values={"n": 2**31 - 1})
    mcl.feedback(BLACK_SCHOLES, values={"riskFree": -3.0e38})


def test_the_cli_says_the_same_as_before(run_cli):
    code, out, err = run_cli("feedback", MATMUL, "--set", "n=99999999999")
    assert code == 2 and "Traceback" not in out + err
    assert "'n' is an int parameter of 'matmul', whose values are -2147483648 .. " \
           "2147483647" in err
