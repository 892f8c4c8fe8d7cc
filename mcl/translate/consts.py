"""Compile-time integer values of size expressions: literals, ``const int``
declarations with constant initialisers and hardware-description properties.
Translation uses them to leave out guards and rounding that cannot matter
(``nrThreads = 256`` split into warps of 32)."""

from __future__ import annotations

from collections.abc import Callable

from mcl.mcpl import ast
from mcl.mcpl.fold import fold_constant

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
    """The integer value of ``e`` or None when it is not known at compile time (the
    names of ``env`` and the description's properties as constants, folded as C
    computes: mcl.mcpl.fold)."""
    def known(name: ast.Name) -> ast.Expr | None:
        value = env.get(name.id)
        return None if value is None else ast.Literal(value, "int", span=name.span)

    value = fold_constant(e, known, lookup)
    return value if isinstance(value, int) else None
