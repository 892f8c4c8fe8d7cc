"""Bodies of user functions: a small C expression language that is printed as
OpenCL C by the code generator and evaluated with numpy by the interpreter, so
both give a user function the same meaning."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: C functions a body may call, with their numpy meaning.
BUILTINS = {
    "fabs": np.abs, "sqrt": np.sqrt, "exp": np.exp, "log": np.log, "sin": np.sin,
    "cos": np.cos, "tanh": np.tanh, "floor": np.floor, "ceil": np.ceil,
    "fmax": np.maximum, "fmin": np.minimum, "max": np.maximum, "min": np.minimum,
    "pow": np.power, "abs": np.abs, "fmod": np.fmod,
    "mad": lambda a, b, c: a * b + c, "fma": lambda a, b, c: a * b + c,
}


class CExpr:
    """Base of body expressions."""


@dataclass(frozen=True)
class CNum(CExpr):
    text: str          # as written, e.g. "0.5f", "3"

    @property
    def is_float(self) -> bool:
        t = self.text.lower()
        return "." in t or "e" in t or t.endswith("f")


@dataclass(frozen=True)
class CVar(CExpr):
    name: str


@dataclass(frozen=True)
class CField(CExpr):
    """``x._1``: a component of a tuple parameter."""

    base: CExpr
    index: int


@dataclass(frozen=True)
class CUnary(CExpr):
    op: str
    operand: CExpr


@dataclass(frozen=True)
class CBinary(CExpr):
    op: str
    left: CExpr
    right: CExpr


@dataclass(frozen=True)
class CTernary(CExpr):
    cond: CExpr
    then: CExpr
    other: CExpr


@dataclass(frozen=True)
class CCall(CExpr):
    name: str
    args: tuple[CExpr, ...]


_PREC = {"||": 1, "&&": 2, "==": 3, "!=": 3, "<": 4, "<=": 4, ">": 4, ">=": 4,
         "+": 5, "-": 5, "*": 6, "/": 6, "%": 6}


def to_c(e: CExpr, names: dict[str, str] | None = None) -> str:
    """OpenCL C text of ``e``; ``names`` renames variables (``x._0`` becomes the
    flattened parameter ``names['x._0']`` when given)."""
    names = names or {}
    if isinstance(e, CNum):
        t = e.text
        if e.is_float and not t.lower().endswith("f"):
            t += "f"
        return t
    if isinstance(e, CVar):
        return names.get(e.name, e.name)
    if isinstance(e, CField):
        key = f"{c_path(e)}"
        if key in names:
            return names[key]
        return f"{to_c(e.base, names)}._{e.index}"
    if isinstance(e, CUnary):
        return f"({e.op}{to_c(e.operand, names)})"
    if isinstance(e, CBinary):
        return f"({to_c(e.left, names)} {e.op} {to_c(e.right, names)})"
    if isinstance(e, CTernary):
        return f"({to_c(e.cond, names)} ? {to_c(e.then, names)} : {to_c(e.other, names)})"
    if isinstance(e, CCall):
        return f"{e.name}({', '.join(to_c(a, names) for a in e.args)})"
    raise TypeError(e)


def to_source(e: CExpr) -> str:
    """The body as the textual syntax writes it (minimal parentheses)."""
    def go(e: CExpr, prec: int) -> str:
        if isinstance(e, CNum):
            return e.text
        if isinstance(e, CVar):
            return e.name
        if isinstance(e, CField):
            return f"{go(e.base, 9)}._{e.index}"
        if isinstance(e, CUnary):
            return f"{e.op}{go(e.operand, 8)}"
        if isinstance(e, CBinary):
            p = _PREC[e.op]
            s = f"{go(e.left, p)} {e.op} {go(e.right, p + 1)}"
            return f"({s})" if p < prec else s
        if isinstance(e, CTernary):
            s = f"{go(e.cond, 1)} ? {go(e.then, 0)} : {go(e.other, 0)}"
            return f"({s})" if prec > 0 else s
        if isinstance(e, CCall):
            return f"{e.name}({', '.join(go(a, 0) for a in e.args)})"
        raise TypeError(e)
    return go(e, 0)


def c_path(e: CExpr) -> str:
    """``x._0._1`` for nested field accesses (used to flatten tuple parameters)."""
    if isinstance(e, CField):
        return f"{c_path(e.base)}._{e.index}"
    if isinstance(e, CVar):
        return e.name
    return "?"


def subexpressions(e: CExpr) -> tuple[CExpr, ...]:
    """The operands of ``e`` (none for numbers and variables)."""
    if isinstance(e, CField):
        return (e.base,)
    if isinstance(e, CUnary):
        return (e.operand,)
    if isinstance(e, CBinary):
        return (e.left, e.right)
    if isinstance(e, CTernary):
        return (e.cond, e.then, e.other)
    if isinstance(e, CCall):
        return e.args
    return ()


def variables(e: CExpr) -> set[str]:
    if isinstance(e, CVar):
        return {e.name}
    return set().union(*(variables(x) for x in subexpressions(e)))


def calls(e: CExpr) -> set[str]:
    own = {e.name} if isinstance(e, CCall) else set()
    return own.union(*(calls(x) for x in subexpressions(e)))


def has_branches(e: CExpr) -> bool:
    """Comparisons and ternaries do not vectorise in OpenCL C as plain code does."""
    if isinstance(e, CTernary):
        return True
    if isinstance(e, CBinary):
        return e.op in ("<", "<=", ">", ">=", "==", "!=", "&&", "||") or \
            has_branches(e.left) or has_branches(e.right)
    if isinstance(e, CUnary):
        return e.op == "!" or has_branches(e.operand)
    if isinstance(e, CCall):
        return any(has_branches(a) for a in e.args)
    return False


def evaluate(e: CExpr, env: dict, dtype=np.float32):
    """numpy value of ``e``; ``env`` maps names to arrays (tuples for tuple params).
    Arithmetic stays in ``dtype`` so that the interpreter rounds as the kernel does."""
    if isinstance(e, CNum):
        t = e.text.rstrip("fF")
        if not e.is_float:
            return np.asarray(int(t, 0), dtype=np.int32)
        # a float literal is a float in C (to_c writes it with 'f') whatever the function
        # returns: 0.5f in `x > 0.5f` of an int function is not 0
        floating = np.issubdtype(np.dtype(dtype), np.floating)
        return np.asarray(float(t), dtype=dtype if floating else np.float32)
    if isinstance(e, CVar):
        return env[e.name]
    if isinstance(e, CField):
        return evaluate(e.base, env, dtype)[e.index]
    if isinstance(e, CUnary):
        v = evaluate(e.operand, env, dtype)
        return -v if e.op == "-" else (np.logical_not(v) if e.op == "!" else v)
    if isinstance(e, CBinary):
        a, b = evaluate(e.left, env, dtype), evaluate(e.right, env, dtype)
        op = e.op
        if op == "/":
            if np.issubdtype(np.asarray(a).dtype, np.integer) and \
                    np.issubdtype(np.asarray(b).dtype, np.integer):
                return np.trunc(np.true_divide(a, b)).astype(np.int32)
            return np.true_divide(a, b)
        table = {"+": np.add, "-": np.subtract, "*": np.multiply, "%": np.fmod,
                 "<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
                 "==": np.equal, "!=": np.not_equal, "&&": np.logical_and,
                 "||": np.logical_or}
        return table[op](a, b)
    if isinstance(e, CTernary):
        return np.where(evaluate(e.cond, env, dtype), evaluate(e.then, env, dtype),
                        evaluate(e.other, env, dtype))
    if isinstance(e, CCall):
        args = [evaluate(a, env, dtype) for a in e.args]
        return BUILTINS[e.name](*args)
    raise TypeError(e)
