"""The enumeration of index values over loops (mcl.analyses.loop_points)."""

import time

import sympy

from mcl.analyses.kernel import Loop
from mcl.analyses.loop_points import MOST, enumerated


def _loop(var: str, trips: int) -> Loop:
    return Loop(node=None, kind="foreach", var=var, start=sympy.Integer(0),
                step=sympy.Integer(1), trips=sympy.Integer(trips))


def test_few_points_are_enumerated():
    i = sympy.Symbol("i", integer=True)
    (values,), at = enumerated((2 * i,), (_loop("i", 4),))
    assert list(values) == [0, 2, 4, 6]
    assert list(at["i"]) == [0, 1, 2, 3]


def test_a_loop_of_billions_is_refused_before_its_points_are_made():
    # n = 99999999999: the points were materialised (gigabytes, minutes of system
    # time) before their count was compared with MOST
    i = sympy.Symbol("i", integer=True)
    begin = time.monotonic()
    assert enumerated((i,), (_loop("i", 99_999_999_999),)) is None
    assert enumerated((i,), (_loop("i", MOST + 1),)) is None
    assert time.monotonic() - begin < 5
