"""Compile-time integer values of size expressions: literals, ``const int``
declarations with constant initialisers and hardware-description properties.
Translation uses them to leave out guards and rounding that cannot matter
(``nrThreads = 256`` split into warps of 32)."""

from __future__ import annotations

from collections.abc import Callable

from mcl.mcpl import ast

#: looks up a hardware-description property path; None if it is not an integer
PropertyLookup = Callable[[tuple[str, ...]], int | None]


def const_env(function: ast.Function, lookup: PropertyLookup) -> dict[str, int]:
    """Values of the ``const int`` variables of a function that are declared once and
    initialised with a constant expression (earlier constants may be used)."""
    decls: dict[str, list[ast.Declaration]] = {}
    for node in ast.walk(function.body):
        if isinstance(node, ast.Declaration):
            decls.setdefault(node.name, []).append(node)
    env: dict[str, int] = {}
    # Parameters are example values, never constants: a name that is also a parameter
    # is left out.
    params = {p.name for p in function.params}
    for node in ast.walk(function.body):
        if (isinstance(node, ast.Declaration) and node.const and node.init is not None
                and node.type.name in ("int", "long") and not node.type.dims
                and len(decls[node.name]) == 1 and node.name not in params):
            v = evaluate(node.init, env, lookup)
            if v is not None:
                env[node.name] = v
    return env


def evaluate(e: ast.Expr, env: dict[str, int], lookup: PropertyLookup) -> int | None:
    """The integer value of ``e`` or None when it is not known at compile time."""
    if isinstance(e, ast.Literal):
        return e.value if e.kind == "int" and isinstance(e.value, int) else None
    if isinstance(e, ast.Name):
        return env.get(e.id)
    if isinstance(e, ast.HwdRef):
        return lookup(e.path)
    if isinstance(e, ast.Unary) and e.op in ("-", "+"):
        v = evaluate(e.operand, env, lookup)
        return None if v is None else (-v if e.op == "-" else v)
    if isinstance(e, ast.Binary) and e.op in ("+", "-", "*", "/", "%"):
        a, b = evaluate(e.left, env, lookup), evaluate(e.right, env, lookup)
        if a is None or b is None:
            return None
        if e.op == "+":
            return a + b
        if e.op == "-":
            return a - b
        if e.op == "*":
            return a * b
        if b == 0 or a < 0 or b < 0:
            return None  # C truncation of negatives differs from Python's; not needed
        return a // b if e.op == "/" else a % b
    return None
