"""A stated estimate for what the kernel model leaves unknown because it depends on
data: addresses read from memory (a gather ``x[colIdx[k]]``, a row that starts at
``rowPtr[r]``) and loops whose trip counts come from memory.

The kernel is walked once more with every value read from memory kept as a
placeholder instead of giving up on the expression (:class:`DataKernel`): the
address of a gather is then a placeholder, the start of ``k = rowPtr[r] + lane`` a
placeholder plus the lane, and a ``while`` loop's induction variable (declared with a
value, changed only by ``k += c`` in the loop's body) its value plus ``c`` times the
iteration. Evaluated at sample points (mcl.analyses.sectors), a placeholder takes a
pseudo-random value that differs between lanes where what it reads depends on the
lane: a gather then fetches a sector per active lane (the conservative case: no two
lanes share one), a data-chosen start shared by the warp a random alignment.

A loop whose trip count depends on data gets the average the declared sizes give:
the arrays its induction variable walks through (``values[k]``, not a gather through
it) are taken to be read once in all, over all executions of the loop (compressed
rows, buckets, segments), so the iterations are the array's elements, less those
read after the loop, over the loop's executions and the elements an iteration reads.
Without such an array the trip count stays unknown.

A warp runs such a loop as long as its slowest lane (:func:`warp_iterations`): the
lanes' ranges (the data in the loop's distance, ``rowPtr[r + 1] - rowPtr[r]``) are
taken to be Poisson counts with that average (elements at independent random
positions: the uniformly random sparsity of a generated matrix), one range shared by
the lanes where the data do not depend on the lane (a row per warp: its lanes
differ by their offset), one per lane where they do (a row per lane). NVIDIA's
compiler unrolls a ``for`` loop whose trip count is known only at run time by
:data:`RUNTIME_UNROLL`, the remainder first (the PTX of spmv_csr perfect and gpu_v1),
so a warp whose lanes have different remainders runs the remainder loop and the
unrolled loop in turn; a ``while`` loop it leaves as written.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import sympy

from mcl.analyses.kernel import (
    Access,
    Kernel,
    Loop,
    Unpredictable,
    once_per_kernel,
    var_symbol,
)
from mcl.analyses.kernel_build import KernelBuilder
from mcl.mcpl import ast
from mcl.mcpl.printer import print_expr

#: placeholders take values in [0, 2**24): far more sectors than a warp has lanes
_RANGE = 1 << 24
#: NVIDIA's compiler unrolls a ``for`` loop whose trip count is known only at run time
#: by this factor and runs the remainder first (PTX of spmv_csr perfect and gpu_v1)
RUNTIME_UNROLL = 4
#: warps drawn by :func:`warp_iterations`
_WARPS = 512


@dataclass
class Placeholder:
    """A value read from memory: what it reads and the loop variables that moves."""

    text: str
    depends: frozenset[str]


@dataclass(eq=False)
class DataKernel:
    """The kernel with placeholders for data (see the module docstring)."""

    kernel: Kernel
    placeholders: dict[sympy.Symbol, Placeholder] = field(default_factory=dict)
    #: loops whose trip count is estimated, with how
    estimated: dict[Loop, str] = field(default_factory=dict)
    #: loops whose trip count data bound: a lane's distance to go (with placeholders)
    #: and the step it covers in an iteration (``ceil(distance / step)`` iterations)
    ranges: dict[Loop, tuple[sympy.Expr, sympy.Expr]] = field(default_factory=dict)
    #: of those whose average is estimated: the elements of the array walked and the
    #: executions of the loop (by all lanes) they are spread over
    walked: dict[Loop, tuple[float, float]] = field(default_factory=dict)
    #: what :func:`warp_iterations` found, by loop
    warp_runs: dict[Loop, float] = field(default_factory=dict)

    def placeholder_values(self, loops: list[Loop]):
        """The placeholders in order, and a function from the values of ``loops``
        (outer to inner; those from ``upto`` on not known yet) to theirs: the same
        where the loops they depend on stand the same (a value shared by the lanes of
        a warp, a gather's index that differs between them)."""
        symbols = list(self.placeholders)
        positions = [[i for i, lp in enumerate(loops) if lp.var in self.placeholders[s].depends]
                     for s in symbols]

        def values(loop_values: list[int], upto: int) -> list[int]:
            return [hash((n, *(loop_values[i] for i in pos))) % _RANGE
                    if max(pos, default=-1) < upto else 0
                    for n, pos in enumerate(positions)]
        return symbols, values

    def loop_like(self, loop: Loop) -> Loop | None:
        return next((lp for lp in self.kernel.loops if lp.node is loop.node), None)

    def access_like(self, acc):
        return next((a for a in self.kernel.accesses
                     if a.node is acc.node and a.write == acc.write), None)


class _DataBuilder(KernelBuilder):
    """The kernel model's walk, with reads of memory as placeholders."""

    def __init__(self, k: Kernel, out: DataKernel):
        from mcl.analyses.stats import register_spaces
        super().__init__(k)
        self.out = out
        self.initial: dict[str, sympy.Expr] = {}
        #: the spaces of arrays each unit has its own of (registers)
        self.registers = register_spaces(k.hardware)

    def placeholder(self, text: str, depends: frozenset[str]) -> sympy.Symbol:
        s = sympy.Symbol(f"data{len(self.out.placeholders)}", integer=True)
        self.out.placeholders[s] = Placeholder(text, depends)
        return s

    def depends_of(self, expr):
        out = super().depends_of(expr)
        for s in expr.free_symbols if expr is not None else ():
            ph = self.out.placeholders.get(s)
            if ph is not None:
                out |= ph.depends
        return frozenset(out)

    def sym(self, e: ast.Expr) -> sympy.Expr:
        if isinstance(e, ast.Index):
            deps: frozenset[str] = frozenset()
            node: ast.Expr = e
            while isinstance(node, ast.Index):
                for g in node.groups:
                    for ix in g:
                        try:
                            deps |= self.depends_of(self.sym(ix))
                        except Unpredictable:
                            pass
                node = node.base
            if isinstance(node, ast.Name) and self._private(node):
                # an element of a unit's own array (a register array filled from
                # memory): each unit holds its own, so it differs between them
                deps |= {lp.var for lp in self.loops if lp.kind == "foreach" and lp.var}
            return self.placeholder(print_expr(e), deps)
        return super().sym(e)

    def _private(self, name: ast.Name) -> bool:
        """Whether ``name`` is an array in a register space (each unit its own)."""
        sym = self.checked.declaration_of(name) if self.checked is not None else None
        return sym is not None and sym.space in self.registers

    def declaration(self, d: ast.Declaration) -> None:
        super().declaration(d)
        if self.is_assigned(d) and d.init is not None and not d.type.is_array:
            try:
                self.initial[d.name] = self.sym(d.init)
            except Unpredictable:
                pass

    def stmt(self, s: ast.Stmt) -> None:
        if isinstance(s, ast.While):
            self.while_(s)
        else:
            super().stmt(s)

    def while_(self, s: ast.While) -> None:
        """A while loop with an iteration variable; its induction variables (see the
        module docstring) as functions of it."""
        self.expr(s.cond, "control")
        name = f"while{len(self.k.loops)}"
        induction = _induction(self, s)
        w = var_symbol(name)
        deps = frozenset()
        for v in induction:
            deps |= self.depends_of(self.initial[v])
        lp = Loop(s, "while", name, sympy.Integer(0), sympy.Integer(1), None,
                  approximate=True, depends=deps)
        self.k.imprecisions.append((s, "a while loop runs an unknown number of times"))
        self.k.loops.append(lp)
        self.loops.append(lp)
        self.scopes.append({})
        self.bind(name, w)
        self.loop_vars[name] = lp
        for v, step in induction.items():
            self.bind(v, self.initial[v] + step * w)
        lp.trips = _counted(self, s.cond, w)
        found = _distance(self, s.cond, w)
        if lp.trips is None and found is not None:
            self.out.ranges[lp] = found
        self.block(s.body)
        self.scopes.pop()
        self.loops.pop()
        # after the loop: its value at the last iteration, which the data in its
        # condition and in the initial values choose
        chosen: frozenset[str] = frozenset()
        for e in [self.initial[v] for v in induction] + _sides(self, s.cond):
            for x in e.free_symbols:
                if x in self.out.placeholders:
                    chosen |= self.out.placeholders[x].depends
        for v, step in induction.items():
            self.bind(v, self.initial[v] + step * self.placeholder(
                f"the iterations of the while loop over {v}", chosen))


def _sides(b: _DataBuilder, cond: ast.Expr) -> list[sympy.Expr]:
    """The values compared in a loop condition (``k + 32 < end && ...``)."""
    if isinstance(cond, ast.Binary) and cond.op in ("&&", "||"):
        return _sides(b, cond.left) + _sides(b, cond.right)
    if isinstance(cond, ast.Binary):
        out = []
        for side in (cond.left, cond.right):
            try:
                out.append(sympy.sympify(b.sym(side)))
            except Unpredictable:
                pass
        return out
    return []


def _distance(b: _DataBuilder, cond: ast.Expr,
              w: sympy.Symbol) -> tuple[sympy.Expr, sympy.Expr] | None:
    """``while (lhs < rhs)`` (or ``>``, ``<=``, ``>=``) with sides linear in the
    iteration ``w``: the distance to go at the first iteration and the step an
    iteration covers (``ceil(distance / step)`` iterations of integers; ``<=`` and
    ``>=`` go one further), else None."""
    if not (isinstance(cond, ast.Binary) and cond.op in ("<", "<=", ">", ">=")):
        return None
    try:
        lhs, rhs = sympy.sympify(b.sym(cond.left)), sympy.sympify(b.sym(cond.right))
    except Unpredictable:
        return None
    d = sympy.expand(rhs - lhs if cond.op in ("<", "<=") else lhs - rhs)
    slope, d0 = d.coeff(w), d.subs(w, 0)
    if not (slope.is_number and slope < 0):
        return None
    return (d0 + (1 if cond.op in ("<=", ">=") else 0), -slope)


def _counted(b: _DataBuilder, cond: ast.Expr, w: sympy.Symbol) -> sympy.Expr | None:
    """The iterations of ``while (lhs < rhs)`` whose sides are linear in the iteration
    ``w`` and do not depend on data: the distance over the step, rounded up, with the
    loop variables around it at 0 (as the kernel model counts a for loop)."""
    found = _distance(b, cond, w)
    if found is None or found[0].free_symbols & set(b.out.placeholders):
        return None
    d0, step = found
    d0 = d0.subs({x: 0 for x in d0.free_symbols if x.name in b.loop_vars})
    if not d0.is_number:
        return None
    return sympy.Integer(max(0, math.ceil(d0 / step)))


def _induction(b: _DataBuilder, s: ast.While) -> dict[str, sympy.Expr]:
    """Variables with an initial value that only ``v += c`` (c a constant) at the top
    level of the loop's body changes: their step."""
    body = s.body.statements if isinstance(s.body, ast.Block) else (s.body,)
    known, f = set(b.initial), b.k.function
    steps: dict[str, sympy.Expr] = {}
    for st in body:
        if isinstance(st, ast.Assign) and isinstance(st.target, ast.Name) and \
                st.op in ("+=", "-=") and st.target.id in known and \
                not any(isinstance(n, ast.Index) for n in ast.walk(st.value)):
            c = b.try_sym(st.value)
            if c is not None and c.is_number:
                steps[st.target.id] = c if st.op == "+=" else -c
        elif isinstance(st, ast.IncDec) and isinstance(st.target, ast.Name) and \
                st.target.id in known:
            steps[st.target.id] = sympy.Integer(1 if st.op == "++" else -1)
    updates: dict[str, int] = {}
    for n in ast.walk(f.body):
        if isinstance(n, ast.Assign | ast.IncDec) and isinstance(n.target, ast.Name):
            updates[n.target.id] = updates.get(n.target.id, 0) + 1
    return {v: c for v, c in steps.items() if updates.get(v) == 1}


@once_per_kernel
def data_kernel(num: Kernel) -> DataKernel | None:
    """The data-aware twin of the numeric kernel ``num`` (once per kernel), with the
    trip counts it can estimate filled in; None without numbers."""
    if not num.numeric:
        return None
    k = Kernel(num.function, num.checked, num.hardware, dict(num.values), numeric=True)
    out = DataKernel(k)
    try:
        _DataBuilder(k, out).run()
    except (Unpredictable, ArithmeticError, TypeError, ValueError):
        return None
    _estimate_trips(out)
    return out


def _number(e) -> float | None:
    try:
        v = sympy.sympify(e)
    except (TypeError, ValueError, sympy.SympifyError):
        return None
    return float(v) if v.is_number and v.is_finite else None


def _estimate_trips(dk: DataKernel) -> None:
    """Trip counts that depend on data: the average the declared sizes give (module
    docstring)."""
    k, phs = dk.kernel, dk.placeholders
    for lp in k.loops:
        chosen = [e for e in (lp.start, lp.bound, lp.trips) if e is not None and
                  sympy.sympify(e).free_symbols & set(phs)]
        if not chosen and (lp.trips is not None or lp.kind != "while" or not lp.depends):
            continue    # counted, or no data in its range (a while without induction)
        lp.trips = None
        if lp.kind == "foreach":
            continue
        if lp.kind == "for" and lp.start is not None and lp.bound is not None and \
                _number(lp.step) and _number(lp.step) > 0:
            dk.ranges[lp] = (sympy.expand(lp.bound - lp.start), sympy.sympify(lp.step))
        inside = [a for a in k.accesses if lp in a.loops]
        if not inside:
            continue
        outer = inside[0].loops[:inside[0].loops.index(lp)]
        execs = _number(k.executions(outer)[0])
        if not execs:
            continue
        # per array: its elements one iteration reads, by offset (loops inside count)
        walked: dict[str, tuple[float, dict[str, float]]] = {}
        for a in inside:
            off = a.offset
            if a.write or off is None or lp.symbol not in off.free_symbols:
                continue
            slope = sympy.diff(off, lp.symbol)
            if not slope.is_number or slope == 0:
                continue
            if any(lp.var in phs[s].depends for s in off.free_symbols if s in phs):
                continue    # a gather through the loop's variable
            size = _number(math.prod(a.sizes)) if all(s is not None for s in a.sizes) \
                else None
            inner = _number(k.executions(a.loops[a.loops.index(lp) + 1:])[0])
            if size and inner:
                reads = walked.setdefault(a.name, (size, {}))[1]
                reads[str(off)] = max(reads.get(str(off), 0.0), inner)
        best = None
        for name, (size, offsets) in walked.items():
            after = 0.0
            for a in k.accesses:
                if a.name == name and not a.write and lp not in a.loops and \
                        a.offset is not None and a.offset.free_symbols & set(phs):
                    after += _number(k.executions(a.loops)[0]) or 0.0
            left = size - after if size > after else size
            per = sum(offsets.values())
            trips = left / (execs * per)
            if best is None or trips > best[0]:
                best = (trips, name, size, per)
        if best is None:
            continue
        trips, name, size, per = best
        dk.walked[lp] = (size, execs)
        lp.trips = sympy.Float(trips)
        lp.approximate = True
        what = "the while loop" if lp.kind == "while" else f"loop {lp.var}"
        dk.estimated[lp] = (f"{what} about {trips:.3g} iterations on average: the "
                            f"{size:.0f} elements of {name} read once in all"
                            + (f", {per:.0f} an iteration" if per > 1 else ""))


def warp_iterations(dk: DataKernel, lp: Loop, lane: Loop, width: int) -> float | None:
    """The iterations of the data-bound loop ``lp`` that a warp of ``width`` lanes
    (the iterations of ``lane``) runs on average: as many as its slowest lane, its
    lanes' ranges drawn as Poisson counts of the walked array's elements per range
    (module docstring), and for a ``for`` loop the remainders of
    :data:`RUNTIME_UNROLL` and the unrolled iterations in turn. None where the loop's
    range is not known."""
    if lp in dk.warp_runs:
        return dk.warp_runs[lp]
    avg = _number(lp.trips)
    if lp not in dk.ranges or lp not in dk.walked or not avg or lane.symbol is None:
        return None
    distance, step = dk.ranges[lp]
    step_n = _number(step)
    data = [x for x in distance.free_symbols if x in dk.placeholders]
    if not step_n or step_n <= 0 or not data:
        return None
    if any(not distance.coeff(x).is_number for x in data):
        return None
    # the lanes' offsets from the range's start: the distance without the data, the
    # loops other than the lanes' at their first iteration
    rest = distance.subs({x: 0 for x in data})
    rest = rest.subs({x: 0 for x in rest.free_symbols if x != lane.symbol})
    if rest.free_symbols - {lane.symbol}:
        return None
    lanes = np.arange(width, dtype=float)
    offsets = sympy.lambdify([lane.symbol], rest, "numpy")(lanes) + np.zeros(width)
    per_lane = any(lane.var in dk.placeholders[x].depends for x in data)
    # the ranges: the walked array's elements over the executions, a range per lane
    # or one per warp
    size, execs = dk.walked[lp]
    mean = size / execs * (1 if per_lane else width)
    rng = np.random.default_rng(0)
    length = rng.poisson(mean, (_WARPS, width if per_lane else 1))
    trips = np.maximum(0, np.ceil((length + offsets[None, :]) / step_n)).astype(int)
    if lp.kind == "for":
        u = RUNTIME_UNROLL
        runs = (trips % u).max(axis=1) + u * (trips // u).max(axis=1)
    else:
        runs = trips.max(axis=1)
    dk.warp_runs[lp] = float(runs.mean())
    return dk.warp_runs[lp]


def lane_data(dk: DataKernel | None, acc: Access, lane: Loop) -> list[str]:
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
