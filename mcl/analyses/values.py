"""Showing symbolic results with their numbers: ``2*m*n*p = 17179869184``."""

from __future__ import annotations

import sympy


def number_text(v: sympy.Expr | float | int) -> str:
    """A number for a message: integers in full, others with 3 significant digits."""
    v = sympy.sympify(v)
    if not v.is_number:
        return str(v)
    if v.is_finite is not True:   # nan, zoo: a count divided by an index that can be 0
        return "undefined"
    if v.is_Integer:
        return str(int(v))
    f = float(v)
    if f.is_integer() and abs(f) < 1e15:
        return str(int(f))
    return f"{f:.3g}"


def show(symbolic: sympy.Expr, value: sympy.Expr | None = None) -> str:
    """``symbolic`` as written by sympy, with ``= value`` where it has free symbols
    and the value is a number."""
    symbolic = sympy.sympify(symbolic)
    if not symbolic.free_symbols:
        return number_text(symbolic)
    text = str(symbolic)
    if value is not None and sympy.sympify(value).is_number:
        return f"{text} = {number_text(value)}"
    return text


def bytes_text(n: float) -> str:
    """Bytes with a binary unit: 32768 -> '32 kB'."""
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("kB", 1 << 10)):
        if n >= size:
            q = n / size
            return f"{q:g} {unit}" if q == int(q) else f"{q:.1f} {unit}"
    return f"{int(n)} B"


def simplified(e: sympy.Expr | float | int) -> sympy.Expr:
    """The shortest of ``e``, its cancelled and its factored form: what
    ``sympy.simplify`` gives for the quotients of size polynomials the analyses
    build, at a fraction of its cost (``sympy.simplify`` also imports
    ``sympy.physics.units`` on first use, a tenth of a second or more of the start-up
    of ``mcl feedback``)."""
    e = sympy.sympify(e)
    if not e.free_symbols:
        return e
    candidates = [e]
    try:
        c = sympy.cancel(e)
        candidates += [c, sympy.factor(c)]
    except (sympy.PolynomialError, TypeError, ValueError):
        pass
    return min(candidates, key=lambda x: (sympy.count_ops(x), len(str(x))))


def time_text(s: float) -> str:
    """Seconds as a person reads them: 1.2 s, 3.45 ms, 12.3 µs, 0.74 ns."""
    if s >= 1:
        return f"{s:.3g} s"
    if s >= 1e-3:
        return f"{s * 1e3:.3g} ms"
    if s >= 1e-7 or s == 0:
        return f"{s * 1e6:.3g} µs"
    return f"{s * 1e9:.3g} ns"
