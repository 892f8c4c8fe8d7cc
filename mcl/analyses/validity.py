"""What makes a kernel wrong whatever its speed, found from its constants: a loop that
never runs (its bound rounds down to nothing: what it writes is never written), a
grid of no blocks at the sizes of a run (a tile wider than the data), an
index that leaves its dimension (a tile or work-per-thread size the kernel's index
arithmetic is not written for: ``c3[ci, bj, eh * (bn / 2) + 4 * tj + e]`` of a
128-wide ``bn`` with tn = 16 reaches column 223) and a read of an element of an
array the kernel declares (a shared tile, a register array) that nothing writes
(a tile of 8 rows that 128 threads fill 4 rows of: ``l_b[0, bq, bc + 32 * u]``
with ``bq = tid / 32``). All are warnings of every ``feedback`` run, whatever
passes ``only`` selects.

An index is checked only where the analyses know every value it takes: each loop
variable it names has a numeric start, step and trip count that no other loop variable
decides, and the sizes have values. Inside ``if`` statements, only the values at which
every condition around the access holds count, where the analyses can compute the
conditions from the same loop variables (``if (i < n && k < p) l_a[0, aq + u, ar] = a[i,
k]`` with a row ``ar`` of up to 255 in a tile of 132 rows: ``i < n`` holds for it; a
``bool`` never assigned again stands for the condition it was given, ``bool more = l + 1
< nrPhases; if (more) ...``); an access under a condition they cannot compute (one on
data, or on a variable a ``while`` loop changes) is not checked, unless its index is a
constant, which no test keeps inside (``(ta[0] + ta[1]) + (ta[2] + ta[3])`` of a ``reg
float[unroll] ta`` with unroll = 2). An access in code that never runs is not checked:
under a condition that is always false or does not hold at these sizes (``if (K > 10)``,
``if (n > 100)`` with n = 64, as mcl check finds them: CheckedModule.reach_of), or in a
loop of no iterations; where one found runs only under a condition on data (``if
(flags[0] == 1)``), the warning says so.
The values are enumerated (mcl.analyses.loop_points, up to its :data:`MOST` points
per index), and the
warning names the loop variables' values of one that leaves: a proof, not an estimate."""

from __future__ import annotations

import math

import numpy as np
import sympy

from mcl.analyses import barriers
from mcl.analyses.kernel import Access, Kernel, Loop
from mcl.analyses.kernel_syntax import comparison
from mcl.analyses.loop_points import EXACT, enumerated, fractional
from mcl.analyses.output_gaps import proven_gaps
from mcl.diagnostics import Diagnostic, warning
from mcl.mcpl import ast
from mcl.mcpl.fold import fold_constant
from mcl.mcpl.printer import print_expr, print_statement

#: the codes of the warnings of a kernel wrong whatever its speed (:func:`report`)
CODES = ("feedback-empty-loop", "feedback-empty-grid", "feedback-out-of-bounds",
         "feedback-unwritten-read", "feedback-unwritten-output", "feedback-too-many-units",
         "feedback-endless-loop", barriers.CODE)


def report(sym: Kernel, num: Kernel) -> list[Diagnostic]:
    """The warnings of the symbolic kernel ``sym`` (loops that never run) and of the
    numeric one ``num`` (indices beyond their dimension, with the sizes' values)."""
    return empty_loops(sym) + empty_grids(num) + too_many_units(num) + \
        endless_loops(num) + out_of_bounds(num) + unwritten_reads(num) + \
        unwritten_outputs(num) + \
        barriers.divergent_barriers(num.function, num.hardware, num)


def empty_loops(sym: Kernel) -> list[Diagnostic]:
    """A warning at each ``for`` loop that never runs whatever the sizes: its trip
    count is 0 with the kernel's constants (``for (v = 0; v < cols / 4; v++)`` with
    ``cols = 2``), so what it writes is never written; at the outermost such loop."""
    out: list[Diagnostic] = []
    for lp in sym.loops:
        if lp.kind != "for" or lp.trips is None or lp.approximate or lp.trips != 0:
            continue
        if any(outer.trips == 0 for outer in _loops_around(sym, lp)):
            continue
        written = sorted({a.name for a in sym.accesses if a.write and lp in a.loops})
        cond = print_expr(lp.node.cond) if lp.node.cond is not None else "its condition"
        what = (f": nothing is written to {', '.join(repr(w) for w in written)} there"
                if written else "")
        out.append(warning(
            "feedback-empty-loop",
            f"{lp.label} never runs: '{cond}' is false from its start with this kernel's "
            f"constants{what}", lp.node.span,
            "a tile or work-per-thread size that this loop's bound rounds down to nothing "
            "(an integer division); choose sizes the kernel is written for"))
    return out


def endless_loops(num: Kernel) -> list[Diagnostic]:
    """A warning at each counted ``for`` loop whose step at these sizes is 0, or moves
    its index away from the bound its condition compares it with (``i < n`` and ``i -=
    1``), or whose update multiplies, divides or shifts it to a value it then keeps
    (``s >>= 0``, 0 doubled) with its condition holding, at a point of the loops around
    it where the condition holds from the start:
    there the loop never ends, and the kernel hangs (a grid-stride loop whose stride
    ``0 * nrThreads * nrBlocks`` was mistyped, found by fuzzing ``mcl run``)."""
    out: list[Diagnostic] = []
    for lp in num.loops:
        if lp.kind == "while" and _forever(lp.node):
            out.append(warning(
                "feedback-endless-loop",
                f"the while loop never ends: its condition "
                f"'{print_expr(lp.node.cond)}' is always true and nothing in it leaves it "
                "(no break or return)", lp.node.span,
                "launched, the kernel would hang: give the loop a condition that becomes "
                "false, or a break"))
            continue
        if lp.kind == "for" and lp.stuck is not None:
            update = print_statement(lp.node.update).rstrip(";")
            out.append(warning(
                "feedback-endless-loop",
                f"{lp.label} never ends: its update ('{update}') leaves {lp.var} at "
                f"{lp.stuck}, where '{print_expr(lp.node.cond)}' holds", lp.node.span,
                "an update that multiplies, divides or shifts the index by a factor that "
                "leaves it as it is; launched, the kernel would hang"))
            continue
        if lp.kind != "for" or lp.step is None or lp.start is None or lp.bound is None:
            continue
        found = comparison(lp.node.cond, lp.var)
        if found is None or found[0] not in ("<", "<=", ">", ">="):
            continue
        up = found[0] in ("<", "<=")
        values = enumerated((lp.step, lp.start, lp.bound), _loops_around(num, lp),
                             sample=True)
        if values is None:
            continue
        (step, start, bound), at = values
        holds = start < bound if up else start > bound
        never = holds & ((step == 0) | ((step < 0) if up else (step > 0)))
        if not never.any():
            continue
        i = int(np.argmax(never))
        where = ", ".join(f"{v} = {int(x[i])}" for v, x in sorted(at.items()))
        update = print_statement(lp.node.update).rstrip(";") \
            if lp.node.update is not None else "its step"
        why = f"('{update}') is 0 at these sizes" if step[i] == 0 else \
            (f"('{update}', {int(step[i])} at these sizes) moves {lp.var} away from the "
             f"bound of '{print_expr(lp.node.cond)}'")
        out.append(warning(
            "feedback-endless-loop",
            f"{lp.label} never ends: its step {why}" + (f" (at {where})" if where else ""),
            lp.node.span,
            "a step that comes out 0 or of the wrong sign at these sizes (an integer "
            "product or division of them); launched, the kernel would hang: choose sizes "
            "the kernel is written for"))
    return out


def _forever(s) -> bool:
    """Whether a while loop's condition is a constant that holds (``while (true)``,
    ``while (1)``) and nothing in its body leaves it: no break of its own, no return."""
    from mcl.mcpl import ast
    from mcl.mcpl.check_flow import runs_forever
    return runs_forever(s, lambda name: None) and \
        not any(isinstance(n, ast.Return) for n in ast.walk(s.body))


def empty_grids(num: Kernel) -> list[Diagnostic]:
    """A warning at the outermost ``foreach`` that has no units at these sizes (``int
    bj in nrBlocksW blocks`` with ``nrBlocksW = w / bw``: 256 / 512 rounds down to 0):
    nothing inside runs, and the device arrays it writes, of one element or more, are
    never written."""
    from mcl.analyses.stats import main_space
    device = main_space(num)
    out: list[Diagnostic] = []
    for lp in num.loops:
        if lp.kind != "foreach" or lp.trips is None or lp.trips != 0:
            continue
        if any(outer.trips == 0 for outer in _loops_around(num, lp)):
            continue
        written = sorted({a.name for a in num.accesses if a.write and lp in a.loops
                          and a.space == device and not _has_no_elements(a)})
        if not written:
            continue        # (an output of no elements: nothing to write)
        none = "none" if lp.negative is None else f"{lp.negative}, so none,"
        out.append(warning(
            "feedback-empty-grid",
            f"{lp.label}: {none} at these sizes{_rounded_down(num, lp)}: nothing is "
            f"written to {', '.join(repr(w) for w in written)}", lp.node.span,
            "sizes smaller than a block's tile (an integer division that rounds down to "
            "nothing); choose sizes of at least one tile, or a version written for them"))
    return out


def too_many_units(num: Kernel) -> list[Diagnostic]:
    """A warning at the outermost of the directly nested ``foreach`` loops over one
    par_group inside a par_unit (the threads, or warps, of a block) whose units
    together are more than the description allows (``foreach (int t in 2048 threads)``
    where gpu's threads have ``max_nr_units = 1024``): such a unit cannot be started.
    The outermost par_group (the grid's blocks) is not checked: the generator spreads
    its foreach loops over the NDRange's dimensions, whose limits are the driver's
    (the H100 takes 2^31 - 1 blocks in x, 65535 in y and z), not one count; nor is a
    par_group the target file makes a loop inside the work-item (cpu's 16 vectors of 8
    lanes: two halves)."""
    from mcl.analyses.target_settings import lane_groups
    groups = num.hardware.par_groups() if num.hardware else []
    loops = lane_groups(num.hardware) if num.hardware else set()
    #: the par_unit each par_group below the outermost one is part of, by its name
    owner = {g.name: outer.unit.name for outer, g in zip(groups, groups[1:], strict=False)
             if outer.unit is not None}
    out: list[Diagnostic] = []
    seen: set[int] = set()
    for site in list(num.accesses) + list(num.ops):
        for i, lp in enumerate(site.loops):
            if lp.kind != "foreach" or lp.group is None or lp.group.name not in owner \
                    or lp.group.name in loops or id(lp) in seen:
                continue
            if i > 0 and site.loops[i - 1].kind == "foreach" and \
                    site.loops[i - 1].group is lp.group:
                continue        # counted with the foreach it nests directly in
            nest = [lp]
            for inner in site.loops[i + 1:]:
                if inner.kind != "foreach" or inner.group is not lp.group:
                    break
                nest.append(inner)
            seen.update(id(x) for x in nest)
            limit = lp.group.nr_units if lp.group.nr_units is not None \
                else lp.group.max_nr_units
            if not isinstance(limit, int) or \
                    any(x.trips is None or not x.trips.is_Integer for x in nest):
                continue
            units = math.prod(int(x.trips) for x in nest)
            if units <= limit:
                continue
            what = (" x ".join(str(int(x.trips)) for x in nest) + f" = {units}"
                    if len(nest) > 1 else str(units))
            prop = "nr_units" if lp.group.nr_units is not None else "max_nr_units"
            unit = owner[lp.group.name]
            out.append(warning(
                "feedback-too-many-units",
                f"{lp.label}: {what} {lp.node.group} in a {unit} at these sizes, but "
                f"'{num.hardware.name}' has at most {limit} "
                f"({'.'.join(num.hardware.par_group_path(lp.group))}.{prop}): such a {unit} "
                "cannot be started", lp.node.span,
                f"give each of the {lp.node.group} more work (a loop inside it) and use "
                f"fewer of them, or more {groups[0].name}"))
    return out


def _has_no_elements(a: Access) -> bool:
    """Whether the array of access ``a`` has no elements at these sizes."""
    return any(x is not None and x.is_Integer and int(x) == 0 for x in a.sizes)


def _rounded_down(num: Kernel, lp: Loop) -> str:
    """`` (nrBlocksW = w / bw, with w = 256)``: how the count of a foreach came to 0,
    where it is a constant of the kernel computed from sizes."""
    size = lp.node.size
    if not isinstance(size, ast.Name):
        return ""
    decl = next((d.node for d in num.decls if d.node.name == size.id
                 and d.node.init is not None), None)
    if decl is None:
        return ""
    sizes = sorted({x.id for x in ast.walk(decl.init) if isinstance(x, ast.Name)
                    and x.id in num.values})
    given = ", ".join(f"{n} = {num.values[n]}" for n in sizes)
    return f" ({size.id} = {print_expr(decl.init)}" + (f", with {given})" if given else ")")


def _loops_around(k: Kernel, lp: Loop) -> tuple[Loop, ...]:
    """The loops around ``lp``, as an access or operation inside it records them."""
    for site in list(k.accesses) + list(k.ops):
        for i, x in enumerate(site.loops):
            if x is lp:
                return tuple(site.loops[:i])
    return ()


def out_of_bounds(num: Kernel) -> list[Diagnostic]:
    """A warning at each access whose index, over every value the loops around it
    give, leaves its dimension (below 0 or at or past the extent); once per array
    dimension and source access."""
    out: list[Diagnostic] = []
    seen: set[int] = set()
    updated = {id(site.target.node) for site in num.atomics if site.target is not None}
    for a in num.accesses:
        if id(a.node) in seen:
            continue
        runs, only = _runs(num, a)
        if not runs:
            continue
        guarded = a.guarded or bool(a.conditions)
        known = _known_conditions(a) if a.conditions else None
        for d, (index, size) in enumerate(zip(a.indices, a.sizes, strict=False)):
            # a bounds test may keep an index that varies inside; none keeps a constant
            constant = index is not None and not index.free_symbols
            if guarded and not constant and known is None:
                continue
            found = _outside(index, size, a.loops, () if constant else known or ())
            written = [e for group in a.node.groups for e in group]
            wrapped = None
            if found is None:
                wrapped = None if constant or d >= len(written) else \
                    _wrapped(num, index, size, a.loops, known or (), written[d])
                if wrapped is None:
                    continue
            text = print_expr(written[d]) if d < len(written) else str(index)
            which = f"index {d + 1} of {a.name}" if len(a.indices) > 1 else \
                f"the index of {a.name}"
            seen.add(id(a.node))
            # where the access runs only under a condition these sizes do not decide
            # (one on data), the message says so, as mcl check's mcpl-index-range does
            under = f", in code that runs only {only}" if only else ""
            if wrapped is not None:
                out.append(_wrapped_warning(a, which, text, *wrapped, under=under))
                out[-1].data.update(modifies=a.write or id(a.node) in updated,
                                    certain=False, space=a.space)
                break
            value, extent, at = found
            where = f" (at {', '.join(f'{v} = {x}' for v, x in at)})" if at else ""
            out.append(warning(
                "feedback-out-of-bounds",
                (f"{which} is {value}" if constant else
                 f"{which} ({text}) reaches {value}{where}")
                + f", outside its {extent} element{'s' if extent != 1 else ''} "
                f"(0 .. {extent - 1}){under}", a.node.span,
                (f"the index is a constant: element {value} of {a.name} does not exist "
                 "whatever guards the access; a size the code around it is not written "
                 "for (it names elements one by one)") if constant else
                "a tile or work-per-thread size the index arithmetic is not written for; "
                "choose sizes the kernel is written for, or guard the access"))
            # a store or an atomic update there modifies memory the array does not own
            # (mcl run and compiled kernels do not launch it); a constant index leaves
            # the array whatever the code around it
            out[-1].data.update(modifies=a.write or id(a.node) in updated,
                                certain=constant and not only, space=a.space)
            break
    return out


def _runs(num: Kernel, a: Access) -> tuple[bool, str | None]:
    """Whether access ``a`` may run at the sizes of ``num``, and, where it does only under
    a condition these sizes do not decide (one on data: ``if (flags[0] == 1)``), the
    words for it (``where `flags[0] == 1` holds``). The conditions are those mcl check
    finds around the access (CheckedModule.reach_of: ifs, loops, ``?:``, ``&&`` and
    ``||``); it does not run where one of them never holds (``if (false)``, a loop whose
    condition is false from its start) or does not hold at these sizes (``if (n > 100)``
    with n = 64), nor inside a loop of no iterations at these sizes (an index that names
    the loop's variable has no values there; a constant one is found here)."""
    reach = num.checked.reach_of(a.node) if num.checked is not None else ()
    if any(r.never for r in reach):
        return False, None
    if any(lp.trips is not None and not lp.approximate and lp.trips.is_zero
           for lp in a.loops):
        return False, None
    only = None
    for r in reach:
        holds = fold_constant(r.cond, lambda name: _value_of(num, name)) \
            if r.cond is not None else None
        if holds is None:
            only = r.why
        elif bool(holds) == r.negated:
            return False, None
    return True, only


def _value_of(num: Kernel, name: ast.Name) -> ast.Expr | None:
    """What a name of a condition stands for at the sizes of ``num``: a parameter's value,
    a constant's or const local's definition; None for anything else (data)."""
    sym = num.checked.declaration_of(name)
    if sym is None:
        return None
    if sym.kind == "param":
        value = num.values.get(sym.name)
        return None if value is None else \
            ast.Literal(value, "int" if float(value).is_integer() else "float")
    if sym.kind in ("local", "constant") and sym.const and sym.init is not None:
        return sym.init
    return None


#: the largest value of the generated code's index arithmetic (OpenCL's 32-bit int)
_INT_MAX = 2 ** 31 - 1


def _wrapped(num: Kernel, index: sympy.Expr | None, size: sympy.Expr | None,
             loops: tuple[Loop, ...], conditions: tuple[sympy.Basic, ...],
             written: ast.Expr) -> tuple[int, list[tuple[str, int]]] | None:
    """(the largest value of ``index``, the loop variables' values there) where it
    passes 2^31 - 1 inside a dimension of more elements (``float[n * m] a`` read as
    ``a[i * m + j]``): the generated code computes it in 32-bit ints and wraps round.
    None where it stays below, cannot be evaluated, or the index names a ``long``
    (computed in 64 bits)."""
    if index is None or size is None or not size.is_Integer or int(size) <= _INT_MAX:
        return None
    longs = {d.node.name for d in num.decls if d.node.type.name == "long"}
    if any(isinstance(x, ast.Name) and x.id in longs for x in ast.walk(written)):
        return None
    found = enumerated((index,), loops, conditions, sample=True, huge=True)
    if found is None or found[0][0].size == 0:
        return None
    (values,), point = found
    i = int(np.argmax(values))
    if values[i] <= _INT_MAX:
        return None
    return int(values[i]), [(v, int(point[v][i])) for v in sorted(point)]


def _wrapped_warning(a: Access, which: str, text: str, value: int,
                     at: list[tuple[str, int]], under: str = "") -> Diagnostic:
    where = f" (at {', '.join(f'{v} = {x}' for v, x in at)})" if at else ""
    return warning(
        "feedback-out-of-bounds",
        f"{which} ({text}) reaches {value:,}{where}, past the {_INT_MAX:,} of the 32-bit "
        f"int arithmetic the generated code computes it in: it wraps round to an element "
        f"outside the array{under}", a.node.span,
        "give the array one dimension per index (float[n, m] and a[i, j]: the generator "
        "computes those offsets in 64 bits at sizes that need them), or compute the "
        "index in a long variable")


def data_indexed(num: Kernel) -> list[tuple[Access, tuple[int, ...]]]:
    """The accesses whose element the data choose, which no size lets the analyses
    check, each with the positions of the indices the data choose (0-based, tile levels
    concatenated; every position where the analyses cannot tell which): an index read
    from an array (``x[colIndex[k]]``) or a loop variable whose bounds are (``for (k =
    rowPtr[i]; k < rowPtr[i + 1]; k++)``). Outside its array, such an access is found
    only when it runs."""
    out = []
    for a in num.accesses:
        chosen = {lp.var for lp in a.loops if lp.trips is None or lp.start is None}
        names = {str(s) for s in a.offset.free_symbols} if a.offset is not None else set()
        if a.offset is not None and not names & chosen:
            continue
        positions = tuple(d for d, e in enumerate(a.indices)
                          if e is None or {str(s) for s in e.free_symbols} & chosen)
        out.append((a, positions or tuple(range(len(a.indices)))))
    return out


def modifying(found: list[Diagnostic]) -> list[Diagnostic]:
    """The out-of-bounds warnings among ``found`` whose access stores or atomically
    updates: launched, the kernel would modify memory it does not own."""
    return [d for d in found if d.code == "feedback-out-of-bounds" and d.data.get("modifies")]


def unsafe(found: list[Diagnostic]) -> list[Diagnostic]:
    """The warnings among ``found`` of a kernel not to launch: an access outside its
    array (a store modifies memory the kernel does not own, :func:`modifying`; a load
    reads it, and on a CPU device a read far outside kills the process with a
    segmentation fault), a barrier that not every unit of a work-group reaches (PoCL
    dies of a segmentation fault, a GPU may hang), a loop that never ends (it hangs), an
    output whose elements the stores do not all reach (the result is wrong there)."""
    return [d for d in found if d.code in ("feedback-out-of-bounds", barriers.CODE,
                                           "feedback-endless-loop",
                                           "feedback-unwritten-output")]


def _known_conditions(a: Access) -> tuple[sympy.Basic, ...] | None:
    """The conditions of the ``if`` statements around ``a`` (none: ``()``), where the
    analyses can compute every one in full; None where they cannot."""
    if not all(c.expr is not None and c.whole for c in a.conditions):
        return None
    return tuple(c.expr for c in a.conditions)


def _outside(index: sympy.Expr | None, size: sympy.Expr | None, loops: tuple[Loop, ...],
             conditions: tuple[sympy.Basic, ...] = ()
             ) -> tuple[int | str, int, list[tuple[str, int]]] | None:
    """(a value of ``index`` outside ``[0, size)`` (``about 6.7e+24`` beyond 2^53) at
    loop variables' values where all ``conditions`` hold, the extent, those values);
    None where every such value stays inside or not every value (or condition) is
    known."""
    if index is None or size is None or not size.is_Integer:
        return None
    extent = int(size)
    if not index.free_symbols:
        value = index
        return None if not value.is_Integer or 0 <= int(value) < extent else \
            (int(value), extent, [])
    found = enumerated((index,), loops, conditions, sample=True, huge=True)
    if found is None:
        return None
    (values,), point = found
    if values.size == 0:
        return None
    if values.max() >= extent:
        i = int(np.argmax(values))
    elif values.min() < 0:
        i = int(np.argmin(values))
    else:
        return None
    value = values[i]
    shown = int(value) if abs(value) <= EXACT else f"about {float(value):.3g}"
    return shown, extent, [(v, int(point[v][i])) for v in sorted(point)]


def unwritten_reads(num: Kernel) -> list[Diagnostic]:
    """A warning at each read of an array the kernel declares (shared or register
    memory) that reaches an element no write of the kernel reaches: its value is
    whatever the memory held. The writes are taken whatever their conditions (every
    element they may write), the reads only where their conditions hold; an array
    that a write or a read of which the analyses cannot enumerate
    (:func:`enumerated`), an atomic update, a call or a view touches is not checked,
    nor a read whose value nothing uses (:func:`mcl.analyses.register_elements.dead_reads`)."""
    from mcl.analyses.register_elements import dead_reads
    out: list[Diagnostic] = []
    dead = dead_reads(num)
    for name in _arrays_to_check(num):
        accesses = [a for a in num.accesses if a.name == name]
        reads = [a for a in accesses if not a.write and id(a.node) not in dead]
        if not reads or any(a.offset is None for a in accesses):
            continue
        written = _written_offsets([a for a in accesses if a.write])
        if written is None:
            continue
        for a in reads:
            conditions = _known_conditions(a)
            found = enumerated((a.offset,) + tuple(a.indices), a.loops, conditions,
                                sample=True) if conditions is not None else None
            if found is None:
                continue
            (offset, *indices), at = found
            missing = ~np.isin(offset, written)
            if missing.any():
                out.append(_unwritten_read(a, name, offset, indices, at, missing))
    return out


def unwritten_outputs(num: Kernel) -> list[Diagnostic]:
    """A warning at each array parameter the kernel only writes (no read, atomic update
    or call touches it, directly or through a view) whose elements its stores do not all
    reach at these sizes, whatever their conditions: the elements left keep what the
    array held (hopper_v10 of matmul at n = 200: a grid of n / 128 = 1 block row writes
    rows 0-127 of c, rows 128-199 are left). Where the stores' offsets are too many to
    enumerate whole, elements proven unwritten among candidates (the message says "at
    least": mcl.analyses.output_gaps.proven_gaps); not checked where a store cannot be
    enumerated (:func:`enumerated`)."""
    params = {p.name for p in num.function.params if p.type.is_array}
    base = {name: name for name in params}
    for x in ast.walk(num.function.body):
        if isinstance(x, ast.AsStatement) and isinstance(x.target, ast.Name) \
                and x.target.id in params:
            base.update((v.name, x.target.id) for v in x.views)
    touched = {base.get(a.target.name) for a in num.atomics if a.target is not None}
    for c in num.calls:
        touched |= {base.get(x.id) for x in ast.walk(c.node) if isinstance(x, ast.Name)}
    out: list[Diagnostic] = []
    for name in sorted(params - touched):
        accesses = [a for a in num.accesses if base.get(a.name) == name]
        writes = [a for a in accesses if a.write]
        if not writes or any(not a.write for a in accesses) or \
                any(a.offset is None for a in writes):
            continue
        if all(any(lp.kind == "foreach" and lp.trips == 0 for lp in a.loops) for a in writes):
            continue        # a grid of no units: feedback-empty-grid names the output
        total = _elements(writes[0])
        if total is None or total == 0:
            continue
        written = _written_offsets(writes, whole=True)
        if written is None:
            # too many to enumerate: candidates proven unwritten (mcl.analyses.output_gaps)
            found = proven_gaps(num, writes, total)
            if found is not None:
                out.append(_unwritten_output(writes[0], name, total, *found, at_least=True))
            continue
        inside = written[(written >= 0) & (written < total)]     # sorted, distinct
        if inside.size == total:
            continue
        # the first offset not written: where the sorted offsets first skip one
        gaps = np.flatnonzero(inside != np.arange(inside.size))
        first = int(gaps[0]) if gaps.size else int(inside.size)
        out.append(_unwritten_output(writes[0], name, total, total - inside.size, first))
    return out


def _elements(a: Access) -> int | None:
    """The elements of the array ``a`` reaches (the product of its dimensions' extents,
    those of the view it is written through alike); None where one is not a number."""
    total = 1
    for size in a.sizes:
        if size is None or not getattr(size, "is_Integer", False):
            return None
        total *= int(size)
    return total


def _unwritten_output(a: Access, name: str, total: int, left: int,
                      first: int, at_least: bool = False) -> Diagnostic:
    """The warning of output ``name``, ``left`` of whose ``total`` elements (the first at
    flat offset ``first``) are never written; ``at_least``: ``left`` were proven
    unwritten among some elements (mcl.analyses.output_gaps), ``first`` the first of
    them, and there may be more."""
    element = ", ".join(str(int(i)) for i in np.unravel_index(
        first, tuple(int(s) for s in a.sizes)))
    through = f" (written as {a.name})" if a.name != name else ""
    some = (f"at least {left:,} of its {total:,} elements are never written at these sizes "
            f"(such as {a.name}[{element}])") if at_least else \
        (f"{left:,} of its {total:,} elements are never written at these sizes (the "
         f"first, {a.name}[{element}])")
    found = warning(
        "feedback-unwritten-output",
        f"{name}{through}: {some}: they keep whatever the array held, and "
        "the result is wrong there", a.node.span,
        "a size the kernel's grid or loops are not written for (an integer division "
        "that rounds down, a tile that does not divide the data); choose sizes the "
        "version is written for, or cover the remainder")
    found.data.update(array=name, left=left, elements=total, at_least=at_least)
    return found


def _arrays_to_check(num: Kernel) -> list[str]:
    """The arrays the kernel declares (not parameters, not initialised) that no atomic
    update, call or view touches: what their accesses write is all that is written."""
    declared = {d.node.name for d in num.decls if d.node.type.is_array
                and (d.symbol is None or d.symbol.kind != "param")
                and getattr(d.node, "init", None) is None}
    touched = {a.target.name for a in num.atomics if a.target is not None}
    for c in num.calls:
        touched |= {x.id for x in ast.walk(c.node) if isinstance(x, ast.Name)}
    # an array seen through a view (``l_a as float4[...] l_a4``) is also written there
    touched |= {d.node.name for d in num.decls if getattr(d.node, "views", ())}
    touched |= {x.target.id for x in ast.walk(num.function.body)
                if isinstance(x, ast.AsStatement) and isinstance(x.target, ast.Name)}
    return sorted(declared - touched)


def _written_offsets(writes: list[Access], whole: bool = False) -> np.ndarray | None:
    """Every flat offset the ``writes`` may reach, whatever their conditions, sorted;
    None where there are none or one cannot be enumerated whole. ``whole``: None also
    where a loop variable or offset takes a value that is no whole number (the model
    keeps some integer divisions as fractions, ``rows / x``: a loop starting at one
    would be enumerated from a value the program never gives it)."""
    parts = []
    for a in writes:
        found = enumerated((a.offset,), a.loops)
        if found is None or (whole and fractional(found)):
            return None
        (offset,), _ = found
        parts.append(offset)
    return np.unique(np.concatenate(parts)) if parts else None


def _unwritten_read(a: Access, name: str, offset: np.ndarray, indices: list[np.ndarray],
                    at: dict[str, np.ndarray], missing: np.ndarray) -> Diagnostic:
    """The warning of the read ``a`` of ``name``, whose enumerated ``offset``s (with
    their ``indices`` and loop values ``at``) reach the ``missing`` ones unwritten."""
    i = int(np.argmax(missing))
    where = [(v, int(at[v][i])) for v in sorted(at)]
    element = ", ".join(str(int(x[i])) for x in indices)
    n = int(np.unique(offset[missing]).size)
    return warning(
        "feedback-unwritten-read",
        f"{print_expr(a.node)} reads element{'s' if n != 1 else ''} of {name} that "
        f"nothing writes ({n} element{'s' if n != 1 else ''}, first [{element}]"
        + (f" at {', '.join(f'{v} = {x}' for v, x in where)}" if where else "")
        + "): its value is whatever the memory held", a.node.span,
        "a tile or work-per-thread size the loops that fill the array are not "
        "written for (they fill fewer elements than are read); choose sizes the "
        "kernel is written for, or fill every element that is read")
