"""Code generation of a reduceSeq's input whose elements are computed ahead of the
step that uses them: ``prefetch(g) $ xs`` (``Pipeline``: g of element j + 1 into
private memory during step j) and ``prefetchLocal(toLocal(h) o g) $ xs``, run by a
whole work-group: double buffering of the elements in local memory with their
loads staged in registers (``LocalStage``).

Before the loop, g of element 0 (its loads into private memory) and toLocal(h) of
that (the copy into local memory) fill buffer 0, then one barrier. Step j issues g
of element j + 1 (the loads are in flight during the step's work), computes on
buffer j % 2, then writes toLocal(h) of the loaded element into buffer (j + 1) % 2,
which no work-item reads during step j, and ends with one barrier (the only one of
the step: it orders both this step's reads before step j + 2's writes and the
writes before step j + 1's reads)."""

from __future__ import annotations

from mcl.lift.arith import Idx
from mcl.lift.ir import Call, Compose, Expr, Fun, Prim, compose
from mcl.lift.typecheck import fun_type
from mcl.lift.types import ArrayType
from mcl.lift.views import (
    CodegenLimit,
    FnView,
    Memory,
    MemView,
    TupleView,
    View,
    unit_bytes,
    unit_type,
    units,
)


def split_stages(f: Fun) -> tuple[Prim, Fun]:
    """``toLocal(h) o g`` -> (toLocal(h), g); anything else is an error."""
    if isinstance(f, Compose) and isinstance(f.funs[0], Prim) and f.funs[0].name == "toLocal" \
            and len(f.funs) > 1:
        return f.funs[0], compose(*f.funs[1:])
    raise CodegenLimit("prefetchLocal takes toLocal(h) o g: g loads an element into private "
                       "memory, toLocal(h) copies it into local memory")


class PaddedRows(View):
    """A [rows][cols] array in memory whose rows are ``stride`` >= cols units apart."""

    def __init__(self, mem: Memory, t: ArrayType, offset: Idx, stride: int):
        self.mem, self.type, self.offset, self.stride = mem, t, offset, stride

    def index(self, i) -> View:
        return MemView(self.mem, self.type.elem, self.offset + Idx.of(i) * self.stride)


class LocalStage:
    """The two local buffers of one ``prefetchLocal`` input and the writes into them."""

    def __init__(self, gen, h: Prim, staged_type, env: dict, pad: int = 0):
        self.gen, self.h, self.env, self.pad = gen, h, env, pad
        self.type = fun_type(h, [staged_type], gen.type_env(env))
        self.buffers: View | None = None
        if pad and not (isinstance(self.type, ArrayType) and isinstance(self.type.elem,
                                                                        ArrayType)):
            raise CodegenLimit(f"prefetchLocal pads rows, but its elements ({self.type}) have "
                               "none")

    def _allocate(self) -> View:
        """Both buffers; with padding, one array of 2 x rows x (row + pad) units."""
        gen = self.gen
        if not self.pad:
            gen.k.force_space.append("local")
            try:
                return gen.allocate(ArrayType(self.type, 2), None)
            finally:
                gen.k.force_space.pop()
        rows, row = int(self.type.size), units(self.type.elem)
        stride = row + self.pad * units(self.type.elem) // int(self.type.elem.size)
        unit = unit_type(self.type)
        mem = Memory(gen.fresh("l"), "local", unit, 2 * rows * stride)
        gen.k.local_memories.append(mem)
        gen.k.local_bytes += mem.size * unit_bytes(unit)
        return FnView(ArrayType(self.type, 2),
                      lambda b: PaddedRows(mem, self.type, Idx.of(b) * (rows * stride), stride))

    def start(self, staged: View) -> None:
        """Declares the two buffers and writes element 0 (from ``staged``) into the
        first; the caller ends the prologue with one barrier."""
        gen = self.gen
        if not gen._group_level():
            raise CodegenLimit("prefetchLocal needs a reduceSeq run by a whole work-group "
                               "(inside a mapWrg, outside its mapLcls)")
        self.buffers = self._allocate()
        self.write(staged, Idx.of(0))

    def write(self, staged: View, buffer: Idx) -> None:
        """toLocal(h) of a staged element into buffer ``buffer`` (0 or 1), without the
        barriers of h's maps: the caller places one for all inputs."""
        gen = self.gen
        first = len(gen.k.lines)
        dst = self.buffers.index(buffer)
        gen.materialize(gen.apply(self.h, [staged], self.env, dst), dst)
        gen.k.lines[first:] = [ln for ln in gen.k.lines[first:]
                               if not ln.strip().startswith("barrier(")]

    def current(self, j) -> View:
        """The buffer step ``j`` reads."""
        return self.buffers.index(Idx.of(j) % 2)


class Pipeline(View):
    """The input of a reduceSeq whose elements are computed ahead (``prefetch(g) $ xs``,
    possibly zipped with other arrays): g of element j + 1 is computed, into private
    memory, while the reduction works on element j, so that g's memory accesses (the
    next tiles' loads) overlap that work. Private memory holds the current and the
    next element; ``index`` gives the current one. ``prefetchLocal(toLocal(h) o g)``
    stages g's results the same way and keeps toLocal(h) of them in two local buffers
    (``LocalStage``)."""

    def __init__(self, gen, t: ArrayType, sources: list, env: dict, zipped: bool):
        self.gen, self.type, self.env, self.zipped = gen, t, env, zipped
        self.sources, self.stages = [], []
        for p, xs in sources:
            h = None
            g = None if p is None else p.args[0]
            if p is not None and p.name == "prefetchLocal":
                h = (*split_stages(g)[:1], int(p.args[1]))
                g = split_stages(g)[1]
            self.sources.append((g, xs))
            self.stages.append(h)
        self.types = [None if g is None else fun_type(g, [xs.type.elem], gen.type_env(env))
                      for g, xs in self.sources]
        self.stages = [None if h is None else LocalStage(gen, h[0], st, env, h[1])
                       for h, st in zip(self.stages, self.types, strict=True)]
        self.distributed = [False] * len(sources)
        self.current: list[tuple[View, MemView] | None] = []
        self.next: list[tuple[View, MemView] | None] = []

    def _buffers(self) -> list[tuple[View, MemView] | None]:
        """Private memory for g of one element, declared here."""
        return [None if t is None else self.gen._private(t, "ahead", d)
                for t, d in zip(self.types, self.distributed, strict=True)]

    def _fill(self, bufs, j: Idx) -> None:
        for (g, xs), buf in zip(self.sources, bufs, strict=True):
            if g is not None:
                r = self.gen.apply(g, [xs.index(j)], self.env, buf[0])
                self.gen.materialize(r, buf[0])

    def _past_end(self, j: Idx) -> bool:
        return j.is_const and j.const >= int(self.type.size)

    def _guarded(self, j: Idx, body) -> None:
        """``body`` for element j of the array, which may be one past its end."""
        n = int(self.type.size)
        if j.is_const:
            body()
            return
        self.gen.emit(f"if ({j.c()} < {n}) {{")
        self.gen.k.indent += 1
        body()
        self.gen.k.indent -= 1
        self.gen.emit("}")

    def start(self, group: bool) -> None:
        # decided once: every buffer of the loop has the current one's shape
        self.distributed = [group and t is not None and self.gen._distributed(t)
                            for t in self.types]
        self.current = self._buffers()
        self._fill(self.current, Idx.of(0))
        staged = [(st, buf) for st, buf in zip(self.stages, self.current, strict=True) if st]
        for st, buf in staged:
            st.start(buf[0])
        if staged:
            self.gen.emit("barrier(CLK_LOCAL_MEM_FENCE);")

    def fetch(self, j: Idx) -> None:
        if self._past_end(j):
            return
        self.next = self._buffers()
        self._guarded(j, lambda: self._fill(self.next, j))

    def store(self, j: Idx) -> None:
        """Element j, fetched during step j - 1, into the local buffer step j reads
        (the other one than step j - 1's); the step's barrier follows."""
        if self._past_end(j) or not any(self.stages):
            return

        def write():
            for st, nxt in zip(self.stages, self.next, strict=True):
                if st is not None:
                    st.write(nxt[0], Idx.of(j) % 2)
        self._guarded(j, write)

    def advance(self, j: Idx) -> None:
        # elements staged for local memory are consumed in their step: nothing to rotate
        if self._past_end(j) or all(cur is None or st is not None
                                    for cur, st in zip(self.current, self.stages, strict=True)):
            return

        def rotate():
            for cur, nxt, st in zip(self.current, self.next, self.stages, strict=True):
                if cur is not None and st is None:
                    self.gen.copy(nxt[1], cur[1])
        self._guarded(j, rotate)

    def index(self, i) -> View:
        parts = tuple(xs.index(i) if buf is None else buf[0] if st is None else st.current(i)
                      for (_, xs), buf, st in zip(self.sources, self.current, self.stages,
                                                  strict=True))
        return TupleView(self.type.elem, parts) if self.zipped else parts[0]


def is_prefetch(e: Expr) -> bool:
    return isinstance(e, Call) and isinstance(e.fun, Prim) and e.fun.name in ("prefetch",
                                                                              "prefetchLocal")


def prefetched(e: Expr) -> bool:
    """``e`` is ``prefetch(g) $ xs`` or a zip of arrays one of which is."""
    return is_prefetch(e) or (isinstance(e, Call) and isinstance(e.fun, Prim) and
                               e.fun.name == "zip" and any(map(is_prefetch, e.args)))
