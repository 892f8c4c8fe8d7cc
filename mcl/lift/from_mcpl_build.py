"""The second phase of the MCPL-to-Lift derivation (:mod:`mcl.lift.from_mcpl`): the
term of the output (:mod:`mcl.lift.from_mcpl_terms`) turned into a Lift program, one
index variable at a time: the reads that vary with the variable are viewed so that
it runs over their outer dimension (``transpose`` for a column, ``slide`` for a
window ``i + y``, ``split`` for a block ``s*i + x``), zipped, and mapped over
(foreach) or mapped and reduced (loops); scalar arithmetic becomes user functions."""

from __future__ import annotations

from dataclasses import replace

import sympy

from mcl.diagnostics import McplError, Span, error, info
from mcl.lift import cexpr as C
from mcl.lift import ir
from mcl.lift.from_mcpl_terms import (
    _ARITH,
    _COMPARE,
    ASSOCIATIVE,
    Arr,
    Term,
    TIndex,
    TIndexVar,
    TLit,
    TOp,
    TRead,
    TReduce,
    TScalar,
    Var,
    _Failed,
    _rebuild,
    _walk,
)
from mcl.lift.types import ScalarType
from mcl.mcpl import ast

#: Names of standard user functions for binary operators (the Lift programs' spelling).
_STD_NAMES = {"+": "add", "-": "sub", "*": "mult", "/": "div"}


class _LiftBuilder:
    """The second phase; mixed into :class:`mcl.lift.from_mcpl._Deriver` after
    :class:`mcl.lift.from_mcpl_eval._Evaluator`, whose state (writes, variables, program
    parameters, user functions, ``fail``) it uses."""

    def build(self, output: str | None,
              foreach_vars: list[Var]) -> tuple[ir.Program, str, list[str]]:
        """The checked Lift program computing ``output`` (default: the one array
        written), that output's name and the MCPL parameters of the program's
        parameters, in order."""
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
        return prog, output, used

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
