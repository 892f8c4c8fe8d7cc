"""Global loads as the load/store units issue them: warp requests and the sectors
they fetch (what Nsight Compute counts as ``l1tex__t_requests`` and
``l1tex__t_sectors`` of global loads).

A warp executing a load issues one request; the request fetches every
transaction unit (a 32 B sector on an H100) that one of its active lanes
touches. A run of 4 consecutive elements the OpenCL generator turns into one
128-bit access (:mod:`mcl.opencl.vectorize`) is one request for four
iterations. Reads of constant memory count too: NVIDIA's OpenCL reads
``__constant`` arguments through the same path, and a warp-uniform read of a
filter element is a request of one sector.

A lane for which an ``if`` around the load is false does not load (a warp of
which no lane loads issues no request). A read-only element in loops the
generated code unrolls completely is loaded once per run of the unrolled nest
and kept in a register (:mod:`mcl.analyses.unrolled`): a 9 x 9 filter read in
unrolled loops is 81 requests per warp, however many outputs use it. A float
``atomicAdd`` that the target writes as a compare-and-swap loop (its
``float_atomic_add``) reads the element first: a load of one request.

The sectors a request fetches depend on where the enclosing loops stand
(a row that starts off a sector boundary, a window ``input[i + y, j + x]``
that slides across sectors), so each load is evaluated at sample points of
its loops: every combination when there are few, otherwise a fixed
pseudo-random sample, and averaged. Loads whose address depends on data (an
index read from memory) or on a ``while`` loop, or whose loops' trip counts do,
get the stated estimate of :mod:`mcl.analyses.datadep` (listed in
``Requests.estimated``); those it cannot estimate either are not predicted.
"""

from __future__ import annotations

import itertools
import math
import random
from dataclasses import dataclass, field

import sympy

from mcl.analyses.datadep import data_kernel, warp_iterations
from mcl.analyses.kernel import Access, Loop, var_symbol
from mcl.analyses.target_settings import device_settings
from mcl.analyses.unrolled import MAX_COMBINATIONS, merged_loops
from mcl.mcpl import ast

#: sample points per load when its loops have more combinations than this
SAMPLES = 48
#: lanes of one 128-bit access of 32-bit elements
RUN = 4


@dataclass
class LoadRequests:
    """One global load: warp requests per kernel run and sectors per request."""

    access: Access                 # the numeric access
    requests: float
    sectors_per_request: float
    vector: bool                   # one 128-bit access per lane for 4 iterations
    #: where the address or a trip count depends on data (datadep): cache lines per
    #: request, and sectors per request from the next level (not in the first-level
    #: cache since the previous iteration)
    lines_per_request: float | None = None
    fetched_per_request: float | None = None


@dataclass
class Requests:
    """The global loads of a kernel; ``unpredicted`` lists the loads left out
    with the reason."""

    width: int                     # lanes of a warp
    size: int                      # bytes of a transaction unit (a 32 B sector)
    unit: str                      # what the messages call the unit ("sectors")
    loads: list[LoadRequests] = field(default_factory=list)
    unpredicted: list[tuple[Access, str]] = field(default_factory=list)
    #: loads whose address or trip count depends on data, estimated (datadep), and
    #: the trip counts estimated for them
    estimated: list[tuple[Access, str]] = field(default_factory=list)
    trips: list[str] = field(default_factory=list)

    @property
    def requests(self) -> float:
        return sum(ld.requests for ld in self.loads)

    @property
    def sectors(self) -> float:
        return sum(ld.requests * ld.sectors_per_request for ld in self.loads)

    @property
    def sectors_per_request(self) -> float | None:
        return self.sectors / self.requests if self.requests else None


def load_spaces(view, main: str) -> set[str]:
    """The spaces whose reads the load/store units issue to device memory: the
    device memory's space ``main`` and the read-only spaces (constant memory)."""
    return {main} | {s.name for s in view.hardware.read_only_spaces()}


def global_loads(view) -> Requests | None:
    """The warp requests and transaction units of every read of device memory in
    ``view``'s numeric kernel (None without numbers, a device memory or a
    lock-step par_group); computed once per view (the requests pass, the time's
    estimated loads and its memory instructions all read them)."""
    if "global_loads" not in view.memo:
        view.memo["global_loads"] = _global_loads(view)
    return view.memo["global_loads"]


def _global_loads(view) -> Requests | None:
    from mcl.analyses.stats import main_space
    from mcl.analyses.warp_lanes import lockstep_loop, transaction_size
    from mcl.opencl.by_value import passed_by_value

    num = view.num
    main = main_space(num)
    found = lockstep_loop(view)
    if main is None or found is None or not num.numeric:
        return None
    lane, width = found
    sector, unit = transaction_size(view, main)
    spaces = load_spaces(view, main)
    # a float atomicAdd the generator writes as a compare-and-swap loop first reads
    # the element: a load like any other (other atomics do not load)
    cas = _float_atomic_reads(view.hardware)
    atomic_targets = {id(a.target) for a in num.atomics if a.target is not None
                      and not (cas and a.name == "atomicAdd" and _element_type(a.target)
                               == "float")}
    written = {a.name for a in num.accesses if a.write} | \
        {a.target.name for a in num.atomics if a.target is not None}
    by_node = {id(sa.node): na for sa, na in view.accesses()}
    seen: set = set()
    #: the load counted for an element of a read-only array, by key: where the element is
    #: read in a branch and elsewhere too (stencil1d's vin[i] at the two ends and
    #: inside), the one that runs most stands for the load of the iteration
    counted: dict[tuple, int] = {}
    out = Requests(width, sector, unit)
    operands = passed_by_value(num.function, view.hardware, num.specialized)
    for sacc, acc in view.accesses():
        if acc.write or acc.space not in spaces or id(acc) in atomic_targets \
                or acc.name in operands:    # an argument's elements: operands, no loads
            continue
        if lane not in acc.loops:
            continue
        # the compiler loads an element of a read-only array once per iteration
        key = (acc.name, str(acc.offset), tuple(id(lp.node) for lp in acc.loops))
        once = acc.name not in written and acc.offset is not None
        if once and key in seen and key not in counted:
            continue        # its first access had no count of its own: an estimate
        seen.add(key)
        sides = vector_run(sacc)
        copied = [by_node[id(x)] for x in sides or () if id(x) in by_node]
        # loads of a read-only array in an unrolled nest: once per distinct element
        merge = merged_loops(view, sacc, acc, lane) \
            if acc.name not in written and sides is None else len(acc.loops)
        try:
            reqs = _warp_requests(num, acc, lane, width)
            if acc.name not in written:
                for lp in _invariant_loops(acc, lane):
                    if acc.loops.index(lp) < merge:
                        reqs /= _number(lp.trips) or 1
            spr, active, vector, *_ = _sectors(acc, lane, width, sector, sides is not None,
                                              copied, merge=merge)
        except _Unknown as e:
            if once and key in counted:
                continue    # the element's load is counted already
            est = _estimated(view, acc, lane, width, sector)
            if est is None:
                out.unpredicted.append((acc, str(e)))
            else:
                out.loads.append(est)
                out.estimated.append((acc, str(e)))
            continue
        except (ArithmeticError, TypeError, ValueError):
            if once and key in counted:
                continue
            # e.g. a modulo by a block count of 0 at the given sizes
            out.unpredicted.append((acc, "its address cannot be evaluated at these sizes"))
            continue
        load = LoadRequests(acc, reqs * active / (RUN if vector else 1), spr, vector)
        if once and key in counted:
            if load.requests > out.loads[counted[key]].requests:
                out.loads[counted[key]] = load
            continue
        if once:
            counted[key] = len(out.loads)
        out.loads.append(load)
    dk = data_kernel(num) if out.estimated else None
    if dk is not None:
        used = {id(lp) for ld in out.loads for lp in ld.access.loops}
        out.trips = [why + (f"; a warp runs about {dk.warp_runs[lp]:.3g}, as long as its "
                            "slowest lane" if lp in dk.warp_runs else "")
                     for lp, why in dk.estimated.items() if id(lp) in used]
    return out


def access_requests(num, acc: Access, lane: Loop, width: int, sector: int
                    ) -> tuple[float, float] | None:
    """(warp requests per kernel run, sectors per request) of the access ``acc`` of the
    numeric kernel ``num`` (an atomic update's element as well as a load), as
    :func:`global_loads` counts a load; None where its address or a trip count around
    it depends on data or cannot be evaluated at these sizes."""
    try:
        reqs = _warp_requests(num, acc, lane, width)
        spr, active, *_ = _sectors(acc, lane, width, sector, False, [], merge=len(acc.loops))
    except (_Unknown, ArithmeticError, TypeError, ValueError):
        return None
    return reqs * active, spr


def _element_type(acc: Access) -> str | None:
    return getattr(getattr(acc.symbol, "type", None), "name", None)


def _float_atomic_reads(hw) -> bool:
    """Whether the code generated for ``hw`` does a float atomicAdd as a
    compare-and-swap loop that reads the element first (its target file's
    ``float_atomic_add``; OpenCL 1.2 has no float atomics, so without a target file
    too)."""
    return device_settings(hw).get("float_atomic_add", "cas") == "cas"


def _estimated(view, acc: Access, lane: Loop, width: int, sector: int) -> LoadRequests | None:
    """A load the kernel model cannot evaluate, on the data-aware kernel of
    mcl.analyses.datadep (None where that cannot either): a sector per active lane
    of a gather, the average trip count of a loop that data bounds."""
    dk = data_kernel(view.num)
    if dk is None:
        return None
    dacc, dlane = dk.access_like(acc), dk.loop_like(lane)
    if dacc is None or dlane is None or dlane not in dacc.loops:
        return None
    line = min((int(c.cache_line_size) for c in view.hardware.caches_for(acc.space)
                if c.cache_line_size), default=sector)
    try:
        reqs = _warp_requests(dk.kernel, dacc, dlane, width)
        spr, active, _, lines, fetched = _sectors(dacc, dlane, width, sector, False, [],
                                                  dk, line)
    except (_Unknown, ArithmeticError, TypeError, ValueError):
        return None
    # a warp runs a data-bound loop as long as its slowest lane: more requests than
    # the average trip count gives, the same sectors over them (lanes sit idle)
    for lp in dacc.loops:
        runs = warp_iterations(dk, lp, dlane, width)
        if runs:
            more = runs / float(lp.trips)
            reqs, spr = reqs * more, spr / more
            lines = lines / more if lines is not None else None
            fetched = fetched / more if fetched is not None else None
    return LoadRequests(dacc, reqs * active, spr, False, lines, fetched)


def vector_run(acc: Access) -> list[ast.Index] | None:
    """Whether the OpenCL generator may turn the innermost loop around the
    (symbolic) access ``acc`` into 128-bit accesses (mcl.opencl.vectorize): a
    ``for`` loop with a constant trip count that is a multiple of 4, whose body
    only declares integers and copies array elements (``x[u] = a[i, k]``,
    possibly under an ``if``), the access being one side of a copy. Returns None
    when it cannot, else the array elements of all the body's copies: the
    generator vectorises only when each of those in memory is a run of
    consecutive elements, which is checked where the accesses are evaluated."""
    if not acc.loops or acc.loops[-1].kind != "for":
        return None
    loop = acc.loops[-1]
    trips = sympy.sympify(loop.trips) if loop.trips is not None else None
    if trips is None or not trips.is_number or int(trips) % RUN or int(trips) <= 0:
        return None
    if _number(loop.constant_step) != 1:
        return None
    node = loop.node
    body = node.body.statements if isinstance(node.body, ast.Block) else (node.body,)
    copies: list[ast.Assign] = []
    for st in body:
        if isinstance(st, ast.Declaration):
            if st.type.is_array or st.type.name != "int":
                return None
        elif isinstance(st, ast.Assign):
            copies.append(st)
        elif isinstance(st, ast.If):
            for branch in (st.then, st.orelse):
                if branch is None:
                    continue
                inner = branch.statements if isinstance(branch, ast.Block) else (branch,)
                if not all(isinstance(x, ast.Assign) for x in inner):
                    return None
                copies += inner
        else:
            return None
    if not any(c.op == "=" and acc.node in (c.target, c.value) for c in copies):
        return None
    sides = []
    for c in copies:
        if c.op != "=":
            return None
        sides += [x for x in (c.target, c.value) if isinstance(x, ast.Index)]
    return sides


def _invariant_loops(acc: Access, lane: Loop) -> list[Loop]:
    """The loops inside the innermost one that moves ``acc``'s address: the
    compiler loads a read-only element once for all their iterations."""
    if acc.offset is None:
        return []
    free = {str(x) for x in sympy.sympify(acc.offset).free_symbols}
    moving = [k for k, lp in enumerate(acc.loops)
              if lp is lane or lp.var in free or lp.var is None]
    last = max(moving, default=-1)
    return [lp for lp in acc.loops[last + 1:] if lp.kind != "foreach"]


class _Unknown(Exception):
    pass


def issued_share(acc: Access, lane: Loop, width: int) -> float | None:
    """The share of a warp's passes over ``acc`` (sample points of its loops, as for the
    sectors) in which the ``if``s around it let at least one lane run it: a warp none
    of whose lanes does skips the instruction (``if (j < m) … else bTemp[k] = 0.0``
    with m a multiple of the warp: the else branch never issues). 1 without ifs; None
    where the loops or the conditions cannot be evaluated."""
    if not acc.conditions:
        return 1.0
    try:
        return _sectors(acc, lane, width, 32, False, [])[1]
    except (_Unknown, ArithmeticError, TypeError, ValueError):
        return None


def _warp_requests(num, acc: Access, lane: Loop, width: int) -> float:
    execs, _ = num.executions(tuple(lp for lp in acc.loops if lp is not lane))
    execs = sympy.sympify(execs)
    if not execs.is_number:
        raise _Unknown("the number of iterations of a loop around it depends on data")
    return float(execs) / _rows_per_warp(acc, lane, width)


def _rows_per_warp(acc: Access, lane: Loop, width: int) -> int:
    """How many iterations of the thread loop around the lanes' loop one warp
    spans when the lanes' loop has fewer than ``width`` iterations (16 x 16
    threads: a warp is two rows of 16)."""
    k = acc.loops.index(lane)
    n = _number(lane.trips)
    if not n or n >= width or width % n or k == 0:
        return 1
    outer = acc.loops[k - 1]
    if outer.kind != "foreach" or outer.node.group != lane.node.group:
        return 1
    return width // n


def _number(e) -> int | None:
    if e is None:
        return None
    e = sympy.sympify(e)
    return int(e) if e.is_number else None


class _Evaluator:
    """An access's element offset and its loops' starts and bounds as Python
    functions of the loop values (outer to inner)."""

    def __init__(self, acc: Access, lane: Loop, width: int, data=None):
        if acc.offset is None:
            raise _Unknown(acc.why_unpredictable or "its address depends on data")
        self.loops = list(acc.loops)
        for lp in self.loops:
            if lp.var is None:
                raise _Unknown("it is inside a while loop")
        # values read from memory (mcl.analyses.datadep): extra arguments
        phs, self.data = data.placeholder_values(self.loops) if data is not None \
            else ([], None)
        symbols = [var_symbol(lp.var) for lp in self.loops] + phs
        known = set(symbols)
        self.offset = self._compile(acc.offset, symbols, known, "its address")
        self.starts = [self._compile(lp.start if lp.start is not None else 0, symbols,
                                     known, f"the start of loop {lp.var}")
                       for lp in self.loops]
        known = known - set(phs)    # a bound that data chooses: every lane active
        self.bounds = []
        for lp in self.loops:
            b = None
            if lp.kind == "for" and lp.bound is not None:
                try:
                    b = self._compile(lp.bound, symbols, known, "")
                except _Unknown:
                    b = None    # a bound that depends on data: every lane counts as active
            self.bounds.append(b)
        self.steps = []
        #: a geometric loop's values by position (s >>= 1), which the steps do not give
        self.values = {k: lp.values for k, lp in enumerate(self.loops) if lp.values is not None}
        for lp in self.loops:
            if lp.values is not None:
                self.steps.append(0)
                continue
            step = _number(lp.constant_step)
            if step is None:
                raise _Unknown(f"loop {lp.var} has a step that depends on data")
            self.steps.append(step)
        self.lane = self.loops.index(lane)
        #: a warp spans ``rows`` iterations of the thread loop around the lanes'
        self.rows = _rows_per_warp(acc, lane, width)
        self.lane_trips = _number(lane.trips) or width
        self.others = [k for k, lp in enumerate(self.loops) if lp is not lane]
        self.trips = []
        for k in self.others:
            t = _number(self.loops[k].trips)
            if t is None or t <= 0:
                raise _Unknown(f"loop {self.loops[k].var} has an unknown number of iterations")
            self.trips.append(t)
        self.element_bytes = acc.element_bytes
        # the ifs around the access: a lane for which one is false does not load
        # (conditions on data or on unknown values count as true)
        loop_symbols = set(symbols) - set(phs)
        self.conditions = []
        for c in acc.conditions:
            e = c.expr
            if e is None or e is sympy.true or not e.free_symbols <= loop_symbols:
                continue
            fn = (lambda *_: False) if e is sympy.false else sympy.lambdify(symbols, e, "math")
            self.conditions.append((c.depth, fn))

    @staticmethod
    def _compile(e, symbols, known, what):
        e = sympy.sympify(e)
        extra = e.free_symbols - known
        if extra:
            raise _Unknown(f"{what} depends on {', '.join(sorted(map(str, extra)))}")
        return sympy.lambdify(symbols, e, "math")

    def at(self, its: dict[int, int], j: int = 0, guards: bool = True) -> int | None:
        """The element offset at iteration numbers ``its`` (by loop position; the
        innermost loop ``j`` further), or None where a loop has run out for it or
        (``guards``) an if around the access is false."""
        args = self.arguments(its, j)
        if args is None or (guards and not all(c(*args) for _, c in self.conditions)):
            return None
        return int(self.offset(*args))

    def arguments(self, its: dict[int, int], j: int = 0) -> list[int] | None:
        """The loops' values (and data values) at iteration numbers ``its``, or None
        where a loop has run out for it."""
        n = len(self.loops)
        values = [0] * n
        last = n - 1
        for k in range(n):
            i = its[k] + (j if k == last else 0)
            args = values + self.data(values, k) if self.data else values
            if k in self.values:
                if i >= len(self.values[k]):
                    return None
                values[k] = self.values[k][i]
                continue
            values[k] = int(self.starts[k](*args)) + i * self.steps[k]
            b = self.bounds[k]
            if b is not None and self.steps[k] > 0 and values[k] >= b(*args):
                return None
        return values + self.data(values, n) if self.data else values

    def consecutive(self) -> bool:
        """Whether consecutive iterations of the innermost loop touch consecutive
        elements (the other loops at their first iteration)."""
        its = dict.fromkeys(range(len(self.loops)), 0)
        offs = [self.at(its, j, guards=False) for j in range(RUN)]
        return None not in offs and all(offs[j] == offs[0] + j for j in range(RUN))


def _sectors(acc: Access, lane: Loop, width: int, sector: int, vector: bool,
             copied: list[Access], data=None, line: int | None = None,
             merge: int | None = None) -> tuple[float, float, bool, float, float]:
    """(sectors per request, the share of the iterations around the load where the
    warp issues it (some lane runs it; where the loops from position ``merge`` on
    are an unrolled nest whose loads the compiler merges, only the iterations of
    each distinct load), whether it is a 128-bit access; with ``line``: cache lines
    of ``line`` bytes per request, and the sectors per request that the previous
    iteration of the innermost sequential loop did not touch, averaged over its
    iterations as mcl.analyses.timing_counts.cache_bytes does)."""
    ev = _Evaluator(acc, lane, width, data)
    merged, reps, share = [], [()], 1.0
    if merge is not None and merge < len(ev.loops) and not vector:
        found = _distinct_loads(ev, merge, width)
        if found is not None:
            merged = list(range(merge, len(ev.loops)))
            reps, share = found
    # the next iteration of an innermost sequential loop: what it fetches anew
    seq = line is not None and ev.loops[-1] is not lane and ev.loops[-1].kind != "foreach"
    if vector and not ev.consecutive():
        vector = False
    for other in copied if vector else ():
        if other is acc or other.space == "reg":
            continue
        try:
            vector = lane in other.loops and _Evaluator(other, lane, width).consecutive()
        except _Unknown:
            vector = False
        if not vector:
            break
    runs = range(RUN) if vector else range(1)
    total = active = count = lines = fresh = 0
    outer = [(k, t) for k, t in zip(ev.others, ev.trips, strict=True) if k not in merged]
    for n, point in enumerate(_points([t for _, t in outer], vector)):
        its = dict(zip([k for k, _ in outer], point, strict=True))
        its.update(zip(merged, reps[n % len(reps)], strict=False))
        elements: set[int] = set()
        following: set[int] = set()
        if ev.rows > 1:
            row0 = its[ev.lane - 1] - its[ev.lane - 1] % ev.rows
        for ln in range(width):
            its[ev.lane] = ln
            if ev.rows > 1:
                its[ev.lane] = ln % ev.lane_trips
                its[ev.lane - 1] = row0 + ln // ev.lane_trips
            for j in runs:
                off = ev.at(its, j)
                if off is not None:
                    elements.add(off)
            nxt = ev.at(its, 1) if seq else None
            if nxt is not None:
                following.add(nxt)
        count += 1
        if elements:
            active += 1
            now = {e * ev.element_bytes // sector for e in elements}
            total += len(now)
            lines += len({e * ev.element_bytes // (line or sector) for e in elements})
            fresh += len({e * ev.element_bytes // sector for e in following} - now) \
                if seq else len(now)
    if not active:
        return 0.0, 0.0, vector, 0.0, 0.0
    trips = float(sympy.sympify(ev.loops[-1].trips)) if seq else 1.0
    again = (total + max(0.0, trips - 1) * fresh) / max(trips, 1.0)
    return total / active, share * active / count, vector, lines / active, again / active


def _distinct_loads(ev: _Evaluator, merge: int,
                    width: int) -> tuple[list[tuple[int, ...]], float] | None:
    """The loads the compiler keeps of an access in the unrolled loops from position
    ``merge`` on (mcl.analyses.unrolled): one iteration number per loop for each
    distinct element the iterations that pass the ifs inside the nest read (told
    apart by the addresses of a few lanes at a few points of the other loops), and
    their share of all iterations. None where the nest has too many."""
    merged = list(range(merge, len(ev.loops)))
    trips = [_number(ev.loops[k].trips) or 0 for k in merged]
    total = math.prod(trips)
    if total <= 1 or total > MAX_COMBINATIONS:
        return None
    inside = [c for depth, c in ev.conditions if depth > merge]
    outer = [(k, t) for k, t in zip(ev.others, ev.trips, strict=True) if k not in merged]
    probes = []
    for n, point in enumerate(_points([t for _, t in outer], False)):
        its = dict(zip([k for k, _ in outer], point, strict=True))
        its[ev.lane] = (7 * n) % min(width, ev.lane_trips)
        probes.append(its)
        if len(probes) == 3:
            break
    seen: dict[tuple, tuple[int, ...]] = {}
    for combo in itertools.product(*(range(t) for t in trips)):
        prints = []
        for its in probes:
            args = ev.arguments({**its, **dict(zip(merged, combo, strict=True))})
            if args is None:
                prints.append(None)
                continue
            if not all(c(*args) for c in inside):
                break
            prints.append(int(ev.offset(*args)))
        else:
            seen.setdefault(tuple(prints), combo)
    if not seen:
        return None
    return list(seen.values()), len(seen) / total


def _points(trips: list[int], vector: bool):
    """Sample iteration numbers of the loops (a vector run starts at multiples of 4
    of the innermost loop): every combination when there are few, else SAMPLES
    points stratified per loop (each loop's iterations in equal shares, a loop of
    more iterations in SAMPLES equal strata, one random draw each), the loops'
    values paired at random."""
    ranges = [range(0, t, RUN) if (vector and k == len(trips) - 1) else range(t)
              for k, t in enumerate(trips)]
    combos = math.prod(len(r) for r in ranges)
    if combos <= SAMPLES:
        yield from itertools.product(*ranges)
        return
    rng = random.Random(20261126)
    columns = []
    for r in ranges:
        n = len(r)
        if n <= SAMPLES:
            picks = list(range(n)) * (SAMPLES // n) + rng.sample(range(n), SAMPLES % n)
        else:
            picks = [int((s + rng.random()) * n / SAMPLES) for s in range(SAMPLES)]
        rng.shuffle(picks)
        columns.append([r[min(i, n - 1)] for i in picks])
    yield from zip(*columns, strict=True)
