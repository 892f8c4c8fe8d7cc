"""The Lift type checker: infers the type of every expression from the types of
the program's parameters, with array sizes as sympy expressions, and rejects an
ill-typed expression with a message that names the pattern at fault."""

from __future__ import annotations

import sympy

from mcl.diagnostics import McplError, Span, error
from mcl.lift.ir import (
    PATTERNS,
    Call,
    Compose,
    Expr,
    Fun,
    Lambda,
    Literal,
    Param,
    Prim,
    Program,
    UserFun,
)
from mcl.lift.types import (
    ArrayType,
    ScalarType,
    TupleType,
    Type,
    VectorType,
    scalar_of,
    sizes_equal,
    types_equal,
)


class LiftTypeError(McplError):
    """An ill-typed expression; carries one diagnostic with code ``lift-type``."""

    def __init__(self, message: str, span: Span | None = None, hint: str | None = None):
        super().__init__(error("lift-type", message, span, hint))


def _fail(where: Prim | Fun | Expr | None, message: str, hint: str | None = None):
    raise LiftTypeError(message, getattr(where, "span", None), hint)


def _divides(n, k, who: str, node) -> sympy.Expr:
    n, k = sympy.sympify(n), sympy.sympify(k)
    if k.is_number and k <= 0:
        _fail(node, f"{who}: the size {k} must be positive")
    q = sympy.simplify(n / k)
    if q.is_number and not q.is_integer:
        _fail(node, f"{who}: {k} does not divide the array length {n}",
              hint="choose a divisor of the length")
    if q.is_integer is False and not q.free_symbols <= n.free_symbols:
        _fail(node, f"{who}: {k} does not divide the array length {n}")
    return q


def _literal_hint(want: Type, got: Type) -> str | None:
    """Lift does not convert between int and float as C does: say how to write it."""
    names = {str(want), str(got)}
    if names == {"float", "int"}:
        return ("Lift converts no numbers as C would: a float literal is written 0.0f "
                "(not 0), and a float parameter takes float data" if str(want) == "float"
                else "Lift converts no numbers as C would: an int literal is written 0 (not "
                "0.0f), and an int parameter takes int data")
    if names == {"double", "int"} or names == {"double", "float"}:
        return f"the types must match exactly: declare the parameter {got}, or give a {want}"
    return None


def _array(t: Type, who: str, node) -> ArrayType:
    if not isinstance(t, ArrayType):
        _fail(node, f"{who}: expects an array, got a value of type {t}")
    return t


def type_of(e: Expr, env: dict[Param, Type] | None = None) -> Type:
    """The type of data expression ``e`` where ``env`` gives the parameters' types."""
    env = env or {}
    if isinstance(e, Param):
        if e in env:
            return env[e]
        if e.type is not None:
            return e.type
        _fail(e, f"the type of '{e.name}' is unknown",
              hint="give the program's parameters types, e.g. fun(x: float[N]) => ...")
    if isinstance(e, Literal):
        return e.type
    if isinstance(e, Call):
        args = [type_of(a, env) for a in e.args]
        return fun_type(e.fun, args, env, e)
    _fail(e, f"not a data expression: {type(e).__name__}")


def _accumulator(f: Fun, init: Expr, elem: Type, env, who: str, node) -> Type:
    a = type_of(init, env)
    if isinstance(init, Literal) and isinstance(a, ArrayType):
        # an array accumulator filled with a scalar constant (register blocking)
        r = fun_type(f, [a, elem], env, node)
        if types_equal(r, a):
            return a
    r = fun_type(f, [a, elem], env, node)
    if types_equal(r, a):
        return a
    if isinstance(init, Literal) and isinstance(r, VectorType | ArrayType) and \
            scalar_of(r) == a:
        # a scalar literal initialises every lane (element) of a vector (array) accumulator
        r2 = fun_type(f, [r, elem], env, node)
        if types_equal(r2, r):
            return r
    _fail(node, f"{who}: the function returns {r} but the accumulator has type {a}",
          hint="the reduction function must take (accumulator, element) and "
               "return the accumulator's type")


def fun_type(f: Fun, args: list[Type], env: dict[Param, Type] | None = None,
             call=None) -> Type:
    """The result type of applying ``f`` to arguments of types ``args``."""
    env = env or {}
    if isinstance(f, Lambda):
        if len(f.params) > 1 and len(args) == 1 and isinstance(args[0], TupleType) and \
                len(args[0].elems) == len(f.params):
            args = list(args[0].elems)      # a lambda of k parameters unpacks a k-tuple
        if len(f.params) != len(args):
            _fail(call or f, f"the lambda takes {len(f.params)} argument(s) but is given "
                             f"{len(args)}")
        inner = dict(env)
        for p, t in zip(f.params, args, strict=True):
            if p.type is not None and not types_equal(p.type, t):
                _fail(p, f"parameter '{p.name}' is declared {p.type} but receives {t}")
            inner[p] = t
        return type_of(f.body, inner)
    if isinstance(f, Compose):
        t = fun_type(f.funs[-1], args, env, call)
        for g in reversed(f.funs[:-1]):
            t = fun_type(g, [t], env, call)
        return t
    if isinstance(f, UserFun):
        if len(f.params) != len(args):
            _fail(call or f, f"user function '{f.name}' takes {len(f.params)} argument(s) but "
                             f"is given {len(args)}")
        for (pname, ptype), t in zip(f.params, args, strict=True):
            if not types_equal(ptype, t):
                _fail(call or f, f"user function '{f.name}': argument '{pname}' has type "
                                 f"{ptype} but receives {t}",
                      hint="use map to apply a scalar function to every element"
                      if isinstance(t, ArrayType) else _literal_hint(ptype, t))
        return f.ret
    if isinstance(f, Prim):
        return _prim_type(f, args, env, call)
    _fail(call, f"not a function: {type(f).__name__}")


def _prim_type(p: Prim, args: list[Type], env, call) -> Type:
    name = p.name
    spec = PATTERNS.get(name)
    node = p if p.span else call
    if spec is None:
        _fail(node, f"unknown pattern '{name}'")
    if spec.arity is not None and len(args) != spec.arity:
        _fail(node, f"{name}: takes {spec.arity} argument(s) but is given {len(args)}")
    if name == "zip":
        arrs = [_array(t, "zip", node) for t in args]
        for t in arrs[1:]:
            if not sizes_equal(t.size, arrs[0].size):
                _fail(node, f"zip: the arrays have different lengths ({arrs[0].size} and "
                            f"{t.size})")
        return ArrayType(TupleType(tuple(t.elem for t in arrs)), arrs[0].size)
    if name == "mapVec":
        return vec_fun_type(p.args[0], args, node)
    (t,) = args
    if name in ("map", "mapSeq", "mapGlb", "mapWrg", "mapLcl", "mapWarp", "mapLane",
                "prefetch", "prefetchLocal"):
        a = _array(t, name, node)
        return ArrayType(fun_type(p.args[0], [a.elem], env, call), a.size)
    if name in ("reduce", "reduceSeq"):
        a = _array(t, name, node)
        acc = _accumulator(p.args[0], p.args[1], a.elem, env, name, node)
        return ArrayType(acc, sympy.Integer(1))
    if name == "partRed":
        a = _array(t, name, node)
        acc = _accumulator(p.args[0], p.args[1], a.elem, env, name, node)
        if not types_equal(acc, a.elem):
            _fail(node, "partRed: the accumulator must have the element type")
        return ArrayType(acc, _divides(a.size, p.args[2], f"partRed {p.args[2]}", node))
    if name == "iterate":
        for _ in range(p.args[0]):
            t = fun_type(p.args[1], [t], env, call)
        return t
    if name in ("id", "reorder"):
        return t
    if name == "reorderStride":
        a = _array(t, name, node)
        _divides(a.size, p.args[0], f"reorderStride {p.args[0]}", node)
        return t
    if name == "split":
        a = _array(t, name, node)
        k = p.args[0]
        return ArrayType(ArrayType(a.elem, k), _divides(a.size, k, f"split {k}", node))
    if name == "join":
        a = _array(t, name, node)
        inner = _array(a.elem, "join (of the elements)", node)
        return ArrayType(inner.elem, sympy.simplify(a.size * inner.size))
    if name in ("innerSplit", "innerJoin"):
        a = _array(t, name, node)
        if name == "innerSplit" and not isinstance(a.elem, ArrayType):
            return _prim_type(Prim("split", p.args, span=p.span), [t], env, call)
        if name == "innerJoin" and not isinstance(_array(a.elem, name, node).elem, ArrayType):
            return _prim_type(Prim("join", span=p.span), [t], env, call)
        return ArrayType(_prim_type(p, [a.elem], env, call), a.size)
    if name == "transpose":
        a = _array(t, name, node)
        inner = _array(a.elem, "transpose (of the elements)", node)
        return ArrayType(ArrayType(inner.elem, a.size), inner.size)
    if name == "get":
        if not isinstance(t, TupleType):
            _fail(node, f"get {p.args[0]}: expects a tuple, got {t}")
        if not 0 <= p.args[0] < len(t.elems):
            _fail(node, f"get {p.args[0]}: the tuple has {len(t.elems)} components")
        return t.elems[p.args[0]]
    if name == "asVector":
        a = _array(t, name, node)
        w = p.args[0]
        if not isinstance(a.elem, ScalarType):
            _fail(node, f"asVector {w}: expects an array of scalars, got {t}")
        if w not in (2, 3, 4, 8, 16):
            _fail(node, f"asVector {w}: OpenCL vectors have 2, 3, 4, 8 or 16 lanes")
        return ArrayType(VectorType(a.elem, w), _divides(a.size, w, f"asVector {w}", node))
    if name == "asScalar":
        a = _array(t, name, node)
        if not isinstance(a.elem, VectorType):
            _fail(node, f"asScalar: expects an array of vectors, got {t}")
        return ArrayType(a.elem.scalar, a.size * a.elem.width)
    if name in ("toLocal", "toGlobal", "toPrivate", "toConstant"):
        return fun_type(p.args[0], [t], env, call)
    if name == "slide":
        a = _array(t, name, node)
        sz, st = p.args
        if sympy.sympify(sz).is_number and sz <= 0:
            _fail(node, f"slide {sz} {st}: a window of {sz} elements; give 1 or more")
        n = _divides(a.size - sz + st, st, f"slide {sz} {st}", node)
        if n.is_number and n < 1:
            _fail(node, f"slide {sz} {st}: a window of {sz} elements does not fit in {t}",
                  hint="pad the array first (pad(l, r)), or choose a smaller window")
        return ArrayType(ArrayType(a.elem, sz), n)
    if name == "pad":
        a = _array(t, name, node)
        n = a.size + p.args[0] + p.args[1]
        if sympy.sympify(n).is_number and int(n) < 1:
            _fail(node, f"pad {p.args[0]} {p.args[1]}: drops every element of {t}")
        return ArrayType(a.elem, n)
    _fail(node, f"unknown pattern '{name}'")


def vec_fun_type(f: Fun, args: list[Type], call=None) -> Type:
    """Type of ``mapVec(f)`` applied to several vectors (e.g. ``mapVec(add)`` in a reduction)."""
    widths = {a.width for a in args if isinstance(a, VectorType)}
    if len(widths) != 1 or not all(isinstance(a, VectorType | ScalarType) for a in args):
        _fail(call, "mapVec: expects vectors (of one width), got "
                    + ", ".join(str(a) for a in args))
    (w,) = widths
    scal = [a.scalar if isinstance(a, VectorType) else a for a in args]
    r = fun_type(f, scal, {}, call)
    if not isinstance(r, ScalarType):
        _fail(call, "mapVec: the function must return a scalar")
    return VectorType(r, w)


def check_program(prog: Program) -> Type:
    """Type of the program's result; raises LiftTypeError when it is ill-typed."""
    from mcl.lift.arguments import program_argument
    prog = program_argument(prog, "check_program")
    for p in prog.params:
        if p.type is None:
            _fail(p, f"parameter '{p.name}' of '{prog.name}' has no type",
                  hint="write e.g. fun(x: float[N]) => ...")
    check_inputs(prog)
    return type_of(prog.body.body, {p: p.type for p in prog.params})


def check_inputs(prog: Program) -> None:
    """Refuse parameters a kernel cannot take: an input is a scalar, a vector or an
    array of them, each one OpenCL buffer (tuples are made inside, with zip)."""
    for p in prog.params:
        t = p.type
        while isinstance(t, ArrayType):
            t = t.elem
        if isinstance(t, TupleType):
            _fail(p, f"parameter '{p.name}' of '{prog.name}' has type {p.type}: an input "
                     "cannot hold tuples",
                  hint="give each component as an input of its own and zip them: "
                       "fun(a: float[N], b: float[N]) => ... $ zip(a, b)")
