"""Building the kernel model (mcl.analyses.kernel): one walk over a checked function
that records its loops with their trip counts, its array accesses with their index
expressions, its operations, calls, atomics and local declarations.

The walk is a small interpreter of just the statements the indices need (paper
section 6.5): a local scalar defined once is replaced by its definition
(``KernelBuilder.sym``); one read from an array or assigned several times is
unpredictable, and what uses it is marked so instead of being guessed."""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

import sympy

from mcl.analyses.kernel import (
    MATH_FUNCTIONS,
    Access,
    AtomicSite,
    CallSite,
    Condition,
    Kernel,
    LocalDecl,
    Loop,
    OpSite,
    Unpredictable,
    element_bytes,
    size_symbol,
    var_symbol,
)
from mcl.analyses.kernel_syntax import (
    _assigned_symbols,
    _bound_of,
    _step_of,
    _written_arg,
    assigned_names,
    at_first_units,
    comparison,
    flat_offset,
    geometric_stuck,
    geometric_update,
    geometric_values,
    named_depends,
)
from mcl.analyses.values import simplified
from mcl.mcpl import ast
from mcl.mcpl.printer import print_expr, print_statement

_INT_TYPES = ("int", "long", "bool", "byte")


class _Truth:
    """What a ``bool`` scalar that is never assigned again holds, as its initialiser's
    condition (``bool more = l + 1 < nrPhases;``): ``if (more)`` is that condition, as
    if it were written there. In arithmetic the variable stays unpredictable."""

    def __init__(self, cond: sympy.Basic):
        self.cond = cond


#: at most this many combinations of foreach indices are walked for a loop's average
#: number of iterations (KernelBuilder.mean_trips)
_MEAN_UNITS = 4096
_RELATIONS = {"<": sympy.Lt, "<=": sympy.Le, ">": sympy.Gt, ">=": sympy.Ge,
              "==": sympy.Eq, "!=": sympy.Ne}


def build_kernel(function: ast.Function, checked: Any, values: Mapping[str, int] | None,
                 hardware: Any = None, specialized: bool = False) -> Kernel:
    """Walk ``function`` and record its loops, accesses and operations.

    ``values``: numbers for parameters (None: fully symbolic). ``specialized``: the
    generated code is built with its sizes as compile-time constants."""
    hw = hardware if hardware is not None else (
        checked.hardware_of(function) if checked is not None else None)
    k = Kernel(function, checked, hw, dict(values or {}), numeric=bool(values),
               specialized=specialized)
    KernelBuilder(k).run()
    return k


def _rounds(a: sympy.Expr, b: int) -> bool:
    """Whether ``a / b`` rounds a size: ``(m + T - 1) / T``, a sum whose constant term
    ``b`` does not divide, where the sizes themselves are taken to divide."""
    const, _ = sympy.sympify(a).as_coeff_Add()
    return bool(const.is_Integer and const != 0 and int(const) % b != 0
                and sympy.sympify(a).free_symbols)


class KernelBuilder:
    """The walk: ``run`` fills the kernel model it was given."""

    def __init__(self, k: Kernel):
        self.k = k
        self.checked = k.checked
        self.scopes: list[dict[str, Any]] = [{}]
        self.loops: list[Loop] = []
        self.guard = 0
        #: per enclosing if: the loop variables its condition fixes to one value
        self.pinned: list[frozenset[str]] = []
        #: the enclosing ifs' conditions (mcl.analyses.sectors evaluates them per lane)
        self.conditions: list[Condition] = []
        self.assigned = assigned_names(k.function)
        #: the declarations (their symbols) that an assignment or ++/-- changes: two
        #: declarations of one name in different scopes are different variables
        self.assigned_symbols = _assigned_symbols(k.function, k.checked)
        self.loop_vars: dict[str, Loop] = {}

    # ---- names and values

    def lookup(self, name: str) -> Any:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return None

    def bind(self, name: str, value: Any) -> None:
        self.scopes[-1][name] = value

    def run(self) -> None:
        for p in self.k.function.params:
            if p.type.is_array:
                self.bind(p.name, ("array", p))
            elif p.name in self.k.values:
                self.bind(p.name, sympy.Integer(int(self.k.values[p.name]))
                          if float(self.k.values[p.name]).is_integer()
                          else sympy.nsimplify(self.k.values[p.name]))
            elif self.is_assigned(p):
                self.bind(p.name, Unpredictable(f"parameter '{p.name}' is assigned"))
            else:
                self.bind(p.name, size_symbol(p.name))
        self.block(self.k.function.body)

    def pinned_by(self, cond: ast.Expr) -> frozenset[str]:
        """The loop variables a condition fixes to one value: ``tid == 0`` (with
        ``tid = w * 32 + t``: w and t, as loop indices are not negative), ``j == 3``,
        and the terms of ``&&``."""
        if isinstance(cond, ast.Binary) and cond.op == "&&":
            return self.pinned_by(cond.left) | self.pinned_by(cond.right)
        if not (isinstance(cond, ast.Binary) and cond.op == "=="):
            return frozenset()
        try:
            d = sympy.expand(self.sym(cond.left) - self.sym(cond.right))
        except Unpredictable:
            return frozenset()
        loop_syms = [x for x in d.free_symbols if x.name in self.loop_vars]
        if len(loop_syms) != len(d.free_symbols) or not loop_syms:
            return frozenset()
        poly = sympy.Poly(d, *loop_syms) if d.is_polynomial(*loop_syms) else None
        if poly is None or poly.total_degree() != 1:
            return frozenset()
        coeffs = [poly.coeff_monomial(x) for x in loop_syms]
        if len(loop_syms) == 1 or (poly.coeff_monomial(1) == 0 and
                                   (all(c > 0 for c in coeffs) or all(c < 0 for c in coeffs))):
            return frozenset(x.name for x in loop_syms)
        return frozenset()

    def _divide(self, a: sympy.Expr, b: sympy.Expr) -> sympy.Expr:
        """``a / b`` in C: a quotient of loop indices by a positive constant is
        rounded down (``t / 16`` is the row of thread t; indices are not negative),
        so that evaluating lanes gives the addresses the hardware sees, and so is one
        by a divisor that loop indices choose (``(bid % 128) / rows`` with ``rows =
        min(nrBlocksN - firstRow, 8)``); sizes divide exactly (array shapes in MCPL
        are written so that they divide)."""
        if any(x.name in self.loop_vars for x in a.free_symbols) and (
                (b.is_Integer and b > 0) or
                any(x.name in self.loop_vars for x in b.free_symbols)):
            return sympy.floor(a / b)
        if b.is_Integer and b > 1 and _rounds(a, int(b)):
            return sympy.floor(a / b)
        return a / b

    def sym(self, e: ast.Expr) -> sympy.Expr:
        """``e`` as a sympy expression; raises Unpredictable."""
        if isinstance(e, ast.Literal):
            if e.kind == "bool":
                return sympy.Integer(1 if e.value else 0)
            if e.kind == "int":
                return sympy.Integer(e.value)
            return sympy.Float(e.value)
        if isinstance(e, ast.Name):
            v = self.lookup(e.id)
            if isinstance(v, Unpredictable):
                raise v
            if isinstance(v, _Truth):
                raise Unpredictable(f"'{e.id}' is a condition")
            if isinstance(v, sympy.Basic):
                return v
            if isinstance(v, tuple):
                raise Unpredictable(f"'{e.id}' is an array")
            # undeclared here (a global constant of an import, ...): keep it symbolic
            return size_symbol(e.id)
        if isinstance(e, ast.HwdRef):
            return self.hwd_value(e)
        if isinstance(e, ast.Unary):
            inner = self.sym(e.operand)
            if e.op == "-":
                return -inner
            if e.op == "+":
                return inner
            raise Unpredictable(f"'{print_expr(e)}' is not arithmetic")
        if isinstance(e, ast.Cast):
            return self.sym(e.operand)
        if isinstance(e, ast.Binary) and e.op in ("+", "-", "*", "/", "%"):
            a, b = self.sym(e.left), self.sym(e.right)
            if e.op == "+":
                return a + b
            if e.op == "-":
                return a - b
            if e.op == "*":
                return a * b
            if b == 0:
                raise Unpredictable(f"division by zero in '{print_expr(e)}'")
            if e.op == "/":
                if a.is_Integer and b.is_Integer:
                    q = abs(int(a)) // abs(int(b))
                    return sympy.Integer(q if (a >= 0) == (b > 0) else -q)
                return self._divide(a, b)
            if a.is_Integer and b.is_Integer:
                return sympy.Integer(int(a) % int(b))
            return sympy.Mod(a, b)
        if isinstance(e, ast.Binary) and e.op in ("<<", ">>"):
            a, b = self.sym(e.left), self.sym(e.right)
            return a * 2 ** b if e.op == "<<" else self._divide(a, 2 ** b)
        if isinstance(e, ast.Ternary):
            # `j0 + 32 <= m ? rows / x : 0`: the branch the condition picks, where it is
            # decided; with numbers, both, each under its condition, which the lanes'
            # indices decide (formulas keep such a value a symbol of its own)
            cond = self.condition(e.cond)
            if cond is None or (cond not in (sympy.true, sympy.false)
                                and not self.k.numeric):
                raise Unpredictable(f"'{print_expr(e.cond)}' is not known before the "
                                    "kernel runs")
            a, b = self.sym(e.then), self.sym(e.orelse)
            if cond is sympy.true:
                return a
            if cond is sympy.false:
                return b
            return sympy.Piecewise((a, cond), (b, True))
        if isinstance(e, ast.Call) and e.func in ("min", "max") and len(e.args) == 2:
            a, b = self.sym(e.args[0]), self.sym(e.args[1])
            return sympy.Min(a, b) if e.func == "min" else sympy.Max(a, b)
        if isinstance(e, ast.Index):
            raise Unpredictable(f"'{print_expr(e)}' is read from memory")
        raise Unpredictable(f"'{print_expr(e)}' cannot be computed before the kernel runs")

    def condition(self, e: ast.Expr) -> sympy.Basic | None:
        """A condition as a sympy boolean (C: a number is true when not 0), or None
        where a part of it depends on data or cannot be computed."""
        try:
            if isinstance(e, ast.Name) and isinstance(self.lookup(e.id), _Truth):
                return self.lookup(e.id).cond
            if isinstance(e, ast.Binary) and e.op in _RELATIONS:
                return _RELATIONS[e.op](self.sym(e.left), self.sym(e.right))
            if isinstance(e, ast.Binary) and e.op in ("&&", "||"):
                a, b = self.condition(e.left), self.condition(e.right)
                if a is None or b is None:
                    return None
                return sympy.And(a, b) if e.op == "&&" else sympy.Or(a, b)
            if isinstance(e, ast.Unary) and e.op == "!":
                a = self.condition(e.operand)
                return None if a is None else sympy.Not(a)
            return sympy.Ne(self.sym(e), 0)
        except (Unpredictable, TypeError):
            return None

    def known_terms(self, e: ast.Expr) -> sympy.Basic | None:
        """The terms of a ``&&`` chain that can be computed (each is necessary)."""
        if isinstance(e, ast.Binary) and e.op == "&&":
            terms = [t for t in (self.known_terms(e.left), self.known_terms(e.right))
                     if t is not None]
            return sympy.And(*terms) if terms else None
        return self.condition(e)

    def try_sym(self, e: ast.Expr | None) -> sympy.Expr | None:
        if e is None:
            return None
        try:
            return self.sym(e)
        except Unpredictable:
            return None

    def hwd_value(self, e: ast.HwdRef) -> sympy.Expr:
        hw = self.k.hardware
        if self.checked is not None:
            hw = self.checked.hardware.get(e.path[0], hw)
        if hw is None:
            raise Unpredictable(f"'{print_expr(e)}' needs its hardware description")
        try:
            v = hw.resolve_property(e.path)
        except Exception as exc:  # an unknown path is reported by mcl check
            raise Unpredictable(f"'{print_expr(e)}' is not a property") from exc
        if isinstance(v, bool) or not isinstance(v, int | float):
            raise Unpredictable(f"'{print_expr(e)}' is not a number ({v})")
        return sympy.Integer(int(v)) if float(v).is_integer() else sympy.Float(v)

    def depends_of(self, expr: sympy.Expr | None) -> frozenset[str]:
        """Loop variables ``expr`` depends on, also through loop ranges."""
        if expr is None:
            return frozenset()
        out: set[str] = set()
        todo = [s.name for s in expr.free_symbols]
        while todo:
            name = todo.pop()
            if name in out:
                continue
            lp = self.loop_vars.get(name)
            if lp is None:
                continue
            out.add(name)
            todo.extend(lp.depends)
        return frozenset(out)

    # ---- statements

    def block(self, b: ast.Stmt) -> None:
        self.scopes.append({})
        exits = 0
        for s in b.statements if isinstance(b, ast.Block) else (b,):
            self.stmt(s)
            if isinstance(s, ast.If) and s.orelse is None and _leaves(s.then):
                # `if (i >= n) return;`: the rest of the block runs where it does not hold
                full = self.condition(s.cond)
                self.guard += 1
                self.pinned.append(frozenset())
                self.conditions.append(Condition(None if full is None else sympy.Not(full),
                                                 len(self.loops)))
                exits += 1
        for _ in range(exits):
            self.conditions.pop()
            self.pinned.pop()
            self.guard -= 1
        self.scopes.pop()

    def stmt(self, s: ast.Stmt) -> None:
        if isinstance(s, ast.Block):
            self.block(s)
        elif isinstance(s, ast.Declaration):
            self.declaration(s)
        elif isinstance(s, ast.Assign):
            self.assign(s)
        elif isinstance(s, ast.IncDec):
            self.target(s.target, read_too=True)
            self.op(s, "index" if self.is_int_scalar(s.target) else "compute", s.op)
        elif isinstance(s, ast.ExprStmt):
            self.expr(s.expr, "compute")
        elif isinstance(s, ast.Return):
            if s.value is not None:
                self.expr(s.value, "compute")
        elif isinstance(s, ast.If):
            self.expr(s.cond, "control")
            self.guard += 1
            self.pinned.append(self.pinned_by(s.cond))
            full = self.condition(s.cond)
            then = full if full is not None else self.known_terms(s.cond)
            self.conditions.append(Condition(then, len(self.loops), full is not None))
            self.block(s.then)
            self.pinned[-1] = frozenset()
            self.conditions[-1] = Condition(None if full is None else sympy.Not(full),
                                            len(self.loops))
            if s.orelse is not None:
                self.block(s.orelse)
            self.conditions.pop()
            self.pinned.pop()
            self.guard -= 1
        elif isinstance(s, ast.For):
            self.for_(s)
        elif isinstance(s, ast.While):
            self.expr(s.cond, "control")
            lp = Loop(s, "while", None, approximate=True)
            self.k.imprecisions.append((s, "a while loop runs an unknown number of times"))
            self.enter(lp, s.body)
        elif isinstance(s, ast.ForEach):
            self.foreach(s)
        elif isinstance(s, ast.AsStatement):
            for v in s.views:
                self.bind(v.name, ("array", v))
        # Barrier, Break, Continue: nothing to count

    def enter(self, lp: Loop, body: ast.Stmt) -> None:
        self.k.loops.append(lp)
        self.loops.append(lp)
        self.scopes.append({})
        if lp.var:
            self.bind(lp.var, var_symbol(lp.var))
            self.loop_vars[lp.var] = lp
        self.block(body)
        self.scopes.pop()
        self.loops.pop()

    def foreach(self, s: ast.ForEach) -> None:
        trips = self.try_sym(s.size)
        negative = None
        if trips is not None and trips.is_Integer and trips < 0:
            # a count below zero at these sizes starts no unit, as a count of 0
            # (validity.empty_grids warns of it)
            negative, trips = int(trips), sympy.Integer(0)
        group = self.checked.par_group_of(s) if self.checked is not None else None
        lp = Loop(s, "foreach", s.var.name, sympy.Integer(0), sympy.Integer(1), trips, group,
                  trips is None, size_text=print_expr(s.size), negative=negative)
        if trips is None:
            self.k.imprecisions.append((s.size, f"the number of units '{print_expr(s.size)}' "
                                                "is not known before the kernel runs"))
        self.enter(lp, s.body)

    def mean_trips(self, span: sympy.Expr, step: sympy.Expr) -> sympy.Expr | None:
        """The units' average number of iterations of a loop whose range ``span``
        depends on foreach indices (``t < 32 ? 4 : 2``), counted over all of them where
        they are few (``_MEAN_UNITS``); None otherwise, or where another loop's index
        or a size without a number takes part."""
        if not (step.is_Integer and step > 0):
            return None
        loops = [self.loop_vars.get(x.name) for x in span.free_symbols]
        if any(lp is None or lp.kind != "foreach" or not getattr(lp.trips, "is_Integer",
                                                                  False)
               for lp in loops):
            return None
        total = 1
        for lp in loops:
            total *= int(lp.trips)
        if not 0 < total <= _MEAN_UNITS:
            return None
        symbols = [lp.symbol for lp in loops]
        try:
            f = sympy.lambdify(symbols, span, modules="math")
            rounds = sum(max(0, -(-int(f(*at)) // int(step)))
                         for at in itertools.product(*(range(int(lp.trips))
                                                       for lp in loops)))
        except (TypeError, ValueError, ArithmeticError, NameError, AttributeError):
            return None     # not a number at some unit (a division by an index that is 0)
        return sympy.Rational(rounds, total)

    def for_(self, s: ast.For) -> None:
        var, start = None, None
        self.scopes.append({})
        if isinstance(s.init, ast.Declaration):
            var = s.init.name
            start = self.try_sym(s.init.init) if s.init.init is not None else None
            if s.init.init is not None:
                self.expr(s.init.init, "index")
        elif isinstance(s.init, ast.Assign) and isinstance(s.init.target, ast.Name):
            var = s.init.target.id
            start = self.try_sym(s.init.value)
            self.expr(s.init.value, "index")
        step = _step_of(s.update, var, self)
        bound, approx = None, False
        if s.cond is not None:
            bound, approx = _bound_of(s.cond, var, self)
        trips = mean = None
        if start is not None and step is not None and bound is not None and step != 0:
            span = bound - start
            # Iterations counted as if every unit started where the first one does
            # (k = tj; k < p; k += T runs p/T times on average over tj).
            by_units = any(sym.name in self.loop_vars for sym in span.free_symbols)
            if by_units:
                mean = self.mean_trips(span, step)
                span = at_first_units(span, self.loop_vars)
                approx = True
            if span is None:
                pass    # the range divides by an outer index that starts at 0
            elif span.is_Integer and step.is_Integer:
                trips = sympy.Integer(max(0, -(-int(span) // int(step))))
                if by_units and mean is None and span > 0 and step > 0:
                    # the first unit's rounds, rounded up; on average the span's share
                    # (a grid-stride loop: n / stride)
                    mean = sympy.Rational(int(span), int(step))
            else:
                trips = simplified(span / step)
        compared = comparison(s.cond, var)
        course = _course(compared, bound - start, step) if trips is not None else None
        endless = course == "endless"
        if endless:
            trips = None    # not 0: its condition holds from the start, and it never ends
        elif course == "never":
            trips = sympy.Integer(0)   # whichever way it steps (5; < 2; --: not 3)
        values = stuck = None
        geometric = geometric_update(s.update, var) if step is None else None
        if geometric is not None and compared is not None and \
                all(isinstance(x, sympy.Integer) for x in (start, bound)):
            # a tree's halving (s >>= 1) or a scan's doubling (offset *= 2) to a
            # number: its values, run as written
            found = geometric_values(geometric, compared[0], int(start), int(bound))
            if found is not None:
                values = tuple(found)
                trips = sympy.Integer(len(values))
            else:
                stuck = geometric_stuck(geometric, compared[0], int(start), int(bound))
        if trips is None:
            approx = True
            if stuck is not None:
                update = print_statement(s.update).strip().rstrip(";")
                why = (f"loop '{var}' never ends: its update ({update}) leaves its index at "
                       f"{stuck}, where its condition holds")
            elif isinstance(s.update, ast.Assign) and (
                    s.update.op in ("*=", "/=", "<<=", ">>=") or (
                        s.update.op == "=" and isinstance(s.update.value, ast.Binary)
                        and s.update.value.op in ("*", "/", "<<", ">>"))):
                update = print_statement(s.update).strip().rstrip(";")
                why = (f"loop '{var}' multiplies or divides its index ({update}), which the "
                       "counts do not follow: its iterations stay a symbol")
            elif endless:
                why = (f"loop '{var}' never ends: its step moves it away from the bound its "
                       "condition holds from the start")
            else:
                why = f"the number of iterations of loop '{var or '?'}' is not known statically"
            self.k.imprecisions.append((s, why))
        deps = self.depends_of(start) | self.depends_of(step) | self.depends_of(bound)
        if start is None or bound is None:
            # a range read from data still depends on the loops its indices name
            deps |= named_depends(s.init, self) | named_depends(s.cond, self)
        lp = Loop(s, "for", var, start, step, trips, None, approx, deps,
                  size_text=str(trips) if trips is not None else "?", bound=bound,
                  mean=mean, values=values, stuck=stuck)
        if s.cond is not None:
            # the condition and the update run once per iteration
            lp_ops_loops = tuple(self.loops) + (lp,)
            for n in ast.walk(s.cond):
                if isinstance(n, ast.Binary):
                    self.k.ops.append(OpSite(n, "control", 1, lp_ops_loops, self.guard > 0,
                                             n.op, tuple(self.conditions)))
            if s.update is not None:
                self.k.ops.append(OpSite(s.update, "control", 1, lp_ops_loops,
                                         self.guard > 0, "update", tuple(self.conditions)))
        self.enter(lp, s.body)
        self.scopes.pop()

    def declaration(self, d: ast.Declaration) -> None:
        sym = self.checked.symbol(d) if self.checked is not None else None
        if d.type.is_array:
            self.bind(d.name, ("array", d))
            for v in d.views:
                self.bind(v.name, ("array", v))
            elems = 1
            try:
                elems = sympy.Integer(1)
                for size in d.type.sizes:
                    elems = elems * self.sym(size)
            except Unpredictable:
                elems = None
            space = sym.space if sym is not None else d.space
            self.k.decls.append(LocalDecl(d, sym, space, element_bytes(d.type, self.checked),
                                          elems, tuple(self.loops)))
            return
        space = sym.space if sym is not None else d.space
        self.k.decls.append(LocalDecl(d, sym, space, element_bytes(d.type, self.checked),
                                      sympy.Integer(1), tuple(self.loops)))
        if d.init is not None:
            kind = "index" if d.type.name in _INT_TYPES else "compute"
            self.expr(d.init, kind)
        if self.is_assigned(d) or d.init is None:
            self.bind(d.name, Unpredictable(f"'{d.name}' is assigned in the kernel"))
        elif d.type.name == "bool":
            cond = self.condition(d.init)
            self.bind(d.name, _Truth(cond) if cond is not None else
                      Unpredictable(f"'{d.name}' depends on data"))
        else:
            try:
                self.bind(d.name, self.sym(d.init))
            except Unpredictable as u:
                self.bind(d.name, u)

    def is_assigned(self, d: ast.Declaration | ast.Param) -> bool:
        """Whether an assignment or ++/-- changes the variable ``d`` declares (by its
        name where the module was not resolved)."""
        if self.assigned_symbols is None:
            return d.name in self.assigned
        sym = self.checked.symbol(d)
        return d.name in self.assigned if sym is None else id(sym) in self.assigned_symbols

    def assign(self, s: ast.Assign) -> None:
        int_scalar = self.is_int_scalar(s.target)
        kind = "index" if int_scalar else "compute"
        self.expr(s.value, kind)
        self.target(s.target, read_too=s.op != "=")
        if s.op != "=":
            self.op(s, kind, s.op)

    def is_int_scalar(self, target: ast.Expr) -> bool:
        if not isinstance(target, ast.Name):
            return False
        sym = self.checked.declaration_of(target) if self.checked is not None else None
        return sym is not None and not sym.type.is_array and sym.type.name in _INT_TYPES

    def target(self, t: ast.Expr, read_too: bool) -> None:
        if isinstance(t, ast.Index):
            if read_too:
                self.access(t, write=False)
            self.access(t, write=True)
        elif isinstance(t, ast.Field):
            self.target(t.base, read_too)

    def op(self, node: ast.Node, kind: str, name: str) -> None:
        self.k.ops.append(OpSite(node, kind, 1, tuple(self.loops), self.guard > 0, name,
                                 tuple(self.conditions)))

    def expr(self, e: ast.Expr, kind: str) -> None:
        """Record the operations and accesses of an expression evaluated here."""
        if isinstance(e, ast.Index):
            self.access(e, write=False)
            return
        if isinstance(e, ast.Binary):
            k = kind
            if e.op in ("<", "<=", ">", ">=", "==", "!=", "&&", "||"):
                k = "control" if kind != "compute" else kind
            self.op(e, k, e.op)
            self.expr(e.left, kind)
            self.expr(e.right, kind)
        elif isinstance(e, ast.Unary):
            if e.op == "-":
                self.op(e, kind, e.op)
            self.expr(e.operand, kind)
        elif isinstance(e, ast.Ternary):
            self.expr(e.cond, "control")
            self.expr(e.then, kind)
            self.expr(e.orelse, kind)
        elif isinstance(e, ast.Cast):
            self.expr(e.operand, kind)
        elif isinstance(e, ast.Field):
            self.expr(e.base, kind)
        elif isinstance(e, ast.Call):
            callee = self.checked.callee(e) if self.checked is not None else None
            if callee is not None:
                self.k.calls.append(CallSite(e, callee, tuple(self.loops), self.guard > 0))
            elif e.func in MATH_FUNCTIONS:
                self.op(e, kind, e.func)
            elif e.func == "atomicAdd":   # built in (lib.atomics' others have bodies)
                self.op(e, kind, "+")
            for a in e.args:
                if isinstance(a, ast.Index) and callee is not None and \
                        _written_arg(callee, e, a):
                    self.access(a, write=False)
                    self.access(a, write=True)
                else:
                    self.expr(a, kind)
            if e.func == "atomicAdd" or (callee is not None and callee.module == "atomics"
                                         and callee.is_library):
                target = e.args[0] if e.args else None
                acc = next((x for x in reversed(self.k.accesses) if x.node is target), None)
                self.k.atomics.append(AtomicSite(e, e.func, acc, tuple(self.loops),
                                                 self.guard > 0,
                                                 frozenset().union(*self.pinned)))

    def access(self, e: ast.Index, write: bool) -> None:
        base = e.base
        while isinstance(base, ast.Index):
            base = base.base
        if not isinstance(base, ast.Name):
            self.k.imprecisions.append((e, f"'{print_expr(e)}' is not an array access the "
                                           "analyses understand"))
            return
        sym = self.checked.declaration_of(base) if self.checked is not None else None
        decl = self.lookup(base.id)
        t = sym.type if sym is not None else (decl[1].type if isinstance(decl, tuple) else None)
        if t is None or not t.is_array:
            return
        # indices are evaluated here: their arithmetic is indexing overhead
        indices_ast: list[ast.Expr] = []
        node: ast.Expr = e
        groups: list[tuple[ast.Expr, ...]] = []
        while isinstance(node, ast.Index):
            groups.insert(0, node.groups_flat if hasattr(node, "groups_flat") else
                          tuple(i for g in node.groups for i in g))
            node = node.base
        for g in groups:
            indices_ast.extend(g)
        for ix in indices_ast:
            self.expr(ix, "index")
        indices: list[sympy.Expr | None] = []
        why = None
        for ix in indices_ast:
            try:
                indices.append(self.sym(ix))
            except Unpredictable as u:
                indices.append(None)
                why = why or u.why
        sizes: list[sympy.Expr | None] = [self.try_sym(s) for s in t.sizes]
        offset = flat_offset(t, indices, sizes)
        deps: frozenset[str] = frozenset()
        for ix in indices:
            deps |= self.depends_of(ix)
        self.k.accesses.append(Access(
            e, base.id, sym, sym.space if sym is not None else None,
            element_bytes(t, self.checked), tuple(indices), tuple(sizes), offset, write,
            tuple(self.loops), self.guard > 0, why, deps, tuple(self.conditions)))


def _leaves(b: ast.Stmt) -> bool:
    """Whether ``b`` always leaves the statements that follow it in its block: it ends
    in a return, break or continue (``if (i >= n) { return; }``)."""
    last = b.statements[-1] if isinstance(b, ast.Block) and b.statements else b
    if isinstance(last, ast.Block):
        return _leaves(last)
    return isinstance(last, ast.Return | ast.Break | ast.Continue)


def _course(compared, span: sympy.Expr, step: sympy.Expr) -> str | None:
    """How a counted loop runs where its count as ``span / step`` would be wrong:
    "never" where its condition (``compared``: its operator and bound) is false from
    the start (``span``, the exclusive bound less the start, 0 or less for ``i < n``),
    whichever way it steps; "endless" where the condition holds at the start and its
    steps move away from the bound (``i < n`` and ``i--``); None where the count holds
    or the signs are not known."""
    if compared is None or compared[0] not in ("<", "<=", ">", ">="):
        return None
    up = compared[0] in ("<", "<=")
    holds = span.is_positive if up else span.is_negative
    if holds is False:
        return "never"
    away = step.is_negative if up else step.is_positive
    return "endless" if holds and away else None
