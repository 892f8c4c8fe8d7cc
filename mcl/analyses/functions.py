"""Performance feedback functions (paper section 6.5): Python functions that a
hardware description names with ``performance_feedback("name")``.

A function receives a :class:`KernelView` (memory-space sizes, slots, the sizes
of the parallelism hierarchy the program uses, the accesses with their memory
spaces and executing unit, and an evaluator of just the statements needed to
compute sizes, with ``reset()``/``increment()`` over the units of a foreach)
and returns diagnostics. The registry maps names to functions; plug-ins add
to it through the ``mcl.feedback_functions`` entry point group. A description
never causes code to be imported: an unknown name is reported, not loaded.

Provided: ``shMem`` (blocks per multiprocessor: occupancy limited by slots,
threads, registers (estimated) and shared memory), ``coalescing`` (memory
transactions per warp, and shared-memory bank conflicts), ``bankConflicts``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import sympy

from mcl.analyses.datadep import data_kernel
from mcl.analyses.kernel import Access, Kernel, Loop
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
        self.missing |= {s.name for s in e.free_symbols}
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


#: bytes of local memory a thread below which the vendor's figure is a small stack frame,
#: not spills: the recorded kernels have 8 B (matmul gpu_v1, hopper_v1 and seven more)
#: or 48 B and more (gesummv hopper v2 with 32 warps 280 B, reduction hopper v3 with 16
#: runs 112 B, both at their caps of 64 registers)
_LOCAL_NOTED = 16


def _spills(view: KernelView, occ, span) -> list[Diagnostic]:
    """What a thread keeps in local memory for want of registers: the bytes the vendor
    compiler reports (its spills and the arrays it could not keep in registers), or,
    estimated, the need beyond the most registers a thread of the block may have (the
    compiler spills), all the register arrays where they alone exceed it (kept in local
    memory in part or whole: occupancy.arrays_beyond_cap)."""
    from mcl.analyses.occupancy import arrays_beyond_cap, estimated_demand
    from mcl.analyses.resources import max_registers
    threads = occ.threads
    hint = ("fewer threads per block let each have more registers; fewer elements per "
            "thread (smaller register arrays, a smaller tile) need fewer")
    res = view.resources
    if res is not None:
        if (res.spill_bytes or 0) < _LOCAL_NOTED:
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
    return any(isinstance(x, ast.Barrier) for x in ast.walk(view.num.function))


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
    from mcl.analyses.timing import instances
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


# --------------------------------------------------------------------------- warps


def lockstep_loop(view: KernelView) -> tuple[Loop, int] | None:
    """The foreach over the lock-step par_group (warp lanes) and its width."""
    groups = view.hardware.lockstep_par_groups()
    for g in groups:
        size = g.size
        if not isinstance(size, int):
            continue
        for lp in view.num.foreach_loops():
            if lp.node.group == g.name:
                return lp, size
    return None


def transaction_size(view: KernelView, space: str | None) -> tuple[int, str]:
    """The unit of a memory transaction for ``space``: the caches' sectors where the
    description has them (32 B on an H100), else their lines; 128 B lines without a
    cache. With the word the messages use for it."""
    hw = view.hardware
    if space is not None:
        caches = hw.caches_for(space)
        sectors = [c.sector_size for c in caches if c.sector_size]
        if sectors:
            return int(min(sectors)), "sectors"
        sizes = [c.cache_line_size for c in caches if c.cache_line_size]
        if sizes:
            return int(min(sizes)), "memory segments"
    return 128, "memory segments"


def lane_offsets(view: KernelView, acc: Access, lane: Loop, width: int,
                 at: Mapping[str, int] | None = None) -> list[int] | None:
    """The element offsets of ``acc`` for the first ``width`` lanes of loop ``lane``,
    the loops ``at`` names at those values and every other loop at its first
    iteration; None where one cannot be evaluated, or
    where the access moves with a loop whose start is read from memory (``k`` of
    ``for (k = rowPtr[r]; ...)``: mcl.analyses.datadep knows more)."""
    if acc.offset is not None and any(
            lp.start is None and lp.var and lp is not lane and lp.var not in (at or {})
            and lp.symbol in acc.offset.free_symbols for lp in acc.loops):
        return None
    view._cursor.clear()
    view._cursor.update(at or {})
    view.reset(lane.var)
    out = _across_lanes(view, acc, lane, width)
    view._cursor.clear()
    return out


def _across_lanes(view: KernelView, acc: Access, lane: Loop, width: int) -> list[int] | None:
    """The offsets of ``acc`` for ``width`` consecutive lanes of loop ``lane`` from the
    view's cursor as it is (None where one cannot be evaluated)."""
    out = []
    for _ in range(width):
        off = view.evaluate(acc)
        if off is None:
            return None
        out.append(off)
        view.increment(lane.var)
    return out


#: Elements of the runs the OpenCL generator turns into one 128-bit access per unit
#: (mcl.opencl.vectorize.WIDTH).
RUN = 4


@dataclass
class _Variable:
    """A variable as :func:`mcl.opencl.vectorize.analyse` asks the generator about it
    (its ``lookup``): the type, the OpenCL address space, the variable a view views."""

    name: str
    type: Any
    qualifier: str
    base: _Variable | None = None
    tiled: bool = False

    @property
    def root(self) -> _Variable:
        v = self
        while v.base is not None:
            v = v.base
        return v


def _qualifiers(view: KernelView) -> dict[str, str]:
    """The OpenCL address space of each memory space: the ``[spaces]`` table of the
    target file beside the description (what the generator declares); without one,
    as the description's memories hold them (banked: local; addressable: global)."""
    if "qualifiers" not in view.memo:
        import tomllib

        from mcl.analyses.target_settings import target_file
        table: dict[str, Any] = {}
        file = target_file(view.hardware)
        try:
            if file is not None and file.is_file():
                table = tomllib.loads(file.read_text()).get("spaces") or {}
        except (OSError, tomllib.TOMLDecodeError):
            table = {}
        view.memo["qualifiers"] = {k: v.get("qualifier", "__private") for k, v in table.items()
                                   if isinstance(v, dict)}
    return view.memo["qualifiers"]


def _qualifier(view: KernelView, space: str | None) -> str:
    if space is None:
        return "__private"
    table = _qualifiers(view)
    if table:
        return table.get(space, "__private")
    mems = view.hardware.memories_holding(space) if view.hardware is not None else []
    if mems and any(m.nr_banks for m in mems):
        return "__local"
    return "__global" if mems and all(m.addressable for m in mems) else "__private"


def _generator_variable(view: KernelView, sym: Any, depth: int = 0) -> _Variable | None:
    """The generator's view of the variable declared as ``sym`` (mcl.mcpl Symbol), as
    mcl.opencl.emit_statements declares it: an array declared in global memory inside
    an innermost foreach is one per unit (private); a view keeps its array's address
    space and is tiled where it splits a one-dimensional array into levels."""
    if sym is None or depth > 8:
        return None
    from mcl.mcpl import ast

    qualifier = _qualifier(view, sym.space)
    if sym.kind == "view":
        name = getattr(sym.init, "id", None)
        base = _generator_variable(view, _declared(view, name), depth + 1) \
            if name is not None else None
        if base is None:
            return None
        bt, vt = base.type, sym.type
        tiled = (len(bt.dims) == 1 and len(vt.dims) > 1
                 and all(len(level) == len(bt.dims[0]) for level in vt.dims))
        return _Variable(sym.name, vt, base.qualifier,
                         base.root if not base.tiled else base, tiled)
    if sym.kind == "local" and qualifier == "__global":
        loops = view.num.checked.foreach_around(sym.node)
        if loops and not any(isinstance(n, ast.ForEach) for n in ast.walk(loops[-1].body)):
            qualifier = "__private"
    return _Variable(sym.name, sym.type, qualifier)


def _declared(view: KernelView, name: str) -> Any:
    """The symbol of the parameter, declaration or view named ``name`` in the kernel."""
    from mcl.mcpl import ast

    f, checked = view.num.function, view.num.checked
    for p in f.params:
        if p.name == name:
            return checked.symbol(p)
    for n in ast.walk(f.body):
        if isinstance(n, ast.Declaration):
            if n.name == name:
                return checked.symbol(n)
            for v in n.views:
                if v.name == name:
                    return checked.symbol(v)
    return None


def vector_loop(view: KernelView, acc: Access) -> Loop | None:
    """The innermost loop around ``acc`` where the OpenCL generator turns 4 of its
    iterations into one 128-bit access of ``acc``, else None: the question
    mcl.opencl.emit_statements asks of a ``for`` loop, by the same functions -- a
    counted loop (:func:`mcl.opencl.vectorize.counted_loop`) whose bounds are
    constants of the program, whose body copies runs of adjacent elements between
    memory and registers (:func:`mcl.opencl.vectorize.analyse`), ``acc`` one of the
    copies' accesses to memory. A loop that reduces (``sum += A[i, j0 + k] * xs[k]``)
    or has a trip count that is not a multiple of 4 or not a constant stays scalar."""
    if not acc.loops or acc.loops[-1].kind != "for":
        return None
    run = acc.loops[-1]
    found = view.memo.setdefault("vector_loops", {})
    key = id(run.node)
    if key not in found:
        found[key] = _vector_form(view, run)
    vec = found[key]
    if vec is None or not any(a.index is acc.node for a in vec.memory_accesses()):
        return None
    return run


def _vector_form(view: KernelView, run: Loop) -> Any:
    """mcl.opencl.vectorize.analyse of loop ``run`` as the generator calls it (None
    where the loop is not counted or its bounds are not constants)."""
    from mcl.mcpl import ast
    from mcl.opencl import vectorize

    node = run.node
    if not isinstance(node, ast.For):
        return None
    counted = vectorize.counted_loop(node)
    sym = next((lp for lp in view.sym.loops if lp.node is node), None)
    if counted is None or sym is None or sym.trips is None:
        return None
    # the generator's bounds: constants of the program, whatever the parameters
    start, trips = sympy.sympify(sym.start if sym.start is not None else 0), \
        sympy.sympify(sym.trips)
    if not (start.is_Integer and trips.is_Integer) or sym.approximate:
        return None
    checked = view.num.checked
    variables: dict[str, _Variable | None] = {}
    for n in ast.walk(node.body):
        if isinstance(n, ast.Name) and n.id not in variables:
            variables[n.id] = _generator_variable(view, checked.declaration_of(n))
    return vectorize.analyse(node, counted[0], int(trips), variables.get, set())


def run_offsets(view: KernelView, acc: Access, lane: Loop, width: int,
                at: Mapping[str, int] | None = None) -> list[int] | None:
    """The element offsets a warp accesses in one run where the generator makes ``acc``
    one 128-bit access per lane (:func:`vector_loop`); None otherwise. The loops ``at``
    names at those values."""
    if vector_loop(view, acc) is None or acc.loops[-1] is lane:
        return None
    run = acc.loops[-1]
    trips, step = view.value(run.trips), view.value(run.step) if run.step is not None else 1
    start = view.value(run.start) if run.start is not None else 0
    if trips is None or trips % RUN or step != 1 or start is None:
        return None
    rows = run_rows(view, acc, run, start, lane, width, at)
    if rows is None or any(rows[j][k] != rows[0][k] + j for j in range(RUN)
                           for k in range(width)):
        return None
    return [off for row in rows for off in row]


def run_rows(view: KernelView, acc: Access, run: Loop, start: int, lane: Loop,
             width: int, at: Mapping[str, int] | None = None) -> list[list[int]] | None:
    """The element offsets of ``acc`` for the first RUN iterations of loop ``run`` (from
    ``start``), each a row over ``width`` consecutive lanes of loop ``lane``; None where
    an offset cannot be evaluated."""
    rows = []
    try:
        for j in range(RUN):
            view._cursor.clear()
            view._cursor.update(at or {})
            view._cursor[run.var] = start + j
            view._cursor[lane.var] = 0
            row = _across_lanes(view, acc, lane, width)
            if row is None:
                return None
            rows.append(row)
    finally:
        view._cursor.clear()
    return rows


@dataclass
class _Judged:
    """A warp's access to cached device memory as :func:`coalescing` judges it: the
    lanes' element offsets (of the whole run for a 128-bit access, else None in
    ``run``), the transaction unit, and the units it touches against the fewest its
    elements need."""

    sacc: Access
    nacc: Access
    offsets: list[int]
    run: list[int] | None
    line: int
    unit: str
    touched: int
    ideal: int

    def key(self) -> tuple:
        """Accesses of one array in one direction inside the same loops."""
        return self.sacc.name, self.sacc.write, tuple(id(lp) for lp in self.nacc.loops)


@feedback_function("coalescing")
def coalescing(view: KernelView) -> list[Diagnostic]:
    """Memory transactions per warp for accesses to cached device memory, and
    bank conflicts in banked on-chip memory."""
    found = lockstep_loop(view)
    if found is None:
        return []
    lane, width = found
    out: list[Diagnostic] = []
    optimal: list[str] = []
    judged: list[_Judged] = []
    dk: Any = None      # the data-aware kernel (mcl.analyses.datadep), made where needed
    dk_made = False
    hw = view.hardware
    for sacc, nacc in view.accesses():
        if lane not in nacc.loops or sacc.space is None:
            continue
        mems = hw.memories_holding(sacc.space)
        if not mems or not all(m.addressable for m in mems):
            continue
        if any(m.nr_banks for m in mems):
            continue  # on-chip banked memory: see bank_conflicts
        offsets = lane_offsets(view, nacc, lane, width)
        if offsets is None:
            if not dk_made:
                dk, dk_made = data_kernel(view.num), True
            sources = lane_data(dk, nacc, lane)
            found_data = None if sources else _data_lane_offsets(view, dk, nacc, lane, width)
            if found_data is None or found_data[1]:
                d = _data_coalescing(view, sacc, lane, width, sources, found_data)
                if d is not None:
                    out.append(d)
                continue
            offsets = found_data[0]  # known once a while loop's variables are
        line, unit = transaction_size(view, sacc.space)
        eb = sacc.element_bytes
        run = run_offsets(view, nacc, lane, width)
        if run is not None:   # one 128-bit access per lane: judge the whole run
            offsets = run
        segments = {off * eb // line for off in offsets}
        ideal = max(1, -(-(len(set(offsets)) * eb) // line))
        judged.append(_Judged(sacc, nacc, offsets, run, line, unit, len(segments), ideal))
    records = _records(judged, width)
    reported: set[int] = set()
    for j in judged:
        group = records.get(id(j))
        if group is not None:
            if id(group[0]) not in reported:
                reported.add(id(group[0]))
                d = _record_access(view, group, lane, width)
                if d is not None:
                    out.append(d)
                elif _used(group) == 1 and j.sacc.name not in optimal:
                    optimal.append(j.sacc.name)   # every byte of its units used
            continue
        if j.touched <= j.ideal:
            d = _misaligned_rows(view, j, lane, width)
            if d is not None:
                out.append(d)
            elif j.sacc.name not in optimal:
                optimal.append(j.sacc.name)
            continue
        d = _stencil_shift(view, j, judged, lane, width) or _uncoalesced(view, j, lane, width)
        out.append(d)
    if optimal and not out:
        span = lane.node.span
        d = info("feedback-coalescing",
                 f"optimal memory access: the accesses to {', '.join(optimal)} by a warp of "
                 f"{width} {lane.node.group} are coalesced", span)
        d.data.update(arrays=optimal)
        out.append(d)
    # imported here: mcl.analyses.banks builds on this module
    from mcl.analyses.banks import bank_conflicts

    return out + load_requests(view, lane) + bank_conflicts(view)


def _uncoalesced(view: KernelView, j: _Judged, lane: Loop, width: int) -> Diagnostic:
    """The warning for an access whose warp touches more transaction units than its
    elements need."""
    sacc, run, line = j.sacc, j.run, j.line
    eb = sacc.element_bytes
    verb = "writing" if sacc.write else "reading"
    each = (f"each {verb} a run of {RUN} adjacent elements" if run is not None
            else f"each {verb} {eb} B")
    what = f"a warp of {width} {lane.node.group} ({each})"
    stride = _stride(j.offsets if run is None else run[:width])
    hint = (f"make neighbouring {lane.var} access neighbouring elements (the last "
            f"index should vary with {lane.var})")
    if run is None and stride == 1:
        # adjacent already: the warp's elements straddle a segment boundary
        hint = (f"neighbouring {lane.var} access neighbouring elements already; the "
                f"warp's elements cross a {line} B boundary (a row that does not start "
                "on one, or lanes that go on into the next row): pad the rows to a "
                f"multiple of {line} B, or give each warp a row segment of its own")
    elif run is None and stride == RUN and (lp := _stepping_loop(view, j.nacc, lane, width)):
        # each lane covers RUN adjacent elements, one per iteration of a loop
        hint = (f"each {lane.var} {'writes' if sacc.write else 'reads'} {RUN} adjacent "
                f"elements over loop {lp.var}, "
                f"one request each: as a counted loop of {RUN} that copies them "
                f"{'from' if sacc.write else 'into'} a run of adjacent elements (a private "
                f"array of {RUN}), the code generator makes them one 128-bit access per "
                f"{lane.var}, and a warp's request touches the {j.touched} {j.unit} once "
                f"for all {RUN}")
    elif run is not None and stride > RUN:
        # the index already varies with the lane, which covers several runs
        hint = (f"let neighbouring {lane.var} access neighbouring runs of {RUN}: each "
                f"{lane.var} now covers {stride} adjacent elements; give each its runs "
                f"{width} runs apart ({lane.var}, {lane.var} + {width}, ...)")
    d = warning("feedback-coalescing",
                f"{sacc.text}: {what} touches "
                f"{j.touched} {j.unit} of {line} B where {j.ideal} would do "
                f"(stride {stride * eb} B between neighbouring {lane.var})",
                sacc.node.span, hint)
    d.data.update(array=sacc.name, segments=j.touched, ideal=j.ideal)
    return d


#: values of each loop around an access at which the alignment of its rows is judged
_ROW_VALUES = 8
#: combinations of those values judged in all (fewer values per loop beyond it)
_ROW_SAMPLES = 256


def _misaligned_rows(view: KernelView, j: _Judged, lane: Loop,
                     width: int) -> Diagnostic | None:
    """For an access that the first iteration of the loops around it finds coalesced:
    where its rows are not a multiple of the transaction unit (rows of 4098 floats,
    16392 B), later rows start off a unit boundary, and a warp's request touches more
    units on average over the loops' iterations (conv3x3's ``img[i + y, j + x]``: 4.83
    sectors of 32 B, where the first row and shift touch 4; what mcl.analyses.sectors
    counts). The average is taken over the first values of every loop around it
    (fewer per loop where their combinations are many), with the rows as they are and
    padded to a multiple of the unit; a message where padding lowers it: a warning
    where that saves a tenth of the units, else an info (conv3x3: 4.67 padded, the
    rest the window's shifts by x). None otherwise."""
    from dataclasses import replace

    from mcl.analyses.kernel_syntax import flat_offset

    nacc, sacc, line, eb = j.nacc, j.sacc, j.line, j.sacc.element_bytes
    t = getattr(nacc.symbol, "type", None)
    if j.run is not None or t is None or len(nacc.sizes) < 2 or nacc.sizes[-1] is None \
            or line % eb:
        return None
    row = sympy.sympify(nacc.sizes[-1])
    if not row.is_Integer or int(row) <= 0 or int(row) * eb % line == 0:
        return None
    row = int(row)
    padded = row + (-row * eb) % line // eb
    longer = flat_offset(t, list(nacc.indices), [*nacc.sizes[:-1], sympy.Integer(padded)])
    if longer is None:
        return None
    loops, values = [], []
    for lp in nacc.loops:
        if lp is lane or lp.var is None:
            continue
        start = sympy.sympify(lp.start) if lp.start is not None else sympy.Integer(0)
        step = sympy.sympify(lp.step) if lp.step is not None else sympy.Integer(1)
        trips = sympy.sympify(lp.trips) if lp.trips is not None else None
        if not (start.is_Integer and step.is_Integer and trips is not None
                and trips.is_Integer and int(trips) > 1):
            continue
        loops.append(lp)
        values.append([int(start) + int(step) * k for k in range(min(int(trips), _ROW_VALUES))])
    while math.prod(len(v) for v in values) > _ROW_SAMPLES:
        k = max(range(len(values)), key=lambda x: len(values[x]))
        values[k] = values[k][:max(1, len(values[k]) // 2)]
    shifted = replace(nacc, offset=longer)
    now = pad = count = 0
    for combo in itertools.product(*values):
        at = {lp.var: v for lp, v in zip(loops, combo, strict=True)}
        a = lane_offsets(view, nacc, lane, width, at)
        b = lane_offsets(view, shifted, lane, width, at)
        if a is None or b is None:
            continue
        count += 1
        now += len({o * eb // line for o in a})
        pad += len({o * eb // line for o in b})
    if not count:
        return None
    now, pad = now / count, pad / count
    if now <= j.ideal + 0.05 or pad >= now - 0.05:
        return None
    rest = (f"; what remains comes from shifts by the loops' indices (a window's "
            f"neighbour reads), whose extra {j.unit} the cache serves" if pad > j.ideal + 0.05
            else "")
    text = (f"{sacc.text}: a warp of {width} {lane.node.group} touches {j.touched} {j.unit} of "
            f"{line} B at the first iteration of the loops around it, but {now:.2f} per "
            f"request on average over them, where {j.ideal} would do: its rows of "
            f"{row * eb} B are not a multiple of {line} B, so later rows start off a "
            f"{j.unit[:-1]} boundary")
    hint = (f"pad the rows of {sacc.name} to a multiple of {line} B ({row} -> {padded} "
            f"elements): {pad:.2f} {j.unit} per request on average{rest}")
    make = warning if (now - pad) >= 0.1 * now else info
    d = make("feedback-coalescing", text, sacc.node.span, hint)
    d.data.update(array=sacc.name, segments=round(now, 2), ideal=j.ideal,
                  padded_segments=round(pad, 2), row=row, padded_row=padded)
    return d


def _stepping_loop(view: KernelView, nacc: Access, lane: Loop, width: int) -> Loop | None:
    """The innermost sequential loop inside ``lane`` whose next iteration moves every
    lane's element by one (``a[i, k]`` with ``k = aq + u`` in loop u), where its start
    is a number; None where there is none."""
    inner = nacc.loops[nacc.loops.index(lane) + 1:]
    first = lane_offsets(view, nacc, lane, width)
    if first is None:
        return None
    for lp in reversed(inner):
        if lp.kind == "foreach" or lp.var is None:
            continue
        start = sympy.sympify(lp.start) if lp.start is not None else sympy.Integer(0)
        if not start.is_Integer:
            continue
        nxt = lane_offsets(view, nacc, lane, width, {lp.var: int(start) + 1})
        if nxt is not None and all(b == a + 1 for a, b in zip(first, nxt, strict=True)):
            return lp
    return None


def _shift(a: _Judged, b: _Judged) -> int | None:
    """The constant number of elements by which every lane's offset of ``b`` lies
    beyond ``a``'s (None where the lanes' distances differ)."""
    if a.run is not None or b.run is not None or len(a.offsets) != len(b.offsets):
        return None
    shifts = {ob - oa for oa, ob in zip(a.offsets, b.offsets, strict=True)}
    return shifts.pop() if len(shifts) == 1 else None


def _records(judged: list[_Judged], width: int) -> dict[int, list[_Judged]]:
    """The accesses that read (or write) fields of one record per lane, by the id of
    each: two or more accesses to one array inside the same loops, every lane's
    offsets a constant distance apart within a record (``pos[i, 0]``, ``pos[i, 1]``,
    ``pos[i, 2]`` of rows of 4: the lanes' records 16 B apart), that either use every
    byte of the transaction units they touch together (``acc[i, 0..3]``) or run once
    per lane (no sequential loop around them) and use more than half of those bytes
    (``pos``: 12 of each 16). A warp's first such access fetches the units of its
    records and the cache serves the others: what the records need, not what one field
    of each would. Accesses that are not one of these are left out."""
    out: dict[int, list[_Judged]] = {}
    groups: list[list[_Judged]] = []
    for j in judged:
        if j.run is not None or j.touched <= j.ideal:
            continue
        stride = _stride(j.offsets)
        if stride <= 1 or any(b - a != stride for a, b in itertools.pairwise(j.offsets)):
            continue
        for g in groups:
            d = _shift(g[0], j)
            if g[0].key() == j.key() and d is not None and abs(d) < stride:
                g.append(j)
                break
        else:
            groups.append([j])
    for g in groups:
        if len(g) < 2:
            continue
        fields = sorted({_shift(g[0], j) for j in g})
        stride = _stride(g[0].offsets)
        if fields[-1] - fields[0] >= stride:
            continue    # the fields of neighbouring lanes' records overlap
        once = all(lp.kind == "foreach" for lp in g[0].nacc.loops)
        if _used(g) == 1 or once and _used(g) > 0.5:
            for j in g:
                out[id(j)] = g
    return out


def _used(group: list[_Judged]) -> float:
    """The share of the bytes of the transaction units the accesses of ``group`` touch
    that they use together (1: every byte)."""
    union = {o for j in group for o in j.offsets}
    eb, line = group[0].sacc.element_bytes, group[0].line
    return len(union) * eb / (len({o * eb // line for o in union}) * line)


def _record_access(view: KernelView, group: list[_Judged], lane: Loop,
                   width: int) -> Diagnostic | None:
    """At most one info for the accesses of ``group`` (:func:`_records`): where the
    lanes' records are 4 aligned elements of a type the generator reads as vectors,
    that one 128-bit access per lane (a counted loop of 4 over the fields,
    mcl.opencl.vectorize) would make them one request; nothing otherwise."""
    from mcl.opencl.vectorize import VECTOR_TYPES

    first = group[0]
    sacc, line, eb = first.sacc, first.line, first.sacc.element_bytes
    stride = _stride(first.offsets)
    base = min(min(j.offsets) for j in group)
    etype = getattr(getattr(sacc.symbol, "type", None), "name", None)
    if stride != RUN or RUN * eb != 16 or etype not in VECTOR_TYPES \
            or any(min(j.offsets[k] for j in group) % RUN for k in range(width)) \
            or base < 0:
        return None
    union = {o for j in group for o in j.offsets}
    touched = len({o * eb // line for o in union})
    names = ", ".join(j.sacc.text for j in group)
    verb, noun = ("writes", "stores") if sacc.write else ("reads", "loads")
    used = len({_shift(first, j) for j in group}) * eb
    once = all(lp.kind == "foreach" for lp in first.nacc.loops)
    served = ("the L2 merges them before they reach memory" if sacc.write
              else "the cache serves all but the first")
    d = info("feedback-coalescing",
             f"{names}: each of a warp's {width} {lane.node.group} {verb} {used} B of its "
             f"own {RUN * eb} B record{' once' if once else ''}; the {len(group)} "
             f"{noun} touch the same {touched} {first.unit} of {line} B, as many as the "
             f"records need ({served}); one 128-bit access per "
             f"{lane.node.group[:-1] if lane.node.group.endswith('s') else lane.node.group} "
             f"would make them one",
             sacc.node.span,
             f"access the record in a counted loop of {RUN} over its fields (through a "
             f"private array of {RUN}), which the code generator makes one 128-bit access")
    d.data.update(array=sacc.name, segments=touched, ideal=touched,
                  accesses=[j.sacc.text for j in group])
    return d


def _block_word(view: KernelView) -> str:
    """The unit of the description's outermost par_group (hopper's block), whose
    threads share a multiprocessor and its L1."""
    groups = view.hardware.par_groups() if view.hardware is not None else []
    unit = groups[0].unit if groups else None
    return unit.name if unit is not None else "block"


def _stencil_shift(view: KernelView, j: _Judged, judged: list[_Judged], lane: Loop,
                   width: int) -> Diagnostic | None:
    """An info where ``j`` reads neighbouring elements of the lanes' own
    (``vin[i - 1]`` beside ``vin[i]``; ``grid[r, c + 1]``): adjacent lanes, another read
    of the array inside the same loops a constant shift of less than a transaction
    unit away, and the same lanes' elements shifted by less than one that touch no
    more units than they need. The extra unit is the neighbouring warp's, which the
    cache serves; no layout removes it. None where that is not so."""
    sacc, line, eb = j.sacc, j.line, j.sacc.element_bytes
    if sacc.write or j.run is not None or _stride(j.offsets) != 1 \
            or any(b - a != 1 for a, b in itertools.pairwise(j.offsets)):
        return None
    near = max(1, line // eb)
    shifts = [(abs(d), d, o) for o in judged
              if o is not j and not o.sacc.write and o.key() == j.key()
              and (d := _shift(j, o)) is not None and 0 < abs(d) < near]
    if not shifts:
        return None
    aligned = [k for k in range(-near + 1, near)
               if len({(off + k) * eb // line for off in j.offsets}) <= j.ideal]
    if not aligned:
        return None
    _, d, other = min(shifts, key=lambda x: (x[2].touched > x[2].ideal, x[0]))
    extra = j.touched - j.ideal
    units = j.unit if extra != 1 else j.unit[:-1]
    apart = f"{abs(d)} element{'s' if abs(d) != 1 else ''} {'before' if d > 0 else 'after'}"
    msg = (f"{sacc.text}: a warp of {width} {lane.node.group} touches {j.touched} {j.unit} "
           f"of {line} B where {j.ideal} would do: a stencil's neighbour read ({apart} "
           f"{other.sacc.text}) touches {extra} more {units}, holding elements of the "
           f"neighbouring warp, which reads them too: the cache serves "
           f"{'it' if extra == 1 else 'them'} (the L1 where that warp is in the same "
           f"{_block_word(view)}), and the traffic from memory does not grow")
    d_ = info("feedback-coalescing", msg, sacc.node.span,
              "nothing in the layout causes it; a tile with its halo staged in shared "
              "memory would issue one global load per element instead of one per neighbour")
    d_.data.update(array=sacc.name, segments=j.touched, ideal=j.ideal, shift=-d)
    return d_


def _data_coalescing(view: KernelView, sacc: Access, lane: Loop, width: int,
                     sources: list[str], found: tuple[list[int], list[str], int] | None
                     ) -> Diagnostic | None:
    """What a warp's accesses to an address that data choose touch: where the data are
    the same for its lanes (``values[k]`` with ``k = rowPtr[r] + lane``, a row per
    warp) the lanes' offsets from that start are known, and so are the transactions
    for each alignment of it; where they differ between lanes (a gather,
    ``x[colIdx[k]]``) nothing is known. ``sources``: :func:`lane_data` of the access;
    ``found``: :func:`_data_lane_offsets` of it. None for an access whose address the
    kernel model could not evaluate for another reason."""
    line, unit = transaction_size(view, sacc.space)
    eb = sacc.element_bytes
    if sources:
        most = width * max(1, -(-eb // line))
        d = info("feedback-coalescing",
                 f"{sacc.text}: the lanes' addresses come from data that differ between "
                 f"them ({', '.join(sources)}): a warp touches 1 to {most} {unit} of "
                 f"{line} B, as the data fall", sacc.node.span)
        d.data.update(array=sacc.name, gather=sources)
        return d
    if found is None:
        if sacc.predictable:
            return None
        return info("feedback-coalescing",
                    f"{sacc.text}: the addresses depend on data, so whether a warp's "
                    f"accesses coalesce is not known", sacc.node.span)
    rel, chosen, step = found
    start = f"a start known only at run time ({', '.join(chosen)}), the same for its lanes"
    per_line = max(1, line // eb)   # the start's alignments: multiples of its step
    counts = [len({(off + shift) * eb // line for off in rel})
              for shift in sorted({m * step % per_line for m in range(per_line)})]
    lo, hi = min(counts), max(counts)
    ideal = max(1, -(-(len(set(rel)) * eb) // line))
    what = f"a warp of {width} {lane.node.group}"
    if lo <= ideal:
        touched = f"{lo} {unit} of {line} B" + (
            f" where that start is aligned to {line} B, {hi} where it is not"
            if hi > lo else "")
        d = info("feedback-coalescing",
                 f"{sacc.text}: {what} reads from {start}: {touched} (coalesced)",
                 sacc.node.span)
    else:
        d = warning("feedback-coalescing",
                    f"{sacc.text}: from {start}, {what} touches "
                    f"{lo} to {hi} {unit} of {line} B where {ideal} would do (stride "
                    f"{_stride(rel) * eb} B between neighbouring {lane.var})",
                    sacc.node.span,
                    f"make neighbouring {lane.var} access neighbouring elements (the last "
                    f"index should vary with {lane.var})")
    d.data.update(array=sacc.name, segments=lo, segments_unaligned=hi, ideal=ideal)
    return d


def _data_lane_offsets(view: KernelView, dk: Any, acc: Access, lane: Loop,
                       width: int) -> tuple[list[int], list[str], int] | None:
    """For an access of the numeric kernel whose address the kernel model leaves unknown,
    and that reads nothing from memory that differs between the lanes (:func:`lane_data`
    finds nothing: the caller asks it first), the offsets ``width`` consecutive lanes of
    ``lane`` access, by the data-aware kernel
    ``dk`` (mcl.analyses.datadep.DataKernel: a while loop's induction variables as
    functions of its iteration, values read from memory as placeholders), and what
    the start they share is read from (``rowPtr[r]``; none where nothing is: the
    offsets are then exact), and the step the start moves by (1 for a start read from
    memory; ``stride`` for ``i += stride`` after a while loop). Relative to that start
    where there is one. None where the start does not shift every lane alike, or where
    an offset cannot be evaluated."""
    dacc = dk.access_like(acc) if dk is not None else None
    if dacc is None or dacc.offset is None:
        return None
    rows: list[list[int]] = []
    chosen: set[Any] = set()
    step = 0    # the start moves by multiples of this (0: by any amount)
    try:
        for base in (0, 7919):      # two starts: each lane must move by the same amount
            row = []
            for i in range(width):
                view._cursor.clear()
                view._cursor[lane.var] = i
                e = view._at_cursor(dacc, dacc.offset)
                if e is None:
                    return None
                data = {x for x in e.free_symbols if x in dk.placeholders}
                chosen |= data
                if base == 0 and i == 0:
                    for x in data:
                        c = sympy.diff(e, x)
                        step = math.gcd(step, int(c)) if c.is_Integer and step != 1 else 1
                e = e.subs({x: base for x in data})
                if not e.is_number:
                    return None
                row.append(view.value(e))
            rows.append(row)
    finally:
        view._cursor.clear()
    if any(v is None for row in rows for v in row):
        return None
    shifts = {b - a for a, b in zip(*rows, strict=True)}
    if len(shifts) != 1:
        return None
    return rows[0], sorted(dk.placeholders[x].text for x in chosen), step or 1


def lane_data(dk: Any, acc: Access, lane: Loop) -> list[str]:
    """What the address of ``acc`` reads from memory that differs between the lanes of
    ``lane`` (``colIdx[k]`` for the gather ``x[colIdx[k]]``; ``rowPtr[r]`` for
    ``values[k]`` in ``for (k = rowPtr[r]; ...)`` with a row per lane), by the
    data-aware kernel ``dk``; empty where nothing does or it is not known."""
    dacc = dk.access_like(acc) if dk is not None else None
    if dacc is None or dacc.offset is None:
        return []
    exprs, seen = [dacc.offset], set()
    while exprs:    # the offset, and the starts of the loops whose indices it uses
        e = exprs.pop()
        for x in e.free_symbols - seen:
            seen.add(x)
            exprs += [lp.start for lp in dacc.loops
                      if lp.symbol == x and lp.start is not None]
    return sorted({dk.placeholders[x].text for x in seen
                   if x in dk.placeholders and lane.var in dk.placeholders[x].depends})


def load_requests(view: KernelView, lane: Loop) -> list[Diagnostic]:
    """The warp requests the global loads issue and the sectors they fetch
    (mcl.analyses.sectors), as a profiler counts them."""
    from mcl.analyses.sectors import global_loads

    loads = global_loads(view)
    if loads is None or not loads.requests:
        return []
    width, size, unit = loads.width, loads.size, loads.unit
    spr = loads.sectors_per_request
    ideal = width * 4 / size
    msg = (f"global loads: about {loads.requests:.3g} warp requests fetch "
           f"{loads.sectors:.3g} {unit} of {size} B, {spr:.2f} per request "
           f"({ideal:g} for a warp reading {width} adjacent 32-bit elements, "
           f"{4 * ideal:g} with 128-bit accesses)")
    if loads.estimated:
        msg += (f"; an estimate for {', '.join(sorted({a.text for a, _ in loads.estimated}))}"
                f", whose addresses or trip counts depend on data or on a while loop (a "
                f"{unit[:-1]} per "
                "active lane where an address is read from memory"
                + (f"; {'; '.join(loads.trips)}" if loads.trips else "") + ")")
    if loads.unpredicted:
        msg += (f"; not counted: {', '.join(sorted({a.text for a, _ in loads.unpredicted}))} "
                f"({loads.unpredicted[0][1]})")
    d = info("feedback-requests", msg, lane.node.span)
    d.data.update(requests=loads.requests, sectors=loads.sectors,
                  sectors_per_request=spr, unit=size,
                  unpredicted=[a.text for a, _ in loads.unpredicted],
                  estimated=[a.text for a, _ in loads.estimated])
    return [d]


def _stride(offsets: list[int]) -> int:
    return offsets[1] - offsets[0] if len(offsets) > 1 else 0


def active_lanes(view: KernelView, acc: Access, lane: Loop, width: int,
                 at: Mapping[str, int] | None = None) -> list[bool]:
    """For ``width`` consecutive lanes of loop ``lane`` (the loops ``at`` names at those
    values), whether the ``if``s around ``acc`` let it run (``if (tid < rows)``: the
    first ``rows`` lanes of a warp)."""
    view._cursor.clear()
    view._cursor.update(at or {})
    view.reset(lane.var)
    out = []
    for _ in range(width):
        out.append(view.runs(acc))
        view.increment(lane.var)
    view._cursor.clear()
    return out
