"""Constant folding of MCPL expressions as C computes them (integer division and
remainder truncate toward zero; a division by zero or an out-of-range shift has no
value): the checks' constant values and division-by-zero errors, and translation's
compile-time sizes (mcl.translate.consts). mcl.mcpl.symbolic keeps sizes symbolic
instead."""

from __future__ import annotations

from collections.abc import Callable

from mcl.mcpl import ast

_INTEGER = ("int", "long", "byte", "bool")


def fold_constant(e: ast.Expr, resolve: Callable[[ast.Name], ast.Expr | None],
                  properties: Callable[[tuple[str, ...]], int | None] | None = None,
                  _depth: int = 0) -> int | float | None:
    """The value of an expression made of literals and constants, computed as C
    does (integer division truncates), or None if it is not one or the value is
    undefined. ``resolve(name)`` gives the expression a constant name stands for;
    ``properties(path)`` the value of a hardware description's property
    (``hopper.warp_size``), where those count as constants."""
    if _depth > 50:    # a definition cycle; reported by the checks of constants
        return None
    d = _depth + 1

    def fold(x: ast.Expr) -> int | float | None:
        return fold_constant(x, resolve, properties, d)

    if isinstance(e, ast.Literal):
        return int(e.value) if e.kind == "bool" else e.value
    if isinstance(e, ast.Name):
        definition = resolve(e)
        return None if definition is None else fold(definition)
    if isinstance(e, ast.HwdRef):
        return properties(e.path) if properties is not None else None
    if isinstance(e, ast.Cast):
        v = fold(e.operand)
        if v is None or e.type.dims:
            return None
        if e.type.name not in _INTEGER:
            return float(v)
        if v != v or v in (float("inf"), float("-inf")):
            return None                 # no integer (C leaves the conversion undefined)
        return wrapped(int(v), e.type.name)
    if isinstance(e, ast.Unary):
        v = fold(e.operand)
        if v is None:
            return None
        if e.op == "~":
            return ~v if isinstance(v, int) else None
        return -v if e.op == "-" else int(not v) if e.op == "!" else v
    if isinstance(e, ast.Ternary):
        c = fold(e.cond)
        return None if c is None else fold(e.then if c else e.orelse)
    if isinstance(e, ast.Binary):
        a, b = fold(e.left), fold(e.right)
        if a is None or b is None:
            return None
        return _fold_binary(e.op, a, b)
    return None


#: the integer types as C converts to them: (bits, signed)
_WIDTHS = {"int": (32, True), "long": (64, True), "byte": (8, False)}


def integer_range(type_name: str) -> tuple[int, int] | None:
    """The least and greatest value of an integer type (int, long, byte), else None."""
    if type_name not in _WIDTHS:
        return None
    bits, signed = _WIDTHS[type_name]
    return (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)


def wrapped(v: int, type_name: str) -> int:
    """``v`` converted to an integer type as C does: modulo its range (a bool is 0 or
    1): ``(byte) 300`` is 44, ``(int) 3000000000L`` -1294967296."""
    if type_name == "bool":
        return int(v != 0)
    lo, hi = integer_range(type_name)
    return (v - lo) % (hi - lo + 1) + lo


def _fold_binary(op: str, a: int | float, b: int | float) -> int | float | None:
    integers = isinstance(a, int) and isinstance(b, int)
    if op in ("/", "%"):
        if b == 0:
            return None
        if not integers:
            return a / b if op == "/" else None
        q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)   # C truncates toward 0
        return q if op == "/" else a - q * b
    if op in ("<<", ">>", "&", "|", "^") and not integers:
        return None
    if op in ("<<", ">>") and not 0 <= b < 64:
        return None
    ops = {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b,
           "<<": lambda: a << b, ">>": lambda: a >> b, "&": lambda: a & b,
           "|": lambda: a | b, "^": lambda: a ^ b, "&&": lambda: int(bool(a and b)),
           "||": lambda: int(bool(a or b)), "==": lambda: int(a == b),
           "!=": lambda: int(a != b), "<": lambda: int(a < b), "<=": lambda: int(a <= b),
           ">": lambda: int(a > b), ">=": lambda: int(a >= b)}
    return ops[op]() if op in ops else None
