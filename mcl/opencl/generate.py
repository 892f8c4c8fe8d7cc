"""OpenCL code generation for MCPL functions written at a leaf level.

``generate(module, target)`` turns each kernel (a function with foreach loops)
into OpenCL C source and a :class:`~mcl.opencl.plan.LaunchPlan`. What a level
means comes from its hardware description and its target file
(:mod:`mcl.opencl.target`):

* foreach loops become work-group or work-item ids (the par_group's ``ids``),
  innermost loop in dimension 0; more loops of a kind than OpenCL's three
  dimensions share the outermost one through division and remainder;
* arrays, tiles and views are flattened to row-major index arithmetic written
  with the MCPL names, so the OpenCL compiler can hoist and fold it;
* memory spaces become address-space qualifiers; ``__local`` arrays move to the
  top of the kernel as OpenCL requires; arrays private to a work-item stay in
  place; parameters that size such arrays become compile-time constants
  (``-D name=value``), listed in the plan;
* ``barrier(space)`` becomes ``barrier(fence of space)``; math calls and
  atomics become OpenCL built-ins (float ``atomicAdd`` through
  ``atomic_cmpxchg`` when the target says the device has no float atomics).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from mcl.diagnostics import McplError, Span, error
from mcl.mcpl import ast
from mcl.opencl import vectorize
from mcl.opencl.plan import DTYPES, Argument, CompileTimeSize, LaunchPlan, evaluate
from mcl.opencl.target import Target, load_target

#: Words an MCPL name may be but an OpenCL C identifier may not.
RESERVED = frozenset("""
auto break case char const continue default do double else enum extern float for goto if
inline int long register restrict return short signed sizeof static struct switch typedef
union unsigned void volatile while bool true false half uchar ushort uint ulong size_t
ptrdiff_t intptr_t uintptr_t kernel __kernel global __global local __local constant
__constant private __private read_only write_only read_write image2d_t image3d_t
sampler_t event_t complex imaginary vec_type_hint reqd_work_group_size
""".split())

#: OpenCL built-in functions a helper function must not be called like.
BUILTIN_FUNCTIONS = frozenset("""
min max clamp mix step smoothstep sign dot cross length distance normalize select abs fabs
sqrt rsqrt exp exp2 log log2 log10 sin cos tan tanh erf floor ceil round pow fma fmin fmax
mad barrier atomic_add atomic_sub atomic_inc atomic_dec atomic_min atomic_max atomic_xchg
atomic_and atomic_or atomic_xor atomic_cmpxchg get_global_id get_local_id get_group_id
""".split())

#: MCPL built-in math -> OpenCL function (same name unless listed)
_FLOAT_MATH = ("sqrt", "rsqrt", "exp", "exp2", "log", "log2", "log10", "sin", "cos", "tan",
               "tanh", "erf", "fabs", "floor", "ceil", "round", "pow", "fmin", "fmax", "fma")
#: lib.atomics and the built-in atomicAdd -> OpenCL 1.1 atomic functions (int)
ATOMICS = {"atomicAdd": "atomic_add", "atomicSub": "atomic_sub", "atomicMin": "atomic_min",
           "atomicMax": "atomic_max", "atomicAnd": "atomic_and", "atomicOr": "atomic_or",
           "atomicXor": "atomic_xor", "atomicInc": "atomic_inc", "atomicDec": "atomic_dec",
           "atomicExchange": "atomic_xchg"}

_RANK = {"bool": 0, "int": 1, "long": 2, "float": 3, "double": 4}
_SIZES = {"float": 4, "double": 8, "int": 4, "long": 8, "bool": 1}
_PREC = {**ast.BINARY_PRECEDENCE}
_UNARY_PREC = 11
_ATOM = 12


@dataclass(frozen=True)
class GeneratedKernel:
    """One kernel: its OpenCL source and launch plan."""

    name: str
    source: str
    plan: LaunchPlan


@dataclass
class _Var:
    name: str
    cname: str
    type: ast.Type
    kind: str                       # param | local | const | index | view
    qualifier: str = "__private"
    space: str | None = None
    init: ast.Expr | None = None    # definition of a const scalar (for size expressions)
    base: _Var | None = None        # views: the viewed variable
    tiled: bool = False             # views: per-dimension tiling of a multi-dim base
    by_pointer: bool = False        # a written scalar parameter, passed as a 1-element buffer
    uniform: bool = False           # the index of a work-group loop: one value per work-group
    read: bool = False
    written: bool = False

    @property
    def root(self) -> _Var:
        v = self
        while v.base is not None:
            v = v.base
        return v


def _err(code: str, message: str, node: ast.Node | None, hint: str | None = None) -> McplError:
    span = node.span if node is not None and node.span.file != "<generated>" else None
    return McplError(error(code, message, span, hint))


def _is_kernel(f: ast.Function) -> bool:
    return any(isinstance(n, ast.ForEach) for n in ast.walk(f.body))


# --------------------------------------------------------------------------- entry point


def generate(module: ast.Module | str | os.PathLike[str], target: str | Target | None = None,
             *, function: str | None = None,
             search_path: Sequence[str | Path] = ()) -> list[GeneratedKernel]:
    """OpenCL kernels and launch plans for the kernels of ``module`` (a path or a
    parsed module). ``target``: a leaf name (default: each function's level); a
    function written above it is translated down first. ``function`` picks one."""
    # Code is generated only from programs the front end accepts: the generator
    # relies on the checks (foreach nesting, memory spaces, ...) having passed.
    from mcl.mcpl import check
    checked = check(module if isinstance(module, ast.Module) else str(module), search_path)
    errors = [d for d in checked.diagnostics if d.is_error]
    if errors:
        raise McplError(errors)
    module = checked.module
    kernels = [f for f in module.functions if _is_kernel(f)
               and (function is None or f.name == function)]
    if not kernels:
        what = f"a function '{function}' with" if function else "a function with"
        raise McplError(error("opencl-no-kernel", f"{module.file} has no {what} foreach loops "
                              "to generate a kernel from"))
    out = []
    for f in kernels:
        tgt = target if isinstance(target, Target) else load_target(
            target or f.hardware, search_path)
        mod, fn = module, f
        if f.hardware != tgt.name:
            mod, fn = _translate(module, f, tgt.name, search_path)
        out.append(_KernelGen(mod, fn, tgt).run())
    return out


def _translate(module: ast.Module, f: ast.Function, leaf: str,
               search_path: Sequence[str | Path]) -> tuple[ast.Module, ast.Function]:
    """``f`` brought down to ``leaf`` by mcl.translate."""
    from mcl.translate import translate
    mod = translate(module, to=leaf, search_path=search_path)
    g = mod.function(f.name)
    if g is None or g.hardware != leaf:
        raise _err("opencl-not-leaf", f"translating '{f.name}' to '{leaf}' did not give a "
                   f"'{leaf}' function", f)
    return mod, g


# --------------------------------------------------------------------------- the generator


@dataclass(frozen=True)
class _Helper:
    """A generated helper function: its C name and which parameters (by position) are
    passed as pointers, written and read."""

    cname: str
    by_pointer: frozenset[int]
    written: frozenset[int]
    read: frozenset[int]


@dataclass
class _Loop:
    foreach: ast.ForEach
    kind: str                   # "group" | "local"
    dim: int = 0
    id_expr: str = ""
    #: the loops of its chain that share dimension ``dim``, outermost first
    members: list[ast.ForEach] = field(default_factory=list)


@dataclass
class _KernelGen:
    module: ast.Module
    f: ast.Function
    target: Target
    lines: list[str] = field(default_factory=list)
    origins: list[int] = field(default_factory=list)
    hoisted: list[tuple[str, int]] = field(default_factory=list)
    scopes: list[dict[str, _Var]] = field(default_factory=list)
    specialized: dict[str, ast.Param] = field(default_factory=dict)
    local_bytes: list[str] = field(default_factory=list)
    float_atomics: set[str] = field(default_factory=set)
    helpers: dict[tuple, str] = field(default_factory=dict)
    helper_info: dict[tuple, _Helper] = field(default_factory=dict)
    records: dict[str, ast.TypeDef] = field(default_factory=dict)
    volatile_arrays: set[str] = field(default_factory=set)
    loops: dict[int, _Loop] = field(default_factory=dict)
    siblings: dict[int, bool] = field(default_factory=dict)
    leaves: set[int] = field(default_factory=set)
    sizes: dict[int, str] = field(default_factory=dict)
    extents: dict[tuple[str, int], str] = field(default_factory=dict)
    #: conditions of the smaller side-by-side loops around the current statement
    guards: list[str] = field(default_factory=list)
    #: per-group arrays in global memory: (plan argument, kernel parameter)
    scratch_args: list[tuple[Argument, str]] = field(default_factory=list)
    enclosing: list[ast.ForEach] = field(default_factory=list)
    indent: int = 1
    line: int = 0
    uses_double: bool = False
    #: every name of the function (generated names must differ from them)
    names: set[str] = field(default_factory=set)
    #: the definitions of integer locals declared once and never assigned
    fixed: dict[str, ast.Expr] = field(default_factory=dict)

    @property
    def hw(self):
        return self.target.hardware

    # ---- scopes

    def lookup(self, name: str, node: ast.Node | None = None) -> _Var:
        for s in reversed(self.scopes):
            if name in s:
                return s[name]
        raise _err("opencl-undeclared", f"'{name}' is not declared", node)

    def declare(self, v: _Var) -> _Var:
        self.scopes[-1][v.name] = v
        return v

    def cname(self, name: str) -> str:
        return name + "_" if name in RESERVED else name

    def emit(self, text: str) -> None:
        self.lines.append("    " * self.indent + text)
        self.origins.append(self.line)

    # ---- the whole kernel

    def run(self) -> GeneratedKernel:
        f = self.f
        self.uses_double = any(isinstance(n, ast.Type) and n.name == "double"
                               for n in ast.walk(f))
        self.names = _names(f)
        self.fixed = _fixed(f)
        self.scopes = [{}]
        self.plan_loops()
        self.find_lockstep_code()
        params = [self.param(p) for p in f.params]
        self.scopes.append({})
        self.statements(f.body.statements)
        return self.assemble(params)

    def param(self, p: ast.Param) -> _Var:
        t = p.type
        if t.is_array or not p.const:
            space = p.space or self.default_space([])
            if space not in self.target.spaces:
                raise _err("opencl-bad-space", f"memory space '{space}' of '{p.name}' is not "
                           f"one of {self.target.name}", p)
            v = _Var(p.name, self.cname(p.name), t, "param", self.target.qualifier(space), space,
                     by_pointer=not t.is_array)
            if v.qualifier not in ("__global", "__constant"):
                raise _err("opencl-bad-space", f"'{p.name}' is in '{space}', which a kernel "
                           "argument cannot be in", p, "pass arrays in device memory")
        else:
            v = _Var(p.name, self.cname(p.name), t, "param", space=None)
        self.record_type(t)
        return self.declare(v)

    def default_space(self, groups: list[str]) -> str | None:
        ms = self.hw.default_memory_space(groups)
        return ms.name if ms is not None else None

    # ---- foreach loops -> NDRange dimensions

    def plan_loops(self) -> None:
        """Give every foreach loop its OpenCL dimension and id. The loops form a tree:
        side-by-side loops (phases of one work-group) share the dimensions of their
        par_group; a dimension is as large as its largest loop and smaller loops are
        guarded by their own size."""
        chains: list[list[ast.ForEach]] = []

        def collect(stmts: Sequence[ast.Stmt], prefix: list[ast.ForEach]) -> None:
            found = [s for s in stmts if isinstance(s, ast.ForEach)]
            for s in stmts:
                if not isinstance(s, ast.ForEach) and any(
                        isinstance(n, ast.ForEach) for n in ast.walk(s)):
                    raise _err("opencl-foreach-nesting", "a foreach inside another statement "
                               "cannot become work-group or work-item ids", s,
                               "put foreach loops directly inside each other")
            if len(found) > 1:
                first = found[0]
                for other in found[1:]:
                    if other.group != first.group:
                        raise _err("opencl-foreach-siblings", f"a foreach over '{other.group}' "
                                   f"beside one over '{first.group}': loops side by side must "
                                   "be over the same par_group to share the work-items", other)
                if self.target.par_groups.get(first.group) == "group":
                    raise _err("opencl-foreach-siblings", f"two foreach loops over "
                               f"'{first.group}' side by side: the second may start only when "
                               "every work-group has finished the first, and a kernel cannot "
                               "wait for all its work-groups", found[1],
                               "split the function into two functions (two kernels)")
            if not found and prefix:
                chains.append(prefix)
            for fe in found:
                self.siblings[id(fe)] = len(found) > 1
                body = fe.body
                collect(body.statements if isinstance(body, ast.Block) else (body,),
                        [*prefix, fe])

        collect(self.f.body.statements, [])
        for chain in chains:
            for fe in chain:
                if self.target.par_groups.get(fe.group) is None:
                    raise _err("opencl-unknown-group", f"par_group '{fe.group}' is not one of "
                               f"{self.target.name}", fe)
        self.leaves = {id(c[-1]) for c in chains}
        self.dim_groups: dict[str, list[list[list[ast.ForEach]]]] = {"group": [], "local": []}
        for kind in ("group", "local"):
            per_chain = [[fe for fe in c if self.target.par_groups[fe.group] == kind]
                         for c in chains]
            lengths = {len(c) for c in per_chain}
            if len(lengths) > 1:
                raise _err("opencl-foreach-siblings", "foreach loops side by side must nest "
                           "the same number of loops mapped to "
                           f"{'work-groups' if kind == 'group' else 'work-items'}",
                           next(c[-1] for c in chains if len(
                               [fe for fe in c if self.target.par_groups[fe.group] == kind])
                               != len(per_chain[0])))
            length = lengths.pop() if lengths else 0
            fn = "get_group_id" if kind == "group" else "get_local_id"
            # innermost loop in dimension 0, the next in 1, the rest share 2
            slots = [[length - 1 - d] for d in range(min(2, length))]
            if length > 2:
                slots.append(list(range(length - 2)))
            self.dim_groups[kind] = []
            for d, depths in enumerate(slots):
                groups_of_dim: list[list[ast.ForEach]] = []
                for c in per_chain:
                    members = [c[j] for j in depths]
                    if [id(m) for m in members] not in [[id(m) for m in g]
                                                        for g in groups_of_dim]:
                        groups_of_dim.append(members)
                self.dim_groups[kind].append(groups_of_dim)
                for members in groups_of_dim:
                    for fe in members:
                        if id(fe) in self.loops and [id(m) for m in self.loops[id(fe)].members] \
                                != [id(m) for m in members]:
                            raise _err("opencl-foreach-siblings", "foreach loops side by side "
                                       "inside loops that share one OpenCL dimension are not "
                                       "supported", fe, "nest at most three loops mapped to "
                                       "work-items around side-by-side loops")
                        self.loops[id(fe)] = _Loop(fe, kind, d, f"{fn}({d})", members)

    def size_of(self, fe: ast.ForEach) -> str:
        """The size of a foreach loop as a plan expression (computed where the loop's
        names are in scope, then remembered)."""
        if id(fe) not in self.sizes:
            self.sizes[id(fe)] = self.plan_expr(fe.size)
        return self.sizes[id(fe)]

    def extent(self, kind: str, d: int) -> str:
        """The number of work-groups or work-items in dimension ``d``: the largest of
        the loops (or products of loops) that share it."""
        key = (kind, d)
        if key not in self.extents:
            sizes: list[str] = []
            for members in self.dim_groups[kind][d]:
                size = _product([self.size_of(m) for m in members])
                if size not in sizes:
                    sizes.append(size)
            extent = sizes[0]
            for x in sizes[1:]:
                extent = _fold(f"max({extent}, {x})")
            self.extents[key] = extent
        return self.extents[key]

    def launch_sizes(self) -> tuple[list[str], list[str], list[str]]:
        ndim = max(1, len(self.dim_groups["group"]), len(self.dim_groups["local"]))
        groups, local, glob = [], [], []
        for d in range(ndim):
            g = self.extent("group", d) if d < len(self.dim_groups["group"]) else "1"
            ll = self.extent("local", d) if d < len(self.dim_groups["local"]) else "1"
            groups.append(g)
            local.append(ll)
            glob.append(_product([g, ll]))
        return groups, local, glob

    # ---- expressions in the parameters only (launch sizes, array sizes)

    def inline(self, e: ast.Expr, depth: int = 0) -> ast.Expr:
        """``e`` with const locals replaced by their definitions and hardware properties
        by their values: an expression in the parameters."""
        if depth > 64:
            raise _err("opencl-bad-size", "a size is defined in terms of itself", e)

        def rewrite(n: ast.Node) -> ast.Node | None:
            if isinstance(n, ast.Name):
                v = self.lookup(n.id, n)
                if v.kind == "const" and v.init is not None:
                    return _Paren(self.inline(v.init, depth + 1))
                if v.kind == "param" and not v.type.is_array and not v.by_pointer:
                    return None
                raise _err("opencl-bad-size", f"a size depends on '{n.id}', which is neither "
                           "a parameter nor a constant", n,
                           "sizes of foreach loops and arrays may only use parameters and "
                           "`const` values computed from them")
            if isinstance(n, ast.HwdRef):
                return self.hwd_literal(n)
            return None
        return ast.transform(e, rewrite)

    def plan_expr(self, e: ast.Expr) -> str:
        text = _CPrinter(self, plan=True).expr(self.inline(e))
        return _fold(text)

    def hwd_literal(self, n: ast.HwdRef) -> ast.Literal:
        value = self.hw.resolve_property(n.path)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise _err("opencl-bad-hwd-ref", f"'{'.'.join(n.path)}' is {value}, not a number "
                       "the kernel can use", n)
        return ast.Literal(value, "int" if isinstance(value, int) else "float")

    # ---- warp-synchronous code

    def find_lockstep_code(self) -> None:
        """Shared arrays used under a condition on the index of a group of lock-step
        units without a barrier (warp-synchronous code) are made volatile, so that
        every access goes to memory."""
        lock = {g.name for g in self.hw.lockstep_par_groups()}
        leaves = [lp.foreach for k, lp in self.loops.items() if k in self.leaves]
        if not leaves or any(fe.group not in lock for fe in leaves):
            return
        outer_local = {lp.foreach.var.name for k, lp in self.loops.items()
                       if lp.kind == "local" and k not in self.leaves}
        self.assumes_lockstep = False
        for n in ast.walk(self.f.body):
            if not isinstance(n, ast.If):
                continue
            cond_names = {m.id for m in ast.walk(n.cond) if isinstance(m, ast.Name)}
            if not cond_names & outer_local:
                continue
            if any(isinstance(m, ast.Barrier) for m in ast.walk(n)):
                continue
            for m in ast.walk(n.then):
                if isinstance(m, ast.Index) and isinstance(m.base, ast.Name):
                    self.volatile_arrays.add(m.base.id)

    # ---- statements

    def statements(self, stmts: Sequence[ast.Stmt]) -> None:
        before: ast.ForEach | None = None
        for s in stmts:
            if isinstance(s, ast.ForEach):
                if before is None:   # sizes of side-by-side loops, with the names before them
                    for x in stmts:
                        if isinstance(x, ast.ForEach):
                            self.size_of(x)
                if before is not None and not _ends_with_barrier(before):
                    # the loops run one after the other: the second sees what the first wrote
                    self.line = s.span.line
                    self.emit("barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);   "
                              "// the foreach loops before and after run one after the other")
                before = s
            self.statement(s)

    def block(self, s: ast.Stmt) -> None:
        """A nested statement in braces, with its own scope."""
        self.scopes.append({})
        self.indent += 1
        if isinstance(s, ast.Block):
            self.statements(s.statements)
        else:
            self.statement(s)
        self.indent -= 1
        self.scopes.pop()

    def statement(self, s: ast.Stmt) -> None:
        self.line = s.span.line
        p = _CPrinter(self)
        if isinstance(s, ast.Block):
            self.emit("{")
            self.block(s)
            self.emit("}")
        elif isinstance(s, ast.ForEach):
            self.foreach(s)
        elif isinstance(s, ast.Declaration):
            self.declaration(s)
        elif isinstance(s, ast.AsStatement):
            if not isinstance(s.target, ast.Name):
                raise _err("opencl-unsupported", "a view of something other than a variable",
                           s)
            base = self.lookup(s.target.id, s.target)
            for view in s.views:
                base = self.view(view, base)
        elif isinstance(s, ast.Assign):
            self.emit(p.assign(s) + ";")
        elif isinstance(s, ast.IncDec):
            self.mark_written(s.target)
            self.emit(f"{p.expr(s.target)}{s.op};")
        elif isinstance(s, ast.ExprStmt):
            self.emit(p.expr(s.expr) + ";")
        elif isinstance(s, ast.Return):
            if s.value is not None and _is_kernel(self.f):
                raise _err("opencl-kernel-return", "a kernel cannot return a value", s,
                           "write the result to an array parameter")
            self.emit("return;" if s.value is None else f"return {p.expr(s.value)};")
        elif isinstance(s, ast.If):
            self.emit(f"if ({p.expr(s.cond)}) {{")
            self.block(s.then)
            orelse = s.orelse
            while isinstance(orelse, ast.If):
                self.line = orelse.span.line
                self.emit(f"}} else if ({p.expr(orelse.cond)}) {{")
                self.block(orelse.then)
                orelse = orelse.orelse
            if orelse is not None:
                self.emit("} else {")
                self.block(orelse)
            self.emit("}")
        elif isinstance(s, ast.For):
            self.for_loop(s)
        elif isinstance(s, ast.While):
            self.emit(f"while ({p.expr(s.cond)}) {{")
            self.block(s.body)
            self.emit("}")
        elif isinstance(s, ast.Barrier):
            if s.space not in self.target.spaces:
                raise _err("opencl-bad-space", f"barrier on '{s.space}', which is not a memory "
                           f"space of {self.target.name}", s)
            self.emit(f"barrier({self.target.fence(s.space)});")
        elif isinstance(s, ast.Break):
            self.emit("break;")
        elif isinstance(s, ast.Continue):
            self.emit("continue;")
        else:  # pragma: no cover - every statement class is handled above
            raise _err("opencl-unsupported", f"cannot generate {type(s).__name__}", s)

    def foreach(self, s: ast.ForEach) -> None:
        loop = self.loops[id(s)]
        self.emit(f"// foreach ({s.var.type.name} {s.var.name} in "
                  f"{_CPrinter(self).expr(s.size)} {s.group})")
        beside = self.siblings.get(id(s), False)
        if beside:   # its index and declarations are its own, not its siblings'
            self.emit("{")
            self.indent += 1
            self.scopes.append({})
        v = self.declare(_Var(s.var.name, self.cname(s.var.name), s.var.type, "index",
                              uniform=loop.kind == "group"))
        members = [id(m) for m in loop.members]
        id_expr = loop.id_expr
        if len(members) > 1:
            fn = loop.id_expr
            inner = [self.size_of(m) for m in loop.members[members.index(id(s)) + 1:]]
            if inner:
                div = " * ".join(s if _simple(s) else f"({s})" for s in inner)
                fn = f"{fn} / {div if _simple(div) else f'({div})'}"
            size = self.size_of(s)
            id_expr = fn if members[0] == id(s) else \
                f"{fn if _simple(fn) or fn.endswith(')') and '/' not in fn else f'({fn})'} % " \
                f"{size if _simple(size) else f'({size})'}"
        self.emit(f"const int {v.cname} = {id_expr};")
        # a loop smaller than its dimension (beside a larger one) runs where it is in range
        guard = None
        if members[0] == id(s) and _product([self.size_of(m) for m in loop.members]) \
                != self.extent(loop.kind, loop.dim):
            guard = self.size_of(s)
            self.guards.append(f"{v.cname} < {guard if _simple(guard) else f'({guard})'}")
        self.enclosing.append(s)
        body = s.body
        stmts = body.statements if isinstance(body, ast.Block) else (body,)
        if id(s) in self.leaves and self.guards:
            self.guarded(stmts)
        else:
            self.statements(stmts)
        self.enclosing.pop()
        if guard is not None:
            self.guards.pop()
        if beside:
            self.scopes.pop()
            self.indent -= 1
            self.emit("}")

    def guarded(self, stmts: Sequence[ast.Stmt]) -> None:
        """The body of a loop smaller than its work-group dimension: its statements run
        only where the index is in range, but every work-item reaches each barrier
        (OpenCL requires it), so barriers stay outside the condition. Variables are
        declared outside the condition so that statements after a barrier see them."""
        cond = " && ".join(self.guards)
        run: list[ast.Stmt] = []

        def flush() -> None:
            if not run:
                return
            for st in run:
                if isinstance(st, ast.Declaration):
                    self.line = st.span.line
                    self.declaration(st, split=True)
            self.line = run[0].span.line
            self.emit(f"if ({cond}) {{")
            self.indent += 1
            for st in run:
                if isinstance(st, ast.Declaration):
                    v = self.lookup(st.name, st)
                    if st.init is not None and v.qualifier != "__local":
                        self.line = st.span.line
                        self.emit(f"{v.cname} = {_CPrinter(self).expr(st.init)};")
                else:
                    self.statement(st)
            self.indent -= 1
            self.emit("}")
            run.clear()

        for st in stmts:
            if not any(isinstance(n, ast.Barrier) for n in ast.walk(st)):
                run.append(st)
                continue
            flush()
            self.line = st.span.line
            if isinstance(st, ast.Barrier):
                self.statement(st)
            elif isinstance(st, ast.Block):
                self.emit("{")
                self.scopes.append({})
                self.indent += 1
                self.guarded(st.statements)
                self.indent -= 1
                self.scopes.pop()
                self.emit("}")
            elif isinstance(st, ast.For) and self.uniform_for(st):
                self.scopes.append({})
                header = self.for_header(st)
                self.emit(f"for ({header}) {{")
                self.scopes.append({})
                self.indent += 1
                body = st.body
                self.guarded(body.statements if isinstance(body, ast.Block) else (body,))
                self.indent -= 1
                self.scopes.pop()
                self.emit("}")
                self.scopes.pop()
            else:
                raise _err("opencl-guarded-barrier", "a barrier inside this statement: the "
                           "foreach around it is smaller than the one beside it, so the "
                           "work-items beyond its size would skip the barrier", st,
                           "put the barrier directly in the foreach body or in a for loop "
                           "whose bounds are the same for every unit, or give the loops "
                           "side by side the same size")
        flush()

    def uniform(self, e: ast.Expr | None, own: set[str]) -> bool:
        """Whether ``e`` has the same value in every work-item of a work-group."""
        if e is None:
            return True
        for n in ast.walk(e):
            if isinstance(n, ast.Index):
                return False
            if isinstance(n, ast.Name) and n.id not in own:
                v = self.lookup(n.id, n)
                if not (v.uniform or v.kind == "const"
                        or v.kind == "param" and not v.type.is_array and not v.by_pointer):
                    return False
        return True

    def uniform_for(self, s: ast.For) -> bool:
        own = set()
        if isinstance(s.init, ast.Declaration):
            own.add(s.init.name)
            if not self.uniform(s.init.init, own):
                return False
        elif s.init is not None:
            return False
        upd = s.update.value if isinstance(s.update, ast.Assign) else None
        target = s.update.target if isinstance(s.update, ast.Assign | ast.IncDec) else None
        return (self.uniform(s.cond, own) and self.uniform(upd, own)
                and isinstance(target, ast.Name) and target.id in own)

    def for_loop(self, s: ast.For) -> None:
        counted = vectorize.counted_loop(s)
        start = trip = None
        if counted is not None:
            var, first, bound, inclusive = counted
            start, end = self.constant(first), self.constant(bound)
            if start is not None and end is not None:
                trip = end - start + inclusive
        if trip is not None:
            vec = vectorize.analyse(s, var, trip, self.find, self.volatile_arrays)
            if vec is not None and self.vector_loop(s, vec, start):
                return
            if 0 < trip <= vectorize.MAX_UNROLL:
                self.emit("#pragma unroll")
        self.scopes.append({})
        self.emit(f"for ({self.for_header(s)}) {{")
        self.block(s.body)
        self.emit("}")
        self.scopes.pop()

    def constant(self, e: ast.Expr) -> int | None:
        """The value of ``e`` if it is a constant of the program (literals, ``const``
        values, hardware properties), else None."""
        try:
            return _constant_size(self.plan_expr(e))
        except McplError:
            return None

    def find(self, name: str) -> _Var | None:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return None

    def vector_loop(self, s: ast.For, vec: vectorize.VectorLoop, start: int) -> bool:
        """Emit ``s`` as runs of 4 iterations, each a vector path guarded by its
        conditions and alignment, with the iterations one by one as the fallback
        (see :mod:`mcl.opencl.vectorize`). False (nothing emitted) if a name clashes."""
        var = vec.var
        run = f"{self.cname(var)}_run"
        if run in self.names:
            return False
        width = vectorize.WIDTH
        p = _CPrinter(self)
        self.scopes.append({})
        if vec.trip == width:
            base: ast.Expr = ast.Literal(start)
            self.emit("{   " + f"// loop {var}: 4 iterations as one vector access")
        else:
            if vec.trip <= vectorize.MAX_UNROLL:
                self.emit("#pragma unroll")
            self.emit(f"for (int {run} = {start}; {run} < {start + vec.trip}; {run} += {width}) "
                      f"{{   // loop {var}: runs of 4 iterations as vector accesses")
            self.declare(_Var(run, run, ast.Type("int"), "local"))
            base = ast.Name(run)
        self.indent += 1
        defs = {d.name: d.init for d in vec.decls}
        read = {id(v): v.read for scope in self.scopes for v in scope.values()}
        conds = [p.expr(c) for c in vectorize.lane_conditions(vec, base)]
        for acc in vec.memory_accesses():
            first = vectorize.substitute(acc.index, vectorize.lane(var, base, 0), defs)
            if not self.aligned(acc.name, first):
                elem = self.lookup(acc.name).type.name
                conds.append(f"((size_t)&{p.expr(first)} & {width * _SIZES[elem] - 1}) == 0")
        if conds:
            self.emit(f"if ({conds[0]}" + ("" if len(conds) > 1 else ") {"))
            for i, c in enumerate(conds[1:], 1):
                self.emit(f"    && {c}" + (") {" if i == len(conds) - 1 else ""))
            self.indent += 1
        self.scopes.append({})
        self.emit(f"const int {self.cname(var)} = {p.expr(base)};")
        self.declare(_Var(var, self.cname(var), ast.Type("int"), "local"))
        for d in vec.decls:
            self.declaration(d)
        for i, copy in enumerate(vec.copies):
            self.vector_copy(copy, var, i)
        self.scopes.pop()
        if conds:   # the fallback: the run's iterations one by one
            for scope in self.scopes:   # (it reads what the original loop reads)
                for v in scope.values():
                    v.read = read.get(id(v), v.read)
            self.indent -= 1
            self.emit("} else {")
            self.indent += 1
            self.emit("#pragma unroll")
            self.scopes.append({})
            b = p.expr(base)
            end = p.expr(vectorize.lane(var, base, width)[var])
            self.emit(f"for (int {self.cname(var)} = {b}; {self.cname(var)} < {end}; "
                      f"{self.cname(var)}++) {{")
            self.declare(_Var(var, self.cname(var), ast.Type("int"), "local"))
            self.block(s.body)
            self.emit("}")
            self.scopes.pop()
            self.indent -= 1
            self.emit("}")
        self.indent -= 1
        self.emit("}")
        self.scopes.pop()
        return True

    def aligned(self, name: str, index: ast.Index) -> bool:
        """Whether ``&name[index]`` is aligned for a vector access whatever the values
        of the names in it: the array starts aligned (an OpenCL buffer, or a local
        array declared aligned) and the offset is a multiple of the vector width."""
        v = self.lookup(name)
        if not (v.qualifier == "__local" or v.kind == "param"):
            return False
        return vectorize.multiple_of(
            vectorize.flat_index(index, v.type.sizes), vectorize.WIDTH,
            lambda n: self.fixed.get(n.id), self.constant)

    def vector_copy(self, copy: vectorize.Copy, var: str, i: int) -> None:
        """One assignment of a vectorised loop body, for all 4 lanes at once."""
        p = _CPrinter(self)
        width = vectorize.WIDTH
        self.line = copy.stmt.span.line
        here = ast.Name(var)

        def lanes(e: ast.Expr) -> list[str]:
            return [p.expr(vectorize.substitute(e, vectorize.lane(var, here, j), {}))
                    if j else p.expr(e) for j in range(width)]

        def vector(acc: vectorize.Access, const: str) -> str:
            v = self.lookup(acc.name)
            return f"*({v.qualifier} {const}{v.type.name}{width}*)&{p.expr(acc.index)}"

        self.mark_written(copy.stmt.target)
        t, val = copy.target, copy.value
        elem = self.lookup(t.name).type.name
        if isinstance(val, vectorize.Access) and val.memory and not t.memory:
            self.emit(f"const {elem}{width} {self.cname(var)}_v{i} = {vector(val, 'const ')};")
            values = [f"{self.cname(var)}_v{i}.s{j}" for j in range(width)]
        elif isinstance(val, vectorize.Access) and not val.memory:
            values = lanes(val.index)
        elif not isinstance(val, vectorize.Access):
            values = [p.expr(val)] * width
        if t.memory:
            if isinstance(val, vectorize.Access) and val.memory:
                rhs = vector(val, "const ")
            elif not isinstance(val, vectorize.Access):
                rhs = f"({elem}{width})({values[0]})"
            else:
                rhs = f"({elem}{width})({', '.join(values)})"
            self.emit(f"{vector(t, '')} = {rhs};")
        else:
            for target, value in zip(lanes(t.index), values, strict=True):
                self.emit(f"{target} = {value};")

    def for_header(self, s: ast.For) -> str:
        p = _CPrinter(self)
        init = ""
        if isinstance(s.init, ast.Declaration):
            v = self.declare(_Var(s.init.name, self.cname(s.init.name), s.init.type, "local"))
            init = f"{_ctype(s.init.type.name, self)} {v.cname}"
            if s.init.init is not None:
                init += f" = {p.expr(s.init.init)}"
        elif s.init is not None:
            init = p.assign(s.init)
        cond = p.expr(s.cond) if s.cond is not None else ""
        if isinstance(s.update, ast.Assign):
            upd = p.assign(s.update)
        elif isinstance(s.update, ast.IncDec):
            self.mark_written(s.update.target)
            upd = f"{p.expr(s.update.target)}{s.update.op}"
        else:
            upd = ""
        return f"{init}; {cond}; {upd}"

    def declaration(self, d: ast.Declaration, split: bool = False) -> None:
        """``split``: declare a scalar without its initial value (assigned later)."""
        p = _CPrinter(self)
        t = d.type
        self.record_type(t)
        groups = [fe.group for fe in self.enclosing]
        space = d.space or self.default_space(groups)
        qualifier = self.target.qualifier(space) if space in self.target.spaces else "__private"
        if d.space and d.space not in self.target.spaces:
            raise _err("opencl-bad-space", f"memory space '{d.space}' is not one of "
                       f"{self.target.name}", d)
        kind = "const" if d.const and not t.is_array else "local"
        ctype = _ctype(t.name, self)
        if qualifier == "__constant":
            raise _err("opencl-bad-space", f"'{d.name}' is declared in read-only memory space "
                       f"'{space}' inside a kernel", d, "pass it as a parameter instead")
        innermost = bool(self.enclosing) and id(self.enclosing[-1]) in self.leaves
        if qualifier == "__global":
            if not innermost and (t.is_array or d.space and not d.const):
                self.scratch(d, space)
                return
            qualifier = "__private"   # one copy per work-item
        v = _Var(d.name, self.cname(d.name), t, kind, qualifier, space,
                 init=d.init if kind == "const" else None)
        if t.is_array:
            sizes = [self.array_size(e) for e in t.sizes]
            total = _fold(" * ".join(f"({s})" if not _simple(s) else s for s in sizes))
            if qualifier == "__local":
                if d.init is not None:
                    raise _err("opencl-local-init", f"'{d.name}' is in '{space}', which cannot "
                               "have an initial value", d, "assign it in the loop body")
                vol = "volatile " if d.name in self.volatile_arrays else ""
                # aligned for vector accesses (mcl.opencl.vectorize)
                align = (f" __attribute__((aligned({vectorize.WIDTH * _SIZES[t.name]})))"
                         if t.name in vectorize.VECTOR_TYPES and not vol else "")
                self.hoisted.append((f"__local {vol}{ctype} {v.cname}[{total}]{align};",
                                     d.span.line))
                self.local_bytes.append(_fold(f"({total}) * {_SIZES.get(t.name, 4)}"))
            else:
                if d.init is not None:
                    raise _err("opencl-unsupported", "an array with an initial value", d)
                self.emit(f"{ctype} {v.cname}[{total}];")
        else:
            if qualifier == "__local":
                if d.init is not None:
                    raise _err("opencl-local-init", f"'{d.name}' is in '{space}', which cannot "
                               "have an initial value", d, "assign it in the loop body")
                vol = "volatile " if d.name in self.volatile_arrays else ""
                self.hoisted.append((f"__local {vol}{ctype} {v.cname};", d.span.line))
                self.local_bytes.append(str(_SIZES.get(t.name, 4)))
            elif split:
                self.emit(f"{ctype} {v.cname};")
            else:
                const = "const " if d.const else ""
                init = f" = {p.expr(d.init)}" if d.init is not None else ""
                self.emit(f"{const}{ctype} {v.cname}{init};")
        self.declare(v)
        base = v
        for view in d.views:
            base = self.view(view, base)

    def scratch(self, d: ast.Declaration, space: str) -> None:
        """A variable in global memory shared by the units of the loops inside its
        declaration (per-block scratch): the host allocates one slice per unit of
        the enclosing loops in an extra buffer; the variable points at its slice."""
        t = d.type
        if d.init is not None:
            raise _err("opencl-global-init", f"'{d.name}' is in '{space}' and shared by a group "
                       "of units, so it cannot have an initial value", d,
                       "assign it in the loop body (one unit, then a barrier)")
        if any(a.name == d.name for a, _ in self.scratch_args):
            raise _err("opencl-unsupported", f"two arrays named '{d.name}' in '{space}' in one "
                       "kernel", d, "rename one of them")
        ctype = _ctype(t.name, self)
        sizes = [self.plan_expr(e) for e in t.sizes] if t.is_array else ["1"]
        per_slice = _product(sizes)
        loops = list(self.enclosing)
        count = _product([self.plan_expr(fe.size) for fe in loops])
        slice_ = ast.Literal(0) if not loops else ast.Name(loops[0].var.name)
        for fe in loops[1:]:
            slice_ = ast.Binary("+", ast.Binary("*", slice_, _Paren(self.inline(fe.size))),
                                ast.Name(fe.var.name))
        slice_text = _CPrinter(self).expr(slice_)
        cname = self.cname(d.name)
        base = f"{cname}_slices"
        stride = per_slice if _simple(per_slice) else f"({per_slice})"
        where = base if slice_text == "0" else f"{base} + (size_t)({slice_text}) * {stride}"
        self.emit(f"__global {ctype}* const {cname} = {where};   "
                  f"// one slice per unit of the loops around it")
        v = _Var(d.name, cname, t, "local", "__global", space, by_pointer=not t.is_array)
        self.scratch_args.append((Argument(d.name, "scratch", t.name, DTYPES.get(t.name, t.name),
                                           (count, *sizes), space, "__global", True, True),
                                  f"__global {ctype}* restrict {base}"))
        self.declare(v)
        base_var = v
        for view in d.views:
            base_var = self.view(view, base_var)

    def array_size(self, e: ast.Expr) -> str:
        """A size of a local or private array as a compile-time expression: parameters it
        needs become compile-time sizes."""
        inlined = self.inline(e)
        for n in ast.walk(inlined):
            if isinstance(n, ast.Name):
                param = next(p for p in self.f.params if p.name == n.id)
                self.specialized[n.id] = param
        return _fold(_CPrinter(self, plan=True).expr(inlined))

    def view(self, view: ast.View, base: _Var) -> _Var:
        if base.base is not None and base.tiled:
            raise _err("opencl-unsupported", "a view of a tiled view", view)
        bt = base.type
        vt = view.type
        tiled = (len(bt.dims) == 1 and len(vt.dims) > 1
                 and all(len(level) == len(bt.dims[0]) for level in vt.dims))
        if tiled:
            tiled = self.same_sizes(bt, vt, view)
        self.record_type(vt)
        return self.declare(_Var(view.name, base.cname, vt, "view", base.qualifier, base.space,
                                 base=base.root if not base.tiled else base, tiled=tiled))

    def same_sizes(self, bt: ast.Type, vt: ast.Type, where: ast.Node) -> bool:
        """Whether the view ``vt`` tiles each dimension of ``bt`` (the product of its
        sizes per dimension equals the base's size), compared with sympy."""
        from mcl.mcpl.symbolic import to_sympy as _to_sympy

        def to_sympy(e: ast.Expr):
            return _to_sympy(ast.transform(
                e, lambda n: n.inner if isinstance(n, _Paren) else None))
        rank = len(bt.dims[0])
        for k in range(rank):
            prod = 1
            for level in vt.dims:
                s = to_sympy(self.inline(level[k]))
                if s is None:
                    return False
                prod = prod * s
            b = to_sympy(self.inline(bt.dims[0][k]))
            if b is None or (prod - b).simplify() != 0:
                return False
        return True

    # ---- reads and writes

    def mark_written(self, target: ast.Expr) -> None:
        root = _root_name(target)
        if root is not None:
            self.lookup(root.id, root).root.written = True

    def record_type(self, t: ast.Type) -> None:
        if t.is_primitive or t.name in self.records:
            return
        td = self.find_type(t.name)
        if td is None:
            raise _err("opencl-unknown-type", f"unknown type '{t.name}'", t)
        for fld in td.fields:
            self.record_type(fld.type)
        self.records[t.name] = td

    def imported_modules(self) -> Iterator[ast.Module]:
        from mcl.mcpl.resolve import find_module
        from mcl.mcpl.source import parse_file
        for imp in self.module.imports:
            path = find_module(imp.path, self.module.file)
            if path is None:
                continue
            try:
                yield parse_file(str(path))
            except McplError:
                continue

    def find_type(self, name: str) -> ast.TypeDef | None:
        for td in self.module.types:
            if td.name == name:
                return td
        for m in self.imported_modules():
            for td in m.types:
                if td.name == name:
                    return td
        return None

    def find_function(self, name: str) -> ast.Function | None:
        f = self.module.function(name)
        if f is not None:
            return f
        for m in self.imported_modules():
            if m.name == self.f.hardware:
                continue
            g = m.function(name)
            if g is not None and not _is_kernel(g):
                return g
        return None

    def helper(self, name: str, node: ast.Call, spaces: tuple[str | None, ...]) -> _Helper:
        """A user function called from the kernel, generated once per combination of
        the address spaces of its pointer arguments. Parameters are passed by reference
        (MCPL semantics) where that matters: arrays as pointers, and scalars the function
        writes as pointers to the caller's variable; other scalars by value."""
        key = (name, spaces)
        if key in self.helper_info:
            return self.helper_info[key]
        g = self.find_function(name)
        if g is None:
            raise _err("opencl-unknown-function", f"unknown function '{name}'", node)
        if _is_kernel(g):
            raise _err("opencl-unsupported", f"'{name}' has foreach loops; a kernel cannot call "
                       "another kernel", node)
        cname = f"mcl_{name}" if name in BUILTIN_FUNCTIONS or name in RESERVED else name
        taken = {h.cname for (n, _), h in self.helper_info.items() if n == name}
        if taken:
            cname += "_" + "_".join(q.strip("_") for q in spaces if q is not None)
        by_pointer: set[int] = set()
        for _attempt in range(2):
            sub = _KernelGen(self.module, g, self.target, records=self.records,
                             helpers=self.helpers, helper_info=self.helper_info,
                             uses_double=self.uses_double)
            sub.indent = 1
            sub.scopes = [{}]
            params, pvars = [], []
            for i, (p, q) in enumerate(zip(g.params, spaces, strict=True)):
                self.record_type(p.type)
                ctype = _ctype(p.type.name, self)
                if p.type.is_array or i in by_pointer:
                    v = sub.declare(_Var(p.name, sub.cname(p.name), p.type, "param", q,
                                         by_pointer=not p.type.is_array))
                    params.append(f"{q} {ctype}* {v.cname}")
                else:
                    v = sub.declare(_Var(p.name, sub.cname(p.name), p.type, "param"))
                    params.append(f"{ctype} {v.cname}")
                pvars.append(v)
            sub.scopes.append({})
            sub.statements(g.body.statements)
            written = {i for i, v in enumerate(pvars) if v.written}
            scalars = {i for i in written if not g.params[i].type.is_array}
            if scalars <= by_pointer:
                break
            for i in scalars - by_pointer:
                if spaces[i] is None:
                    raise _err("opencl-helper-argument", f"'{name}' writes its parameter "
                               f"'{g.params[i].name}', but the call passes a value that is not "
                               "a variable", node, "pass a variable or an array element")
            by_pointer |= scalars
        self.float_atomics |= sub.float_atomics
        body = "\n".join(sub.lines)
        info = _Helper(cname, frozenset(by_pointer), frozenset(written),
                       frozenset(i for i, v in enumerate(pvars) if v.read))
        # after the helpers it calls, which C needs declared first
        self.helpers[key] = (f"inline {_ctype(g.return_type.name, self)} {cname}"
                             f"({', '.join(params) or 'void'})\n{{\n{body}\n}}\n")
        self.helper_info[key] = info
        return info

    # ---- output

    def assemble(self, params: list[_Var]) -> GeneratedKernel:
        f = self.f
        t = self.target
        args: list[Argument] = []
        sig: list[str] = []
        for v in params:
            if v.name in self.specialized:
                continue
            elem = v.type.name
            if v.type.is_array or v.by_pointer:
                written = v.written
                const = "" if written or v.qualifier == "__constant" else "const "
                sig.append(f"{v.qualifier} {const}{_ctype(elem, self)}* restrict {v.cname}")
                shape = tuple(_CPrinter(self, plan=True).expr(self.inline(e))
                              for e in v.type.sizes) if v.type.is_array else ("1",)
                args.append(Argument(v.name, "buffer", elem, DTYPES.get(elem, elem), shape,
                                     v.space, v.qualifier, v.read, written))
            else:
                sig.append(f"const {_ctype(elem, self)} {v.cname}")
                args.append(Argument(v.name, "scalar", elem, DTYPES.get(elem, elem)))
        for arg, param in self.scratch_args:
            args.append(arg)
            sig.append(param)
        groups, local, glob = self.launch_sizes()
        file = Path(self.module.file).name
        head = [f"// Generated by mcl from {file}: function {f.name} at level {t.name}.",
                f"// Launch plan: {f.name}.json (global size {', '.join(glob)}; "
                f"local size {', '.join(local)}).", ""]
        if self.uses_double:
            head += ["#pragma OPENCL EXTENSION cl_khr_fp64 : enable", ""]
        compile_time = []
        for name, p in self.specialized.items():
            default = None
            if p.default is not None:
                try:
                    default = evaluate(_CPrinter(self, plan=True).expr(p.default), {})
                except McplError:
                    default = None
            size = CompileTimeSize(name, p.type.name, default)
            compile_time.append(size)
            head.append(f"// {name} sizes an array: it is a compile-time constant "
                        f"(build with -D {size.macro}=<value>)")
            head.append(f"#ifndef {size.macro}")
            head.append(f"#define {size.macro} {default}" if default is not None
                        else f"#error \"build with -D {size.macro}=<value>\"")
            head += ["#endif", f"#define {name} {size.macro}", ""]
        for td in self.records.values():
            fields = " ".join(f"{_ctype(x.type.name, self)} {x.name};" for x in td.fields)
            head.append(f"typedef struct {{ {fields} }} {self.cname(td.name)};")
        if self.records:
            head.append("")
        for q in sorted(self.float_atomics):
            head += _float_atomic_helper(q).splitlines() + [""]
        for h in self.helpers.values():
            head += h.splitlines() + [""]
        # A work-group size fixed at generation time is declared: the OpenCL compiler
        # then plans registers for it (NVIDIA's otherwise assumes at most 256 work-items
        # per group and refuses larger launches).
        fixed = [_constant_size(x) for x in local]
        platform_options: tuple[tuple[str, tuple[str, ...]], ...] = ()
        if all(x is not None for x in fixed):
            fixed += [1] * (3 - len(fixed))
            head.append("__attribute__((reqd_work_group_size("
                        + ", ".join(str(x) for x in fixed[:3]) + ")))")
            registers = _registers_per_work_item(t.hardware, fixed[0] * fixed[1] * fixed[2])
            if registers is not None:
                platform_options = tuple(
                    (key, tuple(o.format(registers=registers) for o in opts))
                    for key, opts in t.platform_options)
        head.append(f"__kernel void {self.cname(f.name)}(" + (",\n" + " " * (
            len(self.cname(f.name)) + 15)).join(sig) + ")")
        head.append("{")
        origins = [0] * len(head)
        for text, line in self.hoisted:
            head.append("    " + text)
            origins.append(line)
        lines = head + self.lines + ["}", ""]
        origins += self.origins + [0, 0]
        line_map = {i + 1: o for i, o in enumerate(origins) if o}
        local_mem = _fold(" + ".join(self.local_bytes)) if self.local_bytes else "0"
        plan = LaunchPlan(
            kernel=self.cname(f.name), source=f"{f.name}.cl", target=t.name,
            mcpl=self.module.file, arguments=tuple(args), compile_time=tuple(compile_time),
            num_groups=tuple(groups), local_size=tuple(local), global_size=tuple(glob),
            local_memory_bytes=local_mem, build_options=t.build_options,
            parameters=tuple(p.name for p in f.params),
            assumes_lockstep=bool(self.volatile_arrays), platform_options=platform_options,
            line_map=line_map)
        return GeneratedKernel(f.name, "\n".join(lines), plan)


# --------------------------------------------------------------------------- expressions


@dataclass(frozen=True)
class _Paren(ast.Expr):
    """An inlined definition: printed in parentheses when needed, like any operand."""

    inner: ast.Expr


def _names(f: ast.Function) -> set[str]:
    """Every name used or declared in ``f``."""
    out = {p.name for p in f.params}
    for n in ast.walk(f):
        if isinstance(n, ast.Name):
            out.add(n.id)
        elif isinstance(n, ast.Declaration):
            out.add(n.name)
    return out


def _fixed(f: ast.Function) -> dict[str, ast.Expr]:
    """The initial values of the scalar locals of ``f`` that are declared once and
    never assigned: each such name stands for its definition wherever it is seen."""
    count: dict[str, int] = {}
    init: dict[str, ast.Expr] = {}
    assigned = {p.name for p in f.params}
    for n in ast.walk(f):
        if isinstance(n, ast.Declaration):
            count[n.name] = count.get(n.name, 0) + 1
            if n.init is not None and not n.type.is_array and n.type.name == "int":
                init[n.name] = n.init
        elif isinstance(n, ast.Assign | ast.IncDec) and isinstance(n.target, ast.Name):
            assigned.add(n.target.id)
    return {k: e for k, e in init.items() if count[k] == 1 and k not in assigned}


def _root_name(e: ast.Expr) -> ast.Name | None:
    while isinstance(e, ast.Index | ast.Field):
        e = e.base
    return e if isinstance(e, ast.Name) else None


def _ctype(name: str, gen: _KernelGen) -> str:
    return name if name in ast.PRIMITIVE_TYPES else gen.cname(name)


def _simple(s: str) -> bool:
    return s.replace("_", "").isalnum()


def _ends_with_barrier(fe: ast.ForEach) -> bool:
    """Whether every unit of ``fe`` ends with a barrier (then its successor needs none)."""
    body = fe.body
    stmts = body.statements if isinstance(body, ast.Block) else (body,)
    if not stmts:
        return False
    last = stmts[-1]
    return isinstance(last, ast.Barrier) or isinstance(last, ast.ForEach) and \
        _ends_with_barrier(last)


def _top_level(text: str) -> tuple[str, set[str]]:
    """``text`` without parentheses around all of it, and the operators outside any
    parentheses in it."""
    while text.startswith("(") and text.endswith(")"):
        depth = 0
        for i, ch in enumerate(text):
            depth += ch == "("
            depth -= ch == ")"
            if depth == 0 and i < len(text) - 1:
                break
        else:
            text = text[1:-1].strip()
            continue
        break
    ops, depth = set(), 0
    for ch in text:
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0 and ch in "+-*/%<>?&|^":
            ops.add(ch)
    return text, ops


def _product(factors: Sequence[str]) -> str:
    """The product of plan expressions, folded, with the parentheses C needs."""
    parts = [f for f in factors if f != "1"]
    if not parts:
        return "1"
    out = []
    for i, f in enumerate(parts):
        f, ops = _top_level(f)
        allowed = {"*", "/", "%"} if i == 0 else {"*"}
        out.append(f if ops <= allowed else f"({f})")
    return _fold(" * ".join(out))


def _fold(text: str) -> str:
    """A purely numeric expression as its value (C semantics); others unchanged."""
    try:
        return str(evaluate(text, {}))
    except (McplError, RecursionError):
        return text


def _float_atomic_helper(qualifier: str) -> str:
    space = qualifier.strip("_")
    return (f"// atomicAdd on a float in {space} memory: compare-and-swap on its bits\n"
            f"inline void mcl_atomic_add_float_{space}(volatile {qualifier} float *p, float v)\n"
            "{\n"
            "    float old = *p;\n"
            "    float seen;\n"
            "    while ((seen = as_float(atomic_cmpxchg((volatile "
            f"{qualifier} unsigned int *)p,\n"
            "                    as_uint(old), as_uint(old + v)))) != old) {\n"
            "        old = seen;\n"
            "    }\n"
            "}")


def _registers_per_work_item(hardware, work_group_size: int) -> int | None:
    """32-bit registers a work-item may use so that its work-group fits in the register
    files of one holder of work-groups (an SM: the files of all its partitions) of the
    description (None when it has no register memory)."""
    if hardware is None:
        return None
    from mcl.analyses.resources import max_registers
    return max_registers(hardware, work_group_size)


def _constant_size(expr: str) -> int | None:
    """The value of a launch-size expression that names no parameter, else None."""
    try:
        return int(evaluate(expr, {}))
    except (McplError, ValueError, TypeError, ZeroDivisionError):
        return None


class _CPrinter:
    """Prints MCPL expressions as OpenCL C; ``plan``: sizes in the parameters only (no
    flattening, no marking of reads)."""

    def __init__(self, gen: _KernelGen, plan: bool = False):
        self.gen = gen
        self.plan = plan

    def expr(self, e: ast.Expr) -> str:
        return self.p(e)[0]

    def p(self, e: ast.Expr) -> tuple[str, int]:
        g = self.gen
        if isinstance(e, _Paren):
            return self.p(e.inner)
        if isinstance(e, ast.Literal):
            return self.literal(e), _ATOM
        if isinstance(e, ast.Name):
            if self.plan:
                return e.id, _ATOM
            v = g.lookup(e.id, e)
            v.root.read = True
            if v.by_pointer:
                return f"{v.cname}[0]", _ATOM
            return v.cname, _ATOM
        if isinstance(e, ast.HwdRef):
            return self.literal(g.hwd_literal(e)), _ATOM
        if isinstance(e, ast.Index):
            return self.index(e), _ATOM
        if isinstance(e, ast.Field):
            return f"{self.operand(e.base, _ATOM)}.{e.name}", _ATOM
        if isinstance(e, ast.Unary):
            return f"{e.op}{self.operand(e.operand, _UNARY_PREC)}", _UNARY_PREC
        if isinstance(e, ast.Binary):
            prec = _PREC[e.op]
            left = self.operand(e.left, prec)
            right = self.operand(e.right, prec + 1)
            return f"{left} {e.op} {right}", prec
        if isinstance(e, ast.Ternary):
            return (f"{self.operand(e.cond, 1)} ? {self.operand(e.then, 1)} : "
                    f"{self.operand(e.orelse, 1)}"), 0
        if isinstance(e, ast.Cast):
            return f"({_ctype(e.type.name, g)}){self.operand(e.operand, _UNARY_PREC)}", \
                _UNARY_PREC
        if isinstance(e, ast.Call):
            return self.call(e), _ATOM
        raise _err("opencl-unsupported", f"cannot generate {type(e).__name__}", e)

    def operand(self, e: ast.Expr, prec: int) -> str:
        text, p = self.p(e)
        return text if p >= prec else f"({text})"

    def literal(self, e: ast.Literal) -> str:
        if e.kind == "bool":
            return "true" if e.value else "false"
        if e.kind == "float":
            text = repr(float(e.value))
            return text if self.gen.uses_double or self.plan else text + "f"
        return str(e.value)

    def assign(self, s: ast.Assign) -> str:
        self.gen.mark_written(s.target)
        root = _root_name(s.target)
        var = self.gen.lookup(root.id, root).root if root is not None else None
        was_read = var.read if var is not None else False
        target = self.expr(s.target)
        if var is not None and s.op == "=":
            var.read = was_read     # a plain store does not read the array
        return f"{target} {s.op} {self.expr(s.value)}"

    # ---- arrays

    def index(self, e: ast.Index) -> str:
        base = e.base
        if not isinstance(base, ast.Name):
            raise _err("opencl-unsupported", "indexing something other than a variable", e)
        v = self.gen.lookup(base.id, base)
        if not v.type.is_array:
            raise _err("opencl-not-array", f"'{base.id}' is not an array", e)
        if [len(g) for g in e.groups] != [len(level) for level in v.type.dims]:
            raise _err("opencl-index-count", f"'{base.id}' is indexed as "
                       + "".join(f"[{len(g) * ','}]" for g in e.groups) + " but has shape "
                       + "".join(f"[{len(level)}]" for level in v.type.dims), e)
        v.root.read = True
        idx = [i for grp in e.groups for i in grp]
        if v.base is None:
            offset = self.horner(idx, v.type.sizes)
        elif v.tiled:
            rank = len(v.base.type.dims[0])
            per_dim = []
            for k in range(rank):
                parts = [grp[k] for grp in e.groups]
                sizes = [level[k] for level in v.type.dims]
                per_dim.append(self.horner_text([self.p(x) for x in parts], sizes))
            offset = self.horner_parts(per_dim, v.base.type.sizes)
        else:
            offset = self.horner(idx, v.type.sizes)
        return f"{v.root.cname}[{offset[0]}]"

    def horner(self, idx: Sequence[ast.Expr], sizes: Sequence[ast.Expr]) -> tuple[str, int]:
        return self.horner_text([self.p(i) for i in idx], sizes)

    def horner_text(self, parts: list[tuple[str, int]], sizes: Sequence[ast.Expr]
                    ) -> tuple[str, int]:
        """Row-major offset ``((i0 * s1 + i1) * s2 + i2)...`` from printed indices."""
        acc = parts[0]
        for part, size in zip(parts[1:], sizes[1:], strict=True):
            s_text, s_prec = self.p(size)
            left = acc[0] if acc[1] >= 10 else f"({acc[0]})"
            right = s_text if s_prec > 10 else f"({s_text})"
            i_text = part[0] if part[1] >= 9 else f"({part[0]})"
            acc = (f"{left} * {right} + {i_text}", 9)
        return acc

    def horner_parts(self, parts: list[tuple[str, int]], sizes: Sequence[ast.Expr]
                     ) -> tuple[str, int]:
        return self.horner_text(parts, sizes)

    # ---- calls

    def call(self, e: ast.Call) -> str:
        g = self.gen
        name = e.func
        if name in ATOMICS and g.find_function(name) is None or name == "atomicAdd":
            return self.atomic(e)
        if name not in _FLOAT_MATH and name not in ("min", "max", "abs"):
            return self.helper_call(e)
        args = [self.expr(a) for a in e.args]
        if name in _FLOAT_MATH:
            types = [self.type_of(a) for a in e.args]
            args = [a if t in ("float", "double") else f"(float){self.operand(x, _UNARY_PREC)}"
                    for a, t, x in zip(args, types, e.args, strict=True)]
            return f"{name}({', '.join(args)})"
        if name in ("min", "max", "abs"):
            types = [self.type_of(a) for a in e.args]
            if any(t in ("float", "double") for t in types):
                want = "double" if "double" in types else "float"
                args = [a if t in ("float", "double") else f"({want}){self.operand(x, 11)}"
                        for a, t, x in zip(args, types, e.args, strict=True)]
                name = {"min": "fmin", "max": "fmax", "abs": "fabs"}[name]
        return f"{name}({', '.join(args)})"

    def helper_call(self, e: ast.Call) -> str:
        g = self.gen
        fn = g.find_function(e.func)
        if fn is None:
            raise _err("opencl-unknown-function", f"unknown function '{e.func}'", e)
        if len(fn.params) != len(e.args):
            raise _err("opencl-helper-argument", f"'{e.func}' takes {len(fn.params)} arguments, "
                       f"not {len(e.args)}", e)
        spaces: list[str | None] = []
        for p, a in zip(fn.params, e.args, strict=True):
            root = _root_name(a)
            var = g.lookup(root.id, root) if root is not None else None
            if p.const and not p.type.is_array:
                spaces.append(None)     # passed by value
            elif p.type.is_array:
                if not isinstance(a, ast.Name) or var is None or not var.type.is_array:
                    raise _err("opencl-helper-argument", f"'{e.func}' takes an array as "
                               f"'{p.name}': pass a whole array variable", a)
                if var.base is not None and var.tiled:
                    raise _err("opencl-helper-argument", f"'{root.id}' is a tiled view, whose "
                               f"elements are not in the order '{e.func}' indexes them", a,
                               "pass the array it views")
                spaces.append(var.root.qualifier)
            elif var is not None and var.kind in ("local", "param") and (
                    isinstance(a, ast.Name) or var.type.is_array):
                spaces.append(var.root.qualifier if var.type.is_array or var.by_pointer
                              else "__private")
            else:
                spaces.append(None)
        h = g.helper(e.func, e, tuple(spaces))
        args = []
        for i, (p, a) in enumerate(zip(fn.params, e.args, strict=True)):
            if p.type.is_array:
                v = g.lookup(a.id, a).root
                v.read |= i in h.read
                v.written |= i in h.written
                args.append(v.cname)
            elif i in h.by_pointer:
                root = _root_name(a)
                v = g.lookup(root.id, root).root
                was_read = v.read
                args.append(f"&{self.operand(a, _UNARY_PREC)}")
                v.read = was_read or i in h.read
                v.written = True
            else:
                args.append(self.expr(a))
        return f"{h.cname}({', '.join(args)})"

    def atomic(self, e: ast.Call) -> str:
        g = self.gen
        target = e.args[0]
        root = _root_name(target)
        if root is None:
            raise _err("opencl-bad-atomic", f"the first argument of '{e.func}' must be a "
                       "variable or an array element", e)
        v = g.lookup(root.id, root).root
        v.written = True
        if v.qualifier not in ("__global", "__local"):
            raise _err("opencl-bad-atomic", f"'{e.func}' on '{root.id}', which is private to "
                       "one unit: atomics need global or local memory", e,
                       "use a plain update on private variables")
        ptr = f"&{self.operand(target, _UNARY_PREC)}"
        rest = [self.expr(a) for a in e.args[1:]]
        elem = self.type_of(target)
        if elem in ("float", "double"):
            if e.func != "atomicAdd" or elem == "double":
                raise _err("opencl-bad-atomic", f"'{e.func}' on a '{elem}' is not available in "
                           "OpenCL", e, "use an int variable or atomicAdd on float")
            if g.target.float_atomic_add == "native":
                return f"atomic_add({ptr}, {rest[0]})"
            g.float_atomics.add(v.qualifier)
            return f"mcl_atomic_add_float_{v.qualifier.strip('_')}({ptr}, {rest[0]})"
        return f"{ATOMICS[e.func]}({', '.join([ptr, *rest])})"

    def type_of(self, e: ast.Expr) -> str:
        g = self.gen
        if isinstance(e, _Paren):
            return self.type_of(e.inner)
        if isinstance(e, ast.Literal):
            return {"int": "int", "float": "float", "bool": "bool"}[e.kind]
        if isinstance(e, ast.Name | ast.Index):
            root = e if isinstance(e, ast.Name) else e.base
            if isinstance(root, ast.Name):
                return g.lookup(root.id, root).type.name
            return "float"
        if isinstance(e, ast.Field):
            base = self.type_of(e.base)
            td = g.records.get(base) or g.find_type(base)
            if td is not None:
                for fld in td.fields:
                    if fld.name == e.name:
                        return fld.type.name
            return "float"
        if isinstance(e, ast.Cast):
            return e.type.name
        if isinstance(e, ast.Unary):
            return "bool" if e.op == "!" else self.type_of(e.operand)
        if isinstance(e, ast.Binary):
            if _PREC[e.op] <= 7 and e.op not in ("|", "^", "&"):
                return "bool"
            return max(self.type_of(e.left), self.type_of(e.right),
                       key=lambda t: _RANK.get(t, 3))
        if isinstance(e, ast.Ternary):
            return max(self.type_of(e.then), self.type_of(e.orelse),
                       key=lambda t: _RANK.get(t, 3))
        if isinstance(e, ast.HwdRef):
            return "int" if isinstance(g.hwd_literal(e).value, int) else "float"
        if isinstance(e, ast.Call):
            if e.func in ("min", "max", "abs"):
                return max((self.type_of(a) for a in e.args), key=lambda t: _RANK.get(t, 3))
            if e.func in _FLOAT_MATH:
                return "double" if any(self.type_of(a) == "double" for a in e.args) else "float"
            if e.func in ATOMICS:
                return self.type_of(e.args[0])
            f = g.find_function(e.func)
            return f.return_type.name if f is not None else "float"
        return "float"


def source_span(plan: LaunchPlan, cl_line: int) -> Span | None:
    """The MCPL location an OpenCL line came from (for build errors)."""
    line = plan.line_map.get(cl_line)
    return Span(plan.mcpl, line, 1, line, 1) if line else None
