"""MCPL expressions as sympy expressions, for sizes: array element counts, view
checks and the symbolic sizes that analyses report.

Names become integer symbols (positive: they are sizes); a resolver can
substitute a name by its defining expression (a ``const`` local). ``/`` is
exact division: array shapes in MCPL programs are written so that sizes
divide, and analyses reason about them the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

import sympy

import mcl.sympy_integers  # noqa: F401 (sympy's floor of an even size by 6, corrected)
from mcl.mcpl import ast

Resolver = Callable[[ast.Name], "ast.Expr | None"]


@lru_cache(maxsize=4096)
def symbol(name: str) -> sympy.Symbol:
    """The sympy symbol of an MCPL name (a positive integer)."""
    return sympy.Symbol(name, integer=True, positive=True)


def to_sympy(e: ast.Expr, resolve: Resolver | None = None, _depth: int = 0) -> sympy.Expr | None:
    """``e`` as a sympy expression, or None if it is not arithmetic on integers/names.

    ``resolve(name)`` may return the expression that defines a name (it is then
    converted instead of the name)."""
    if _depth > 50:  # a definition cycle; the checks report undeclared names elsewhere
        return None
    if isinstance(e, ast.Literal):
        if e.kind == "bool":
            return None
        return sympy.Integer(e.value) if e.kind == "int" else sympy.nsimplify(e.value)
    if isinstance(e, ast.Name):
        if resolve is not None:
            definition = resolve(e)
            if definition is not None:
                converted = to_sympy(definition, resolve, _depth + 1)
                if converted is not None:
                    return converted
        return symbol(e.id)
    if isinstance(e, ast.HwdRef):
        return sympy.Symbol(".".join(e.path), integer=True, positive=True)
    if isinstance(e, ast.Unary) and e.op in ("-", "+"):
        inner = to_sympy(e.operand, resolve, _depth + 1)
        return None if inner is None else (-inner if e.op == "-" else inner)
    if isinstance(e, ast.Cast):
        return to_sympy(e.operand, resolve, _depth + 1)
    if isinstance(e, ast.Binary) and e.op in ("+", "-", "*", "/", "%"):
        a = to_sympy(e.left, resolve, _depth + 1)
        b = to_sympy(e.right, resolve, _depth + 1)
        if a is None or b is None:
            return None
        if e.op == "+":
            return a + b
        if e.op == "-":
            return a - b
        if e.op == "*":
            return a * b
        if e.op == "/":
            return a / b if b != 0 else None
        return sympy.Mod(a, b) if b != 0 else None
    if isinstance(e, ast.Call) and e.func in ("min", "max") and len(e.args) == 2:
        args = [to_sympy(a, resolve, _depth + 1) for a in e.args]
        if any(a is None for a in args):
            return None
        return (sympy.Min if e.func == "min" else sympy.Max)(*args)
    return None


def element_count(t: ast.Type, resolve: Resolver | None = None) -> sympy.Expr | None:
    """The number of elements of an array type (1 for a scalar), or None if a size is
    not arithmetic."""
    total: sympy.Expr = sympy.Integer(1)
    for size in t.sizes:
        s = to_sympy(size, resolve)
        if s is None:
            return None
        total = total * s
    return total
