"""sympy takes an even quantity over 6 for an integer (mcl.sympy_integers corrects it):
C's integer division in a kernel must stay a floor wherever the quotient is not proven
whole."""

import sympy

import mcl.analyses  # noqa: F401 (installs the correction, as every analysis does)
from mcl.analyses.kernel_build import build_kernel
from mcl.mcpl import check
from tests.conftest import EXAMPLES


def test_an_even_quantity_over_an_even_number_with_an_odd_factor_is_no_integer():
    e = sympy.Symbol("e", even=True)
    assert (e / 6).is_integer is None
    assert isinstance(sympy.floor(e / 6), sympy.floor)
    assert sympy.Mod(e, 6) != 0
    assert (e * e / 12).is_integer is None
    # what is proven stays proven
    assert (e / 2).is_integer and (e * e / 4).is_integer and (3 * e / 6).is_integer


def test_matmul_cpu_v2s_rows_over_x_is_rounded_down():
    """``nrFull = ... ? rows / x : 0`` with rows = min(n - ti * 48, 48), x = 6: at n =
    2048 the last thread (ti = 42) has 32 rows, 5 whole blocks of 6 (32/6 before)."""
    checked = check(str(EXAMPLES / "matmul" / "cpu_v2.mcpl"))
    fn = checked.module.functions[0]
    kernel = build_kernel(fn, checked, {"n": 2048, "m": 2048, "p": 2048})
    loops = [lp for lp in kernel.loops if lp.var == "r" and lp.start == 0]
    assert loops
    for lp in loops:
        names = {s.name: s for s in lp.bound.free_symbols}
        assert lp.bound.subs({names["ti"]: 42, names["tj"]: 0}) == 5, lp.bound
        # 42 threads of 8 whole blocks and the last of 5, over the 43 threads
        assert lp.mean == sympy.Rational(42 * 8 + 5, 43), lp.mean
