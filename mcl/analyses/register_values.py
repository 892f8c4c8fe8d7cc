"""The registers a kernel's own values take (:func:`mcl.analyses.registers.register_demand`
counts them): one per named value the compiler keeps (scalars, used register-array
elements, loop indices; not the constants it folds into instructions:
:func:`named_registers`) and two per 64-bit address of device memory that a loop keeps
(:func:`address_registers`); which of them a build specialised to its sizes folds
(:func:`specialised_sizes`, :func:`_unrolled_indices`,
:func:`_constants_without_register`).
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import sympy

from mcl.analyses.kernel import Kernel
from mcl.analyses.kernel_syntax import names_in
from mcl.analyses.register_elements import (
    ENUMERATED,
    dead_reads,
    passed_elements,
    unused_elements,
)
from mcl.analyses.stats import register_spaces
from mcl.mcpl import ast


def named_registers(k: Kernel, sym: Kernel | None = None) -> int:
    """Registers for the kernel's named values: each scalar of the function (wider
    types in 32-bit parts) except the constants that take none
    (:func:`_constants_without_register`), each element of a register array that is
    used (:func:`unused_elements` are dropped), each loop index. (Addresses:
    :func:`address_registers`.)"""
    names: dict[str, int] = dict(array_elements(k))
    unrolled, folded = _unrolled_indices(k, sym)
    known = _constants_without_register(k, sym, unrolled)
    for d in k.decls:
        if d.symbol is not None and d.symbol.kind == "param":
            continue
        if not d.node.type.is_array and d.node.name not in known:
            names[d.node.name] = max(1, d.element_bytes // 4)
    for lp in k.loops:
        if lp.var and lp.var not in folded:
            names.setdefault(lp.var, 1)
    return sum(names.values())


def array_elements(k: Kernel) -> dict[str, int]:
    """Per register array of the kernel, the elements that are used
    (:func:`unused_elements` and those a sliding window passes on dropped; an array of
    a size not known counts one)."""
    spaces = register_spaces(k.hardware)
    unused = dict(unused_elements(k))
    for name, n in passed_elements(k).items():
        unused[name] = unused.get(name, 0) + n
    out: dict[str, int] = {}
    for d in k.decls:
        if d.node.type.is_array and d.space in spaces and \
                (d.symbol is None or d.symbol.kind != "param"):
            n = d.elements
            count = int(n) if n is not None and n.is_number else 1
            out[d.node.name] = max(0, count - unused.get(d.node.name, 0))
    return out


def specialised_sizes(sym: Kernel | None) -> set[str]:
    """The sizes a kernel built specialised has as compile-time constants
    (:func:`mcl.analyses.unrolled.build_time_sizes`); none for other builds."""
    from mcl.analyses.unrolled import build_time_sizes
    return build_time_sizes(sym) if sym is not None and sym.specialized else set()


def _unrolled_indices(k: Kernel, sym: Kernel | None) -> tuple[set[str], set[str]]:
    """In a kernel built specialised, the variables of loops the generated code
    unrolls completely (:func:`mcl.analyses.unrolled.unrolled`; every loop of that
    name), and those of them that take no register: whose loops have no loop around
    them that the generated code keeps (only foreach loops and completely unrolled
    ones), so each copy of the body has its index as a constant (convolution hopper
    v4, 40 registers, where counting its six indices gives 50). Empty for other
    builds; and an unrolled nest inside a kept loop keeps its indices: there their
    count stands for values the compiler keeps that the estimate does not see
    (tried: see register_demand)."""
    from mcl.analyses.unrolled import unrolled
    from mcl.mcpl import ast
    built = specialised_sizes(sym)
    if not built:
        return set(), set()
    sym_loops = {id(lp.node): lp for lp in sym.loops}
    whole = {id(lp.node) for lp in k.loops
             if unrolled(sym_loops.get(id(lp.node)), lp, built)}
    inside = {id(lp.node): {id(x) for x in ast.walk(lp.node)} for lp in k.loops}
    kept = {lp.var for lp in k.loops if lp.var and id(lp.node) not in whole}
    indices = {lp.var for lp in k.loops if lp.var and id(lp.node) in whole} - kept
    outer_run_time = {lp.var for lp in k.loops if lp.var in indices and any(
        id(lp.node) in inside[id(o.node)] for o in k.loops
        if o is not lp and o.kind != "foreach" and id(o.node) not in whole)}
    return indices, indices - outer_run_time


#: bytes of an address of device memory (two 32-bit registers)
ADDRESS_BYTES = 8


def address_registers(k: Kernel, sym: Kernel | None) -> int:
    """Registers for the addresses of device memory the kernel keeps: two (a 64-bit
    address) per address a loop of run-time trip count uses, per array otherwise.

    In a loop whose trip count is known only at run time, each access of device
    memory takes its address from a register that steps with the loop. Where the
    access is inside constant-trip loops in that loop (which the compiler unrolls),
    each iteration of those loops is an instance of the access, and instances
    whose offsets differ by a constant share one address (the difference is an
    immediate of the load: ``a[i, k1 + aq + u]`` for u = 0 .. 3 is one address;
    ``a[i + 16 s, k0 + q]`` for s = 0 .. 3, rows a run-time width ``p`` apart, is
    four: matmul hopper v1 keeps one per row it copies into shared memory). The
    offsets come from the symbolic kernel ``sym`` (sizes the kernel is built with
    count as constants). An array accessed only outside such loops counts one
    address; without ``sym``, every array parameter does."""
    words = ADDRESS_BYTES // 4
    if sym is None:
        return words * sum(1 for p in k.function.params if p.type.is_array)
    in_loops, elsewhere = _addresses(k, sym)
    arrays = {name for name, _ in in_loops}
    return words * (len(in_loops) + len(elsewhere - arrays))


def recomputable_addresses(k: Kernel, sym: Kernel) -> int:
    """Registers of the addresses a run-time loop keeps beyond one per array
    (:func:`address_registers`): each is the array's first address plus a run-time
    multiple of a size, which the compiler can compute again where it needs the
    register for something else."""
    in_loops, _ = _addresses(k, sym)
    return ADDRESS_BYTES // 4 * (len(in_loops) - len({name for name, _ in in_loops}))


def _addresses(k: Kernel, sym: Kernel) -> tuple[set[tuple[str, Any]], set[str]]:
    """The addresses of device memory that loops of run-time trip count use, as
    (array, offset less its constant term), and the arrays accessed elsewhere."""
    from mcl.analyses.stats import main_space
    from mcl.analyses.unrolled import build_time_sizes, unrolled
    device = main_space(k)
    built = build_time_sizes(sym)
    sym_loops = {id(lp.node): lp for lp in sym.loops}
    constant = {id(lp.node) for lp in k.loops
                if unrolled(sym_loops.get(id(lp.node)), lp, built)}
    fixed = {s: v for s, v in k.values.items() if s in built}
    by_node = {id(a.node): a for a in sym.accesses}
    in_loops: set[tuple[str, Any]] = set()
    elsewhere: set[str] = set()
    dead = dead_reads(k)
    for a in k.accesses:
        if a.space != device or id(a.node) in dead:
            continue
        name = a.symbol.name if a.symbol is not None else a.name
        loops = [lp for lp in a.loops if lp.kind != "foreach"]
        s = by_node.get(id(a.node))
        if s is None or s.offset is None or all(id(lp.node) in constant for lp in loops):
            elsewhere.add(name)
            continue
        inner: list = []
        for lp in reversed(loops):
            if id(lp.node) not in constant or lp.trips is None or not lp.trips.is_number:
                break
            inner.insert(0, lp)
        in_loops |= {(name, x) for x in _address_parts(s.offset, inner, fixed)}
    return in_loops, elsewhere


def _address_parts(offset: sympy.Expr, loops: list, fixed: dict[str, int]) -> set[Any]:
    """The offsets of an access over the iterations of the unrolled ``loops`` around
    it, less their constant terms (offsets that differ by a constant share an
    address register); its offset itself where they are too many to enumerate."""
    e = sympy.sympify(offset)
    e = e.subs({s: fixed[s.name] for s in e.free_symbols if s.name in fixed})
    ranges = []
    for lp in loops:
        var = next((s for s in e.free_symbols if s.name == lp.var), None)
        if var is not None:
            values = lp.index_values()
            ranges.append((var, values if values is not None else
                           [lp.start + lp.step * i for i in range(int(lp.trips))]))
    if math.prod(len(r) for _, r in ranges) > ENUMERATED:
        return {e}
    symbols = [v for v, _ in ranges]
    return {sympy.expand(e.subs(dict(zip(symbols, values, strict=True)))).as_coeff_Add()[1]
            for values in itertools.product(*(r for _, r in ranges))}


def _constants_without_register(k: Kernel, sym: Kernel | None = None,
                                unrolled: set[str] = frozenset()) -> set[str]:
    """The ``const`` scalars that take no register: those whose initializer names no
    parameter, no variable and no constant computed from one (``const int nrThreads
    = nrWarps * 32``: the compiler folds them into the instructions), and those that
    the threads' code never reads, only the sizes of foreach loops, other
    constants' initializers and the outermost extents of arrays and views (no
    stride of an address) do (``const int nrBlocks = (n + 255) / 256`` as the
    number of blocks: the launch's business). A constant computed from a parameter
    that the code reads (``const int stride = chunk * nrBlocks``) is a value the
    compiler keeps, as a variable is. In a kernel built specialised (``sym``
    built so), the sizes are no parameters but compile-time constants
    (:func:`specialised_sizes`), and a variable set once, at its declaration, from
    constants, sizes and the indices of completely unrolled loops (``unrolled``:
    :func:`_unrolled_indices`) is folded too (``float scale = 1.0 / (fh * fw)``;
    ``int y = r - e`` in each unrolled copy)."""
    outside: set[int] = set()      # nodes the threads do not evaluate
    for s in ast.walk(k.function.body):
        if isinstance(s, ast.ForEach):
            outside.update(id(x) for x in ast.walk(s.size))
        elif isinstance(s, ast.Declaration) and s.const and s.init is not None:
            outside.update(id(x) for x in ast.walk(s.init))
        elif isinstance(s, ast.Type) and s.sizes:
            outside.update(id(x) for x in ast.walk(s.sizes[0]))   # no stride
    read = {x.id for x in ast.walk(k.function.body)
            if isinstance(x, ast.Name) and id(x) not in outside}
    return _folded_names(k, sym, unrolled, read)[0]


def run_time_names(k: Kernel, sym: Kernel | None = None) -> set[str]:
    """The scalars whose values are known only at run time: the parameters a build
    does not build in and the constants and variables computed from them."""
    return _folded_names(k, sym, set())[1]


def _folded_names(k: Kernel, sym: Kernel | None, unrolled: set[str],
                  read: set[str] | None = None) -> tuple[set[str], set[str]]:
    """(scalars that take no register, scalars known only at run time), as
    :func:`_constants_without_register` tells them apart (``read``: the names the
    threads' code reads; a constant it does not read takes none)."""
    from mcl.analyses.kernel_syntax import assigned_names
    built = specialised_sizes(sym)
    run_time = {p.name for p in k.function.params} - built
    assigned = assigned_names(k.function)
    free: set[str] = set()
    for d in k.decls:
        node = d.node
        if node.type.is_array:
            continue
        names = names_in(node.init) if node.init is not None else set()
        if node.const and not names & run_time:
            free.add(node.name)
            continue
        if built and not node.const and node.init is not None and \
                node.name not in assigned and names <= free | built | unrolled:
            free.add(node.name)     # folded, in each unrolled copy (``int y = r - e``)
            continue
        run_time.add(node.name)
        if read is not None and node.const and node.name not in read:
            free.add(node.name)
    return free, run_time
