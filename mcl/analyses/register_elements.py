"""Which elements of a kernel's register arrays take a register of their own: those
read by something that is used (:func:`unused_elements`, :func:`dead_reads`), and of
a fragment read through a sliding window, only the window (:func:`passed_elements`).
The register estimate (:mod:`mcl.analyses.registers`) counts what is left."""

from __future__ import annotations

import itertools
import math
from typing import Any

import sympy

from mcl.analyses.kernel import Kernel, once_per_kernel
from mcl.analyses.stats import register_spaces


@once_per_kernel
def fragments(k: Kernel) -> set[str]:
    """The register arrays set (``=``, not updated) from reads of an on-chip memory:
    shared, local, constant; not the device memory, not registers (``aFrag[ei] =
    l_a[...]``; not the accumulators ``acc[e] += filter[y, x] * col[e + y]``)."""
    from mcl.analyses.stats import main_space
    from mcl.mcpl import ast
    device = main_space(k)
    spaces = register_spaces(k.hardware)
    by_node = {id(a.node): a for a in k.accesses}
    out: set[str] = set()
    for s in ast.walk(k.function.body):
        if not isinstance(s, ast.Assign) or s.op != "=":
            continue
        target = by_node.get(id(s.target))
        if target is not None and target.space in spaces and any(
                (a := by_node.get(id(x))) is not None and not a.write
                and on_chip_memory(a.space, spaces, device)
                for x in ast.walk(s.value)):
            out.add(target.name)
    return out


def on_chip_memory(space: str | None, spaces, device: str | None) -> bool:
    """Whether ``space`` is an addressable on-chip memory (shared, local, constant):
    neither one of the register ``spaces`` nor the ``device`` memory."""
    return space not in spaces and space != device


#: register-array accesses enumerated over at most this many iterations
ENUMERATED = 4096


@once_per_kernel
def unused_elements(k: Kernel) -> dict[str, int]:
    """Per register array, the elements that no statement reads except the ones
    updating that array: the compiler removes the computations of values nothing
    uses (matmul hopper v6 with tn = 16 stores 8 of its 16 columns of sums: the
    other 64 accumulators take no register). One step only: an element read solely
    to update elements nothing uses still counts. An array read at an element that
    cannot be enumerated (an index of a run-time loop) counts in full. A statement
    that reads a register array beyond its extent (``sums[2]`` of a ``float[1]``:
    a sweep variant that shrinks the array under code written for four) computes
    an undefined value: the compiler folds the read to one and drops what only fed
    it, so its reads of register arrays use no element (reduction hopper v2 with
    unroll = 1 and 2: 10 registers, the loop that filled ``sums`` gone)."""
    from mcl.mcpl import ast
    spaces = register_spaces(k.hardware)
    sizes = {d.node.name: int(d.elements) for d in k.decls
             if d.node.type.is_array and d.space in spaces
             and d.elements is not None and d.elements.is_number}
    if not sizes:
        return {}
    by_node = {id(a.node): a for a in k.accesses}
    updating: dict[int, str | None] = {}     # node id -> the array its statement sets
    statement: dict[int, int] = {}           # node id -> its statement
    for s in ast.walk(k.function.body):
        if isinstance(s, ast.Assign):
            target = by_node.get(id(s.target))
            name = target.name if target is not None else None
            for x in (s.target, *ast.walk(s.value)):
                updating[id(x)] = name
                statement[id(x)] = id(s)
    undefined = {statement.get(id(a.node)) for a in k.accesses
                 if not a.write and a.name in sizes and _beyond(a)} - {None}
    used: dict[str, set | None] = {}
    for a in k.accesses:
        if a.write or a.name not in sizes or updating.get(id(a.node)) == a.name \
                or statement.get(id(a.node)) in undefined:
            continue
        if used.get(a.name, set()) is None:
            continue
        reached = elements(a)
        used[a.name] = None if reached is None else used.get(a.name, set()) | reached
    unused = {}
    for name, size in sizes.items():
        seen = used.get(name, set())       # None: an element that cannot be enumerated
        if seen is not None and len(seen) < size:
            unused[name] = size - len(seen)
    return unused


def _beyond(a: Any) -> bool:
    """Whether a register-array access reads beyond the array in every iteration of
    its loops (its flat offset, as the generated code computes it). Where only some
    iterations do (``sums[ei, 4 h + v]`` of a ``float[8, 4]`` in matmul hopper v6
    with tn = 4: the next row's elements, beyond only for the last row), the
    compiler keeps the statement (83 registers, every sum kept)."""
    reached = elements(a)
    if not reached or any(n is None or not sympy.sympify(n).is_number for n in a.sizes):
        return False
    sizes = [int(n) for n in a.sizes]

    def flat(e: tuple[int, ...]) -> int:      # the generated code's flat offset
        out = 0
        for i, n in zip(e, sizes, strict=False):
            out = out * n + i
        return out
    return all(not 0 <= flat(e) < math.prod(sizes) for e in reached)


@once_per_kernel
def dead_reads(k: Kernel) -> set[int]:
    """The reads (``id`` of their nodes) that only feed register arrays whose
    elements nothing uses (:func:`unused_elements`): the compiler removes them,
    with the addresses they need and the loops that do nothing else."""
    from mcl.mcpl import ast
    spaces = register_spaces(k.hardware)
    unused = unused_elements(k)
    dead = {d.node.name for d in k.decls if d.node.type.is_array and d.space in spaces
            and d.elements is not None and d.elements.is_number
            and unused.get(d.node.name, 0) >= int(d.elements) > 0}
    if not dead:
        return set()
    by_node = {id(a.node): a for a in k.accesses}
    out: set[int] = set()
    for s in ast.walk(k.function.body):
        if isinstance(s, ast.Assign):
            target = by_node.get(id(s.target))
            if target is not None and target.name in dead:
                out.update(id(x) for x in ast.walk(s.value))
    # scalars read only there (``float xj = x[j]``, used by ``ta[u] += A[i, j] * xj``)
    read_elsewhere = {x.id for x in ast.walk(k.function.body)
                      if isinstance(x, ast.Name) and id(x) not in out}
    for s in ast.walk(k.function.body):
        if isinstance(s, ast.Declaration) and s.init is not None and \
                not s.type.is_array and s.name not in read_elsewhere:
            out.update(id(x) for x in ast.walk(s.init))
    return out


def elements(a: Any) -> set[tuple[int, ...]] | None:
    """The index tuples a register-array access reaches over its constant loops, or
    None where an index is not a function of constant loops."""
    if any(i is None for i in a.indices):
        return None
    free = set().union(*(sympy.sympify(i).free_symbols for i in a.indices))
    ranges = []
    for s in free:
        lp = next((lp for lp in a.loops if lp.var == s.name), None)
        if lp is None or any(v is None or not sympy.sympify(v).is_number
                             for v in (lp.trips, lp.start, lp.step)):
            return None
        ranges.append((s, [lp.start + lp.step * i for i in range(int(lp.trips))]))
    if math.prod(len(r) for _, r in ranges) > ENUMERATED:
        return None
    symbols = [s for s, _ in ranges]
    at = [sympy.lambdify(symbols, i) for i in a.indices]
    out = set()
    for values in itertools.product(*(r for _, r in ranges)):
        try:
            out.add(tuple(int(f(*values)) for f in at))
        except (TypeError, ValueError, ZeroDivisionError, OverflowError):
            return None     # an index not defined everywhere (a division by zero)
    return out


@once_per_kernel
def passed_elements(k: Kernel) -> dict[str, int]:
    """Per register array read through a sliding window, the elements that need no
    register of their own: those the window has passed or not reached yet.

    A fragment copied from an on-chip memory and read once, at an index that
    combines the indices of two or more constant loops that do not enclose the
    copy (``col[e + y]`` for e = 0 .. rows - 1 and y = 0 .. fh - 1, convolution
    hopper v1), is read in an order in which each element is used over a short
    stretch: the compiler loads an element from the on-chip memory when the
    window reaches it and reuses its register once the window has passed, so
    only the elements whose first and last use bracket one iteration are live
    together (fh of the rows + fh - 1 of col; the NVIDIA compiler takes 32
    registers for rows = 8, where the whole fragment would need 44). A fragment
    read at the index of one loop (``aFrag[ei]``), or whose window comes round
    again in an enclosing loop (``line[c + x]`` for every output row e,
    convolution hopper v2), keeps all its elements: :func:`live_elements` finds
    them all live."""
    spaces = register_spaces(k.hardware)
    sizes = {d.node.name: int(d.elements) for d in k.decls
             if d.node.type.is_array and d.space in spaces
             and d.elements is not None and d.elements.is_number}
    reads: dict[str, list] = {}
    writes: dict[str, list] = {}
    for a in k.accesses:
        if a.name in sizes:
            (writes if a.write else reads).setdefault(a.name, []).append(a)
    out = {}
    frags = fragments(k)
    for name in sizes:
        if name not in frags or len(reads.get(name, ())) != 1:
            continue
        a = reads[name][0]
        copying = {id(lp.node) for w in writes[name] for lp in w.loops}
        nest = [lp for lp in a.loops if id(lp.node) not in copying]
        if not nest or any(lp.var is None or any(v is None or not sympy.sympify(v).is_number
                                                  for v in (lp.trips, lp.start, lp.step))
                           for lp in nest):
            continue
        window = {lp.var for lp in nest}
        if not any(len({s.name for s in sympy.sympify(i).free_symbols} & window) >= 2
                   for i in a.indices if i is not None):
            continue
        live = live_elements(a, nest)      # (elements used, most live at once)
        if live is not None and live[1] < live[0]:
            out[name] = live[0] - live[1]
    return out


def live_elements(a: Any, nest: list) -> tuple[int, int] | None:
    """The elements a register-array read uses over the iterations of ``nest``
    (constant loops, outermost first) taken in order, and the most of them live at
    once, each live from its first use to its last; None where the indices cannot
    be enumerated. (Elements never read are :func:`unused_elements`' business.)"""
    if math.prod(int(lp.trips) for lp in nest) > ENUMERATED:
        return None
    symbols = [sympy.Symbol(lp.var, integer=True) for lp in nest]
    names = {lp.var: s for lp, s in zip(nest, symbols, strict=True)}
    index = []
    for i in a.indices:
        e = sympy.sympify(i)
        e = e.subs({s: names[s.name] for s in e.free_symbols if s.name in names})
        if e.free_symbols - set(symbols):
            return None
        index.append(sympy.lambdify(symbols, e))
    first: dict[tuple, int] = {}
    last: dict[tuple, int] = {}
    ranges = [[lp.start + lp.step * j for j in range(int(lp.trips))] for lp in nest]
    for pos, values in enumerate(itertools.product(*ranges)):
        key = tuple(int(f(*values)) for f in index)
        first.setdefault(key, pos)
        last[key] = pos
    starts = sorted(first.values())
    ends = sorted(last.values())
    live = most = j = 0
    for s in starts:                 # a sweep over the intervals [first, last]
        while j < len(ends) and ends[j] < s:
            live -= 1
            j += 1
        live += 1
        most = max(most, live)
    return len(first), most
