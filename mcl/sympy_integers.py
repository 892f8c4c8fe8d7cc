"""sympy's judgement of whether a product is an integer, corrected where it is wrong.

sympy (1.14 and earlier) takes a product of an even factor and a rational whose
denominator is even for an integer when the powers of 2 cancel, whatever odd factor the
denominator has besides: ``(e / 6).is_integer`` is True for an even ``e``, so
``floor(e / 6)`` evaluates to ``e / 6`` and ``Mod(e, 6)`` to 0. An MCPL kernel meets it
in C's integer division of a size that sympy knows is even: matmul cpu_v2's
``rows / x`` with ``rows = min(n - ti * 48, 48)`` and ``x = 6`` became the fraction
``Min(48, 2048 - 48*ti)/6`` (the last thread's 32/6, where the program has 5), which the
analyses then evaluated as such.

Importing this module (mcl.mcpl.symbolic, mcl.analyses, mcl.lift and mcl.opencl do)
wraps ``Mul._eval_is_integer``: where sympy says True for a product with a rational
coefficient p/q, the answer stands only if q divides p times the powers of 2 that its even
factors are known to give; otherwise it is unknown (None), so such a quotient stays a
``floor``. The correction never turns an unknown or a False into True: at worst it makes
a true "integer" unknown.
"""

from __future__ import annotations

from sympy import Integer, Mul, Pow

_original = Mul._eval_is_integer


def _known_factor(factor) -> int:
    """The power of 2 that an even factor (or an even base to a positive integer power)
    is known to contribute; 1 for any other."""
    base, exp = (factor.base, factor.exp) if isinstance(factor, Pow) else (factor, Integer(1))
    if base.is_even and exp.is_Integer and exp > 0:
        return 2 ** int(exp)
    return 1


def _eval_is_integer(self):
    got = _original(self)
    if got is not True:
        return got
    coeff, rest = self.as_coeff_Mul()
    if not coeff.is_Rational or coeff.q == 1:
        return got
    known = abs(int(coeff.p))
    for factor in Mul.make_args(rest):
        known *= _known_factor(factor)
    return got if known % int(coeff.q) == 0 else None


if not getattr(Mul._eval_is_integer, "_mcl_corrected", False):
    _eval_is_integer._mcl_corrected = True
    Mul._eval_is_integer = _eval_is_integer
    # sympy's assumptions call the handlers their classes recorded when they were made
    for cls in (Mul, *Mul.__subclasses__()):
        if cls.__dict__.get("_prop_handler", {}).get("integer") is _original:
            cls._prop_handler["integer"] = _eval_is_integer
