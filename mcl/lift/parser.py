"""Reading ``.lift`` files: textX parses (grammar ``lift.tx``), then this module
turns the parse tree into the IR once, resolving names (patterns, user
functions, definitions, parameters) and attaching source spans."""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path

import sympy

from mcl.diagnostics import LineIndex, McplError, Span, error
from mcl.lift import cexpr as C
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
    apply,
    compose,
)
from mcl.lift.types import (
    FLOAT,
    INT,
    ArrayType,
    ScalarType,
    TupleType,
    Type,
    VectorType,
    size_symbol,
)

GRAMMAR = Path(__file__).with_name("lift.tx")


@lru_cache(maxsize=1)
def _metamodel():
    from textx import metamodel_from_file
    return metamodel_from_file(str(GRAMMAR), skipws=True, ws=" \t\r\n", autokwd=False,
                               memoization=True)


def parse(text: str, file: str = "<string>", program: str | None = None) -> Program:
    """The program defined in ``text`` (the definition ``program``, else ``main``,
    else the last one). Raises McplError with located diagnostics."""
    from mcl.lift.arguments import LiftArgumentError, path_argument, text_argument
    text = text_argument(text, "mcl.lift.parse")
    file = os.fspath(path_argument(file, "mcl.lift.parse", "file"))
    if program is not None and not isinstance(program, str):
        raise LiftArgumentError("mcl.lift.parse", "program", "is the name of a definition "
                                f"(a str) or None, not {type(program).__name__}")
    return _Builder(text, file).build(program)


def parse_file(path: str | Path, program: str | None = None) -> Program:
    from mcl.lift.arguments import path_argument
    p = Path(path_argument(path, "mcl.lift.parse_file"))
    if p.suffix in (".mcpl", ".mcl"):
        raise McplError(error(
            "lift-mcpl-file", f"{path} is an MCPL kernel, not a Lift program",
            hint=f"`mcl lift from-mcpl {path}` prints its Lift program (save it as a .lift "
                 f"file); `mcl lift explore {path} --target LEAF` explores it directly"))
    try:
        data = p.read_bytes()
    except OSError as e:
        raise McplError(error("lift-io", f"cannot read {path}: {e.strerror}")) from e
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:   # where the first byte that is not UTF-8 is
        good = data[:e.start].decode("utf-8")
        line, col = LineIndex(good).position(len(good))
        raise McplError(error("lift-encoding", f"this file is not UTF-8 text (byte "
                              f"0x{data[e.start]:02x})", Span.point(str(path), line, col),
                              "save the file as UTF-8")) from None
    # a byte-order mark is not part of the program
    return parse(text.removeprefix("\ufeff"), str(path), program)


def parse_expr(text: str, env: dict[str, object] | None = None,
               userfuns: dict[str, UserFun] | None = None) -> Expr | Fun:
    """An expression or function in the textual syntax; names come from ``env``
    (parameters, functions) and ``userfuns``."""
    b = _Builder(f"__e = {text}", "<expr>")
    b.scope = dict(env or {})
    b.userfuns = dict(userfuns or {})
    tree = b.tree()
    return b.expr(tree.items[0].expr, b.scope)


class _Builder:
    def __init__(self, text: str, file: str):
        self.text, self.file = text, file
        self.index = LineIndex(text)
        self.userfuns: dict[str, UserFun] = {}
        self.defs: dict[str, object] = {}
        self.scope: dict[str, object] = {}

    # --------------------------------------------------------------- helpers
    def span(self, node):
        start = getattr(node, "_tx_position", 0)
        end = getattr(node, "_tx_position_end", start + 1)
        return self.index.span(self.file, start, end)

    def fail(self, node, message: str, hint: str | None = None, code: str = "lift-name"):
        raise McplError(error(code, message, self.span(node) if node is not None else None, hint))

    def tree(self):
        from textx.exceptions import TextXSyntaxError
        try:
            return _metamodel().model_from_str(self.text)
        except TextXSyntaxError as e:
            from mcl.lift.syntax import syntax_diagnostic
            raise McplError(syntax_diagnostic(e, self.text, self.file)) from None

    # --------------------------------------------------------------- program
    def build(self, which: str | None) -> Program:
        tree = self.tree()
        last = None
        seen: dict[str, object] = {}
        for item in getattr(tree, "items", ()):   # an empty file: no model, no items
            cls = type(item).__name__
            # (a program may share its name with a user function: from-mcpl's `add`)
            if (cls, item.name) in seen:
                first = self.span(seen[cls, item.name])
                what = "user function" if cls == "UserFunDef" else "definition"
                self.fail(item, f"the {what} '{item.name}' is defined twice (first at line "
                                f"{first.line}); the second would silently replace the first",
                          hint="rename one of them; a definition may use those above it")
            seen[cls, item.name] = item
            if cls == "UserFunDef":
                uf = self.userfun(item)
                self.userfuns[uf.name] = uf
                continue
            value = self.expr(item.expr, dict(self.defs))
            self.defs[item.name] = value
            last = (item.name, value, item)
        if which is None:
            which = "main" if "main" in self.defs else (last[0] if last else None)
        if which is None:
            raise McplError(error("lift-empty", f"{self.file} defines no program",
                                  hint="write e.g. sum = fun(x: float[N]) => "
                                       "reduce(add, 0.0f) $ x"))
        if which not in self.defs:
            raise McplError(error("lift-name", f"{self.file} has no definition '{which}'",
                                  hint="defined: " + ", ".join(self.defs)))
        body = self.defs[which]
        if not isinstance(body, Lambda):
            raise McplError(error("lift-program", f"'{which}' is not a function of the inputs",
                                  hint="write it as fun(x: float[N]) => ..."))
        return Program(which, body, dict(self.userfuns), self.text)

    def userfun(self, item) -> UserFun:
        params = tuple((p.name, self.type(p.type)) for p in item.params)
        names = {p for p, _ in params}
        body = self.cexpr(item.body)
        for v in sorted(C.variables(body) - names):
            self.fail(self._first(item.body, "CVarRef", v), f"user function '{item.name}' "
                      f"uses '{v}', which is not a parameter",
                      hint="parameters: " + (", ".join(sorted(names)) or "none"))
        for c in sorted(C.calls(body) - set(C.BUILTINS)):
            self.fail(self._first(item.body, "CCallRef", c),
                      f"user function '{item.name}' calls unknown function '{c}'",
                      hint="available: " + ", ".join(sorted(C.BUILTINS)))
        ret = self.type(item.ret)
        from mcl.lift.ir import PATTERNS
        from mcl.lift.userfun_check import check_userfun
        problem = check_userfun(item.name, params, ret, body, set(PATTERNS))
        if problem is not None:
            where = item
            if problem.anchor is not None:
                cls, attr, value = problem.anchor
                where = self._first(item, cls, value, attr)
            self.fail(where, problem.message, hint=problem.hint, code="lift-userfun")
        return UserFun(item.name, params, ret, body, self.span(item))

    @staticmethod
    def _first(tree, cls: str, name: str, attr: str = "name"):
        """The first node of class ``cls`` whose ``attr`` is ``name`` in ``tree``, as a
        located node spanning the name (a call's span would cover its arguments)."""
        from types import SimpleNamespace

        from textx import get_children_of_type
        nodes = sorted((n for n in get_children_of_type(cls, tree)
                        if getattr(n, attr, None) == name), key=lambda n: n._tx_position)
        if not nodes:
            return tree
        start = nodes[0]._tx_position
        return SimpleNamespace(_tx_position=start, _tx_position_end=start + len(name))

    # --------------------------------------------------------------- types
    def type(self, t) -> Type:
        base = t.base
        if type(base).__name__ == "TupleTypeRef":
            out: Type = TupleType(tuple(self.type(e) for e in base.elems))
        else:
            m = re.fullmatch(r"(float|int|double|bool)(\d*)", base.name)
            scal = ScalarType(m.group(1))
            out = VectorType(scal, int(m.group(2))) if m.group(2) else scal
        for d in reversed(t.dims):
            size = self.size_text(d.text, d)
            if size.is_number and not (size.is_integer and size > 0):
                self.fail(d, f"'{d.text.strip()}' is not a length: an array has a positive "
                             "whole number of elements", hint="write e.g. float[1024], or a "
                          "name (float[N]) given a value with --size N=1024", code="lift-type")
            out = ArrayType(out, size)
        return out

    def size_text(self, text: str, node) -> sympy.Expr:
        names = {n: size_symbol(n) for n in re.findall(r"[A-Za-z_]\w*", text)}
        try:
            size = sympy.sympify(text.replace("^", "**"), locals=names)
        except (sympy.SympifyError, SyntaxError, TypeError):
            self.fail(node, f"'{text.strip()}' is not a size", code="lift-syntax")
        return size

    # --------------------------------------------------------------- expressions
    def expr(self, e, scope: dict) -> Expr | Fun:
        cls = type(e).__name__
        if cls == "Apply":
            f = self.expr(e.fn, scope)
            if e.arg is None:
                return f
            x = self.expr(e.arg, scope)
            if not isinstance(f, Fun):
                self.fail(e.fn, "the left of '$' is data, not a function")
            if not isinstance(x, Expr):
                self.fail(e.arg, "the right of '$' is a function, not data",
                          hint="apply it to the input: f $ x")
            return self._spanned(apply(f, x), e)
        if cls == "Compose":
            parts = [self.expr(p, scope) for p in e.parts]
            if len(parts) == 1:
                return parts[0]
            for p, node in zip(parts, e.parts, strict=True):
                if not isinstance(p, Fun):
                    self.fail(node, "only functions can be composed with 'o'")
            c = compose(*parts)
            return Compose(c.funs, self.span(e)) if isinstance(c, Compose) else c
        if cls == "Arith":
            if not e.rest:
                return self.expr(e.first, scope)
            self.fail(e, "arithmetic is only allowed in sizes (e.g. split(N/4))",
                      hint="use a user function for arithmetic on data")
        if cls == "Postfix":
            return self.postfix(e, scope)
        if cls == "Paren":
            return self.expr(e.inner, scope)
        if cls == "LambdaExpr":
            params = []
            inner = dict(scope)
            for p in e.params:
                t = self.type(p.type) if p.type is not None else None
                prm = Param(p.name, type=t, span=self.span(p))
                params.append(prm)
                inner[p.name] = prm
            body = self.expr(e.body, inner)
            if not isinstance(body, Expr):
                self.fail(e.body, "the body of a lambda must be data, not a function",
                          hint="apply the function to the parameter: fun(x) => f $ x")
            return Lambda(tuple(params), body, self.span(e))
        if cls == "Number":
            return self.literal(e.value, e)
        if cls == "Name":
            return self.name(e.name, e, scope, called=False)
        self.fail(e, f"unexpected {cls}")

    def check_literal(self, text: str, node) -> None:
        from mcl.lift.userfun_check import literal_problem
        problem = literal_problem(text)
        if problem is not None:
            self.fail(node, problem.message, hint=problem.hint, code="lift-syntax")

    def literal(self, text: str, node) -> Literal:
        self.check_literal(text, node)
        is_float = bool(re.search(r"[.eEfF]", text))
        return Literal(text, FLOAT if is_float else INT, self.span(node))

    def name(self, name: str, node, scope, called: bool):
        if name in scope:
            return scope[name]
        if name in self.userfuns:
            return self.userfuns[name]
        if name in PATTERNS:
            spec = PATTERNS[name]
            if spec.params and not called:
                self.fail(node, f"the pattern '{name}' needs parameters: {name}("
                          + ", ".join(spec.params) + ")")
            return Prim(name, (), 0, self.span(node))
        hint = None
        import difflib
        close = difflib.get_close_matches(name, list(PATTERNS) + list(self.userfuns)
                                          + list(scope), n=1)
        if close:
            hint = f"did you mean '{close[0]}'?"
        self.fail(node, f"unknown name '{name}' (not a pattern, user function or parameter)",
                  hint=hint)

    def postfix(self, e, scope):
        suffixes = list(e.suffixes)
        base = e.base
        value = None
        if type(base).__name__ == "Name" and base.name not in scope and base.name in PATTERNS \
                and PATTERNS[base.name].params:
            if not suffixes or type(suffixes[0]).__name__ != "CallSuffix":
                self.fail(base, f"the pattern '{base.name}' needs parameters: {base.name}("
                          + ", ".join(PATTERNS[base.name].params) + ")")
            value = self.pattern(base.name, suffixes.pop(0), e, scope)
        else:
            value = self.expr(base, scope) if type(base).__name__ != "Name" else \
                self.name(base.name, base, scope, called=bool(suffixes))
        for s in suffixes:
            if type(s).__name__ == "GetSuffix":
                if not isinstance(value, Expr):
                    self.fail(s, "'._i' takes a component of a tuple, not of a function")
                value = Call(Prim("get", (int(s.index[2:]),)), (value,), self.span(e))
            else:
                if not isinstance(value, Fun):
                    self.fail(s, "data cannot be called like a function")
                args = [self.expr(a, scope) for a in s.args]
                for a, node in zip(args, s.args, strict=True):
                    if not isinstance(a, Expr):
                        self.fail(node, "a function is passed where data is expected")
                value = self._spanned(apply(value, *args), e)
        return value

    def pattern(self, name: str, call, whole, scope) -> Prim:
        spec = PATTERNS[name]
        args = list(call.args)
        dim = 0
        if spec.has_dim and len(args) == len(spec.params) + 1:
            d = args.pop(0)
            dim = int(self.size_of(d, scope))
            if dim not in (0, 1, 2):
                self.fail(d, f"{name}: the dimension must be 0, 1 or 2")
        if len(args) != len(spec.params):
            self.fail(call, f"{name} takes {len(spec.params)} parameter(s) ("
                      + ", ".join(spec.params) + f") but is given {len(args)}")
        out = []
        for kind, a in zip(spec.params, args, strict=True):
            if kind == "fun":
                f = self.expr(a, scope)
                if not isinstance(f, Fun):
                    shadowed = getattr(f, "name", None)     # a parameter of that name
                    hint = (f"'{shadowed}' names data here (a parameter), which hides the "
                            f"user function '{shadowed}': rename one of them"
                            if shadowed in self.userfuns else None)
                    self.fail(a, f"{name}: expects a function here, got data", hint)
                out.append(f)
            elif kind == "init":
                v = self.expr(a, scope)
                if not isinstance(v, Expr):
                    self.fail(a, f"{name}: the initial value must be data")
                out.append(v)
            elif kind == "int":
                out.append(int(self.size_of(a, scope)))
            else:
                out.append(self.size_of(a, scope))
        return Prim(name, tuple(out), dim, self.span(whole))

    def size_of(self, e, scope) -> sympy.Expr:
        start, end = e._tx_position, e._tx_position_end
        text = self.text[start:end]
        v = self.size_text(text, e)
        if v.free_symbols & {size_symbol(n) for n in scope if isinstance(scope[n], Param)}:
            self.fail(e, f"'{text}' uses a parameter where a size is expected")
        return v

    def _spanned(self, x, node):
        if isinstance(x, Call) and x.span is None:
            return Call(x.fun, x.args, self.span(node))
        return x


__all__ = ["parse", "parse_file", "parse_expr", "GRAMMAR"]


def _cexpr(self, e) -> C.CExpr:
    cls = type(e).__name__
    if cls == "CTern":
        c = self.cexpr(e.cond)
        if e.then is None:
            return c
        return C.CTernary(c, self.cexpr(e.then), self.cexpr(e.other))
    if cls in ("COr", "CAnd", "CEq", "CRel", "CAdd", "CMul"):
        out = self.cexpr(e.first)
        for r in e.rest:
            out = C.CBinary(r.op, out, self.cexpr(r.operand))
        return out
    if cls == "CUn":
        v = self.cexpr(e.operand)
        return C.CUnary(e.op, v) if e.op else v
    if cls == "CPost":
        v = self.cexpr(e.base)
        for f in e.fields:
            v = C.CField(v, int(f[2:]))
        return v
    if cls == "CCallRef":
        return C.CCall(e.name, tuple(self.cexpr(a) for a in e.args))
    if cls == "CNum":
        self.check_literal(e.value, e)
        return C.CNum(e.value)
    if cls == "CParen":
        return self.cexpr(e.inner)
    if cls == "CVarRef":
        return C.CVar(e.name)
    raise TypeError(cls)


_Builder.cexpr = _cexpr
