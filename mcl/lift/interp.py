"""A numpy interpreter of the Lift IR: the semantics every rewrite rule and
every generated kernel is checked against.

It evaluates ``map`` in batch: the mapped function runs once on the whole
array, whose mapped dimension becomes a batch axis, so that interpreting a
program costs a few numpy operations per pattern rather than one per element.
A value is an ndarray (axes: batch axes, array dimensions, vector lanes) or a
tuple of values for tuple types (arrays of tuples are tuples of arrays)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from mcl.diagnostics import McplError, error
from mcl.lift import cexpr as C
from mcl.lift.ir import (
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
    bind_sizes,
)
from mcl.lift.typecheck import fun_type
from mcl.lift.types import ArrayType, ScalarType, TupleType, Type, VectorType, scalar_of


def _rank(t: Type) -> int:
    """Axes a leaf of type ``t`` has besides the batch axes (tuples: not a leaf)."""
    r = 0
    while isinstance(t, ArrayType):
        r += 1
        t = t.elem
    return r + (1 if isinstance(t, VectorType) else 0)


def _leaf_types(t: Type):
    """Types of the leaves of a value of type t, in the order of its tuple nesting."""
    dims = []
    while isinstance(t, ArrayType):
        dims.append(t.size)
        t = t.elem
    if isinstance(t, TupleType):
        out = []
        for e in t.elems:
            sub = e
            for d in reversed(dims):
                sub = ArrayType(sub, d)
            out.append(sub)
        return out
    return None


def _tmap(fn, v, t: Type):
    """Apply ``fn(leaf, leaf_type)`` to every leaf of value ``v`` of type ``t``."""
    subs = _leaf_types(t)
    if subs is None:
        return fn(v, t)
    return tuple(_tmap(fn, x, s) for x, s in zip(v, subs, strict=True))


def _norm(v, t: Type, nb: int):
    """Give every leaf exactly ``nb`` batch axes (prepending size-1 axes)."""
    def fix(leaf, lt):
        leaf = np.asarray(leaf)
        want = nb + _rank(lt)
        if leaf.ndim < want:
            leaf = leaf.reshape((1,) * (want - leaf.ndim) + leaf.shape)
        return leaf
    return _tmap(fix, v, t)


def _lift(v, t: Type, from_nb: int, to_nb: int):
    """A value bound at batch depth ``from_nb`` seen at depth ``to_nb``."""
    if from_nb == to_nb:
        return v
    v = _norm(v, t, from_nb)
    extra = to_nb - from_nb
    return _tmap(lambda leaf, lt: leaf.reshape(leaf.shape[:from_nb] + (1,) * extra
                                               + leaf.shape[from_nb:]), v, t)


def _dtype(t: Type):
    return np.dtype(scalar_of(t).dtype)


class Interpreter:
    """Evaluates programs and expressions; ``run(program, *inputs)`` is the entry."""

    def run(self, prog: Program, *inputs) -> np.ndarray:
        from mcl.lift.inputs import checked_input, count_inputs
        from mcl.lift.typecheck import check_inputs
        check_inputs(prog)
        count_inputs(prog.name, [p.name for p in prog.params], inputs)
        arrays = [checked_input(p.name, x, _dtype(p.type), _rank(p.type), str(p.type))
                  for p, x in zip(prog.params, inputs, strict=True)]
        prog = bind_sizes(prog, sizes_from_shapes(prog, arrays))
        env = {p: (x, p.type, 0) for p, x in zip(prog.params, arrays, strict=True)}
        v, t = self.expr(prog.body.body, env, 0)
        return _norm(v, t, 0)

    # ------------------------------------------------------------------ data
    def expr(self, e: Expr, env: dict, nb: int):
        if isinstance(e, Param):
            v, t, d = env[e]
            return _lift(v, t, d, nb), t
        if isinstance(e, Literal):
            t = e.type
            v = np.asarray(C.evaluate(C.CNum(e.text), {}), dtype=_dtype(t))
            if isinstance(t, ArrayType):
                dims = []
                u = t
                while isinstance(u, ArrayType):
                    dims.append(int(u.size))
                    u = u.elem
                v = np.broadcast_to(v, (1,) * nb + tuple(dims))
            return v, t
        if isinstance(e, Call):
            args = [self.expr(a, env, nb) for a in e.args]
            return self.apply(e.fun, args, env, nb)
        raise TypeError(e)

    # ------------------------------------------------------------------ functions
    def apply(self, f: Fun, args: Sequence, env: dict, nb: int):
        if isinstance(f, Lambda):
            if len(f.params) > 1 and len(args) == 1 and isinstance(args[0][1], TupleType):
                v, t = args[0]
                args = list(zip(v, t.elems, strict=True))
            inner = dict(env)
            for p, (v, t) in zip(f.params, args, strict=True):
                inner[p] = (v, t, nb)
            return self.expr(f.body, inner, nb)
        if isinstance(f, Compose):
            r = self.apply(f.funs[-1], args, env, nb)
            for g in reversed(f.funs[:-1]):
                r = self.apply(g, [r], env, nb)
            return r
        if isinstance(f, UserFun):
            return self.userfun(f, args, vector=False)
        if isinstance(f, Prim):
            return self.prim(f, args, env, nb)
        raise TypeError(f)

    def userfun(self, f: UserFun, args, vector: bool):
        names = {}
        types = [t for _, t in args]
        for (pname, _), (v, t) in zip(f.params, args, strict=True):
            if vector and isinstance(t, ScalarType) and any(isinstance(u, VectorType)
                                                            for u in types):
                v = np.expand_dims(np.asarray(v), -1)
            names[pname] = v
        rt = fun_type(f, [a.scalar if isinstance(a, VectorType) else a for a in types]) \
            if vector else f.ret
        with np.errstate(all="ignore"):
            val = C.evaluate(f.body, names, np.dtype(scalar_of(rt).dtype))
        if vector:
            w = next(u.width for u in types if isinstance(u, VectorType))
            rt = VectorType(rt, w)
        return np.asarray(val).astype(_dtype(rt), copy=False), rt

    def prim(self, p: Prim, args, env: dict, nb: int):
        name = p.name
        types = [t for _, t in args]
        rtype = fun_type(p, types, {q: e[1] for q, e in env.items()})
        if name == "mapVec":
            return self.userfun_or_vec(p.args[0], args)
        if name == "zip":
            return tuple(v for v, _ in args), rtype
        ((v, t),) = args
        ax = nb
        if name in ("id", "reorder"):
            return v, t
        if name in ("map", "mapSeq", "mapGlb", "mapWrg", "mapLcl", "mapWarp", "mapLane",
                    "prefetch", "prefetchLocal"):
            n = int(t.size)
            v = _norm(v, t, nb)
            r, rt = self.apply(p.args[0], [(v, t.elem)], env, nb + 1)
            r = _norm(r, rt, nb + 1)
            r = _tmap(lambda leaf, lt: np.broadcast_to(
                leaf, leaf.shape[:ax] + (n,) + leaf.shape[ax + 1:]), r, rt)
            return r, ArrayType(rt, t.size)
        if name in ("reduce", "reduceSeq", "partRed"):
            return self.reduce(p, v, t, rtype, env, nb)
        if name == "iterate":
            cur = (v, t)
            for _ in range(p.args[0]):
                cur = self.apply(p.args[1], [cur], env, nb)
            return cur
        if name in ("toLocal", "toGlobal", "toPrivate", "toConstant"):
            return self.apply(p.args[0], [(v, t)], env, nb)
        v = _norm(v, t, nb)
        if name == "split":
            k = int(p.args[0])
            return _tmap(lambda leaf, lt: leaf.reshape(
                leaf.shape[:ax] + (leaf.shape[ax] // k, k) + leaf.shape[ax + 1:]), v, t), rtype
        if name == "join":
            return _tmap(lambda leaf, lt: leaf.reshape(
                leaf.shape[:ax] + (-1,) + leaf.shape[ax + 2:]), v, t), rtype
        if name == "transpose":
            return _tmap(lambda leaf, lt: np.swapaxes(leaf, ax, ax + 1), v, t), rtype
        if name in ("innerSplit", "innerJoin"):
            rank, u = 0, t
            while isinstance(u, ArrayType):
                rank, u = rank + 1, u.elem
            g: Prim = Prim("split" if name == "innerSplit" else "join", p.args)
            for _ in range(rank - (1 if name == "innerSplit" else 2)):
                g = Prim("map", (g,))
            return self.prim(g, [(v, t)], env, nb)
        if name == "reorderStride":
            n, s = int(t.size), int(p.args[0])
            c = n // s
            perm = (np.arange(n) % c) * s + np.arange(n) // c
            return _tmap(lambda leaf, lt: np.take(leaf, perm, axis=ax), v, t), rtype
        if name == "get":
            return v[p.args[0]], rtype
        if name == "asVector":
            w = p.args[0]
            return v.reshape(v.shape[:ax] + (v.shape[ax] // w, w) + v.shape[ax + 1:]), rtype
        if name == "asScalar":
            return v.reshape(v.shape[:ax] + (-1,)), rtype
        if name == "slide":
            size, step = int(p.args[0]), int(p.args[1])

            def win(leaf, lt):
                w = np.lib.stride_tricks.sliding_window_view(leaf, size, axis=ax)
                w = np.take(w, np.arange(0, w.shape[ax], step), axis=ax)
                return np.moveaxis(w, -1, ax + 1)
            return _tmap(win, v, t), rtype
        if name == "pad":
            left, right = int(p.args[0]), int(p.args[1])

            def padded(leaf, lt):
                # a negative amount drops elements (crops)
                cut = [slice(None)] * leaf.ndim
                cut[ax] = slice(max(0, -left), leaf.shape[ax] - max(0, -right))
                leaf = leaf[tuple(cut)]
                widths = [(0, 0)] * leaf.ndim
                widths[ax] = (max(0, left), max(0, right))
                return np.pad(leaf, widths, mode="edge")
            return _tmap(padded, v, t), rtype
        raise McplError(error("lift-run", f"the interpreter does not know pattern '{name}'"))

    def userfun_or_vec(self, f: Fun, args):
        if isinstance(f, UserFun):
            return self.userfun(f, args, vector=True)
        raise McplError(error("lift-run", "mapVec needs a user function"))

    # ------------------------------------------------------------------ reductions
    def reduce(self, p: Prim, v, t: ArrayType, rtype: Type, env, nb: int):
        f, init = p.args[0], p.args[1]
        z, zt = self.expr(init, env, nb)
        acc_t = rtype.elem
        if isinstance(acc_t, ArrayType) and isinstance(zt, ScalarType):
            # a scalar literal fills an array accumulator
            dims = []
            u = acc_t
            while isinstance(u, ArrayType):
                dims.append(int(u.size))
                u = u.elem
            z = np.broadcast_to(np.asarray(z), (1,) * nb + tuple(dims))
        v = _norm(v, t, nb)
        chunk = int(p.args[2]) if p.name == "partRed" else int(t.size)
        if p.name == "partRed":
            v = _tmap(lambda leaf, lt: leaf.reshape(
                leaf.shape[:nb] + (leaf.shape[nb] // chunk, chunk) + leaf.shape[nb + 1:]), v, t)
            ax = nb + 1
        else:
            ax = nb
        op = _fast_op(f)
        if op is not None and not isinstance(v, tuple):
            with np.errstate(all="ignore"):
                r = op.reduce(v, axis=ax)
                r = op(np.asarray(z, dtype=r.dtype), r).astype(v.dtype, copy=False)
        else:
            # a general reduction: one batched application of f per element
            outer_nb = ax
            acc = (z, acc_t)
            n = chunk
            for i in range(n):
                vt = t if p.name != "partRed" else ArrayType(ArrayType(t.elem, chunk),
                                                             t.size // chunk)
                x = _tmap(lambda leaf, lt, i=i: np.take(leaf, i, axis=ax), v, vt)
                acc = self.apply(f, [acc, (x, t.elem)], env, outer_nb)
            r = _norm(acc[0], acc_t, outer_nb)
        if p.name == "partRed":
            return r, rtype
        return _tmap(lambda leaf, lt: np.expand_dims(leaf, nb), r, acc_t), rtype


def sizes_from_shapes(prog: Program, arrays) -> dict:
    """Values of the size symbols, read off the shapes of the inputs."""
    values: dict = {}
    for p, x in zip(prog.params, arrays, strict=True):
        t, axis = p.type, 0
        while isinstance(t, ArrayType):
            if axis >= x.ndim:
                raise McplError(error("lift-run", f"input '{p.name}' should have type {p.type}"))
            size = t.size.subs(values)
            if size.is_Symbol:
                values[size] = x.shape[axis]
            elif size.is_number and int(size) != x.shape[axis]:
                raise McplError(error("lift-run", f"input '{p.name}' has {x.shape[axis]} elements "
                                                  f"in dimension {axis}, expected {size}"))
            t, axis = t.elem, axis + 1
        if isinstance(t, VectorType) and (axis >= x.ndim or x.shape[axis] != t.width):
            raise McplError(error("lift-run", f"input '{p.name}' should have {t.width} lanes "
                                              f"(type {p.type}) in its last axis, given an "
                                              f"array of shape {x.shape}"))
    return values


def _fast_op(f: Fun):
    """The numpy ufunc of a recognised associative user function (``x + y``, ...)."""
    if isinstance(f, Prim) and f.name == "mapVec":
        f = f.args[0]
    if not isinstance(f, UserFun) or len(f.params) != 2:
        return None
    a, b = (C.CVar(n) for n, _ in f.params)
    body = f.body
    if isinstance(body, C.CBinary) and {body.left, body.right} == {a, b}:
        return {"+": np.add, "*": np.multiply}.get(body.op)
    if isinstance(body, C.CCall) and set(body.args) == {a, b} and len(body.args) == 2:
        return {"fmax": np.maximum, "max": np.maximum, "fmin": np.minimum,
                "min": np.minimum}.get(body.name)
    return None


def run(prog: Program, *inputs) -> np.ndarray:
    """The result of ``prog`` on numpy inputs (shapes as the parameter types say)."""
    from mcl.lift.arguments import program_argument
    prog = program_argument(prog, "run")
    return Interpreter().run(prog, *inputs)


def random_inputs(prog: Program, sizes: dict, rng: np.random.Generator | None = None,
                  low: float = -1.0, high: float = 1.0) -> list[np.ndarray]:
    """Random inputs for ``prog`` with the size symbols bound by ``sizes`` (name -> int)."""
    from mcl.lift.arguments import program_argument, sizes_argument
    from mcl.lift.types import free_sizes, subst
    prog = program_argument(prog, "random_inputs")
    sizes = sizes_argument(sizes, "random_inputs")
    rng = rng or np.random.default_rng(0)
    values = {s: sizes[s.name] for p in prog.params for s in free_sizes(p.type)
              if s.name in sizes}
    out = []
    for p in prog.params:
        t = subst(p.type, values)
        dims = []
        while isinstance(t, ArrayType):
            if not t.size.is_number:
                raise McplError(error("lift-size", f"the size {t.size} of '{p.name}' has no value",
                                      hint="give it with --size NAME=VALUE"))
            dims.append(int(t.size))
            t = t.elem
        if isinstance(t, VectorType):
            dims.append(t.width)
        dt = _dtype(t)
        if np.issubdtype(dt, np.integer):
            out.append(rng.integers(-8, 8, size=dims).astype(dt))
        else:
            out.append(rng.uniform(low, high, size=dims).astype(dt))
    return out
