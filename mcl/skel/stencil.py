"""Skeletons over a matrix element and its neighbours: MapOverlap and Stencil.

The customising function receives a ``<type>_matrix_t`` and reads neighbours with
``get(m, dr, dc)`` (``dr`` rows down, ``dc`` columns right of the current element).
Out-of-matrix reads give a neutral value or the nearest element (``padding``).
On several devices the input is overlap distributed; Stencil iterates, exchanging
only the halo rows between devices (and ranks) every ``sync_every`` iterations.

A read beyond the skeleton's reach (more rows up or down than its size or shape) is a
usage error (skel-reads-beyond-reach), on any number of devices: on several devices
those rows are not stored with a part. An offset known before the function runs (a
literal, ``get(m, -2, 0)``, or the index of a loop with literal bounds, ``for (int i =
-2; i <= 2; ++i)``) is refused when the skeleton is made; one computed at run time
(``for (int i = -k; i <= k; i++)``, k an argument) is checked by ``get`` itself, which
records such a read in a small flag buffer instead of reading, and the call raises once
its launches are done (reading the flags back waits for them: about 0.2 ms a call on
an H200, benchmarks/skel/reach_check_cost.py)."""

from __future__ import annotations

import numbers
import re
from functools import partial

import numpy as np

from mcl.diagnostics import article
from mcl.skel.container import Matrix
from mcl.skel.distribution import block, overlap, single
from mcl.skel.errors import skel_error
from mcl.skel.functions import ctype_of
from mcl.skel.kernel import Skeleton, cname, matrix_type, round_up, typed
from mcl.skel.skeletons import _new_like, _output_dtype
from mcl.skel.transfer import Fences, HaloExchange

NEUTRAL, NEAREST = "neutral", "nearest"


def _prelude(t: str, padding: str, neutral, up: int, down: int) -> str:
    """``get``: a read beyond the rows ``up`` and ``down`` the kernel is built for
    (constants: a literal or unrolled offset costs nothing once folded) is recorded in
    ``m.beyond`` (the farthest row up, the farthest down; written only then) and gives
    the neutral value instead of reading memory the part may not hold."""
    if padding == NEAREST:
        edge = ("  r = clamp(r, 0, m.rows - 1);\n"
                "  c = clamp(c, 0, m.cols - 1);\n")
    else:
        edge = f"  if (r < 0 || r >= m.rows || c < 0 || c >= m.cols) return ({t})({neutral});\n"
    return (matrix_type(t, " __global int* beyond;")
            + f"inline {t} skel_get({t}_matrix_t m, int dr, int dc)\n{{\n"
            + f"  if (dr < {-up} || dr > {down}) {{\n"
              "    int i = dr < 0 ? 0 : 1, d = dr < 0 ? -dr : dr;\n"
              "    if (m.beyond[i] < d) atomic_max(m.beyond + i, d);\n"
            + f"    return ({t})({neutral});\n  }}\n"
              "  int r = m.row + dr, c = m.col + dc;\n" + edge
            + "  return m.data[(r - m.lo) * m.cols + c];\n}\n"
              "#define get(m, dr, dc) skel_get((m), (dr), (dc))\n")


def _body(sk: Skeleton, t: str, tout: str) -> str:
    return (f"__kernel void skel_neighbours(__global const {t}* in, __global {tout}* out, "
            "__global int* beyond, const int rows, const int cols, const int first, "
            "const int count, const int lo, const int out_lo"
            f"{sk.extra_params()})\n{{\n"
            "  int c = get_global_id(0), r = get_global_id(1);\n"
            "  if (c < cols && r < count) {\n"
            f"    {t}_matrix_t m; m.data = in; m.rows = rows; m.cols = cols; "
            "m.row = first + r; m.col = c; m.lo = lo; m.len = cols; m.beyond = beyond;\n"
            f"    out[(first + r - out_lo) * cols + c] = {cname(sk.func)}(m{sk.extra_names()});\n"
            "  }\n}\n")


def _whole(x) -> int | None:
    """``x`` as an int where it is a whole number of an integer type (numpy's too; not
    True or 2.0), else None."""
    if isinstance(x, bool | np.bool_) or not isinstance(x, numbers.Integral):
        return None
    return int(x)


def _reach(x, what: str) -> int:
    """A non-negative whole number of rows or columns (a numpy integer too)."""
    if isinstance(x, bool) or not isinstance(x, numbers.Integral) or x < 0:
        raise skel_error("bad-arguments", f"{what} must be a non-negative integer, not "
                         f"{x!r}")
    return int(x)


def _check_neutral(neutral):
    if isinstance(neutral, bool) or not isinstance(neutral, numbers.Real):
        raise skel_error("bad-arguments", f"neutral (the value read outside the matrix) "
                         f"must be a number, not {neutral!r:.40}")
    return neutral


def _neutral_literal(sk, m: Matrix) -> str:
    """The neutral value as a literal of the matrix's element type: a usage error where
    the type cannot hold it (1.5 for an int matrix would be read as 1)."""
    v, dt = sk.neutral, m.dtype
    if dt.kind in "iu":
        info = np.iinfo(dt)
        if v != v or abs(v) == float("inf") or v != int(v) or not info.min <= v <= info.max:
            raise skel_error("type-mismatch", f"the neutral value {v!r} of {sk.name} "
                             f"'{sk.func.name}' is not {article(m.ctype)} (the Matrix holds {dt})",
                             hint=f"give neutral= a whole number from {info.min} to "
                                  f"{info.max}")
        return str(int(v))
    return repr(float(v)) if v == v and abs(v) != float("inf") else \
        ("NAN" if v != v else ("INFINITY" if v > 0 else "-INFINITY"))


#: a read of a neighbour whose row offset is a literal or a name: get(m, -1, 0), get(m, i, j)
_SIMPLE_GET = re.compile(r"\bget\s*\(\s*\w+\s*,\s*([+-]?\s*\d+|[A-Za-z_]\w*)\s*,")
#: any read of a neighbour
_ANY_GET = re.compile(r"\b(?:skel_)?get\s*\(")
#: a counted loop with literal bounds and unit steps: for (int i = -2; i <= 2; ++i)
_LITERAL_FOR = re.compile(
    r"\bfor\s*\(\s*int\s+([A-Za-z_]\w*)\s*=\s*([+-]?\s*\d+)\s*;\s*\1\s*(<=|<|>=|>)\s*"
    r"([+-]?\s*\d+)\s*;\s*(\+\+\s*\1|\1\s*\+\+|\1\s*\+=\s*1|--\s*\1|\1\s*--|\1\s*-=\s*1)\s*\)")


def _loop_ranges(text: str) -> dict[str, tuple[int, int] | None]:
    """The values each name takes as the index of counted loops with literal bounds (the
    union over its loops), None for a name declared or written anywhere else (its values
    are not known before the run)."""
    ranges: dict[str, tuple[int, int] | None] = {}
    rest = text
    for m in _LITERAL_FOR.finditer(text):
        var, a, op, b, step = m.groups()
        a, b = int(a.replace(" ", "")), int(b.replace(" ", ""))
        up = "+" in step
        if op in ("<", "<=") and up:
            lo, hi = a, b - (op == "<")
        elif op in (">", ">=") and not up:
            lo, hi = b + (op == ">"), a
        else:
            ranges[var] = None          # steps away from its bound: not counted here
            continue
        old = ranges.get(var, (lo, hi))
        if lo <= hi:
            ranges[var] = None if old is None else (min(old[0], lo), max(old[1], hi))
        rest = rest.replace(m.group(0), " ", 1)
    for var in list(ranges):
        write = re.compile(rf"\bint\s+{var}\b|\b{var}\s*(?:[-+*/%&|^]?=(?!=)|\+\+|--)"
                           rf"|(?:\+\+|--)\s*{var}\b")
        if write.search(rest):
            ranges[var] = None
    return ranges


def _row_reads(sk) -> tuple[list[tuple[str, int, int]], bool]:
    """The function's reads of a neighbour whose row offsets are known before it runs
    (a literal, or the index of a counted loop with literal bounds: the blur's ``for
    (int i = -2; i <= 2; ++i)``), as (the read, its least and greatest row offset), and
    whether it has others (offsets computed at run time: checked by ``get`` itself)."""
    from mcl.skel.functions import _strip_comments
    text = _strip_comments(sk.func.source)
    ranges = _loop_ranges(text)
    known, computed = [], len(_ANY_GET.findall(text)) != len(_SIMPLE_GET.findall(text))
    for m in _SIMPLE_GET.finditer(text):
        row = m.group(1).replace(" ", "")
        if re.fullmatch(r"[+-]?\d+", row):
            known.append((m.group(0).rstrip(",").strip() + ", ...)", int(row), int(row)))
        elif ranges.get(row) is not None:
            known.append((m.group(0).rstrip(",").strip() + ", ...)", *ranges[row]))
        else:
            computed = True
    return known, computed


def _check_reads(sk, up: int, down: int, how: str) -> bool:
    """A usage error where the function reads a neighbour beyond the skeleton's reach
    at an offset known before it runs: on several devices those rows are not stored with
    a part (its own rows and ``up``/``down`` halo rows), and the read would give another
    part's or no data. Returns whether it reads offsets computed at run time."""
    known, computed = _row_reads(sk)
    for read, lo, hi in known:
        if -up <= lo and hi <= down:    # every part stores whole rows: columns are there
            continue
        where = f"row offset {lo}" if lo == hi else f"row offsets {lo} .. {hi}"
        raise skel_error("reads-beyond-reach", f"'{sk.func.name}' reads {read} at {where}, "
                         f"beyond the {sk.name}'s reach ({how}): on several devices "
                         "those rows are not stored with a part",
                         hint=sk.larger(max(0, -lo), max(0, hi)))
    return computed


def _check_padding(padding: str) -> str:
    if padding not in (NEUTRAL, NEAREST):
        raise skel_error("bad-arguments", f"padding must be '{NEUTRAL}' or '{NEAREST}', "
                         f"not {padding!r}")
    return padding


class _Neighbours(Skeleton):
    inputs = 1
    #: rows (up, down) the kernels may read: the skeleton's reach
    rows_reach = (0, 0)

    def _reach_rows(self, up: int, down: int, how: str) -> None:
        """The reach of the kernels, ``how`` in messages: literal reads beyond it are
        refused now, the others are checked at run time (see :meth:`check_beyond`)."""
        self._computed_offsets = _check_reads(self, up, down, how)
        self.rows_reach, self._how = (up, down), how

    def neighbours_kernel(self, devs, g, m: Matrix, out_dtype):
        key = ("neighbours", devs.generation, g, m.dtype, out_dtype)
        k = self._kernels.get(key)      # the source is not composed again at every call
        if k is None:
            k = self._kernels[key] = self.kernel(
                devs, g, _prelude(m.ctype, self.padding, _neutral_literal(self, m),
                                  *self.rows_reach),
                _body(self, m.ctype, ctype_of(out_dtype)), "skel_neighbours")
        return k

    def beyond_buffer(self, devs, g):
        """Device ``g``'s flags of reads beyond the reach: the farthest row up and the
        farthest row down read (0: none), zero until such a read happens."""
        flags = self.__dict__.setdefault("_beyond", {})
        buf = flags.get((devs.generation, g))
        if buf is None:
            import pyopencl as cl
            if any(gen != devs.generation for gen, _ in flags):
                flags.clear()           # other devices
            buf = flags[(devs.generation, g)] = cl.Buffer(
                devs.context, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR,
                hostbuf=np.zeros(2, np.int32))
        return buf

    def check_beyond(self, devs) -> None:
        """After a call's launches: a usage error where the function read rows beyond
        the reach through an offset computed at run time. One read of the flags per
        call, only for functions with such offsets (the others cannot read beyond it);
        on one device too, where the rows are there, so that a program that works on
        one device does not fail on several. Under MPI every rank raises alike."""
        if not self._computed_offsets:
            return
        import pyopencl as cl
        flags = [(g, buf, np.zeros(2, np.int32))
                 for (gen, g), buf in self.__dict__.get("_beyond", {}).items()
                 if gen == devs.generation]
        g = None
        try:
            events = [cl.enqueue_copy(devs.queue(g), host, buf, is_blocking=False)
                      for g, buf, host in flags]
            devs.flush()        # every device's work is submitted before one is awaited
            if events:          # (none where nothing was launched: an empty matrix)
                cl.wait_for_events(events)
            need = [int(max((host[k] for _, _, host in flags), default=0)) for k in (0, 1)]
            where = ""
            if devs.ranks > 1:
                # every rank raises alike, whichever read beyond: a rank that went on
                # would wait for the others' messages for ever
                from mcl.skel.mpi import allgather_values, ranks_named
                every = allgather_values(devs, [tuple(need)])
                need = [max(n[k] for n in every) for k in (0, 1)]
                if any(need):
                    where = " on " + ranks_named([r for r, n in enumerate(every) if any(n)],
                                                 devs.ranks)
            if not any(need):
                return
            for g, buf, host in flags:
                if host.any():      # zero again for the next call
                    cl.enqueue_copy(devs.queue(g), buf, np.zeros(2, np.int32),
                                    is_blocking=True)
        except cl.Error as e:
            from mcl.skel.errors import cl_failure
            raise cl_failure(f"running {self.name} '{self.func.name}'", e,
                             devs.name(0 if g is None else g)) from e
        far = " and ".join(f"{n} row(s) {way}" for n, way in zip(need, ("up", "down"),
                                                                   strict=True) if n)
        e = skel_error("reads-beyond-reach", f"'{self.func.name}' read a neighbour "
                       f"{far} (through an offset computed at run time){where}, beyond the "
                       f"{self.name}'s reach ({self._how}): on several devices those "
                       "rows are not stored with a part (refused on one device too, "
                       "where the result would differ)",
                       hint=self.larger(*need))
        if devs.ranks > 1:
            from mcl.skel.mpi import on_every_rank
            e = on_every_rank(e)
        raise e

    @staticmethod
    def tile(devs, g) -> int:
        return 16 if devs.limit(g)[2] >= 256 else 8

    def _matrix(self, m, name):
        if not isinstance(m, Matrix):
            raise skel_error("needs-matrix", f"{name} takes a Matrix, not {type(m).__name__}",
                             hint="make one with mcl.skel.Matrix(array)")
        first = self.func.params[0]
        if first.base != f"{m.ctype}_matrix_t":
            raise skel_error("type-mismatch", f"the {name} function '{self.func.name}' takes "
                             f"'{first.ctype} {first.name}', but a {name} over a Matrix of "
                             f"{m.dtype} passes {article(m.ctype + '_matrix_t')}",
                             hint=f"declare it as {m.ctype}_matrix_t {first.name} and read "
                                  "neighbours with get(m, row offset, column offset)")
        _neutral_literal(self, m)

    def _place(self, m: Matrix, top: int, bottom: int) -> None:
        d = m.distribution
        if d is not None and d.kind in ("single", "copy"):
            return
        if d is None or d.kind == "block" or (d.kind == "overlap" and (d.top < top
                                                                        or d.bottom < bottom)):
            count = m._devs.count
            if count > 1 and m.rows // count < max(top, bottom):
                # blocks smaller than the halo: one device does it all
                m.distribution = single(0)
            else:
                m.distribution = overlap(top, bottom)


class MapOverlap(_Neighbours):
    """``MapOverlap(f, size, padding="neutral", neutral=0)(M, *extras)``: ``f`` at every
    element of M, reading neighbours up to ``size`` rows and columns away. A read of a
    row farther away is a usage error on any number of devices (an offset known before
    the function runs when the MapOverlap is made, a computed one when it is called)."""

    name = "MapOverlap"

    def __init__(self, func, size: int, padding: str = NEUTRAL, neutral=0):
        super().__init__(func)
        size = _reach(size, "MapOverlap's size")
        self.size, self.padding, self.neutral = size, _check_padding(padding), \
            _check_neutral(neutral)
        self._reach_rows(size, size, f"size {size}")

    def larger(self, up: int, down: int) -> str:
        return f"give the MapOverlap a size of at least {max(up, down, self.size)}"

    def _call(self, m: Matrix, *args) -> Matrix:
        self._matrix(m, "MapOverlap")
        devs = m._devs
        extras = self.extras(args)
        out_dtype = _output_dtype(self, m.dtype)
        self._place(m, self.size, self.size)
        parts = m._ensure(halo=True)
        self.ensure_extras(extras)
        out_dist = block() if m.distribution.kind == "overlap" else m.distribution
        out = _new_like(m.shape, out_dtype, out_dist, devs,
                        out_dist.parts(m.rows, devs.count), f"the output of MapOverlap "
                        f"'{self.func.name}'")
        key = ("mapoverlap", devs.generation, m.dtype, out_dtype, m.shape, m._dist.layout(),
               out_dist.layout())
        plan = self.plan(key, lambda: self._overlap_plan(devs, m, parts, out, out_dtype,
                                                         extras))
        opart = out._parts
        self.run_plan(devs, plan, lambda i: (parts[i].buffer, opart[i].buffer,
                                             self.beyond_buffer(devs, parts[i].spec.device)),
                      extras, f"running MapOverlap '{self.func.name}'")
        self.check_beyond(devs)
        out._written(out._parts)
        return out

    def _overlap_plan(self, devs, m, parts, out, out_dtype, extras) -> list:
        plan = []
        for i, (p, o) in enumerate(zip(parts, out._parts, strict=True)):
            s = p.spec
            g, count = s.device, s.own_hi - s.own_lo
            if not devs.is_local(g) or count <= 0 or m.cols == 0:
                continue
            tile = self.tile(devs, g)
            plan.append(self.part_launch(
                devs, i, g, self.neighbours_kernel(devs, g, m, out_dtype),
                (round_up(m.cols, tile), round_up(count, tile)), (tile, tile),
                [p.buffer, o.buffer, self.beyond_buffer(devs, g)],
                [np.int32(m.rows), np.int32(m.cols), np.int32(s.own_lo), np.int32(count),
                 np.int32(s.lo), np.int32(o.spec.lo)], extras))
        return plan


class Stencil(_Neighbours):
    """``Stencil(f, shape, padding="neutral", neutral=0, sync_every=1)(M, *extras,
    iterations=1)``: ``f`` applied ``iterations`` times; ``shape`` is the reach
    (up, right, down, left), or one number for all four. Between devices only the
    halo rows move, every ``sync_every`` iterations (halos are that much deeper). A
    read of a row beyond ``shape`` is a usage error on any number of devices (a literal
    offset when the Stencil is made, a computed one after the call's iterations)."""

    name = "Stencil"
    #: a part with fewer elements to compute is computed by one kernel before its
    #: rows are copied (the copies would not overlap much work: an extra launch costs
    #: more than it hides); larger parts compute the rows the others read first
    split_from = 1 << 16

    def __init__(self, func, shape=1, padding: str = NEUTRAL, neutral=0,
                 sync_every: int = 1):
        super().__init__(func)
        shape = (shape,) * 4 if isinstance(shape, numbers.Integral) else \
            tuple(shape) if isinstance(shape, tuple | list) else (shape,)
        if len(shape) != 4:
            raise skel_error("bad-arguments", f"a stencil shape is (up, right, down, left) "
                             f"of non-negative integers, not {shape!r}")
        shape = tuple(_reach(x, "a stencil shape's (up, right, down, left)") for x in shape)
        if _whole(sync_every) is None or sync_every < 1:
            raise skel_error("bad-arguments", f"sync_every must be a positive integer, not "
                             f"{sync_every!r:.40}")
        sync_every = int(sync_every)
        self._objects: dict = {}
        self.shape, self.padding, self.neutral = shape, _check_padding(padding), \
            _check_neutral(neutral)
        self._reach_rows(shape[0], shape[2], f"shape (up, right, down, left) = {shape}")
        self.sync_every = sync_every

    def larger(self, up: int, down: int) -> str:
        u, r, d, left = self.shape
        return (f"give the Stencil a shape (up, right, down, left) of at least "
                f"{(max(u, up), r, max(d, down), left)}")

    def _call(self, m: Matrix, *args, iterations: int = 1) -> Matrix:
        self._matrix(m, "Stencil")
        if _whole(iterations) is None or iterations < 0:
            raise skel_error("bad-arguments", f"iterations must be a non-negative integer, "
                             f"not {iterations!r:.40}")
        iterations = int(iterations)
        out_dtype = _output_dtype(self, m.dtype)
        if iterations > 1 and out_dtype != m.dtype:
            raise skel_error("bad-function", f"an iterated Stencil must return the element "
                             f"type ({m.ctype}); '{self.func.name}' returns "
                             f"{self.func.return_type}")
        devs = m._devs
        extras = self.extras(args)
        up, _right, down, _left = self.shape
        sync = min(self.sync_every, max(iterations, 1))
        self._place(m, up * sync, down * sync)
        parts = m._ensure(halo=True)
        self.ensure_extras(extras)
        if iterations == 0:
            return Matrix(m.to_numpy(), distribution=m.distribution)
        specs = [p.spec for p in parts]
        what = f"the output of Stencil '{self.func.name}'"
        bufs = [_new_like(m.shape, out_dtype, m.distribution, devs, specs, what)]
        if iterations > 1:
            bufs.append(_new_like(m.shape, out_dtype, m.distribution, devs, specs, what))
        run = self._run_state(devs, m, bufs, out_dtype, extras, sync)
        try:
            return self._iterate(run, devs, m, bufs, out_dtype, extras, sync, iterations)
        finally:
            for plan in run.plans.values():
                plan.c = None       # the kept state holds no container (nor its buffers)
                plan.close()        # nor staging memory: the next call takes it again

    def _iterate(self, run, devs, m, bufs, out_dtype, extras, sync, iterations) -> Matrix:
        fences = run.fences
        multi = devs.count > 1
        for role, exchange in run.plans.items():
            exchange.c = bufs[role]         # the halo exchange into each output buffer
        src_role = -1
        for it in range(iterations):
            role = it % len(bufs)
            exchanges = multi and (it + 1) % sync == 0 and it + 1 < iterations
            # an iteration's commands depend only on its input (which fixes its
            # output), how many iterations ago the halos were exchanged and whether
            # they are exchanged after it: planned once, then only enqueued
            key = (src_role, it % sync, exchanges)
            step = run.schedules.get(key)
            if step is None:
                src = m if src_role < 0 else bufs[src_role]
                exchange = None
                if exchanges:
                    exchange = run.plans.get(role)
                    if exchange is None:
                        exchange = run.plans[role] = HaloExchange(bufs[role], fences)
                step = run.schedules[key] = (self._schedule(
                    run.launchers, fences, devs, src, bufs[role], m, out_dtype, extras,
                    it % sync, exchange), exchange)
            ops, exchange = step
            fences.new_iteration()
            for op in ops:
                op()
            if exchange is not None:
                exchange.end()
            src_role = role
        fences.settle(devs)
        self.check_beyond(devs)         # once, after the iterations
        # only the result's state is seen after the call (the other buffer is dropped,
        # and no iteration looks at its input's flags): its own rows are written, its
        # halos stale (the last iteration exchanges none)
        out = bufs[src_role]
        out._written(out._parts)
        return out

    def _run_state(self, devs, m, bufs, out_dtype, extras, sync) -> _RunState:
        """The kernel objects, halo exchanges and iteration plans of a call on these
        buffers: kept across calls (a Stencil in a loop gets the same buffers back from
        the pool), a few at a time. A kept state holds its buffers (the pool would keep
        most of them anyway), not staging memory: a call takes it and gives it back."""
        buffers = tuple(p.buffer for c in (m, *bufs) for p in c._parts)
        key = (devs.generation, m.shape, m.dtype, out_dtype, m._dist.layout(), sync,
               len(bufs), tuple(0 if b is None else b.int_ptr for b in buffers),
               tuple(v.int_ptr if hasattr(v, "int_ptr") else v
                     for g in range(devs.count) if devs.is_local(g)
                     for v in self.extra_values(extras, devs, g)))
        states = self.__dict__.setdefault("_runs", {})
        run = states.pop(key, None)
        if run is None:
            if any(k[0] != devs.generation for k in states):
                states.clear()          # other devices: their staging is not ours
            while len(states) >= RUNS_KEPT:
                states.pop(next(iter(states))).close()
            run = _RunState()
        elif self.__dict__.get("_active") is not run:
            run.activate()          # the kernel objects had another state's arguments
        for plan in run.plans.values():
            plan.reopen()
        states[key] = run           # the most recent last
        self._active = run
        return run

    def _schedule(self, launchers, fences, devs, src, dst, m, out_dtype, extras, phase,
                  exchange):
        """The commands of one iteration ``phase`` iterations after the halos were valid:
        functions to call, kernels and the starts of the halo copies. The halo
        copies run on the devices' copy queues, ordered by ``fences``: a device computes
        its rows the others read, then the rest while its copies run."""
        up, _right, down, _left = self.shape
        ops = []
        for i, (p, o) in enumerate(zip(src._parts, dst._parts, strict=True)):
            s = p.spec
            # rows valid in the input: the stored rows, less the reach of each
            # iteration since the exchange (except at the matrix's edges)
            vlo = s.lo + up * phase if s.lo > 0 else 0
            vhi = s.hi - down * phase if s.hi < m.rows else m.rows
            nlo = vlo + up if vlo > 0 else 0
            nhi = vhi - down if vhi < m.rows else m.rows
            if not devs.is_local(s.device) or nhi <= nlo or not m.cols:
                if exchange is not None:
                    ops.append(partial(exchange.start, i))
                continue
            step = (launchers, fences, devs, i, s, p.buffer, o.buffer, m, out_dtype, extras)
            if exchange is None or (nhi - nlo) * m.cols < self.split_from:
                ops.append(self._step(*step, "all", nlo, nhi - nlo))
                if exchange is not None:
                    ops.append(partial(exchange.start, i))
                continue
            # the rows the other devices read first, then their copies, then the
            # rest: the copies run while the device computes the rest
            edges, rest = _split(nlo, nhi, exchange.rows_read(i))
            for j, (lo, hi) in enumerate(edges):
                ops.append(self._step(*step, ("edge", j), lo, hi - lo))
            ops.append(partial(exchange.start, i))
            for j, (lo, hi) in enumerate(rest):
                ops.append(self._step(*step, ("rest", j), lo, hi - lo))
        return ops

    def _step(self, launchers, fences, devs, i, s, src, dst, m, out_dtype, extras, band, first,
              count):
        """The command computing rows ``[first, first + count)`` of one iteration on one
        part, as a function to call: a kernel object per (part, input, rows) keeps
        its arguments, so an iteration costs one enqueue, not a full launch."""
        import pyopencl as cl
        key = (i, id(src), band, first, count)
        entry = launchers.get(key)
        if entry is None:
            # kernel objects outlive the call (pyopencl makes each one at a cost); the
            # arguments are set once per call
            base = self.neighbours_kernel(devs, s.device, m, out_dtype)
            slot = (id(base), i, sum(1 for (j, *_) in launchers if j == i))
            k = self._objects.get(slot)
            if k is None:
                k = self._objects[slot] = cl.Kernel(base.get_info(cl.kernel_info.PROGRAM),
                                                    "skel_neighbours")
            args = [src, dst, self.beyond_buffer(devs, s.device), np.int32(m.rows),
                    np.int32(m.cols), np.int32(first), np.int32(count), np.int32(s.lo),
                    np.int32(s.lo),
                    *self.extra_values(extras, devs, s.device)]
            typed(k, args)      # pyopencl's generic set_arg costs 9 us per scalar
            k.set_args(*args)
            tile = self.tile(devs, s.device)
            entry = launchers[key] = _Launcher(
                k, args, devs.queue(s.device), (round_up(m.cols, tile), round_up(count, tile)),
                (tile, tile), f"running Stencil '{self.func.name}'", devs.name(s.device),
                fences.of(s.device))
        return entry.enqueue


#: states of Stencil calls kept per Stencil (a loop alternates two or three)
RUNS_KEPT = 4


class _RunState:
    """What a Stencil call plans, kept for the next call on the same buffers: kernel
    objects with their arguments (``launchers``), halo exchanges by output buffer
    (``plans``), and each iteration's commands (``schedules``)."""

    def __init__(self):
        self.launchers: dict = {}
        self.plans: dict = {}
        self.schedules: dict = {}
        self.fences = Fences()

    def activate(self) -> None:
        # kernel objects are shared by the states of one Stencil (pyopencl makes each
        # at a cost): give them this state's arguments back
        for entry in self.launchers.values():
            entry.kernel.set_args(*entry.args)

    def close(self) -> None:
        for plan in self.plans.values():
            plan.close()


class _Launcher:
    """A kernel object with its arguments set, enqueued on its device's queue after the
    halo writes into the device, which ``fence`` (the device's :class:`Fences`) holds
    and is told of the kernel."""

    def __init__(self, kernel, args, queue, global_size, local_size, what, where, fence):
        import pyopencl as cl
        self.kernel, self.args, self.queue = kernel, args, queue
        self.global_size, self.local_size = global_size, local_size
        self.what, self.where, self.fence = what, where, fence
        self.cl = cl

    def enqueue(self):
        f = self.fence
        try:
            # the module's function looked up at each call: benchmarks/skel/timeline.py
            # records the commands through it
            ev = self.cl.enqueue_nd_range_kernel(self.queue, self.kernel, self.global_size,
                                                 self.local_size, None, f.waits)
        except self.cl.Error as e:
            from mcl.skel.errors import cl_failure
            raise cl_failure(self.what, e, self.where) from e
        f.waits = None
        if f.first is None:
            f.first = ev
        f.last = ev


def _split(lo: int, hi: int, read: list[tuple[int, int]]):
    """Rows ``[lo, hi)`` as (the ranges in ``read``, the ranges outside them)."""
    edges, rest, row = [], [], lo
    for a, b in read:
        a, b = max(a, lo), min(b, hi)
        if a >= b:
            continue
        if a > row:
            rest.append((row, a))
        edges.append((a, b))
        row = b
    if row < hi:
        rest.append((row, hi))
    return edges, rest
