"""Loops the generated code unrolls completely, and the loads of read-only arrays
that the OpenCL compiler then merges across their iterations.

The OpenCL generator puts ``#pragma unroll`` on a counted loop (``for (int y = 0;
y < fh; y++)``) whose trip count is known when the kernel is built: a constant, or
sizes that the generator builds in (those that size an array declared in the
kernel, and all of them where the kernel is built specialised). Unrolled, each
iteration's address of a read-only array is a compile-time offset from the same
base, and the compiler loads each distinct element once per run of the unrolled
nest, keeping it in a register (a 9 x 9 filter read in loops over its rows and
columns, inside a loop over 8 output rows: 81 loads, not 648).
It does so only where no run-time condition separates the iterations: loads inside
``if (i < h)`` in an unrolled loop stay one per iteration; a condition that
unrolling decides (``if (r - e >= 0)`` on the unrolled loops' variables) does not
separate them. A loop of one iteration counts as unrolled.
"""

from __future__ import annotations

import sympy

from mcl.analyses.kernel import Access, Kernel, Loop
from mcl.opencl.vectorize import MAX_UNROLL, counted_loop

#: more combinations of the unrolled loops than this: not evaluated (no merging)
MAX_COMBINATIONS = 4096


def build_time_sizes(sym: Kernel) -> set[str]:
    """The parameters the generator builds into the kernel: those that size an array
    declared in its body, and every const integer parameter of a kernel built
    specialised."""
    out: set[str] = set()
    if sym.specialized:
        out |= {p.name for p in sym.function.params
                if p.const and not p.type.is_array and p.type.name in ("int", "long")}
    for d in sym.decls:
        if d.node.type.is_array and d.elements is not None:
            out |= {s.name for s in sympy.sympify(d.elements).free_symbols}
    return out


def _known(e, sizes: set[str]) -> bool:
    return e is None or {s.name for s in sympy.sympify(e).free_symbols} <= sizes


def unrolled(sym_loop: Loop | None, loop: Loop, sizes: set[str]) -> bool:
    """Whether the generated code unrolls ``loop`` completely (``sym_loop``: the same
    loop in the symbolic kernel; ``sizes``: the built-in sizes)."""
    if loop.kind != "for" or sym_loop is None or loop.trips is None:
        return False
    trips = sympy.sympify(loop.trips)
    if not trips.is_number or not 1 <= int(trips) <= MAX_UNROLL:
        return False
    if not all(_known(e, sizes) for e in (sym_loop.start, sym_loop.step, sym_loop.bound)):
        return False
    return int(trips) == 1 or counted_loop(loop.node) is not None


def merged_loops(view, sacc: Access, acc: Access, lane: Loop) -> int:
    """The position in ``acc.loops`` of the outermost loop of the unrolled nest
    around ``acc`` whose iterations the compiler merges its loads across
    (``len(acc.loops)`` where there is none)."""
    sizes = build_time_sizes(view.sym)
    sym_loops = {id(lp.node): lp for lp in view.sym.loops}
    loops = acc.loops
    first = len(loops)
    while first > 0 and loops[first - 1] is not lane and \
            unrolled(sym_loops.get(id(loops[first - 1].node)), loops[first - 1], sizes):
        first -= 1
    for k in range(first, len(loops)):
        inner = {lp.symbol for lp in loops[k:] if lp.symbol is not None}
        names = {x.name for x in inner}
        # the ifs inside the nest must be decided by its loops' variables alone
        if all(c.whole and sc.whole and c.expr is not None and sc.expr is not None
               and c.expr.free_symbols <= inner
               and {x.name for x in sc.expr.free_symbols} <= names | sizes
               for c, sc in zip(acc.conditions, sacc.conditions, strict=False)
               if c.depth > k):
            return k
    return len(loops)
