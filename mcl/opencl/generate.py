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

import dataclasses
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from mcl.diagnostics import McplError, error
from mcl.mcpl import ast
from mcl.opencl import async_copy, lanes
from mcl.opencl.assemble import GeneratedKernel, assemble
from mcl.opencl.by_value import by_value_arrays, specialised_size
from mcl.opencl.emit_expressions import (
    BUILTIN_FUNCTIONS,
    RESERVED,
    _CPrinter,
    _ctype,
    _err,
    _fixed,
    _fold,
    _is_kernel,
    _names,
    _Paren,
    _product,
    _Var,
    root_name,
)
from mcl.opencl.emit_statements import _StatementEmission
from mcl.opencl.index_checks import IndexSite, helper_parameters, sites_to_check
from mcl.opencl.plan import Argument, ViewCheck, evaluate
from mcl.opencl.target import Target, load_target

if TYPE_CHECKING:
    from mcl.mcpl.resolve import CheckedModule


# --------------------------------------------------------------------------- entry point


#: the build option of relaxed math (``fast_math``): built-in functions and divisions
#: to the precision the device's fast instructions give
FAST_MATH = "-cl-fast-relaxed-math"


def generate(module: ast.Module | CheckedModule | str | os.PathLike[str],
             target: str | Target | None = None,
             *, function: str | None = None, search_path: Sequence[str | Path] = (),
             specialize: bool = False, fast_math: bool = False,
             one: bool = False, check_indices: bool = False) -> list[GeneratedKernel]:
    """OpenCL kernels and launch plans for the kernels of ``module`` (a path, a
    parsed module or one already checked with ``search_path``). ``target``: a leaf
    name (default: each function's level); a function written above it is
    translated down first. ``function`` picks one; ``one``: a module of several kernels
    without ``function`` is an error, before any is generated (mcl.compile).
    ``specialize``: every ``const`` integer parameter becomes a compile-time size
    (the runtime builds a program per value, and the OpenCL compiler folds the
    index arithmetic); by default only those that size local or private arrays.
    ``fast_math``: the plan's build options ask for relaxed math (:data:`FAST_MATH`):
    built-in functions and divisions to the precision of the fast instructions (with
    NVIDIA's compiler a log costs a quarter of its precise version, an exp or a
    division three quarters: hopper.target's function costs). ``check_indices``: the
    indices the data choose are checked as the kernel runs (mcl.opencl.index_checks:
    the kernels mcl.compile launches; not those mcl gen writes)."""
    # Code is generated only from programs the front end accepts: the generator
    # relies on the checks (foreach nesting, memory spaces, ...) having passed.
    from mcl.mcpl import check
    from mcl.mcpl.resolve import CheckedModule, with_beside
    # the descriptions beside the kernel's file too, for the targets and translations
    # below as for the check (an `import mylevel;` of mylevel.hdl beside it)
    search_path = with_beside(search_path, module.module if isinstance(module, CheckedModule)
                              else module)
    checked = module if isinstance(module, CheckedModule) else \
        check(module if isinstance(module, ast.Module) else str(module), search_path)
    errors = [d for d in checked.diagnostics if d.is_error]
    if errors:
        raise McplError(errors)
    module = checked.module
    kernels = [f for f in module.functions if _is_kernel(f)
               and (function is None or f.name == function)]
    if not kernels:
        names = [f.name for f in module.functions if _is_kernel(f)]
        if function and module.function(function) is None:
            message = f"{module.file} has no function '{function}'"
        elif function:
            message = f"{module.file}: '{function}' has no foreach loops to generate a kernel from"
        else:
            message = f"{module.file} has no function with foreach loops to generate a kernel from"
        raise McplError(error("opencl-no-kernel", message,
                              hint=f"its kernels: {', '.join(names)}" if names else None))
    if one and len(kernels) > 1:
        names = ", ".join(k.name for k in kernels)
        raise McplError(error("opencl-several-kernels", f"the module has several kernels "
                              f"({names})", hint="choose one with function=..."))
    out = []
    for f in kernels:
        tgt = target if isinstance(target, Target) else load_target(
            target or f.hardware, search_path)
        mod, fn = module, f
        if f.hardware != tgt.name:
            mod, fn = _translate(module, f, tgt.name, search_path)
        checks = sites_to_check(checked, f.name) if check_indices else None
        k = _KernelGen(mod, fn, tgt, search_path=tuple(map(str, search_path)),
                       specialize=specialize, index_checks=checks).run()
        if fast_math:
            k = dataclasses.replace(k, plan=dataclasses.replace(
                k.plan, build_options=(*k.plan.build_options, FAST_MATH)))
        out.append(k)
    return out


def function_source(module: ast.Module, f: ast.Function, target: Target) -> str:
    """The OpenCL C of ``f`` (a function of ``module`` without foreach loops) as the
    generator emits the helpers a kernel calls, with the helpers it calls in turn: for
    mcl.skel's skeletons customised by an MCPL function."""
    gen = _KernelGen(module, f, target)
    gen.helper(f.name, None, tuple(None for _ in f.params))
    return "\n".join(gen.helpers.values())


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
    #: it checks indices: it takes pointers to the kernel's privates of the checks last
    checks_indices: bool = False


@dataclass
class _Loop:
    foreach: ast.ForEach
    kind: str                   # "group" | "local"
    dim: int = 0
    id_expr: str = ""
    #: the loops of its chain that share dimension ``dim``, outermost first
    members: list[ast.ForEach] = field(default_factory=list)


@dataclass
class _KernelGen(_StatementEmission):
    module: ast.Module
    f: ast.Function
    target: Target
    lines: list[str] = field(default_factory=list)
    origins: list[int] = field(default_factory=list)
    hoisted: list[tuple[str, int]] = field(default_factory=list)
    scopes: list[dict[str, _Var]] = field(default_factory=list)
    specialized: dict[str, ast.Param] = field(default_factory=dict)
    #: every const integer parameter a compile-time size (generate(specialize=True))
    specialize: bool = False
    #: array parameters passed by value (mcl.opencl.by_value)
    by_value: set[str] = field(default_factory=set)
    local_bytes: list[str] = field(default_factory=list)
    #: views of parameters that cover them only at some sizes (checked at each call)
    view_checks: list[ViewCheck] = field(default_factory=list)
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
    #: module-level constants visible to the kernel (own and imported), in order
    constants: dict[str, ast.Constant] = field(default_factory=dict)
    #: where imported modules are searched (with MCL_PATH), as for the checks
    search_path: tuple[str, ...] = ()
    #: the module-level constants the kernel or its helpers use
    used_constants: set[str] = field(default_factory=set)
    #: the loops over the lanes of a foreach mapped to lanes (mcl.opencl.lanes)
    lane_loops: set[int] = field(default_factory=set)
    #: the declarations of per-lane variables, and those of them declared as arrays of
    #: OpenCL vectors (C name of the vector array, lane count)
    lane_decls: set[int] = field(default_factory=set)
    vector_arrays: dict[str, tuple[str, int]] = field(default_factory=dict)
    #: their variables, the outermost scope of the kernel and of every helper
    constant_vars: dict[str, _Var] = field(default_factory=dict)
    #: copies that may be asynchronous (mcl.opencl.async_copy), and whether one is
    async_candidates: dict[int, async_copy.Candidate] = field(default_factory=dict)
    uses_async_copy: bool = False
    #: (line, column, array) of the accesses whose indices are checked as the kernel
    #: runs (mcl.opencl.index_checks; None: no index is), the sites checked so far
    #: (shared with the helpers), and whether this function's code checks one (it
    #: takes the fault record)
    index_checks: dict[tuple[int, int, str], tuple[int, ...]] | None = None
    index_sites: list[IndexSite] = field(default_factory=list)
    checks_indices: bool = False
    #: every index is checked as it runs: the helpers of a kernel that checks indices,
    #: whose accesses the analyses do not follow
    check_every_index: bool = False

    @property
    def hw(self):
        return self.target.hardware

    # ---- scopes

    def lookup(self, name: str, node: ast.Node | None = None) -> _Var:
        for s in reversed(self.scopes):
            if name in s:
                v = s[name]
                if v.module_level:
                    self.used_constants.add(name)
                return v
        raise _err("opencl-undeclared", f"'{name}' is not declared", node)

    def declare(self, v: _Var) -> _Var:
        self.scopes[-1][v.name] = v
        return v

    def cname(self, name: str) -> str:
        return name + "_" if name in RESERVED else name

    @staticmethod
    def kernel_name(name: str) -> str:
        """The OpenCL name of a kernel: not that of a built-in function (a kernel
        called ``dot`` does not build: INVALID_KERNEL_NAME), as helpers are renamed."""
        return f"mcl_{name}" if name in BUILTIN_FUNCTIONS or name in RESERVED else name

    def emit(self, text: str) -> None:
        self.lines.append("    " * self.indent + text)
        self.origins.append(self.line)

    # ---- the whole kernel

    def run(self) -> GeneratedKernel:
        lane_groups = {g for g, k in self.target.par_groups.items() if k == "lanes"}
        if lane_groups:
            self.f = dataclasses.replace(self.f, body=lanes.lower(self.f.body, lane_groups,
                                                                  self.lane_loops,
                                                                  self.lane_decls))
        f = self.f
        self.uses_double = any(isinstance(n, ast.Type) and n.name == "double"
                               for n in ast.walk(f))
        self.names = _names(f)
        self.fixed = _fixed(f)
        self.scopes = [{}]
        for m in [*self.imported_modules(), self.module]:
            for c in m.constants:
                self.constants[c.name] = c
                self.constant_vars[c.name] = _Var(c.name, self.cname(c.name), c.type, "const",
                                                  init=c.value, module_level=True)
        self.scopes[0].update(self.constant_vars)
        self.plan_loops()
        self.find_lockstep_code()
        if self.target.async_copy is not None and not self.volatile_arrays:
            self.async_candidates = async_copy.candidates(f, list(self.constants))
        self.by_value = by_value_arrays(f, self.target, self.hw, self.specialize)
        params = [self.param(p) for p in f.params]
        if self.specialize:
            for p in f.params:
                if specialised_size(p):
                    self.specialized[p.name] = p
        self.scopes.append({})
        self.statements(f.body.statements)
        return assemble(self, params)

    def param(self, p: ast.Param) -> _Var:
        t = p.type
        if t.is_array or not p.const:
            space = p.space or self.default_space([])
            if space not in self.target.spaces:
                raise _err("opencl-bad-space", f"memory space '{space}' of '{p.name}' is not "
                           f"one of {self.target.name}", p)
            if p.name in self.by_value:   # the work-item's copy of the struct argument
                v = _Var(p.name, self.cname(p.name) + ".v", t, "param", "__private", space)
            else:
                v = _Var(p.name, self.cname(p.name), t, "param", self.target.qualifier(space),
                         space, by_pointer=not t.is_array)
            if v.qualifier not in ("__global", "__constant") and p.name not in self.by_value:
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
                if v.kind == "local" and n.id in self.fixed:
                    # declared once and never assigned (`int rows = p / TILE;`)
                    return _Paren(self.inline(self.fixed[n.id], depth + 1))
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

    def specialized_default(self, p: ast.Param) -> int | float | None:
        """The default value of a compile-time parameter (None: it has none)."""
        if p.default is None:
            return None
        try:
            return evaluate(_CPrinter(self, plan=True).expr(p.default), {})
        except McplError:
            return None

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

    # ---- reads and writes

    def mark_written(self, target: ast.Expr) -> None:
        root = root_name(target)
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
        """The modules this one imports, and those they import (each once): a
        library function may call functions of its own imports."""
        from mcl.mcpl.resolve import find_module
        from mcl.mcpl.source import parse_file
        seen: set[Path] = set()
        todo = [self.module]
        while todo:
            importer = todo.pop(0)
            for imp in importer.imports:
                path = find_module(imp.path, importer.file, self.search_path,
                                   package=importer.package)
                if path is None or path.resolve() in seen:
                    continue
                seen.add(path.resolve())
                try:
                    module = parse_file(str(path))
                except McplError:
                    continue
                todo.append(module)
                yield module

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
                             search_path=self.search_path,
                             helpers=self.helpers, helper_info=self.helper_info,
                             uses_double=self.uses_double, constants=self.constants,
                             used_constants=self.used_constants,
                             constant_vars=self.constant_vars,
                             index_checks=self.index_checks, index_sites=self.index_sites,
                             check_every_index=self.index_checks is not None)
            sub.indent = 1
            sub.scopes = [dict(self.constant_vars)]
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
            if sub.checks_indices:      # where it keeps a fault: the kernel's privates
                params += helper_parameters()
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
                       frozenset(i for i, v in enumerate(pvars) if v.read),
                       sub.checks_indices)
        # after the helpers it calls, which C needs declared first
        self.helpers[key] = (f"inline {_ctype(g.return_type.name, self)} {cname}"
                             f"({', '.join(params) or 'void'})\n{{\n{body}\n}}\n")
        self.helper_info[key] = info
        return info

    # ---- output

    def program_constants(self) -> list[ast.Constant]:
        """The module-level constants the kernel uses and those their values use, in
        the order of definition (program-scope ``__constant`` variables)."""
        needed: set[str] = set()
        todo = list(self.used_constants)
        while todo:
            name = todo.pop()
            if name in needed or name not in self.constants:
                continue
            needed.add(name)
            todo += [n.id for n in ast.walk(self.constants[name].value)
                     if isinstance(n, ast.Name)]
        return [c for c in self.constants.values() if c.name in needed]
