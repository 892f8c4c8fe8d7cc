"""The first phase of the MCPL-to-Lift derivation (:mod:`mcl.lift.from_mcpl`):
symbolic evaluation of the innermost body of a kernel's foreach nest, every written
element becoming a term (:mod:`mcl.lift.from_mcpl_terms`) over array reads, scalar
parameters and reductions (sequential loops that accumulate with an associative
operator), with a diagnostic at the MCPL span for each construct Lift cannot express."""

from __future__ import annotations

import itertools
from dataclasses import replace

import sympy

from mcl.diagnostics import Diagnostic, McplError, Span, error, info
from mcl.lift import cexpr as C
from mcl.lift import ir
from mcl.lift.from_mcpl_terms import (
    _ARITH,
    _COMPARE,
    ASSOCIATIVE,
    Arr,
    TAcc,
    Term,
    TError,
    TIndex,
    TIndexVar,
    TLit,
    TOp,
    TRead,
    TReduce,
    TScalar,
    Var,
    _Failed,
    _promote,
    _walk,
)
from mcl.lift.types import SCALARS, ArrayType, ScalarType, array
from mcl.mcpl import ast

#: Index variables become these symbols inside index expressions, apart from sizes
#: (sizes are positive-integer symbols named like the MCPL parameter).
_IDX_ASSUMPTIONS = {"integer": True, "nonnegative": True}

#: Atomic library functions that accumulate into one element with an associative operator.
ATOMIC_OPS = {"atomicAdd": "+"}


class _Evaluator:
    """The state of a derivation and its first phase; mixed into
    :class:`mcl.lift.from_mcpl._Deriver` with :class:`_LiftBuilder`, which reads the
    terms, variables and parameters this phase records."""

    def __init__(self, fn: ast.Function, constants: dict[str, int]):
        self.fn = fn
        self.constants = constants
        self.params = {p.name: p for p in fn.params}
        self.problems: list[Diagnostic] = []
        self.notes: list[Diagnostic] = []
        self.vars: dict[sympy.Symbol, Var] = {}
        self.writes: list[tuple[str, str, tuple, Term, Span]] = []   # (array, kind, idx, value)
        self.lift_params: dict[str, ir.Param] = {}
        self.userfuns: dict[str, ir.UserFun] = {}
        self._uf_keys: dict[tuple, str] = {}
        self._fresh = itertools.count()
        self.written = self._written_names(fn.body)
        self.sizes: set[str] = set()
        self.types: dict[str, str] = {}                 # C type of every local scalar
        self._index_vars: dict[str, Var] = {}           # index variables in scope, by name
        self.arrays: dict[str, Arr] = {}
        for p in fn.params:
            if p.type.dims:
                self.arrays[p.name] = self._param_array(p)

    # --------------------------------------------------------------- reporting
    def fail(self, node: ast.Node | None, code: str, message: str, hint: str | None = None):
        span = node.span if node is not None else self.fn.span
        if not any(d.span == span and d.code == code for d in self.problems):
            self.problems.append(error(code, message, span, hint))
        raise _Failed

    def note(self, node: ast.Node | None, message: str) -> None:
        self.notes.append(info("from-mcpl-note", message, node.span if node else None))

    # --------------------------------------------------------------- parameters
    def _param_array(self, p: ast.Param) -> Arr:
        from mcl.mcpl.symbolic import to_sympy
        if len(p.type.dims) != 1:
            self.problems.append(error(
                "from-mcpl-unsupported", f"'{p.name}' is an array of tiles; Lift arrays here "
                "are plain nested arrays", p.span, "derive from the perfect version"))
            return Arr(self._lift_param(p.name, None), (), p.type.name, p.name)
        dims = []
        for e in p.type.dims[0]:
            s = to_sympy(e)
            if s is None:
                self.problems.append(error("from-mcpl-unsupported",
                                           f"the size of '{p.name}' is not integer arithmetic "
                                           "on sizes", e.span))
                s = sympy.Integer(1)
            self.sizes |= {str(x) for x in s.free_symbols}
            dims.append(s)
        if p.type.name not in SCALARS:
            self.problems.append(error("from-mcpl-unsupported",
                                       f"'{p.name}' has element type {p.type.name}; Lift "
                                       "programs here hold float, int or double", p.span))
        t = array(ScalarType(p.type.name if p.type.name in SCALARS else "float"), *dims)
        return Arr(self._lift_param(p.name, t), tuple(dims), p.type.name, p.name)

    def _lift_param(self, name: str, t) -> ir.Param:
        """The program parameter of the MCPL parameter ``name`` (a size used as a value
        is renamed: Lift's syntax keeps sizes and parameters apart)."""
        if name not in self.lift_params:
            lname = f"{name}_value" if t is not None and not isinstance(t, ArrayType) and \
                name in self.sizes else name
            self.lift_params[name] = ir.Param(lname, type=t)
        return self.lift_params[name]

    @staticmethod
    def _written_names(body: ast.Stmt) -> set[str]:
        out = set()
        for n in ast.walk(body):
            target = None
            if isinstance(n, ast.Assign | ast.IncDec):
                target = n.target
            elif isinstance(n, ast.Call) and n.func in ATOMIC_OPS and n.args:
                target = n.args[0]
            while isinstance(target, ast.Index):
                target = target.base
            if isinstance(target, ast.Name):
                out.add(target.id)
        return out

    # --------------------------------------------------------------- structure
    def evaluate(self) -> list[Var]:
        """Evaluate the body of the foreach nest, recording the writes to arrays
        (``self.writes``); the foreach variables, outermost first. Raises McplError with
        every problem found."""
        fn = self.fn
        stmts = list(fn.body.statements)
        foreach_vars: list[Var] = []
        groups: set[str] = set()
        body: list[ast.Stmt] = []
        if len(stmts) != 1 or not isinstance(stmts[0], ast.ForEach):
            bad = next((s for s in stmts if not isinstance(s, ast.ForEach)), fn.body)
            self.problems.append(error(
                "from-mcpl-structure",
                f"'{fn.name}' is not one foreach nest: Lift derives programs from a foreach "
                "over the output's indices with all work inside", bad.span,
                "put every statement inside the (innermost) foreach"))
        else:
            s: ast.Stmt = stmts[0]
            while isinstance(s, ast.ForEach):
                groups.add(s.group)
                try:
                    foreach_vars.append(self._foreach_var(s))
                except _Failed:
                    pass
                inner = list(s.body.statements) if isinstance(s.body, ast.Block) else [s.body]
                if len(inner) == 1 and isinstance(inner[0], ast.ForEach):
                    s = inner[0]
                    continue
                nested = [x for x in inner if any(isinstance(n, ast.ForEach) for n in ast.walk(x))]
                if nested:
                    self.problems.append(error(
                        "from-mcpl-structure", "statements beside a nested foreach: this is "
                        "a kernel for a level with several kinds of parallel units",
                        nested[0].span, "derive from the perfect (or accelerator) version"))
                body = inner
                break
            if len(groups) > 1:
                self.problems.append(error(
                    "from-mcpl-structure",
                    f"the foreach loops run over several par_groups ({', '.join(sorted(groups))})"
                    ": the kernel is written for a lower level",
                    stmts[0].span, "derive from the perfect (or accelerator) version"))
        env: dict[str, Term] = {}
        self.exec_block(body, env, in_loop=False, in_branch=False)
        if self.problems:
            raise McplError(self.problems)
        return foreach_vars

    def _foreach_var(self, s: ast.ForEach) -> Var:
        size = self.index(self.value(s.size, {}), s.size, "the size of a foreach")
        var = Var(s.var.name, size, "foreach", sympy.Dummy(s.var.name, **_IDX_ASSUMPTIONS),
                  s.span)
        self.vars[var.symbol] = var
        self._index_vars[var.name] = var
        return var

    # --------------------------------------------------------------- expressions
    def value(self, e: ast.Expr, env: dict[str, Term]) -> Term:
        if isinstance(e, ast.Literal):
            if e.kind == "int":
                return TIndex(sympy.Integer(int(e.value)), TLit(str(int(e.value)), "int"))
            if e.kind == "bool":
                return TLit("1" if e.value else "0", "bool")
            return TLit(repr(float(e.value)), "double" if e.suffix == "d" else "float")
        if isinstance(e, ast.Name):
            return self._name(e, env)
        if isinstance(e, ast.Index):
            return self._read(e, env)
        if isinstance(e, ast.Binary):
            a, b = self.value(e.left, env), self.value(e.right, env)
            if isinstance(a, TError) or isinstance(b, TError):
                return TError()
            if isinstance(a, TIndex) and isinstance(b, TIndex) and e.op in _ARITH:
                x, y = a.expr, b.expr
                expr = {"+": lambda: x + y, "-": lambda: x - y, "*": lambda: x * y,
                        "/": lambda: sympy.floor(x / y), "%": lambda: sympy.Mod(x, y)}[e.op]()
                return TIndex(expr, TOp(e.op, (a.value, b.value), "int"))
            a, b = self._as_value(a), self._as_value(b)
            if e.op in _ARITH:
                return TOp(e.op, (a, b), _promote(a.type, b.type))
            if e.op in _COMPARE:
                return TOp(e.op, (a, b), "int")
            self.fail(e, "from-mcpl-unsupported",
                      f"operator '{e.op}' has no counterpart in Lift's user functions",
                      "use + - * / % and comparisons")
        if isinstance(e, ast.Unary):
            a = self.value(e.operand, env)
            if isinstance(a, TError):
                return a
            if e.op == "+":
                return a
            if e.op == "-" and isinstance(a, TIndex):
                return TIndex(-a.expr, TOp("neg", (a.value,), "int"))
            if e.op == "-" and isinstance(a, TLit) and not a.text.startswith("-"):
                return TLit("-" + a.text, a.type)     # a literal (a reduce may start from it)
            if e.op in ("-", "!"):
                a = self._as_value(a)
                return TOp("neg" if e.op == "-" else "!", (a,), a.type if e.op == "-" else "int")
            self.fail(e, "from-mcpl-unsupported", f"operator '{e.op}' has no counterpart in "
                      "Lift's user functions")
        if isinstance(e, ast.Ternary):
            c, a, b = (self._as_value(self.value(x, env)) for x in (e.cond, e.then, e.orelse))
            return TOp("?:", (c, a, b), _promote(a.type, b.type))
        if isinstance(e, ast.Call):
            if e.func in C.BUILTINS:
                args = tuple(self._as_value(self.value(a, env)) for a in e.args)
                if e.func in ("min", "max", "abs") and all(a.type == "int" for a in args):
                    return TOp(e.func, args, "int")
                return TOp(e.func, args, _promote("float", *(a.type for a in args)))
            if e.func in ATOMIC_OPS:
                self.fail(e, "from-mcpl-atomic", f"{e.func} used as a value")
            self.fail(e, "from-mcpl-unsupported",
                      f"call of '{e.func}': Lift's user functions are scalar expressions",
                      "inline the function into the kernel")
        if isinstance(e, ast.Cast):
            a = self._as_value(self.value(e.operand, env))
            return self._convert(a, e.type.name, e)
        self.fail(e, "from-mcpl-unsupported",
                  f"{type(e).__name__.lower()} expressions have no counterpart in Lift")

    def _as_value(self, t: Term) -> Term:
        return t.value if isinstance(t, TIndex) else t

    def _convert(self, t: Term, to: str, node: ast.Node) -> Term:
        """``t`` as a value of C type ``to`` (an initialisation or assignment converts)."""
        if to == t.type or isinstance(t, TError) or isinstance(t, TAcc):
            return t
        if isinstance(t, TIndex) and to == "int":
            return t
        v = self._as_value(t)
        if isinstance(v, TLit):
            if to in ("float", "double"):
                return TLit(repr(float(v.text.rstrip("fF"))), to)
            if to == "int" and v.type == "bool":
                return TLit(v.text, "int")
        if to in ("float", "double") and v.type in ("int", "bool", "float", "double"):
            return TOp("tofloat", (v,), to) if v.type in ("int", "bool") else \
                replace(v, type=to) if isinstance(v, TOp) else v
        self.fail(node, "from-mcpl-unsupported",
                  f"conversion from {v.type} to {to} has no counterpart in Lift's user functions")

    def _name(self, e: ast.Name, env: dict[str, Term]) -> Term:
        if e.id in env:
            val = env[e.id]
            if isinstance(val, TError) and val.reason:
                self.fail(e, "from-mcpl-name", val.reason)
            return val
        if e.id in self._index_vars:
            v = self._index_vars[e.id]
            return TIndex(v.symbol, TIndexVar(v))
        p = self.params.get(e.id)
        if p is None:
            self.fail(e, "from-mcpl-name", f"'{e.id}' is not declared here")
        if p.type.dims:
            self.fail(e, "from-mcpl-unsupported", f"the array '{e.id}' used as a whole")
        if p.name in self.written:
            self.fail(e, "from-mcpl-write", f"the scalar parameter '{e.id}' is written: a Lift "
                      "program returns one array")
        if p.type.name not in SCALARS:
            self.fail(e, "from-mcpl-unsupported", f"'{e.id}' has type {p.type.name}")
        self._lift_param(p.name, ScalarType(p.type.name))
        if p.type.name == "int":
            from mcl.lift.types import size_symbol
            return TIndex(size_symbol(p.name), TScalar(p.name, "int"))
        return TScalar(p.name, p.type.name)

    def _read(self, e: ast.Index, env: dict[str, Term]) -> Term:
        if not isinstance(e.base, ast.Name) or e.base.id not in self.arrays:
            self.fail(e, "from-mcpl-unsupported", "only parameters can be indexed here",
                      "Lift has no local arrays")
        arr = self.arrays[e.base.id]
        if len(e.groups) != 1 or len(e.groups[0]) != len(arr.dims):
            self.fail(e, "from-mcpl-unsupported",
                      f"'{arr.name}' indexed with {sum(len(g) for g in e.groups)} index(es) "
                      f"for {len(arr.dims)} dimension(s)")
        if any(w[0] == arr.name for w in self.writes):
            self.fail(e, "from-mcpl-write", f"'{arr.name}' is read after it was written",
                      "compute the value in a local variable first")
        idx = tuple(self.index(self.value(x, env), x, f"an index of '{arr.name}'")
                    for x in e.groups[0])
        return TRead(arr, idx, arr.elem, e.span)

    def index(self, t: Term, node: ast.Node, what: str) -> sympy.Expr:
        """``t`` as an integer expression in indices and sizes (for index positions)."""
        if isinstance(t, TIndex):
            return t.expr
        if isinstance(t, TError):
            raise _Failed
        if any(isinstance(s, TRead) for s in _walk(t)):
            self.fail(node, "from-mcpl-data-index",
                      f"{what} depends on data read from an array: Lift's views (split, "
                      "transpose, slide, ...) rearrange arrays by position only",
                      "data-dependent accesses (gathers, scatters, indirect indexing) cannot "
                      "be derived; write the access as an affine function of the indices")
        self.fail(node, "from-mcpl-access", f"{what} is not integer arithmetic on indices "
                  "and sizes")

    # --------------------------------------------------------------- statements
    def exec_block(self, stmts, env: dict[str, Term], in_loop: bool, in_branch: bool) -> None:
        for s in stmts:
            try:
                self.exec(s, env, in_loop, in_branch)
            except _Failed:
                # keep going: later statements may hold more that Lift cannot express
                for name in self._assigned_locals(s):
                    if name in env:
                        env[name] = TError()

    def _assigned_locals(self, s: ast.Stmt) -> set[str]:
        out = set()
        for n in ast.walk(s):
            if isinstance(n, ast.Assign | ast.IncDec) and isinstance(n.target, ast.Name):
                out.add(n.target.id)
            elif isinstance(n, ast.Declaration):
                out.add(n.name)
        return out

    def exec(self, s: ast.Stmt, env: dict[str, Term], in_loop: bool, in_branch: bool) -> None:
        if isinstance(s, ast.Block):
            inner = dict(env)
            self.exec_block(s.statements, inner, in_loop, in_branch)
            for k in env:
                env[k] = inner[k]
            return
        if isinstance(s, ast.Declaration):
            if s.type.dims:
                self.fail(s, "from-mcpl-unsupported", f"local array '{s.name}': Lift has no "
                          "arrays other than the program's inputs and the views of them")
            if s.views:
                self.fail(s, "from-mcpl-unsupported", "views (as) have no counterpart here")
            self.types[s.name] = s.type.name
            if s.init is None:
                env[s.name] = TError(s.type.name, f"'{s.name}' is read before it has a value")
            else:
                env[s.name] = self._convert(self.value(s.init, env), s.type.name, s)
            return
        if isinstance(s, ast.Assign):
            self._assign(s, s.target, s.op, s.value, env, in_loop, in_branch)
            return
        if isinstance(s, ast.IncDec):
            one = ast.Literal(1, "int", span=s.span)
            self._assign(s, s.target, "+=" if s.op == "++" else "-=", one, env, in_loop,
                         in_branch)
            return
        if isinstance(s, ast.ExprStmt) and isinstance(s.expr, ast.Call):
            self._call(s.expr, env, in_loop, in_branch)
            return
        if isinstance(s, ast.For):
            self._for(s, env, in_branch)
            return
        if isinstance(s, ast.If):
            self._if(s, env, in_loop)
            return
        if isinstance(s, ast.While):
            self.fail(s, "from-mcpl-while", "a while loop: the number of iterations depends on "
                      "data, but Lift's reductions run over whole arrays of known size",
                      "write a for loop with bounds given by sizes")
        if isinstance(s, ast.Break | ast.Continue | ast.Return):
            word = {ast.Break: "break", ast.Continue: "continue", ast.Return: "return"}[type(s)]
            self.fail(s, "from-mcpl-early-exit", f"early exit ({word}): Lift's patterns visit "
                      "every element; there is no way to stop or skip an iteration",
                      "compute the value with a ?: expression instead of leaving the loop")
        if isinstance(s, ast.Barrier):
            self.fail(s, "from-mcpl-structure", "a barrier: the kernel is written for a level "
                      "with synchronisation between units", "derive from the perfect version")
        if isinstance(s, ast.ForEach):
            self.fail(s, "from-mcpl-structure", "a foreach inside sequential code")
        self.fail(s, "from-mcpl-unsupported",
                  f"{type(s).__name__} statements have no counterpart in Lift")

    def _assign(self, s, target: ast.Expr, op: str, rhs: ast.Expr, env, in_loop, in_branch):
        v = self.value(rhs, env)
        bin_op = op[:-1] if op != "=" else None
        if bin_op is not None and bin_op not in _ARITH:
            self.fail(s, "from-mcpl-unsupported", f"'{op}' has no counterpart in Lift")
        if isinstance(target, ast.Name) and target.id in env:
            t = self.types.get(target.id, "float")
            if bin_op is not None:
                old = env[target.id]
                if isinstance(old, TIndex) and isinstance(v, TIndex):
                    v = self.value(ast.Binary(bin_op, target, rhs, span=s.span), env)
                else:
                    a, b = self._as_value(old), self._as_value(v)
                    v = TOp(bin_op, (a, b), _promote(a.type, b.type))
            env[target.id] = self._convert(v, t, s)
            return
        if isinstance(target, ast.Name):
            if target.id in self._index_vars:
                self.fail(s, "from-mcpl-structure", f"the index '{target.id}' is assigned")
            self.fail(s, "from-mcpl-write", f"'{target.id}' is a scalar parameter that is "
                      "written: a Lift program returns one array",
                      "write the result into an array parameter")
        if not isinstance(target, ast.Index) or not isinstance(target.base, ast.Name) or \
                target.base.id not in self.arrays:
            self.fail(s, "from-mcpl-unsupported", "assignment to something other than a "
                      "local scalar or an element of an array parameter")
        if in_loop:
            self.fail(s, "from-mcpl-write", f"'{target.base.id}' is written inside a sequential "
                      "loop: Lift computes every output element once, from its inputs",
                      "accumulate in a local variable and write it after the loop")
        if in_branch:
            self.fail(s, "from-mcpl-write", f"'{target.base.id}' is written conditionally: "
                      "Lift computes every output element", "write a ?: expression instead")
        arr = self.arrays[target.base.id]
        if any(w[0] == arr.name for w in self.writes):
            self.fail(s, "from-mcpl-write", f"'{arr.name}' is written twice",
                      "compute the value in a local variable and write it once")
        idx = tuple(self.index(self.value(x, env), x, f"an index of '{arr.name}'")
                    for x in target.groups[0]) if len(target.groups) == 1 else None
        if idx is None or len(idx) != len(arr.dims):
            self.fail(target, "from-mcpl-write", f"'{arr.name}' written with the wrong number "
                      "of indices")
        if bin_op is not None:
            old = TRead(arr, idx, arr.elem, target.span)
            v = self._as_value(v)
            v = TOp(bin_op, (old, v), _promote(arr.elem, v.type))
        self.writes.append((arr.name, "assign", idx, self._convert(v, arr.elem, s), s.span))

    def _call(self, e: ast.Call, env, in_loop, in_branch):
        if e.func not in ATOMIC_OPS:
            if e.func.startswith("atomic"):
                self.fail(e, "from-mcpl-atomic",
                          f"{e.func}: Lift derives reductions from atomicAdd into one fixed "
                          "element only")
            self.fail(e, "from-mcpl-unsupported", f"call of '{e.func}' as a statement: Lift "
                      "has no procedures", "inline the function into the kernel")
        target, v = e.args[0], self._as_value(self.value(e.args[1], env))
        if not isinstance(target, ast.Index) or not isinstance(target.base, ast.Name) or \
                target.base.id not in self.arrays:
            self.fail(e, "from-mcpl-atomic", f"{e.func} on something other than an element of "
                      "an array parameter")
        arr = self.arrays[target.base.id]
        idx = []
        for x in target.groups[0]:
            t = self.value(x, env)
            if isinstance(t, TIndex):
                idx.append(t.expr)
                continue
            self.index(t, x, f"the element that {e.func} updates")   # reports why
        if in_loop or in_branch:
            self.fail(e, "from-mcpl-atomic", f"{e.func} inside a sequential loop or a branch")
        varying = [self.vars[s].name for x in idx for s in x.free_symbols if s in self.vars]
        if varying:
            self.fail(e, "from-mcpl-atomic",
                      f"{e.func} into the element '{arr.name}[...]' that depends on "
                      f"{', '.join(sorted(set(varying)))}: an atomic update of computed "
                      "elements is a scatter, which Lift cannot express",
                      "Lift derives reductions from atomics into one fixed element")
        if len(arr.dims) != 1 or sympy.simplify(arr.dims[0] - 1) != 0 or idx != [0]:
            self.fail(e, "from-mcpl-atomic", f"{e.func} into one element of '{arr.name}', which "
                      "has more than one: Lift would have to copy the others",
                      f"declare '{arr.name}' with one element")
        if any(w[0] == arr.name for w in self.writes):
            self.fail(e, "from-mcpl-write", f"'{arr.name}' is written twice")
        self.writes.append((arr.name, "atomic:" + ATOMIC_OPS[e.func], tuple(idx), v, e.span))

    def _for(self, s: ast.For, env: dict[str, Term], in_branch: bool) -> None:
        var_name, lo, hi = self._loop_bounds(s, env)
        size = sympy.simplify(hi - lo) if lo is not None and hi is not None else None
        if lo is not None and lo != 0:
            self.fail(s.init, "from-mcpl-access", f"the loop over '{var_name}' starts at {lo}: "
                      "Lift reduces over whole arrays", "let the loop start at 0 and add the "
                      "offset to the indices")
        if size is None:
            size = sympy.Symbol(f"len_{var_name}", integer=True, positive=True)
        var = Var(var_name, size, "loop", sympy.Dummy(var_name, **_IDX_ASSUMPTIONS),
                  s.span)
        self.vars[var.symbol] = var
        outer = dict(env)
        accs = sorted(n for n in self._assigned_locals(s.body) if n in env)
        inner = dict(env)
        for n in accs:
            inner[n] = TAcc(n, self.types.get(n, "float"))
        saved = self._index_vars.get(var_name)
        self._index_vars[var_name] = var
        try:
            self.exec_block(s.body.statements if isinstance(s.body, ast.Block) else [s.body],
                            inner, in_loop=True, in_branch=in_branch)
        finally:
            if saved is None:
                self._index_vars.pop(var_name, None)
            else:
                self._index_vars[var_name] = saved
        for n in accs:
            new = inner[n]
            if isinstance(new, TError):
                env[n] = new
                continue
            if new == TAcc(n, self.types.get(n, "float")):
                continue
            acc = self._accumulation(n, new)
            if acc is None:
                self.problems.append(error(
                    "from-mcpl-loop-carried",
                    f"'{n}' is carried from one iteration of the loop over '{var_name}' to the "
                    "next, but not as an accumulation with an associative operator "
                    "(+, *, min, max): Lift's reduce needs one",
                    s.span, f"write the update as {n} += ... (or *=, = max({n}, ...))"))
                env[n] = TError()
                continue
            op, contribution, inner_vars = acc
            env[n] = TReduce(op, outer[n], (var,) + inner_vars, contribution,
                             self.types.get(n, "float"), n, s.span)

    def _accumulation(self, name: str, new: Term):
        """(operator, contribution, inner loop variables) when ``new`` is the accumulator
        ``name`` combined with a value that does not depend on any accumulator."""
        acc = TAcc(name, self.types.get(name, "float"))

        def free(t: Term) -> bool:
            return not any(isinstance(x, TAcc) for x in _walk(t))

        if isinstance(new, TReduce) and new.init == acc and free(new.body):
            return new.op, new.body, new.vars
        if isinstance(new, TOp) and len(new.args) == 2:
            a, b = new.args
            op = new.op
            if op in ASSOCIATIVE:
                if a == acc and free(b):
                    return op, b, ()
                if b == acc and free(a):
                    return op, a, ()
            if op == "-" and a == acc and free(b):
                return "+", TOp("neg", (b,), b.type), ()
        return None

    def _loop_bounds(self, s: ast.For, env):
        """(variable, start, end) of ``for (k = lo; k < hi; k++)``; start/end are None
        when they are not expressions of sizes (a problem is then recorded)."""
        init = s.init
        if isinstance(init, ast.Declaration) and init.init is not None:
            name, lo_e = init.name, init.init
        elif isinstance(init, ast.Assign) and init.op == "=" and isinstance(init.target, ast.Name):
            name, lo_e = init.target.id, init.value
        else:
            self.fail(s, "from-mcpl-loop", "the loop has no start value")
        upd = s.update
        step_ok = (isinstance(upd, ast.IncDec) and upd.op == "++") or (
            isinstance(upd, ast.Assign) and upd.op == "+=" and isinstance(upd.value, ast.Literal)
            and upd.value.value == 1)
        if not step_ok or not isinstance(getattr(upd, "target", None), ast.Name) or \
                upd.target.id != name:
            self.fail(s, "from-mcpl-loop", f"the loop over '{name}' does not count up by one",
                      "Lift reduces over arrays element by element")
        cond = s.cond
        if not (isinstance(cond, ast.Binary) and cond.op in ("<", "<=") and
                isinstance(cond.left, ast.Name) and cond.left.id == name):
            self.fail(s, "from-mcpl-loop", f"the loop condition is not '{name} < end'")
        lo = self._bound(lo_e, env, name, "start")
        hi = self._bound(cond.right, env, name, "end")
        if hi is not None and cond.op == "<=":
            hi = hi + 1
        return name, lo, hi

    def _bound(self, e: ast.Expr, env, name: str, which: str):
        t = self.value(e, env)
        if isinstance(t, TIndex):
            deps = [v.name for s in t.expr.free_symbols if (v := self.vars.get(s)) is not None]
            if deps:
                self.problems.append(error(
                    "from-mcpl-access", f"the {which} of the loop over '{name}' depends on the "
                    f"index {', '.join(sorted(deps))}: Lift's arrays are rectangular", e.span))
                return None
            return t.expr
        if any(isinstance(x, TRead) for x in _walk(t)):
            self.problems.append(error(
                "from-mcpl-data-bounds", f"the {which} of the loop over '{name}' is read from "
                "an array: the number of iterations depends on data, but Lift's arrays have "
                "sizes known before the program runs",
                e.span, "irregular structures (CSR rows, ...) are outside what Lift expresses"))
            return None
        self.problems.append(error("from-mcpl-loop", f"the {which} of the loop over '{name}' "
                                   "is not integer arithmetic on sizes", e.span))
        return None

    def _if(self, s: ast.If, env: dict[str, Term], in_loop: bool) -> None:
        cond = self._as_value(self.value(s.cond, env))
        then_env, else_env = dict(env), dict(env)
        self.exec_block([s.then], then_env, in_loop, in_branch=True)
        if s.orelse is not None:
            self.exec_block([s.orelse], else_env, in_loop, in_branch=True)
        for k in env:
            a, b = then_env[k], else_env[k]
            if a != b:
                a, b = self._as_value(a), self._as_value(b)
                env[k] = TOp("?:", (cond, a, b), _promote(a.type, b.type))
