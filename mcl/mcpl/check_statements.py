"""The walk of one MCPL function: scopes, declarations and views, assignments and
returns (expressions are typed by the mixin of ``check_expressions``; foreach loops,
memory spaces and barriers are checked against the hardware description by that of
``check_hardware``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

from mcl.diagnostics import Diagnostic, Related, article, error, warning
from mcl.mcpl import ast
from mcl.mcpl.check_common import (
    _NOTHING_MISSING,
    _RANK,
    _check_type_name,
    _describe,
    _Missing,
    _root,
    _show,
    constant_beyond,
    division_by_zero,
    value_range,
)
from mcl.mcpl.check_expressions import _ExpressionChecks
from mcl.mcpl.check_hardware import _Hardware, _HardwareChecks
from mcl.mcpl.fold import fold_constant
from mcl.mcpl.printer import print_statement
from mcl.mcpl.resolve import CheckedModule, FunctionInfo, Reach, Symbol


class _FunctionChecker(_ExpressionChecks, _HardwareChecks):
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
        # Writes already reported as errors (const, read-only), by id of the symbol:
        # the positions of their diagnostics in ``diags``. A size that uses such a
        # variable is not reported again: the write is the one cause to fix.
        self._bad_writes: dict[int, list[int]] = {}
        self._first_write: dict[int, ast.Node] = {}   # by id of the symbol
        self.unspaced: list[Symbol] = []
        self.symbols: list[Symbol] = []
        self._view_of: dict[int, Symbol] = {}   # view symbol -> the variable it views
        # Divisions by a local that its initialiser sets to 0: reported at the end of
        # the function, where none of the locals it needs was written after all.
        self._zero_divisors: list[tuple[Diagnostic, list[Symbol]]] = []
        # Private scalars declared without a value, read before any write (by id of the
        # symbol: the first such read)
        self._unset_reads: dict[int, tuple[Symbol, ast.Name]] = {}
        # Why the code being checked may not run, innermost last: an index outside its
        # dimension is an error only in code that runs whenever its loops do
        # (check_constant_indices); kept for each access (CheckedModule.reach_of), where
        # feedback tells code that runs at the sizes of a run from code that does not
        self.reach: tuple[Reach, ...] = ()

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
        # Module-level constants (own and imported) come after every local name.
        return self.result.constants.get(name)

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
                else:
                    self.check_default(p)
            sym.space = self.param_space(p, sym.written)
            # A const parameter that is written is reported at each write (mark_written).
            self.declare(sym)
            params.append(sym)
        self.info.params = tuple(params)
        self.block(f.body, new_scope=True)
        self.scopes.pop()
        self.finish()

    def finish(self) -> None:
        for p in self.info.params:
            if p.const and p.written and id(p) not in self._bad_writes:
                # Inferred written (through a call the walk could not resolve, say) but
                # no write was met: report it where it is declared.
                self.error("mcpl-write-const", f"parameter '{p.name}' is const but written",
                           p.node, "remove `const` or do not write it")
        sizes_of_bad_writes: dict[int, list[ast.Name]] = {}
        for name, sym in self.size_uses:
            varies = sym.kind == "local" and not sym.const and bool(sym.index_deps)
            if sym.kind not in ("index", "loop") and not varies and id(sym) in self._bad_writes:
                sizes_of_bad_writes.setdefault(id(sym), []).append(name)
                continue
            if sym.kind in ("index", "loop") or varies or (sym.written and not (
                    sym.kind == "local" and sym.const)):
                what = {"index": "a foreach index", "loop": "a loop variable"}.get(
                    sym.kind, "computed from a foreach index" if varies else
                    "written in this function")
                related = [Related(sym.span, "declared here")]
                write = self._first_write.get(id(sym))
                if write is not None and what.startswith("written"):
                    related.append(Related(write.span, f"'{name.id}' is written here"))
                self.error("mcpl-nonconstant-size",
                           f"array size uses '{name.id}', which is {what}", name,
                           "array sizes must be constant: use parameters and `const` "
                           "variables that are never written", related)
        self.note_sizes_of_bad_writes(sizes_of_bad_writes)
        for sym, read in self._unset_reads.values():
            self.diags.append(warning(
                "mcpl-uninitialised", f"'{sym.name}' is read here before anything is "
                "written to it: its value is undefined (as in C)", read.span,
                f"give it a value where it is declared (`{_show(sym.type)} {sym.name} = "
                "0;`) or write it first", (Related(sym.span, "declared here"),)))
        for zero, needed in self._zero_divisors:
            if not any(sym.written for sym in needed):
                notes = tuple(Related(sym.span, f"'{sym.name}' is {_describe(sym.init)} here and "
                                                "never written after") for sym in needed)
                self.diags.append(dataclasses.replace(zero, related=zero.related + notes))
        # A description imported with errors (reported at the import) may well have a
        # default memory space.
        broken = self.f.hardware in self.missing.hardware
        for sym in self.unspaced if not broken else ():
            if sym.written or sym.type.dims:
                what = "an array" if sym.type.dims else "written"
                self.error("mcpl-no-space",
                           f"'{sym.name}' is {what} but has no memory space, and "
                           f"'{self.f.hardware}' has no default memory space here", sym.node,
                           f"add a memory space: {self.visible_hint()}")
        self.info.reads = frozenset(p.name for p in self.info.params if p.read)

    def note_sizes_of_bad_writes(self, sizes: dict[int, list[ast.Name]]) -> None:
        """Fold the array sizes that use a wrongly written variable into the error of
        the write: one note, and a hint that does not lead to the next error."""
        for key, names in sizes.items():
            first = names[0]
            more = f" (and {len(names) - 1} more)" if len(names) > 1 else ""
            note = Related(first.span, f"'{first.id}' is also an array size here{more}, "
                                       "so it must stay constant")
            for i in self._bad_writes[key]:
                d = self.diags[i]
                self.diags[i] = dataclasses.replace(
                    d, related=(*d.related, note),
                    hint=f"do not write '{first.id}': it gives the size of arrays; "
                         f"copy it into a variable (`int m = {first.id};`) and change that")

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
            holds = self.truth(s.cond)
            self.guarded(s.cond, holds, lambda: self.sub(s.then))
            if s.orelse is not None:
                self.guarded(s.cond, None if holds is None else not holds,
                             lambda: self.sub(s.orelse), negated=True)
        elif isinstance(s, ast.While):
            self.executable(s)
            self.condition(s.cond)
            # as a for loop: the body of a loop whose condition is no constant runs
            self.guarded(s.cond, False if self.truth(s.cond) is False else True,
                         lambda: self.loop(s, lambda: self.sub(s.body)))
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

    def truth(self, cond: ast.Expr, resolve=None) -> bool | None:
        """Whether a condition made of constants holds; None where it is no constant."""
        v = fold_constant(cond, resolve or self.constant_value)
        return None if v is None else bool(v)

    def varies(self, cond: ast.Expr) -> bool:
        """Whether a condition may differ between the units or iterations of the loops
        around it: it reads a foreach index, a loop variable or another local that is
        not a constant (a parameter, a module constant or a const local computed from
        them is the same in every unit and iteration)."""
        if self.index_deps(cond):
            return True
        for n in ast.walk(cond):
            if isinstance(n, ast.Name):
                sym = self.result.declaration_of(n)
                if sym is not None and sym.kind not in ("param", "constant") and \
                        not (sym.kind == "local" and sym.const):
                    return True
        return False

    def guarded(self, cond: ast.Expr | None, holds: bool | None, body,
                negated: bool = False, never: str | None = None) -> None:
        """Check ``body`` as code that runs where ``cond`` holds (does not, ``negated``):
        never where it surely does not (``never``: why); only sometimes where it depends
        on parameters, constants or data alone (:attr:`reach`: ``if (n > 10)``); else
        (it surely holds, or it tests the indices of units or iterations) as code that
        runs whenever the loops around it do."""
        if holds is True or (holds is None and cond is not None and self.varies(cond)):
            # a test of the units' or iterations' indices (`if (i < n)`, a bounds test)
            # holds for some of them whenever the loops around it run: the code runs
            body()
            return
        shown = f"`{_describe(cond)}`" if cond is not None else ""
        if holds is False:
            reason = never or f"its condition {shown} is always {'true' if negated else 'false'}"
        else:
            reason = f"where {shown} {'does not hold' if negated else 'holds'}"
        saved = self.reach
        self.reach = (*saved, Reach(holds is False, reason, cond, negated))
        try:
            body()
        finally:
            self.reach = saved

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
            self.index_changed_in_body(s, s.init.name)
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

        # A loop that never runs (its condition false at the start: `i = 0; i < 0`) holds
        # code that never runs; one whose count is not known is taken to run, as a foreach
        first = self.first_test(s)
        self.guarded(s.cond, False if first is False else True, lambda: self.loop(s, body),
                     never=f"the loop's condition `{_describe(s.cond)}` is false from "
                           "its start" if s.cond is not None else None)
        self.scopes.pop()

    def index_changed_in_body(self, s: ast.For, var: str) -> None:
        """A warning where the body of a counted loop assigns its own index (``k +=
        a[i, k] * b[k]`` for ``sum +=``): the loop then runs as often as the data make
        it, forever where they step the index back. Not where the body declares a
        variable of the same name, which an assignment may mean."""
        nodes = list(ast.walk(s.body))
        if any(isinstance(n, ast.Declaration) and n.name == var for n in nodes):
            return
        for n in nodes:
            if isinstance(n, ast.Assign | ast.IncDec) and isinstance(n.target, ast.Name) \
                    and n.target.id == var:
                self.warn("mcpl-loop-index-assigned",
                          f"the body of loop {var} changes its index "
                          f"(`{print_statement(n).strip().rstrip(';')}`): the loop runs as "
                          "often as that makes it, and forever where it steps the index "
                          "back", n, "change another variable; where the loop is meant to "
                          "skip, say so with a while loop")
                return

    def first_test(self, s: ast.For) -> bool | None:
        """Whether the condition of a for loop holds before its first iteration, where
        it and the loop variable's start are constants."""
        if s.cond is None:
            return True
        var, start = None, None
        if isinstance(s.init, ast.Declaration):
            var, start = s.init.name, s.init.init
        elif isinstance(s.init, ast.Assign) and s.init.op == "=" and \
                isinstance(s.init.target, ast.Name):
            var, start = s.init.target.id, s.init.value

        def resolve(name: ast.Name) -> ast.Expr | None:
            if name.id == var:
                return start
            return self.constant_value(name)
        return self.truth(s.cond, resolve)

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
                elif isinstance(value := fold_constant(size, self.constant_value), int) \
                        and value < 1:
                    # C refuses such an array; generated code would declare it all the same
                    self.error("mcpl-bad-size", f"an array size must be at least 1, and this "
                               f"one is {value}", size,
                               "give the dimension a positive size")
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

        related = [Related(target.span, f"'{target.name}' is declared here")]
        fix = ("a view must keep the number of elements: the product of all its sizes must "
               "equal that of the array")
        symbolic = sympy.simplify(a - b)
        if symbolic == 0:
            return
        if symbolic.is_zero is False:   # sizes are positive: they differ for all values
            self.error("mcpl-view-size", f"the view '{v.name}' has {b} elements but "
                       f"'{target.name}' has {a}", v, fix, related)
            return
        # Not equal symbolically: decide with the example values (parameter defaults,
        # definitions of locals); an error only when they prove the sizes differ.
        ea = element_count(target_type, self.example_value)
        eb = element_count(v.type, self.example_value)
        diff = None if ea is None or eb is None else sympy.simplify(ea - eb)
        if diff is not None and not diff.free_symbols and diff != 0:
            self.error("mcpl-view-size", f"the view '{v.name}' has {eb} elements but "
                       f"'{target.name}' has {ea} (with the example values; symbolically "
                       f"{b} and {a})", v, fix, related)
            return
        self.diags.append(warning(
            "mcpl-view-size-unknown",
            f"cannot show that the view '{v.name}' ({b} elements) has as many elements as "
            f"'{target.name}' ({a}) for all values; they are equal with the example values"
            if diff == 0 else
            f"cannot decide whether the view '{v.name}' ({b} elements) has as many elements "
            f"as '{target.name}' ({a})", v.span,
            "a view must keep the number of elements; make the sizes `const` with values "
            "that divide (e.g. `const int t = p / m;`) or give parameters example values",
            tuple(related)))

    def example_value(self, name: ast.Name) -> ast.Expr | None:
        """The definition of a local with an initial value, or a parameter's example
        value (its default): the values a view's element count is decided with."""
        sym = self.result.declaration_of(name)
        if sym is None:
            return None
        if sym.kind in ("local", "constant") and sym.init is not None and not sym.type.dims:
            return sym.init
        if sym.kind == "param":
            return getattr(sym.node, "default", None)
        return None

    def check_default(self, p: ast.Param) -> None:
        """The error of a scalar parameter's default (its example value, what analyses
        compute with) that its type cannot hold: ``const int n = 99999999999`` (beyond
        32 bits), ``const int n = 2.5`` (no whole number)."""
        v = fold_constant(p.default, self.constant_value)
        kind = p.type.name
        held = value_range(kind)
        if v is None or isinstance(v, bool) or held is None:
            return
        integer = kind != "float"
        if integer and isinstance(v, float) and not v.is_integer():
            self.error("mcpl-bad-default", f"the example value {v} of '{p.name}' is no whole "
                       f"number: '{p.name}' is {article(kind)} parameter", p.default,
                       f"give a whole number, or declare '{p.name}' float or double")
        elif not held[0] <= v <= held[1]:
            hint = ("give a smaller value, or declare the parameter 'double'" if not integer
                    else "give a value in that range" if kind == "long"
                    else "give a value in that range, or declare the parameter 'long'")
            self.error("mcpl-bad-default", f"the example value {int(v) if integer else v} of "
                       f"'{p.name}' does not fit its type '{kind}' ({held[2]})", p.default,
                       hint)

    def constant_value(self, name: ast.Name) -> ast.Expr | None:
        """The defining expression of a const local (for symbolic sizes), if any."""
        sym = self.result.declaration_of(name)
        if sym is not None and sym.kind in ("local", "constant") and sym.const \
                and sym.init is not None:
            return sym.init
        return None

    def check_divisor(self, op: str, divisor: ast.Expr, span) -> None:
        """The error of an integer division or remainder by zero: a divisor that folds
        to 0 with the const variables' values now, or with the initial values of locals
        that are never written (known at the end of the function)."""
        zero = division_by_zero(op, divisor, span, self.constant_value)
        if zero is not None:
            self.diags.append(zero)
            return
        needed: list[Symbol] = []

        def initial_value(name: ast.Name) -> ast.Expr | None:
            value = self.constant_value(name)
            if value is not None:
                return value
            sym = self.result.declaration_of(name)
            if sym is None or sym.kind != "local" or sym.type.dims or sym.init is None:
                return None
            needed.append(sym)
            return sym.init

        zero = division_by_zero(op, divisor, span, initial_value)
        if zero is not None and needed:
            self._zero_divisors.append((zero, needed))

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
            self.check_assignable(tt, vt, s.value, whole=s.op == "=")
            if s.op in ("%=", "<<=", ">>=", "&=", "|=", "^=") and tt.name in ("float", "double"):
                self.error("mcpl-bad-operand", f"'{s.op}' needs an integer variable", s)
            elif s.op in ("/=", "%=") and not tt.dims and tt.name in _RANK and \
                    tt.name not in ("float", "double") and vt is not None and \
                    vt.name not in ("float", "double"):
                self.check_divisor(s.op, s.value, s.span)
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

    def mark_written(self, sym: Symbol, node: ast.Node, view: Symbol | None = None) -> None:
        """Record a write of ``sym`` by ``node`` (through ``view``, a view of it) and
        report it where it happens if ``sym`` may not be written."""
        sym.written = True
        self._first_write.setdefault(id(sym), node)
        target = self._view_of.get(id(sym))
        if target is not None:
            # A view has the constness and memory space of what it views.
            self.mark_written(target, node, view or sym)
            return
        through = f" (through its view '{view.name}')" if view is not None else ""
        if sym.kind == "index":
            self.error("mcpl-write-index", f"the foreach index '{sym.name}' cannot be changed",
                       node, "copy it into a variable first")
        elif sym.const:
            message = (f"parameter '{sym.name}' is const but written" if sym.kind == "param"
                       else f"'{sym.name}' is const and cannot be written")
            self.bad_write(sym, error(
                "mcpl-write-const", message + through,
                node.span, "remove `const` from its declaration or do not write it",
                (Related(sym.span, f"'{sym.name}' is declared const here"),)))
        elif sym.space is not None and self.hwd is not None and \
                self.hwd.has_memory_space(sym.space) and \
                self.hwd.memory_space(sym.space).read_only:
            self.bad_write(sym, error(
                "mcpl-write-read-only", f"'{sym.name}' is in read-only memory space "
                f"'{sym.space}' and cannot be written{through}", node.span, None,
                (Related(sym.span, f"'{sym.name}' is declared here"),)))

    def bad_write(self, sym: Symbol, d: Diagnostic) -> None:
        self._bad_writes.setdefault(id(sym), []).append(len(self.diags))
        self.diags.append(d)

    def check_assignable(self, target: ast.Type | None, value: ast.Type | None,
                         node: ast.Node, whole: bool = True) -> None:
        """That a value of type ``value`` (the expression ``node``) may be stored in a
        ``target``; ``whole``: it is stored as it is (not ``+=``), so a constant out of
        the target's range is warned of."""
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
            return
        if whole and isinstance(node, ast.Expr):
            beyond = constant_beyond(target.name, node, self.constant_value)
            if beyond is not None:
                self.diags.append(beyond)

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
