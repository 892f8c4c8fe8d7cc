"""OpenCL code generation for fully lowered Lift expressions (seed 001, section
"code generation"): a program's chain of kernels and their launch plan. The code of
each pattern inside a kernel is :mod:`mcl.lift.codegen_patterns`; which expressions
are lowered enough, :mod:`mcl.lift.lowered`.

Every top-level ``mapGlb``/``mapWrg`` is one kernel; a program whose chain holds
several (e.g. a reduction's two stages) gives several kernels run in order. Sizes
of memory come from the types; a launch plan says how to run the kernels. A
work-group's size is the largest extent of the mapLcls of each dimension, those
that only copy (``mapLcl(1, mapLcl(0, id))``: a tile with halo into local memory)
counting only in a dimension without others: there each work-item copies several
elements."""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy

from mcl.diagnostics import McplError, error
from mcl.lift.arith import Idx
from mcl.lift.codegen_patterns import _Loop, _PatternEmission
from mcl.lift.ir import (
    LAYOUT,
    Call,
    Expr,
    Fun,
    Lambda,
    Param,
    Prim,
    Program,
    UserFun,
    bind_sizes,
    walk,
)
from mcl.lift.lowered import check_lowered, check_nesting, is_layout_fun, not_lowered
from mcl.lift.printer import show
from mcl.lift.typecheck import fun_type, type_of
from mcl.lift.types import ArrayType, ScalarType, Type, VectorType, free_sizes
from mcl.lift.views import (
    CodegenLimit,
    FnView,
    Memory,
    MemView,
    TupleView,
    View,
    inverse_out,
    layout_view,
    unit_type,
    units,
)

#: the work-group size of mapGlb kernels where Options.local_size gives none
DEFAULT_LOCAL_SIZE = 256


@dataclass
class Options:
    """Choices the generator does not make itself (they come from the search)."""

    warp_size: int = 32
    max_work_group: int = 1024
    local_size: int | None = None       # for kernels with mapGlb only
    unroll: int = 16                    # sequential loops up to this trip count are unrolled
    local_memory: int | None = None     # bytes; None: no check
    #: bytes of private arrays one work-item may declare: a GPU thread has at most 255
    #: registers, larger arrays live in slow off-chip memory, and on a CPU the arrays
    #: of a whole work-group are on one thread's stack (a candidate with 16 KB per
    #: work-item overflowed PoCL's). None: no check.
    private_memory: int | None = 4096


@dataclass
class Kernel:
    name: str
    source: str                         # the kernel function only
    args: list[str]                     # buffer / scalar names in argument order
    global_size: tuple[int, ...]
    local_size: tuple[int, ...]
    local_bytes: int = 0
    #: a kernel of mapGlb loops: their extents by dimension (the work-items its launch
    #: needs, whatever the work-group size); empty for a kernel of work-groups (mapWrg)
    extents: tuple[int, ...] = ()


@dataclass
class Buffer:
    name: str
    dtype: str                          # numpy dtype name of the unit's scalar
    count: int                          # scalars
    role: str                           # input, output, temp, scalar
    #: an input passed by value, as a struct of its elements (mcl.opencl.by_value.packed)
    by_value: bool = False
    #: the numpy shape of an input, a scalar (``()``) or the output, as its Lift type
    #: says (outer array first, a vector's lanes last); None for a temporary
    shape: tuple[int, ...] | None = None


@dataclass
class Generated:
    """OpenCL source for a program and the plan to run it."""

    source: str
    kernels: list[Kernel]
    buffers: dict[str, Buffer]
    inputs: list[str]
    output: str
    output_shape: tuple[int, ...]

    def plan(self) -> dict:
        return {"kernels": [{"name": k.name, "args": k.args, "global": list(k.global_size),
                             "local": list(k.local_size), "local_bytes": k.local_bytes}
                            for k in self.kernels],
                "buffers": {b.name: {"dtype": b.dtype, "count": b.count, "role": b.role,
                                     **({"shape": list(b.shape)} if b.shape is not None
                                        else {}),
                                     **({"by_value": True} if b.by_value else {})}
                            for b in self.buffers.values()},
                "inputs": self.inputs, "output": self.output,
                "output_shape": list(self.output_shape)}



@dataclass
class _KernelState:
    name: str
    lines: list[str] = field(default_factory=list)
    indent: int = 1
    loops: list[_Loop] = field(default_factory=list)
    local_memories: list[Memory] = field(default_factory=list)
    local_bytes: int = 0
    private_bytes: int = 0
    probe: bool = False               # the first pass (launch sizes unknown, code dropped)
    memories: list[Memory] = field(default_factory=list)
    lcl_extents: dict[int, int] = field(default_factory=dict)
    # extents of mapLcls that only copy (toLocal(mapLcl(1, mapLcl(0, id))) of a tile
    # with halo): they size the work-group only in a dimension without other mapLcls,
    # else each work-item copies several elements (a loop strided by the group size)
    copy_extents: dict[int, int] = field(default_factory=dict)
    wrg_extents: dict[int, int] = field(default_factory=dict)
    glb_extents: dict[int, int] = field(default_factory=dict)
    warp_extent: int = 0
    local_size: tuple[int, ...] | None = None
    global_threads: tuple[int, ...] | None = None
    group_count: tuple[int, ...] | None = None
    force_space: list[str] = field(default_factory=list)
    output: Memory | None = None


class Generator(_PatternEmission):
    def __init__(self, options: Options | None = None):
        self.opt = options or Options()
        self.counter = 0
        self.userfuns: dict[str, str] = {}     # C name -> definition
        self.buffers: dict[str, Memory] = {}
        self.k: _KernelState | None = None
        self.kernels: list[Kernel] = []
        self.types: dict[Param, Type] = {}

    # ------------------------------------------------------------------ utilities
    def fresh(self, base: str) -> str:
        self.counter += 1
        return f"{base}_{self.counter}"

    def emit(self, line: str) -> None:
        self.k.lines.append("    " * self.k.indent + line)

    def type_env(self, env: dict) -> dict:
        return {p: v.type for p, v in env.items()}

    # ------------------------------------------------------------------ program
    def program(self, prog: Program, sizes: dict) -> Generated:
        prog = bind_sizes(prog, sizes)
        for p in prog.params:
            missing = free_sizes(p.type)
            if missing:
                names = ", ".join(sorted(str(s) for s in missing))
                raise McplError(error("lift-size", f"the size(s) {names} of '{p.name}' have no "
                                                   "value; the generator needs numbers",
                                      p.span, hint=f"give them, e.g. --size {names.split(',')[0]}"
                                                   "=1024"))
        body = prog.body.body
        for _, n in walk(body):
            if isinstance(n, Prim):
                for a in n.args:
                    if isinstance(a, sympy.Basic) and not sympy.sympify(a).is_number:
                        raise McplError(error("lift-size", f"{n.name}: the parameter {a} has no "
                                                           "value", n.span))
        check_lowered(body)
        check_nesting(body)
        env: dict[Param, View] = {}
        inputs = []
        for p in prog.params:
            if isinstance(p.type, ArrayType):
                mem = Memory(p.name, "global", unit_type(p.type), units(p.type), "input")
                self.buffers[p.name] = mem
                env[p] = MemView(mem, p.type, Idx.of(0))
            elif isinstance(p.type, ScalarType):
                mem = Memory(p.name, "private", p.type, 1, "scalar")
                self.buffers[p.name] = mem
                env[p] = MemView(mem, p.type, Idx.of(0))
            else:
                raise CodegenLimit(f"parameter '{p.name}' of type {p.type} is not supported")
            inputs.append(p.name)
        self.types = {p: p.type for p in prog.params}
        rtype = type_of(body, self.types)
        out_mem = Memory("out", "global", unit_type(rtype), units(rtype), "output")
        self.buffers["out"] = out_mem
        out = MemView(out_mem, rtype, Idx.of(0))
        result = self.top(body, env, out)
        if result is not out:
            if not any(isinstance(n, UserFun) for _, n in walk(body)):
                raise not_lowered(body, "the program computes nothing: it only rearranges "
                                        "its inputs (a view: transpose, split, map(fun(v) => "
                                        "v), ...), for which Lift writes no kernel",
                                  hint="to copy the rearranged array, apply a user function "
                                       "to each element: userfun copy(v: float): float = v, "
                                       "then map(copy) (map(map(copy)) for a matrix)")
            raise not_lowered(body, "the program's result is not computed by a kernel "
                                    "(the outermost pattern must be a mapGlb or mapWrg)")
        shapes = {p.name: _numpy_shape(p.type) for p in prog.params}
        shapes["out"] = shape = _numpy_shape(rtype)
        header = "\n".join(self.userfuns.values())
        source = "\n\n".join([header] + [k.source for k in self.kernels]).strip() + "\n"
        buffers = {m.name: Buffer(m.name, m.unit.dtype if isinstance(m.unit, ScalarType)
                                  else m.unit.scalar.dtype,
                                  m.size * (m.unit.width if isinstance(m.unit, VectorType) else 1),
                                  m.role, m.by_value, shapes.get(m.name))
                   for m in self.buffers.values()}
        big = [b for b in buffers.values() if b.count > _MAX_ELEMENTS]
        if big:     # the generated kernels index with 32-bit integers
            raise McplError(error(
                "lift-size", f"'{big[0].name}' holds {big[0].count:,} elements at these "
                f"sizes; the generated kernels index with 32-bit integers, up to "
                f"{_MAX_ELEMENTS:,}", hint="choose smaller sizes"))
        return Generated(source, self.kernels, buffers, inputs, "out", shape)

    # ------------------------------------------------------------------ top level
    def top(self, e: Expr, env: dict, out: View | None) -> View:
        """Top-level chain: layout patterns are views over buffers, parallel maps
        (possibly wrapped in a lambda) are kernels."""
        if isinstance(e, Param):
            return env[e]
        if isinstance(e, Call):
            f = e.fun
            tenv = self.type_env(env)
            if isinstance(f, Prim) and (f.name in LAYOUT + ("id",) or (
                    f.name == "map" and is_layout_fun(f.args[0]))) and len(e.args) == 1:
                t_in = type_of(e.args[0], tenv)
                t_out = fun_type(f, [t_in], tenv)
                sub_out = inverse_out(f.name, f.args, out, t_in, t_out) if out is not None \
                    else None
                v = self.top(e.args[0], env, sub_out)
                if sub_out is not None and v is sub_out:
                    return out
                if f.name == "map":
                    return self.map(f, v, env, None)
                return layout_view(f.name, f.args, v, t_in, t_out)
            if isinstance(f, Prim) and f.name == "zip":
                parts = [self.top(a, env, None) for a in e.args]
                t = type_of(e, tenv)
                return FnView(t, lambda i: TupleView(t.elem, tuple(p.index(i) for p in parts)))
            args = [self.top(a, env, None) for a in e.args]
            if self._has_kernel_map(f):
                return self.kernel(f, args, e, out, env)
            if isinstance(f, Lambda):
                inner = dict(env)
                inner.update(zip(f.params, args, strict=True))
                return self.top(f.body, inner, out)
            raise not_lowered(e, f"'{show(f)[:60]}' at the top level is not inside a kernel",
                              hint="wrap the computation in a mapGlb or mapWrg")
        raise not_lowered(e, "a literal cannot be the program's result")

    def _has_kernel_map(self, f: Fun) -> bool:
        return any(isinstance(n, Prim) and n.name in ("mapGlb", "mapWrg") for _, n in walk(f))

    # ------------------------------------------------------------------ kernels
    def kernel(self, f: Fun, args: list[View], call: Call, out: View | None,
               env: dict) -> View:
        arg_types = [a.type for a in args]
        rtype = fun_type(f, arg_types, self.types)
        if out is None:
            mem = Memory(self.fresh("tmp"), "global", unit_type(rtype), units(rtype), "temp")
            self.buffers[mem.name] = mem
            out = MemView(mem, rtype, Idx.of(0))
        name = f"kernel_{len(self.kernels)}"
        saved_counter = self.counter
        # first pass: learn the extents of the maps, which fix the launch sizes
        probe = _KernelState(name, probe=True)
        self.k = probe
        self._kernel_body(f, args, out, env)
        local, groups, glob = self._launch(probe)
        self.counter = saved_counter
        for m in self.buffers.values():
            m.used = False
        state = _KernelState(name, local_size=local, group_count=groups, global_threads=glob)
        self.k = state
        self._kernel_body(f, args, out, env)
        params = []
        names = []
        for m in self.buffers.values():
            if not m.used:
                continue
            names.append(m.name)
            if m.role == "scalar":
                params.append(f"{m.unit.c_name()} {m.name}")
            elif m.by_value:
                params.append(f"const {_value_struct(m)} {m.name}")
                self.userfuns.setdefault(_value_struct(m), (
                    f"typedef struct {{ {m.unit.c_name()} v[{m.size}]; }} {_value_struct(m)};"))
            elif m.role == "input" and m.space == "constant":
                params.append(f"constant {m.unit.c_name()}* restrict {m.name}")
            elif m.role == "input":
                params.append(f"const global {m.unit.c_name()}* restrict {m.name}")
            else:
                params.append(f"global {m.unit.c_name()}* {m.name}")
        gsize = tuple(g * lo for g, lo in zip(groups, local, strict=True)) if groups else glob
        attr = f"__attribute__((reqd_work_group_size({', '.join(str(x) for x in local)}"
        attr += ", 1" * (3 - len(local)) + ")))"
        src = [f"kernel {attr}\nvoid {name}({', '.join(params)}) {{"]
        src += ["    " + _local_declaration(m) for m in state.local_memories]
        src += state.lines
        src.append("}")
        extents = () if groups else tuple(probe.glb_extents.get(d, 1) for d in range(len(local)))
        self.kernels.append(Kernel(name, "\n".join(src), names, gsize, local, state.local_bytes,
                                   extents))
        if self.opt.local_memory is not None and state.local_bytes > self.opt.local_memory:
            raise CodegenLimit(f"{name} needs {state.local_bytes} bytes of local memory, the "
                               f"device has {self.opt.local_memory}")
        self.k = None
        return out

    def _kernel_body(self, f: Fun, args: list[View], out: View, env: dict) -> None:
        r = self.apply(f, args, env, out)
        self.materialize(r, out)

    def _launch(self, probe: _KernelState):
        dims = 1 + max([0, *probe.lcl_extents, *probe.copy_extents, *probe.wrg_extents,
                        *probe.glb_extents])
        if probe.wrg_extents:
            local = []
            for d in range(dims):
                e = probe.lcl_extents.get(d, probe.copy_extents.get(d, 1))
                if d == 0 and probe.warp_extent:
                    e = max(e, probe.warp_extent * self.opt.warp_size)
                local.append(max(1, min(e, self.opt.max_work_group)))
            while _prod(local) > self.opt.max_work_group:
                i = max(range(dims), key=lambda j: local[j])
                local[i] //= 2
            groups = [probe.wrg_extents.get(d, 1) for d in range(dims)]
            return tuple(local), tuple(groups), None
        ls = self.opt.local_size or DEFAULT_LOCAL_SIZE
        local = []
        glob = []
        for d in range(dims):
            e = probe.glb_extents.get(d, 1)
            lo = max(1, min(ls if d == 0 else 1, e))
            local.append(lo)
            glob.append(-(-e // lo) * lo)
        return tuple(local), None, tuple(glob)


def _numpy_shape(t: Type) -> tuple[int, ...]:
    """The shape of a numpy array holding a value of type ``t`` (sizes bound): its
    arrays' lengths, outer first, then a vector's lanes."""
    shape = []
    while isinstance(t, ArrayType):
        shape.append(int(t.size))
        t = t.elem
    if isinstance(t, VectorType):
        shape.append(t.width)
    return tuple(shape)


def _value_struct(m: Memory) -> str:
    """The C type of an input passed by value: a struct of its elements."""
    return f"lift_value_{m.name}"


def _prod(xs) -> int:
    r = 1
    for x in xs:
        r *= x
    return r


def _local_declaration(m: Memory) -> str:
    q = "volatile " if m.volatile else ""
    aligned = f" __attribute__((aligned({m.align})))" if m.align else ""
    return f"local {q}{m.unit.c_name()} {m.name}[{m.size}]{aligned};"


#: the most elements an array of a generated kernel holds (its indices are 32-bit ints)
_MAX_ELEMENTS = 2 ** 31 - 1


def generate(prog: Program, sizes: dict, options: Options | None = None) -> Generated:
    """OpenCL kernels and a launch plan for a fully lowered program at concrete sizes
    (``sizes`` maps size names to ints). Raises McplError (``lift-not-lowered``,
    ``lift-size``, ``lift-codegen``) for expressions it cannot generate."""
    if options is not None and options.local_size is not None and options.local_size < 1:
        raise McplError(error("lift-codegen", f"work-group size {options.local_size}: give 1 "
                                              "or more work-items"))
    from mcl.lift.arguments import program_argument, sizes_argument
    prog = program_argument(prog, "generate")
    sizes = sizes_argument(sizes, "generate")
    try:
        return Generator(options).program(prog, {str(k): v for k, v in sizes.items()})
    except CodegenLimit as e:
        raise McplError(error("lift-codegen", f"cannot generate OpenCL: {e}")) from None
