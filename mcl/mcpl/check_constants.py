"""Checks of module-level constants (``const float PI = 3.14159;``): a primitive
scalar type, a value made of literals, built-in math and constants defined before
it, and a value that fits the type. Each becomes a symbol of kind "constant" that
functions of the module, and of modules importing it, see after their own names."""

from __future__ import annotations

from mcl.diagnostics import Diagnostic, Related, error
from mcl.mcpl import ast
from mcl.mcpl.check_common import _RANK, BUILTINS, _show, _suggest, division_by_zero
from mcl.mcpl.resolve import CheckedModule, Symbol


def check_constants(module: ast.Module, result: CheckedModule,
                    diags: list[Diagnostic]) -> None:
    own: dict[str, ast.Constant] = {}
    for i, c in enumerate(module.constants):
        # Constants of this module at or after this one: not usable in its value.
        pending = {d.name: d for d in reversed(module.constants[i:])}
        if c.name in own:
            diags.append(error("mcpl-redeclared", f"constant '{c.name}' is declared twice",
                               c.span, "rename one of them",
                               [Related(own[c.name].span, "first declared here")]))
            continue
        if c.type.dims or c.type.name not in _RANK:
            diags.append(error("mcpl-bad-constant",
                               f"constant '{c.name}' has type '{_show(c.type)}'", c.type.span,
                               "a constant is a number or bool: int, long, float, double, "
                               "byte or bool"))
        _Value(c, result, own, pending, diags).type_of(c.value)
        sym = Symbol(c.name, "constant", c, c.type, const=True, init=c.value)
        own[c.name] = c
        result.constants[c.name] = sym
        result._decls[id(c)] = sym


class _Value:
    """Types the value of one constant and resolves the constants it names."""

    def __init__(self, c: ast.Constant, result: CheckedModule, own: dict[str, ast.Constant],
                 later: dict[str, ast.Constant], diags: list[Diagnostic]):
        self.c, self.result, self.own, self.later, self.diags = c, result, own, later, diags

    def error(self, code: str, message: str, node: ast.Node, hint: str | None = None,
              related: tuple[Related, ...] = ()) -> None:
        self.diags.append(error(code, message, node.span, hint, related))

    def type_of(self, e: ast.Expr) -> str | None:
        if isinstance(e, ast.Literal):
            return e.kind
        if isinstance(e, ast.Name):
            return self.name(e)
        if isinstance(e, ast.Unary):
            t = self.type_of(e.operand)
            return "bool" if e.op == "!" else t
        if isinstance(e, ast.Binary):
            a, b = self.type_of(e.left), self.type_of(e.right)
            if a is None or b is None:
                return None
            if e.op in ("&&", "||", "==", "!=", "<", "<=", ">", ">="):
                return "bool"
            name = max(a, b, key=lambda t: _RANK.get(t, 0))
            if e.op in ("/", "%") and name not in ("float", "double"):
                zero = division_by_zero(e.op, e.right, e.op_span or e.span, self.definition)
                if zero is not None:
                    self.diags.append(zero)
            return "int" if name in ("bool", "byte") else name
        if isinstance(e, ast.Ternary):
            self.type_of(e.cond)
            a, b = self.type_of(e.then), self.type_of(e.orelse)
            return None if a is None or b is None else max(a, b, key=lambda t: _RANK.get(t, 0))
        if isinstance(e, ast.Cast):
            self.type_of(e.operand)
            return e.type.name
        if isinstance(e, ast.Call) and e.func in BUILTINS and not BUILTINS[e.func].writes:
            types = [self.type_of(a) for a in e.args]
            if any(t is None for t in types):
                return None
            if BUILTINS[e.func].result == "arg":
                return max(types, key=lambda t: _RANK.get(t, 0), default="int")
            return "double" if "double" in types else "float"
        self.error("mcpl-bad-constant", f"the value of constant '{self.c.name}' is not "
                   "computed from literals and constants", e,
                   "use numbers, other constants, arithmetic and built-in math")
        return None

    def definition(self, e: ast.Name) -> ast.Expr | None:
        """The value of the constant a name stands for (for folding)."""
        sym = self.result.declaration_of(e)
        return sym.init if sym is not None and sym.kind == "constant" else None

    def name(self, e: ast.Name) -> str | None:
        if e.id in self.later and e.id not in self.own:
            where = self.later[e.id]
            itself = where is self.c
            self.error("mcpl-constant-order",
                       f"constant '{e.id}' is defined in terms of itself" if itself else
                       f"constant '{e.id}' is used before its definition", e,
                       "give it a value without its own name" if itself else
                       f"move `const ... {e.id} = ...;` above '{self.c.name}'",
                       (Related(where.span, f"'{e.id}' is defined here"),))
            return None
        sym = self.result.constants.get(e.id)
        if sym is None:
            self.error("mcpl-undeclared", f"'{e.id}' is not a constant", e,
                       _suggest(e.id, self.result.constants) or
                       "a constant's value may use literals and constants defined above it")
            return None
        self.result._names[id(e)] = sym
        return sym.type.name
