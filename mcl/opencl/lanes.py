"""Foreach loops over vector lanes as loops inside one work-item.

A target may map a par_group to ``ids = "lanes"`` (cpu.target does): its foreach
loops do not become work-items; the work-item runs the lanes itself, and the
generator writes the loop over the lanes so that the OpenCL compiler's loop
vectoriser turns it into SIMD instructions. PoCL, for one, vectorises a loop over
adjacent elements inside a work-item well, but rarely the work-items of a group
when their body holds a loop (a matmul's k loop): 15 against 160 GFLOP/s on two
AVX-512 cores.

The body of a foreach over lanes runs for every lane; its statements are split
into

* *uniform* statements, the same in every lane: declarations and assignments of
  scalars that depend on nothing that differs between lanes, loops and ifs whose
  header or condition is uniform, barriers (the lanes of a work-item run one
  after the other, so a barrier among them needs no instruction);
* *runs* of the other statements, each emitted as ``for (v = 0; v < size; v++)``
  around the run, innermost, where the compiler can vectorise it.

A variable declared in a run and used after it keeps one value per lane: it
becomes an array with the lanes as its last (contiguous) dimension, ``x[v]``. A
scalar defined once from uniform values and the lane index (``int j = j0 + v;``)
is computed again in every run that uses it instead, so that accesses through it
stay visibly adjacent. Lanes are independent (they may only meet at barriers),
so running every run for all lanes before the next is the semantics of the
foreach. Pure functions: the loop is a plain C loop; nothing else is assumed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from mcl.diagnostics import McplError, error
from mcl.mcpl import ast
from mcl.mcpl.varying import PURE, Varying
from mcl.mcpl.varying import root as _root
from mcl.mcpl.varying import statements as _stmts


def _fail(code: str, message: str, node: ast.Node, hint: str | None = None) -> McplError:
    span = node.span if node.span.file != "<generated>" else None
    return McplError(error(code, message, span=span, hint=hint))


def lower(body: ast.Block, lane_groups: set[str], loops: set[int],
          arrays: set[int]) -> ast.Block:
    """``body`` with every foreach over a par_group of ``lane_groups`` replaced by
    uniform statements and lane loops; the ids of the generated lane loops are
    added to ``loops`` and those of the declarations of per-lane variables (the
    lanes their last dimension) to ``arrays``."""
    def rewrite(n: ast.Node) -> ast.Node | None:
        if isinstance(n, ast.ForEach) and n.group in lane_groups:
            return _Lowering(n, loops, arrays).block()
        return None
    return ast.transform(body, rewrite)


def _names_in(node: ast.Node | None) -> set[str]:
    if node is None:
        return set()
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


class _Lowering:
    def __init__(self, fe: ast.ForEach, loops: set[int], arrays: set[int]):
        self.fe = fe
        self.lane = fe.var.name
        self.loops = loops
        self.arrays = arrays
        for n in ast.walk(fe.body):
            if isinstance(n, ast.Return):
                raise _fail("opencl-lanes-return", f"a return inside a foreach over "
                            f"'{fe.group}', whose lanes one work-item runs in a loop", n,
                            "put the rest of the body under an if instead")
        self.body = _Renamer(fe).block(fe.body)
        self.declared: dict[str, ast.Declaration] = {}
        self.assigned: dict[str, int] = {}
        for n in ast.walk(self.body):
            if isinstance(n, ast.Declaration):
                self.declared[n.name] = n
            elif isinstance(n, ast.Assign | ast.IncDec):
                r = _root(n.target)
                if r is not None:
                    self.assigned[r] = self.assigned.get(r, 0) + 1
        # which values differ between lanes: the lane, its arrays, and what follows
        arrays = {name for name, d in self.declared.items() if d.type.is_array}
        self.varying = Varying(self.body, {self.lane} | arrays, own=arrays,
                               markable=self.declared)
        self.lane_scalars: set[str] = set()
        self.lane_arrays: set[str] = set()
        #: scalars computed again in each run that uses them, in declaration order
        self.remat: dict[str, ast.Declaration] = {}

    # ---- statements: uniform ones stay, the others go into lane loops

    def block(self) -> ast.Block:
        return ast.Block(tuple(self.build(_stmts(self.body))), span=self.fe.span)

    def build(self, stmts: Sequence[ast.Stmt]) -> list[ast.Stmt]:
        out: list[ast.Stmt] = []
        run: list[ast.Stmt] = []
        for k, s in enumerate(stmts):
            kind = self.classify(s)
            if kind == "run":
                run.append(s)
                continue
            self.flush(run, stmts[k:], out)
            if kind == "uniform":
                out.append(s)
            elif kind == "barrier":
                continue
            elif isinstance(s, ast.Block):
                out.append(dataclasses.replace(s, statements=tuple(self.build(s.statements))))
            elif isinstance(s, ast.If):
                then = ast.Block(tuple(self.build(_stmts(s.then))), span=s.then.span)
                orelse = None if s.orelse is None else ast.Block(
                    tuple(self.build(_stmts(s.orelse))), span=s.orelse.span)
                out.append(dataclasses.replace(s, then=then, orelse=orelse))
            else:   # a uniform loop
                out.append(dataclasses.replace(
                    s, body=ast.Block(tuple(self.build(_stmts(s.body))), span=s.body.span)))
        self.flush(run, (), out)
        return out

    def classify(self, s: ast.Stmt) -> str:
        v = self.varying
        if isinstance(s, ast.Declaration):
            return "run" if s.name in v else "uniform"
        if isinstance(s, ast.Assign | ast.IncDec):
            r = _root(s.target)
            local = r in self.declared and r not in v and isinstance(s.target, ast.Name)
            return "uniform" if local else "run"
        if isinstance(s, ast.Break | ast.Continue):
            return "uniform"
        if isinstance(s, ast.Barrier):
            return "barrier"
        if isinstance(s, ast.Block):
            return "block"
        if isinstance(s, ast.If) and not v.expr(s.cond):
            return "if"
        if isinstance(s, ast.For | ast.While) and not v.loop(s) \
                and not (isinstance(s, ast.For) and self.counter(s) in v):
            return "loop"
        for n in ast.walk(s):
            if isinstance(n, ast.Barrier):
                raise _fail("opencl-lanes-barrier", "a barrier under a condition or in a loop "
                            "that differs between the lanes of a foreach over "
                            f"'{self.fe.group}'", n, "every lane must reach the barrier: put "
                            "it where the condition and loop bounds are the same for all lanes")
        return "run"

    @staticmethod
    def counter(s: ast.For) -> str | None:
        if isinstance(s.init, ast.Declaration):
            return s.init.name
        return _root(s.init.target) if isinstance(s.init, ast.Assign) else None

    def flush(self, run: list[ast.Stmt], rest: Sequence[ast.Stmt], out: list[ast.Stmt]) -> None:
        if not run:
            return
        later = set().union(*(_names_in(s) for s in rest)) if rest else set()
        body: list[ast.Stmt] = []
        for s in run:
            if not isinstance(s, ast.Declaration):
                body.append(s)
                continue
            if self.rematerialisable(s):
                self.remat[s.name] = s
                body.append(s)
            elif s.name in later:
                if s.views:
                    raise _fail("opencl-unsupported", f"a view of '{s.name}', which holds one "
                                "value per lane", s, "declare the view inside the same "
                                "statement that uses it")
                t = s.type
                size = self.fe.size
                dims = ((size,),) if not t.is_array else (*t.dims[:-1], (*t.dims[-1], size))
                (self.lane_arrays if t.is_array else self.lane_scalars).add(s.name)
                decl = ast.Declaration(ast.Type(t.name, dims, span=t.span), s.name,
                                       space=s.space, span=s.span)
                self.arrays.add(id(decl))
                out.append(decl)
                if s.init is not None:
                    body.append(ast.Assign(ast.Name(s.name, span=s.span), "=", s.init,
                                           span=s.span))
            else:
                body.append(s)
        body = [self.lanewise(s) for s in body]
        if not body:    # only declarations of per-lane arrays
            run.clear()
            return
        own = {s.name for s in body if isinstance(s, ast.Declaration)}
        needed = set().union(*(_names_in(s) for s in body))
        prefix: list[ast.Stmt] = []
        for name in reversed(list(self.remat)):
            if name in needed and name not in own:
                needed |= _names_in(self.remat[name].init)
        prefix = [d for name, d in self.remat.items() if name in needed and name not in own]
        span = run[0].span
        lane = ast.Name(self.lane, span=span)
        loop = ast.For(ast.Declaration(ast.Type("int"), self.lane, init=ast.Literal(0),
                                       span=span),
                       ast.Binary("<", lane, self.fe.size, span=span),
                       ast.IncDec(lane, "++", span=span),
                       ast.Block((*prefix, *body), span=span), span=span)
        self.loops.add(id(loop))
        out.append(loop)
        run.clear()

    def rematerialisable(self, d: ast.Declaration) -> bool:
        if d.type.is_array or d.init is None or d.views or self.assigned.get(d.name):
            return False
        for n in ast.walk(d.init):
            if isinstance(n, ast.Index | ast.Field) or (
                    isinstance(n, ast.Call) and n.func not in PURE):
                return False
            if isinstance(n, ast.Name) and n.id in self.varying and n.id != self.lane \
                    and n.id not in self.remat:
                return False
        return True

    def lanewise(self, s: ast.Stmt) -> ast.Stmt:
        """``s`` with the per-lane variables indexed by the lane."""
        lane = ast.Name(self.lane)

        def rewrite(n: ast.Node) -> ast.Node | None:
            if isinstance(n, ast.Name) and n.id in self.lane_scalars:
                return ast.Index(n, ((lane,),), span=n.span)
            if isinstance(n, ast.Index) and isinstance(n.base, ast.Name) \
                    and n.base.id in self.lane_arrays:
                return dataclasses.replace(n, groups=(*n.groups[:-1], (*n.groups[-1], lane)))
            return None
        return ast.transform(s, rewrite)


class _Renamer:
    """Gives every declaration in a lane body its own name (``x``, ``x_2``, ...), so that
    per-lane variables can be found by name."""

    def __init__(self, fe: ast.ForEach):
        self.taken = _names_in(fe.body) | {n.name for n in ast.walk(fe.body)
                                           if isinstance(n, ast.Declaration)}
        self.seen: set[str] = set()

    def fresh(self, name: str) -> str:
        if name not in self.seen:
            self.seen.add(name)
            return name
        k = 2
        while f"{name}_{k}" in self.taken:
            k += 1
        new = f"{name}_{k}"
        self.taken.add(new)
        return new

    def block(self, s: ast.Stmt) -> ast.Block:
        body = s if isinstance(s, ast.Block) else ast.Block((s,), span=s.span)
        return self.stmts(body, {})

    def expr(self, e, env: dict[str, str]):
        if e is None or not env:
            return e

        def rewrite(n: ast.Node) -> ast.Node | None:
            if isinstance(n, ast.Name) and n.id in env:
                return dataclasses.replace(n, id=env[n.id])
            return None
        return ast.transform(e, rewrite)

    def stmts(self, b: ast.Block, env: dict[str, str]) -> ast.Block:
        env = dict(env)
        out = [self.stmt(s, env) for s in b.statements]
        return dataclasses.replace(b, statements=tuple(out))

    def declaration(self, d: ast.Declaration, env: dict[str, str]) -> ast.Declaration:
        d = dataclasses.replace(d, init=self.expr(d.init, env),
                                type=self.expr(d.type, env))
        new = self.fresh(d.name)
        env[d.name] = new
        views = tuple(dataclasses.replace(vw, name=self.fresh_view(vw.name, env))
                      for vw in d.views)
        return dataclasses.replace(d, name=new, views=views)

    def fresh_view(self, name: str, env: dict[str, str]) -> str:
        new = self.fresh(name)
        env[name] = new
        return new

    def stmt(self, s: ast.Stmt, env: dict[str, str]) -> ast.Stmt:
        """``s`` renamed; declarations directly in it update ``env`` (its block's scope)."""
        if isinstance(s, ast.Declaration):
            return self.declaration(s, env)
        if isinstance(s, ast.Block):
            return self.stmts(s, env)
        if isinstance(s, ast.If):
            return dataclasses.replace(s, cond=self.expr(s.cond, env),
                                       then=self.sub(s.then, env),
                                       orelse=None if s.orelse is None
                                       else self.sub(s.orelse, env))
        if isinstance(s, ast.For):
            inner = dict(env)
            init = s.init
            if isinstance(init, ast.Declaration):
                init = self.declaration(init, inner)
            elif init is not None:
                init = self.expr(init, inner)
            return dataclasses.replace(s, init=init, cond=self.expr(s.cond, inner),
                                       update=self.expr(s.update, inner),
                                       body=self.sub(s.body, inner))
        if isinstance(s, ast.While):
            return dataclasses.replace(s, cond=self.expr(s.cond, env),
                                       body=self.sub(s.body, env))
        if isinstance(s, ast.AsStatement):
            s = dataclasses.replace(s, target=self.expr(s.target, env))
            views = tuple(dataclasses.replace(vw, name=self.fresh_view(vw.name, env))
                          for vw in s.views)
            return dataclasses.replace(s, views=views)
        if isinstance(s, ast.ForEach):
            inner = dict(env)
            var = self.declaration(s.var, inner)
            return dataclasses.replace(s, var=var, size=self.expr(s.size, env),
                                       body=self.sub(s.body, inner))
        return self.expr(s, env)

    def sub(self, s: ast.Stmt, env: dict[str, str]) -> ast.Stmt:
        if isinstance(s, ast.Block):
            return self.stmts(s, env)
        return self.stmt(s, dict(env))


# ---------------------------------------------------------------------------- vector code

#: Lane counts that OpenCL has vector types for.
VECTOR_WIDTHS = (2, 3, 4, 8, 16)
#: The widest vectors passed to OpenCL's vload/vstore: wider ones are loaded and stored
#: as two halves. PoCL for a CPU without AVX-512 builds no kernel at all where a
#: 512-bit vector crosses a call ("AVX vector return of type 'float16' without
#: 'avx512f' enabled changes the ABI"); arithmetic on float16 works everywhere.
WIDEST_CALL = 8
#: Element types of the vector statements (OpenCL widens a scalar operand to them).
VECTOR_ELEMENTS = ("float", "double")
#: Built-in functions with vector overloads taking vectors (and scalars for min, max).
VECTOR_FUNCTIONS = frozenset({"sqrt", "exp", "log", "sin", "cos", "fabs", "floor", "ceil",
                              "min", "max"})


class NotVector(Exception):
    """A lane loop that cannot be written with OpenCL vector types."""


def lane_coefficient(e: ast.Expr, lane: str, constant) -> int | None:
    """How much ``e`` grows from one lane to the next (None: not affine in the lane,
    or a coefficient that is not a constant of the program). ``constant(e)``: the
    value of a constant expression, else None."""
    if not any(isinstance(n, ast.Name) and n.id == lane for n in ast.walk(e)):
        return 0
    if isinstance(e, ast.Name):
        return 1
    if isinstance(e, ast.Unary) and e.op in "+-":
        c = lane_coefficient(e.operand, lane, constant)
        return None if c is None else (c if e.op == "+" else -c)
    if isinstance(e, ast.Binary) and e.op in ("+", "-"):
        a, b = (lane_coefficient(x, lane, constant) for x in (e.left, e.right))
        if a is None or b is None:
            return None
        return a + b if e.op == "+" else a - b
    if isinstance(e, ast.Binary) and e.op == "*":
        a, b = (lane_coefficient(x, lane, constant) for x in (e.left, e.right))
        if a is None or b is None or (a and b):
            return None
        factor = constant(e.left if a == 0 else e.right)
        return None if factor is None else factor * (a or b)
    inner = getattr(e, "inner", None)   # the generator's parentheses
    if inner is not None:
        return lane_coefficient(inner, lane, constant)
    return None
