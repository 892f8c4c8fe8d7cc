"""Code generation of ``prefetchLocal(toLocal(h) o g) $ xs``, the input of a reduceSeq
run by a whole work-group: double buffering of the elements in local memory with
their loads staged in registers.

Before the loop, g of element 0 (its loads into private memory) and toLocal(h) of
that (the copy into local memory) fill buffer 0, then one barrier. Step j issues g
of element j + 1 (the loads are in flight during the step's work), computes on
buffer j % 2, then writes toLocal(h) of the loaded element into buffer (j + 1) % 2,
which no work-item reads during step j, and ends with one barrier (the only one of
the step: it orders both this step's reads before step j + 2's writes and the
writes before step j + 1's reads)."""

from __future__ import annotations

from mcl.lift.arith import Idx
from mcl.lift.ir import Compose, Fun, Prim, compose
from mcl.lift.typecheck import fun_type
from mcl.lift.types import ArrayType
from mcl.lift.views import (
    CodegenLimit,
    FnView,
    Memory,
    MemView,
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
