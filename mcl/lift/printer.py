"""Printing IR back to the textual syntax: ``f o g $ x`` for chains, point-free
lambdas printed as compositions. ``canonical=True`` renames parameters in
binding order, which makes the text a key for memoising expressions."""

from __future__ import annotations

from mcl.lift import cexpr
from mcl.lift.ir import (
    Call,
    Compose,
    Expr,
    Fun,
    Lambda,
    Literal,
    Node,
    Param,
    Prim,
    Program,
    UserFun,
    count_uses,
    walk,
)
from mcl.lift.types import size_str


class _Printer:
    def __init__(self, canonical: bool):
        self.canonical = canonical
        self.names: dict[Param, str] = {}

    def pname(self, p: Param) -> str:
        if p not in self.names:
            self.names[p] = f"p{len(self.names)}" if self.canonical else p.name
        return self.names[p]

    # ------------------------------------------------------------ functions
    def fun(self, f: Fun, ctx: str = "top") -> str:
        """``ctx``: 'top' (anywhere), 'compose' (part of f o g), 'apply' (left of $)."""
        if isinstance(f, UserFun):
            return f.name
        if isinstance(f, Prim):
            return self.prim(f)
        if isinstance(f, Compose):
            s = " o ".join(self.fun(g, "compose") for g in f.funs)
            return f"({s})" if ctx == "apply" and False else s
        if isinstance(f, Lambda):
            chain = self._point_free(f)
            if chain is not None:
                s = " o ".join(self.fun(g, "compose") for g in chain)
                return f"({s})" if ctx == "compose" and len(chain) > 1 else s
            params = ", ".join(self.pname(p) + (f": {p.type}" if p.type is not None else "")
                               for p in f.params)
            s = f"fun({params}) => {self.expr(f.body)}"
            return f"({s})" if ctx in ("compose", "apply") else s
        raise TypeError(f)

    def _point_free(self, f: Lambda) -> list[Fun] | None:
        """``fun(y) => f(g(y))`` with one use of y is ``f o g``."""
        if len(f.params) != 1 or f.params[0].type is not None:
            return None
        (p,) = f.params
        chain: list[Fun] = []
        e: Expr = f.body
        while isinstance(e, Call) and len(e.args) == 1 and not _is_get(e):
            chain.append(e.fun)
            e = e.args[0]
        if e != p or not chain or count_uses(f.body, p) != 1:
            return None
        return chain

    def prim(self, p: Prim) -> str:
        if not p.args and p.dim == 0:
            return p.name
        parts = [str(p.dim)] if p.dim else []
        for a in p.args:
            if isinstance(a, Fun):
                parts.append(self.fun(a))
            elif isinstance(a, Expr):
                parts.append(self.expr(a))
            elif isinstance(a, int):
                parts.append(str(a))
            else:
                parts.append(size_str(a))
        return f"{p.name}({', '.join(parts)})"

    # ------------------------------------------------------------ data
    def expr(self, e: Expr) -> str:
        if isinstance(e, Param):
            return self.pname(e)
        if isinstance(e, Literal):
            return e.text
        if isinstance(e, Call):
            if _is_get(e):
                return f"{self.atom(e.args[0])}._{e.fun.args[0]}"
            if isinstance(e.fun, UserFun) or (isinstance(e.fun, Prim) and e.fun.name == "zip"):
                return f"{self.fun(e.fun)}({', '.join(self.expr(a) for a in e.args)})"
            if len(e.args) == 1:
                chain = [e.fun]
                x = e.args[0]
                while isinstance(x, Call) and len(x.args) == 1 and not _is_get(x) \
                        and not isinstance(x.fun, UserFun):
                    chain.append(x.fun)
                    x = x.args[0]
                fs = " o ".join(self.fun(g, "compose") for g in chain)
                return f"{fs} $ {self.expr(x)}"
            args = ", ".join(self.expr(a) for a in e.args)
            return f"({self.fun(e.fun, 'apply')})({args})"
        raise TypeError(e)

    def atom(self, e: Expr) -> str:
        s = self.expr(e)
        return s if isinstance(e, Param | Literal) or (isinstance(e, Call) and (
            _is_get(e) or isinstance(e.fun, UserFun))) else f"({s})"


def _is_get(e: Node) -> bool:
    return isinstance(e, Call) and isinstance(e.fun, Prim) and e.fun.name == "get"


def show(n: Node, canonical: bool = False) -> str:
    """Text of an expression or function."""
    if not isinstance(n, Node):
        from mcl.lift.arguments import LiftArgumentError
        hint = "show_program(program) prints a whole program" if \
            type(n).__name__ == "Program" else None
        raise LiftArgumentError("mcl.lift.show", "n", "is an expression or a function of "
                                f"Lift's IR, not {type(n).__name__}", hint)
    p = _Printer(canonical)
    return p.fun(n) if isinstance(n, Fun) else p.expr(n)


def key(n: Node) -> str:
    """A memoisation key: equal for expressions equal up to parameter names."""
    return show(n, canonical=True)


def userfuns_of(n: Node) -> list[UserFun]:
    seen: dict[str, UserFun] = {}
    for _, m in walk(n):
        if isinstance(m, UserFun):
            seen.setdefault(m.name, m)
    return list(seen.values())


def show_userfun(u: UserFun) -> str:
    params = ", ".join(f"{n}: {t}" for n, t in u.params)
    return f"userfun {u.name}({params}): {u.ret} = {cexpr.to_source(u.body)}"


def show_program(prog: Program) -> str:
    """A whole ``.lift`` file: the user functions, then the definition."""
    from mcl.lift.arguments import program_argument
    prog = program_argument(prog, "mcl.lift.show_program")
    lines = [show_userfun(u) for u in userfuns_of(prog.body)]
    p = _Printer(False)
    params = ", ".join(f"{p.pname(q)}: {q.type}" for q in prog.params)
    body = p.expr(prog.body.body)
    if lines:
        lines.append("")
    lines.append(f"{prog.name} = fun({params}) =>\n  {body}")
    return "\n".join(lines) + "\n"
