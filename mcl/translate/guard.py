"""Guards for foreach loops whose number of iterations was rounded up: the extra
units must not execute the body, but every unit must still reach each barrier.

``guard(statements, cond)`` wraps the statements in ``if (cond) { ... }``; where a
statement contains a barrier it guards around it instead: runs of barrier-free
statements are wrapped one by one, loops and ifs that hold a barrier are entered
(their headers stay unguarded, as in the original every unit evaluated them), and
declarations that later statements use are hoisted out of the guarded run.
"""

from __future__ import annotations

import dataclasses

from mcl.mcpl import ast


def _names_used(stmts: tuple[ast.Stmt, ...] | list[ast.Stmt]) -> set[str]:
    return {n.id for s in stmts for n in ast.walk(s) if isinstance(n, ast.Name)}


def _is_inert(s: ast.Stmt) -> bool:
    """A declaration without initialiser: executing it for an extra unit is harmless."""
    return isinstance(s, ast.Declaration) and s.init is None


def guard(statements: tuple[ast.Stmt, ...], cond: ast.Expr) -> tuple[ast.Stmt, ...]:
    """The statements with everything except barriers (and inert declarations) executed
    only where ``cond`` holds."""
    if not any(ast.contains_barrier(s) or isinstance(s, ast.ForEach) for s in statements):
        if all(_is_inert(s) for s in statements):
            return statements
        return (_wrap(statements, cond),)
    out: list[ast.Stmt] = []
    run: list[ast.Stmt] = []

    def flush(rest: tuple[ast.Stmt, ...]) -> None:
        if not run:
            return
        later = _names_used(rest)
        before: list[ast.Stmt] = []
        inside: list[ast.Stmt] = []
        for s in run:
            if isinstance(s, ast.Declaration) and (s.name in later or s.init is None):
                # Later runs (after a barrier) still see the variable, so it is declared
                # outside the guard and only its initialisation is guarded.
                before.append(dataclasses.replace(s, init=None, const=False, comments=()))
                if s.init is not None:
                    inside.append(ast.Assign(ast.Name(s.name), "=", s.init, comments=s.comments))
                elif s.comments:
                    before[-1] = dataclasses.replace(before[-1], comments=s.comments)
            else:
                inside.append(s)
        out.extend(before)
        if inside:
            out.append(_wrap(tuple(inside), cond))
        run.clear()

    for i, s in enumerate(statements):
        if isinstance(s, ast.ForEach):
            flush(statements[i:])
            out.append(dataclasses.replace(s, body=_guard_body(s.body, cond)))
        elif ast.contains_barrier(s):
            flush(statements[i:])
            out.append(_guard_around(s, cond))
        else:
            run.append(s)
    flush(())
    return tuple(out)


def _guard_body(body: ast.Stmt, cond: ast.Expr) -> ast.Stmt:
    if isinstance(body, ast.Block):
        return dataclasses.replace(body, statements=guard(body.statements, cond))
    stmts = guard((body,), cond)
    return stmts[0] if len(stmts) == 1 else ast.Block(stmts)


def _guard_around(s: ast.Stmt, cond: ast.Expr) -> ast.Stmt:
    """A statement holding a barrier: guard inside it, keep it for every unit."""
    if isinstance(s, ast.Barrier):
        return s
    if isinstance(s, ast.Block):
        return dataclasses.replace(s, statements=guard(s.statements, cond))
    if isinstance(s, ast.For | ast.While | ast.ForEach):
        return dataclasses.replace(s, body=_guard_body(s.body, cond))
    if isinstance(s, ast.If):
        orelse = _guard_body(s.orelse, cond) if s.orelse is not None else None
        return dataclasses.replace(s, then=_guard_body(s.then, cond), orelse=orelse)
    return s


def _wrap(statements: tuple[ast.Stmt, ...], cond: ast.Expr) -> ast.If:
    first = statements[0]
    # A blank line above the first statement goes above the if; its comments stay
    # with it, inside.
    lead = first.comments[:1] if first.comments[:1] == ("",) else ()
    inner = (dataclasses.replace(first, comments=first.comments[len(lead):]), *statements[1:])
    return ast.If(cond, ast.Block(inner), comments=lead)
