"""From MCPL to Lift: derive a Lift high-level program from an MCPL kernel written at
a level with one kind of parallel unit (``perfect``, ``accelerator``), or explain, at
the MCPL spans, what Lift cannot express (data-dependent indices, atomics on
computed elements, early exits, loop-carried dependences).

The derivation evaluates the innermost body of the foreach nest symbolically: every
written element becomes a term over array reads (with affine indices), scalar
parameters and reductions (sequential loops that accumulate with an associative
operator). The term is then turned into Lift, one index variable at a time:
the reads that vary with the variable are viewed so that it runs over their outer
dimension (``transpose`` for a column, ``slide`` for a window ``i + y``, ``split``
for a block ``s*i + x``), zipped, and mapped over (foreach) or mapped and reduced
(loops). Scalar arithmetic becomes user functions."""

from __future__ import annotations

import argparse
import importlib.util
import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import ModuleType

import numpy as np
import sympy

from mcl.diagnostics import Diagnostic, McplError, Span, error, info
from mcl.lift import cexpr as C
from mcl.lift import ir
from mcl.lift.types import SCALARS, ArrayType, ScalarType, array
from mcl.mcpl import ast

#: Index variables become these symbols inside index expressions, apart from sizes
#: (sizes are positive-integer symbols named like the MCPL parameter).
_IDX_ASSUMPTIONS = {"integer": True, "nonnegative": True}

#: Operators a sequential loop may accumulate with, as ``reduce`` operators; the
#: second item is the identity (None: there is none that a literal can write).
ASSOCIATIVE = {"+": "0", "*": "1", "max": None, "min": None, "fmax": None, "fmin": None}

#: Atomic library functions that accumulate into one element with an associative operator.
ATOMIC_OPS = {"atomicAdd": "+"}

#: Names of standard user functions for binary operators (the Lift programs' spelling).
_STD_NAMES = {"+": "add", "-": "sub", "*": "mult", "/": "div"}

_ARITH = ("+", "-", "*", "/", "%")
_COMPARE = ("<", "<=", ">", ">=", "==", "!=", "&&", "||")
_RANK = {"bool": 0, "int": 1, "float": 2, "double": 3}


# ----------------------------------------------------------------------------- terms

@dataclass(frozen=True)
class Var:
    """An index variable: of a foreach (mapped over) or of a sequential loop (reduced)."""

    name: str
    size: sympy.Expr
    kind: str                                  # "foreach" | "loop"
    symbol: sympy.Symbol
    span: Span | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Arr:
    """An array as Lift sees it at one point of the derivation: the expression that
    denotes it (a program parameter, a lambda parameter or a view of one), its
    remaining dimensions, its element type and the MCPL array it comes from."""

    expr: ir.Expr
    dims: tuple[sympy.Expr, ...]
    elem: str
    name: str


class Term:
    """The value of an MCPL expression during symbolic evaluation; every term has a
    C ``type`` ('float', 'int', 'double', 'bool')."""

    type: str


@dataclass(frozen=True)
class TLit(Term):
    text: str
    type: str


@dataclass(frozen=True)
class TScalar(Term):
    """A scalar parameter of the kernel (a size, when used as a value, is one too)."""

    name: str
    type: str


@dataclass(frozen=True)
class TIndexVar(Term):
    var: Var
    type: str = "int"


@dataclass(frozen=True)
class TIndex(Term):
    """Integer arithmetic on indices, sizes and integer literals: ``expr`` for index
    positions, ``value`` (a term) where it is used as a value."""

    expr: sympy.Expr
    value: Term
    type: str = "int"


@dataclass(frozen=True)
class TRead(Term):
    arr: Arr
    idx: tuple[sympy.Expr, ...]
    type: str
    span: Span | None = field(default=None, compare=False)


@dataclass(frozen=True)
class TOp(Term):
    """An operator (``+``, ``neg``, ``!``, ``?:``, ``tofloat``) or a math function."""

    op: str
    args: tuple[Term, ...]
    type: str


@dataclass(frozen=True)
class TReduce(Term):
    """``init op body(v1..vk) op ...`` over all values of ``vars``."""

    op: str
    init: Term
    vars: tuple[Var, ...]
    body: Term
    type: str
    name: str                                   # the accumulating MCPL variable
    span: Span | None = field(default=None, compare=False)


@dataclass(frozen=True)
class TAcc(Term):
    """The value an accumulator had when the current loop iteration began."""

    name: str
    type: str


@dataclass(frozen=True)
class TError(Term):
    """Stands for a value whose derivation already failed (no further messages), or,
    with a ``reason``, a variable that has no value yet (a message when it is read)."""

    type: str = "float"
    reason: str = ""


def _subterms(t: Term) -> tuple[Term, ...]:
    if isinstance(t, TOp):
        return t.args
    if isinstance(t, TReduce):
        return (t.init, t.body)
    if isinstance(t, TIndex):
        return (t.value,)
    return ()


def _walk(t: Term) -> Iterator[Term]:
    yield t
    for s in _subterms(t):
        yield from _walk(s)


def _rebuild(t: Term, fn) -> Term:
    """``t`` with ``fn`` applied bottom-up to every subterm."""
    if isinstance(t, TOp):
        t = replace(t, args=tuple(_rebuild(a, fn) for a in t.args))
    elif isinstance(t, TReduce):
        t = replace(t, init=_rebuild(t.init, fn), body=_rebuild(t.body, fn))
    elif isinstance(t, TIndex):
        t = replace(t, value=_rebuild(t.value, fn))
    return fn(t)


def _promote(*types: str) -> str:
    return max(types, key=lambda s: _RANK.get(s, 2))


# ----------------------------------------------------------------------------- result

@dataclass(frozen=True)
class LiftInput:
    """A parameter of the derived program and where its value comes from."""

    name: str                  # the MCPL parameter (arrays, scalars, sizes used as values)
    kind: str                  # "array" | "scalar"


@dataclass
class Derivation:
    """A Lift program that computes ``output`` of the MCPL ``function``."""

    program: ir.Program
    function: str
    output: str
    inputs: tuple[LiftInput, ...]
    sizes: tuple[str, ...]                     # MCPL size parameters (symbols of the types)
    source: Path | None = None
    notes: list[Diagnostic] = field(default_factory=list)

    def text(self) -> str:
        from mcl.lift.printer import show_program
        return show_program(self.program)

    def arguments(self, values: dict) -> list:
        """Positional arguments of the program from MCPL parameter values (by name)."""
        out = []
        for p, inp in zip(self.program.params, self.inputs, strict=True):
            if inp.name not in values:
                raise McplError(error("from-mcpl-run", f"no value for '{inp.name}'"))
            out.append(np.asarray(values[inp.name], dtype=SCALARS[_scalar_name(p.type)][1]))
        return out

    def run(self, values: dict) -> np.ndarray:
        """The output computed by Lift's interpreter from MCPL parameter values by name
        (sizes included: they bind the size symbols of the program's types)."""
        from mcl.lift.interp import run
        sizes = {s: int(values[s]) for s in self.sizes if s in values}
        prog = ir.bind_sizes(self.program, sizes)
        return np.asarray(run(prog, *self.arguments(values)))


def _scalar_name(t) -> str:
    from mcl.lift.types import scalar_of
    return scalar_of(t).name


class _Failed(Exception):
    """Raised to stop deriving one statement after its problem was recorded."""


# ----------------------------------------------------------------------------- derivation

def derive(what: str | Path | ast.Module, function: str | None = None,
           output: str | None = None, constants: dict[str, int] | None = None) -> Derivation:
    """The Lift program of ``function`` (default: the module's first function)
    computing ``output`` (needed when it writes several arrays). Integer parameters
    used as values (``sum / (fh * fw)``) become program parameters, or the numbers in
    ``constants`` where given (exploration binds all sizes).
    Raises McplError with one diagnostic per construct Lift cannot express."""
    from mcl.mcpl import check
    if isinstance(what, ast.Module):
        path = Path(what.file) if what.file != "<string>" else None
    else:
        path = Path(what)
    # Only programs the front end accepts are derived: its errors come first, and the
    # derivation can rely on the checks (nesting, sizes, names) having passed.
    checked = check(what if isinstance(what, ast.Module) else str(path))
    errors = [d for d in checked.diagnostics if d.is_error]
    if errors:
        raise McplError(errors)
    module = checked.module
    fns = [f for f in module.functions]
    if not fns:
        raise McplError(error("from-mcpl-function", f"module '{module.name}' has no function",
                              module.span))
    if function is None:
        fn = fns[0]
    else:
        match = [f for f in fns if f.name == function]
        if not match:
            raise McplError(error("from-mcpl-function",
                                  f"module '{module.name}' has no function '{function}'",
                                  module.span, hint="functions: " + ", ".join(f.name for f in fns)))
        fn = match[0]
    d = _Deriver(fn, constants or {}).derive(output)
    d.source = path
    return d


class _Deriver:
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
    def derive(self, output: str | None) -> Derivation:
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
        return self._build(output, foreach_vars)

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

    # --------------------------------------------------------------- building Lift
    def _build(self, output: str | None, foreach_vars: list[Var]) -> Derivation:
        names = sorted({w[0] for w in self.writes}, key=lambda n: list(self.params).index(n))
        if not names:
            raise McplError(error("from-mcpl-write", f"'{self.fn.name}' writes no array",
                                  self.fn.span))
        if output is None:
            if len(names) > 1:
                raise McplError(error(
                    "from-mcpl-write", f"'{self.fn.name}' writes {len(names)} arrays "
                    f"({', '.join(names)}); a Lift program returns one", self.fn.span,
                    "choose one with --output NAME"))
            output = names[0]
        if output not in names:
            raise McplError(error("from-mcpl-write", f"'{self.fn.name}' does not write '{output}'",
                                  self.fn.span, "written: " + ", ".join(names)))
        name, kind, idx, value, span = next(w for w in self.writes if w[0] == output)
        arr = self.arrays[name]
        try:
            if kind.startswith("atomic:"):
                op = kind.split(":")[1]
                zero = ASSOCIATIVE[op] if arr.elem == "int" else ASSOCIATIVE[op] + ".0"
                red = TReduce(op, TLit(zero, arr.elem), tuple(foreach_vars), value, arr.elem,
                              name, span)
                term: Term = TOp(op, (TRead(arr, idx, arr.elem, span), red), arr.elem)
                map_vars: list[Var] = []
                self.notes.append(info("from-mcpl-note", f"the atomic updates of {name}[0] by "
                                       "all units: a reduce", span))
            else:
                map_vars = self._output_order(name, arr, idx, foreach_vars, span)
                term = value
            body, kind2 = self.lift_map(term, map_vars, arr.elem, name)
        except _Failed:
            raise McplError(self.problems or [error(
                "from-mcpl-unsupported", f"'{self.fn.name}' could not be derived", span)]) from None
        if kind2 == "scalar":
            raise McplError(error("from-mcpl-write", f"'{name}' gets a value that is not an "
                                  "array", span))
        free = ir.free_params(body)
        used = [n for n in self.params if n in self.lift_params and self.lift_params[n] in free]
        params = tuple(self.lift_params[n] for n in used)
        prog = ir.Program(self.fn.name, ir.Lambda(params, body), dict(self.userfuns))
        from mcl.lift.typecheck import check_program
        check_program(prog)     # a derivation bug, not a user error, if this fails
        inputs = tuple(LiftInput(n, "array" if self.params[n].type.dims else "scalar")
                       for n in used)
        return Derivation(prog, self.fn.name, output, inputs, tuple(sorted(self.sizes)),
                          notes=self.notes)

    def _output_order(self, name: str, arr: Arr, idx, foreach_vars: list[Var],
                      span: Span) -> list[Var]:
        """The foreach variables in the order of the output's dimensions (each output
        element must be written by exactly one unit)."""
        where = ast.Name(name, span=span)
        order: list[Var] = []
        for d, e in enumerate(idx):
            v = self.vars.get(e)
            if v is None or v.kind != "foreach":
                self.fail(where, "from-mcpl-write",
                          f"{name} is written at index {_show_idx(e)} in dimension {d}: Lift "
                          "computes an output by mapping over it, so every index must be a "
                          "foreach index", "write out[i, j] with the foreach indices")
            if sympy.simplify(arr.dims[d] - v.size) != 0:
                self.fail(where, "from-mcpl-write",
                          f"{name} has {arr.dims[d]} elements in dimension {d} but the foreach "
                          f"over '{v.name}' runs {v.size} times",
                          "Lift computes every element of an output")
            order.append(v)
        missing = [v.name for v in foreach_vars if v not in order]
        if missing or len(set(order)) != len(order):
            self.fail(where, "from-mcpl-write",
                      f"every unit of the foreach over {', '.join(missing) or 'an index'} "
                      f"writes the same element of {name}: a race, not a map",
                      "index the output with every foreach index")
        return order

    # The term is turned into Lift one index variable at a time (outermost first).
    def lift_map(self, term: Term, vars_: list[Var], ret: str, hint: str):
        """(expression, kind): kind 'array' after at least one map, else 'scalar' or
        'singleton' (an array of one element, what a reduce returns)."""
        if not vars_:
            return self.lift_scalar(term, ret, hint)
        v = vars_[0]
        zipped, p, term2 = self.bind(v, term)
        body, kind = self.lift_map(term2, vars_[1:], ret, hint)
        e = zipped if body == p else ir.apply(ir.map_(ir.Lambda((p,), body)), zipped)
        if kind == "singleton":
            e = ir.apply(ir.JOIN, e)
        return e, "array"

    def bind(self, v: Var, term: Term) -> tuple[ir.Expr, ir.Param, Term]:
        """Views of the arrays read at ``v``, zipped, a lambda parameter standing for one
        element of the zip, and ``term`` rewritten to read through that parameter."""
        reads = list(dict.fromkeys(r for r in _walk(term) if isinstance(r, TRead)
                                   and any(v.symbol in e.free_symbols for e in r.idx)))
        if not reads:
            what = "foreach" if v.kind == "foreach" else "loop"
            self.fail(_node_at(v.span), "from-mcpl-access",
                      f"the {what} over '{v.name}' reads no array at '{v.name}': Lift maps and "
                      "reduces over arrays, and has no array of indices",
                      "the body must read some input at the index")
        views: dict[ir.Expr, tuple[sympy.Expr, ...]] = {}
        plan: dict[TRead, tuple[ir.Expr, tuple, tuple]] = {}
        for r in reads:
            view, dims, idx = self._view(v, r)
            views.setdefault(view, dims)
            plan[r] = (view, dims, idx)
        vlist = list(views)
        base = vlist[0] if len(vlist) == 1 else None
        pname = self._param_name(v, reads, len(vlist))
        p = ir.Param(pname)
        zipped = base if base is not None else ir.zip_(*vlist)
        elems = {view: (p if base is not None else ir.get(p, k)) for k, view in enumerate(vlist)}

        def sub(t: Term) -> Term:
            if isinstance(t, TRead) and t in plan:
                view, dims, idx = plan[t]
                return TRead(Arr(elems[view], dims, t.arr.elem, t.arr.name), idx, t.type, t.span)
            return t
        return zipped, p, _rebuild(term, sub)

    def _param_name(self, v: Var, reads: list[TRead], nviews: int) -> str:
        if nviews == 1:
            return f"{reads[0].arr.name}_{v.name}"
        return f"t_{v.name}"

    def _view(self, v: Var, r: TRead):
        """(view expression, its element's dimensions, the read's remaining indices)."""
        where = _node_at(r.span)
        dims_v = [d for d, e in enumerate(r.idx) if v.symbol in e.free_symbols]
        if len(dims_v) != 1:
            self.fail(where, "from-mcpl-access",
                      f"'{r.arr.name}' is indexed with '{v.name}' in {len(dims_v)} dimensions: "
                      "Lift's views cannot take a diagonal")
        (d,) = dims_v
        e = sympy.expand(r.idx[d])
        n, s_dim = v.size, r.arr.dims[d]
        coeff = e.coeff(v.symbol)
        rest = sympy.expand(e - coeff * v.symbol)
        inner = self.vars.get(rest) if rest.is_Symbol else None
        x = r.arr.expr
        if coeff == 1 and rest == 0:
            if sympy.simplify(s_dim - n) != 0:
                self.fail(where, "from-mcpl-access",
                          f"'{r.arr.name}' has {s_dim} elements in dimension {d} but the index "
                          f"'{v.name}' runs over {n}: Lift maps over whole arrays",
                          "make the array as long as the loop")
            new_idx = r.idx[:d] + r.idx[d + 1:]
            new_dims = r.arr.dims[:d] + r.arr.dims[d + 1:]
            how = "rows" if d == 0 else f"dimension {d}"
        elif inner is not None and not coeff.free_symbols & set(self.vars) and (
                coeff == 1 or sympy.simplify(coeff - inner.size) == 0):
            k = inner.size
            if coeff == 1:       # windows i + y, y < k: slide(k, 1)
                if sympy.simplify(s_dim - k + 1 - n) != 0:
                    self.fail(where, "from-mcpl-access",
                              f"'{r.arr.name}' has {s_dim} elements in dimension {d}, but "
                              f"windows of {k} at {n} positions need {n + k - 1}",
                              "pad the input so that every window lies inside it")
                pat = ir.mk("slide", k, 1)
                how = f"windows slide({k}, 1)"
            else:                # blocks s*i + x, x < s: split(s)
                if sympy.simplify(s_dim - n * k) != 0:
                    self.fail(where, "from-mcpl-access",
                              f"'{r.arr.name}' has {s_dim} elements in dimension {d}, not "
                              f"{n} blocks of {k}")
                pat = ir.mk("split", k)
                how = f"blocks split({k})"
            x = ir.apply(_map_n(pat, d), x)
            new_idx = r.idx[:d] + (inner.symbol,) + r.idx[d + 1:]
            new_dims = r.arr.dims[:d] + (k,) + r.arr.dims[d + 1:]
            self.vars_used_as_window = True
        else:
            self.fail(where, "from-mcpl-access",
                      f"'{r.arr.name}' is indexed with {_show_idx(r.idx[d])} in dimension {d}: "
                      "Lift has views for i, i + y (slide) and s*i + x (split) where y and x "
                      "are loop indices, but no access at a constant offset or stride",
                      "write the neighbourhood as a loop over a window")
        for k in range(d, 0, -1):   # move dimension d to the front
            x = ir.apply(_map_n(ir.TRANSPOSE, k - 1), x)
        self.note(where, f"'{v.name}' runs over {how} of {r.arr.name}"
                  + (" (after transposing)" if d else ""))
        return x, new_dims, new_idx

    def lift_scalar(self, term: Term, ret: str, hint: str):
        """A term without index variables left: (expression, 'scalar' | 'singleton')."""
        leaves: dict[ir.Expr, tuple[str, str, str]] = {}     # expr -> (param, type, kind)

        def leaf(expr: ir.Expr, name: str, type_: str, kind: str) -> C.CExpr:
            if expr not in leaves:
                taken = {n for n, _, _ in leaves.values()}
                base = name if name.isidentifier() else "x"
                pn, i = base, 1
                while pn in taken or pn in C.BUILTINS:
                    pn, i = f"{base}{i}", i + 1
                leaves[expr] = (pn, type_, kind)
            return C.CVar(leaves[expr][0])

        def conv(t: Term) -> C.CExpr:
            if isinstance(t, TLit):
                return C.CNum(t.text)
            if isinstance(t, TScalar):
                if t.type == "int" and t.name in self.constants:
                    return C.CNum(str(int(self.constants[t.name])))
                return leaf(self.lift_params[t.name], t.name, t.type, "scalar")
            if isinstance(t, TIndex):
                return conv(t.value)
            if isinstance(t, TIndexVar):
                self.fail(_node_at(t.var.span), "from-mcpl-index-value",
                          f"the index '{t.var.name}' is used as a value: Lift's patterns pass "
                          "elements, not their positions", "use indices only to index arrays")
            if isinstance(t, TRead):
                if not t.idx:
                    return leaf(t.arr.expr, t.arr.name, t.type, "scalar")
                if len(t.idx) == 1 and t.idx[0] == 0 and sympy.simplify(t.arr.dims[0] - 1) == 0:
                    return leaf(t.arr.expr, t.arr.name, t.type, "singleton")
                self.fail(_node_at(t.span), "from-mcpl-access",
                          f"'{t.arr.name}' is read at a fixed position "
                          f"[{', '.join(_show_idx(e) for e in t.idx)}]: Lift has no "
                          "element access", "read it at a foreach or loop index")
            if isinstance(t, TReduce):
                e = self.lift_reduce(t)
                return leaf(e, t.name, t.type, "singleton")
            if isinstance(t, TOp):
                args = [conv(a) for a in t.args]
                if t.op in ("neg", "!"):
                    return C.CUnary("-" if t.op == "neg" else "!", args[0])
                if t.op == "tofloat":
                    return C.CBinary("*", args[0], C.CNum("1.0"))
                if t.op == "?:":
                    return C.CTernary(*args)
                if t.op in _ARITH or t.op in _COMPARE:
                    return C.CBinary(t.op, *args)
                return C.CCall(t.op, tuple(args))
            raise _Failed     # TError/TAcc: already reported

        body = conv(term)
        if isinstance(body, C.CVar) and len(leaves) == 1:
            ((expr, (_, type_, kind)),) = leaves.items()
            if type_ == ret:
                return expr, kind
        uf = self.userfun(body, [(n, t) for n, t, _ in leaves.values()], ret, hint)
        singles = [e for e, (_, _, k) in leaves.items() if k == "singleton"]
        if not singles:
            return ir.Call(uf, tuple(leaves)), "scalar"
        p = ir.Param(f"{hint}_r" if len(singles) == 1 else "rs")
        zipped = singles[0] if len(singles) == 1 else ir.zip_(*singles)
        args = []
        for e, (_, _, k) in leaves.items():
            if k == "singleton":
                args.append(p if len(singles) == 1 else ir.get(p, singles.index(e)))
            else:
                args.append(e)
        return ir.apply(ir.map_(ir.Lambda((p,), ir.Call(uf, tuple(args)))), zipped), "singleton"

    def lift_reduce(self, r: TReduce) -> ir.Expr:
        init = r.init
        if isinstance(init, TIndex) and isinstance(init.value, TLit):
            init = init.value
        if not isinstance(init, TLit):
            ident = ASSOCIATIVE.get(r.op)
            if ident is None:
                self.fail(_node_at(r.span), "from-mcpl-loop-carried",
                          f"'{r.name}' starts from a computed value and accumulates with "
                          f"{r.op}, which has no identity literal for Lift's reduce",
                          f"start '{r.name}' from a constant")
            zero = TLit(ident if r.type == "int" else ident + ".0", r.type)
            combined = TOp(r.op, (r.init, replace(r, init=zero)), r.type)
            e, kind = self.lift_scalar(combined, r.type, r.name)
            return e
        acc_t = ScalarType(r.type)
        elem, _ = self.lift_map(r.body, list(r.vars), r.type, r.name)
        for _ in range(len(r.vars) - 1):
            elem = ir.apply(ir.JOIN, elem)
        x, y = C.CVar("x"), C.CVar("y")
        body = C.CBinary(r.op, x, y) if r.op in _ARITH else C.CCall(r.op, (x, y))
        uf = self.userfun(body, [("x", r.type), ("y", r.type)], r.type, r.name)
        text = init.text
        if r.type in ("float",) and not text.endswith("f"):
            text = (text if "." in text or "e" in text else text + ".0") + "f"
        lit = ir.Literal(text, acc_t)
        self.note(_node_at(r.span), f"the loop accumulating '{r.name}' with {r.op}: "
                  f"reduce({uf.name}, {text})")
        return ir.apply(ir.reduce_(uf, lit), elem)

    def userfun(self, body: C.CExpr, params: list[tuple[str, str]], ret: str,
                hint: str) -> ir.UserFun:
        """A user function for ``body``; equal functions are shared, standard binary
        operators get the names Lift's programs use (add, mult, ...)."""
        if len(params) == 2 and (
                (isinstance(body, C.CBinary) and (body.left, body.right) ==
                 (C.CVar(params[0][0]), C.CVar(params[1][0]))) or
                (isinstance(body, C.CCall) and body.args ==
                 (C.CVar(params[0][0]), C.CVar(params[1][0])))):
            # a standard binary operator: one function whatever the operands' names
            x, y = C.CVar("x"), C.CVar("y")
            body = replace(body, left=x, right=y) if isinstance(body, C.CBinary) else \
                replace(body, args=(x, y))
            params = [("x", params[0][1]), ("y", params[1][1])]
        key = (tuple(params), ret, body)
        if key in self._uf_keys:
            return self.userfuns[self._uf_keys[key]]
        name = None
        if isinstance(body, C.CBinary) and len(params) == 2 and \
                (body.left, body.right) == (C.CVar(params[0][0]), C.CVar(params[1][0])):
            name = _STD_NAMES.get(body.op)
        elif isinstance(body, C.CCall) and len(params) == 2 and body.args == \
                (C.CVar(params[0][0]), C.CVar(params[1][0])):
            name = body.name.lstrip("f") if body.name in ("fmax", "fmin") else body.name
            name = {"max": "maximum", "min": "minimum"}.get(name, name)
        if name is not None and any(t != ret for _, t in params):
            name += "_" + "_".join(t for _, t in params)
        name = name or f"{hint}_f"
        base, i = name, 1
        while name in self.userfuns or name in self.lift_params:
            name, i = f"{base}{i}", i + 1
        uf = ir.UserFun(name, tuple((n, ScalarType(t)) for n, t in params), ScalarType(ret), body)
        self.userfuns[name] = uf
        self._uf_keys[key] = name
        return uf


def _map_n(f: ir.Fun, n: int) -> ir.Fun:
    for _ in range(n):
        f = ir.map_(f)
    return f


def _show_idx(e: sympy.Expr) -> str:
    """An index as the MCPL source names it (index variables are sympy Dummies)."""
    e = sympy.sympify(e)
    return str(e.subs({s: sympy.Symbol(s.name) for s in e.free_symbols
                       if isinstance(s, sympy.Dummy)}))


def _node_at(span: Span | None) -> ast.Node | None:
    return None if span is None else ast.Name("", span=span)


# ----------------------------------------------------------------------------- verification

def reference_module(mcpl: str | Path) -> ModuleType | None:
    """The ``reference.py`` beside an example kernel, or None."""
    ref = Path(mcpl).with_name("reference.py")
    if not ref.exists():
        return None
    spec = importlib.util.spec_from_file_location(f"_mcl_ref_{ref.parent.name}", ref)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@dataclass
class Check:
    """The outcome of running a derived program against a reference on one input."""

    sizes: dict
    max_error: float
    ok: bool
    against: str


def fresh(values: dict) -> dict:
    """A copy of the arrays among ``values`` (a kernel or reference may write them)."""
    return {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in values.items()}


def reference_output(ref: ModuleType, values: dict, output: str) -> np.ndarray:
    """``output`` as reference.py computes it from (copies of) ``values``."""
    return np.asarray(ref.reference(**fresh(values))[output])


def verify(d: Derivation, ref: ModuleType, sizes: dict, seed: int = 0) -> Check:
    """Run the derived program with Lift's interpreter on the reference's random
    inputs of ``sizes`` and compare with ``ref.reference`` within ``ref.TOLERANCE``."""
    rng = np.random.default_rng(seed)
    values = ref.inputs(rng, **sizes)
    expected = reference_output(ref, values, d.output)
    got = d.run(values)
    tol = getattr(ref, "TOLERANCE", {"rtol": 1e-5, "atol": 1e-6})
    ok = got.shape == expected.shape and bool(np.allclose(got, expected, **tol))
    err = float(np.max(np.abs(got.astype(np.float64) - expected))) if got.shape == \
        expected.shape and got.size else (0.0 if got.shape == expected.shape else float("inf"))
    return Check(dict(sizes), err, ok, "reference.py")


# ----------------------------------------------------------------------------- commands

def register(lift_subparsers: argparse._SubParsersAction) -> None:
    """Add ``from-mcpl`` (and, where the Lift commands have none, ``explore``) to ``mcl lift``."""
    from mcl.cli import add_output_options
    p = lift_subparsers.add_parser(
        "from-mcpl", help="derive a Lift program from an MCPL kernel (perfect, accelerator)",
        description="Turn an MCPL kernel written at a level with one kind of parallel unit "
                    "into a Lift high-level program: foreach becomes map, accumulating loops "
                    "become reduce, element-wise combination zip, affine windows slide. "
                    "Explains, at the MCPL source, what Lift cannot express.")
    p.add_argument("file", metavar="FILE", help="MCPL module (.mcpl)")
    p.add_argument("--function", "-f", help="the function to derive (default: the first)")
    p.add_argument("--output", help="the array to compute when the kernel writes several")
    p.add_argument("--explain", action="store_true",
                   help="also say which MCPL construct became which Lift pattern")
    p.add_argument("--verify", action="store_true",
                   help="run the program with Lift's interpreter against reference.py "
                        "(beside the kernel) on random inputs of its test sizes")
    p.add_argument("-o", "--out", metavar="FILE", help="write the program to FILE (.lift)")
    add_output_options(p)
    p.set_defaults(func=run_from_mcpl)
    ex = lift_subparsers.choices.get("explore")
    if ex is not None:   # `mcl lift explore KERNEL.mcpl`: options of the comparison
        extra = [("--target", dict(metavar="LEAF", help="KERNEL.mcpl: the leaf level the MCPL "
                                   "versions are compiled for (default: MCL_TARGET)")),
                 ("--function", dict(help="KERNEL.mcpl: the function to derive")),
                 ("--markdown", dict(action="store_true",
                                     help="KERNEL.mcpl: print the table as markdown")),
                 ("--max-version-s", dict(type=float, default=20.0, metavar="S",
                                          help="KERNEL.mcpl: leave out MCPL versions whose "
                                          "one run is predicted (from runs at smaller sizes) "
                                          "to take longer than S seconds (default 20)"))]
        for flag, kw in extra:
            if flag not in ex._option_string_actions:
                ex.add_argument(flag, **kw)


def run_from_mcpl(args: argparse.Namespace) -> int:
    from mcl.cli import EXIT_ERRORS, print_diagnostics
    from mcl.diagnostics import SourceCache
    d = derive(args.file, args.function, args.output)
    text = d.text()
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    else:
        print(text, end="")
    if args.explain and d.notes:
        print_diagnostics(d.notes, args, SourceCache())
    if args.verify:
        ref = reference_module(args.file)
        if ref is None:
            print(f"no reference.py beside {args.file}: nothing to verify against")
            return EXIT_ERRORS
        bad = 0
        for sizes in ref.SIZES:
            c = verify(d, ref, sizes)
            bad += not c.ok
            print(f"verify {sizes}: {'ok' if c.ok else 'MISMATCH'} (max |error| {c.max_error:.3g})")
        return EXIT_ERRORS if bad else 0
    return 0


def cmd_explore_mcpl(args: argparse.Namespace) -> int:
    """``mcl lift explore KERNEL.mcpl``: derive, explore with Lift, compare with the MCPL
    versions beside the kernel (see :mod:`mcl.lift.compare`)."""
    import os
    import sys

    from mcl.cli import UsageError
    from mcl.lift.commands import size_assignments
    from mcl.lift.compare import compare, table
    from mcl.opencl import available_targets
    leaf = getattr(args, "target", None) or os.environ.get("MCL_TARGET")
    if not leaf:
        raise UsageError("say which leaf level the MCPL versions are compiled for: --target "
                         "LEAF (one of " + ", ".join(available_targets()) + ")")
    sizes = size_assignments(args)
    c = compare(args.file, leaf, sizes, args.budget, args.strategy, args.device,
                args.seed, args.depth, args.results, args.repeat,
                getattr(args, "function", None), progress=sys.stderr,
                max_version_s=getattr(args, "max_version_s", None))
    print(table(c, markdown=getattr(args, "markdown", False)), end="")
    return 0 if any(r.status == "ok" for r in c.rows) else 1
