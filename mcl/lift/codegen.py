"""OpenCL code generation for fully lowered Lift expressions (seed 001, section
"code generation"): pattern by pattern, with no optimisation decisions of its own.

* maps become loops over ids (or a single id when the launch covers the array),
  followed by a barrier for ``mapLcl``/``mapWarp`` and none for ``mapLane``;
* ``reduceSeq`` is an accumulator loop in a private variable; reading
  ``prefetch(g) $ xs`` it computes g of the next element during each step;
* split/join/transpose/reorderStride/zip/asVector/... are views (``views.py``);
  vectors of adjacent elements are read and written at once (``VecElem``);
* ``toLocal``/``toGlobal``/``toPrivate`` choose where results are allocated;
  ``toLocal(transpose o ... o mapLcl(f))`` allocates the layout's result, which
  the map writes through;
* sizes of memory come from the types; a launch plan says how to run it. A
  work-group's size is the largest extent of the mapLcls of each dimension, those
  that only copy (``mapLcl(1, mapLcl(0, id))``: a tile with halo into local memory)
  counting only in a dimension without others: there each work-item copies
  several elements.

Every top-level ``mapGlb``/``mapWrg`` is one kernel; a program whose chain holds
several (e.g. a reduction's two stages) gives several kernels run in order."""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy

from mcl.diagnostics import McplError, error
from mcl.lift import cexpr as C
from mcl.lift.arith import Idx, Var
from mcl.lift.ir import (
    ALL_MAPS,
    LAYOUT,
    PATTERNS,
    Call,
    Compose,
    Expr,
    Fun,
    Lambda,
    Literal,
    Node,
    Param,
    Prim,
    Program,
    UserFun,
    bind_sizes,
    walk,
)
from mcl.lift.printer import show
from mcl.lift.typecheck import fun_type, type_of
from mcl.lift.types import (
    ArrayType,
    ScalarType,
    TupleType,
    Type,
    VectorType,
    free_sizes,
)
from mcl.lift.views import (
    CodegenLimit,
    FnView,
    Memory,
    MemView,
    TupleView,
    ValueView,
    View,
    inverse_out,
    layout_view,
    unit_bytes,
    unit_type,
    units,
)


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


@dataclass
class Buffer:
    name: str
    dtype: str                          # numpy dtype name of the unit's scalar
    count: int                          # scalars
    role: str                           # input, output, temp, scalar


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
                "buffers": {b.name: {"dtype": b.dtype, "count": b.count, "role": b.role}
                            for b in self.buffers.values()},
                "inputs": self.inputs, "output": self.output,
                "output_shape": list(self.output_shape)}


#: bytes of constant memory an input read through ``toConstant`` may have: the least
#: CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE OpenCL allows (NVIDIA GPUs and PoCL have it)
CONSTANT_BYTES = 64 * 1024


class NotLowered(McplError):
    """The expression still contains patterns the generator does not know."""


def not_lowered(node: Node, message: str, hint: str | None = None) -> NotLowered:
    return NotLowered(error("lift-not-lowered", message, getattr(node, "span", None), hint))


# ----------------------------------------------------------------------------- checks

def _is_layout_fun(f: Fun) -> bool:
    """A function that only rearranges data (it can be a view)."""
    for _, n in walk(f):
        if isinstance(n, UserFun):
            return False
        if isinstance(n, Prim) and n.name not in LAYOUT + ("id", "map"):
            return False
    return True


def check_lowered(e: Node) -> None:
    """Raise NotLowered naming the first pattern the generator cannot handle."""
    for _, n in walk(e):
        if isinstance(n, Prim):
            spec = PATTERNS[n.name]
            if spec.lowered:
                continue
            if n.name == "map" and _is_layout_fun(n.args[0]):
                continue
            hint = {"map": "lower it with a map rule (mapGlb, mapWrg, mapLcl, mapSeq, ...)",
                    "reduce": "lower it to reduceSeq (inside a mapLcl/mapGlb) or split it "
                              "into partial reductions first",
                    "partRed": "rewrite it with the reduction rules (split, iterate, reduce)",
                    "reorder": "lower it to reorderStride or id"}.get(n.name)
            raise not_lowered(n, f"'{n.name}' is not fully lowered: the code generator only "
                                 f"knows hardware patterns", hint)


def _check_nesting(e: Node) -> None:
    """The lowering post-conditions of seed 001 (figure 'Map'), checked again here."""
    def go(n: Node, ctx: tuple[str, ...]):
        if isinstance(n, Prim) and n.name in ALL_MAPS:
            k = n.name
            bad = None
            same = f"{k}{n.dim}" in ctx
            if k == "mapWrg" and (same or "mapGlb" in ctx):
                bad = "mapWrg inside another mapWrg or a mapGlb"
            elif k == "mapGlb" and (same or any(c in ctx for c in ("mapWrg", "mapLcl"))):
                bad = "mapGlb inside another parallel map"
            elif k == "mapLcl" and ("mapWrg" not in ctx or same or any(
                    c in ctx for c in ("mapWarp", "mapLane", "mapSeq"))):
                bad = "mapLcl outside a mapWrg (or inside mapWarp/mapLane/mapSeq)"
            elif k == "mapWarp" and ("mapWrg" not in ctx or "mapLcl" in ctx or "mapWarp" in ctx):
                bad = "mapWarp outside a mapWrg or inside a mapLcl"
            elif k == "mapLane" and "mapWarp" not in ctx:
                bad = "mapLane outside a mapWarp"
            if bad:
                raise not_lowered(n, f"invalid nesting of parallel maps: {bad}",
                                  hint="maps follow the OpenCL hierarchy: mapGlb, or mapWrg "
                                       "containing mapLcl or mapWarp(mapLane)")
            ctx = ctx + (k, f"{k}{n.dim}")
        for c in _kids(n):
            go(c, ctx)
    go(e, ())


def _kids(n: Node) -> list[Node]:
    from mcl.lift.ir import children
    return children(n)


# ----------------------------------------------------------------------------- generator

@dataclass
class _Loop:
    kind: str
    var: Idx
    extent: int
    dim: int = 0
    writes: Memory | None = None      # where a parallel map's results go


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


class Generator:
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
        _check_nesting(body)
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
            raise not_lowered(body, "the program's result is not computed by a kernel "
                                    "(the outermost pattern must be a mapGlb or mapWrg)")
        shape = []
        t = rtype
        while isinstance(t, ArrayType):
            shape.append(int(t.size))
            t = t.elem
        if isinstance(t, VectorType):
            shape.append(t.width)
        header = "\n".join(self.userfuns.values())
        source = "\n\n".join([header] + [k.source for k in self.kernels]).strip() + "\n"
        buffers = {m.name: Buffer(m.name, m.unit.dtype if isinstance(m.unit, ScalarType)
                                  else m.unit.scalar.dtype,
                                  m.size * (m.unit.width if isinstance(m.unit, VectorType) else 1),
                                  m.role) for m in self.buffers.values()}
        return Generated(source, self.kernels, buffers, inputs, "out", tuple(shape))

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
                    f.name == "map" and _is_layout_fun(f.args[0]))) and len(e.args) == 1:
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
        self.kernels.append(Kernel(name, "\n".join(src), names, gsize, local, state.local_bytes))
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
        ls = self.opt.local_size or 256
        local = []
        glob = []
        for d in range(dims):
            e = probe.glb_extents.get(d, 1)
            lo = max(1, min(ls if d == 0 else 1, e))
            local.append(lo)
            glob.append(-(-e // lo) * lo)
        return tuple(local), None, tuple(glob)

    # ------------------------------------------------------------------ expressions
    def gen(self, e: Expr, env: dict, out: View | None) -> View:
        if isinstance(e, Param):
            if e not in env:
                raise CodegenLimit(f"parameter '{e.name}' is not bound")
            return env[e]
        if isinstance(e, Literal):
            return ValueView(e.type, C.to_c(C.CNum(e.text)))  # array literals fill
        if isinstance(e, Call):
            f = e.fun
            if isinstance(f, Prim) and f.name == "reduceSeq" and _prefetched(e.args[0]):
                return self.reduce_seq(f, self._pipeline(e.args[0], env), env, out)
            if isinstance(f, Prim) and (f.name in LAYOUT + ("id",) or (
                    f.name == "map" and _is_layout_fun(f.args[0]))) and len(e.args) == 1 \
                    and out is not None:
                tenv = self.type_env(env)
                t_in = type_of(e.args[0], tenv)
                t_out = fun_type(f, [t_in], tenv)
                sub_out = inverse_out(f.name, f.args, out, t_in, t_out)
                if sub_out is not None:
                    v = self.gen(e.args[0], env, sub_out)
                    if v is sub_out:
                        return out
                    if f.name == "map":
                        return self.map(f, v, env, None)
                    return layout_view(f.name, f.args, v, t_in, t_out)
            return self.apply(f, self._arguments(e.args, env), env, out)
        raise TypeError(e)

    def _arguments(self, exprs: tuple[Expr, ...], env: dict) -> list[View]:
        """The arguments of one call. They are independent (none reads what another
        writes), so the barrier ending one argument's code (after a mapLcl into
        local memory) waits until the next argument's code is done: one barrier for
        two tiles copied into local memory (Lift's barrier elimination)."""
        views, barriers = [], []
        for a in exprs:
            views.append(self.gen(a, env, None))
            last = self.k.lines[-1].strip() if self.k.lines else ""
            if last.startswith("barrier("):
                self.k.lines.pop()
                if last not in barriers:
                    barriers.append(last)
        for b in barriers:
            self.emit(b)
        return views

    def apply(self, f: Fun, args: list[View], env: dict, out: View | None) -> View:
        if isinstance(f, Lambda):
            if len(f.params) > 1 and len(args) == 1 and isinstance(args[0].type, TupleType):
                args = [args[0].get(i) for i in range(len(f.params))]
            inner = dict(env)
            inner.update(zip(f.params, args, strict=True))
            return self.gen(f.body, inner, out)
        if isinstance(f, Compose):
            holders = [Param(f"_a{i}", type=a.type) for i, a in enumerate(args)]
            body: Expr = Call(f.funs[-1], tuple(holders))
            for g in reversed(f.funs[:-1]):
                body = Call(g, (body,))
            inner = dict(env)
            inner.update(zip(holders, args, strict=True))
            return self.gen(body, inner, out)
        if isinstance(f, UserFun):
            return self.call_userfun(f, args, out, vector=None)
        if isinstance(f, Prim):
            return self.prim(f, args, env, out)
        raise TypeError(f)

    def call_userfun(self, f: UserFun, args: list[View], out: View | None,
                     vector: int | None) -> View:
        cname = self.define_userfun(f, vector)
        flat: list[str] = []
        for a in args:
            flat.extend(_flatten_loads(a))
        rt: Type = f.ret if vector is None else VectorType(f.ret, vector)
        v = ValueView(rt, f"{cname}({', '.join(flat)})")
        if out is not None:
            self.emit(out.store(v.expr, rt))
            return out
        return v

    def define_userfun(self, f: UserFun, vector: int | None) -> str:
        cname = f.name if vector is None else f"{f.name}_v{vector}"
        if cname in self.userfuns:
            return cname
        params: list[str] = []
        names: dict[str, str] = {}

        def flat(name: str, path: str, t: Type):
            if isinstance(t, TupleType):
                for i, s in enumerate(t.elems):
                    flat(f"{name}_{i}", f"{path}._{i}", s)
                return
            if isinstance(t, ArrayType):
                raise CodegenLimit(f"user function '{f.name}' takes an array")
            tt = VectorType(t, vector) if vector and isinstance(t, ScalarType) else t
            params.append(f"{tt.c_name()} {name}")
            names[path] = name

        for pname, ptype in f.params:
            flat(pname, pname, ptype)
        rt = f.ret if vector is None else VectorType(f.ret, vector)
        if vector and C.has_branches(f.body):
            raise CodegenLimit(f"user function '{f.name}' has branches and cannot be vectorised")
        self.userfuns[cname] = (f"{rt.c_name()} {cname}({', '.join(params)}) {{\n"
                                f"    return {C.to_c(f.body, names)};\n}}")
        return cname

    # ------------------------------------------------------------------ patterns
    def prim(self, p: Prim, args: list[View], env: dict, out: View | None) -> View:
        name = p.name
        types = [a.type for a in args]
        tenv = self.type_env(env)
        if name == "mapVec":
            f = p.args[0]
            if not isinstance(f, UserFun):
                raise CodegenLimit("mapVec needs a user function")
            w = next(t.width for t in types if isinstance(t, VectorType))
            return self.call_userfun(f, args, out, vector=w)
        if name == "zip":
            t = fun_type(p, types, tenv)
            return FnView(t, lambda i: TupleView(t.elem, tuple(a.index(i) for a in args)))
        (a,) = args
        if name == "id":
            if isinstance(a.type, ScalarType | VectorType) and out is not None:
                self.emit(out.store(a.load(), a.type))
                return out
            return a
        if name in LAYOUT:
            t_out = fun_type(p, types, tenv)
            return layout_view(name, p.args, a, a.type, t_out)
        if name in ALL_MAPS:
            return self.map(p, a, env, out)
        if name == "reduceSeq":
            return self.reduce_seq(p, a, env, out)
        if name in ("prefetch", "prefetchLocal"):
            raise not_lowered(p, f"{name} computes the elements of a reduceSeq's input ahead "
                                  "of the reduction: it must be that input (or zipped into "
                                  "it)")
        if name == "iterate":
            cur = a
            for i in range(p.args[0]):
                cur = self.apply(p.args[1], [cur], env, out if i == p.args[0] - 1 else None)
            return cur
        if name == "toConstant":
            return self.to_constant(p, a, env)
        if name in ("toLocal", "toGlobal", "toPrivate"):
            space = name[2:].lower()
            mem = out.memory() if out is not None else None
            if mem is not None and mem.space == space:
                # the consumer's memory is already in the requested space
                return self.apply(p.args[0], [a], env, out)
            f = p.args[0]
            if isinstance(f, Compose) and _is_layout_fun(f.funs[0]):
                # toLocal(transpose o ... o mapLcl(g)): the memory holds f's result and
                # the layout patterns after the map say where the map writes its results
                self.k.force_space.append(space)
                dst = self.allocate(fun_type(f, [a.type], tenv), a)
                self.k.force_space.pop()
                return self.materialize(self.apply(f, [a], env, dst), dst)
            self.k.force_space.append(space)
            try:
                return self.apply(p.args[0], [a], env, None)
            finally:
                self.k.force_space.pop()
        raise not_lowered(p, f"the code generator does not know '{name}'")

    def to_constant(self, p: Prim, a: View, env: dict) -> View:
        """``toConstant(f) $ x``: ``x`` an input of the program, passed to the kernel as
        a ``constant`` pointer (read through the constant cache: one read serves every
        work-item of a warp that reads the same element, a fixed index becomes an
        operand of the instruction); ``f`` only rearranges it (a view)."""
        f = p.args[0]
        mem = a.memory()
        if mem is None or mem.role != "input" or not _is_layout_fun(f):
            raise CodegenLimit("toConstant applies to an input of the program (through layout "
                               "patterns only): constant memory is read-only in a kernel")
        if mem.size * unit_bytes(mem.unit) > CONSTANT_BYTES:
            raise CodegenLimit(f"'{mem.name}' has {mem.size * unit_bytes(mem.unit)} bytes; "
                               f"constant memory holds {CONSTANT_BYTES}")
        mem.space = "constant"
        return self.apply(f, [a], env, None)

    # ------------------------------------------------------------------ memory
    def allocate(self, t: Type, source: View | None) -> View:
        """Memory for a result of type ``t``: the space comes from toLocal/... or else
        from where the input lives (private inputs give private results)."""
        if self.k.force_space:
            space = self.k.force_space.pop()
            self.k.force_space.append("")     # consumed: nested allocations use defaults
        else:
            space = ""
        if not space:
            mem = source.memory() if source is not None else None
            space = mem.space if mem is not None and mem.role != "scalar" else "private"
            if mem is not None and mem.role in ("input", "output"):
                space = "global"
        unit = unit_type(t)
        n = units(t)
        name = self.fresh({"global": "g", "local": "l", "private": "p"}[space])
        if space == "private":
            self._count_private(n * unit_bytes(unit))
            mem = Memory(name, "private", unit, n)
            decl = f"{unit.c_name()} {name}" + ("" if n == 1 else f"[{n}]") + ";"
            self.emit(decl)
            return MemView(mem, t, Idx.of(0))
        # every work-item (local) or every instance of the enclosing parallel maps
        # (global) needs its own copy of the memory
        sharers = [lp for lp in self.k.loops if lp.kind in
                   (("mapLcl", "mapWarp", "mapLane") if space == "local" else
                    ("mapGlb", "mapWrg", "mapLcl", "mapWarp", "mapLane"))]
        if space == "local":
            inner = [lp for lp in sharers]
            # only the loops inside the innermost mapWrg share local memory
            idx = max((i for i, lp in enumerate(self.k.loops) if lp.kind == "mapWrg"), default=-1)
            sharers = [lp for lp in inner if self.k.loops.index(lp) > idx]
        total = n
        offset = Idx.of(0)
        for lp in reversed(sharers):
            offset = offset + lp.var * total
            total *= lp.extent
        in_warp = any(lp.kind in ("mapWarp", "mapLane") for lp in self.k.loops)
        mem = Memory(name, space, unit, total, volatile=in_warp)
        if space == "local":
            self.k.local_memories.append(mem)
            self.k.local_bytes += total * unit_bytes(unit)
        else:
            self.buffers[name] = mem
        return MemView(mem, t, offset)

    def materialize(self, v: View, out: View | None) -> View:
        if out is None or v is out:
            return v
        self.copy(v, out)
        return out

    def copy(self, src: View, dst: View) -> None:
        t = dst.type
        if isinstance(t, ArrayType):
            n = int(t.size)
            self.seq_loop(n, lambda j: self.copy(src.index(j), dst.index(j)))
        elif isinstance(t, TupleType):
            for i in range(len(t.elems)):
                self.copy(src.get(i), dst.get(i))
        else:
            self.emit(dst.store(src.load(), src.type))

    def seq_loop(self, n: int, body, kind: str = "mapSeq", unroll: bool = True) -> None:
        if unroll and n <= self.opt.unroll:
            for j in range(n):
                body(Idx.of(j))
            return
        name = self.fresh("i")
        self.emit(f"for (int {name} = 0; {name} < {n}; {name}++) {{")
        self.k.indent += 1
        self.k.loops.append(_Loop(kind, Idx.of(Var(name, n)), n))
        body(Idx.of(Var(name, n)))
        self.k.loops.pop()
        self.k.indent -= 1
        self.emit("}")

    # ------------------------------------------------------------------ maps
    def map(self, p: Prim, a: View, env: dict, out: View | None) -> View:
        kind = p.name
        f = p.args[0]
        t = a.type
        if not isinstance(t, ArrayType):
            raise CodegenLimit(f"{kind} applied to {t}")
        if kind == "map":
            tenv = self.type_env(env)
            rt = fun_type(p, [t], tenv)
            return FnView(rt, lambda i: self.apply(f, [a.index(i)], env, None))
        n = int(t.size)
        rt = fun_type(p, [t], self.type_env(env))
        if out is None:
            out = self.allocate(rt, a)
        target = out

        def body(i: Idx):
            elem_out = target.index(i)
            r = self.apply(f, [a.index(i)], env, elem_out)
            self.materialize(r, elem_out)

        if kind == "mapSeq":
            self.seq_loop(n, body)
            return out
        mem = out.memory()
        self.parallel_loop(kind, p.dim, n, body, mem, copy=kind == "mapLcl" and _is_copy(f))
        # a map inside another writing the same memory (mapLcl(1, mapLcl(0, f))) needs
        # no barrier of its own: the outer one's follows
        if kind in ("mapLcl", "mapWarp") and not any(
                lp.kind in ("mapLcl", "mapWarp") and lp.writes is mem for lp in self.k.loops):
            if mem is not None and mem.space == "local":
                self.emit("barrier(CLK_LOCAL_MEM_FENCE);")
            elif mem is not None and mem.space == "global" and mem.role == "temp":
                self.emit("barrier(CLK_GLOBAL_MEM_FENCE);")
        return out

    def parallel_loop(self, kind: str, dim: int, n: int, body,
                      writes: Memory | None = None, copy: bool = False) -> None:
        k = self.k
        w = self.opt.warp_size
        if kind == "mapWrg":
            k.wrg_extents[dim] = max(k.wrg_extents.get(dim, 0), n)
            threads = k.group_count[dim] if k.group_count else None
            idf, step = f"get_group_id({dim})", f"get_num_groups({dim})"
        elif kind == "mapLcl":
            extents = k.copy_extents if copy else k.lcl_extents
            extents[dim] = max(extents.get(dim, 0), n)
            threads = k.local_size[dim] if k.local_size else None
            idf, step = f"get_local_id({dim})", f"get_local_size({dim})"
        elif kind == "mapGlb":
            k.glb_extents[dim] = max(k.glb_extents.get(dim, 0), n)
            threads = k.global_threads[dim] if k.global_threads else None
            idf, step = f"get_global_id({dim})", f"get_global_size({dim})"
        elif kind == "mapWarp":
            k.warp_extent = max(k.warp_extent, n)
            threads = k.local_size[0] // w if k.local_size else None
            idf, step = f"(get_local_id(0) / {w})", f"(get_local_size(0) / {w})"
        elif kind == "mapLane":
            threads = w
            idf, step = f"(get_local_id(0) % {w})", str(w)
        else:
            raise CodegenLimit(kind)
        name = self.fresh({"mapWrg": "wg", "mapLcl": "l", "mapGlb": "g", "mapWarp": "warp",
                           "mapLane": "lane"}[kind])
        v = Idx.of(Var(name, n))
        if threads is not None and threads == n:
            self.emit("{")
            self.emit(f"    int {name} = {idf};")
        elif threads is not None and threads > n:
            self.emit(f"for (int {name} = {idf}; {name} < {n}; {name} += {threads}) {{"
                      if False else f"if ({idf} < {n}) {{")
            self.emit(f"    int {name} = {idf};")
        else:
            self.emit(f"for (int {name} = {idf}; {name} < {n}; {name} += {step}) {{")
        k.indent += 1
        k.loops.append(_Loop(kind, v, n, dim, writes))
        body(v)
        k.loops.pop()
        k.indent -= 1
        self.emit("}")

    # ------------------------------------------------------------------ reduceSeq
    def reduce_seq(self, p: Prim, a: View, env: dict, out: View | None) -> View:
        f, init = p.args[0], p.args[1]
        tenv = self.type_env(env)
        rt = fun_type(p, [a.type], tenv)
        acc_t = rt.elem
        group = self._group_level()
        acc, own = self._private(acc_t, "acc", group and self._distributed(acc_t))
        init_v = self.gen(init, env, None)
        if acc is not own:
            if not isinstance(init_v, ValueView):
                raise CodegenLimit("a distributed accumulator needs a scalar initial value")
            self._fill(init_v, own)
        else:
            self._fill(init_v, acc)
        n = int(a.type.size)
        pipeline = a if isinstance(a, _Pipeline) else None
        if pipeline:
            pipeline.start(group)

        def step(j: Idx):
            if pipeline:
                pipeline.fetch(j + 1)
            r = self.apply(f, [acc, a.index(j)], env, acc)
            self.materialize(r, acc)
            if pipeline:
                pipeline.store(j + 1)
            if group:
                # the whole work-group runs this loop: the next step may overwrite the
                # local memory this one read
                self.emit("barrier(CLK_LOCAL_MEM_FENCE);")
            if pipeline:
                pipeline.advance(j + 1)

        self.seq_loop(n, step, "reduceSeq", unroll=not group)
        if out is not None:
            self.copy(acc, out.index(Idx.of(0)))
            return out
        return FnView(rt, lambda i: acc)

    def _count_private(self, nbytes: int) -> None:
        """Adds a private array to the kernel's total (every one counts, as if all were
        live at once); over ``Options.private_memory`` the candidate is not generated."""
        self.k.private_bytes += nbytes
        limit = self.opt.private_memory
        if limit is not None and self.k.private_bytes > limit and not self.k.probe:
            raise CodegenLimit(f"private arrays of {self.k.private_bytes} bytes per work-item "
                               f"(limit {limit}): too large for registers")

    def _private(self, t: Type, base: str, dist: bool) -> tuple[View, MemView]:
        """Private memory for a value of type ``t``, declared here, and the part of it
        the work-item holds: all of it, or with ``dist`` (at the work-group level, a
        value shaped like the group: ``_distributed``) only its own part."""
        own_t = t.elem.elem if dist else t
        name, unit, n = self.fresh(base), unit_type(t), units(own_t)
        self._count_private(n * unit_bytes(unit))
        self.emit(f"{unit.c_name()} {name}" + ("" if n == 1 else f"[{n}]") + ";")
        own = MemView(Memory(name, "private", unit, n), own_t, Idx.of(0))
        return (_DistributedView(self, t, own) if dist else own), own

    def _pipeline(self, e: Call, env: dict) -> _Pipeline:
        """The input of a reduceSeq that prefetches: ``prefetch(g) $ xs`` or a zip of
        such arrays and others."""
        parts = e.args if e.fun.name == "zip" else (e,)
        sources = []
        for x in parts:
            if _is_prefetch(x):
                sources.append((x.fun, self.gen(x.args[0], env, None)))
            else:
                sources.append((None, self.gen(x, env, None)))
        return _Pipeline(self, type_of(e, self.type_env(env)), sources, env, e.fun.name == "zip")

    def _group_level(self) -> bool:
        """Inside a mapWrg but in no mapLcl/mapWarp/mapLane/mapSeq: all work-items of
        the group run this code together."""
        kinds = [lp.kind for lp in self.k.loops]
        if "mapWrg" not in kinds:
            return False
        last = max(i for i, kd in enumerate(kinds) if kd == "mapWrg")
        return not any(kd in ("mapLcl", "mapWarp", "mapLane", "mapSeq", "reduceSeq")
                       for kd in kinds[last + 1:])

    def _distributed(self, acc_t: Type) -> bool:
        """A private value ``T[l1][l0]...`` at the work-group level (a reduceSeq's
        accumulator, prefetched data) whose outer dimensions are the work-group's
        shape is held in private memory, work-item
        (l1, l0) holding its own part (Lift's private memory under mapLcl: each
        work-item only touches the part its mapLcl(1)/mapLcl(0) iteration gives it,
        which ``_DistributedView`` checks)."""
        ls = self.k.local_size
        if ls is None:     # first pass: launch sizes unknown, no code is kept
            ls = tuple(self.k.lcl_extents.get(d, 1) for d in range(2))
        return (len(ls) == 2 and isinstance(acc_t, ArrayType) and isinstance(acc_t.elem, ArrayType)
                and int(acc_t.size) == ls[1] and int(acc_t.elem.size) == ls[0] and ls[1] > 1)

    def _own_index(self, i: Idx, dim: int) -> bool:
        """``i`` is the id of a mapLcl(dim) that gives every work-item one iteration."""
        if len(i.terms) != 1 or i.const or i.terms[0][1] != 1:
            return False
        v = i.terms[0][0]
        ls = self.k.local_size
        return any(lp.kind == "mapLcl" and lp.dim == dim and lp.var.terms == i.terms and
                   (ls is None or lp.extent == ls[dim]) for lp in self.k.loops) and \
            isinstance(v, Var)

    def _fill(self, value: View, dst: View) -> None:
        """Initialise ``dst``; a scalar initial value fills every element."""
        if isinstance(dst.type, ArrayType) and (not isinstance(value.type, ArrayType)
                                                or isinstance(value, ValueView)):
            self.seq_loop(int(dst.type.size), lambda j: self._fill(value, dst.index(j)))
        else:
            self.copy(value, dst)


class _Pipeline(View):
    """The input of a reduceSeq whose elements are computed ahead (``prefetch(g) $ xs``,
    possibly zipped with other arrays): g of element j + 1 is computed, into private
    memory, while the reduction works on element j, so that g's memory accesses (the
    next tiles' loads) overlap that work. Private memory holds the current and the
    next element; ``index`` gives the current one. ``prefetchLocal(toLocal(h) o g)``
    stages g's results the same way and keeps toLocal(h) of them in two local buffers
    (``pipeline.LocalStage``)."""

    def __init__(self, gen: Generator, t: ArrayType, sources: list, env: dict, zipped: bool):
        from mcl.lift.pipeline import LocalStage, split_stages
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


def _is_prefetch(e: Expr) -> bool:
    return isinstance(e, Call) and isinstance(e.fun, Prim) and e.fun.name in ("prefetch",
                                                                              "prefetchLocal")


def _prefetched(e: Expr) -> bool:
    """``e`` is ``prefetch(g) $ xs`` or a zip of arrays one of which is."""
    return _is_prefetch(e) or (isinstance(e, Call) and isinstance(e.fun, Prim) and
                               e.fun.name == "zip" and any(map(_is_prefetch, e.args)))


class _DistributedView(View):
    """A private value ``T[l1][l0][...]`` spread over the work-items of a group: each
    holds ``T[...]`` in private memory; indexing the two outer dimensions by the
    work-item's own mapLcl ids selects it, any other index is an error."""

    def __init__(self, gen: Generator, t: ArrayType, own: View, dims: tuple[int, ...] = (1, 0)):
        self.gen, self.type, self.own, self.dims = gen, t, own, dims

    def index(self, i) -> View:
        i = Idx.of(i)
        if not self.gen._own_index(i, self.dims[0]):
            raise CodegenLimit("a work-group's private accumulator is indexed by something "
                               f"other than the work-item's own mapLcl({self.dims[0]}) id")
        if len(self.dims) == 1:
            return self.own
        return _DistributedView(self.gen, self.type.elem, self.own, self.dims[1:])

    def memory(self):
        return self.own.memory()


def _is_copy(f: Fun) -> bool:
    """``f`` only copies its argument: id, or a sequential or local map of a copy."""
    if isinstance(f, Prim) and f.name == "id":
        return True
    return isinstance(f, Prim) and f.name in ("mapSeq", "mapLcl") and len(f.args) == 1 \
        and _is_copy(f.args[0])


def _prod(xs) -> int:
    r = 1
    for x in xs:
        r *= x
    return r


def _local_declaration(m: Memory) -> str:
    q = "volatile " if m.volatile else ""
    aligned = f" __attribute__((aligned({m.align})))" if m.align else ""
    return f"local {q}{m.unit.c_name()} {m.name}[{m.size}]{aligned};"


def _flatten_loads(v: View) -> list[str]:
    t = v.type
    if isinstance(t, TupleType):
        out = []
        for i in range(len(t.elems)):
            out.extend(_flatten_loads(v.get(i)))
        return out
    return [v.load()]


def generate(prog: Program, sizes: dict, options: Options | None = None) -> Generated:
    """OpenCL kernels and a launch plan for a fully lowered program at concrete sizes
    (``sizes`` maps size names to ints). Raises McplError (``lift-not-lowered``,
    ``lift-size``, ``lift-codegen``) for expressions it cannot generate."""
    try:
        return Generator(options).program(prog, {str(k): v for k, v in sizes.items()})
    except CodegenLimit as e:
        raise McplError(error("lift-codegen", f"cannot generate OpenCL: {e}")) from None
