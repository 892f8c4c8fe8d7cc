"""Bounds tests in the loops of a kernel: arrays of the parameters read or written
inside a sequential loop behind a condition on the same variables as the index
(``if (i < n && k < p) aNext[u] = a[i, k];``).

Each such test runs on every iteration of the loop, and it keeps the code generator
from turning a run of 4 adjacent elements into a bare 128-bit access: the vector path
is taken only after the test of the run's last element and a run-time test of its
alignment, with the element-by-element form beside it (mcl.opencl.vectorize). A
version for sizes that are multiples of its tiles needs none of it: reading the
arrays through views whose innermost extent is a tile (``a as float[n, p / bk, bk]``)
makes every run provably aligned, and ``--specialize`` builds the sizes into the
code. The pass names the loop, the arrays and how many guarded accesses each of
its iterations makes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import sympy

from mcl.analyses.kernel_syntax import names_in
from mcl.diagnostics import Diagnostic, info
from mcl.mcpl import ast
from mcl.mcpl.printer import print_expr

#: fewer guarded accesses per iteration than this are not worth a message
MIN_ACCESSES = 4


@dataclass
class GuardedLoop:
    """A sequential loop (the outermost of its nest inside the kernel's foreach
    loops) and the guarded accesses to parameter arrays in its body."""

    loop: ast.Stmt
    accesses: list[ast.Index] = field(default_factory=list)

    @property
    def arrays(self) -> list[str]:
        return sorted({a.base.id for a in self.accesses if isinstance(a.base, ast.Name)})


def guarded_loops(f: ast.Function, folded: frozenset[str] = frozenset()) -> list[GuardedLoop]:
    """The sequential loops of ``f`` with accesses to its array parameters behind
    bounds tests inside them, outermost loops of each nest, in source order. A test
    on nothing but ``folded`` names (indices of loops the generator unrolls, sizes)
    is decided when the code is unrolled and specialised, and is not counted
    (``if (y >= 0 && y < fh)`` with ``y = r - e`` in unrolled loops r and e)."""
    arrays = {p.name for p in f.params if p.type.is_array}
    found: dict[int, GuardedLoop] = {}

    def resolved(start: set[str], defs: dict[str, set[str]]) -> set[str]:
        names: set[str] = set()
        todo = list(start)
        while todo:   # through the integer declarations the names use (int k = k1 + u)
            n = todo.pop()
            if n not in names:
                names.add(n)
                todo += defs.get(n, ())
        return names

    def index_names(idx: ast.Index, defs: dict[str, set[str]]) -> set[str]:
        return resolved({n for grp in idx.groups for i in grp for n in names_in(i)}, defs)

    def visit(s: ast.Stmt | None, outer: ast.Stmt | None, conds: list[set[str]],
              defs: dict[str, set[str]]) -> None:
        if s is None:
            return
        if isinstance(s, ast.Block):
            inner = dict(defs)
            for st in s.statements:
                visit(st, outer, conds, inner)
                if isinstance(st, ast.Declaration) and st.init is not None:
                    inner[st.name] = names_in(st.init)
            return
        if isinstance(s, ast.ForEach):
            visit(s.body, outer, conds, defs)
            return
        if isinstance(s, ast.For | ast.While):
            loop = outer if outer is not None else s
            visit(s.body, loop, conds, defs)
            return
        if isinstance(s, ast.If):
            # only tests made inside a loop run once per iteration, and only those
            # not decided at build time
            test = names_in(s.cond)
            runs = outer is not None and not {n for n in resolved(test, defs)
                                              if n not in defs} <= folded
            guard = conds + [test] if runs else conds
            visit(s.then, outer, guard, defs)
            visit(s.orelse, outer, guard, defs)
            return
        if outer is None or not conds:
            return
        for node in ast.walk(s):
            if isinstance(node, ast.Index) and isinstance(node.base, ast.Name) \
                    and node.base.id in arrays:
                used = index_names(node, defs)
                if any(c & used for c in conds):
                    entry = found.setdefault(id(outer), GuardedLoop(outer))
                    entry.accesses.append(node)

    visit(f.body, None, [], {})
    return list(found.values())


def per_iteration(g: GuardedLoop, kernel: Any) -> int:
    """Guarded accesses one iteration of ``g``'s loop makes: each access counted as
    often as the loops between it and ``g`` run (``kernel``: mcl.analyses.kernel.Kernel
    with numbers; a loop whose trip count is not a number counts once)."""
    total = 0
    for node in g.accesses:
        acc = next((a for a in kernel.accesses if a.node is node), None)
        times = 1
        if acc is not None:
            inner = False
            for lp in acc.loops:
                if lp.node is g.loop:
                    inner = True
                elif inner and lp.trips is not None and getattr(lp.trips, "is_Integer", False):
                    times *= int(lp.trips)
        total += times
    return total


def _accesses(g: GuardedLoop, kernel: Any) -> list[Any]:
    """The mcl.analyses.kernel accesses of ``g``'s guarded accesses."""
    by_node = {id(a.node): a for a in kernel.accesses}
    return [by_node[id(n)] for n in g.accesses if id(n) in by_node]


def _tiled_view(f: ast.Function, name: str) -> str:
    """A view of the parameter ``name`` of ``f`` whose innermost extent is a tile ``T``
    (``a as float[n, p / T, T] aT;``), as the help text writes it."""
    param = next((p for p in f.params if p.name == name), None)
    if param is None or not param.type.dims:
        return "a view such as `a as float[n, p / T, T] aT;`"
    dims = [print_expr(e) for e in param.type.sizes]
    last = dims[-1] if len(dims[-1].split()) == 1 else f"({dims[-1]})"
    return f"`{name} as {param.type.name}[{', '.join(dims[:-1] + [f'{last} / T', 'T'])}] " \
        f"{name}T;`, T the run or tile"


def run_loop(acc: Any) -> Any:
    """The loop that makes ``acc`` (mcl.analyses.kernel.Access) a run of adjacent
    elements the generator can read or write as one 128-bit access: its innermost loop,
    counted, of a multiple of 4 iterations (mcl.analyses.warp_lanes.RUN) in steps of 1,
    along which the offset steps by one element; else None."""
    from mcl.analyses.warp_lanes import RUN
    if not acc.loops or acc.offset is None:
        return None
    run = acc.loops[-1]
    trips = sympy.sympify(run.trips) if run.trips is not None else None
    if run.kind != "for" or run.symbol is None or trips is None or run.step != 1 \
            or not trips.is_Integer or int(trips) % RUN:
        return None
    return run if sympy.diff(acc.offset, run.symbol) == 1 else None


#: loops of at most this many iterations are short (unrolled, run once per thread)
SHORT = 32


def _short(loop: Any) -> bool:
    """Whether ``loop`` (mcl.analyses.kernel.Loop, or None) has a constant trip count of
    at most SHORT."""
    trips = getattr(loop, "trips", None)
    return getattr(trips, "is_Integer", False) and int(trips) <= SHORT


def report(f: ast.Function, kernel: Any, sym: Any) -> list[Diagnostic]:
    """A message per loop whose iterations make at least MIN_ACCESSES guarded accesses:
    the long loops where there are any (a short loop beside them, such as a prologue
    that loads the first tile, is not where the time goes); else the short ones, which
    then hold the thread's whole work (convolution hopper_v3 reads its input rows in
    a loop of rows + fh - 1 = 12 iterations). ``kernel`` has the sizes' values;
    ``sym``, the kernel with sizes as symbols, tells the runs the generator reads as
    128-bit accesses: their loops' trip counts are numbers whatever the sizes (not
    matmul xeon_phi_v3's ``kk < min(kb, p - k0)``)."""
    folded = frozenset({lp.var for lp in kernel.loops
                        if lp.kind == "for" and lp.var and _short(lp)}
                       | {p.name for p in f.params if not p.type.is_array})
    by_node = {id(x.node): x for x in kernel.loops}
    found, long_nest = [], False
    for g in guarded_loops(f, folded):
        lp = by_node.get(id(g.loop))
        short = _short(lp)
        if short and not all(_short(by_node.get(id(n))) for n in ast.walk(g.loop)
                             if isinstance(n, ast.For | ast.While) and n is not g.loop):
            long_nest = True    # a short loop around a long one: not a message of its own
            continue
        long_nest = long_nest or not short
        count = per_iteration(g, kernel)
        if count >= MIN_ACCESSES:
            found.append((g, lp, short, count))
    if long_nest:
        found = [x for x in found if not x[2]]

    from mcl.analyses.functions import KernelView
    from mcl.analyses.warp_lanes import vector_loop

    # the runs the generator makes 128-bit accesses: the question it asks of a loop
    kview = KernelView(sym, kernel, kernel.hardware)
    out = []
    for g, lp, _, count in found:
        names = ", ".join(g.arrays)
        var = lp.var if lp is not None and lp.var else "while"
        runs = [a for a in _accesses(g, sym)
                if run_loop(a) is not None and vector_loop(kview, a) is not None]
        vector = (", and a run of 4 adjacent elements among them "
                  f"({runs[0].text}) becomes a 128-bit access only after a run-time test "
                  "of its alignment (with the element-by-element code beside it)"
                  if runs else "")
        view = (f"read and write through views whose innermost extent is a tile "
                f"({_tiled_view(f, runs[0].name)}), which also makes the alignment "
                "provable; " if runs else "")
        out.append(info(
            "feedback-guards",
            f"{count} accesses to {names} per iteration of loop {var} sit behind bounds "
            f"tests: every iteration evaluates them{vector}",
            g.loop.span,
            f"for sizes that are multiples of the tiles, a version without the tests: "
            f"{view}`--specialize` builds the sizes into the code"))
    return out
