"""The OpenCL code of each Lift pattern inside a kernel (seed 001, section "code
generation"), pattern by pattern, with no optimisation decisions of its own; mixed
into :class:`mcl.lift.codegen.Generator`, which forms the kernels and their launch.

* maps become loops over ids (or a single id when the launch covers the array),
  followed by a barrier for ``mapLcl``/``mapWarp`` and none for ``mapLane``;
* ``reduceSeq`` is an accumulator loop in a private variable; reading
  ``prefetch(g) $ xs`` it computes g of the next element during each step
  (:mod:`mcl.lift.pipeline`);
* split/join/transpose/reorderStride/zip/asVector/... are views (``views.py``);
  vectors of adjacent elements are read and written at once (``VecElem``);
* ``toLocal``/``toGlobal``/``toPrivate`` choose where results are allocated;
  ``toLocal(transpose o ... o mapLcl(f))`` allocates the layout's result, which
  the map writes through."""

from __future__ import annotations

from dataclasses import dataclass

from mcl.lift import cexpr as C
from mcl.lift.arith import Idx, Var
from mcl.lift.ir import (
    ALL_MAPS,
    LAYOUT,
    Call,
    Compose,
    Expr,
    Fun,
    Lambda,
    Literal,
    Param,
    Prim,
    UserFun,
)
from mcl.lift.lowered import is_layout_fun, not_lowered
from mcl.lift.pipeline import Pipeline, is_prefetch, prefetched
from mcl.lift.typecheck import fun_type, type_of
from mcl.lift.types import ArrayType, ScalarType, TupleType, Type, VectorType
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
from mcl.opencl.by_value import fits_arguments

#: bytes of constant memory an input read through ``toConstant`` may have: the least
#: CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE OpenCL allows (NVIDIA GPUs and PoCL have it)
CONSTANT_BYTES = 64 * 1024

@dataclass
class _Loop:
    kind: str
    var: Idx
    extent: int
    dim: int = 0
    writes: Memory | None = None      # where a parallel map's results go


class _PatternEmission:
    """Code of expressions and patterns into the kernel being generated; mixed into
    ``Generator``, whose state (options, the kernel's lines, loops and memories,
    buffers, user functions) and utilities (``fresh``, ``emit``, ``type_env``) it
    uses."""

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
            if isinstance(f, Prim) and f.name == "reduceSeq" and prefetched(e.args[0]):
                return self.reduce_seq(f, self._pipeline(e.args[0], env), env, out)
            if isinstance(f, Prim) and (f.name in LAYOUT + ("id",) or (
                    f.name == "map" and is_layout_fun(f.args[0]))) and len(e.args) == 1 \
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
            if isinstance(f, Compose) and is_layout_fun(f.funs[0]):
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
        """``toConstant(f) $ x``: ``x`` an input of the program in constant memory; ``f``
        only rearranges it (a view). Where it fits, with the kernel's other arguments, in
        the bytes of arguments every OpenCL device accepts (mcl.opencl.by_value: a 9 x 9
        filter), it is passed by value, as a struct of its elements: the arguments live
        in a bank of constant memory that the arithmetic reads as an operand, so an
        unrolled loop over it needs no load. Else it is a ``constant`` pointer (one read
        serves every work-item of a warp that reads the same element), which NVIDIA's
        OpenCL compiler issues as a global load through the read-only path,
        LDG.E.CONSTANT, per element and work-item
        (benchmarks/results/fidelity/raw/h200_2026-11-30_constant_reads; Lift's blocked
        convolution on the H200: 81 such loads a work-item beside its 36 of the input,
        benchmarks/results/perf/h200_2026-11-30/lift_conv_sass/)."""
        f = p.args[0]
        mem = a.memory()
        if mem is None or mem.role != "input" or not is_layout_fun(f):
            raise CodegenLimit("toConstant applies to an input of the program (through layout "
                               "patterns only): constant memory is read-only in a kernel")
        if mem.size * unit_bytes(mem.unit) > CONSTANT_BYTES:
            raise CodegenLimit(f"'{mem.name}' has {mem.size * unit_bytes(mem.unit)} bytes; "
                               f"constant memory holds {CONSTANT_BYTES}")
        if mem.space != "constant":
            mem.space = "constant"
            others = sum(m is not mem and not m.by_value for m in self.buffers.values())
            taken = sum(unit_bytes(m.unit) * m.size for m in self.buffers.values()
                        if m.by_value)
            mem.by_value = fits_arguments(mem.size * unit_bytes(mem.unit), others, taken)
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
        pipeline = a if isinstance(a, Pipeline) else None
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

    def _pipeline(self, e: Call, env: dict) -> Pipeline:
        """The input of a reduceSeq that prefetches: ``prefetch(g) $ xs`` or a zip of
        such arrays and others."""
        parts = e.args if e.fun.name == "zip" else (e,)
        sources = []
        for x in parts:
            if is_prefetch(x):
                sources.append((x.fun, self.gen(x.args[0], env, None)))
            else:
                sources.append((None, self.gen(x, env, None)))
        return Pipeline(self, type_of(e, self.type_env(env)), sources, env, e.fun.name == "zip")

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


class _DistributedView(View):
    """A private value ``T[l1][l0][...]`` spread over the work-items of a group: each
    holds ``T[...]`` in private memory; indexing the two outer dimensions by the
    work-item's own mapLcl ids selects it, any other index is an error."""

    def __init__(self, gen: _PatternEmission, t: ArrayType, own: View,
                 dims: tuple[int, ...] = (1, 0)):
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


def _flatten_loads(v: View) -> list[str]:
    t = v.type
    if isinstance(t, TupleType):
        out = []
        for i in range(len(t.elems)):
            out.extend(_flatten_loads(v.get(i)))
        return out
    return [v.load()]

