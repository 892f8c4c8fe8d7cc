"""Typing of MCPL expressions for the function walk of ``check_statements``: names,
array accesses and their index counts, operators, casts, calls of user, library and
built-in functions, and references to hardware-description properties."""

from __future__ import annotations

from mcl.diagnostics import McplError, Related
from mcl.mcpl import ast
from mcl.mcpl.check_common import (
    _RANK,
    BUILTINS,
    STUB_MARKERS,
    _describe,
    _levels,
    _root,
    _show,
    _suggest,
)
from mcl.mcpl.fold import fold_constant
from mcl.mcpl.resolve import FunctionInfo


class _ExpressionChecks:
    """Expression typing; mixed into ``_FunctionChecker``, whose state (scopes, the
    hardware description, the tables of the result) it uses."""


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
            return t if t.name not in ("bool", "byte") else ast.Type("int")
        if isinstance(e, ast.Binary):
            return self.binary(e)
        if isinstance(e, ast.Ternary):
            self.condition(e.cond)
            holds = self.truth(e.cond)
            a = b = None

            def then() -> None:
                nonlocal a
                a = self.expr(e.then)

            def orelse() -> None:
                nonlocal b
                b = self.expr(e.orelse)

            self.guarded(e.cond, holds, then)
            self.guarded(e.cond, None if holds is None else not holds, orelse, negated=True)
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
                if self.missing.imports or e.id in self.missing.hardware:
                    return None
                self.error("mcpl-hardware-not-imported",
                           f"'{e.id}' is not an imported hardware description", e,
                           f"add `import {e.id};` to use its properties")
                return None
            known = [n for scope in self.scopes for n in scope] + list(self.result.constants)
            self.error("mcpl-undeclared", f"'{e.id}' is not declared", e,
                       _suggest(e.id, known) or "declare it before use, or add it as a "
                       "parameter")
            return None
        self.result._names[id(e)] = sym
        if reading and sym.kind == "local" and sym.init is None and not sym.written and \
                not sym.type.dims and sym.type.name in _RANK and \
                getattr(sym.node, "space", None) is None:
            # a private scalar read before anything is written to it (unless the read is
            # an argument that the call writes: see write_argument)
            self._unset_reads.setdefault(id(sym), (sym, e))
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
                if it is not None and (it.dims or it.name not in ("int", "long", "bool", "byte")):
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
        if self.reach:
            self.result._reach[id(e)] = self.reach
        self.check_constant_indices(e, bt)
        return bt.element

    def check_constant_indices(self, e: ast.Index, bt: ast.Type) -> None:
        """The error of an index that is a constant outside its dimension, where the
        dimension's size is a constant too (``t[5, 0]`` of a ``float[2, 3]``, ``t[-1]``):
        the access reaches memory that is not the array's. A warning instead in code that
        never runs or runs only where a condition on parameters alone holds (``reach``)."""
        for level, group in zip(bt.dims, e.groups, strict=True):
            for size_expr, i in zip(level, group, strict=True):
                v = fold_constant(i, self.constant_value)
                if not isinstance(v, int) or isinstance(v, bool):
                    continue
                size = fold_constant(size_expr, self.constant_value)
                size = size if isinstance(size, int) and not isinstance(size, bool) else None
                if v < 0 or (size is not None and v >= size):
                    bounds = f"0 .. {size - 1}" if size is not None else "0 or more"
                    what = f"index {v} of '{_describe(e.base)}' is outside its dimension " \
                           f"({bounds})"
                    never = [r.why for r in self.reach if r.never]
                    if never:   # dead code: wrong, but harmless while it stays dead
                        self.warn("mcpl-index-range", f"{what}, in code that never runs "
                                  f"({never[-1]})", i, "remove the code, or fix the index "
                                  "before the code can run")
                    elif self.reach:    # it runs only where a condition holds
                        self.warn("mcpl-index-range", f"{what}, in code that runs only "
                                  f"{self.reach[-1].why}", i, "where it runs, the access "
                                  "reaches memory that is not the array's: fix the index")
                    else:
                        self.error("mcpl-index-range", f"{what}", i,
                                   "the access would reach memory that is not the array's")

    def binary(self, e: ast.Binary) -> ast.Type | None:
        a = self.expr(e.left)
        if e.op in ("&&", "||"):    # the right side is evaluated only where it decides
            b = None

            def right() -> None:
                nonlocal b
                b = self.expr(e.right)

            holds = self.truth(e.left)
            self.guarded(e.left, holds if e.op == "&&" else None if holds is None
                         else not holds, right, negated=e.op == "||")
        else:
            b = self.expr(e.right)
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
        if e.op in ("/", "%") and name not in ("float", "double"):
            self.check_divisor(e.op, e.right, e.op_span or e.span)
        if e.op in ("<<", ">>"):
            self.check_shift(e, 64 if a.name == "long" else 32)
        return ast.Type("int" if name in ("bool", "byte") else name)

    def check_shift(self, e: ast.Binary, bits: int) -> None:
        """A warning where a shift's amount is a constant outside 0 .. bits - 1 of the
        (promoted) left operand: undefined in C (``i << 40`` of an int)."""
        amount = fold_constant(e.right, self.constant_value)
        if isinstance(amount, int) and not 0 <= amount < bits:
            self.warn("mcpl-shift-range", f"a shift of a {bits}-bit value by {amount} is "
                      f"undefined (as in C): the amount must be 0 .. {bits - 1}", e,
                      "shift a long (`(long) x << 40`) or by less")

    def call(self, e: ast.Call) -> ast.Type | None:
        info = self.functions.get(e.func)
        # `mcl_builtin_write(r)` declares a write: it does not read r.
        declares_write = info is None and e.func == "mcl_builtin_write"
        types = [self.expr(a, reading=not declares_write) for a in e.args]
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
        if builtin.arity < 0 and not e.args:
            self.error("mcpl-arg-count", f"'{e.func}' takes at least one argument", e,
                       f"name the parameters: `{e.func}(x);`")
        elif builtin.arity >= 0 and len(e.args) != builtin.arity:
            self.error("mcpl-arg-count", f"'{e.func}' takes {builtin.arity} argument"
                       f"{'s' * (builtin.arity != 1)}, not {len(e.args)}", e)
        for i, arg in enumerate(e.args):
            if builtin.written(i):
                self.write_argument(e, i, arg)
            t = types[i]
            if e.func in STUB_MARKERS:
                if _root(arg) is None or self.result.declaration_of(_root(arg)) is None \
                        or self.result.declaration_of(_root(arg)).kind != "param":
                    self.error("mcpl-bad-argument", f"'{e.func}' names parameters of the "
                               "function it is in", arg,
                               "a library stub declares which of its parameters it reads "
                               "and writes")
            elif t is not None and (t.dims or t.name not in _RANK):
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
            if self._unset_reads.get(id(sym), (None, None))[1] is arg:
                del self._unset_reads[id(sym)]      # written by the call, not read
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
        lib = self.library   # the library of the search path: a user's levels count
        if lib is None:
            return
        ok = callee_hw in lib and (self.f.hardware not in lib or
                                   lib.is_descendant(self.f.hardware, callee_hw))
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
        if hw is None and e.path[0] in self.missing.hardware:
            return None     # imported, but broken: reported at the import
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
