"""Barriers that not every unit reaches.

A barrier synchronises the units of a work-group (a block's warps and threads): every
one of them must reach it, the same number of times. One inside an ``if`` whose
condition differs between them (``if (t < 16) { ...; barrier(shared); }``), inside a
loop whose trip count does (``for (j = t; j < n; j += 32)``), or in a loop that some of
them leave early (``if (v[t] < 0) { break; }``) leaves the others waiting for units
that never come, or the result undefined: OpenCL makes it undefined behaviour, NVIDIA's
GPUs may hang or go on with a part of the block, PoCL may hang.

What differs between the units (*varies*): the indices of the foreach loops inside the
outermost one (the work-items of a work-group; at a level of one par_group, its units),
the variables computed from them, or assigned under a condition that varies, and the
elements read at an index that varies. A value read at the same index by every unit is
the same for all of them. Conservative where it cannot tell: a condition on such a
variable is taken to vary. A loop whose range names a unit's index varies unless the
model of the kernel at a run's sizes counts the same trips for every unit.
"""

from __future__ import annotations

import itertools
import math

import sympy

from mcl.diagnostics import Diagnostic, warning
from mcl.mcpl import ast
from mcl.mcpl.printer import print_expr

CODE = "feedback-divergent-barrier"


def divergent_barriers(function: ast.Function, hardware, kernel=None) -> list[Diagnostic]:
    """A warning at each barrier of ``function`` that a condition or a loop around it
    lets some units of its work-group reach and others not (or a different number of
    times). ``kernel``: the function's model at the sizes of a run
    (mcl.analyses.kernel.Kernel), where a loop whose range names a unit's index is
    counted for every unit: the same trip count for all (``for (k = t; k < 256; k +=
    32)`` with 32 units) does not vary."""
    groups = [g.name for g in hardware.par_groups()] if hardware is not None else []
    grid = groups[0] if len(groups) > 1 else None      # its units are the work-groups
    varying = _varying(function, grid, hardware)
    varying.same_trips = (lambda node: _same_trips(kernel, node)) if kernel is not None \
        else (lambda node: False)
    out: list[Diagnostic] = []
    _visit(function.body, [], varying, grid, out)
    return out


#: the most combinations of the units' indices a trip count is evaluated at
_MOST_UNITS = 4096


def _same_trips(kernel, node: ast.For) -> bool:
    """Whether every unit goes round the loop ``node`` equally often, its range counted
    at each combination of the indices of the foreach loops it names (numbers in the
    model ``kernel``)."""
    lp = next((x for x in kernel.loops if x.node is node), None)
    if lp is None or lp.start is None or lp.step is None or lp.bound is None:
        return False
    units = {x.symbol: x for x in kernel.loops if x.kind == "foreach"
             and getattr(x.trips, "is_Integer", False)}
    span, step = sympy.sympify(lp.bound - lp.start), sympy.sympify(lp.step)
    names = sorted(span.free_symbols | step.free_symbols, key=str)
    if not names or not all(n in units for n in names) or \
            math.prod(int(units[n].trips) for n in names) > _MOST_UNITS:
        return False
    try:
        f = sympy.lambdify(names, (span, step), modules="math")
        counts = {max(0, -(-int(a) // int(b))) if int(b) > 0 else None
                  for a, b in (f(*at) for at in itertools.product(
                      *(range(int(units[n].trips)) for n in names)))}
    except (TypeError, ValueError, ArithmeticError, NameError):
        return False
    return len(counts) == 1 and None not in counts


class _Varying(set):
    """The names whose values may differ between the units of a work-group, and the
    arrays each unit has its own of (``private``: declared inside a foreach over the
    units), whose elements differ however they are indexed."""

    private: frozenset[str] = frozenset()

    @staticmethod
    def same_trips(node: ast.For) -> bool:
        """Whether the units go round ``node`` equally often (set per kernel)."""
        return False


def _uses(e: ast.Node | None, varying: _Varying) -> bool:
    """Whether the value of ``e`` may differ between the units: it names a varying
    variable, reads an array shared by the units at an index that varies, or reads a
    unit's own array that varies."""
    if e is None:
        return False
    if isinstance(e, ast.Name):
        return e.id in varying
    if isinstance(e, ast.Index):
        base = e.base.id if isinstance(e.base, ast.Name) else None
        if base in varying and base in varying.private:
            return True
        return any(_uses(i, varying) for group in e.groups for i in group) or \
            (base is None and _uses(e.base, varying))
    return any(_uses(c, varying) for c in ast.children(e))


def _own(hardware, space: str | None, grid: str | None) -> bool:
    """Whether an array of ``space`` declared inside a foreach over the units is each
    unit's own: registers, or a space a unit of an inner par_group owns (hopper's
    ``local``), not one its work-group or the device holds (``shared``, ``global``)."""
    if space is None or hardware is None:
        return True
    owner = hardware.owner_of(space)
    if owner is None or owner.kind != "par_unit":
        return False
    group = hardware.group_of_unit(owner.name)
    return group is not None and group.name != grid


def _varying(function: ast.Function, grid: str | None, hardware) -> _Varying:
    """The names whose values may differ between the units of a work-group."""
    out = _Varying()
    private = set()
    for n in ast.walk(function.body):
        if isinstance(n, ast.ForEach) and n.group != grid:
            out.add(n.var.name)
            private |= {d.name for d in ast.walk(n.body)
                        if isinstance(d, ast.Declaration) and d.type.is_array
                        and _own(hardware, d.space, grid)}
    out.private = frozenset(private)
    changed = True
    while changed:
        changed = False
        for name in _assigned(function.body, out, False):
            if name not in out:
                out.add(name)
                changed = True
    return out


def _target_name(e: ast.Expr) -> str | None:
    while isinstance(e, ast.Index | ast.Field):
        e = e.base
    return e.id if isinstance(e, ast.Name) else None


def _assigned(s: ast.Node, varying: set[str], under: bool) -> set[str]:
    """The names ``s`` gives a varying value: computed from a varying one, or assigned
    where a varying condition holds (``under``)."""
    out: set[str] = set()
    if isinstance(s, ast.Declaration):
        if s.init is not None and (under or _uses(s.init, varying)):
            out.add(s.name)
    elif isinstance(s, ast.Assign):
        name = _target_name(s.target)
        # an element written at a varying index varies too (a shared tile)
        if name is not None and (under or _uses(s.value, varying) or _uses(s.target, varying)):
            out.add(name)
    elif isinstance(s, ast.IncDec):
        name = _target_name(s.target)
        if name is not None and (under or _uses(s.target, varying)):
            out.add(name)
    elif isinstance(s, ast.If):
        inner = under or _uses(s.cond, varying)
        out |= _assigned(s.then, varying, inner)
        if s.orelse is not None:
            out |= _assigned(s.orelse, varying, inner)
    elif isinstance(s, ast.For):
        inner = under or _loop_varies(s, varying)
        for part in (s.init, s.update, s.body):
            if part is not None:
                out |= _assigned(part, varying, inner)
    elif isinstance(s, ast.While):
        out |= _assigned(s.body, varying, under or _uses(s.cond, varying))
    elif isinstance(s, ast.Block | ast.ForEach):
        for c in ast.statements_of(s.body if isinstance(s, ast.ForEach) else s):
            out |= _assigned(c, varying, under)
    return out


def _loop_varies(s: ast.For, varying: set[str]) -> bool:
    """Whether the units of a work-group may go round ``s`` different numbers of times."""
    init = s.init.init if isinstance(s.init, ast.Declaration) else \
        s.init.value if isinstance(s.init, ast.Assign) else None
    update = s.update.value if isinstance(s.update, ast.Assign) else None
    return any(_uses(e, varying) for e in (init, s.cond, update))


def _leaves_early(body: ast.Stmt, varying: set[str]) -> ast.If | None:
    """An ``if`` with a varying condition in ``body`` (not in a loop inside it) around
    a ``break`` or ``continue`` of the loop: its units leave it or skip the rest of an
    iteration unequally."""
    def search(s: ast.Stmt, cond: ast.If | None) -> ast.If | None:
        if isinstance(s, ast.Break | ast.Continue):
            return cond
        if isinstance(s, ast.If):
            here = s if cond is None and _uses(s.cond, varying) else cond
            found = search(s.then, here)
            if found is None and s.orelse is not None:
                found = search(s.orelse, here)
            return found
        if isinstance(s, ast.Block):
            for c in s.statements:
                found = search(c, cond)
                if found is not None:
                    return found
        return None     # (a loop inside has its own break)
    return search(body, None)


def _visit(s: ast.Stmt, around: list[tuple[ast.Stmt, str]], varying: set[str],
           grid: str | None, out: list[Diagnostic]) -> None:
    """Each barrier under ``s``, with the statements around it whose control varies
    (``around``: the statement and how it varies)."""
    if isinstance(s, ast.Barrier):
        if around:
            out.append(_warning(s, *around[-1]))
        return
    if isinstance(s, ast.ForEach):
        # the work-group's own loop starts afresh: what varied between work-groups does
        # not split a work-group
        _visit(s.body, [] if s.group == grid else around, varying, grid, out)
    elif isinstance(s, ast.If):
        here = around + [(s, "if")] if _uses(s.cond, varying) else around
        _visit(s.then, here, varying, grid, out)
        if s.orelse is not None:
            _visit(s.orelse, here, varying, grid, out)
    elif isinstance(s, ast.For | ast.While):
        varies = _loop_varies(s, varying) and not varying.same_trips(s) \
            if isinstance(s, ast.For) else _uses(s.cond, varying)
        early = _leaves_early(s.body, varying)
        here = around + [(s, "loop")] if varies else \
            around + [(early, "early")] if early is not None else around
        _visit(s.body, here, varying, grid, out)
    elif isinstance(s, ast.Block):
        for c in s.statements:
            _visit(c, around, varying, grid, out)


def _warning(b: ast.Barrier, s: ast.Stmt, how: str) -> Diagnostic:
    if how == "if":
        where = f"inside 'if ({print_expr(s.cond)})', whose condition"
    elif how == "early":
        where = (f"in a loop that 'if ({print_expr(s.cond)})' leaves or skips for some "
                 "units: that condition")
    elif isinstance(s, ast.For):
        head = print_expr(s.cond) if s.cond is not None else "its bound"
        where = f"inside a loop ('{head}') whose trip count"
    else:
        where = f"inside 'while ({print_expr(s.cond)})', whose condition"
    return warning(
        CODE, f"barrier({b.space}) {where} differs between the units of a work-group: "
        "every unit must reach the barrier, as often as the others (those that do not "
        "leave the others waiting, or the result undefined)", b.span,
        "let every unit reach the barrier: move it out of the condition or loop, and keep "
        "the condition inside it on what the units do, not on whether they synchronise")
