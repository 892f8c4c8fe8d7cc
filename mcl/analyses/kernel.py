"""The kernel model the analyses share (built by mcl.analyses.kernel_build, one walk
over a checked function): every loop (foreach, for, while) with its symbolic trip count, every
array access with its symbolic index expressions and enclosing loops, and every
arithmetic operation with its kind (computation, indexing, control flow).

Index expressions are sympy expressions in loop indices and parameters: local
scalars defined once are replaced by their definitions (the "interpreter of
just the statements needed" of paper section 6.5). A name whose value comes
from an array or is assigned several times is *unpredictable*; an expression
that uses one is marked so instead of being guessed.

With ``values`` (parameter defaults and ``--set``), parameters are numbers and
integer division is C division; without, sizes stay symbolic and ``/`` is exact
division (array shapes in MCPL are written so that sizes divide), except where a
quotient rounds (``(m + T - 1) / T``), which stays ``floor``. A conditional
expression is the branch its condition picks; with numbers, where the lanes' indices
decide it, both, each under its condition.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import sympy

from mcl.mcpl import ast
from mcl.mcpl.printer import print_expr

#: Built-in functions that compute (one operation each in the statistics).
MATH_FUNCTIONS = frozenset({
    "sqrt", "exp", "log", "sin", "cos", "tan", "fabs", "abs", "min", "max", "pow",
    "floor", "ceil", "rsqrt", "erf", "tanh", "atan", "asin", "acos", "fma", "mad",
})


@lru_cache(maxsize=4096)
def var_symbol(name: str) -> sympy.Symbol:
    """The sympy symbol of an MCPL name (an integer; loop indices may be 0)."""
    return sympy.Symbol(name, integer=True)


@lru_cache(maxsize=4096)
def size_symbol(name: str) -> sympy.Symbol:
    """The sympy symbol of a size parameter (a positive integer)."""
    return sympy.Symbol(name, integer=True, positive=True)


class Unpredictable(Exception):
    """An expression depends on data (an array element) or on a variable assigned
    more than once: its value cannot be known before the kernel runs."""

    def __init__(self, why: str):
        super().__init__(why)
        self.why = why


@dataclass(eq=False)
class Loop:
    """A foreach, for or while loop with what the analyses need to know about it."""

    node: ast.Stmt
    kind: str                         # "foreach" | "for" | "while"
    var: str | None                   # the index variable
    start: sympy.Expr | None = None
    step: sympy.Expr | None = None
    trips: sympy.Expr | None = None   # number of iterations (None: unknown)
    group: Any = None                 # mcl.hdl ParGroup of a foreach
    approximate: bool = False         # the trip count is an estimate / upper bound
    depends: frozenset[str] = frozenset()   # loop variables its range depends on
    size_text: str = ""               # the size as written (`nrThreadsM`, `n`)
    bound: sympy.Expr | None = None   # the exclusive bound of `var < bound` (for loops)
    #: the units' average number of iterations where ``trips`` is the first unit's
    #: (a grid-stride loop with numbers: 248.2 rounds on average, 249 for the first
    #: thread, whose rounds a warp's lanes wait for); totals count the average
    mean: sympy.Expr | None = None
    #: the index's values, in order, of a loop that multiplies or divides it (``s >>=
    #: 1``: a reduction's tree) where its start and bound are numbers; ``trips`` is
    #: their count and ``step`` None
    values: tuple[int, ...] | None = None
    #: the value at which a loop that multiplies or divides its index leaves it while its
    #: condition holds (``s >>= 0``, 0 doubled): the loop never ends (``trips`` None)
    stuck: int | None = None
    #: a foreach's count where it evaluates below zero at the kernel's sizes (``trips``
    #: is then 0: no unit starts)
    negative: int | None = None

    @property
    def constant_step(self) -> sympy.Expr | None:
        """What the index adds each iteration: the step, 1 where the loop gives none (a
        while loop's or an unknown update, as the analyses count it); None for a loop
        that multiplies or divides its index (``values``), which adds no constant."""
        if self.values is not None:
            return None
        return self.step if self.step is not None else sympy.Integer(1)

    def index_values(self, limit: int | None = None) -> list[int] | None:
        """The first ``limit`` (all) values the index takes where they are numbers: a
        counted loop's start, start + step, ..., or a geometric loop's ``values``."""
        if self.values is not None:
            return list(self.values[:limit])
        if not all(isinstance(v, sympy.Integer) for v in (self.start, self.step, self.trips)):
            return None
        n = max(0, int(self.trips))
        return [int(self.start) + int(self.step) * i
                for i in range(n if limit is None else min(n, limit))]

    @property
    def symbol(self) -> sympy.Symbol | None:
        return var_symbol(self.var) if self.var else None

    @property
    def label(self) -> str:
        """How a message names the loop: `the nrThreadsM threads tj`, `loop k`."""
        if self.kind == "foreach":
            return f"the {self.size_text} {self.node.group} {self.var}"
        return f"loop {self.var}" if self.var else "the while loop"


@dataclass(frozen=True)
class Condition:
    """An ``if`` around an access: the condition under which the access runs (the
    negation in the else branch), and how many loops are around the ``if``."""

    expr: sympy.Basic | None      # None: it depends on data or cannot be computed
    depth: int
    #: False where ``expr`` is only the terms of a ``&&`` that can be computed
    whole: bool = True


@dataclass(eq=False)
class Access:
    """One array element read or written: ``a[i, k]``."""

    node: ast.Index
    name: str                                   # the array (or view) name
    symbol: Any                                 # mcl.mcpl Symbol of the array
    space: str | None
    element_bytes: int
    indices: tuple[sympy.Expr | None, ...]      # one per dimension (all tile levels)
    sizes: tuple[sympy.Expr | None, ...]        # the extent of each dimension
    offset: sympy.Expr | None                   # flat element offset (None: unknown)
    write: bool
    loops: tuple[Loop, ...]
    guarded: bool                               # inside an if (counts are upper bounds)
    why_unpredictable: str | None = None
    #: the loop variables each index depends on, directly or through a loop's range
    depends: frozenset[str] = frozenset()
    #: the ifs around it, outermost first
    conditions: tuple[Condition, ...] = ()

    @property
    def text(self) -> str:
        return print_expr(self.node)

    @property
    def predictable(self) -> bool:
        return self.why_unpredictable is None


@dataclass(eq=False)
class OpSite:
    """Operations written at one place: ``kind`` is "compute", "index" or "control"."""

    node: ast.Node
    kind: str
    count: int
    loops: tuple[Loop, ...]
    guarded: bool
    name: str = ""      # the operator or function
    #: the ifs around it, outermost first
    conditions: tuple[Condition, ...] = ()


@dataclass(eq=False)
class CallSite:
    node: ast.Call
    callee: Any          # FunctionInfo
    loops: tuple[Loop, ...]
    guarded: bool


@dataclass(eq=False)
class AtomicSite:
    """A call of the built-in atomicAdd or of a function of lib.atomics: a
    read-modify-write that the hardware serialises per element."""

    node: ast.Call
    name: str
    target: Access | None       # the element updated (None: not an array element)
    loops: tuple[Loop, ...]
    guarded: bool
    pinned: frozenset[str] = frozenset()   # loop variables an enclosing if fixes (tid == 0)


@dataclass(eq=False)
class LocalDecl:
    """A declaration inside the function body, with the loops around it."""

    node: ast.Declaration
    symbol: Any
    space: str | None
    element_bytes: int
    elements: sympy.Expr | None
    loops: tuple[Loop, ...]


@dataclass(eq=False)
class Kernel:
    """Everything recorded about one function (see the module docstring)."""

    function: ast.Function
    checked: Any
    hardware: Any
    values: dict[str, int]
    numeric: bool
    loops: list[Loop] = field(default_factory=list)
    accesses: list[Access] = field(default_factory=list)
    ops: list[OpSite] = field(default_factory=list)
    calls: list[CallSite] = field(default_factory=list)
    atomics: list[AtomicSite] = field(default_factory=list)
    decls: list[LocalDecl] = field(default_factory=list)
    imprecisions: list[tuple[ast.Node, str]] = field(default_factory=list)
    #: symbols still free after substitution that a number would need
    missing: set[str] = field(default_factory=set)
    #: built with every const integer parameter a compile-time size (generate's
    #: ``specialize``, as ``mcl run`` builds a version written for its sizes)
    specialized: bool = False

    def executions(self, loops: tuple[Loop, ...],
                   mean: bool = False) -> tuple[sympy.Expr, bool]:
        """How often code inside ``loops`` runs, and whether that is an upper bound
        (loops whose number of iterations is unknown count as ``iterations_<var>``).
        ``mean``: a loop whose units go round it unequally often at their average
        (a total over all units) instead of the first unit's count (what one warp
        waits for)."""
        total: sympy.Expr = sympy.Integer(1)
        approx = False
        for lp in loops:
            if lp.trips is None:
                # exact in terms of an unknown count (stated as an imprecision), not a bound
                total = total * sympy.Symbol(f"iterations_{lp.var or 'while'}",
                                             integer=True, positive=True)
            else:
                total = total * (lp.mean if mean and lp.mean is not None else lp.trips)
                approx = approx or lp.approximate
        return total, approx

    def foreach_loops(self) -> list[Loop]:
        return [lp for lp in self.loops if lp.kind == "foreach"]

    def params(self) -> list[ast.Param]:
        return list(self.function.params)


# --------------------------------------------------------------------------- building


def element_bytes(t: ast.Type, checked: Any = None) -> int:
    """Bytes of one element of a type (records: the sum of their fields)."""
    size = ast.PRIMITIVE_TYPES.get(t.name)
    if size is not None:
        return size
    td = checked.types.get(t.name) if checked is not None else None
    if td is not None:
        return sum(element_bytes(f.type, checked) for f in td.fields) or 4
    return 4


def scalar_parameters(module: ast.Module) -> list[str]:
    """The names of the scalar parameters of the functions of ``module``, in order, each
    once: the names ``values`` may give."""
    return list(dict.fromkeys(p.name for f in module.functions for p in f.params
                              if not p.type.is_array))


def values_of(module: ast.Module, values: Mapping[str, int] | None) -> dict[str, int]:
    """The entries of ``values`` that name a scalar parameter of ``module`` (another
    file's sizes, or the settings of a kernel's inputs, left out)."""
    names = set(scalar_parameters(module))
    return {k: v for k, v in (values or {}).items() if k in names}


def parameter_values(function: ast.Function, values: Mapping[str, int] | None,
                     defaults: bool = True) -> dict[str, int]:
    """The numbers to use: parameter defaults (example values) overridden by ``values``."""
    out: dict[str, int] = {}
    if defaults:
        for p in function.params:
            if p.default is not None and not p.type.is_array:
                v = _literal_number(p.default)
                if v is not None:
                    out[p.name] = v
    for k, v in (values or {}).items():
        out[k] = v
    return out


def _literal_number(e: ast.Expr) -> int | float | None:
    if isinstance(e, ast.Literal) and e.kind in ("int", "float"):
        return e.value
    if isinstance(e, ast.Unary) and e.op == "-":
        v = _literal_number(e.operand)
        return -v if v is not None else None
    return None


def iter_functions(checked: Any) -> Iterator[ast.Function]:
    """The functions of the module itself (not those of imports)."""
    yield from checked.module.functions


def once_per_kernel(f):
    """``f(k)`` computed once per kernel model ``k`` (kept while the model lives); the
    analyses that ask for the same figure of a model several times share it, so
    callers must not change what it returns."""
    cache: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    @functools.wraps(f)
    def wrapper(k: Kernel):
        if k not in cache:
            cache[k] = f(k)
        return cache[k]
    return wrapper
