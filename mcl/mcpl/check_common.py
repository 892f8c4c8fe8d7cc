"""What the MCPL checks share: the built-in functions, the write summaries of
functions (which parameters each writes, through calls too), the names that may be
missing after a syntax error, and the helpers that name types and suggest names."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from mcl.diagnostics import Diagnostic, Span, error, warning
from mcl.mcpl import ast
from mcl.mcpl.fold import fold_constant, integer_range, wrapped

if TYPE_CHECKING:
    from mcl.mcpl.builder import Unparsed
    from mcl.mcpl.resolve import CheckedModule

# Numeric types by rank: an operation on two of them has the type of the higher.
#: byte (8-bit unsigned, OpenCL uchar) promotes to int in arithmetic, as in C.
_RANK = {"bool": 0, "byte": 1, "int": 2, "long": 3, "float": 4, "double": 5}


@dataclass(frozen=True)
class Builtin:
    """A function every module may call: its number of arguments, the parameters it
    writes and how its result type follows from the arguments."""

    arity: int              # -1: any number of arguments, at least one
    writes: frozenset[int] = frozenset()
    result: str = "float"   # "float": float unless an argument is double; "arg": the
    #                         promoted argument type; "void"; or a type name
    writes_all: bool = False

    def written(self, i: int) -> bool:
        return self.writes_all or i in self.writes


_MATH1 = ("sqrt", "rsqrt", "exp", "exp2", "log", "log2", "log10", "sin", "cos", "tan",
          "tanh", "erf", "fabs", "floor", "ceil", "round")
BUILTINS: dict[str, Builtin] = {
    **{n: Builtin(1) for n in _MATH1},
    "abs": Builtin(1, result="arg"),
    "min": Builtin(2, result="arg"), "max": Builtin(2, result="arg"),
    "fmin": Builtin(2), "fmax": Builtin(2), "pow": Builtin(2), "fma": Builtin(3),
    "atomicAdd": Builtin(2, frozenset({0}), "arg"),
    # The interface of a library stub (a function the target provides): which of its
    # parameters it reads and writes, for the analyses (see is_builtin_stub).
    "mcl_builtin_read": Builtin(-1, result="void"),
    "mcl_builtin_write": Builtin(-1, result="void", writes_all=True),
}
STUB_MARKERS = ("mcl_builtin_read", "mcl_builtin_write")


def is_builtin_stub(f: ast.Function) -> bool:
    """Whether a function is a library stub: its body declares its effect with
    ``mcl_builtin_read(x); mcl_builtin_write(r);`` and the target provides the
    function itself (code generators call the target's function of that name)."""
    return any(isinstance(n, ast.Call) and n.func in STUB_MARKERS for n in ast.walk(f.body))


def stub_writes(f: ast.Function) -> frozenset[str]:
    """The parameters a stub declares written with ``mcl_builtin_write``."""
    return frozenset(r.id for n in ast.walk(f.body)
                     if isinstance(n, ast.Call) and n.func == "mcl_builtin_write"
                     for r in map(_root, n.args) if r is not None)


def closest(name: str, known: Iterable[str]) -> str | None:
    """The word of ``known`` closest to ``name`` (difflib's ratio of at least 0.6),
    for 'did you mean' hints; None if none is close."""
    close = difflib.get_close_matches(name, list(known), n=1)
    return close[0] if close else None


def _suggest(name: str, known: Iterable[str]) -> str | None:
    close = closest(name, known)
    return f"did you mean '{close}'?" if close else None


def division_by_zero(op: str, divisor: ast.Expr, span: Span | None,
                     resolve: Callable[[ast.Name], ast.Expr | None]) -> Diagnostic | None:
    """The error of an integer division or remainder (``op``: / % /= %=) whose
    divisor is the constant 0, or None. Only integer operations: C leaves them
    undefined, where a float division by 0.0 gives inf or nan (IEEE 754)."""
    if fold_constant(divisor, resolve) != 0:
        return None
    what = "division" if op.startswith("/") else "remainder"
    shown = _describe(divisor)
    value = "0" if shown.strip("()") == "0" else f"'{shown}', which is 0"
    return error("mcpl-division-by-zero", f"integer {what} by zero: the divisor of '{op}' "
                 f"is {value}", span,
                 "an integer division or remainder by zero is undefined (as in C): the "
                 "kernel may stop or compute anything; check the divisor")


_FLOAT_MAX = 3.4028234663852886e38     # the largest finite float


def value_range(type_name: str) -> tuple[float, float, str] | None:
    """The least and greatest value of a number type and how messages write them
    ("-2147483648 .. 2147483647"; float: "about -3.4e38 .. 3.4e38"); None for a type
    without such a limit here (double, bool, a record)."""
    held = integer_range(type_name)
    if held is not None:
        return held[0], held[1], f"{held[0]} .. {held[1]}"
    if type_name == "float":
        return -_FLOAT_MAX, _FLOAT_MAX, "about -3.4e38 .. 3.4e38"
    return None


def constant_beyond(target: str, value: ast.Expr,
                    resolve: Callable[[ast.Name], ast.Expr | None]) -> Diagnostic | None:
    """The warning for a constant ``value`` stored in a ``target`` (a type name) whose
    range does not hold it: ``int a = 3000000000`` (it wraps to -1294967296, as C
    converts it), ``float x = 1e40`` (infinity); None where it fits or is no constant."""
    if isinstance(value, ast.Name):
        return None     # a constant's own value is judged where it is declared
    v = fold_constant(value, resolve)
    if v is None or isinstance(v, bool):
        return None
    shown = _describe(value)
    shown = shown if shown.strip("()") == str(v) or shown == repr(v) else f"{shown} (= {v})"
    held = value_range(target)
    if held is None or held[0] <= v <= held[1] or (target == "float" and v != v):
        return None
    what = f"'{target}' ({held[2]})"
    if target == "float":
        becomes, hint = "it becomes infinity", "use 'double' or a smaller constant"
    else:
        becomes = f"it becomes {wrapped(v, target)}" if isinstance(v, int) else \
            "its value is undefined (as in C)"
        hint = "use a wider type ('long') or a smaller constant" if target != "long" else \
            "use a smaller constant, or 'double'"
    return warning("mcpl-constant-range", f"the constant {shown} does not fit {what}: "
                   f"stored there, {becomes}", value.span, hint)


def _root(e: ast.Expr) -> ast.Name | None:
    """The variable an lvalue-like expression (a, a[i], r.x, a[i].x) is part of."""
    while isinstance(e, ast.Index | ast.Field):
        e = e.base
    return e if isinstance(e, ast.Name) else None


# --------------------------------------------------------------------------- write summaries


def _param_of(n: str, index: dict[str, int], viewed: dict[str, str],
              shadowed: set[str]) -> str | None:
    """The parameter (of ``index``) a name stands for: itself, or the one it is a view
    of (``viewed``: view -> viewed name); None for a local name."""
    seen = set()
    while n not in index and n in viewed and n not in shadowed and n not in seen:
        seen.add(n)
        n = viewed[n]
    return n if n in index and n not in shadowed else None


def infer_writes(functions: dict[str, ast.Function],
                 external: dict[str, frozenset[int]]) -> dict[str, frozenset[int]]:
    """Which parameters (by position) each function writes, directly or through calls
    to functions of ``functions``, to ``external`` ones (imported, whose summaries are
    known) and to built-ins. A fixpoint, so calls may come in any order and recurse."""
    direct: dict[str, set[int]] = {}
    passes: dict[str, list[tuple[str, int, int]]] = {}  # (callee, arg index, param index)
    for name, f in functions.items():
        index = {p.name: i for i, p in enumerate(f.params)}
        # Local names that shadow parameters or their views (rare; then writes to
        # them are not the parameter's): found in the same walk, applied after it.
        declared: set[str] = set()
        targets: list[str] = []
        calls: list[tuple[str, int, str]] = []
        # views of a parameter (`output as float[h, w / 4, 4] out4;`): the same storage
        viewed: dict[str, str] = {}
        for node in ast.walk(f.body):
            if isinstance(node, ast.AsStatement):
                r = _root(node.target)
                if r is not None:
                    viewed.update((v.name, r.id) for v in node.views)
            elif isinstance(node, ast.Assign | ast.IncDec):
                target = _root(node.target)
                if target is not None:
                    targets.append(target.id)
            elif isinstance(node, ast.Call):
                for ai, arg in enumerate(node.args):
                    r = _root(arg)
                    if r is not None:
                        calls.append((node.func, ai, r.id))
            elif isinstance(node, ast.Declaration):
                declared.add(node.name)
        shadowed = declared & (index.keys() | viewed.keys())
        written = (_param_of(t, index, viewed, shadowed) for t in targets)
        direct[name] = {index[q] for q in written if q is not None}
        passes[name] = [(callee, ai, index[q]) for callee, ai, q in
                        ((c, a, _param_of(n, index, viewed, shadowed)) for c, a, n in calls)
                        if q is not None]
    result = {n: set(w) for n, w in direct.items()}
    changed = True
    while changed:
        changed = False
        for name, calls in passes.items():
            for callee, ai, pi in calls:
                if callee in result:
                    writes = result[callee]
                elif callee in external:
                    writes = external[callee]
                elif callee in BUILTINS:
                    writes = {ai} if BUILTINS[callee].written(ai) else set()
                else:
                    continue
                if ai in writes and pi not in result[name]:
                    result[name].add(pi)
                    changed = True
    return {n: frozenset(w) for n, w in result.items()}



# --------------------------------------------------------------------------- missing names


@dataclass(frozen=True)
class _Missing:
    """Names that may be missing because their definitions did not parse (in this
    module or in an imported one), and imported hardware descriptions that could not
    be loaded: problems that follow from their absence are not reported, since the
    error that caused it is."""

    functions: frozenset[str] = frozenset()
    types: frozenset[str] = frozenset()
    any_name: bool = False     # any function or type may be missing
    imports: bool = False      # the imports are unknown (the header did not parse)
    hardware: frozenset[str] = frozenset()   # imported, but with errors

    def function(self, name: str) -> bool:
        return self.any_name or name in self.functions

    def type(self, name: str) -> bool:
        return self.any_name or name in self.types

    def add_any(self) -> _Missing:
        """Any function or type may be missing (an imported module could not be read)."""
        return replace(self, any_name=True)

    def add_hardware(self, name: str) -> _Missing:
        """The hardware description ``name`` is imported but has errors."""
        return replace(self, hardware=self.hardware | {name})

    def add(self, other: Unparsed | None, own: bool) -> _Missing:
        if other is None:
            return self
        # An imported module whose own imports are unknown still defines what it defines.
        lost_name = other.any_name if own else other.unnamed
        return replace(self, functions=self.functions | other.functions,
                       types=self.types | other.types, any_name=self.any_name or lost_name,
                       imports=self.imports or (own and other.header))


_NOTHING_MISSING = _Missing()


def _check_type_name(t: ast.Type, result: CheckedModule, diags: list[Diagnostic],
                     missing: _Missing = _NOTHING_MISSING) -> bool:
    if t.name in ast.PRIMITIVE_TYPES or t.name in result.types:
        return True
    if missing.type(t.name):
        return False
    diags.append(error("mcpl-unknown-type", f"unknown type '{t.name}'", t.span,
                       _suggest(t.name, [*ast.PRIMITIVE_TYPES, *result.types])
                       or "types are int, long, float, double, bool and records "
                          "declared with `type name { ... }`"))
    return False



def _show(t: ast.Type) -> str:
    from mcl.mcpl.printer import print_type

    return print_type(t)


def _describe(e: ast.Expr) -> str:
    from mcl.mcpl.printer import print_expr

    return print_expr(e)


def _levels(counts: list[int]) -> str:
    if not counts:
        return "no indices"
    return " then ".join(f"{n} ind{'ex' if n == 1 else 'ices'}" for n in counts) + (
        "" if len(counts) == 1 else " (one group per tile level)")


