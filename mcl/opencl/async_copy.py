"""Which 128-bit copies from device memory into on-chip memory the OpenCL generator
issues as asynchronous copies, where the target has them (the H100's ``cp.async``:
the copy goes from global to shared memory without a register in between, and the
warp goes on while it is under way).

An asynchronous copy lands in its destination at some time before the thread waits
for it; the generator waits (the target's ``wait``) before every barrier. So a copy
may be asynchronous only where no one can tell: the assignment ``dst[..] = src[..]``,
which :mod:`mcl.opencl.vectorize` turns into 128-bit copies, qualifies when

* ``dst`` is an array declared in the kernel in local memory, with no view of it, and
  ``src`` an array parameter in global memory (or a view of one) that the kernel
  never writes (the copy may read it late);
* the statement list that holds the copy (inside ``if`` statements and counted
  ``for`` loops only) holds a barrier after it, with work between the two besides
  other copies (a copy followed by nothing but copies and the barrier gains nothing
  from going on without them, and on the H100 the inline assembly cost matmul
  hopper_v10 and v11, whose first tiles' copies qualified, 25 and 2 registers and 21%
  and 6% of their time: benchmarks/results/perf/round43), and nothing between them
  can leave the list (``break``, ``continue``, ``return``): the copy is complete
  before any other thread may read it;
* ``dst`` is not passed whole to a call in the list (the function may read any of it);
* before the copy, back to the previous barrier, the thread does not touch ``dst``:
  in the list, or, where the list is a loop body that ends with a barrier, in the
  list that holds the loop (and so on outwards to the kernel's start);
* every other access of ``dst`` in the list is to another element: in some
  dimension the two indices differ by an expression that is never zero for
  integers (the GCD test of dependence analysis: a linear expression whose
  coefficients' greatest common divisor does not divide its constant; ``1 - cur``
  and ``cur`` differ by ``1 - 2 cur``). Names declared once and never assigned
  (not inside a loop of the list) stand for the same value on both sides where
  both are seen in the same iteration of the list; every other name may take any
  value;
* the copy's executions before the barrier write different elements: its flat
  index is linear in the counted loops around it, each with a constant trip count,
  and each loop's step in the index exceeds the span of those with smaller steps.

This module decides from the kernel's syntax (:func:`candidates`) and, at emission
time with the constants of the program, proves the index conditions
(:func:`proven`); :mod:`mcl.opencl.generate` prints.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import sympy

from mcl.mcpl import ast
from mcl.mcpl.symbolic import symbol, to_sympy
from mcl.opencl.emit_expressions import root_name
from mcl.opencl.vectorize import counted_loop


@dataclass(frozen=True)
class Candidate:
    """A copy that may be asynchronous once its indices are proven apart."""

    stmt: ast.Assign
    #: counted loops between the statement list and the copy, outermost first
    loops: tuple[ast.For, ...]
    #: the other accesses of the destination in the list: (index, in the same
    #: iteration of the list as the copy)
    others: tuple[tuple[ast.Index, bool], ...]
    #: the names declared at the top of the list (one value per iteration of it)
    list_names: frozenset[str]
    #: the names declared deeper inside it (one value per iteration of an inner loop)
    inner_names: frozenset[str]
    #: the names of the kernel declared exactly once (parameters and module constants
    #: included) and never assigned: the same value wherever they are seen
    fixed: frozenset[str]


def candidates(f: ast.Function, module_names: Sequence[str] = ()) -> dict[int, Candidate]:
    """The copies of ``f`` (by ``id`` of the assignment) that may be asynchronous
    where their indices are proven apart (:func:`proven`); ``module_names``: the
    module-level constants the kernel sees. Whether the destination is on-chip and
    the source in global memory is the generator's to check."""
    count: dict[str, int] = {}
    for name in [*module_names, *(p.name for p in f.params)]:
        count[name] = count.get(name, 0) + 1
    for d in ast.walk(f):
        if isinstance(d, ast.Declaration):
            count[d.name] = count.get(d.name, 0) + 1
    assigned = {n.target.id for n in ast.walk(f)
                if isinstance(n, ast.Assign | ast.IncDec) and isinstance(n.target, ast.Name)}
    fixed = frozenset(n for n, c in count.items() if c == 1 and n not in assigned)
    # every view's root: the array it shows (views of views included)
    root: dict[str, str] = {}
    for n in ast.walk(f):
        if isinstance(n, ast.AsStatement) and isinstance(n.target, ast.Name):
            root.update((v.name, n.target.id) for v in n.views)
        elif isinstance(n, ast.Declaration):
            root.update((v.name, n.name) for v in n.views)

    def base(name: str | None) -> str | None:
        seen = set()
        while name in root and name not in seen:
            seen.add(name)
            name = root[name]
        return name
    viewed = set(root.values())
    arrays = {d.name for d in ast.walk(f) if isinstance(d, ast.Declaration)
              and d.type.is_array and count[d.name] == 1} - viewed
    # a source is read late: nothing in the kernel may write it, through any view, nor
    # pass it to a call
    touched = {base(_root(n.target)) for n in ast.walk(f)
               if isinstance(n, ast.Assign | ast.IncDec)}
    touched |= {base(_root(a)) for n in ast.walk(f) if isinstance(n, ast.Call) for a in n.args}
    params = {p.name for p in f.params if p.type.is_array and count[p.name] == 1} - touched
    sources = {v for v in [*params, *root] if base(v) in params}
    found: dict[int, Candidate] = {}
    _walk(f.body.statements, [], arrays, sources, fixed, found)
    return found


# a statement list on the way from the kernel's body: (list, position of the statement
# that holds the inner list, that statement where the inner list is its body)
_Frame = tuple[Sequence[ast.Stmt], int, ast.Stmt | None]


def _walk(stmts: Sequence[ast.Stmt], outer: list[_Frame], arrays: set[str],
          sources: set[str], fixed: frozenset[str], found: dict[int, Candidate]) -> None:
    for i, s in enumerate(stmts):
        for copy, loops in _copies(s, arrays, sources):
            c = _candidate(stmts, i, copy, loops, outer, fixed, arrays, sources)
            if c is not None:
                found[id(copy)] = c
        for body, owner in _bodies(s):
            _walk(body, [*outer, (stmts, i, owner)], arrays, sources, fixed, found)


def _bodies(s: ast.Stmt) -> list[tuple[Sequence[ast.Stmt], ast.Stmt | None]]:
    """The statement lists directly inside ``s``, each with ``s`` where it is a loop."""
    def seq(b: ast.Stmt | None) -> Sequence[ast.Stmt]:
        return () if b is None else b.statements if isinstance(b, ast.Block) else (b,)
    if isinstance(s, ast.Block):
        return [(s.statements, None)]
    if isinstance(s, ast.If):
        return [(seq(s.then), None), (seq(s.orelse), None)]
    if isinstance(s, ast.For | ast.While | ast.ForEach):
        return [(seq(s.body), s)]
    return []


def _copies(s: ast.Stmt, arrays: set[str], sources: set[str],
            loops: tuple[ast.For, ...] = ()) -> list[tuple[ast.Assign, tuple[ast.For, ...]]]:
    """The copies from a source into a destination array in ``s``, reached through
    ``if`` statements, blocks and counted loops only, with the loops around each."""
    if isinstance(s, ast.Assign):
        if s.op == "=" and isinstance(s.target, ast.Index) and isinstance(s.value, ast.Index) \
                and _root(s.target) in arrays and _root(s.value) in sources:
            return [(s, loops)]
        return []
    if isinstance(s, ast.For):
        return _copies(s.body, arrays, sources, (*loops, s))
    if isinstance(s, ast.Block):
        return [c for x in s.statements for c in _copies(x, arrays, sources, loops)]
    if isinstance(s, ast.If):
        return [c for b in (s.then, s.orelse) if b is not None
                for c in _copies(b, arrays, sources, loops)]
    return []


def _candidate(stmts: Sequence[ast.Stmt], i: int, copy: ast.Assign,
               loops: tuple[ast.For, ...], outer: list[_Frame], fixed: frozenset[str],
               arrays: set[str], sources: set[str]) -> Candidate | None:
    dst = _root(copy.target)
    after = [j for j in range(i + 1, len(stmts)) if isinstance(stmts[j], ast.Barrier)]
    if not after or _touches(stmts[i], None):
        return None
    j = after[0]
    if not any(_work(s, arrays, sources) for s in stmts[i + 1:j]):
        return None     # nothing to do while the copy is under way: a plain copy
    if any(isinstance(n, ast.Break | ast.Continue | ast.Return)
           for s in stmts[i:j] for n in ast.walk(s)):
        return None
    if not _fenced_before(stmts, i, dst, outer, own=True):
        return None
    if _passed_whole(stmts, dst):
        return None     # a call may read any element of it
    names = frozenset(s.name for s in stmts if isinstance(s, ast.Declaration))
    inner = frozenset(n.name for s in stmts if not isinstance(s, ast.Declaration)
                      for n in ast.walk(s) if isinstance(n, ast.Declaration))
    # after the barrier, the list's statements precede the copy only in a loop body,
    # in the iteration before
    looped = bool(outer) and isinstance(outer[-1][2], ast.For | ast.While)
    others = tuple((n, k < j) for k, s in enumerate(stmts) if k < j or looped
                   for n in ast.walk(s)
                   if isinstance(n, ast.Index) and n is not copy.target and _root(n) == dst)
    return Candidate(copy, loops, others, names, inner, fixed)


def _passed_whole(stmts: Sequence[ast.Stmt], dst: str | None) -> bool:
    """Whether ``dst`` appears in ``stmts`` other than indexed (passed to a call)."""
    bases = {id(n.base) for s in stmts for n in ast.walk(s) if isinstance(n, ast.Index)}
    return any(isinstance(n, ast.Name) and n.id == dst and id(n) not in bases
               for s in stmts for n in ast.walk(s))


def _work(s: ast.Stmt, arrays: set[str], sources: set[str]) -> bool:
    """Whether ``s`` does something besides declaring names and copying tiles."""
    if isinstance(s, ast.Declaration | ast.Barrier):
        return False
    if isinstance(s, ast.Assign):
        return _copies(s, arrays, sources) == []
    if isinstance(s, ast.For | ast.Block | ast.If):
        return any(_work(b, arrays, sources) for body, _ in _bodies(s) for b in body)
    return True


def _touches(s: ast.Stmt, dst: str | None) -> bool:
    """Whether ``s`` names ``dst``, indexed or whole (None: whether it holds a barrier)."""
    if dst is None:
        return any(isinstance(n, ast.Barrier) for n in ast.walk(s))
    return any(isinstance(n, ast.Name) and n.id == dst for n in ast.walk(s))


def _fenced_before(stmts: Sequence[ast.Stmt], i: int, dst: str | None,
                   outer: list[_Frame], own: bool) -> bool:
    """Whether nothing touches ``dst`` between the previous barrier and ``stmts[i]``:
    back in the list (in the copy's own list, ``own``, the other accesses are
    proven apart instead), then, where the list is a loop body, from its end back
    to a barrier after ``i`` (its later iterations), and outwards."""
    for s in reversed(stmts[:i]):
        if isinstance(s, ast.Barrier):
            return True
        if not own and _touches(s, dst):
            return False
    if not outer:
        return True
    parent, k, owner = outer[-1]
    if isinstance(owner, ast.For | ast.While):
        tail = list(stmts[i + 1:])
        last = max((x for x, s in enumerate(tail) if isinstance(s, ast.Barrier)), default=None)
        if last is None or (not own and any(_touches(s, dst) for s in tail[last + 1:])):
            return False
    return _fenced_before(parent, k, dst, outer[:-1], own=False)


def _root(e: ast.Expr) -> str | None:
    name = root_name(e)
    return name.id if name is not None else None


# ----------------------------------------------------------------------------- proofs

def proven(c: Candidate, constant: Callable[[ast.Expr], int | None],
           sizes: Sequence[ast.Expr]) -> bool:
    """Whether the copy ``c`` writes no element that another access of its
    destination in the list touches, and no element twice before the barrier.
    ``constant``: the value of a constant expression of the program where the copy
    is, else None; ``sizes``: the destination's declared extents."""
    def resolve(n: ast.Name) -> ast.Expr | None:
        v = constant(n) if n.id in c.fixed else None
        return ast.Literal(v) if v is not None else None

    def sym(e: ast.Expr, tag: str, shared: Callable[[str], bool]) -> sympy.Expr | None:
        x = to_sympy(e, resolve)
        if x is None:
            return None
        return x.subs({v: sympy.Symbol(f"{v.name}__{tag}", integer=True)
                       for v in x.free_symbols if not shared(v.name)})

    mine = _flat(c.stmt.target)
    for index, same in c.others:
        def shared(name: str, same: bool = same) -> bool:
            return name in c.fixed and name not in c.inner_names \
                and (same or name not in c.list_names)
        other = _flat(index)
        if len(other) != len(mine) or not any(
                _apart(sym(a, "c", shared), sym(b, "o", shared))
                for a, b in zip(mine, other, strict=True)):
            return False
    return _injective(c, mine, resolve, constant, sizes)


def _flat(e: ast.Index) -> list[ast.Expr]:
    return [i for grp in e.groups for i in grp]


def _apart(a: sympy.Expr | None, b: sympy.Expr | None) -> bool:
    """Whether ``a - b`` is never zero for integer values of its names (GCD test)."""
    if a is None or b is None:
        return False
    terms = dict(sympy.expand(a - b).as_coefficients_dict())
    const = terms.pop(sympy.Integer(1), sympy.Integer(0))
    if not const.is_integer or not all(isinstance(t, sympy.Symbol) and k.is_integer
                                       for t, k in terms.items()):
        return False
    g = math.gcd(*(int(k) for k in terms.values())) if terms else 0
    return int(const) != 0 if g == 0 else int(const) % g != 0


def _injective(c: Candidate, index: list[ast.Expr],
               resolve: Callable[[ast.Name], ast.Expr | None],
               constant: Callable[[ast.Expr], int | None],
               sizes: Sequence[ast.Expr]) -> bool:
    """Whether the loops around the copy never write one element twice: its flat
    index is linear in their variables, each with a constant trip count, and the
    steps are mixed-radix (each larger than the span of the smaller ones)."""
    extents = [constant(s) for s in sizes]
    if None in extents or len(extents) != len(index):
        return False
    flat: sympy.Expr = sympy.Integer(0)
    for e, extent in zip(index, extents, strict=True):
        term = to_sympy(e, resolve)
        if term is None:
            return False
        flat = flat * extent + term
    flat = sympy.expand(flat)
    steps = []
    for lp in c.loops:
        head = _counted(lp, constant)
        if head is None:
            return False
        var, trips = head
        step = flat.coeff(symbol(var))
        if not step.is_integer or step.free_symbols:
            return False
        if trips > 1:
            steps.append((abs(int(step)), trips))
    span = 0
    for step, trips in sorted(steps):
        if step <= span:
            return False
        span += step * (trips - 1)
    return True


def _counted(lp: ast.For, constant: Callable[[ast.Expr], int | None]) -> tuple[str, int] | None:
    """``for (int v = a; v < b; v++)`` with constant ``a`` and ``b``: (v, b - a)."""
    head = counted_loop(lp)
    if head is None:
        return None
    var, start, end, inclusive = head
    a, b = constant(start), constant(end)
    if a is None or b is None:
        return None
    return var, max(0, b - a + (1 if inclusive else 0))
