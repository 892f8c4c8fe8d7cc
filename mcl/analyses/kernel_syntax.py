"""What the kernel model (mcl.analyses.kernel) reads off the syntax alone: the start,
step and bound of a for loop's header, the flat element offset of an index, the
names an expression uses and the variables a function assigns."""

from __future__ import annotations

from collections.abc import Container
from typing import Any

import sympy

from mcl.mcpl import ast


def _written_arg(callee: Any, call: ast.Call, arg: ast.Expr) -> bool:
    try:
        i = call.args.index(arg)
    except ValueError:
        return False
    return i in callee.written_indices


def flat_offset(t: ast.Type, indices: list[sympy.Expr | None],
                 sizes: list[sympy.Expr | None]) -> sympy.Expr | None:
    """The element offset of an access: row-major within a tile, tiles row-major."""
    if len(indices) != len(sizes) or any(i is None for i in indices) or \
            any(s is None for s in sizes):
        return None
    offset: sympy.Expr = sympy.Integer(0)
    pos = 0
    for level in t.dims:
        n = len(level)
        lvl_idx, lvl_sz = indices[pos:pos + n], sizes[pos:pos + n]
        pos += n
        flat: sympy.Expr = sympy.Integer(0)
        for i, s in zip(lvl_idx, lvl_sz, strict=True):
            flat = flat * s + i
        tile: sympy.Expr = sympy.Integer(1)
        for s in lvl_sz:
            tile = tile * s
        offset = offset * tile + flat
    return sympy.expand(offset)


def at_first_units(e: sympy.Expr, names: Container[str]) -> sympy.Expr | None:
    """``e`` with the loop indices ``names`` at 0, as the first unit of their loops
    sees it; None where that is not finite (``min(kb, p / k0)`` at ``k0 = 0``)."""
    zero = {s: 0 for s in sympy.sympify(e).free_symbols if s.name in names}
    try:
        out = sympy.sympify(e).subs(zero)
    except (ValueError, TypeError, ZeroDivisionError):
        return None
    return None if out.has(sympy.zoo, sympy.nan, sympy.oo, -sympy.oo) else out


def first_units_skip(loops: Any) -> bool:
    """Whether the first units of their loops never run code inside ``loops`` (a kernel
    model's loops with numbers): a sequential loop around it that they go round 0
    times, as around the remainder path of the edge blocks that only the last units
    have (matmul cpu_v2's ``for (r = nrFull; r < (rows + x - 1) / x; r++)``). The
    analyses count each unit of a loop at the first one's iterations, so what they
    would claim of such code is about units that do not run it."""
    return any(lp.kind == "for" and lp.trips is not None and lp.trips.is_number
               and lp.trips == 0 and lp.depends for lp in loops)


def named_depends(e: ast.Expr | None, b: Any) -> frozenset[str]:
    """The loop variables that ``e`` names, directly or through the variables and
    array indices in it, as the kernel builder ``b`` knows them: what an expression
    whose value depends on data still depends on (``rowPtr[r] + lane`` with ``r = bi
    * rowsPerBlock + rr``: bi, rr and lane)."""
    if e is None:
        return frozenset()
    out: set[str] = set()
    for node in ast.walk(e):
        if isinstance(node, ast.Name):
            if node.id in b.loop_vars:
                out |= b.depends_of(sympy.Symbol(node.id))
                out.add(node.id)
            else:
                value = b.lookup(node.id)
                if isinstance(value, sympy.Basic):
                    out |= b.depends_of(value)
    return frozenset(out)


def _step_of(update: ast.Stmt | None, var: str | None, b: Any) -> sympy.Expr | None:
    if update is None or var is None:
        return None
    if isinstance(update, ast.IncDec) and isinstance(update.target, ast.Name) \
            and update.target.id == var:
        return sympy.Integer(1 if update.op == "++" else -1)
    if isinstance(update, ast.Assign) and isinstance(update.target, ast.Name) \
            and update.target.id == var:
        if update.op in ("+=", "-="):
            s = b.try_sym(update.value)
            return None if s is None else (s if update.op == "+=" else -s)
        if update.op == "=" and isinstance(update.value, ast.Binary) \
                and update.value.op in ("+", "-") and isinstance(update.value.left, ast.Name) \
                and update.value.left.id == var:
            s = b.try_sym(update.value.right)
            return None if s is None else (s if update.value.op == "+" else -s)
    return None


#: the most values :func:`geometric_values` follows (a loop that halves a 2^63 bound)
MAX_GEOMETRIC = 64


def geometric_update(update: ast.Stmt | None, var: str | None) -> tuple[str, int] | None:
    """``(op, c)`` of an update that multiplies or divides the loop's index by a
    literal (``s *= 2``, ``s /= 2``, ``s <<= 1``, ``s >>= 1``, ``s = s * 2``, ``s = s >>
    1``, and those that leave it as it is, ``s >>= 0``, ``s *= 1``); None for any other
    (and for a division by 0 or a negative shift, which C leaves undefined)."""
    if not (isinstance(update, ast.Assign) and isinstance(update.target, ast.Name)
            and update.target.id == var):
        return None
    op, value = update.op, update.value
    if op == "=" and isinstance(value, ast.Binary) and isinstance(value.left, ast.Name) \
            and value.left.id == var and value.op in ("*", "/", "<<", ">>"):
        op, value = value.op + "=", value.right
    if op not in ("*=", "/=", "<<=", ">>=") or not (
            isinstance(value, ast.Literal) and value.kind == "int"):
        return None
    c = int(value.value)
    if (op == "/=" and c == 0) or (op in ("<<=", ">>=") and c < 0):
        return None     # undefined in C
    return op, c


def geometric_values(update: tuple[str, int], cond_op: str, start: int,
                     bound: int) -> list[int] | None:
    """The values a loop's index takes from ``start`` while it stays on the start's
    side of the exclusive ``bound`` (:func:`_bound_of`; ``cond_op`` the comparison with
    the index on the left, :func:`comparison`), each the last times or divided by
    ``update``'s factor as the kernel's integers do (a division truncates toward zero);
    None where the index would not reach the bound within :data:`MAX_GEOMETRIC`
    values, or never does (:func:`geometric_stuck`)."""
    return _geometric_walk(update, cond_op, start, bound)[0]


def geometric_stuck(update: tuple[str, int], cond_op: str, start: int,
                    bound: int) -> int | None:
    """The value at which such a loop's index stops changing while its condition still
    holds (``s >>= 0``, ``s *= 1``, 0 doubled, -1 halved): the loop never ends. None
    where it ends, or goes on past :data:`MAX_GEOMETRIC` values."""
    return _geometric_walk(update, cond_op, start, bound)[1]


def _geometric_walk(update: tuple[str, int], cond_op: str, start: int,
                    bound: int) -> tuple[list[int] | None, int | None]:
    """(the values, None) of :func:`geometric_values`; (None, the value it sticks at)
    where the index stops changing with the condition holding; (None, None) past
    :data:`MAX_GEOMETRIC` values or for a condition that is no ordering."""
    op, c = update
    step = {"*=": lambda v: v * c, "/=": lambda v: int(v / c),
            "<<=": lambda v: v << c, ">>=": lambda v: v >> c}[op]
    if cond_op in ("<", "<="):
        def test(v):
            return v < bound
    elif cond_op in (">", ">="):
        def test(v):
            return v > bound
    else:
        return None, None
    out, v = [], start
    while test(v):
        if len(out) == MAX_GEOMETRIC:
            return None, None
        out.append(v)
        nv = step(v)
        if nv == v:
            return None, v      # 0 doubled, or -1 halved: the loop does not end
        v = nv
    return out, None


def comparison(cond: ast.Expr | None, var: str | None) -> tuple[str, ast.Expr] | None:
    """``(op, other side)`` of a comparison of ``var`` with something, written with
    ``var`` on the left (``0 < s`` is ``(">", 0)``); None for any other condition."""
    if not isinstance(cond, ast.Binary):
        return None
    left, right, op = cond.left, cond.right, cond.op
    if isinstance(right, ast.Name) and right.id == var and not (
            isinstance(left, ast.Name) and left.id == var):
        left, right = right, left
        op = {"<": ">", ">": "<", "<=": ">=", ">=": "<="}.get(op, op)
    if not (isinstance(left, ast.Name) and left.id == var):
        return None
    return op, right


def _bound_of(cond: ast.Expr, var: str | None, b: Any) -> tuple[sympy.Expr | None, bool]:
    """The exclusive bound of ``var < bound`` style conditions; ``&&`` of several
    conditions takes the first on ``var`` and marks the count approximate."""
    if var is None:
        return None, True
    if isinstance(cond, ast.Binary) and cond.op == "&&":
        for side in (cond.left, cond.right):
            bound, _ = _bound_of(side, var, b)
            if bound is not None:
                return bound, True
        return None, True
    found = comparison(cond, var)
    if found is None:
        return None, True
    op, right = found
    bound = b.try_sym(right)
    if bound is None:
        return None, True
    if op == "<":
        return bound, False
    if op == "<=":
        return bound + 1, False
    if op in (">", ">="):
        # a count-down loop: handled by a negative step over the same span
        return bound + (0 if op == ">" else -1), False
    return None, True


def names_in(node: ast.Node) -> set[str]:
    """The names ``node`` reads or writes (every ``ast.Name`` in it)."""
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def assigned_names(f: ast.Function) -> set[str]:
    """Names that are the target of an assignment or ++/-- somewhere in ``f``."""
    out: set[str] = set()
    for n in ast.walk(f.body):
        if isinstance(n, ast.Assign | ast.IncDec) and isinstance(n.target, ast.Name):
            out.add(n.target.id)
    return out


def _assigned_symbols(f: ast.Function, checked: Any) -> set[int] | None:
    """The ids of the symbols (declarations) that an assignment or ++/-- in ``f``
    changes; None without a resolved module or where a target is not resolved."""
    if checked is None:
        return None
    out: set[int] = set()
    for n in ast.walk(f.body):
        if isinstance(n, ast.Assign | ast.IncDec) and isinstance(n.target, ast.Name):
            sym = checked.declaration_of(n.target)
            if sym is None:
                return None
            out.add(id(sym))
    return out
