"""Data reuse (paper section 6.3), faster memories for reused data, and work per
thread.

Simple reuse: a read that does not depend on an enclosing loop or foreach index
loads the same element once per iteration of that loop ("a[i, k] is loaded for
each of the nrThreadsM threads tj"). Advanced reuse: an access that depends on
every loop still reuses data when its index range is smaller than the number of
accesses; the ratio accesses / index range per dimension and overall
(convolution: (h·fh)/(h+fh)). For reused data, a memory space shared by the
units of the foreach that is held by a faster memory is proposed; a read-only one
(constant memory) as the space of the parameter, which no kernel can store into.
Both count only the iterations that an ``if`` around the access lets it run where
the test bounds a loop index by a constant (``if (lane < 2)``: 2 lanes).

Work per thread: units of parallelism against execution slots, said only where each
unit computes an element of its own (not where a block's threads combine their
values into one element that ``tid == 0`` writes).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

import sympy

from mcl.analyses.kernel import Access, Condition, Kernel, Loop
from mcl.analyses.kernel_syntax import first_units_skip
from mcl.analyses.values import bytes_text, number_text, simplified
from mcl.diagnostics import Diagnostic, Related, info, warning
from mcl.mcpl import ast
from mcl.mcpl.printer import print_param

#: The most iterations of a loop that are tried one by one against an if around an
#: access (a block's threads are at most 1024)
MAX_COUNTED = 4096

#: Units of parallelism per execution slot above which computing several
#: elements per unit is suggested: GPUs want some oversubscription to hide
#: latency, two orders of magnitude is more than any of them needs.
WORK_PER_THREAD_FACTOR = 64


def shared_spaces(hw: Any, group: Any) -> list[Any]:
    """Memory spaces shared by all units of ``group``: those of the parallelism
    block and of the par_groups/par_units around it, and its own."""
    out: list[Any] = []
    if hw is None or group is None:
        return out
    if hw.parallelism is not None:
        out += list(hw.parallelism.memory_spaces)
    for g in hw.par_groups():
        out += list(g.memory_spaces)
        if g is group or g.name == group.name:
            break
        if g.unit is not None:
            out += list(g.unit.memory_spaces)
    return out


def _slowest(hw: Any, space: str | None) -> bool:
    """Whether no memory space of ``hw`` is slower than ``space`` (data there is
    not yet in a faster memory)."""
    if hw is None or space is None:
        return True
    return not any(hw.is_faster(space, ms.name) for ms in hw.memory_spaces()
                   if ms.name != space and hw.memories_holding(ms.name))


def faster_spaces(hw: Any, group: Any, space: str | None, read_only_ok: bool,
                  array_bytes: Any = None) -> list[str]:
    """Spaces shared by the units of ``group`` held by a faster, addressable memory.
    A read-only space (constant memory) is proposed only for an array that is never
    written and that fits it whole (``array_bytes``, a number)."""
    if hw is None or space is None:
        return []
    out = []
    for ms in shared_spaces(hw, group):
        if ms.name == space or (ms.read_only and not read_only_ok):
            continue
        held = hw.memories_holding(ms.name)
        if not held or not any(m.addressable for m in held):
            continue
        if ms.read_only:
            caps = [m.capacity for m in held if isinstance(m.capacity, int | float)]
            if not caps or array_bytes is None or not getattr(array_bytes, "is_number", False) \
                    or array_bytes > max(caps):
                continue
        if hw.is_faster(ms.name, space):
            out.append(ms.name)
    return out


def _local_loops(k: Kernel, acc: Access) -> tuple[Loop, ...]:
    """The loops around an access since its array was last defined: inside the
    array's declaration (a local array declared in a loop is a new array in each
    iteration) and inside the loops around the writes to it that also enclose
    this read (data written in loop ei is new data in each iteration of ei)."""
    loops = acc.loops
    for d in k.decls:
        if d.symbol is not None and d.symbol is acc.symbol:
            loops = acc.loops[len(d.loops):]
            break
    for w in k.accesses:
        if not w.write or w.symbol is not acc.symbol or w.symbol is None \
                or w.symbol.kind == "param":
            continue
        common = 0
        while common < min(len(w.loops), len(acc.loops)) and \
                w.loops[common] is acc.loops[common]:
            common += 1
        inner = acc.loops[common:]
        if len(inner) < len(loops):
            loops = inner
    return loops


def _array_bytes(acc: Access | None) -> sympy.Expr | None:
    if acc is None or any(s is None for s in acc.sizes):
        return None
    total = sympy.Integer(acc.element_bytes)
    for s in acc.sizes:
        total *= s
    return total


def _differs_in_lockstep(hw: Any, acc: Access) -> bool:
    """Whether the lanes of a lock-step group (a warp) read different elements: the
    access depends on the index of a foreach over such a group. A read-only memory
    that serves a warp one address at a time (a constant cache broadcasts one) is no
    faster for those (gesummv's ``x[j]``, a run per lane), and is not proposed."""
    return any(_lockstep_lanes(hw, lp) and lp.var in acc.depends for lp in acc.loops)


def _lockstep_lanes(hw: Any, lp: Loop) -> bool:
    """Whether ``lp`` runs over the lanes of a lock-step group (a warp's threads): the
    lanes that read one element make one request, which the hardware broadcasts to
    them, so a faster memory has nothing to save there (spmv_csr hopper v1's
    ``rowPtr[r]``, the same for a warp's 32 lanes: one sector per warp, measured)."""
    return hw is not None and lp.kind == "foreach" and any(
        g.name == lp.node.group for g in hw.lockstep_par_groups())


def _is_written(k: Kernel, acc: Access) -> bool:
    """Whether the kernel writes the array of ``acc``, or updates it atomically."""
    return any(a.write and a.symbol is acc.symbol for a in k.accesses) or any(
        site.target is not None and site.target.symbol is acc.symbol for site in k.atomics)


def _unit_tests(acc: Access, loops: Iterable[Loop]) -> dict[Loop, list[Condition]] | None:
    """The terms of the ifs around ``acc`` that bound one of ``loops``' indices by a
    constant (``lane < 2``, ``w % 8 == 0``), by loop; a term that also names a size (a
    bounds test) is left out, as held. None where data decide an if or a term names two
    loop indices (``lane < rr``)."""
    wanted = {lp.symbol: lp for lp in loops if lp.var}
    around = {lp.symbol for lp in acc.loops if lp.var}
    # a loop of one iteration has one value (a translation's single warp of 32 lanes)
    single = {lp.symbol: lp.start if lp.start is not None else sympy.Integer(0)
              for lp in acc.loops if lp.var and lp.trips == 1}
    tests: dict[Loop, list[Condition]] = {}
    for c in acc.conditions:
        if c.expr is None or not c.whole:
            return None                     # data decides
        for term in sympy.And.make_args(c.expr.xreplace(single)):
            names = term.free_symbols & around
            if not names & wanted.keys() or term.free_symbols - around:
                continue                    # not on these loops, or a bounds test
            if len(names) > 1:
                return None
            tests.setdefault(wanted[next(iter(names))], []).append(
                Condition(term, c.depth))
    return tests


def kept_units(hw: Any, k: Kernel, acc: Access, unit: Loop, count: int) -> list[bool] | None:
    """For the first ``count`` iterations of ``unit`` (a foreach from 0 in steps of 1),
    whether the ifs around ``acc`` let it run there (``if (w % 8 == 0)``: the first of
    every 8), counting only their tests of ``unit``'s index (:func:`_unit_tests`). None
    where they cannot be evaluated."""
    from mcl.analyses.functions import KernelView
    from mcl.analyses.warp_lanes import active_lanes
    tests = _unit_tests(acc, (unit,))
    if tests is None:
        return None
    conds = tests.get(unit, [])
    if not conds:
        return [True] * count
    return active_lanes(KernelView(k, k, hw), replace(acc, conditions=tuple(conds)), unit,
                        count)


def guard_kept(hw: Any, k: Kernel, acc: Access,
               loops: Iterable[Loop]) -> dict[str, sympy.Integer] | None:
    """For each of ``loops`` whose index an ``if`` around ``acc`` bounds by a constant
    (``lane < 2``, ``tid == 0``), how many of its iterations the if lets the access run
    (2 of 32 lanes, 1 of 256 threads); loops whose iterations all run are left out. A test
    that also names a size (``r < nrRows``, a bounds test) is taken to hold, as in the
    counts of the other analyses. None where an if restricts the loops in a way that
    cannot be counted: a test on data, on two loop indices (``lane < rr``), or on a loop
    whose iterations are not a number. ``acc`` comes from ``k``, the kernel with
    symbolic sizes, where a size is a name and not a number."""
    from mcl.analyses.stats import decided_share
    tests = _unit_tests(acc, loops)
    if tests is None:
        return None
    out: dict[str, sympy.Integer] = {}
    for lp, conds in tests.items():
        if lp.kind == "foreach":            # from 0 in steps of 1
            trips = lp.trips
            if not getattr(trips, "is_Integer", False) or not 0 < trips <= MAX_COUNTED:
                return None
            kept = sympy.Integer(sum(kept_units(hw, k, acc, lp, int(trips))))
        else:
            share = decided_share((lp,), tuple(conds))
            if share is None:
                return None
            kept = sympy.Integer(share * lp.trips)
        if kept != lp.trips:
            out[lp.var] = kept
    return out


def _faster_hint(hw: Any, space: str, acc: Access, param: ast.Param | None,
                 array_bytes: sympy.Expr | None, load: str) -> str:
    """The help of a faster-memory proposal: ``load`` (how the kernel fills ``space``),
    or, for a read-only space, which no kernel can store into, the parameter declared
    in it, with the capacity the array must fit."""
    ms = next((m for m in hw.memory_spaces() if m.name == space), None) \
        if hw is not None else None
    if ms is None or not ms.read_only:
        return load
    if param is not None:
        decl = print_param(replace(param, space=space, const=False, default=None,
                                   alternatives=()))
        how = f"declare the parameter in it, `{decl}`"
    else:
        how = f"declare the parameter that holds {acc.name} in it"
    caps = [m.capacity for m in hw.memories_holding(space)
            if isinstance(m.capacity, int | float)]
    fit = ""
    if caps:
        size = f" ({bytes_text(float(array_bytes))})" \
            if array_bytes is not None and getattr(array_bytes, "is_number", False) else ""
        fit = f"; {acc.name}{size} must fit in its {bytes_text(max(caps))}"
    return f"a kernel cannot store into read-only `{space}` memory: {how}{fit}"


def _holding_cache(hw: Any, space: str, acc: Access, array_bytes: Any) -> Any:
    """The first-level cache (an SM's L1, one an instance of the units that share
    ``space``) that holds all of ``acc``'s array (``array_bytes``, a number) for the
    units, where ``space`` is one a kernel fills (not read-only memory, whose own cache
    broadcasts); None otherwise."""
    from mcl.analyses.block_reuse import first_level_cache
    ms = next((m for m in hw.memory_spaces() if m.name == space), None) \
        if hw is not None else None
    if ms is None or ms.read_only or acc.space is None or array_bytes is None \
            or not getattr(array_bytes, "is_number", False):
        return None
    cache = first_level_cache(hw, acc.space)
    return cache if cache is not None and array_bytes <= cache.capacity else None


def _param(k: Kernel, acc: Access) -> ast.Param | None:
    """The parameter ``acc`` reads (None for a local array or a view)."""
    if acc.symbol is None or acc.symbol.kind != "param":
        return None
    return next((p for p in k.function.params if p.name == acc.name), None)


@dataclass
class ReuseFinding:
    access: Access
    loops: tuple[Loop, ...]            # loops it does not depend on
    times: sympy.Expr
    times_value: sympy.Expr | None
    faster: dict[int, list[str]]       # id(loop) -> faster spaces shared by its units
    param: ast.Param | None = None      # the parameter read (for a read-only space)
    array_bytes: sympy.Expr | None = None
    #: loop variable -> the iterations an if lets read (`if (lane < 2)`: 2)
    kept: dict[str, sympy.Integer] | None = None


@dataclass
class RatioFinding:
    access: Access
    per_dim: list[tuple[int, sympy.Expr, sympy.Expr | None, Loop | None]]
    overall: sympy.Expr
    overall_value: sympy.Expr | None
    faster: list[str]
    param: ast.Param | None = None
    array_bytes: sympy.Expr | None = None


class ReuseAnalysis:
    """Simple and advanced data reuse with faster-memory proposals."""

    name = "reuse"

    def analyze(self, sym: Kernel, num: Kernel | None) -> tuple[list[ReuseFinding],
                                                                  list[RatioFinding]]:
        simple: list[ReuseFinding] = []
        ratios: list[RatioFinding] = []
        hw = sym.hardware
        seen: set[tuple[str, str]] = set()
        num_acc = num.accesses if num is not None and \
            len(num.accesses) == len(sym.accesses) else [None] * len(sym.accesses)
        updated = {id(site.target.node) for site in sym.atomics if site.target is not None}
        for acc, nacc in zip(sym.accesses, num_acc, strict=True):
            if acc.write or not acc.predictable or not _slowest(hw, acc.space):
                continue
            if id(acc.node) in updated:
                continue  # an atomic update: its element changes (mcl.analyses.atomics)
            if nacc is not None and first_units_skip(nacc.loops):
                continue  # a remainder path that most threads skip
            key = (acc.name, acc.text)
            if key in seen:
                continue
            loops = _local_loops(sym, acc)
            # the iterations that an if lets read (`if (tid == 0)`: one thread); None
            # where an if restricts them in a way that cannot be counted
            kept = guard_kept(hw, sym, acc, loops) if acc.conditions else {}
            counted = kept or {}
            indep = tuple(lp for lp in loops if lp.var and lp.var not in acc.depends
                          and lp.trips is not None and lp.trips != 1
                          and counted.get(lp.var) != 1)
            read_only_ok = not _is_written(sym, acc) and not _differs_in_lockstep(hw, acc)
            size = _array_bytes(nacc)
            param = _param(sym, acc)
            if indep:
                seen.add(key)
                times = sympy.Integer(1)
                for lp in indep:
                    times *= counted.get(lp.var, lp.trips)
                times_value = None
                if nacc is not None:
                    nloops = {id(lp.node): lp for lp in nacc.loops}
                    tv = sympy.Integer(1)
                    for lp in indep:
                        nl = nloops.get(id(lp.node))
                        tv = tv * counted.get(lp.var, nl.trips) \
                            if nl is not None and nl.trips is not None else None
                        if tv is None:
                            break
                    times_value = tv if tv is not None and tv.is_number else None
                faster = {id(lp): faster_spaces(hw, lp.group, acc.space, read_only_ok, size)
                          for lp in indep if lp.kind == "foreach"
                          and not _lockstep_lanes(hw, lp) and lp.var not in counted}
                simple.append(ReuseFinding(acc, indep, simplified(times), times_value,
                                           faster, param, size,
                                           {lp.var: counted[lp.var] for lp in indep
                                            if lp.var in counted}))
                continue
            if kept is None:
                continue    # an if whose share of the accesses cannot be counted: no ratio
            ratio = self._ratio(acc, nacc, loops, hw, read_only_ok, kept, param)
            if ratio is not None:
                seen.add(key)
                ratios.append(ratio)
        return simple, ratios

    def _ratio(self, acc: Access, nacc: Access | None, loops: tuple[Loop, ...], hw: Any,
               read_only_ok: bool, kept: dict[str, sympy.Integer],
               param: ast.Param | None) -> RatioFinding | None:
        """The reuse ratio of ``acc``: its accesses over the elements they cover, counting
        for each loop the iterations ``kept`` says an if lets read (guard_kept);
        ``param``: the parameter it reads, for a read-only space's help."""
        by_var = {lp.var: lp for lp in loops if lp.var}
        nby_var = {lp.var: lp for lp in nacc.loops if lp.var} if nacc is not None else {}
        per_dim = []
        total_acc, total_range = sympy.Integer(1), sympy.Integer(1)
        ntotal_acc, ntotal_range = sympy.Integer(1), sympy.Integer(1)
        numeric_ok = nacc is not None
        used: set[str] = set()
        best_outer: Loop | None = None
        for d, ix in enumerate(acc.indices):
            if ix is None:
                return None
            vars_ = [by_var[s.name] for s in ix.free_symbols if s.name in by_var]
            if not vars_ or any(lp.trips is None or lp.constant_step is None for lp in vars_):
                continue
            accesses, rng = sympy.Integer(1), sympy.Integer(0)
            naccesses, nrng = sympy.Integer(1), sympy.Integer(0)
            for lp in vars_:
                coef = sympy.diff(ix, lp.symbol)
                if coef.free_symbols & {v.symbol for v in vars_}:
                    return None  # not affine in the loop indices
                step = lp.constant_step
                trips = kept.get(lp.var, lp.trips)
                accesses *= trips
                rng += sympy.Abs(coef * step) * trips
                nl = nby_var.get(lp.var)
                if nl is None or nl.trips is None:
                    numeric_ok = False
                    continue
                ncoef = coef
                nstep = nl.step if nl.step is not None else 1
                ntrips = kept.get(lp.var, nl.trips)
                naccesses *= ntrips
                nrng += sympy.Abs(ncoef * nstep) * ntrips
            if not used.isdisjoint(lp.var for lp in vars_):
                return None  # a loop in two dimensions: the per-dimension ranges overlap
            used |= {lp.var for lp in vars_}
            total_acc *= accesses
            total_range *= rng
            ratio = simplified(accesses / rng)
            nratio = None
            if numeric_ok and nacc is not None:
                nratio = sympy.nsimplify(naccesses / nrng)
                ntotal_acc *= naccesses
                ntotal_range *= nrng
            outer = next((lp for lp in loops if lp.kind == "foreach" and lp in vars_), None)
            if len(vars_) >= 2:
                per_dim.append((d, ratio, nratio, outer))
                if outer is not None and best_outer is None:
                    best_outer = outer
        if not per_dim:
            return None
        overall = simplified(total_acc / total_range)
        overall_value = sympy.nsimplify(ntotal_acc / ntotal_range) if numeric_ok else None
        if overall_value is not None and overall_value.is_number and (
                overall_value.is_extended_real is not True or not overall_value.is_finite
                or overall_value <= 1):
            return None     # no reuse, or sizes that make no sense (a negative count)
        size = _array_bytes(nacc)
        faster = faster_spaces(hw, best_outer.group, acc.space, read_only_ok, size) \
            if best_outer is not None else []
        return RatioFinding(acc, per_dim, overall, overall_value, faster, param, size)

    def report(self, result: tuple[list[ReuseFinding], list[RatioFinding]],
               hw: Any) -> list[Diagnostic]:
        simple, ratios = result
        out: list[Diagnostic] = []
        for f in simple:
            acc = f.access
            names = " or ".join(lp.var for lp in f.loops)
            kept = f.kept or {}
            each = " and ".join(_each(lp, kept.get(lp.var)) for lp in f.loops)
            times = " × ".join(number_text(kept[lp.var]) if lp.var in kept else lp.size_text
                               for lp in f.loops)
            if f.times_value is not None and times != number_text(f.times_value):
                times += f" = {number_text(f.times_value)}"
            related = [Related(lp.node.span, f"{acc.text} does not depend on {lp.var}")
                       for lp in f.loops]
            if all(_lockstep_lanes(hw, lp) for lp in f.loops):
                d = info("feedback-reuse",
                         f"{acc.text} does not depend on {names}: "
                         f"{' and '.join(_some(lp, kept.get(lp.var)) for lp in f.loops)} "
                         f"read the same "
                         f"element, in one request for them all (the hardware broadcasts "
                         f"it)", acc.node.span, None, related)
            else:
                d = info("feedback-reuse",
                         f"{acc.text} does not depend on {names}: it is loaded for {each} "
                         f"({times} times)", acc.node.span,
                         "keep the value where the iterations can share it", related)
            d.data.update(array=acc.name, loops=[lp.var for lp in f.loops],
                          times=str(f.times),
                          times_value=_num(f.times_value))
            out.append(d)
            for lp in f.loops:
                spaces = f.faster.get(id(lp), [])
                if not spaces:
                    continue
                space = spaces[0]
                hint = _faster_hint(hw, space, acc, f.param, f.array_bytes,
                                    f"load the elements once into a `{space}` array "
                                    f"(cooperatively, then barrier({space})) and read "
                                    f"them from there")
                related = [Related(lp.node.span, f"{acc.text} does not depend on {lp.var}")]
                cache = _holding_cache(hw, space, acc, f.array_bytes)
                if cache is not None:
                    # the units' repeated reads hit the cache the array fits: staging it
                    # saves those hits, no traffic (what the time model counts: the
                    # array fetched once per holder, mcl.analyses.block_reuse)
                    d = info(
                        "feedback-faster-memory",
                        f"{space} memory could hold {acc.text} for {lp.label}, but "
                        f"{acc.name} ({bytes_text(float(f.array_bytes))}) fits in "
                        f"{cache.name} ({bytes_text(float(cache.capacity))}), which "
                        f"serves their repeated reads already: {space} memory would "
                        f"save those cache reads, not traffic from {acc.space}",
                        acc.node.span,
                        f"where the cache reads limit the kernel (the time feedback's "
                        f"`memory instructions` part): {hint}",
                        related)
                    d.data.update(cached_by=cache.name)
                else:
                    d = warning(
                        "feedback-faster-memory",
                        f"{space} memory can be leveraged for {acc.text}, shared by "
                        f"{lp.label}: {acc.text} is loaded for each of them from "
                        f"{acc.space}", acc.node.span, hint, related)
                d.data.update(array=acc.name, loop=lp.var, space=space, faster=spaces)
                out.append(d)
        for r in ratios:
            acc = r.access
            dims = "; ".join(
                f"dimension {d + 1}: {_ratio_text(ratio, value)}"
                for d, ratio, value, _ in r.per_dim)
            d = info("feedback-reuse",
                     f"{acc.text} depends on every loop around it, but reuses data: "
                     f"reuse ratio {_ratio_text(r.overall, r.overall_value)} overall "
                     f"({dims})", acc.node.span,
                     "a ratio above 1 means that neighbouring units read the same elements")
            d.data.update(array=acc.name, ratio=str(r.overall),
                          ratio_value=_num(r.overall_value),
                          per_dimension=[{"dimension": dd + 1, "ratio": str(x),
                                          "value": _num(v)} for dd, x, v, _ in r.per_dim])
            out.append(d)
            if r.faster:
                outer = next(o for _, _, _, o in r.per_dim if o is not None)
                d = warning("feedback-faster-memory",
                            f"{r.faster[0]} memory can be leveraged for {acc.text}, shared by "
                            f"{outer.label}: neighbouring units read the same elements",
                            acc.node.span,
                            _faster_hint(hw, r.faster[0], acc, r.param, r.array_bytes,
                                         f"load a tile with its halo into `{r.faster[0]}` "
                                         f"memory once"))
                d.data.update(array=acc.name, loop=outer.var, space=r.faster[0])
                out.append(d)
        return out


def _each(lp: Loop, kept: sympy.Integer | None = None) -> str:
    if kept is not None:
        return _some(lp, kept)
    if lp.kind == "foreach":
        return f"each of {lp.label}"
    return f"each iteration of loop {lp.var}"


def _some(lp: Loop, kept: sympy.Integer | None) -> str:
    """The units or iterations of ``lp`` that an if lets run (``kept`` of them)."""
    if kept is None:
        return lp.label
    if lp.kind == "foreach":
        return f"{number_text(kept)} of {lp.label}"
    return f"{number_text(kept)} iterations of loop {lp.var}"


def _ratio_text(ratio: sympy.Expr, value: sympy.Expr | None) -> str:
    text = str(ratio)
    if value is not None and value.is_number and value.is_extended_real and value.is_finite:
        return f"{text} = {float(value):.2f}" if ratio.free_symbols else f"{float(value):.2f}"
    return text


def _num(v: sympy.Expr | None) -> float | int | None:
    if v is None or not getattr(v, "is_number", False) or v.is_finite is not True:
        return None
    return int(v) if v.is_Integer else float(v)


# --------------------------------------------------------------------------- work per thread


def _one_element_each(sym: Kernel, num: Kernel | None, output: Any, units: sympy.Expr) -> bool:
    """Whether each of the ``units`` units of parallelism computes an element of its
    own of ``output``: the threads that compute an element are those that write it.
    Not where the element written does not depend on a foreach index (the threads of
    a block combine their values into one, which `tid == 0` writes), where an if keeps
    some values of a foreach index from writing (``if (t < 4)``, guard_kept; an if that
    cannot be counted is taken to keep some), or where there are at least twice as many
    units as the output has elements."""
    for i, w in enumerate(sym.accesses):
        if not w.write or w.symbol is not output:
            continue
        par = [lp for lp in w.loops if lp.kind == "foreach" and lp.trips != 1]
        if any(lp.var not in w.depends for lp in par):
            return False
        if w.conditions and guard_kept(sym.hardware, sym, w, par) != {}:
            return False
        nw = num.accesses[i] if num is not None and \
            len(num.accesses) == len(sym.accesses) else None
        if nw is not None and all(x is not None for x in nw.sizes):
            elements = sympy.Mul(*nw.sizes)
            if elements.is_number and elements.is_positive and elements.is_finite \
                    and units.is_finite and units.is_real and units >= 2 * elements:
                return False
    return True


class WorkPerThreadAnalysis:
    """Units of parallelism against the execution slots of the description."""

    name = "work-per-thread"

    def analyze(self, sym: Kernel, num: Kernel | None) -> dict | None:
        hw = sym.hardware
        unit = hw.executing_unit() if hw is not None else None
        if unit is None or not sym.foreach_loops():
            return None
        resident = hw.max_resident(unit.name)
        if not isinstance(resident, int):
            return None  # unlimited execution slots: any amount of work fits
        kern = num if num is not None else sym
        units = sympy.Integer(1)
        for lp in kern.foreach_loops():
            if lp.trips is None:
                return {"needs": True}
            units *= lp.trips
        sym_units = " × ".join(lp.size_text for lp in sym.foreach_loops())
        # Only units that compute one element each: a sequential loop around the
        # writes of outputs already gives each unit several elements.
        last = sym.foreach_loops()[-1]
        writes = [a for a in sym.accesses if a.write and a.symbol is not None
                  and a.symbol.kind in ("param", "view")]
        several = False
        for a in writes:
            inner = a.loops[a.loops.index(last) + 1:] if last in a.loops else a.loops
            several = several or any(lp.kind != "foreach" and lp.trips != 1 for lp in inner)
        if several or not writes:
            return None
        if units.is_number and not _one_element_each(sym, num, writes[0].symbol, units):
            return None
        return {"units": units, "sym_units": sym_units, "resident": resident,
                "unit": unit.name, "loop": sym.foreach_loops()[0],
                "output": writes[0].name, "needs": not units.is_number}

    def report(self, result: dict | None, hw: Any) -> list[Diagnostic]:
        if not result:
            return []
        if result.get("needs"):
            return []
        units, resident = result["units"], result["resident"]
        if not (units.is_real and units.is_finite) or units < WORK_PER_THREAD_FACTOR * resident:
            return []
        lp = result["loop"]
        d = info("feedback-work-per-thread",
                 f"{result['sym_units']} = {number_text(units)} {result['unit']}s, each "
                 f"computing one element of {result['output']}, but '{hw.name}' runs "
                 f"{resident} at a time: "
                 f"consider computing more than one element of {result['output']} per "
                 f"{result['unit']}", lp.node.span,
                 "add a sequential loop inside the foreach over a few elements (e.g. "
                 "rows) and divide the number of units by as many")
        d.data.update(units=int(units), resident=int(resident))
        return [d]
