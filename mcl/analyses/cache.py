"""Cache analysis (paper section 6.4): for each access to a memory space that a
cache holds and each loop around it, the stride the loop causes, the best- and
worst-case number of cache-line fetches, and whether the access does, may or
does not benefit from the cache; lock-step execution (warps, vectors) counts as
sharing a line. Also the "cache-oriented architecture" advice where caches are
the only fast memory, and the size of temporary arrays against the caches.

"Does not benefit" is said of a loop only where it is true and can be acted on:
not of a loop whose units run on different holders of the cache (a foreach over
blocks, whose blocks go to different SMs, each with its own L1: verdict "not
shared"), nor where by the counts lines are reused (fewer fetches than iterations
in the best case), nor where another loop uses the lines again (a lane's row that
its own loop walks contiguously, matvec's ``A[i, j0 + k]`` in loop t; rows that the
next warps read in the next iterations of a loop, conv3x3's ``img[i + y, j + x]`` in
loops wy and y). The accesses themselves are not judged where the cache has
nothing to offer: the target of an atomic update (updated where the atomics run),
a store of each element once (a stream), and a read whose value is copied into an
on-chip memory the units read it from (a cooperative copy into shared memory:
the reuse goes through the faster memory).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import sympy

from mcl.analyses.kernel import Access, Kernel, Loop
from mcl.analyses.kernel_syntax import first_units_skip
from mcl.analyses.reuse import _array_bytes, _local_loops
from mcl.analyses.values import bytes_text, number_text
from mcl.diagnostics import Diagnostic, info, warning
from mcl.mcpl import ast


@dataclass
class LoopCache:
    loop: Loop
    stride: int              # bytes between consecutive iterations
    iterations: int
    best: int
    worst: int
    verdict: str             # "does" | "may" | "does not" | "not shared"
    lockstep: bool
    #: bytes between consecutive iterations, with the sign of the step
    delta: int = 0
    #: a loop whose iterations use this loop's lines again (:func:`_reused_in`): its
    #: "does not" is no missed reuse
    reused_in: Loop | None = None


@dataclass
class AccessCache:
    access: Access
    cache: Any
    line: int
    loops: list[LoopCache]
    #: each element accessed once, the lanes of a warp sharing its lines: a stream,
    #: whose traffic no cache can reduce (:func:`_streamed`)
    streamed: bool = False
    #: a read whose value is stored into an on-chip memory that the units read it from
    #: (:func:`_copied_on_chip`): its reuse goes through that memory, not the cache
    copied: bool = False


@dataclass
class SetConflict:
    """The lines an access touches in a loop fit a cache by capacity but not by its
    sets: their addresses are a multiple of the set span apart, so they fall into
    few sets, more lines than the set has ways each, and evict each other before a
    loop around them (which reads them again) comes back to them."""

    access: Access
    loop: Loop
    reuse: Loop
    cache: Any
    stride: int
    lines: int
    sets_used: int
    sets: int
    per_set: int
    ways: int


def _nearest_cache(hw: Any, space: str) -> Any:
    caches = [c for c in hw.caches_for(space) if c.cache_line_size]
    if not caches:
        return None
    return min(caches, key=lambda c: c.capacity if isinstance(c.capacity, int | float)
               else float("inf"))


def _holder(hw: Any, block: Any) -> Any:
    """The execution unit a cache or memory sits in (None: shared by the device)."""
    pos = hw.position(block)
    for a in reversed(pos.ancestors if pos else ()):
        if a.kind == "execution_unit":
            return a
    return None


def _units_in(hw: Any, holder: Any, par_unit: str) -> int | None:
    """How many units of ``par_unit`` one ``holder`` holds (slots in it or below)."""
    if holder is None:
        return None
    hpos = hw.position(holder)
    total = 0
    for s in hw.slots(par_unit):
        spos = hw.position(s.holder)
        if s.holder is holder:
            return s.per_holder if isinstance(s.per_holder, int) else None
        if spos is not None and holder in spos.ancestors and isinstance(s.per_holder, int):
            # units held below the holder: per inner holder × inner holders per holder
            inner = s.holders
            outer = hpos.instances if hpos is not None else 1
            if isinstance(inner, int) and isinstance(outer, int) and outer:
                total = max(total, s.per_holder * inner // outer)
    return total or None


class CacheAnalysis:
    """Best/worst-case cache-line fetches per access and loop."""

    name = "cache"

    def analyze(self, sym: Kernel, num: Kernel) -> dict:
        hw = sym.hardware
        result: dict = {"accesses": [], "oriented": False, "temporaries": [],
                        "unpredictable": [], "no_line_size": {}, "conflicts": []}
        if hw is None or not hw.caches():
            return result
        lockstep = {g.name for g in hw.lockstep_par_groups()}
        if len(num.accesses) != len(sym.accesses):
            return result
        # the elements atomic updates change: updated where the atomics run (the L2 of
        # a GPU), which no line of a nearer cache serves
        updated = {id(site.target.node) for k in (sym, num) for site in k.atomics
                   if site.target is not None}
        copied = _copied_on_chip(num)
        seen: set[tuple[str, str]] = set()
        for sacc, nacc in zip(sym.accesses, num.accesses, strict=True):
            if sacc.space is None:
                continue
            cache = _nearest_cache(hw, sacc.space)
            if cache is None:
                # caches of the space without a cache_line_size (descriptions of
                # earlier releases): said once per space
                if hw.caches_for(sacc.space):
                    result["no_line_size"].setdefault(sacc.space, sacc)
                continue
            key = (sacc.name, sacc.text)
            if key in seen:
                continue
            seen.add(key)
            if first_units_skip(nacc.loops):
                continue    # a remainder path that most units skip
            if nacc.offset is None:
                if not sacc.predictable:
                    result["unpredictable"].append(sacc)
                continue
            if id(sacc.node) in updated:
                continue
            line = int(cache.cache_line_size)
            holder = _holder(hw, cache)
            loops: list[LoopCache] = []
            nloops = _local_loops(num, nacc)
            for lp in nloops:
                step = lp.constant_step
                if lp.var is None or lp.trips is None or not lp.trips.is_number \
                        or lp.trips.is_finite is not True or step is None:
                    continue
                iters = int(lp.trips)
                if iters <= 1:
                    continue
                s = sympy.expand(nacc.offset.subs(lp.symbol, lp.symbol + step) - nacc.offset)
                if not s.is_number:
                    continue  # the stride depends on other indices: not a constant stride
                delta = int(s) * nacc.element_bytes
                stride = abs(delta)
                best = 1 if stride == 0 else min(iters, -(-(iters * stride) // line))
                worst = iters
                is_lockstep = lp.kind == "foreach" and lp.node.group in lockstep
                if lp.kind == "foreach" and lp.group is not None and lp.group.unit is not None:
                    reach = _units_in(hw, holder, lp.group.unit.name)
                    if reach is not None:
                        worst = min(worst, max(reach, best))
                if lp.kind == "foreach" and lp.group is not None and \
                        not _shares_cache(hw, holder, lp.group):
                    verdict = "not shared"
                elif stride == 0 and lp.kind != "foreach":
                    verdict = "does"
                elif is_lockstep and best < iters:
                    verdict = "does"
                elif best >= iters:
                    verdict = "does not"
                else:
                    verdict = "may"     # lines serve several iterations at best
                loops.append(LoopCache(lp, stride, iters, best, worst, verdict, is_lockstep,
                                       delta))
                conflict = _set_conflict(hw, sacc, nacc, nloops, lp, stride, iters)
                if conflict is not None:
                    result["conflicts"].append(conflict)
            for lc in loops:
                if lc.verdict == "does not":
                    lc.reused_in = _reused_in(lc, loops, nloops, line, cache.capacity)
            result["accesses"].append(AccessCache(sacc, cache, line, loops,
                                                  _streamed(num, nacc, loops, line),
                                                  id(nacc.node) in copied))
        result["oriented"] = _cache_oriented(hw, sym)
        result["temporaries"] = _temporaries(hw, sym, num)
        return result

    def report(self, result: dict, hw: Any) -> list[Diagnostic]:
        out: list[Diagnostic] = []
        sym_loops: dict[int, Loop] = {}
        for ac in result["accesses"]:
            bad = [lc for lc in ac.loops if lc.verdict == "does not" and lc.reused_in is None]
            if not bad or ac.streamed or ac.copied:
                continue
            worst = max(bad, key=lambda lc: (lc.best, lc.iterations))
            acc = ac.access
            sym_loop = next((lp for lp in acc.loops if lp.node is worst.loop.node), worst.loop)
            sym_loops[id(worst.loop)] = sym_loop
            count = number_text(worst.best)
            if sym_loop.trips is not None and sym_loop.trips.free_symbols and \
                    worst.best == worst.iterations:
                count = f"{sym_loop.size_text} = {count}" if sym_loop.kind == "foreach" \
                    else f"{sym_loop.trips} = {count}"
            d = warning("feedback-cache",
                        f"{acc.text} in loop {worst.loop.var} does not benefit from the cache "
                        f"({ac.cache.name}, {ac.line} B lines): stride {worst.stride} B, "
                        f"best case {count} cache-line fetches, worst case {worst.worst}",
                        acc.node.span,
                        f"compute more with each cache line of {acc.name}: reorder the loops "
                        f"or reuse {acc.text} for several elements")
            d.data.update(array=acc.name, loop=worst.loop.var, best=worst.best,
                          worst=worst.worst, stride=worst.stride, cache=ac.cache.name,
                          loops=[{"loop": lc.loop.var, "stride": lc.stride, "best": lc.best,
                                  "worst": lc.worst, "verdict": lc.verdict,
                                  "reused_in": lc.reused_in.var if lc.reused_in else None}
                                 for lc in ac.loops])
            out.append(d)
        for c in result["conflicts"]:
            acc = c.access
            span = c.cache.capacity // c.ways
            d = warning("feedback-cache-sets",
                        f"{acc.text} in loop {c.loop.var}: its {c.lines} cache lines are "
                        f"{c.stride} B apart, which maps them to {c.sets_used} of the "
                        f"{c.sets} sets of {c.cache.name} ({bytes_text(c.cache.capacity)}, "
                        f"{c.ways} ways, a set every {span} B): {c.per_set} lines compete "
                        f"for the {c.ways} ways of a set and evict each other before "
                        f"loop {c.reuse.var} reads them again, though together they would fit",
                        acc.node.span,
                        f"copy the lines that are read again into a contiguous array "
                        f"(packing), or pad {acc.name} by a cache line so that lines "
                        f"{c.stride} B apart spread over the sets")
            d.data.update(array=acc.name, loop=c.loop.var, reuse=c.reuse.var,
                          cache=c.cache.name, stride=c.stride, lines=c.lines,
                          sets_used=c.sets_used, sets=c.sets, per_set=c.per_set, ways=c.ways)
            out.append(d)
        for space, acc in result["no_line_size"].items():
            names = ", ".join(f"'{c.name}'" for c in hw.caches_for(space))
            out.append(info("feedback-cache",
                            f"accesses to '{space}' are not judged for the cache: the cache "
                            f"analysis needs the cache_line_size of {names} in '{hw.name}'",
                            acc.node.span,
                            "add for example 'cache_line_size = 64 B;' to the cache in the "
                            "hardware description"))
        for acc in result["unpredictable"]:
            out.append(info("feedback-cache",
                            f"{acc.text}: the index is no function of the loop indices and "
                            f"sizes ({acc.why_unpredictable}), so its cache behaviour cannot "
                            "be predicted", acc.node.span))
        if result["oriented"]:
            caches = ", ".join(f"{c.name} {bytes_text(c.capacity)}" for c in hw.caches()
                               if isinstance(c.capacity, int | float))
            out.append(info("feedback-cache",
                            f"'{hw.name}' is a cache-oriented architecture: its only fast "
                            f"memories are caches ({caches}); make sure that each access "
                            "benefits from the cache", result["oriented"].span))
        for t in result["temporaries"]:
            d = warning("feedback-cache",
                        f"try to adjust the size of {t['name']} ({t['bytes_text']} bytes, "
                        f"{t['copies']} copies on a {t['holder']}) to the caches "
                        f"({t['caches']})", t['node'].span,
                        "a smaller temporary that fits the nearest cache, used in several "
                        "passes, is usually faster")
            d.data.update(array=t["name"], copies=t["copies"], bytes=t["bytes"])
            out.append(d)
        return out


def _shares_cache(hw: Any, holder: Any, group: Any) -> bool:
    """Whether the units of one instance of the par_group ``group`` can share a cache
    held by ``holder`` (an execution unit; None: the device): where the nearest par_unit
    around the group that the description places (its slots) sits in the holder or
    below it, all the group's units of one such unit run in one holder (the warps of a
    block in one SM). The units of an outermost group (blocks, or the threads of a
    CPU) spread over the holders: consecutive units run on different SMs or cores,
    each with a cache of its own, and no order of theirs shares lines there."""
    if holder is None:
        return True
    hpos = hw.position(holder)
    if hpos is not None and hpos.instances == 1:
        return True
    groups = hw.par_groups()
    names = [g.name for g in groups]
    if group.name not in names:
        return True
    for g in reversed(groups[:names.index(group.name)]):
        slots = hw.slots(g.unit.name) if g.unit is not None else []
        if slots:
            for sl in slots:
                pos = hw.position(sl.holder)
                if sl.holder is holder or (pos is not None and holder in pos.ancestors):
                    return True
            return False
    return False


#: The most iterations of two loops whose lines are enumerated to find shared ones.
MAX_PAIR_ITERATIONS = 1 << 16


def _reused_in(lc: LoopCache, loops: list[LoopCache], nloops: tuple[Loop, ...], line: int,
               capacity: Any) -> Loop | None:
    """A loop in whose iterations the lines that ``lc``'s iterations fetch are used
    again, though ``lc``'s own iterations share none (its verdict "does not"), so that
    the access does benefit from the cache:

    * another loop of the same cache whose iterations touch the lines of other
      iterations of ``lc`` (conv3x3's ``img[i + y, j + x]``: warp wy + 1 reads at y = 0
      the row that warp wy reads at y = 1);
    * a loop whose consecutive iterations use the same lines in requests of their own
      (not the lanes of one request): a sequential loop of the unit that walks the
      lines contiguously (matvec's ``A[i, j0 + k]``, a lane's row, of which loop k uses
      each line 32 times; matmul cpu_v1's ``a[i0 + ei, k]``, six rows that loop k
      around loop ei walks together), or the warps of a block that read the same
      lines (gesummv hopper_v1's ``x[j]``). Not a sequential loop that reads the same
      element again, a reuse for a register: matmul cpu_v1's ``b[k, j0 + ej *
      nrVectors + v]``, read again in loop ei, keeps its message for loop k.

    Only where the lines in use until they are used again fit the cache: for two
    loops of the first kind, every line they touch; for a loop of the second, the
    lines of the units that run together (the warps and lanes of a block) and of the
    sequential loops inside it (matmul xeon_phi's ``b[k, j]``, a column of p lines
    that loop ei reads again, keeps its message; so does gesummv's ``A[i, j]`` at
    fermi, where the rows of a block's 1024 lanes, 128 kB, do not fit the 16 kB l1
    until loop j comes back to them)."""
    cap = capacity if isinstance(capacity, int | float) else None
    order = {id(lp): i for i, lp in enumerate(nloops)}
    together = 1            # lines of the units that run together in one holder
    for o in loops:
        if o.loop.kind == "foreach" and o.verdict != "not shared":
            together *= o.best
    for o in loops:
        if o is lc or o.verdict == "not shared" or o.stride == 0 or \
                lc.iterations * o.iterations > MAX_PAIR_ITERATIONS:
            continue
        users: dict[int, int] = {}      # line -> the iteration of lc that used it first
        shared = False
        for i in range(lc.iterations):
            for j in range(o.iterations):
                ln = (i * lc.delta + j * o.delta) // line
                if users.setdefault(ln, i) != i:
                    shared = True
        if shared and (cap is None or len(users) * line <= cap):
            return o.loop
    for o in loops:
        if o is lc or o.verdict == "not shared" or o.lockstep or o.stride >= line or \
                o.best >= o.iterations or (o.loop.kind == "for" and o.stride == 0):
            continue    # a sequential loop that reads the same element again: no walk
        inner = together
        for x in loops:
            if x.loop.kind == "for" and order.get(id(x.loop), -1) > order.get(id(o.loop), -1):
                inner *= x.best
        if cap is None or inner * line <= cap:
            return o.loop
    return None


def _copied_on_chip(k: Kernel) -> set[int]:
    """The ids of the nodes of reads that are copied into an on-chip memory (one that
    no cache holds, such as shared memory) which the kernel reads again: directly
    (``xs[tid] = xv[j0 + tid]``) or through a register array that only carries the
    values there (``bNext[u] = b[..]``, then ``l_b[..] = bNext[u]``). The units share
    these elements through that memory (a cooperative copy: each element loaded once
    per block, then read by its threads), so its lines have no reuse left for a cache
    to provide."""
    hw = k.hardware
    cached = {sp for c in hw.caches() for sp in c.spaces}
    registers = {ms.name for ms in hw.memory_spaces()
                 if (held := hw.memories_holding(ms.name))
                 and all(not m.addressable for m in held)}
    by_node = {id(a.node): a for a in k.accesses}
    read = {a.name for a in k.accesses if not a.write}

    def on_chip(a: Access) -> bool:
        return a.space is not None and a.space not in cached and a.space not in registers \
            and a.name in read and bool(hw.memories_holding(a.space))

    copies: list[tuple[Access, Access]] = []        # (target, value)
    for n in ast.walk(k.function):
        if isinstance(n, ast.Assign) and n.op == "=" and isinstance(n.value, ast.Index):
            t, v = by_node.get(id(n.target)), by_node.get(id(n.value))
            if t is not None and v is not None and not v.write:
                copies.append((t, v))
    out = {id(v.node) for t, v in copies if on_chip(t) and v.space in cached}
    # register arrays that only carry values into on-chip memory
    carriers = {t.name for t, v in copies if t.space in registers and v.space in cached}
    for a in k.accesses:
        if a.name in carriers and not a.write and \
                not any(v is a and on_chip(t) for t, v in copies):
            carriers.discard(a.name)
    out |= {id(v.node) for t, v in copies if t.name in carriers and v.space in cached}
    return out


def _streamed(num: Kernel, nacc: Access, loops: list[LoopCache], line: int) -> bool:
    """Whether ``nacc`` streams through its array: the lanes of a lock-step group share
    its cache lines (a lock-step loop that benefits, or, where the lanes' offsets step
    unevenly, ``c[ti * tm + ei, tj * tn + ej]`` with ``ti = tid / 16`` and ``tj = tid %
    16``, the lines of their enumerated offsets fewer than the lanes: matmul hopper
    v1's results, each written once) and the kernel accesses each
    element once (its executions fewer than 1.5 times the array's elements: a trip
    count the kernel model bounds from above, a grid-stride loop's at its longest,
    overstates them by less than that). A loop around it that touches a new line in
    each iteration then costs nothing a cache could save: each line is fetched once
    and used whole (vector_add's ``a[k]`` in its grid-stride loop, gesummv's rows of
    ``A``; spmv_csr hopper v1's ``rowPtr[r]``, one element for a warp's lanes, which
    their warp reads in one request; gesummv's ``y[i0 + t]`` under ``if (t < rows)``,
    written by the first lane of each warp). A store of each element once is a stream
    whatever its lanes do (transpose_naive's ``at[j, i]``, a line per lane): every
    element must reach the memory once, and what its lanes' scattered lines cost is a
    matter of coalescing, not of reuse."""
    from mcl.analyses.functions import KernelView
    from mcl.analyses.stats import site_executions
    from mcl.analyses.warp_lanes import active_lanes
    if not nacc.write and not any(lc.lockstep and lc.verdict == "does" for lc in loops) \
            and not _lanes_share_lines(num, nacc, loops, line):
        return False
    size = _array_bytes(nacc)
    moved = sympy.sympify(site_executions(num, nacc)[0]) * nacc.element_bytes
    for lc in loops:
        if not lc.lockstep:
            continue
        if lc.loop.var not in nacc.depends:   # lanes that read one element: one request
            moved /= lc.iterations
        elif nacc.guarded:      # only the lanes the ifs let run (``if (t < rows)``)
            lanes = active_lanes(KernelView(num, num, num.hardware), nacc, lc.loop,
                                 lc.iterations)
            moved *= sympy.Rational(max(1, sum(lanes)), lc.iterations)
    return bool(size is not None and size.is_number and moved.is_number
                and moved < 1.5 * size)


def _lanes_share_lines(num: Kernel, nacc: Access, loops: list[LoopCache], line: int) -> bool:
    """Whether the lanes of the lock-step loop, whose stride in ``nacc`` is not constant
    (it has no entry in ``loops``), touch fewer lines of ``line`` bytes than there are
    lanes (their offsets enumerated at the first iteration of the other loops)."""
    from mcl.analyses.functions import KernelView
    from mcl.analyses.warp_lanes import lane_offsets, lockstep_loop
    view = KernelView(num, num, num.hardware)
    found = lockstep_loop(view)
    if found is None:
        return False
    lane, width = found
    if lane not in nacc.loops or any(lc.loop is lane for lc in loops):
        return False
    offsets = lane_offsets(view, nacc, lane, width)
    return offsets is not None and \
        len({o * nacc.element_bytes // line for o in offsets}) < width


#: Loops longer than this are not checked for set conflicts (their lines are counted).
MAX_CONFLICT_ITERATIONS = 1 << 16


def _set_conflict(hw: Any, sacc: Access, nacc: Access, nloops: tuple[Loop, ...], lp: Loop,
                  stride: int, iters: int) -> SetConflict | None:
    """A set conflict of ``nacc`` in loop ``lp`` in the nearest cache where there is
    one (caches with an associativity), if a sequential loop around ``lp`` reads the
    same lines again (the access does not depend on it)."""
    if lp.kind == "foreach" or stride == 0 or iters > MAX_CONFLICT_ITERATIONS:
        return None
    outer = nloops[:nloops.index(lp)]
    reuse = next((o for o in reversed(outer) if o.kind == "for" and o.var
                  and o.var not in nacc.depends and o.trips not in (0, 1)), None)
    if reuse is None:
        return None
    caches = sorted((c for c in hw.caches_for(sacc.space) if c.cache_line_size
                     and c.associativity and isinstance(c.capacity, int | float)),
                    key=lambda c: c.capacity)
    for cache in caches:
        line, ways = int(cache.cache_line_size), int(cache.associativity)
        sets = int(cache.capacity) // (line * ways)
        if sets < 1:
            continue
        lines = {(i * stride) // line for i in range(iters)}
        if len(lines) * line > cache.capacity:
            continue            # too many lines for the cache anyway: a capacity matter
        per_set: dict[int, int] = {}
        for ln in lines:
            per_set[ln % sets] = per_set.get(ln % sets, 0) + 1
        most = max(per_set.values())
        if most > ways:
            sym_loop = next((x for x in sacc.loops if x.node is lp.node), lp)
            sym_reuse = next((x for x in sacc.loops if x.node is reuse.node), reuse)
            return SetConflict(sacc, sym_loop, sym_reuse, cache, stride, len(lines),
                               len(per_set), sets, most, ways)
        return None             # the nearest cache with sets keeps them
    return None


def _cache_oriented(hw: Any, k: Kernel) -> Any:
    """The function, when caches are the only memories faster than the device
    memory that programs can use (False otherwise)."""
    if not hw.caches():
        return False
    cached = {s for c in hw.caches() for s in c.spaces}
    for m in hw.memories():
        if m.kind == "cache" or not m.addressable:
            continue
        if any(s not in cached for s in m.spaces) and any(
                hw.is_faster(s, c) for s in m.spaces for c in cached):
            return False
    return k.function


def _temporaries(hw: Any, sym: Kernel, num: Kernel) -> list[dict]:
    """Local arrays in cached spaces whose copies (one per resident unit) exceed
    the nearest cache."""
    out: list[dict] = []
    if len(sym.decls) != len(num.decls):
        return out
    for sd, nd in zip(sym.decls, num.decls, strict=True):
        if not sd.node.type.is_array or sd.space is None:
            continue
        cache = _nearest_cache(hw, sd.space)
        if cache is None or nd.elements is None or not nd.elements.is_number:
            continue
        holder = _holder(hw, cache)
        # one copy per resident unit: foreach loops over the same group (a 2-D
        # grid of threads) share that group's slots
        per_group: dict[str, tuple[Any, int]] = {}
        for lp in nd.loops:
            if lp.kind != "foreach" or lp.group is None or lp.group.unit is None \
                    or lp.trips is None or not lp.trips.is_number:
                continue
            g, n = per_group.get(lp.group.name, (lp.group, 1))
            per_group[lp.group.name] = (g, n * int(lp.trips))
        copies = 1
        for g, n in per_group.values():
            reach = _units_in(hw, holder, g.unit.name)
            copies *= min(reach, n) if reach is not None else 1
        nbytes = int(nd.elements) * nd.element_bytes
        cap = cache.capacity if isinstance(cache.capacity, int | float) else None
        if cap is None or nbytes * copies <= cap:
            continue
        sym_bytes = sympy.sympify(sd.elements) * sd.element_bytes \
            if sd.elements is not None else nbytes
        caches = ", ".join(f"{c.name} {bytes_text(c.capacity)}" for c in hw.caches_for(sd.space)
                           if isinstance(c.capacity, int | float))
        out.append({"name": sd.node.name, "node": sd.node, "bytes": nbytes,
                    "bytes_text": str(sym_bytes), "copies": copies,
                    "holder": holder.name if holder is not None else "device",
                    "caches": f"{caches}; lines of {cache.cache_line_size} B"})
    return out
