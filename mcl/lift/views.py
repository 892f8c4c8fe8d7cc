"""Views: how the code generator reads and writes data without copying it.

A view is an array, tuple or value that knows how to index itself; ``split``,
``join``, ``transpose``, ``reorderStride``, ``zip``, ``asVector`` ... only build
views, so they cost no code (seed 001: "index functions, no copies"). At the
bottom a view reaches memory, a private variable or a C expression, and
``load``/``store`` print the access with simplified index arithmetic."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import sympy

from mcl.lift.arith import Idx
from mcl.lift.types import ArrayType, ScalarType, TupleType, Type, VectorType


def units(t: Type) -> int:
    """Storage units (scalars, or vectors when the innermost type is a vector)."""
    if isinstance(t, ArrayType):
        return int(t.size) * units(t.elem)
    if isinstance(t, ScalarType | VectorType):
        return 1
    raise CodegenLimit(f"a value of type {t} cannot be stored in one OpenCL buffer")


def unit_type(t: Type) -> ScalarType | VectorType:
    while isinstance(t, ArrayType):
        t = t.elem
    if isinstance(t, ScalarType | VectorType):
        return t
    raise CodegenLimit(f"a value of type {t} cannot be stored in one OpenCL buffer")


def unit_bytes(unit: ScalarType | VectorType) -> int:
    """Bytes of one storage unit."""
    if isinstance(unit, VectorType):
        return unit_bytes(unit.scalar) * unit.width
    return np.dtype(unit.dtype).itemsize


class CodegenLimit(Exception):
    """An expression the code generator cannot (yet) turn into OpenCL."""


@dataclass(eq=False)
class Memory:
    """A buffer (global), a local array, or a private variable/array."""

    name: str
    space: str            # "global", "local", "private"
    unit: ScalarType | VectorType
    size: int             # in units
    role: str = "temp"    # "input", "output", "temp", "scalar"
    volatile: bool = False
    used: bool = field(default=False)
    align: int = 0        # bytes; local arrays read or written as vectors are aligned
    #: a small input in constant memory passed to the kernel by value, as a struct of its
    #: elements (``name.v[i]``; codegen_patterns.to_constant)
    by_value: bool = False

    @property
    def is_var(self) -> bool:
        """A private scalar/vector variable (not an array)."""
        return self.space == "private" and self.size == 1


class View:
    type: Type

    def index(self, i) -> View:
        raise CodegenLimit(f"{type(self).__name__} of type {self.type} is not an array")

    def get(self, k: int) -> View:
        raise CodegenLimit(f"a value of type {self.type} is not a tuple")

    def load(self) -> str:
        raise CodegenLimit(f"a value of type {self.type} cannot be read as one value")

    def store(self, value: str, vtype: Type) -> str:
        raise CodegenLimit(f"cannot write to a view of type {self.type}")

    def memory(self) -> Memory | None:
        """The memory this view reads or writes, found through its first element."""
        v: View = self
        for _ in range(64):
            if isinstance(v, MemView):
                return v.mem
            t = v.type
            if isinstance(t, ArrayType):
                v = v.index(Idx.of(0))
            elif isinstance(t, TupleType):
                v = v.get(0)
            elif isinstance(v, (VecElem, Component)):
                return v.base_memory()
            else:
                return None
        return None


def _cast(value: str, vtype: Type, target: Type) -> str:
    if isinstance(target, VectorType) and isinstance(vtype, ScalarType):
        return f"({target.c_name()})({value})"
    return value


@dataclass(eq=False)
class MemView(View):
    mem: Memory
    type: Type
    offset: Idx

    def index(self, i) -> View:
        t = self.type
        if not isinstance(t, ArrayType):
            return super().index(i)
        return MemView(self.mem, t.elem, self.offset + Idx.of(i) * units(t.elem))

    def ref(self) -> str:
        self.mem.used = True
        if self.mem.is_var:
            return self.mem.name
        if self.mem.by_value:
            return f"{self.mem.name}.v[{self.offset.c()}]"
        return f"{self.mem.name}[{self.offset.c()}]"

    def load(self) -> str:
        if isinstance(self.type, ArrayType | TupleType):
            return super().load()
        return self.ref()

    def store(self, value: str, vtype: Type) -> str:
        return f"{self.ref()} = {_cast(value, vtype, self.type)};"


@dataclass(eq=False)
class ValueView(View):
    """A pure C expression (a literal, a scalar parameter, a user function's result)."""

    type: Type
    expr: str

    def load(self) -> str:
        return self.expr

    def get(self, k: int) -> View:
        raise CodegenLimit("tuple-valued expressions are not supported by the generator")


@dataclass(eq=False)
class FnView(View):
    """An array whose elements are computed by an index function."""

    type: Type
    fn: Callable[[Idx], View]

    def index(self, i) -> View:
        return self.fn(Idx.of(i))


@dataclass(eq=False)
class TupleView(View):
    type: Type
    parts: tuple[View, ...]

    def get(self, k: int) -> View:
        return self.parts[k]


@dataclass(eq=False)
class VecElem(View):
    """A vector made of ``w`` consecutive elements of an array view of scalars
    (asVector). Lanes adjacent in global or local memory are read and written at
    once: as an element of the memory seen as an array of vectors where the first
    lane's offset is a multiple of ``w`` (OpenCL aligns buffers to at least 128
    bytes; a local array accessed so is declared aligned to the vector's size), with
    vload/vstore elsewhere. Other lanes (private memory, a transposed view) are read
    and written one by one."""

    type: VectorType
    base: View          # array of scalars
    start: Idx

    def _lanes(self) -> list[View]:
        return [self.base.index(self.start + k) for k in range(self.type.width)]

    def base_memory(self) -> Memory | None:
        v = self.base.index(self.start)
        return v.mem if isinstance(v, MemView) else None

    def _adjacent(self) -> MemView | None:
        """The first lane, when every lane follows the one before in global or local memory."""
        lanes = self._lanes()
        first = lanes[0]
        if not (isinstance(first, MemView) and first.mem.space in ("global", "local")):
            return None
        if all(isinstance(v, MemView) and v.mem is first.mem and v.offset == first.offset + k
               for k, v in enumerate(lanes)):
            return first
        return None

    def _vector_ref(self, s: MemView) -> str | None:
        w = self.type.width
        if not s.offset.multiple_of(w):
            return None
        s.mem.align = max(s.mem.align, unit_bytes(self.type))
        q = "volatile " if s.mem.volatile else ""
        return f"(({s.mem.space} {q}{self.type.c_name()}*){s.mem.name})[{(s.offset // w).c()}]"

    def load(self) -> str:
        s = self._adjacent()
        if s is not None:
            s.mem.used = True
            ref = self._vector_ref(s)
            if ref:
                return ref
            if not s.mem.volatile:
                return f"vload{self.type.width}(0, {s.mem.name} + {s.offset.c()})"
        return f"({self.type.c_name()})({', '.join(v.load() for v in self._lanes())})"

    def store(self, value: str, vtype: Type) -> str:
        s = self._adjacent()
        vec = _cast(value, vtype, self.type)
        if s is not None:
            s.mem.used = True
            ref = self._vector_ref(s)
            if ref:
                return f"{ref} = {vec};"
            if not s.mem.volatile:
                return f"vstore{self.type.width}({vec}, 0, {s.mem.name} + {s.offset.c()});"
        lanes = self._lanes()
        if isinstance(vtype, ScalarType):
            return " ".join(v.store(value, vtype) for v in lanes)
        # the value is computed once, in a variable local to the block
        stores = " ".join(v.store(f"v_.s{k:x}", self.type.scalar) for k, v in enumerate(lanes))
        return f"{{ {self.type.c_name()} v_ = {value}; {stores} }}"


@dataclass(eq=False)
class Component(View):
    """Lane ``k`` of a vector view (asScalar)."""

    type: ScalarType
    vec: View
    k: Idx

    def base_memory(self) -> Memory | None:
        return self.vec.memory() if not isinstance(self.vec, ValueView) else None

    def _ref(self) -> str:
        if self.k.is_const:
            inner = self.vec.load()
            return f"{inner}.s{self.k.const:x}"
        if isinstance(self.vec, MemView):
            m = self.vec.mem
            m.used = True
            w = self.vec.type.width
            sp = m.space
            base = f"&{m.name}" if m.is_var else m.name
            off = Idx.of(0) if m.is_var else self.vec.offset * w
            return f"(({sp} {self.type.c_name()}*){base})[{(off + self.k).c()}]"
        raise CodegenLimit("a vector lane with a variable index needs the vector in memory")

    def load(self) -> str:
        return self._ref()

    def store(self, value: str, vtype: Type) -> str:
        return f"{self._ref()} = {value};"


def layout_view(name: str, args: tuple, v: View, t_in: Type, t_out: Type) -> View:
    """The view of a layout pattern applied to view ``v`` (types before and after)."""
    if name in ("id", "reorder"):
        return v
    if name == "split":
        k = int(args[0])
        inner = t_out.elem
        return FnView(t_out, lambda i: FnView(inner, lambda j, i=i: v.index(i * k + j)))
    if name == "join":
        k = int(t_in.elem.size)
        return FnView(t_out, lambda i: v.index(i // k).index(i % k))
    if name == "transpose":
        inner = t_out.elem
        return FnView(t_out, lambda i: FnView(inner, lambda j, i=i: v.index(j).index(i)))
    if name == "reorderStride":
        s = int(args[0])
        c = int(t_in.size) // s
        return FnView(t_out, lambda i: v.index((i % c) * s + i // c))
    if name == "get":
        return v.get(args[0])
    if name == "asVector":
        vt = t_out.elem
        w = vt.width
        return FnView(t_out, lambda i: VecElem(vt, v, i * w))
    if name == "asScalar":
        w = t_in.elem.width
        st = t_out.elem
        return FnView(t_out, lambda i: Component(st, v.index(i // w), i % w))
    if name == "slide":
        step = int(args[1])
        inner = t_out.elem
        return FnView(t_out, lambda i: FnView(inner, lambda j, i=i: v.index(i * step + j)))
    if name == "pad":
        left = int(args[0])
        n = int(t_in.size)
        return FnView(t_out, lambda i: _clamped(v, i, left, n))
    if name in ("innerSplit", "innerJoin"):
        base = "split" if name == "innerSplit" else "join"
        rank = 0
        t = t_in
        while isinstance(t, ArrayType):
            rank, t = rank + 1, t.elem
        if rank - (1 if base == "split" else 2) == 0:
            return layout_view(base, args, v, t_in, t_out)
        return FnView(t_out, lambda i: layout_view(name, args, v.index(i), t_in.elem, t_out.elem))
    raise CodegenLimit(f"'{name}' is not a layout pattern")


def _clamped(v: View, i: Idx, left: int, n: int) -> View:
    """Padding repeats the edge values; indices near the border are clamped in C."""
    lo, hi = (i + (-left)).bounds()
    if lo >= 0 and hi <= n - 1:
        return v.index(i + (-left))
    clamp = ClampIdx(i, left, n)
    return v.index(clamp.as_idx())


@dataclass
class ClampIdx:
    i: Idx
    left: int
    n: int

    def as_idx(self) -> Idx:
        from mcl.lift.arith import Var
        text = f"clamp((int)({self.i.c()}) - {self.left}, 0, {self.n - 1})"
        return Idx.of(Var(text, self.n))


def inverse_out(name: str, args: tuple, out: View, t_in: Type, t_out: Type) -> View | None:
    """Where the argument of a layout pattern must be written so that the pattern's
    result lands in ``out`` (None: the argument cannot be written through it)."""
    if name in ("id",):
        return out
    if name == "map" and isinstance(args[0], object):
        return _inverse_map(args[0], out, t_in, t_out)
    if name == "join":
        return layout_view("split", (t_in.elem.size,), out, t_out, t_in)
    if name == "split":
        return layout_view("join", (), out, t_out, t_in)
    if name == "transpose":
        return layout_view("transpose", (), out, t_out, t_in)
    if name == "asScalar":
        return layout_view("asVector", (t_in.elem.width,), out, t_out, t_in)
    if name == "asVector":
        return layout_view("asScalar", (), out, t_out, t_in)
    if name == "reorderStride":
        s = int(args[0])
        c = int(t_in.size) // s
        return layout_view("reorderStride", (sympy.Integer(c),), out, t_out, t_in)
    if name == "pad":
        # element i of the argument is element i + left of the result, if that exists:
        # the elements padding would drop (pad with a negative amount crops) are not
        # written, their stores guarded where the index is not known to be in range
        left, m = int(args[0]), int(t_out.size)
        return FnView(t_in, lambda i: _in_range(out, Idx.of(i) + left, m))
    return None


def _in_range(out: View, i: Idx, n: int) -> View:
    """``out.index(i)`` for a store that happens only where 0 <= i < n."""
    lo, hi = i.bounds()
    conds = ([f"{i.c()} >= 0"] if lo < 0 else []) + ([f"{i.c()} < {n}"] if hi >= n else [])
    if lo >= n or hi < 0:
        return Guarded(out.index(Idx.of(0)), ("0",))
    return Guarded(out.index(i), tuple(conds)) if conds else out.index(i)


@dataclass(eq=False)
class Guarded(View):
    """A view written only where its conditions hold (an element past the end of a
    cropped result): its stores are ``if (...) ...;``. Reading it is not allowed."""

    inner: View
    conds: tuple[str, ...]

    @property
    def type(self) -> Type:
        return self.inner.type

    def index(self, i) -> View:
        return Guarded(self.inner.index(i), self.conds)

    def get(self, k: int) -> View:
        return Guarded(self.inner.get(k), self.conds)

    def store(self, value: str, vtype: Type) -> str:
        return f"if ({' && '.join(self.conds)}) {{ {self.inner.store(value, vtype)} }}"

    def memory(self) -> Memory | None:
        return self.inner.memory()


def _inverse_map(f, out: View, t_in: Type, t_out: Type) -> View | None:
    """Inverse of ``map(layout)`` (e.g. ``map(join)``): the inverse of each element."""
    from mcl.lift.ir import Compose, Prim
    funs = list(f.funs) if isinstance(f, Compose) else [f]
    if not all(isinstance(g, Prim) and g.name in ("join", "split", "transpose",
                                                    "reorderStride", "asScalar", "asVector", "pad")
               for g in funs):
        return None
    from mcl.lift.typecheck import fun_type

    def elem_out(i):
        o = out.index(i)
        # types of the intermediate values, innermost (first applied) first
        ts = [t_in.elem]
        for g in reversed(funs):
            ts.append(fun_type(g, [ts[-1]]))
        for g, (ti, to) in zip(funs, reversed(list(zip(ts[:-1], ts[1:], strict=True))),
                               strict=True):
            o = inverse_out(g.name, g.args, o, ti, to)
            if o is None:
                raise CodegenLimit("no inverse")
        return o
    return FnView(t_in, elem_out)
