"""Performance feedback functions (paper section 6.5): Python functions that a
hardware description names with ``performance_feedback("name")``.

A function receives a :class:`KernelView` (memory-space sizes, slots, the sizes
of the parallelism hierarchy the program uses, the accesses with their memory
spaces and executing unit, and an evaluator of just the statements needed to
compute sizes, with ``reset()``/``increment()`` over the units of a foreach)
and returns diagnostics. The registry maps names to functions; plug-ins add
to it through the ``mcl.feedback_functions`` entry point group. A description
never causes code to be imported: an unknown name is reported, not loaded.

Provided: ``shMem`` here (blocks per multiprocessor: occupancy limited by slots,
threads, registers (estimated) and shared memory), ``coalescing`` (memory transactions
per warp, and shared-memory bank conflicts; mcl.analyses.coalescing, on what the lanes
of a warp access, mcl.analyses.warp_lanes) and ``bankConflicts`` (mcl.analyses.banks).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import sympy

from mcl.analyses.kernel import Access, Kernel
from mcl.analyses.occupancy import occupancy
from mcl.analyses.resources import Resources
from mcl.analyses.values import bytes_text
from mcl.diagnostics import Diagnostic, info, warning

FeedbackFunction = Callable[["KernelView"], list[Diagnostic]]
_REGISTRY: dict[str, FeedbackFunction] = {}
ENTRY_POINT_GROUP = "mcl.feedback_functions"


def feedback_function(name: str) -> Callable[[FeedbackFunction], FeedbackFunction]:
    """Register a feedback function under the name descriptions use."""
    def register(fn: FeedbackFunction) -> FeedbackFunction:
        _REGISTRY[name] = fn
        return fn
    return register


def lookup(name: str) -> FeedbackFunction | None:
    """The function registered as ``name`` (here or by a plug-in), or None."""
    if name in _REGISTRY:
        return _REGISTRY[name]
    try:
        from importlib.metadata import entry_points

        for ep in entry_points(group=ENTRY_POINT_GROUP):
            if ep.name == name:
                fn = ep.load()
                _REGISTRY[name] = fn
                return fn
    except Exception:  # a broken plug-in must not break feedback for everyone
        return None
    return None


def registered() -> list[str]:
    return sorted(_REGISTRY)


# --------------------------------------------------------------------------- the kernel view


@dataclass
class KernelView:
    """What a feedback function may ask about a kernel on its description.

    ``sym`` has symbolic sizes (for messages), ``num`` numbers where parameter
    values are known. ``missing`` collects the names a function needed a value
    for; the driver turns them into ``feedback-needs-value``."""

    sym: Kernel
    num: Kernel
    hardware: Any
    missing: set[str] = field(default_factory=set)
    #: the vendor compiler's figures for this kernel, when a caller built it
    resources: Resources | None = None
    _cursor: dict[str, int] = field(default_factory=dict)
    #: what an analysis derives from the kernel once and asks again, by its name
    memo: dict[str, Any] = field(default_factory=dict)

    # ---- sizes

    def value(self, e: sympy.Expr | None) -> int | None:
        """An integer for a size, or None (recording the names it needs)."""
        if e is None:
            return None
        e = sympy.sympify(e)
        if e.is_number:
            if e.is_Integer:
                return int(e)
            try:  # zoo, nan or a complex number (x / 0, sqrt(-1)): no size
                f = float(e)
            except (TypeError, ValueError):
                return None
            return int(math.floor(f)) if math.isfinite(f) else None
        # a loop index has no value to give (run_offsets asks for a loop that starts at
        # a thread index); only the names a value could be set for are missing
        indices = {lp.var for lp in self.num.loops if lp.var}
        self.missing |= {s.name for s in e.free_symbols if s.name not in indices}
        return None

    def size_memory_space(self, space: str) -> int | None:
        """Bytes declared in ``space`` by one unit of the scope owning it."""
        total = 0
        for d in self.num.decls:
            if d.space != space:
                continue
            n = self.value(d.elements)
            if n is None:
                return None
            total += n * d.element_bytes
        return total

    def declarations_in(self, space: str) -> list[Any]:
        return [d for d in self.sym.decls if d.space == space]

    def group_size(self, group: str) -> int | None:
        """Units of par_group ``group`` per unit of the enclosing par_unit (the
        product of the foreach loops over it, which may nest)."""
        total = 1
        found = False
        for lp in self.num.foreach_loops():
            if lp.node.group == group:
                found = True
                v = self.value(lp.trips)
                if v is None:
                    return None
                total *= v
        return total if found else None

    def units_per(self, outer_unit: str, inner_unit: str) -> int | None:
        """Units of ``inner_unit`` inside one unit of ``outer_unit``."""
        groups = self.hardware.par_groups()
        names = [g.unit.name if g.unit else "" for g in groups]
        if outer_unit not in names or inner_unit not in names:
            return None
        total = 1
        for g in groups[names.index(outer_unit) + 1:names.index(inner_unit) + 1]:
            n = self.group_size(g.name)
            if n is None:
                return None
            total *= n
        return total

    def slots(self, par_unit: str) -> list[Any]:
        return self.hardware.slots(par_unit)

    # ---- instructions

    def accesses(self) -> list[tuple[Access, Access]]:
        """Each access with its numeric twin (same position in both kernels)."""
        if len(self.sym.accesses) != len(self.num.accesses):
            return []
        return list(zip(self.sym.accesses, self.num.accesses, strict=True))

    def executing_unit(self) -> str | None:
        u = self.hardware.executing_unit()
        return u.name if u else None

    # ---- iterating over units: reset()/increment() of the paper

    def reset(self, var: str) -> None:
        self._cursor[var] = 0

    def increment(self, var: str) -> None:
        self._cursor[var] = self._cursor.get(var, 0) + 1

    def _at_cursor(self, acc: Access, e: sympy.Basic) -> sympy.Basic | None:
        """``e`` (of ``acc``'s loop indices) at the cursor: loop indices set by
        reset()/increment(), every other loop at its first iteration."""
        subs: dict = {}
        for lp in acc.loops:
            if lp.var is None:
                continue
            if lp.var in self._cursor:
                subs[lp.symbol] = sympy.Integer(self._cursor[lp.var])
            else:
                subs[lp.symbol] = lp.start if lp.start is not None else sympy.Integer(0)
        try:
            for _ in range(4):  # loop starts may use outer indices
                # the keys are symbols and the values numbers or expressions of them:
                # replacing them rebuilds the expression, which evaluates it, many times
                # faster than subs (the feedback of matmul hopper v12 evaluates offsets
                # for every lane of every run)
                e = e.xreplace(subs)
                if e.is_number or e in (sympy.true, sympy.false):
                    break
        except (ZeroDivisionError, TypeError):
            # `% rows` where no block runs (rows = 0); a comparison with NaN (a size
            # divided by zero in a condition: sympy refuses to compare it)
            return None
        return e

    def evaluate(self, acc: Access) -> int | None:
        """The element offset of a (numeric) access at the cursor (:meth:`_at_cursor`)."""
        if acc.offset is None:
            return None
        e = self._at_cursor(acc, acc.offset)
        return None if e is None else self.value(e)

    def runs(self, acc: Access) -> bool:
        """Whether the ``if``s around ``acc`` let it run at the cursor (an ``if`` whose
        condition cannot be evaluated counts as true)."""
        for c in acc.conditions:
            if c.expr is None:
                continue
            if self._at_cursor(acc, c.expr) == sympy.false:
                return False
        return True


# --------------------------------------------------------------------------- occupancy


@feedback_function("shMem")
def shared_memory_occupancy(view: KernelView) -> list[Diagnostic]:
    """Blocks per multiprocessor and what limits them (paper Fig. 13/14)."""
    occ = occupancy(view)
    if occ is None:
        return []
    span = getattr(occ.anchor, "span", None)
    if span is None:
        span = next((lp.node.span for lp in view.sym.foreach_loops()), None)
    holder = occ.holder.name
    regs = ""
    up = _registers_headroom(view, occ)
    fit = (f"{occ.resident} {occ.unit}{'s fit' if occ.resident != 1 else ' fits'} up to "
           f"{up} registers per thread") if up else ""
    if occ.registers is not None:
        regs = (f" (about {occ.registers} registers per thread, estimated"
                if occ.registers_source == "estimated"
                else f" ({occ.registers} registers per thread, {occ.registers_source}")
        regs += f"; {fit})" if fit else ")"
    reasons = "; ".join(f"{k}: {occ.limits[k][1]}" for k in occ.limiting)
    headroom = f"; {fit}" if fit and "registers" in occ.limiting else ""
    grid = _grid_placement(view, occ)
    if grid:
        # fewer blocks than fit: no limit to lift, the grid leaves the slots empty
        d = info("feedback-occupancy",
                 f"{_blocks_text(occ.resident, occ.unit)}{_of_threads(view, occ)} "
                 f"fit{'s' if occ.resident == 1 else ''} per {holder} ({occ.resident}/"
                 f"{occ.slots} {occ.unit} slots)"
                 + (f", limited by {', '.join(occ.limiting)} ({reasons})" if occ.limiting
                    else regs) + f", but {grid}{headroom}", span)
    elif occ.resident >= occ.slots:
        d = info("feedback-occupancy",
                 f"using {occ.slots}/{occ.slots} {occ.unit} slots per {holder}{regs}", span)
    elif occ.full and not (occ.resident == 1 and _waits_at_barriers(view)):
        # every thread slot busy: more blocks of fewer threads would run no more threads
        # (but where one block holds them all, each of its barriers idles the holder)
        executing, most = occ.full
        d = info("feedback-occupancy",
                 f"using {occ.resident}/{occ.slots} {occ.unit} slots per {holder}, limited "
                 f"by {', '.join(occ.limiting)} ({reasons}): all {most} {executing} slots "
                 f"in use{headroom}", span)
    else:
        scarce = [k for k in occ.limiting if k.endswith(" memory")]
        hint = None
        if scarce:
            space = scarce[0].split()[0]
            hint = (f"{space} memory is a scarce resource: it is divided among the "
                    f"{occ.unit}s on a {holder}; reduce the amount of {space} memory by "
                    f"storing/loading it in several phases")
        elif any(k.endswith("s") and k != "registers" for k in occ.limiting):
            hint = f"use fewer units per {occ.unit} so that more {occ.unit}s fit on a {holder}"
        elif "registers" in occ.limiting:
            hint = "use fewer variables per unit" + (
                " (registers are estimated)" if occ.registers_source == "estimated" else "")
            more = _registers_for_more(view, occ)
            if more is not None:
                fewer, blocks = more
                hint += (f", or limit the compiler to {fewer} registers (mcl run "
                         f"--max-registers {fewer}: {_blocks_text(blocks, occ.unit)} per "
                         f"{holder}; it spills what does not fit, so measure)")
        msg = (f"using {occ.resident}/{occ.slots} {occ.unit} slots per {holder}"
               + (f", limited by {', '.join(occ.limiting)} ({reasons})" if occ.limiting
                  else regs) + headroom)
        d = warning("feedback-occupancy", msg, span, hint)
    d.data.update(unit=occ.unit, holder=holder, resident=occ.resident, slots=occ.slots,
                  limiting=occ.limiting, registers=occ.registers,
                  registers_source=occ.registers_source,
                  limits={k: v for k, (v, _) in occ.limits.items()},
                  registers_headroom=up)
    return [d] + _spills(view, occ, span)


def _spills(view: KernelView, occ, span) -> list[Diagnostic]:
    """What a thread keeps in local memory for want of registers: the bytes the vendor
    compiler reports (its spills and the arrays it could not keep in registers), or,
    estimated, the need beyond the most registers a thread of the block may have (the
    compiler spills), all the register arrays where they alone exceed it (kept in local
    memory in part or whole: occupancy.arrays_beyond_cap)."""
    from mcl.analyses.occupancy import arrays_beyond_cap, estimated_demand
    from mcl.analyses.resources import max_registers, spilled_bytes
    threads = occ.threads
    hint = ("fewer threads per block let each have more registers; fewer elements per "
            "thread (smaller register arrays, a smaller tile) need fewer")
    res = view.resources
    if res is not None:
        if spilled_bytes(res) is None:
            return []
        d = warning("feedback-spills",
                    f"the {res.source} keeps {bytes_text(res.spill_bytes)} per "
                    f"{view.executing_unit()} in local memory ({occ.registers} registers "
                    "used): spilled values or register arrays it could not keep in "
                    "registers, each access a memory access", span, hint)
        d.data.update(spill_bytes=res.spill_bytes, source=res.source)
        return [d]
    cap = max_registers(view.hardware, threads) if threads else None
    need = estimated_demand(view)
    if not cap or need <= cap:
        return []
    arrays = arrays_beyond_cap(view, cap)
    unit = view.executing_unit()
    msg = (f"about {need} registers per {unit} needed (estimated), beyond the {cap} each "
           f"of a block's {threads} {unit}s may have")
    msg += (f": its register arrays ({arrays} elements) alone are more, so the compiler "
            f"keeps some or all of them in local memory (up to {bytes_text(4 * arrays)} per "
            f"{unit}), each access a memory access" if arrays else
            f": the compiler fits it by computing values again where they are used or "
            f"spills up to {need - cap} of them to local memory, each access of a spilled "
            "value a memory access (measure)")
    d = warning("feedback-spills", msg, span, hint)
    d.data.update(need=need, cap=cap, local_elements=arrays)
    return [d]


def _waits_at_barriers(view: KernelView) -> bool:
    """Whether the kernel's threads wait at barriers (a holder with one resident block
    idles at each of them)."""
    from mcl.mcpl import ast
    return ast.contains_barrier(view.num.function)


def _registers_headroom(view: KernelView, occ) -> int | None:
    """The most registers per thread with which as many blocks stay resident (at most
    what the compiler may take for the block): how far the count, estimated or the
    compiler's, is from losing a block to registers. None without a register count."""
    from mcl.analyses.occupancy import registers_for_blocks
    if occ.registers is None or not occ.threads:
        return None
    return registers_for_blocks(view, occ.resident, occ.threads)


#: the largest share of its registers a limit may take from a kernel for one more block.
#: Measured on the H100 (benchmarks/results/perf/matmul_maxnreg_*.json, round 29 of
#: benchmarks/runs/): matmul kernels at 129-163 registers limited to 128 (cuts of 1-21.5%,
#: 0-32 bytes of spills) all gained, 0.68-0.82 -> 0.82-0.96 of cuBLAS (hopper_v10 with an
#: unpadded tile, 163: 3.35 -> 2.96 ms); gesummv hopper_v2 at 114 limited to 85 (25%: 3
#: blocks instead of 2) spilled 176 bytes and took 66 us instead of 48-50
_LIMIT_SHARE = 0.22


def _registers_for_more(view: KernelView, occ) -> tuple[int, int] | None:
    """The most registers per thread that let one more block be resident, where that is
    at most :data:`_LIMIT_SHARE` below what the kernel uses, and the blocks resident
    with them (with the kernel's other limits: 32 registers let 8 blocks of 256 threads
    onto an H100 SM, not just one more than 40 do); else None."""
    from mcl.analyses.occupancy import occupancy_by_registers, registers_for_blocks
    if occ.registers is None or not occ.threads:
        return None
    r = registers_for_blocks(view, occ.resident + 1, occ.threads)
    if r is None:
        return None
    r = min(r, occ.registers - 1)
    if r < max(16, int((1 - _LIMIT_SHARE) * occ.registers)):
        return None
    others = [v for k, (v, _) in occ.limits.items() if k != "registers"]
    return r, min([occupancy_by_registers(view, r, occ.threads) or 0, *others])


def _blocks_text(n: int, unit: str) -> str:
    return f"{n} {unit}{'s' if n != 1 else ''}"


def _of_threads(view: KernelView, occ) -> str:
    """' of 1024 threads': the executing units of a block, where known."""
    return f" of {occ.threads} {view.executing_unit()}s" if occ.threads else ""


def _grid_placement(view: KernelView, occ) -> str | None:
    """Where the grid has fewer blocks than its holders keep at once (a number known),
    how it places them: 'the grid's 132 blocks place 1 on each of the 132 smps: 1024 of
    the 2048 thread slots in use' (reduction hopper v3, where 2 blocks fit); else None."""
    from mcl.analyses.block_reuse import resident_blocks
    from mcl.analyses.timing_rates import instances
    from mcl.analyses.traffic import grid_units

    blocks, holders = grid_units(view, occ.unit), instances(view.hardware, occ.holder)
    if not isinstance(blocks, int) or not holders or blocks >= holders * occ.resident:
        return None
    most = resident_blocks(view, occ)
    each, rest = divmod(blocks, holders)
    where = (f"{each} on each of the {holders} {occ.holder.name}s" if not rest else
             f"{most} on {rest} of the {holders} {occ.holder.name}s and "
             f"{each or 'none'} on the others")
    text = f"the grid's {_blocks_text(blocks, occ.unit)} place {where}"
    if occ.threads and occ.executing_slots:
        busy = f"{most * occ.threads}" + (f" and {each * occ.threads}" if rest and each
                                          else "")
        text += (f": {busy} of the {occ.executing_slots} {view.executing_unit()} slots "
                 "in use")
    return text
