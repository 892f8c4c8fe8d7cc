"""Barriers that not every unit reaches.

A barrier synchronises the units of a work-group (a block's warps and threads): every
one of them must reach it, the same number of times. One inside an ``if`` whose
condition differs between them (``if (t < 16) { ...; barrier(shared); }``), inside a
loop whose trip count does (``for (j = t; j < n; j += 32)``), in a loop that some of
them leave early (``if (v[t] < 0) { break; }``), or after a return that some of them
take (``if (i >= n) { return; }``) leaves the others waiting for units
that never come, or the result undefined: OpenCL makes it undefined behaviour, NVIDIA's
GPUs may hang or go on with a part of the block, PoCL may hang.

What differs between the units (*varies*, mcl.mcpl.varying, the analysis the
generator's lane loops use too): the indices of the foreach loops inside the outermost
one (the work-items of a work-group; at a level of one par_group, its units), the
variables computed from them, or assigned under a condition that varies, the elements
read at an index that varies, and what a call with side effects returns. A value read
at the same index by every unit is the same for all of them. Conservative where it
cannot tell: a condition on such a variable is taken to vary. A loop whose range names
a unit's index varies unless the model of the kernel at a run's sizes counts the same
trips for every unit.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

import sympy

from mcl.diagnostics import Diagnostic, warning
from mcl.mcpl import ast
from mcl.mcpl.printer import print_expr
from mcl.mcpl.varying import Varying

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

    def same_trips(node: ast.For) -> bool:
        return kernel is not None and _same_trips(kernel, node)

    out: list[Diagnostic] = []
    _visit(function.body, [], varying, same_trips, grid, out, [])
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


def _varying(function: ast.Function, grid: str | None, hardware) -> Varying:
    """What differs between the units of a work-group: the indices of the foreach loops
    inside the work-groups' own and what follows from them (mcl.mcpl.varying), the
    arrays each unit has its own of (:func:`_own`) varying however indexed."""
    seeds, own = set(), set()
    for n in ast.walk(function.body):
        if isinstance(n, ast.ForEach) and n.group != grid:
            seeds.add(n.var.name)
            own |= {d.name for d in ast.walk(n.body)
                    if isinstance(d, ast.Declaration) and d.type.is_array
                    and _own(hardware, d.space, grid)}
    return Varying(function.body, seeds, own=own)


def _visit(s: ast.Stmt, around: list[tuple[ast.Stmt, str]], varying: Varying,
           same_trips: Callable[[ast.For], bool], grid: str | None,
           out: list[Diagnostic], returned: list[ast.If]) -> None:
    """Each barrier under ``s``, with the statements around it whose control varies
    (``around``: the statement and how it varies; ``same_trips``: whether every unit
    goes round a loop whose header varies equally often all the same; ``returned``: the
    ``if`` statements before it, in the order the units run them, that end the kernel
    for some units of a work-group and not for others)."""
    if isinstance(s, ast.Barrier):
        if around:
            out.append(_warning(s, *around[-1]))
        elif returned:
            out.append(_warning(s, returned[0], "return"))
        return
    if isinstance(s, ast.ForEach):
        # the work-group's own loop starts afresh: what varied between work-groups does
        # not split a work-group
        _visit(s.body, [] if s.group == grid else around, varying, same_trips, grid, out,
               returned)
    elif isinstance(s, ast.If):
        varies = varying.expr(s.cond)
        here = around + [(s, "if")] if varies else around
        _visit(s.then, here, varying, same_trips, grid, out, returned)
        if s.orelse is not None:
            _visit(s.orelse, here, varying, same_trips, grid, out, returned)
        if (varies or around) and any(isinstance(n, ast.Return) for n in ast.walk(s)):
            returned.append(s)      # `if (i >= n) return;`: the units after it differ
    elif isinstance(s, ast.For | ast.While):
        # a loop some units leave early is named for that (its index then varies too)
        early = varying.leaves_early(s)
        varies = varying.header(s) and not (isinstance(s, ast.For) and same_trips(s))
        here = around + [(early, "early")] if early is not None else \
            around + [(s, "loop")] if varies else around
        _visit(s.body, here, varying, same_trips, grid, out, returned)
    elif isinstance(s, ast.Block):
        for c in s.statements:
            _visit(c, around, varying, same_trips, grid, out, returned)


def _warning(b: ast.Barrier, s: ast.Stmt, how: str) -> Diagnostic:
    if how == "if":
        where = f"inside 'if ({print_expr(s.cond)})', whose condition"
    elif how == "return":
        where = f"after 'if ({print_expr(s.cond)})', which ends the kernel for some units: " \
            "that condition"
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
