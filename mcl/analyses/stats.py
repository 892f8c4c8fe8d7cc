"""Operation statistics (paper section 6.2), host<->device transfers and the
roofline: what a kernel computes and moves, as sympy expressions in its
parameters, and what the description's peak figures make of it.

``operation_counts`` is also the source of the GFLOP/s and GB/s that the
OpenCL runner prints and of the roofline fractions of the benchmark report.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import sympy

from mcl.analyses.kernel import Kernel, element_bytes, size_symbol
from mcl.analyses.kernel_build import build_kernel
from mcl.analyses.values import simplified
from mcl.mcpl import ast


@dataclass(frozen=True)
class Transfer:
    """Bytes of one parameter moved between host and device before or after the run."""

    param: str
    direction: str          # "to device" | "to host"
    bytes: sympy.Expr
    span: Any = None


@dataclass
class OperationCounts:
    """What one execution of a function does, as sympy expressions.

    ``flops``: computational operations (arithmetic on the values the kernel
    produces); ``index_ops`` / ``control_ops``: the overhead of computing
    indices and of control flow; ``accesses`` / ``bytes``: element reads and
    writes per memory space (registers included; ``data_accesses`` leaves out
    memories that are not addressable); ``transfers``: host<->device copies
    (empty where the description has no host link); ``approximate``: some
    count is not exact (``reasons`` say why); ``upper_bound``: some count is an
    upper bound (conditions, loop bounds that depend on outer indices), where
    unknown numbers of iterations appear as symbols ``iterations_<var>``."""

    flops: sympy.Expr
    index_ops: sympy.Expr
    control_ops: sympy.Expr
    accesses: dict[str, sympy.Expr]
    reads: dict[str, sympy.Expr]
    writes: dict[str, sympy.Expr]
    bytes: dict[str, sympy.Expr]
    register_spaces: frozenset[str]
    transfers: list[Transfer] = field(default_factory=list)
    approximate: bool = False
    reasons: list[str] = field(default_factory=list)
    upper_bound: bool = False

    @property
    def data_accesses(self) -> sympy.Expr:
        """Accesses to addressable memory (the paper's "#data accesses")."""
        return sympy.Add(*[v for k, v in self.accesses.items()
                           if k not in self.register_spaces]) if self.accesses else sympy.Integer(0)

    @property
    def memory_bytes(self) -> sympy.Expr:
        return sympy.Add(*[v for k, v in self.bytes.items()
                           if k not in self.register_spaces]) if self.bytes else sympy.Integer(0)

    @property
    def transfer_bytes(self) -> sympy.Expr:
        return sympy.Add(*[t.bytes for t in self.transfers]) if self.transfers else sympy.Integer(0)

    @property
    def arithmetic_intensity(self) -> sympy.Expr | None:
        """Computational operations per byte of memory accessed."""
        b = self.memory_bytes
        return None if b == 0 else simplified(self.flops / b)

    def evaluate(self, values: dict[str, int]) -> OperationCounts:
        """The same counts with ``values`` substituted."""
        subs = {size_symbol(k): v for k, v in values.items()}

        def ev(e: sympy.Expr) -> sympy.Expr:
            return sympy.sympify(e).subs(subs)

        return OperationCounts(
            ev(self.flops), ev(self.index_ops), ev(self.control_ops),
            {k: ev(v) for k, v in self.accesses.items()},
            {k: ev(v) for k, v in self.reads.items()},
            {k: ev(v) for k, v in self.writes.items()},
            {k: ev(v) for k, v in self.bytes.items()}, self.register_spaces,
            [Transfer(t.param, t.direction, ev(t.bytes), t.span) for t in self.transfers],
            self.approximate, list(self.reasons), self.upper_bound)


def register_spaces(hw: Any) -> frozenset[str]:
    """Memory spaces held only by non-addressable memories (registers)."""
    if hw is None:
        return frozenset()
    out = set()
    for ms in hw.memory_spaces():
        held = hw.memories_holding(ms.name)
        if held and all(not m.addressable for m in held):
            out.add(ms.name)
    return frozenset(out)


def site_executions(k: Kernel, site, mean: bool = False) -> tuple[sympy.Expr, bool]:
    """How often an operation or access site of ``k`` runs (its loops' executions,
    times the share of them its ``if``s decide where it is guarded), and whether that
    is not exact (a loop's trip count estimated, or a guard whose share is unknown).
    ``mean``: as :meth:`Kernel.executions`."""
    n, approx = k.executions(site.loops, mean)
    share = decided_share(site.loops, site.conditions) if site.guarded else None
    return n * (share or 1), bool(approx or (site.guarded and share is None))


def counts_of_kernel(k: Kernel, _depth: int = 0, mean: bool = False) -> OperationCounts:
    """Operation counts from a built kernel model; calls are counted bottom-up.
    ``mean``: totals over all units, a grid-stride loop at its units' average rounds
    (the formula's value); without it at the first unit's, which per-warp costs need."""
    zero = sympy.Integer(0)
    by_kind = {"compute": zero, "index": zero, "control": zero}
    approx = False
    inexact = False  # a callee's counts are not exact
    reasons: list[str] = []
    inner_reasons: list[str] = []
    for site in k.ops:
        n, a = site_executions(k, site, mean)
        by_kind[site.kind] = by_kind[site.kind] + n * site.count
        approx = approx or a
    accesses: dict[str, sympy.Expr] = {}
    reads: dict[str, sympy.Expr] = {}
    writes: dict[str, sympy.Expr] = {}
    nbytes: dict[str, sympy.Expr] = {}
    for acc in k.accesses:
        n, a = site_executions(k, acc, mean)
        space = acc.space or "?"
        accesses[space] = accesses.get(space, zero) + n
        target = writes if acc.write else reads
        target[space] = target.get(space, zero) + n
        nbytes[space] = nbytes.get(space, zero) + n * acc.element_bytes
        approx = approx or a
    # calls to user functions: their own counts with the arguments filled in
    for call in k.calls:
        callee_f = call.callee.function
        if _depth > 8 or k.checked is None:
            approx = True
            continue
        sub = build_kernel(callee_f, _checked_for(k.checked, call.callee), None,
                           call.callee.hardware)
        inner = counts_of_kernel(sub, _depth + 1, mean)
        n, a = k.executions(call.loops, mean)
        mapping = {}
        for p, arg in zip(callee_f.params, call.node.args, strict=False):
            if not p.type.is_array:
                try:
                    from mcl.analyses.kernel_build import KernelBuilder
                    mapping[size_symbol(p.name)] = KernelBuilder(k).sym(arg)
                except Exception:
                    approx = True
        by_kind["compute"] += n * inner.flops.subs(mapping)
        by_kind["index"] += n * inner.index_ops.subs(mapping)
        by_kind["control"] += n * inner.control_ops.subs(mapping)
        for space, v in inner.accesses.items():
            accesses[space] = accesses.get(space, zero) + n * v.subs(mapping)
        for space, v in inner.reads.items():
            reads[space] = reads.get(space, zero) + n * v.subs(mapping)
        for space, v in inner.writes.items():
            writes[space] = writes.get(space, zero) + n * v.subs(mapping)
        for space, v in inner.bytes.items():
            nbytes[space] = nbytes.get(space, zero) + n * v.subs(mapping)
        approx = approx or a or call.guarded or inner.upper_bound
        inexact = inexact or inner.approximate
        inner_reasons += [why for why in inner.reasons if why not in inner_reasons]
    if approx:
        reasons.append("conditions or loop bounds make some counts upper bounds")
    for why in [why for _node, why in k.imprecisions] + inner_reasons:
        if why not in reasons:
            reasons.append(why)
    simp = _simplify
    return OperationCounts(
        simp(by_kind["compute"]), simp(by_kind["index"]), simp(by_kind["control"]),
        {s: simp(v) for s, v in accesses.items()}, {s: simp(v) for s, v in reads.items()},
        {s: simp(v) for s, v in writes.items()}, {s: simp(v) for s, v in nbytes.items()},
        register_spaces(k.hardware), transfers(k),
        approx or inexact or bool(k.imprecisions), reasons,
        approx)


#: the most combinations of loop iterations :func:`decided_share` enumerates
_MAX_COMBINATIONS = 4096


def decided_share(loops, conditions) -> sympy.Rational | None:
    """The share of the iterations of ``loops`` for which every one of ``conditions``
    holds, where the conditions depend only on the variables of counted loops among
    ``loops`` with numbers for start, step and trips (``if (y >= 0 && y < fh)`` with
    ``y = r - e`` in loops r and e of constant trip counts: what the unrolled code
    runs); None where a condition depends on anything else (data, sizes left
    symbolic, work-item ids): the counts stay upper bounds."""
    if not conditions or any(c.expr is None or not c.whole for c in conditions):
        return None
    free = set().union(*(c.expr.free_symbols for c in conditions))
    by_symbol = {lp.symbol: lp for lp in loops if lp.symbol is not None}
    ranges = []
    for sym in free:
        lp = by_symbol.get(sym)
        if lp is None or lp.kind != "for" or lp.approximate:
            return None
        values = lp.index_values()
        if not values:
            return None
        ranges.append((sym, values))
    if not ranges:
        return None
    total = 1
    for _, values in ranges:
        total *= len(values)
    if total > _MAX_COMBINATIONS:
        return None
    try:
        test = sympy.lambdify([sym for sym, _ in ranges],
                              sympy.And(*(c.expr for c in conditions)), "math")
        held = sum(bool(test(*point))
                   for point in itertools.product(*(v for _, v in ranges)))
    except (TypeError, ValueError, ArithmeticError, NameError):
        return None
    return sympy.Rational(held, total)


def _simplify(e: sympy.Expr) -> sympy.Expr:
    e = sympy.expand(e)
    return sympy.factor_terms(e) if e.free_symbols else e


def _checked_for(checked: Any, info: Any) -> Any:
    """The checked module that holds ``info``'s function (an import or this one)."""
    for mod in [checked, *checked.modules.values()]:
        if mod.info(info.function.name) is info:
            return mod
    return checked


# --------------------------------------------------------------------------- transfers


def host_links(hw: Any) -> list[Any]:
    """Interconnects between a host (a device block that is not a memory or an
    execution unit) and a memory of the device."""
    if hw is None:
        return []
    out = []
    for ic in hw.interconnects():
        ends = hw.connected(ic)
        mems = [b for b in ends if b.kind in ("memory", "cache")]
        hosts = [b for b in ends if b.kind in ("device_group", "device_unit", "device")]
        if mems and hosts:
            out.append(ic)
    return out


def host_link_for(hw: Any, space: str) -> Any:
    """The host link of the memory holding ``space`` (None if there is none)."""
    for ic in host_links(hw):
        for b in hw.connected(ic):
            if b.kind == "memory" and space in b.spaces:
                return ic
    return None


def _host_filled(hw: Any, space: str) -> bool:
    """Whether the host fills ``space`` over its link although no link reaches the memory
    holding it: read-only memory (constant memory), which no kernel can store into, of
    a device behind a host link."""
    ms = next((m for m in hw.memory_spaces() if m.name == space), None)
    return ms is not None and bool(ms.read_only) and bool(host_links(hw))


def transfers(k: Kernel) -> list[Transfer]:
    """Array parameters in a memory behind a host link, or in read-only memory that the
    host fills over it: read ones go to the device, written ones come back (paper
    section 5, level accelerator)."""
    hw = k.hardware
    if hw is None or not host_links(hw) or k.checked is None:
        return []
    info = k.checked.info(k.function)
    reads = info.reads if info else frozenset()
    writes = info.writes if info else frozenset()
    out: list[Transfer] = []
    for p in k.function.params:
        if not p.type.is_array:
            continue
        space = k.checked.space_of(p) or p.space
        if space is None or (host_link_for(hw, space) is None
                             and not _host_filled(hw, space)):
            continue
        elems = sympy.Integer(1)
        for s in p.type.sizes:
            v = _param_size(k, s)
            if v is None:
                elems = None
                break
            elems = elems * v
        if elems is None:
            continue
        nbytes = sympy.expand(elems * element_bytes(p.type, k.checked))
        if p.name in reads:
            out.append(Transfer(p.name, "to device", nbytes, p.span))
        if p.name in writes:
            out.append(Transfer(p.name, "to host", nbytes, p.span))
    return out


def _param_size(k: Kernel, e: ast.Expr) -> sympy.Expr | None:
    from mcl.analyses.kernel import Unpredictable
    from mcl.analyses.kernel_build import KernelBuilder
    b = KernelBuilder(k)
    for p in k.function.params:
        if not p.type.is_array:
            b.bind(p.name, sympy.Integer(k.values[p.name]) if p.name in k.values
                   else size_symbol(p.name))
    try:
        return b.sym(e)
    except Unpredictable:
        return None


# --------------------------------------------------------------------------- roofline


@dataclass(frozen=True)
class Roofline:
    """Attainable performance by the roofline model at given sizes.

    ``intensity``: operations per byte if every access goes to memory (the
    pessimistic bound); ``best_intensity``: if each array element crosses the
    memory interface once (the compulsory traffic, the optimistic bound).
    ``attainable`` / ``best_attainable``: min(peak, intensity × bandwidth) in
    operations per second; ``bound``: "compute" or "bandwidth" for the
    pessimistic intensity; ``upper_bound``: the counts are upper bounds (conditions
    may skip part of the work: the lanes an ``if (tj < ts)`` leaves idle)."""

    peak_flops: float
    bandwidth: float
    flops: float
    bytes: float
    compulsory_bytes: float
    intensity: float
    best_intensity: float
    attainable: float
    best_attainable: float
    bound: str
    best_bound: str
    space: str
    upper_bound: bool = False


def roofline(function: ast.Function, checked: Any, values: dict[str, int] | None,
             hardware: Any = None) -> Roofline | None:
    """The roofline of ``function`` on ``hardware`` (default: its own description)
    at ``values`` (plus parameter defaults); None where the description has no
    finite peak or bandwidth, or a size has no value."""
    from mcl.analyses.kernel import parameter_values

    hw = hardware if hardware is not None else checked.hardware_of(function)
    if hw is None:
        return None
    vals = parameter_values(function, values)
    k = build_kernel(function, checked, vals, hw)
    return roofline_of_kernel(k)


def roofline_of_kernel(k: Kernel) -> Roofline | None:
    hw = k.hardware
    peak = hw.peak_flops() if hw is not None else None
    counts = counts_of_kernel(k, mean=True)
    space = main_space(k)
    if peak is None or space is None:
        return None
    bw = hw.memory_bandwidth(space)
    if bw is None:
        return None
    flops = counts.flops
    nbytes = counts.bytes.get(space, sympy.Integer(0))
    compulsory = compulsory_bytes(k, space)
    if compulsory is None:
        return None
    try:
        f, b, c = float(flops), float(nbytes), float(compulsory)
    except TypeError:
        return None
    if b <= 0 or f <= 0:
        return None
    ai = f / b
    best = f / c if c > 0 else ai
    att = min(peak, ai * bw)
    best_att = min(peak, best * bw)
    return Roofline(peak, bw, f, b, c, ai, best, att, best_att,
                    "compute" if ai * bw >= peak else "bandwidth",
                    "compute" if best * bw >= peak else "bandwidth", space,
                    counts.upper_bound)


def read_and_written(k: Kernel) -> tuple[set[str], set[str]]:
    """The arrays the kernel reads and those it writes (views as the arrays they view);
    the target of an atomic update is both: its lines are read and written back."""
    bases = view_bases(k)
    updated = {bases.get(s.target.name, s.target.name) for s in k.atomics
               if s.target is not None}
    read = {bases.get(a.name, a.name) for a in k.accesses if not a.write} | updated
    written = {bases.get(a.name, a.name) for a in k.accesses if a.write} | updated
    return read, written


def compulsory_bytes(k: Kernel, space: str, names: set[str] | None = None,
                     once: bool = False) -> sympy.Expr | None:
    """Bytes of the parameters' arrays in ``space``: what crosses the memory interface
    at least once, twice for an array both read and written (``ys = a * xs + ys``:
    read, then written back; ``once``: each array once, its bytes); None where an
    array's size has no value. ``names``: of those arrays only."""
    read, written = read_and_written(k)
    total = sympy.Integer(0)
    for p in k.function.params:
        if names is not None and p.name not in names:
            continue
        if p.type.is_array and (k.checked.space_of(p) or p.space) == space:
            size = _param_size(k, _product(p.type.sizes))
            if size is None:
                return None
            times = 2 if p.name in read and p.name in written and not once else 1
            total += times * size * element_bytes(p.type, k.checked)
    return total


def least_time(k: Kernel) -> float | None:
    """The least time the kernel can take on its hardware: its parameters' arrays in
    device memory cross the memory interface once at full bandwidth, and (where the
    operation count is known) its operations run at peak. None without numbers."""
    hw, space = k.hardware, main_space(k)
    bw = hw.memory_bandwidth(space) if hw is not None and space is not None else None
    compulsory = compulsory_bytes(k, space) if bw is not None else None
    if compulsory is None:
        return None
    try:
        t = float(compulsory) / bw
    except TypeError:
        return None
    peak = hw.peak_flops()
    try:
        flops = float(counts_of_kernel(k, mean=True).flops)
    except TypeError:
        flops = None
    return max(t, flops / peak) if flops and peak else t


def _product(sizes: tuple[ast.Expr, ...]) -> ast.Expr:
    e: ast.Expr = ast.Literal(1)
    for s in sizes:
        e = ast.Binary("*", e, s)
    return e


def main_space(k: Kernel) -> str | None:
    """The memory space most of the parameters' data lives in (the device memory)."""
    if k.checked is None:
        return None
    spaces: dict[str, int] = {}
    for p in k.function.params:
        if p.type.is_array:
            s = k.checked.space_of(p) or p.space
            if s:
                spaces[s] = spaces.get(s, 0) + 1
    if not spaces:
        return None
    return max(spaces, key=lambda s: spaces[s])


def view_bases(k: Kernel) -> dict[str, str]:
    """Each view's name (``a as float[..] a2``, or one declared with an array) with the
    array it views, through views of views."""
    base: dict[str, str] = {}
    for n in ast.walk(k.function):
        if isinstance(n, ast.AsStatement) and isinstance(n.target, ast.Name):
            base.update({v.name: n.target.id for v in n.views})
        elif isinstance(n, ast.Declaration):
            base.update({v.name: n.name for v in n.views})
    out = {}
    for view in base:
        name, seen = view, set()
        while name in base and name not in seen:
            seen.add(name)
            name = base[name]
        out[view] = name
    return out


def viewed_arrays(k: Kernel, names: set[str]) -> set[str]:
    """``names`` with each view replaced by the array it views (:func:`view_bases`)."""
    bases = view_bases(k)
    return {bases.get(name, name) for name in names}
