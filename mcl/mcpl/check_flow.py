"""The control flow of a module's functions: calls that recurse (OpenCL C has no
recursion, so the generated program would not build) and functions with a value that
can reach their end without returning one (C leaves what the caller gets undefined)."""

from __future__ import annotations

from mcl.diagnostics import Diagnostic, Related, error, warning
from mcl.mcpl import ast
from mcl.mcpl.fold import fold_constant


def recursion(own: dict[str, ast.Function]) -> list[Diagnostic]:
    """An error at each cycle of calls among the module's own functions (imported ones
    cannot call back into it), where its first function in the source calls the next:
    ``f`` calling ``f``, or ``f`` calling ``g`` calling ``f``."""
    calls = {name: [n for n in ast.walk(f.body) if isinstance(n, ast.Call) and n.func in own]
             for name, f in own.items()}
    seen: set[frozenset[str]] = set()
    out: list[Diagnostic] = []
    for name in own:
        path = _path_back(calls, name)
        if path is None:
            continue
        cycle = frozenset([name, *(c.func for c in path)])
        if cycle in seen:
            continue
        seen.add(cycle)
        through = [c.func for c in path[:-1]]
        how = f"through {' -> '.join(through)}" if through else "directly"
        related = [Related(own[c.func].span, f"'{c.func}' is declared here")
                   for c in path[:-1]]
        out.append(error(
            "mcpl-recursion", f"'{name}' calls itself ({how}): OpenCL C, which the kernel "
            "becomes, has no recursion", path[0].span,
            "write the recursion as a loop (with an array for what a call would keep)",
            related))
    return out


def _path_back(calls: dict[str, list[ast.Call]], start: str) -> list[ast.Call] | None:
    """The calls of a shortest chain from ``start`` back to ``start``, or None."""
    paths = {c.func: [c] for c in calls[start]}
    if start in paths:
        return paths[start]
    frontier = list(paths)
    while frontier:
        nxt = []
        for name in frontier:
            for c in calls[name]:
                if c.func == start:
                    return paths[name] + [c]
                if c.func not in paths:
                    paths[c.func] = paths[name] + [c]
                    nxt.append(c.func)
        frontier = nxt
    return None


def missing_return(f: ast.Function, resolve) -> Diagnostic | None:
    """A warning where a function with a value can reach the end of its body without a
    ``return`` (``if (v > 0) { return 1; }`` and nothing after it); ``resolve`` gives the
    constants' values (a ``while (true)`` loop without a ``break`` does not end)."""
    if f.return_type.name == "void" and not f.return_type.dims:
        return None
    if not _falls_through(f.body, resolve):
        return None
    return warning("mcpl-missing-return",
                   f"'{f.name}' can reach its end without returning a value", f.span,
                   "return a value on every path (after the last `if`, say): the caller "
                   "of a function that ends without one gets an undefined value (as in C)")


def _falls_through(s: ast.Stmt | None, resolve) -> bool:
    """Whether running ``s`` can go on to what follows it (not every path returns)."""
    if s is None:
        return True
    if isinstance(s, ast.Return):
        return False
    if isinstance(s, ast.Block):
        return all(_falls_through(x, resolve) for x in s.statements)
    if isinstance(s, ast.If):
        return _falls_through(s.then, resolve) or _falls_through(s.orelse, resolve)
    if isinstance(s, ast.While | ast.For):
        return not runs_forever(s, resolve)
    return True


def runs_forever(s: ast.While | ast.For, resolve) -> bool:
    """Whether a loop's condition is a constant that holds (``while (true)``, ``for
    (;;)``; ``resolve`` gives the constants' values) and no ``break`` of its own leaves
    it (a ``return`` may still leave the function)."""
    holds = s.cond is None or bool(fold_constant(s.cond, resolve))
    return holds and not _breaks_out(s.body)


def _breaks_out(s: ast.Stmt) -> bool:
    """Whether a ``break`` in ``s`` leaves the loop whose body ``s`` is (not one of a
    loop inside it)."""
    if isinstance(s, ast.Break):
        return True
    if isinstance(s, ast.While | ast.For | ast.ForEach):
        return False
    if isinstance(s, ast.Block):
        return any(_breaks_out(x) for x in s.statements)
    if isinstance(s, ast.If):
        return _breaks_out(s.then) or (s.orelse is not None and _breaks_out(s.orelse))
    return False
