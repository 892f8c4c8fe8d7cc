"""A small reference interpreter of MCPL for the translation tests: it runs a
function on numpy arrays with the semantics of LANGUAGE.md (foreach units run in
lock-step from barrier to barrier), so that a kernel and its translation can be
compared without an OpenCL device.

Every unit of a foreach is a generator that yields at each barrier; a foreach
runs its units round by round and passes the barrier on to the loop around it, so
all units reach every barrier together (stricter than the hardware, which only
synchronises a group, and equivalent for race-free programs). A round where some
units are at a barrier and others have finished is a barrier under divergent
control, which this interpreter reports as an error: it is the mistake a guard
around a barrier would make.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from mcl.hdl import hardware_library
from mcl.mcpl import ast


class DivergentBarrier(AssertionError):
    """Some units of a foreach reached a barrier that others skipped."""


@dataclass
class Array:
    """Storage (flat numpy array) and the evaluated shape: sizes per tile level."""

    data: np.ndarray
    levels: tuple[tuple[int, ...], ...]

    def offset(self, groups: list[list[int]]) -> int:
        off = 0
        for sizes, idx in zip(self.levels, groups, strict=True):
            lin = 0
            for s, i in zip(sizes, idx, strict=True):
                if not 0 <= i < s:
                    raise IndexError(f"index {i} out of range 0..{s - 1}")
                lin = lin * s + i
            off = off * math.prod(sizes) + lin
        return off


class Env:
    def __init__(self, parent: Env | None = None):
        self.vars: dict[str, object] = {}
        self.types: dict[str, str] = {}
        self.parent = parent

    def find(self, name: str) -> Env:
        e: Env | None = self
        while e is not None:
            if name in e.vars:
                return e
            e = e.parent
        raise NameError(name)

    def get(self, name: str):
        return self.find(name).vars[name]

    def declare(self, name: str, value, type_name: str) -> None:
        self.vars[name] = value
        self.types[name] = type_name

    def set(self, name: str, value) -> None:
        e = self.find(name)
        e.vars[name] = _convert(value, e.types[name])


def _convert(value, type_name: str):
    if type_name in ("int", "long"):
        return int(value)
    if type_name in ("float", "double"):
        return float(value)
    if type_name == "bool":
        return bool(value)
    return value


_MATH = {"sqrt": math.sqrt, "exp": math.exp, "log": math.log, "fabs": abs, "abs": abs,
         "min": min, "max": max, "fmin": min, "fmax": max, "pow": pow, "floor": math.floor,
         "ceil": math.ceil, "sin": math.sin, "cos": math.cos, "erf": math.erf,
         "tanh": math.tanh, "rsqrt": lambda x: 1 / math.sqrt(x)}


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


class Interpreter:
    """Runs one function; ``run(**args)`` with numpy arrays and sizes."""

    def __init__(self, function: ast.Function):
        self.f = function
        self.lib = hardware_library()

    def run(self, **args) -> None:
        env = Env()
        for p in self.f.params:
            value = args[p.name]
            if p.type.dims:
                arr = np.asarray(value)
                assert arr.flags.c_contiguous
                env.declare(p.name, Array(arr.reshape(-1), self.levels(p.type, env)), "array")
            else:
                env.declare(p.name, _convert(value, p.type.name), p.type.name)
        for _ in self.block(self.f.body.statements, env):
            pass  # barriers outside foreach synchronise nothing

    def levels(self, t: ast.Type, env: Env) -> tuple[tuple[int, ...], ...]:
        return tuple(tuple(int(self.expr(e, env)) for e in level) for level in t.dims)

    # ---------------------------------------------------------------- statements

    def block(self, stmts, env: Env) -> Iterator[None]:
        for s in stmts:
            yield from self.stmt(s, env)

    def stmt(self, s: ast.Stmt, env: Env) -> Iterator[None]:
        if isinstance(s, ast.Block):
            yield from self.block(s.statements, Env(env))
        elif isinstance(s, ast.Declaration):
            self.declare(s, env)
        elif isinstance(s, ast.Assign):
            self.assign(s.target, s.op, self.expr(s.value, env), env)
        elif isinstance(s, ast.IncDec):
            self.assign(s.target, "+=" if s.op == "++" else "-=", 1, env)
        elif isinstance(s, ast.ExprStmt):
            self.expr(s.expr, env)
        elif isinstance(s, ast.If):
            if self.expr(s.cond, env):
                yield from self.stmt(s.then, Env(env))
            elif s.orelse is not None:
                yield from self.stmt(s.orelse, Env(env))
        elif isinstance(s, ast.For):
            scope = Env(env)
            if isinstance(s.init, ast.Declaration):
                self.declare(s.init, scope)
            elif s.init is not None:
                yield from self.stmt(s.init, scope)
            while s.cond is None or self.expr(s.cond, scope):
                try:
                    yield from self.stmt(s.body, Env(scope))
                except _Break:
                    break
                except _Continue:
                    pass
                if s.update is not None:
                    yield from self.stmt(s.update, scope)
        elif isinstance(s, ast.While):
            while self.expr(s.cond, env):
                try:
                    yield from self.stmt(s.body, Env(env))
                except _Break:
                    break
                except _Continue:
                    pass
        elif isinstance(s, ast.ForEach):
            yield from self.foreach(s, env)
        elif isinstance(s, ast.Barrier):
            yield None
        elif isinstance(s, ast.AsStatement):
            base = self.expr(s.target, env)
            for v in s.views:
                env.declare(v.name, Array(base.data, self.levels(v.type, env)), "array")
        elif isinstance(s, ast.Break):
            raise _Break
        elif isinstance(s, ast.Continue):
            raise _Continue
        elif isinstance(s, ast.Return):
            raise NotImplementedError("return in a kernel")
        else:
            raise NotImplementedError(type(s).__name__)

    def declare(self, d: ast.Declaration, env: Env) -> None:
        if d.type.dims:
            levels = self.levels(d.type, env)
            dtype = np.int64 if d.type.name in ("int", "long") else np.float64
            arr = Array(np.zeros(math.prod(math.prod(lv) for lv in levels), dtype), levels)
            env.declare(d.name, arr, "array")
            for v in d.views:
                env.declare(v.name, Array(arr.data, self.levels(v.type, env)), "array")
            return
        value = self.expr(d.init, env) if d.init is not None else 0
        env.declare(d.name, _convert(value, d.type.name), d.type.name)

    def foreach(self, s: ast.ForEach, env: Env) -> Iterator[None]:
        n = int(self.expr(s.size, env))
        units = []
        for i in range(n):
            scope = Env(env)
            scope.declare(s.var.name, i, "int")
            units.append(self.stmt(s.body, scope))
        while units:
            waiting, finished = [], 0
            for u in units:
                try:
                    next(u)
                    waiting.append(u)
                except StopIteration:
                    finished += 1
            if waiting and finished:
                raise DivergentBarrier(
                    f"{finished} of {len(units)} units of '{s.var.name}' skipped a barrier")
            units = waiting
            if units:
                yield None

    # ---------------------------------------------------------------- expressions

    def location(self, target: ast.Expr, env: Env):
        """(array, offset) for an element, (env, name) for a variable."""
        if isinstance(target, ast.Name):
            return env.find(target.id), target.id
        if isinstance(target, ast.Index):
            arr = self.expr(target.base, env)
            groups = [[int(self.expr(i, env)) for i in g] for g in target.groups]
            return arr, arr.offset(groups)
        raise NotImplementedError(type(target).__name__)

    def assign(self, target: ast.Expr, op: str, value, env: Env) -> None:
        where, key = self.location(target, env)
        if isinstance(where, Env):
            old = where.vars[key]
            where.vars[key] = _convert(value if op == "=" else _binop(op[:-1], old, value),
                                       where.types[key])
        else:
            old = where.data[key].item()
            new = value if op == "=" else _binop(op[:-1], old, value)
            where.data[key] = new

    def expr(self, e: ast.Expr, env: Env):
        if isinstance(e, ast.Literal):
            return e.value
        if isinstance(e, ast.Name):
            return env.get(e.id)
        if isinstance(e, ast.Index):
            arr, off = self.location(e, env)
            return arr.data[off].item()
        if isinstance(e, ast.Binary):
            if e.op == "&&":
                return bool(self.expr(e.left, env)) and bool(self.expr(e.right, env))
            if e.op == "||":
                return bool(self.expr(e.left, env)) or bool(self.expr(e.right, env))
            return _binop(e.op, self.expr(e.left, env), self.expr(e.right, env))
        if isinstance(e, ast.Unary):
            v = self.expr(e.operand, env)
            return {"-": lambda: -v, "+": lambda: v, "!": lambda: not v, "~": lambda: ~v}[e.op]()
        if isinstance(e, ast.Ternary):
            return self.expr(e.then if self.expr(e.cond, env) else e.orelse, env)
        if isinstance(e, ast.Cast):
            return _convert(self.expr(e.operand, env), e.type.name)
        if isinstance(e, ast.HwdRef):
            return self.lib.get(e.path[0]).resolve_property(e.path)
        if isinstance(e, ast.Call):
            if e.func == "atomicAdd":
                old = self.expr(e.args[0], env)
                self.assign(e.args[0], "+=", self.expr(e.args[1], env), env)
                return old
            return _MATH[e.func](*(self.expr(a, env) for a in e.args))
        raise NotImplementedError(type(e).__name__)


def _binop(op: str, a, b):
    if op in ("/", "%") and isinstance(a, int) and isinstance(b, int) \
            and not isinstance(a, bool) and not isinstance(b, bool):
        q = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)  # C: toward zero
        return q if op == "/" else a - q * b
    return {
        "+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b, "/": lambda: a / b,
        "<": lambda: a < b, "<=": lambda: a <= b, ">": lambda: a > b, ">=": lambda: a >= b,
        "==": lambda: a == b, "!=": lambda: a != b, "&": lambda: a & b, "|": lambda: a | b,
        "^": lambda: a ^ b, "<<": lambda: a << b, ">>": lambda: a >> b,
    }[op]()
