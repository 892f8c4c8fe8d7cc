"""The semantic checks of MCPL against the hardware descriptions its functions name.

One walk per function resolves names in nested scopes, gives every expression
a type, and checks what LANGUAGE.md section 2 requires: declared names, types
and index counts per tile level, imported hardware descriptions, memory spaces
that exist and are visible where they are used (or a default), barriers on
spaces shared by the surrounding units, foreach nesting in the order of the
description with sizes independent of enclosing foreach indices, executable
statements only at the innermost level, constant array sizes, and views that
keep the number of elements (compared with sympy). Which parameters a
function reads and writes is inferred, through calls, before the walk.

Every problem is a diagnostic; the walk goes on after one, so independent
errors are all reported.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcl.diagnostics import Diagnostic, McplError, Related, error, sort_key, warning
from mcl.mcpl import ast
from mcl.mcpl.resolve import CheckedModule, FunctionInfo, Symbol

if TYPE_CHECKING:
    from mcl.mcpl.builder import Unparsed
    from mcl.mcpl.resolve import _Loader

# Numeric types by rank: an operation on two of them has the type of the higher.
_RANK = {"bool": 0, "int": 1, "long": 2, "float": 3, "double": 4}


@dataclass(frozen=True)
class Builtin:
    """A function every module may call: its number of arguments, the parameters it
    writes and how its result type follows from the arguments."""

    arity: int
    writes: frozenset[int] = frozenset()
    result: str = "float"   # "float": float unless an argument is double; "arg": the
    #                         promoted argument type; "void"; or a type name


_MATH1 = ("sqrt", "rsqrt", "exp", "exp2", "log", "log2", "log10", "sin", "cos", "tan",
          "tanh", "erf", "fabs", "floor", "ceil", "round")
BUILTINS: dict[str, Builtin] = {
    **{n: Builtin(1) for n in _MATH1},
    "abs": Builtin(1, result="arg"),
    "min": Builtin(2, result="arg"), "max": Builtin(2, result="arg"),
    "fmin": Builtin(2), "fmax": Builtin(2), "pow": Builtin(2), "fma": Builtin(3),
    "atomicAdd": Builtin(2, frozenset({0}), "arg"),
}


def _suggest(name: str, known: Iterable[str]) -> str | None:
    close = difflib.get_close_matches(name, list(known), n=1)
    return f"did you mean '{close[0]}'?" if close else None


def _root(e: ast.Expr) -> ast.Name | None:
    """The variable an lvalue-like expression (a, a[i], r.x, a[i].x) is part of."""
    while isinstance(e, ast.Index | ast.Field):
        e = e.base
    return e if isinstance(e, ast.Name) else None


# --------------------------------------------------------------------------- write summaries


def infer_writes(functions: dict[str, ast.Function],
                 external: dict[str, frozenset[int]]) -> dict[str, frozenset[int]]:
    """Which parameters (by position) each function writes, directly or through calls
    to functions of ``functions``, to ``external`` ones (imported, whose summaries are
    known) and to built-ins. A fixpoint, so calls may come in any order and recurse."""
    direct: dict[str, set[int]] = {}
    passes: dict[str, list[tuple[str, int, int]]] = {}  # (callee, arg index, param index)
    for name, f in functions.items():
        index = {p.name: i for i, p in enumerate(f.params)}
        # Local names that shadow parameters (rare; then writes to them are not
        # the parameter's): found in the same walk, applied after it.
        shadowed: set[str] = set()
        targets: list[str] = []
        calls: list[tuple[str, int, str]] = []
        for node in ast.walk(f.body):
            if isinstance(node, ast.Assign | ast.IncDec):
                target = _root(node.target)
                if target is not None and target.id in index:
                    targets.append(target.id)
            elif isinstance(node, ast.Call):
                for ai, arg in enumerate(node.args):
                    r = _root(arg)
                    if r is not None and r.id in index:
                        calls.append((node.func, ai, r.id))
            elif isinstance(node, ast.Declaration) and node.name in index:
                shadowed.add(node.name)
        direct[name] = {index[t] for t in targets if t not in shadowed}
        passes[name] = [(callee, ai, index[p]) for callee, ai, p in calls if p not in shadowed]
    result = {n: set(w) for n, w in direct.items()}
    changed = True
    while changed:
        changed = False
        for name, calls in passes.items():
            for callee, ai, pi in calls:
                if callee in result:
                    writes = result[callee]
                elif callee in external:
                    writes = external[callee]
                elif callee in BUILTINS:
                    writes = BUILTINS[callee].writes
                else:
                    continue
                if ai in writes and pi not in result[name]:
                    result[name].add(pi)
                    changed = True
    return {n: frozenset(w) for n, w in result.items()}


# --------------------------------------------------------------------------- module


@dataclass(frozen=True)
class _Missing:
    """Names that may be missing because their definitions did not parse (in this
    module or in an imported one): problems that follow from their absence are
    not reported, since the syntax error is."""

    functions: frozenset[str] = frozenset()
    types: frozenset[str] = frozenset()
    any_name: bool = False     # any function or type may be missing
    imports: bool = False      # the imports are unknown (the header did not parse)

    def function(self, name: str) -> bool:
        return self.any_name or name in self.functions

    def type(self, name: str) -> bool:
        return self.any_name or name in self.types

    def add(self, other: Unparsed | None, own: bool) -> _Missing:
        if other is None:
            return self
        # An imported module whose own imports are unknown still defines what it defines.
        lost_name = other.any_name if own else other.unnamed
        return _Missing(self.functions | other.functions, self.types | other.types,
                        self.any_name or lost_name, self.imports or (own and other.header))


_NOTHING_MISSING = _Missing()


def check_module(module: ast.Module, loader: _Loader,
                 unparsed: Unparsed | None = None) -> CheckedModule:
    """Check a parsed module; imports are loaded through ``loader``. ``unparsed``
    says which items of the module's text did not parse (see builder.Unparsed)."""
    result = CheckedModule(module)
    diags = result.diagnostics
    missing = _NOTHING_MISSING.add(unparsed, own=True)
    # ---- imports: hardware descriptions and modules
    imported_functions: dict[str, FunctionInfo] = {}
    imported_from: dict[str, str] = {}
    library = None
    try:
        from mcl.hdl import hardware_library

        library = hardware_library(loader.search_path)
    except McplError as e:
        diags.extend(e.diagnostics)
    seen_imports: set[str] = set()
    for imp in module.imports:
        if imp.dotted in seen_imports:
            diags.append(warning("mcpl-duplicate-import", f"'{imp.dotted}' is imported twice",
                                 imp.span, "remove one of the imports"))
            continue
        seen_imports.add(imp.dotted)
        if len(imp.path) == 1 and library is not None and imp.path[0] in library:
            try:
                result.hardware[imp.path[0]] = library.get(imp.path[0])
            except McplError as e:
                diags.append(error(
                    "mcpl-bad-hardware",
                    f"hardware description '{imp.path[0]}' has errors: "
                    f"{e.diagnostics[0].message if e.diagnostics else ''}", imp.span,
                    "run `mcl hwd check` on it",
                    [Related(d.span, d.message) for d in e.diagnostics[:3] if d.span]))
            continue
        checked, problems = loader.import_module(imp, module)
        diags.extend(problems)
        if checked is not None:
            missing = missing.add(getattr(loader, "unparsed", {}).get(id(checked)), own=False)
        if checked is None:
            if not problems:
                known = sorted(library.names()) if library is not None else []
                diags.append(error(
                    "mcpl-unknown-import",
                    f"cannot find '{imp.dotted}': it is neither a hardware description nor "
                    "a module", imp.span,
                    (_suggest(imp.dotted, known) or
                     f"hardware descriptions: {', '.join(known)}") +
                    "; modules are searched next to this file, on MCL_PATH and in the "
                    "standard library (lib.atomics, lib.math, lib.complex)"))
            continue
        result.modules[imp.dotted] = checked
        for name, info in checked.functions.items():
            if name in imported_functions and imported_from[name] != imp.dotted:
                diags.append(error(
                    "mcpl-import-clash",
                    f"function '{name}' is defined by both '{imported_from[name]}' and "
                    f"'{imp.dotted}'", imp.span, "import only one of them"))
            imported_functions[name] = info
            imported_from[name] = imp.dotted
        for name, t in checked.types.items():
            result.types.setdefault(name, t)
    # ---- types
    for t in module.types:
        if t.name in result.types and result.types[t.name] is not t:
            prev = result.types[t.name]
            diags.append(error("mcpl-redeclared", f"type '{t.name}' is declared twice", t.span,
                               "rename one of them", [Related(prev.span, "first declared here")]))
        result.types[t.name] = t
    for t in module.types:
        names: set[str] = set()
        for f in t.fields:
            if f.name in names:
                diags.append(error("mcpl-redeclared",
                                   f"field '{f.name}' appears twice in type '{t.name}'", f.span))
            names.add(f.name)
            _check_type_name(f.type, result, diags, missing)
            if f.type.name == t.name and not f.type.dims:
                diags.append(error("mcpl-recursive-type",
                                   f"type '{t.name}' contains itself", f.span,
                                   "a record cannot hold a value of its own type"))
    # ---- functions
    own: dict[str, ast.Function] = {}
    for f in module.functions:
        if f.name in own:
            diags.append(error("mcpl-redeclared", f"function '{f.name}' is declared twice",
                               f.span, "rename one of them (MCPL has no overloading)",
                               [Related(own[f.name].span, "first declared here")]))
            continue
        if f.name in BUILTINS:
            diags.append(warning("mcpl-shadows-builtin",
                                 f"function '{f.name}' hides the built-in of the same name",
                                 f.span))
        own[f.name] = f
    external = {n: i.written_indices for n, i in imported_functions.items()}
    summaries = infer_writes(own, external)
    for name, f in own.items():
        result.functions[name] = FunctionInfo(
            f, module=module.name, writes=frozenset(f.params[i].name for i in summaries[name]))
    callable_functions = {**imported_functions, **result.functions}
    hardware_memos: dict[int, dict] = {}   # by id of the model, held by result.hardware
    for f in own.values():
        info = result.functions[f.name]
        info.hardware = _function_hardware(f, result, library, diags, missing)
        _FunctionChecker(f, info, result, callable_functions, diags, library, missing,
                         hardware_memos).run()
    diags.sort(key=sort_key)
    return result


def _function_hardware(f: ast.Function, result: CheckedModule, library: Any,
                       diags: list[Diagnostic], missing: _Missing = _NOTHING_MISSING) -> Any:
    if f.hardware in result.hardware:
        return result.hardware[f.hardware]
    if library is None:
        return None
    if f.hardware in library:
        if not missing.imports:
            diags.append(error(
                "mcpl-hardware-not-imported",
                f"function '{f.name}' is written for '{f.hardware}', which is not imported",
                f.span, f"add `import {f.hardware};` after the module line"))
        try:
            return library.get(f.hardware)
        except McplError:
            return None
    known = sorted(library.names())
    diags.append(error(
        "mcpl-unknown-hardware",
        f"unknown hardware description '{f.hardware}' for function '{f.name}'", f.span,
        _suggest(f.hardware, known) or f"known descriptions: {', '.join(known)}"))
    return None


def _check_type_name(t: ast.Type, result: CheckedModule, diags: list[Diagnostic],
                     missing: _Missing = _NOTHING_MISSING) -> bool:
    if t.name in ast.PRIMITIVE_TYPES or t.name in result.types:
        return True
    if missing.type(t.name):
        return False
    diags.append(error("mcpl-unknown-type", f"unknown type '{t.name}'", t.span,
                       _suggest(t.name, [*ast.PRIMITIVE_TYPES, *result.types])
                       or "types are int, long, float, double, bool and records "
                          "declared with `type name { ... }`"))
    return False


# --------------------------------------------------------------------------- functions


class _Hardware:
    """A hardware description (mcl.hdl model) that remembers the answers to the
    questions the checks ask for every declaration and loop (which memory
    spaces exist and are visible, the par_groups, ...): the model computes them
    afresh each time, and a large module asks them tens of thousands of times.
    The checkers of all functions of a module share ``memo`` (one per model;
    models do not change)."""

    def __init__(self, model: Any, memo: dict):
        self._model = model
        self._memo = memo

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._model, name)
        if not callable(value):
            return value
        memo = self._memo

        def ask(*args: Any) -> Any:
            key = (name, *(tuple(a) if isinstance(a, list) else a for a in args))
            try:
                return memo[key]
            except KeyError:
                pass
            except TypeError:  # an argument that cannot be a key
                return value(*args)
            memo[key] = answer = value(*args)
            return answer

        return ask


class _FunctionChecker:
    """Walks one function: scopes, types, memory spaces, foreach structure."""

    def __init__(self, f: ast.Function, info: FunctionInfo, result: CheckedModule,
                 functions: dict[str, FunctionInfo], diags: list[Diagnostic],
                 library: Any = None, missing: _Missing = _NOTHING_MISSING,
                 hardware_memos: dict[int, dict] | None = None):
        self.f = f
        self.library = library
        self.missing = missing
        if hardware_memos is None:
            hardware_memos = {}
        self.info = info
        self.result = result
        self.functions = functions
        self.diags = diags
        self.hwd = None if info.hardware is None else \
            _Hardware(info.hardware, hardware_memos.setdefault(id(info.hardware), {}))
        self.groups: list[str] = [g.name for g in self.hwd.par_groups()] if self.hwd else []
        self.scopes: list[dict[str, Symbol]] = []
        self.loops: tuple[ast.Stmt, ...] = ()
        self.foreach: list[tuple[ast.ForEach, int]] = []   # (loop, group index or -1)
        self.has_foreach = any(isinstance(n, ast.ForEach) for n in ast.walk(f.body))
        self.size_uses: list[tuple[ast.Name, Symbol]] = []
        self.unspaced: list[Symbol] = []
        self.symbols: list[Symbol] = []
        self._view_of: dict[int, Symbol] = {}   # view symbol -> the variable it views

    # ---- reporting

    def error(self, code: str, message: str, node: ast.Node, hint: str | None = None,
              related: Iterable[Related] = ()) -> None:
        self.diags.append(error(code, message, node.span, hint, tuple(related)))

    def warn(self, code: str, message: str, node: ast.Node, hint: str | None = None) -> None:
        self.diags.append(warning(code, message, node.span, hint))

    # ---- scopes

    def lookup(self, name: str) -> Symbol | None:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return None

    def declare(self, sym: Symbol) -> None:
        scope = self.scopes[-1]
        if sym.name in scope:
            prev = scope[sym.name]
            self.error("mcpl-redeclared", f"'{sym.name}' is already declared in this scope",
                       sym.node, "use another name",
                       [Related(prev.span, "first declared here")])
        scope[sym.name] = sym
        self.symbols.append(sym)
        self.result._decls[id(sym.node)] = sym

    def enclosing_groups(self) -> list[str]:
        return [fe.group for fe, gi in self.foreach if gi >= 0]

    # ---- the walk

    def run(self) -> None:
        f = self.f
        self.scopes.append({})
        params = []
        if f.return_type.name != "void" or f.return_type.dims:
            self.check_type(f.return_type, constant_sizes=False)
        for p in f.params:
            sym = Symbol(p.name, "param", p, p.type, const=p.const, function=f.name)
            sym.written = p.name in self.info.writes
            self.check_type(p.type)
            if p.default is not None:
                self.expr(p.default)
                if p.type.dims:
                    self.error("mcpl-bad-default", "an array parameter cannot have a default "
                               "value", p.default, "defaults are example values of sizes, "
                               "like `const int n = 2048`")
            sym.space = self.space_for(p, p.space, p.type, written=sym.written, param=True)
            if p.const and sym.written:
                self.error("mcpl-write-const", f"parameter '{p.name}' is const but written",
                           p, "remove `const` or do not write it")
            self.declare(sym)
            params.append(sym)
        self.info.params = tuple(params)
        self.block(f.body, new_scope=True)
        self.scopes.pop()
        self.finish()

    def finish(self) -> None:
        for name, sym in self.size_uses:
            varies = sym.kind == "local" and not sym.const and bool(sym.index_deps)
            if sym.kind in ("index", "loop") or varies or (sym.written and not (
                    sym.kind == "local" and sym.const)):
                what = {"index": "a foreach index", "loop": "a loop variable"}.get(
                    sym.kind, "computed from a foreach index" if varies else
                    "written in this function")
                self.error("mcpl-nonconstant-size",
                           f"array size uses '{name.id}', which is {what}", name,
                           "array sizes must be constant: use parameters and `const` "
                           "variables that are never written",
                           [Related(sym.span, "declared here")])
        for sym in self.unspaced:
            if sym.written or sym.type.dims:
                what = "an array" if sym.type.dims else "written"
                self.error("mcpl-no-space",
                           f"'{sym.name}' is {what} but has no memory space, and "
                           f"'{self.f.hardware}' has no default memory space here", sym.node,
                           f"add a memory space: {self.visible_hint()}")
        self.info.reads = frozenset(p.name for p in self.info.params if p.read)

    def visible_hint(self) -> str:
        if not self.hwd:
            return "e.g. `main float[n] a`"
        names = [ms.name for ms in self.hwd.visible_memory_spaces(self.enclosing_groups())]
        return "one of " + ", ".join(names) if names else "none is visible here"

    def record(self, node: ast.Node) -> None:
        self.result._loops[id(node)] = self.loops
        self.result._function_of[id(node)] = self.f

    def block(self, b: ast.Block, new_scope: bool = True) -> None:
        self.record(b)
        if new_scope:
            self.scopes.append({})
        for s in b.statements:
            self.statement(s)
        if new_scope:
            self.scopes.pop()

    def at_innermost(self) -> bool:
        """Whether executable statements are allowed here (the executing par_unit)."""
        if not self.has_foreach or not self.groups:
            return True
        return bool(self.foreach) and self.foreach[-1][1] == len(self.groups) - 1

    def executable(self, s: ast.Stmt) -> None:
        if self.at_innermost():
            return
        if not self.foreach:
            where = "outside every foreach"
        else:
            where = f"inside `foreach ... {self.foreach[-1][0].group}`"
        inner = self.groups[-1]
        self.error("mcpl-not-innermost",
                   f"statements that execute must be inside the innermost foreach "
                   f"(over '{inner}'); this one is {where}", s,
                   "only declarations, views and foreach loops may appear at outer levels; "
                   f"move this statement into the `foreach (... {inner})` loop")

    def statement(self, s: ast.Stmt) -> None:
        self.record(s)
        if isinstance(s, ast.Block):
            self.block(s)
        elif isinstance(s, ast.Declaration):
            self.declaration(s)
        elif isinstance(s, ast.Assign):
            self.executable(s)
            self.assign(s)
        elif isinstance(s, ast.IncDec):
            self.executable(s)
            self.write_target(s.target, s, compound=True)
        elif isinstance(s, ast.ExprStmt):
            self.executable(s)
            self.expr(s.expr)
            if not isinstance(s.expr, ast.Call):
                self.warn("mcpl-no-effect", "this statement has no effect", s,
                          "did you mean an assignment?")
        elif isinstance(s, ast.Return):
            self.executable(s)
            self.return_(s)
        elif isinstance(s, ast.If):
            self.executable(s)
            self.condition(s.cond)
            self.sub(s.then)
            if s.orelse is not None:
                self.sub(s.orelse)
        elif isinstance(s, ast.While):
            self.executable(s)
            self.condition(s.cond)
            self.loop(s, lambda: self.sub(s.body))
        elif isinstance(s, ast.For):
            self.executable(s)
            self.for_(s)
        elif isinstance(s, ast.ForEach):
            self.foreach_(s)
        elif isinstance(s, ast.Barrier):
            self.barrier(s)
        elif isinstance(s, ast.Break | ast.Continue):
            word = "break" if isinstance(s, ast.Break) else "continue"
            if not any(isinstance(l, ast.For | ast.While) for l in self.loops_since_foreach()):
                self.error("mcpl-break-outside-loop", f"'{word}' is not inside a for or while "
                           "loop", s, "a foreach cannot be left early" if self.foreach else None)
        elif isinstance(s, ast.AsStatement):
            self.as_statement(s)

    def loops_since_foreach(self) -> tuple[ast.Stmt, ...]:
        out: list[ast.Stmt] = []
        for l in reversed(self.loops):
            if isinstance(l, ast.ForEach):
                break
            out.append(l)
        return tuple(out)

    def sub(self, s: ast.Stmt) -> None:
        """A nested statement with its own scope (the body of if/for/while/foreach)."""
        self.scopes.append({})
        self.statement(s)
        self.scopes.pop()

    def loop(self, s: ast.Stmt, body) -> None:
        saved = self.loops
        self.loops = self.loops + (s,)
        try:
            body()
        finally:
            self.loops = saved

    def for_(self, s: ast.For) -> None:
        self.scopes.append({})
        if isinstance(s.init, ast.Declaration):
            self.record(s.init)
            self.declaration(s.init, kind="loop")
        elif isinstance(s.init, ast.Assign):
            self.record(s.init)
            self.assign(s.init)
        if s.cond is not None:
            self.condition(s.cond)

        def body() -> None:
            if s.update is not None:
                self.record(s.update)
                if isinstance(s.update, ast.Assign):
                    self.assign(s.update)
                else:
                    self.write_target(s.update.target, s.update, compound=True)
            self.sub(s.body)

        self.loop(s, body)
        self.scopes.pop()

    # ---- hardware structure

    def foreach_(self, s: ast.ForEach) -> None:
        gi = -1
        if self.hwd is not None:
            if s.group not in self.groups:
                units = [u.name for u in self.hwd.par_units()]
                hint = _suggest(s.group, self.groups) or (
                    f"the par_groups of '{self.f.hardware}' are: {', '.join(self.groups)}")
                if s.group in units:
                    g = self.hwd.group_of_unit(s.group)
                    hint = f"'{s.group}' is a par_unit; foreach names its par_group '{g.name}'"
                self.error("mcpl-unknown-par-group",
                           f"'{s.group}' is not a par_group of '{self.f.hardware}'", s, hint)
            else:
                gi = self.groups.index(s.group)
                self.result._groups[id(s)] = self.hwd.par_group(s.group)
                self.check_nesting(s, gi)
        # The size is evaluated outside the loop: it must not depend on enclosing indices.
        self.expr(s.size)
        self.check_size_independent(s)
        self.scopes.append({})
        var = s.var
        if var.type.name not in ("int", "long") or var.type.dims:
            self.error("mcpl-bad-index-type", "a foreach index must be an int", var,
                       "write `foreach (int i in n threads)`")
        self.foreach.append((s, gi))
        self.record(var)
        sym = Symbol(var.name, "index", var, var.type, const=var.const, function=self.f.name,
                     foreach=s, index_deps=frozenset({id(s)}))
        if var.space is not None:
            sym.space = self.space_for(var, var.space, var.type, written=False)
        self.declare(sym)
        self.loop(s, lambda: self.sub(s.body))
        self.foreach.pop()
        self.scopes.pop()

    def check_nesting(self, s: ast.ForEach, gi: int) -> None:
        outer = next((g for _, g in reversed(self.foreach) if g >= 0), None)
        if outer is None:
            if gi != 0:
                self.error("mcpl-foreach-order",
                           f"a foreach over '{s.group}' must be nested inside a foreach over "
                           f"'{self.groups[gi - 1]}'", s,
                           f"in '{self.f.hardware}', {self.groups[gi]} are inside "
                           f"{self.groups[gi - 1]}; wrap this loop in "
                           f"`foreach (int b in nb {self.groups[gi - 1]})`")
            return
        if gi == outer or gi == outer + 1:
            return
        if gi < outer:
            self.error("mcpl-foreach-order",
                       f"a foreach over '{s.group}' cannot be inside a foreach over "
                       f"'{self.groups[outer]}'", s,
                       f"'{self.f.hardware}' nests {' > '.join(self.groups)}; "
                       "swap the loops")
        else:
            self.error("mcpl-foreach-order",
                       f"a foreach over '{s.group}' must be directly inside a foreach over "
                       f"'{self.groups[gi - 1]}', not '{self.groups[outer]}'", s,
                       f"'{self.f.hardware}' nests {' > '.join(self.groups)}")

    def check_size_independent(self, s: ast.ForEach) -> None:
        enclosing = {id(fe): fe for fe, _ in self.foreach}
        for n in ast.walk(s.size):
            if not isinstance(n, ast.Name):
                continue
            sym = self.result.declaration_of(n)
            if sym is None:
                continue
            deps = [enclosing[d] for d in sym.index_deps if d in enclosing]
            if deps:
                self.error("mcpl-foreach-size-depends",
                           f"the size of this foreach depends on the index "
                           f"'{deps[0].var.name}' of an enclosing foreach", s.size,
                           "every unit of a par_group must agree on the number of units: "
                           "compute the size from parameters and constants only",
                           [Related(deps[0].var.span, "the enclosing index")])
                return

    def space_for(self, node: ast.Node, space: str | None, type_: ast.Type, *,
                  written: bool, param: bool = False) -> str | None:
        """Check an explicit memory space, or find the default; returns the space."""
        hwd = self.hwd
        if hwd is None:
            return space
        enclosing = self.enclosing_groups()
        if space is not None:
            if not hwd.has_memory_space(space):
                known = [ms.name for ms in hwd.memory_spaces()]
                what = "a type or memory space" if not param else "a memory space"
                self.error("mcpl-unknown-space",
                           f"'{space}' is not {what} of '{self.f.hardware}'", node,
                           _suggest(space, known) or f"its memory spaces are: {', '.join(known)}")
                return space
            visible = [ms.name for ms in hwd.visible_memory_spaces(enclosing)]
            if space not in visible:
                self.error("mcpl-space-not-visible", self.invisible_message(space), node,
                           self.invisible_hint(space))
            if hwd.memory_space(space).read_only and written:
                self.error("mcpl-write-read-only",
                           f"'{space}' is read-only memory but this variable is written", node,
                           "use a writable memory space")
            return space
        default = hwd.default_memory_space(enclosing)
        if default is not None:
            return default.name
        return None

    def invisible_message(self, space: str) -> str:
        owner = self.hwd.owner_of(space)
        kind = "par_unit" if owner is not None and owner.kind == "par_unit" else "par_group"
        return (f"'{space}' is not visible here: it belongs to {kind} '{owner.name}' "
                f"of '{self.f.hardware}'")

    def invisible_hint(self, space: str) -> str:
        owner = self.hwd.owner_of(space)
        if owner is not None and owner.kind == "par_unit":
            group = self.hwd.group_of_unit(owner.name)
            return f"declare it inside `foreach (... {group.name})`"
        if owner is not None:
            gi = self.groups.index(owner.name)
            if gi > 0:
                return f"declare it inside `foreach (... {self.groups[gi - 1]})`"
        return f"visible here: {', '.join(self.visible_hint().split('one of ')[-1:])}"

    def barrier(self, s: ast.Barrier) -> None:
        hwd = self.hwd
        if not self.foreach:
            self.error("mcpl-barrier-outside-foreach", "a barrier must be inside a foreach", s,
                       "a barrier synchronises the units of a par_group")
        if hwd is None:
            return
        if not hwd.has_memory_space(s.space):
            known = [ms.name for ms in hwd.memory_spaces()]
            self.error("mcpl-unknown-space",
                       f"'{s.space}' is not a memory space of '{self.f.hardware}'", s,
                       _suggest(s.space, known) or f"its memory spaces are: {', '.join(known)}")
            return
        if not self.foreach or self.foreach[-1][1] < 0:
            return
        group = self.groups[self.foreach[-1][1]]
        scopes = hwd.scopes()
        unit_pos = next(i for i, sc in enumerate(scopes)
                        if sc.kind == "par_unit" and hwd.group_of_unit(sc.name) is not None
                        and hwd.group_of_unit(sc.name).name == group)
        owner = hwd.owner_of(s.space)
        owner_pos = 0 if owner is None else next(i for i, sc in enumerate(scopes) if sc is owner)
        visible = [ms.name for ms in hwd.visible_memory_spaces(self.enclosing_groups())]
        if owner_pos >= unit_pos:
            shared = [n for n in visible if (lambda o: 0 if o is None else next(
                i for i, sc in enumerate(scopes) if sc is o))(hwd.owner_of(n)) < unit_pos]
            self.error("mcpl-barrier-private-space",
                       f"barrier({s.space}) synchronises nothing: '{s.space}' is private to "
                       f"each unit of '{group}' ({owner.kind} '{owner.name}')", s,
                       f"name a space the {group} share: {', '.join(shared)}" if shared else
                       None)
        elif s.space not in visible:
            self.error("mcpl-space-not-visible", self.invisible_message(s.space), s,
                       self.invisible_hint(s.space))

    # ---- declarations

    def check_type(self, t: ast.Type, constant_sizes: bool = True) -> None:
        _check_type_name(t, self.result, self.diags, self.missing)
        if t.name == "void" and t.dims:
            self.error("mcpl-bad-type", "an array of void", t)
        for level in t.dims:
            for size in level:
                st = self.expr(size)
                if st is not None and st.name not in ("int", "long") and not st.dims:
                    self.error("mcpl-bad-size", "an array size must be an integer", size)
                if constant_sizes:
                    for n in ast.walk(size):
                        if isinstance(n, ast.Name):
                            sym = self.result.declaration_of(n)
                            if sym is not None:
                                self.size_uses.append((n, sym))

    def declaration(self, d: ast.Declaration, kind: str = "local") -> None:
        self.check_type(d.type)
        if d.type.name == "void":
            self.error("mcpl-bad-type", f"variable '{d.name}' cannot be void", d)
        deps: frozenset[int] = frozenset()
        if d.init is not None:
            it = self.expr(d.init)
            self.check_assignable(d.type, it, d.init)
            deps = self.index_deps(d.init)
            if d.type.dims:
                self.error("mcpl-array-init", "an array cannot be initialised with a value", d,
                           "assign its elements in a loop")
        sym = Symbol(d.name, kind, d, d.type, const=d.const, function=self.f.name,
                     init=d.init, index_deps=deps)
        written_later = False  # found out at the end through `written`
        sym.space = self.space_for(d, d.space, d.type, written=written_later)
        if sym.space is None and d.space is None and not (d.const and not d.type.dims):
            self.unspaced.append(sym)
        if d.const and d.init is None and not d.type.dims:
            self.error("mcpl-const-uninitialised", f"const variable '{d.name}' has no value", d,
                       f"write `const {d.type.name} {d.name} = ...;`")
        self.declare(sym)
        for v in d.views:
            self.view(v, sym, d.type)

    def view(self, v: ast.View, target: Symbol, target_type: ast.Type) -> None:
        self.record(v)
        self.check_type(v.type)
        if not target_type.dims:
            self.error("mcpl-view-not-array",
                       f"'{target.name}' is not an array, so it has no view", v)
        elif v.type.name != target_type.name:
            self.error("mcpl-view-element-type",
                       f"a view of '{target.name}' must have elements of type "
                       f"'{target_type.name}', not '{v.type.name}'", v,
                       "a view gives the same storage another shape, not another type")
        else:
            self.check_element_count(v, target, target_type)
        sym = Symbol(v.name, "view", v, v.type, space=target.space, const=target.const,
                     function=self.f.name)
        sym.written = target.written
        self.declare(sym)
        # Writes through the view are writes to the viewed variable.
        sym.init = ast.Name(target.name, span=v.span)
        self._view_of[id(sym)] = target

    def check_element_count(self, v: ast.View, target: Symbol, target_type: ast.Type) -> None:
        from mcl.mcpl.symbolic import element_count

        a = element_count(target_type, self.constant_value)
        b = element_count(v.type, self.constant_value)
        if a is None or b is None:
            return
        import sympy

        if sympy.simplify(a - b) != 0:
            self.error("mcpl-view-size",
                       f"the view '{v.name}' has {b} elements but '{target.name}' has {a}",
                       v, "a view must keep the number of elements: the product of all its "
                          "sizes must equal that of the array",
                       [Related(target.span, f"'{target.name}' is declared here")])

    def constant_value(self, name: ast.Name) -> ast.Expr | None:
        """The defining expression of a const local (for symbolic sizes), if any."""
        sym = self.result.declaration_of(name)
        if sym is not None and sym.kind == "local" and sym.const and sym.init is not None:
            return sym.init
        return None

    def as_statement(self, s: ast.AsStatement) -> None:
        root = s.target
        if not isinstance(root, ast.Name):
            self.error("mcpl-view-not-array", "only a whole array can be viewed", s,
                       "write `a as float[n][m] b;` with a variable name on the left")
            self.expr(root)
            return
        sym = self.lookup(root.id)
        self.expr(root, reading=False)
        if sym is None:
            return
        for v in s.views:
            self.view(v, sym, sym.type)

    # ---- assignments and reads

    def assign(self, s: ast.Assign) -> None:
        vt = self.expr(s.value)
        tt = self.write_target(s.target, s, compound=s.op != "=")
        if tt is not None:
            self.check_assignable(tt, vt, s.value)
            if s.op in ("%=", "<<=", ">>=", "&=", "|=", "^=") and tt.name in ("float", "double"):
                self.error("mcpl-bad-operand", f"'{s.op}' needs an integer variable", s)
        root = _root(s.target)
        if root is not None:
            sym = self.result.declaration_of(root)
            if sym is not None:
                sym.index_deps = sym.index_deps | self.index_deps(s.value)

    def write_target(self, target: ast.Expr, stmt: ast.Node, compound: bool) -> ast.Type | None:
        t = self.expr(target, reading=compound)
        root = _root(target)
        if root is None:
            return t
        sym = self.result.declaration_of(root)
        if sym is None:
            return t
        self.mark_written(sym, stmt)
        return t

    def mark_written(self, sym: Symbol, node: ast.Node) -> None:
        target = self._view_of.get(id(sym))
        if target is not None:
            self.mark_written(target, node)
        if sym.kind == "index":
            self.error("mcpl-write-index", f"the foreach index '{sym.name}' cannot be changed",
                       node, "copy it into a variable first")
        elif sym.const and (sym.kind != "param" or sym.name not in self.info.writes):
            self.error("mcpl-write-const", f"'{sym.name}' is const and cannot be written", node,
                       "remove `const` from its declaration",
                       [Related(sym.span, "declared here")])
        elif sym.space is not None and self.hwd is not None and \
                self.hwd.has_memory_space(sym.space) and \
                self.hwd.memory_space(sym.space).read_only:
            self.error("mcpl-write-read-only", f"'{sym.name}' is in read-only memory space "
                       f"'{sym.space}' and cannot be written", node)
        sym.written = True

    def check_assignable(self, target: ast.Type | None, value: ast.Type | None,
                         node: ast.Node) -> None:
        if target is None or value is None:
            return
        if target.dims or value.dims:
            self.error("mcpl-array-assign", "whole arrays cannot be assigned", node,
                       "assign element by element in a loop")
            return
        if (target.name in _RANK) != (value.name in _RANK) or (
                target.name not in _RANK and target.name != value.name):
            self.error("mcpl-type-mismatch",
                       f"a value of type '{value.name}' cannot be stored in a "
                       f"'{target.name}'", node)

    def condition(self, e: ast.Expr) -> None:
        t = self.expr(e)
        if t is not None and (t.dims or t.name not in _RANK):
            self.error("mcpl-bad-condition", f"a condition must be a number or bool, not "
                       f"'{_show(t)}'", e)

    def return_(self, s: ast.Return) -> None:
        rt = self.f.return_type
        if s.value is None:
            if rt.name != "void":
                self.error("mcpl-return-value", f"'{self.f.name}' must return a '{_show(rt)}'",
                           s)
            return
        t = self.expr(s.value)
        if rt.name == "void":
            self.error("mcpl-return-value", f"'{self.f.name}' is void and returns nothing", s,
                       "remove the value or change the return type")
        else:
            self.check_assignable(rt, t, s.value)

    def index_deps(self, e: ast.Expr) -> frozenset[int]:
        deps: frozenset[int] = frozenset()
        for n in ast.walk(e):
            if isinstance(n, ast.Name):
                sym = self.result.declaration_of(n)
                if sym is not None:
                    deps |= sym.index_deps
        return deps

    # ---- expressions

    def expr(self, e: ast.Expr, reading: bool = True) -> ast.Type | None:
        """Resolve the names in ``e`` and return its type (None if unknown)."""
        self.record(e)
        if isinstance(e, ast.Literal):
            return ast.Type(e.kind)
        if isinstance(e, ast.Name):
            return self.name(e, reading)
        if isinstance(e, ast.Index):
            return self.index(e, reading)
        if isinstance(e, ast.Field):
            bt = self.expr(e.base, reading)
            if bt is None:
                return None
            rec = self.result.types.get(bt.name)
            if rec is None and not bt.dims and self.missing.type(bt.name):
                return None
            if bt.dims or rec is None:
                self.error("mcpl-not-record", f"'{_show(bt)}' has no field '{e.name}'", e,
                           "fields belong to records declared with `type`")
                return None
            for f in rec.fields:
                if f.name == e.name:
                    return f.type
            self.error("mcpl-unknown-field", f"type '{rec.name}' has no field '{e.name}'", e,
                       _suggest(e.name, [f.name for f in rec.fields]) or
                       f"its fields are: {', '.join(f.name for f in rec.fields)}")
            return None
        if isinstance(e, ast.Call):
            return self.call(e)
        if isinstance(e, ast.Unary):
            t = self.expr(e.operand)
            if t is None:
                return None
            if t.dims or t.name not in _RANK:
                self.error("mcpl-bad-operand", f"'{e.op}' cannot be applied to a "
                           f"'{_show(t)}'", e)
                return None
            if e.op == "!":
                return ast.Type("bool")
            if e.op == "~" and t.name in ("float", "double"):
                self.error("mcpl-bad-operand", "'~' needs an integer", e)
            return t if t.name != "bool" else ast.Type("int")
        if isinstance(e, ast.Binary):
            return self.binary(e)
        if isinstance(e, ast.Ternary):
            self.condition(e.cond)
            a, b = self.expr(e.then), self.expr(e.orelse)
            if a is None or b is None:
                return a or b
            if a.name in _RANK and b.name in _RANK and not a.dims and not b.dims:
                return ast.Type(max(a.name, b.name, key=_RANK.__getitem__))
            if not ast.same(a.element, b.element) or a.dims or b.dims:
                self.error("mcpl-type-mismatch", f"the two sides of '?:' have different "
                           f"types, '{_show(a)}' and '{_show(b)}'", e)
            return a
        if isinstance(e, ast.Cast):
            t = self.expr(e.operand)
            if t is not None and (t.dims or t.name not in _RANK):
                self.error("mcpl-bad-cast", f"a '{_show(t)}' cannot be cast to "
                           f"'{_show(e.type)}'", e)
            return e.type
        if isinstance(e, ast.HwdRef):
            return self.hwd_ref(e)
        return None

    def name(self, e: ast.Name, reading: bool) -> ast.Type | None:
        sym = self.lookup(e.id)
        if sym is None:
            if self.hwd is not None and e.id == self.f.hardware:
                self.error("mcpl-bad-hwd-ref", f"'{e.id}' is a hardware description, not a "
                           "value", e, f"name a property, e.g. {e.id}.hierarchy.<par_group>."
                           "max_nr_units")
                return None
            if self.library is not None and e.id in self.library:
                if self.missing.imports:
                    return None
                self.error("mcpl-hardware-not-imported",
                           f"'{e.id}' is not an imported hardware description", e,
                           f"add `import {e.id};` to use its properties")
                return None
            known = [n for scope in self.scopes for n in scope]
            self.error("mcpl-undeclared", f"'{e.id}' is not declared", e,
                       _suggest(e.id, known) or "declare it before use, or add it as a "
                       "parameter")
            return None
        self.result._names[id(e)] = sym
        if reading:
            # Reading through a view reads the viewed variable.
            while sym is not None:
                sym.read = True
                sym = self._view_of.get(id(sym))
        return self.result._names[id(e)].type

    def index(self, e: ast.Index, reading: bool) -> ast.Type | None:
        bt = self.expr(e.base, reading)
        for g in e.groups:
            for i in g:
                it = self.expr(i)
                if it is not None and (it.dims or it.name not in ("int", "long", "bool")):
                    self.error("mcpl-bad-index", f"an index must be an integer, not "
                               f"'{_show(it)}'", i, "cast it: `(int) x`")
        if bt is None:
            return None
        if not bt.dims:
            self.error("mcpl-not-array", f"'{_describe(e.base)}' is not an array", e)
            return None
        want = [len(level) for level in bt.dims]
        got = [len(g) for g in e.groups]
        if want != got:
            shape = "".join(f"[{', '.join(['i'] * n)}]" for n in want)
            self.error("mcpl-index-count",
                       f"'{_describe(e.base)}' has type '{_show(bt)}' and needs indices "
                       f"{shape} ({_levels(want)}), but this access has {_levels(got)}", e,
                       "index every tile level: one [..] per level, one index per dimension")
            return None
        return bt.element

    def binary(self, e: ast.Binary) -> ast.Type | None:
        a, b = self.expr(e.left), self.expr(e.right)
        if a is None or b is None:
            return None
        for side, t in ((e.left, a), (e.right, b)):
            if t.dims or t.name not in _RANK:
                self.error("mcpl-bad-operand", f"'{e.op}' cannot be applied to a "
                           f"'{_show(t)}'", side)
                return None
        if e.op in ("&&", "||", "==", "!=", "<", "<=", ">", ">="):
            return ast.Type("bool")
        if e.op in ("%", "<<", ">>", "&", "|", "^"):
            for side, t in ((e.left, a), (e.right, b)):
                if t.name in ("float", "double"):
                    self.error("mcpl-bad-operand", f"'{e.op}' needs integers, not "
                               f"'{t.name}'", side)
                    return None
        name = max(a.name, b.name, key=_RANK.__getitem__)
        return ast.Type("int" if name == "bool" else name)

    def call(self, e: ast.Call) -> ast.Type | None:
        types = [self.expr(a) for a in e.args]
        info = self.functions.get(e.func)
        if info is not None:
            self.result._callees[id(e)] = info
            callee = info.function
            if len(e.args) != len(callee.params):
                self.error("mcpl-arg-count",
                           f"'{e.func}' takes {len(callee.params)} argument"
                           f"{'s' * (len(callee.params) != 1)}, not {len(e.args)}", e,
                           f"{e.func}({', '.join(p.name for p in callee.params)})",
                           [Related(callee.span, "declared here")])
            self.check_callee_hardware(e, info)
            for i, (arg, p) in enumerate(zip(e.args, callee.params, strict=False)):
                if p.name in info.writes:
                    self.write_argument(e, i, arg)
                elif types[i] is not None:
                    self.check_argument(types[i], p.type, arg)
            return callee.return_type
        builtin = BUILTINS.get(e.func)
        if builtin is None:
            if self.missing.function(e.func):
                return None
            known = [*self.functions, *BUILTINS]
            self.error("mcpl-unknown-function", f"unknown function '{e.func}'", e,
                       _suggest(e.func, known) or "define it in this module or import a "
                       "module that does (e.g. `import lib.math;`)")
            return None
        if len(e.args) != builtin.arity:
            self.error("mcpl-arg-count", f"'{e.func}' takes {builtin.arity} argument"
                       f"{'s' * (builtin.arity != 1)}, not {len(e.args)}", e)
        for i, arg in enumerate(e.args):
            if i in builtin.writes:
                self.write_argument(e, i, arg)
            t = types[i]
            if t is not None and (t.dims or t.name not in _RANK):
                self.error("mcpl-bad-argument", f"'{e.func}' needs a number, not a "
                           f"'{_show(t)}'", arg)
        known = [t for t in types if t is not None and t.name in _RANK and not t.dims]
        if builtin.result == "void":
            return ast.Type("void")
        if builtin.result == "arg":
            return ast.Type(max((t.name for t in known), key=_RANK.__getitem__, default="int"))
        if builtin.result == "float":
            return ast.Type("double" if any(t.name == "double" for t in known) else "float")
        return ast.Type(builtin.result)

    def write_argument(self, call: ast.Call, i: int, arg: ast.Expr) -> None:
        root = _root(arg)
        if root is None:
            self.error("mcpl-not-assignable", f"argument {i + 1} of '{call.func}' is written, "
                       "so it must be a variable, an array element or a field", arg)
            return
        sym = self.result.declaration_of(root)
        if sym is not None:
            self.mark_written(sym, arg)

    def check_argument(self, got: ast.Type, want: ast.Type, arg: ast.Expr) -> None:
        if bool(got.dims) != bool(want.dims) or (got.dims and (
                [len(x) for x in got.dims] != [len(x) for x in want.dims]
                or got.name != want.name)):
            self.error("mcpl-bad-argument", f"this argument is a '{_show(got)}' but the "
                       f"parameter is a '{_show(want)}'", arg)
        elif not got.dims and ((got.name in _RANK) != (want.name in _RANK) or (
                got.name not in _RANK and got.name != want.name)):
            self.error("mcpl-bad-argument", f"this argument is a '{_show(got)}' but the "
                       f"parameter is a '{_show(want)}'", arg)

    def check_callee_hardware(self, e: ast.Call, info: FunctionInfo) -> None:
        callee_hw = info.function.hardware
        if callee_hw == self.f.hardware or self.hwd is None:
            return
        try:
            from mcl.hdl import hardware_library

            lib = hardware_library()
            ok = callee_hw in lib and (self.f.hardware not in lib or
                                       lib.is_descendant(self.f.hardware, callee_hw))
        except (McplError, ImportError):
            return
        if not ok:
            self.error("mcpl-call-hardware",
                       f"'{e.func}' is written for '{callee_hw}', which '{self.f.hardware}' "
                       "does not specialise", e,
                       f"a '{self.f.hardware}' function may call functions for "
                       f"'{self.f.hardware}' or a level above it")

    def hwd_ref(self, e: ast.HwdRef) -> ast.Type | None:
        hw = self.result.hardware.get(e.path[0])
        if hw is None and self.hwd is not None and e.path[0] == self.hwd.name:
            hw = self.hwd
        if hw is None and self.missing.imports and self.library is not None \
                and e.path[0] in self.library:
            try:
                hw = self.library.get(e.path[0])
            except McplError:
                return None
        if hw is None:
            self.error("mcpl-hardware-not-imported",
                       f"'{e.path[0]}' is not an imported hardware description", e,
                       f"add `import {e.path[0]};`")
            return None
        try:
            value = hw.resolve_property(e.path)
        except McplError as err:
            d = err.diagnostics[0]
            self.error("mcpl-bad-hwd-ref", d.message, e, d.hint)
            return None
        return ast.Type("int" if isinstance(value, int) else "float")


def _show(t: ast.Type) -> str:
    from mcl.mcpl.printer import print_type

    return print_type(t)


def _describe(e: ast.Expr) -> str:
    from mcl.mcpl.printer import print_expr

    return print_expr(e)


def _levels(counts: list[int]) -> str:
    if not counts:
        return "no indices"
    return " then ".join(f"{n} ind{'ex' if n == 1 else 'ices'}" for n in counts) + (
        "" if len(counts) == 1 else " (one group per tile level)")


__all__ = ["check_module", "infer_writes", "BUILTINS", "Builtin"]
