"""OpenCL C text of MCPL statements: declarations and views, assignments, loops,
foreach loops as work-group and work-item ids, barriers and warp-synchronous code
(a mixin of the kernel generator of ``generate``)."""

from __future__ import annotations

from collections.abc import Sequence

from mcl.diagnostics import McplError
from mcl.mcpl import ast
from mcl.mcpl.varying import PURE
from mcl.opencl import async_copy, lanes, vectorize
from mcl.opencl.emit_expressions import (
    _SIZES,
    _constant_size,
    _CPrinter,
    _ctype,
    _ends_with_barrier,
    _err,
    _fold,
    _is_kernel,
    _Paren,
    _product,
    _simple,
    _store_target,
    _Var,
    root_name,
)
from mcl.opencl.index_checks import RECORD
from mcl.opencl.plan import DTYPES, Argument, ViewCheck, evaluate

#: the line that waits for a work-item's asynchronous copies before a barrier
ASYNC_WAIT = "MCL_COPY_WAIT();"


class _StatementEmission:
    """Statement emission; mixed into ``_KernelGen``, whose state (lines, scopes,
    loops, the target) it uses."""


    def statements(self, stmts: Sequence[ast.Stmt]) -> None:
        before: ast.ForEach | None = None
        for s in stmts:
            if isinstance(s, ast.ForEach):
                if before is None:   # sizes of side-by-side loops, with the names before them
                    for x in stmts:
                        if isinstance(x, ast.ForEach):
                            self.size_of(x)
                if before is not None and not _ends_with_barrier(before):
                    # the loops run one after the other: the second sees what the first wrote
                    self.line = s.span.line
                    self.barrier("CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE",
                                 "   // the foreach loops before and after run one after the other")
                before = s
            self.statement(s)

    def block(self, s: ast.Stmt) -> None:
        """A nested statement in braces, with its own scope."""
        self.scopes.append({})
        self.indent += 1
        if isinstance(s, ast.Block):
            self.statements(s.statements)
        else:
            self.statement(s)
        self.indent -= 1
        self.scopes.pop()

    def statement(self, s: ast.Stmt) -> None:
        self.line = s.span.line
        p = _CPrinter(self)
        if isinstance(s, ast.Block):
            self.emit("{")
            self.block(s)
            self.emit("}")
        elif isinstance(s, ast.ForEach):
            self.foreach(s)
        elif isinstance(s, ast.Declaration):
            self.declaration(s)
        elif isinstance(s, ast.AsStatement):
            if not isinstance(s.target, ast.Name):
                raise _err("opencl-unsupported", "a view of something other than a variable",
                           s)
            base = self.lookup(s.target.id, s.target)
            for view in s.views:
                base = self.view(view, base)
        elif isinstance(s, ast.Assign):
            self.emit(p.assign(s) + ";")
        elif isinstance(s, ast.IncDec):
            self.mark_written(s.target)
            self.emit(f"{p.expr(s.target)}{s.op};")
        elif isinstance(s, ast.ExprStmt):
            self.emit(p.expr(s.expr) + ";")
        elif isinstance(s, ast.Return):
            if s.value is not None and _is_kernel(self.f):
                raise _err("opencl-kernel-return", "a kernel cannot return a value", s,
                           "write the result to an array parameter")
            if self.index_checks is not None and _is_kernel(self.f):
                self.emit(RECORD)       # the work-item's fault, where it checks indices
            self.emit("return;" if s.value is None else f"return {p.expr(s.value)};")
        elif isinstance(s, ast.If):
            self.emit(f"if ({p.expr(s.cond)}) {{")
            self.block(s.then)
            orelse = s.orelse
            while isinstance(orelse, ast.If):
                self.line = orelse.span.line
                self.emit(f"}} else if ({p.expr(orelse.cond)}) {{")
                self.block(orelse.then)
                orelse = orelse.orelse
            if orelse is not None:
                self.emit("} else {")
                self.block(orelse)
            self.emit("}")
        elif isinstance(s, ast.For):
            self.for_loop(s)
        elif isinstance(s, ast.While):
            self.emit(f"while ({p.expr(s.cond)}) {{")
            self.block(s.body)
            self.emit("}")
        elif isinstance(s, ast.Barrier):
            if s.space not in self.target.spaces:
                raise _err("opencl-bad-space", f"barrier on '{s.space}', which is not a memory "
                           f"space of {self.target.name}", s)
            self.barrier(self.target.fence(s.space))
        elif isinstance(s, ast.Break):
            self.emit("break;")
        elif isinstance(s, ast.Continue):
            self.emit("continue;")
        else:  # pragma: no cover - every statement class is handled above
            raise _err("opencl-unsupported", f"cannot generate {type(s).__name__}", s)

    def barrier(self, fence: str, comment: str = "") -> None:
        """A barrier; where copies may be asynchronous, the wait for them before it
        (assemble drops the waits if no copy was made one)."""
        if self.async_candidates:
            self.emit(ASYNC_WAIT)
        self.emit(f"barrier({fence});{comment}")

    def foreach(self, s: ast.ForEach) -> None:
        loop = self.loops[id(s)]
        self.emit(f"// foreach ({s.var.type.name} {s.var.name} in "
                  f"{_CPrinter(self).expr(s.size)} {s.group})")
        beside = self.siblings.get(id(s), False)
        if beside:   # its index and declarations are its own, not its siblings'
            self.emit("{")
            self.indent += 1
            self.scopes.append({})
        v = self.declare(_Var(s.var.name, self.cname(s.var.name), s.var.type, "index",
                              uniform=loop.kind == "group"))
        members = [id(m) for m in loop.members]
        id_expr = loop.id_expr
        if len(members) > 1:
            fn = loop.id_expr
            inner = [self.size_of(m) for m in loop.members[members.index(id(s)) + 1:]]
            if inner:
                div = " * ".join(s if _simple(s) else f"({s})" for s in inner)
                fn = f"{fn} / {div if _simple(div) else f'({div})'}"
            size = self.size_of(s)
            id_expr = fn if members[0] == id(s) else \
                f"{fn if _simple(fn) or fn.endswith(')') and '/' not in fn else f'({fn})'} % " \
                f"{size if _simple(size) else f'({size})'}"
        self.emit(f"const int {v.cname} = {id_expr};")
        # a loop smaller than its dimension (beside a larger one) runs where it is in range
        guard = None
        if members[0] == id(s) and _product([self.size_of(m) for m in loop.members]) \
                != self.extent(loop.kind, loop.dim):
            guard = self.size_of(s)
            self.guards.append(f"{v.cname} < {guard if _simple(guard) else f'({guard})'}")
        self.enclosing.append(s)
        body = s.body
        stmts = body.statements if isinstance(body, ast.Block) else (body,)
        if id(s) in self.leaves and self.guards:
            self.guarded(stmts)
        else:
            self.statements(stmts)
        self.enclosing.pop()
        if guard is not None:
            self.guards.pop()
        if beside:
            self.scopes.pop()
            self.indent -= 1
            self.emit("}")

    def guarded(self, stmts: Sequence[ast.Stmt]) -> None:
        """The body of a loop smaller than its work-group dimension: its statements run
        only where the index is in range, but every work-item reaches each barrier
        (OpenCL requires it), so barriers stay outside the condition. Variables are
        declared outside the condition so that statements after a barrier see them."""
        cond = " && ".join(self.guards)
        run: list[ast.Stmt] = []

        def flush() -> None:
            if not run:
                return
            for st in run:
                if isinstance(st, ast.Declaration):
                    self.line = st.span.line
                    self.declaration(st, split=True)
            self.line = run[0].span.line
            self.emit(f"if ({cond}) {{")
            self.indent += 1
            for st in run:
                if isinstance(st, ast.Declaration):
                    v = self.lookup(st.name, st)
                    if st.init is not None and v.qualifier != "__local":
                        self.line = st.span.line
                        self.emit(f"{v.cname} = {_CPrinter(self).expr(st.init)};")
                else:
                    self.statement(st)
            self.indent -= 1
            self.emit("}")
            run.clear()

        for st in stmts:
            if not any(isinstance(n, ast.Barrier) for n in ast.walk(st)):
                run.append(st)
                continue
            flush()
            self.line = st.span.line
            if isinstance(st, ast.Barrier):
                self.statement(st)
            elif isinstance(st, ast.Block):
                self.emit("{")
                self.scopes.append({})
                self.indent += 1
                self.guarded(st.statements)
                self.indent -= 1
                self.scopes.pop()
                self.emit("}")
            elif isinstance(st, ast.For) and self.uniform_for(st):
                self.scopes.append({})
                header = self.for_header(st)
                self.emit(f"for ({header}) {{")
                self.scopes.append({})
                self.indent += 1
                body = st.body
                self.guarded(body.statements if isinstance(body, ast.Block) else (body,))
                self.indent -= 1
                self.scopes.pop()
                self.emit("}")
                self.scopes.pop()
            else:
                raise _err("opencl-guarded-barrier", "a barrier inside this statement: the "
                           "foreach around it is smaller than the one beside it, so the "
                           "work-items beyond its size would skip the barrier", st,
                           "put the barrier directly in the foreach body or in a for loop "
                           "whose bounds are the same for every unit, or give the loops "
                           "side by side the same size")
        flush()

    def uniform(self, e: ast.Expr | None, own: set[str]) -> bool:
        """Whether ``e`` has the same value in every work-item of a work-group."""
        if e is None:
            return True
        for n in ast.walk(e):
            if isinstance(n, ast.Index):
                return False
            if isinstance(n, ast.Name) and n.id not in own:
                v = self.lookup(n.id, n)
                if not (v.uniform or v.kind == "const"
                        or v.kind == "param" and not v.type.is_array and not v.by_pointer):
                    return False
        return True

    def uniform_for(self, s: ast.For) -> bool:
        own = set()
        if isinstance(s.init, ast.Declaration):
            own.add(s.init.name)
            if not self.uniform(s.init.init, own):
                return False
        elif s.init is not None:
            return False
        upd = s.update.value if isinstance(s.update, ast.Assign) else None
        target = s.update.target if isinstance(s.update, ast.Assign | ast.IncDec) else None
        return (self.uniform(s.cond, own) and self.uniform(upd, own)
                and isinstance(target, ast.Name) and target.id in own)

    def for_loop(self, s: ast.For) -> None:
        if id(s) in self.lane_loops:
            if self.lane_vector_loop(s):
                return
            # else left to the OpenCL compiler's loop vectoriser
            self.emit("#pragma clang loop vectorize(enable)")
            self.scopes.append({})
            self.emit(f"for ({self.for_header(s)}) {{")
            self.block(s.body)
            self.emit("}")
            self.scopes.pop()
            return
        counted = vectorize.counted_loop(s)
        start = trip = None
        if counted is not None:
            var, first, bound, inclusive = counted
            start, end = self.constant(first), self.constant(bound)
            if start is not None and end is not None:
                trip = end - start + inclusive
        if trip is not None:
            vec = vectorize.analyse(s, var, trip, self.find, self.volatile_arrays)
            if vec is not None and self.vector_loop(s, vec, start):
                return
            if 0 < trip <= vectorize.MAX_UNROLL:
                self.emit("#pragma unroll")
        elif counted is not None and self.build_time_trip(counted) is not None:
            self.emit("#pragma unroll")
        self.scopes.append({})
        self.emit(f"for ({self.for_header(s)}) {{")
        self.block(s.body)
        self.emit("}")
        self.scopes.pop()

    def build_time_trip(self, counted: tuple[str, ast.Expr, ast.Expr, bool]) -> int | None:
        """The trip count, at the parameters' defaults, of a counted loop whose bounds
        are constant once the compile-time parameters are fixed (``y < fh`` where fh
        sizes an array), if it is at most MAX_UNROLL; else None. The OpenCL compiler
        knows such a trip count, so ``#pragma unroll`` unrolls the loop completely: the
        private arrays it indexes stay in registers, and constant-memory elements it
        indexes get constant addresses."""
        _, first, bound, inclusive = counted
        values: dict[str, int | float] = {}
        try:
            for e in (first, bound):
                for n in ast.walk(self.inline(e)):
                    if isinstance(n, ast.Name):
                        p = self.specialized.get(n.id)
                        default = None if p is None else self.specialized_default(p)
                        if default is None:
                            return None
                        values[n.id] = default
            trip = (evaluate(self.plan_expr(bound), values)
                    - evaluate(self.plan_expr(first), values) + inclusive)
        except (McplError, ValueError, TypeError, ZeroDivisionError):
            return None
        return int(trip) if 0 < trip <= vectorize.MAX_UNROLL else None

    # ---- lanes as OpenCL vectors (mcl.opencl.lanes)

    def lane_vector_loop(self, s: ast.For) -> bool:
        """Emit a loop over the lanes (mcl.opencl.lanes) as statements on OpenCL vectors
        of the lane count: each an assignment of a float expression to the lanes of an
        array that lie next to each other, from such lanes of arrays and values the same
        in every lane. False (nothing emitted) where the loop has anything else."""
        lane = s.init.name
        width = self.constant(s.cond.right)
        if width not in lanes.VECTOR_WIDTHS:
            return False
        stmts = list(s.body.statements if isinstance(s.body, ast.Block) else (s.body,))
        defs = {d.name: d.init for d in stmts if isinstance(d, ast.Declaration)
                and not d.type.is_array and d.init is not None}
        lines = []
        try:
            for st in stmts:
                if isinstance(st, ast.Declaration) and st.name in defs:
                    if st.type.name not in ("int", "long"):
                        raise lanes.NotVector
                    continue    # an index, substituted where it is used
                if not isinstance(st, ast.Assign) or st.op not in ("=", "+=", "-=", "*=", "/=") \
                        or not isinstance(st.target, ast.Index) \
                        or root_name(st.target) is None or root_name(st.target).id in defs:
                    raise lanes.NotVector
                st = vectorize.substitute(st, {}, defs)
                lines.append(self.lane_assign(st, lane, width))
        except lanes.NotVector:
            return False
        self.emit(f"{{   // {lane} < {width}: one vector of {width} lanes")
        for text in lines:
            self.emit("    " + text + ";")
        self.emit("}")
        return True

    def lane_access(self, e: ast.Index, lane: str, width: int) -> tuple[str, bool]:
        """``e`` as a vector load of adjacent lanes (True) or a scalar (False)."""
        if not isinstance(e.base, ast.Name):
            raise lanes.NotVector
        v = self.find(e.base.id)
        if v is None or v.base is not None:
            raise lanes.NotVector
        subs = [i for g in e.groups for i in g]
        coefs = [lanes.lane_coefficient(i, lane, self.constant) for i in subs]
        if all(c == 0 for c in coefs):
            return _CPrinter(self).expr(e), False
        if coefs[-1] != 1 or any(c != 0 for c in coefs[:-1]) \
                or v.type.name not in lanes.VECTOR_ELEMENTS:
            raise lanes.NotVector
        first = vectorize.substitute(e, {lane: ast.Literal(0)}, {})
        p = _CPrinter(self)
        if e.base.id in self.vector_arrays and self.vector_arrays[e.base.id][1] == width:
            vec = self.vector_arrays[e.base.id][0]
            offset, _ = p.horner([i for g in first.groups for i in g], v.type.sizes)
            v.root.read = True
            return f"{vec}[({offset}) / {width}]", True
        return f"&{p.expr(first)}", True

    def lane_value(self, e: ast.Expr, lane: str, width: int) -> tuple[str, bool]:
        """``e`` as OpenCL text and whether it is a vector."""
        p = _CPrinter(self)
        if isinstance(e, ast.Index):
            ref, vec = self.lane_access(e, lane, width)
            ctype = self.find(e.base.id).type.name
            return (self.lane_load(ref, width, ctype), True) if vec else (ref, False)
        if not any(isinstance(n, ast.Name) and n.id == lane or isinstance(n, ast.Index)
                   for n in ast.walk(e)):
            if any(isinstance(n, ast.Call) and n.func not in PURE for n in ast.walk(e)):
                raise lanes.NotVector
            return f"({p.expr(e)})", False
        if isinstance(e, _Paren):
            return self.lane_value(e.inner, lane, width)
        if isinstance(e, ast.Binary) and e.op in ("+", "-", "*", "/"):
            (a, va), (b, vb) = (self.lane_value(x, lane, width) for x in (e.left, e.right))
            return f"({a} {e.op} {b})", va or vb
        if isinstance(e, ast.Unary) and e.op == "-":
            a, va = self.lane_value(e.operand, lane, width)
            return f"(-{a})", va
        if isinstance(e, ast.Call) and e.func in lanes.VECTOR_FUNCTIONS:
            args = [self.lane_value(x, lane, width) for x in e.args]
            if e.func in ("min", "max") and not args[0][1]:
                raise lanes.NotVector   # OpenCL's min(vector, scalar), not min(scalar, vector)
            return f"{e.func}({', '.join(a for a, _ in args)})", any(v for _, v in args)
        raise lanes.NotVector

    def lane_assign(self, s: ast.Assign, lane: str, width: int) -> str:
        if not isinstance(s.target, ast.Index) or not isinstance(s.target.base, ast.Name) \
                or self.find(s.target.base.id) is None:
            raise lanes.NotVector
        root = self.find(s.target.base.id).root
        ref, vec = _store_target(root, s.op, lambda: self.lane_access(s.target, lane, width))
        if not vec:
            raise lanes.NotVector
        ctype = self.find(s.target.base.id).type.name
        value, _ = self.lane_value(s.value, lane, width)
        if s.op != "=":
            value = f"{self.lane_load(ref, width, ctype)} {s.op[0]} {value}"
        self.mark_written(s.target)
        if not ref.startswith("&"):     # an element of a vector array
            return f"{ref} = ({ctype}{width})({value})"
        if width <= lanes.WIDEST_CALL:
            return f"vstore{width}(({ctype}{width})({value}), 0, {ref})"
        half, tmp = width // 2, f"{lane}_vector"
        if tmp in self.names:
            raise lanes.NotVector
        return (f"{{ const {ctype}{width} {tmp} = {value}; vstore{half}({tmp}.lo, 0, {ref}); "
                f"vstore{half}({tmp}.hi, 0, ({ref}) + {half}); }}")

    @staticmethod
    def lane_load(ref: str, width: int, ctype: str) -> str:
        if not ref.startswith("&"):
            return ref
        if width <= lanes.WIDEST_CALL:
            return f"vload{width}(0, {ref})"
        half = width // 2
        return f"(({ctype}{width})(vload{half}(0, {ref}), vload{half}(0, ({ref}) + {half})))"

    def constant(self, e: ast.Expr) -> int | None:
        """The value of ``e`` if it is a constant of the program (literals, ``const``
        values, hardware properties), else None."""
        try:
            return _constant_size(self.plan_expr(e))
        except McplError:
            return None

    def find(self, name: str) -> _Var | None:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return None

    def vector_loop(self, s: ast.For, vec: vectorize.VectorLoop, start: int) -> bool:
        """Emit ``s`` as runs of 4 iterations, each a vector path guarded by its
        conditions and alignment, with the iterations one by one as the fallback
        (see :mod:`mcl.opencl.vectorize`). False (nothing emitted) if a name clashes."""
        var = vec.var
        run = f"{self.cname(var)}_run"
        if run in self.names:
            return False
        width = vectorize.WIDTH
        p = _CPrinter(self)
        self.scopes.append({})
        if vec.trip == width:
            base: ast.Expr = ast.Literal(start)
            self.emit("{   " + f"// loop {var}: 4 iterations as one vector access")
        else:
            if vec.trip <= vectorize.MAX_UNROLL:
                self.emit("#pragma unroll")
            self.emit(f"for (int {run} = {start}; {run} < {start + vec.trip}; {run} += {width}) "
                      f"{{   // loop {var}: runs of 4 iterations as vector accesses")
            self.declare(_Var(run, run, ast.Type("int"), "local"))
            base = ast.Name(run)
        self.indent += 1
        defs = {d.name: d.init for d in vec.decls}
        read = {id(v): v.read for scope in self.scopes for v in scope.values()}
        conds = [p.expr(c) for c in vectorize.lane_conditions(vec, base)]
        # for the alignment proof, a run's first iteration is start + 4 k for some k
        proof_base: ast.Expr = base
        if vec.trip > width:
            proof_base = ast.Binary("+", ast.Literal(start), ast.Binary(
                "*", ast.Literal(width), ast.Name(f"{run}__k")))
        for acc in vec.memory_accesses():
            first = vectorize.substitute(acc.index, vectorize.lane(var, base, 0), defs)
            proof = vectorize.substitute(acc.index, vectorize.lane(var, proof_base, 0), defs)
            if not self.aligned(acc.name, proof):
                elem = self.lookup(acc.name).type.name
                conds.append(f"((size_t)&{p.expr(first)} & {width * _SIZES[elem] - 1}) == 0")
        if conds:
            self.emit(f"if ({conds[0]}" + ("" if len(conds) > 1 else ") {"))
            for i, c in enumerate(conds[1:], 1):
                self.emit(f"    && {c}" + (") {" if i == len(conds) - 1 else ""))
            self.indent += 1
        self.scopes.append({})
        self.emit(f"const int {self.cname(var)} = {p.expr(base)};")
        self.declare(_Var(var, self.cname(var), ast.Type("int"), "local"))
        for d in vec.decls:
            self.declaration(d)
        for i, copy in enumerate(vec.copies):
            self.vector_copy(copy, var, i)
        self.scopes.pop()
        if conds:   # the fallback: the run's iterations one by one
            for scope in self.scopes:   # (it reads what the original loop reads)
                for v in scope.values():
                    v.read = read.get(id(v), v.read)
            self.indent -= 1
            self.emit("} else {")
            self.indent += 1
            self.emit("#pragma unroll")
            self.scopes.append({})
            b = p.expr(base)
            end = p.expr(vectorize.lane(var, base, width)[var])
            self.emit(f"for (int {self.cname(var)} = {b}; {self.cname(var)} < {end}; "
                      f"{self.cname(var)}++) {{")
            self.declare(_Var(var, self.cname(var), ast.Type("int"), "local"))
            self.block(s.body)
            self.emit("}")
            self.scopes.pop()
            self.indent -= 1
            self.emit("}")
        self.indent -= 1
        self.emit("}")
        self.scopes.pop()
        return True

    def aligned(self, name: str, index: ast.Index) -> bool:
        """Whether ``&name[index]`` is aligned for a vector access whatever the values
        of the names in it: the array starts aligned (an OpenCL buffer, or a local
        array declared aligned) and the offset is a multiple of the vector width."""
        v = self.lookup(name)
        if v.tiled or not (v.qualifier == "__local" or v.root.kind == "param"):
            return False   # (a reshaping view starts where its array starts)
        return vectorize.multiple_of(
            vectorize.flat_index(index, v.type.sizes), vectorize.WIDTH,
            lambda n: self.fixed.get(n.id), self.constant)

    def vector_copy(self, copy: vectorize.Copy, var: str, i: int) -> None:
        """One assignment of a vectorised loop body, for all 4 lanes at once."""
        p = _CPrinter(self)
        width = vectorize.WIDTH
        self.line = copy.stmt.span.line
        here = ast.Name(var)

        def lanes(e: ast.Expr) -> list[str]:
            return [p.expr(vectorize.substitute(e, vectorize.lane(var, here, j), {}))
                    if j else p.expr(e) for j in range(width)]

        def vector(acc: vectorize.Access, const: str) -> str:
            v = self.lookup(acc.name)
            return f"*({v.qualifier} {const}{v.type.name}{width}*)&{p.expr(acc.index)}"

        self.mark_written(copy.stmt.target)
        t, val = copy.target, copy.value
        elem = self.lookup(t.name).type.name
        if isinstance(val, vectorize.Access) and val.memory and not t.memory:
            self.emit(f"const {elem}{width} {self.cname(var)}_v{i} = {vector(val, 'const ')};")
            values = [f"{self.cname(var)}_v{i}.s{j}" for j in range(width)]
        elif isinstance(val, vectorize.Access) and not val.memory:
            values = lanes(val.index)
        elif not isinstance(val, vectorize.Access):
            values = [p.expr(val)] * width
        if t.memory and isinstance(val, vectorize.Access) and val.memory \
                and self.asynchronous(copy.stmt, t, val):
            self.uses_async_copy = True
            self.emit(f"MCL_COPY128({elem}{width}, &{p.expr(t.index)}, &{p.expr(val.index)});")
            return
        if t.memory:
            if isinstance(val, vectorize.Access) and val.memory:
                rhs = vector(val, "const ")
            elif not isinstance(val, vectorize.Access):
                rhs = f"({elem}{width})({values[0]})"
            else:
                rhs = f"({elem}{width})({', '.join(values)})"
            store = _store_target(self.lookup(t.name).root, "=", lambda: vector(t, ""))
            self.emit(f"{store} = {rhs};")
        else:
            for target, value in zip(lanes(t.index), values, strict=True):
                self.emit(f"{target} = {value};")

    def asynchronous(self, stmt: ast.Assign, t: vectorize.Access,
                     val: vectorize.Access) -> bool:
        """Whether the 128-bit copy of ``val`` into ``t`` may be an asynchronous one
        (:mod:`mcl.opencl.async_copy`): local from global memory, 16 bytes, proven
        unseen until the next barrier."""
        cand = self.async_candidates.get(id(stmt))
        if cand is None:
            return False
        dst, src = self.lookup(t.name), self.lookup(val.name)
        elem = dst.type.name
        if dst.qualifier != "__local" or dst.base is not None or dst.tiled \
                or src.qualifier != "__global" or src.tiled \
                or _SIZES.get(elem, 0) * vectorize.WIDTH != 16:
            return False
        return async_copy.proven(cand, self.constant, dst.type.sizes)

    def for_header(self, s: ast.For) -> str:
        p = _CPrinter(self)
        init = ""
        if isinstance(s.init, ast.Declaration):
            v = self.declare(_Var(s.init.name, self.cname(s.init.name), s.init.type, "local"))
            init = f"{_ctype(s.init.type.name, self)} {v.cname}"
            if s.init.init is not None:
                init += f" = {p.expr(s.init.init)}"
        elif s.init is not None:
            init = p.assign(s.init)
        cond = p.expr(s.cond) if s.cond is not None else ""
        if isinstance(s.update, ast.Assign):
            upd = p.assign(s.update)
        elif isinstance(s.update, ast.IncDec):
            self.mark_written(s.update.target)
            upd = f"{p.expr(s.update.target)}{s.update.op}"
        else:
            upd = ""
        return f"{init}; {cond}; {upd}"

    def declaration(self, d: ast.Declaration, split: bool = False) -> None:
        """``split``: declare a scalar without its initial value (assigned later)."""
        p = _CPrinter(self)
        t = d.type
        self.record_type(t)
        groups = [fe.group for fe in self.enclosing]
        space = d.space or self.default_space(groups)
        qualifier = self.target.qualifier(space) if space in self.target.spaces else "__private"
        if d.space and d.space not in self.target.spaces:
            raise _err("opencl-bad-space", f"memory space '{d.space}' is not one of "
                       f"{self.target.name}", d)
        kind = "const" if d.const and not t.is_array else "local"
        ctype = _ctype(t.name, self)
        if qualifier == "__constant":
            raise _err("opencl-bad-space", f"'{d.name}' is declared in read-only memory space "
                       f"'{space}' inside a kernel", d, "pass it as a parameter instead")
        innermost = bool(self.enclosing) and id(self.enclosing[-1]) in self.leaves
        if qualifier == "__global":
            if not innermost and (t.is_array or d.space and not d.const):
                self.scratch(d, space)
                return
            qualifier = "__private"   # one copy per work-item
        v = _Var(d.name, self.cname(d.name), t, kind, qualifier, space,
                 init=d.init if kind == "const" else None)
        if t.is_array:
            sizes = [self.array_size(e) for e in t.sizes]
            total = _fold(" * ".join(f"({s})" if not _simple(s) else s for s in sizes))
            if qualifier == "__local":
                if d.init is not None:
                    raise _err("opencl-local-init", f"'{d.name}' is in '{space}', which cannot "
                               "have an initial value", d, "assign it in the loop body")
                vol = "volatile " if d.name in self.volatile_arrays else ""
                # aligned for vector accesses (mcl.opencl.vectorize)
                align = (f" __attribute__((aligned({vectorize.WIDTH * _SIZES[t.name]})))"
                         if t.name in vectorize.VECTOR_TYPES and not vol else "")
                self.hoisted.append((f"__local {vol}{ctype} {v.cname}[{total}]{align};",
                                     d.span.line))
                # the launch plan evaluates its own expressions (min and max as calls)
                planned = _fold(" * ".join(f"({s})" if not _simple(s) else s for s in
                                           (self.array_size(e, plan=True) for e in t.sizes)))
                self.local_bytes.append(_fold(f"({planned}) * {_SIZES.get(t.name, 4)}"))
            else:
                if d.init is not None:
                    raise _err("opencl-unsupported", "an array with an initial value", d)
                width = self.constant(t.sizes[-1]) if id(d) in self.lane_decls else None
                if width in lanes.VECTOR_WIDTHS and t.name in lanes.VECTOR_ELEMENTS:
                    # per-lane values as vectors: kept in vector registers where every
                    # access is a whole vector; a lane alone through a float pointer
                    outer = _fold(" * ".join(f"({s})" if not _simple(s) else s
                                             for s in sizes[:-1]) or "1")
                    self.emit(f"{ctype}{width} {v.cname}[{outer}];")
                    self.vector_arrays[d.name] = (v.cname, width)
                    v.cname = f"((__private {ctype}*){v.cname})"
                else:
                    self.emit(f"{ctype} {v.cname}[{total}];")
        else:
            if qualifier == "__local":
                if d.init is not None:
                    raise _err("opencl-local-init", f"'{d.name}' is in '{space}', which cannot "
                               "have an initial value", d, "assign it in the loop body")
                vol = "volatile " if d.name in self.volatile_arrays else ""
                self.hoisted.append((f"__local {vol}{ctype} {v.cname};", d.span.line))
                self.local_bytes.append(str(_SIZES.get(t.name, 4)))
            elif split:
                self.emit(f"{ctype} {v.cname};")
            else:
                const = "const " if d.const else ""
                init = f" = {p.expr(d.init)}" if d.init is not None else ""
                self.emit(f"{const}{ctype} {v.cname}{init};")
        self.declare(v)
        base = v
        for view in d.views:
            base = self.view(view, base)

    def scratch(self, d: ast.Declaration, space: str) -> None:
        """A variable in global memory shared by the units of the loops inside its
        declaration (per-block scratch): the host allocates one slice per unit of
        the enclosing loops in an extra buffer; the variable points at its slice."""
        t = d.type
        if d.init is not None:
            raise _err("opencl-global-init", f"'{d.name}' is in '{space}' and shared by a group "
                       "of units, so it cannot have an initial value", d,
                       "assign it in the loop body (one unit, then a barrier)")
        if any(a.name == d.name for a, _ in self.scratch_args):
            raise _err("opencl-unsupported", f"two arrays named '{d.name}' in '{space}' in one "
                       "kernel", d, "rename one of them")
        ctype = _ctype(t.name, self)
        sizes = [self.plan_expr(e) for e in t.sizes] if t.is_array else ["1"]
        per_slice = _product(sizes)
        loops = list(self.enclosing)
        count = _product([self.plan_expr(fe.size) for fe in loops])
        slice_ = ast.Literal(0) if not loops else ast.Name(loops[0].var.name)
        for fe in loops[1:]:
            slice_ = ast.Binary("+", ast.Binary("*", slice_, _Paren(self.inline(fe.size))),
                                ast.Name(fe.var.name))
        slice_text = _CPrinter(self).expr(slice_)
        cname = self.cname(d.name)
        base = f"{cname}_slices"
        stride = per_slice if _simple(per_slice) else f"({per_slice})"
        where = base if slice_text == "0" else f"{base} + (size_t)({slice_text}) * {stride}"
        self.emit(f"__global {ctype}* const {cname} = {where};   "
                  f"// one slice per unit of the loops around it")
        v = _Var(d.name, cname, t, "local", "__global", space, by_pointer=not t.is_array)
        self.scratch_args.append((Argument(d.name, "scratch", t.name, DTYPES.get(t.name, t.name),
                                           (count, *sizes), space, "__global", True, True),
                                  f"__global {ctype}* restrict {base}"))
        self.declare(v)
        base_var = v
        for view in d.views:
            base_var = self.view(view, base_var)

    def array_size(self, e: ast.Expr, plan: bool = False) -> str:
        """A size of a local or private array as a compile-time expression (``plan``: as
        the launch plan evaluates it): parameters it needs become compile-time sizes."""
        inlined = self.inline(e)
        for n in ast.walk(inlined):
            if isinstance(n, ast.Name):
                param = next(p for p in self.f.params if p.name == n.id)
                self.specialized[n.id] = param
        return _fold(_CPrinter(self, plan=True, constant=not plan).expr(inlined))

    def view(self, view: ast.View, base: _Var) -> _Var:
        if base.base is not None and base.tiled:
            raise _err("opencl-unsupported", "a view of a tiled view", view)
        bt = base.type
        vt = view.type
        tiled = (len(bt.dims) == 1 and len(vt.dims) > 1
                 and all(len(level) == len(bt.dims[0]) for level in vt.dims))
        if tiled:
            tiled = self.same_sizes(bt, vt, view)
        self.record_type(vt)
        self.check_view_size(view, base)
        return self.declare(_Var(view.name, base.cname, vt, "view", base.qualifier, base.space,
                                 base=base.root if not base.tiled else base, tiled=tiled))

    def check_view_size(self, view: ast.View, base: _Var) -> None:
        """Record a view of a parameter for the call to check that it covers the
        parameter at the sizes given: a view's extents may divide the parameter's only
        at some sizes (``p / bk`` rounds down), which no comparison of the expressions
        decides."""
        root = base.root
        if root.kind != "param" or not root.type.is_array:
            return

        def count(t: ast.Type) -> str:
            return _fold(" * ".join(f"({self.plan_expr(e)})" for e in t.sizes) or "1")
        self.view_checks.append(ViewCheck(view.name, root.name, view.span.line,
                                          count(view.type), count(root.type)))

    def same_sizes(self, bt: ast.Type, vt: ast.Type, where: ast.Node) -> bool:
        """Whether the view ``vt`` tiles each dimension of ``bt`` (the product of its
        sizes per dimension equals the base's size), compared with sympy."""
        from mcl.mcpl.symbolic import to_sympy as _to_sympy

        def to_sympy(e: ast.Expr):
            return _to_sympy(ast.transform(
                e, lambda n: n.inner if isinstance(n, _Paren) else None))
        rank = len(bt.dims[0])
        for k in range(rank):
            prod = 1
            for level in vt.dims:
                s = to_sympy(self.inline(level[k]))
                if s is None:
                    return False
                prod = prod * s
            b = to_sympy(self.inline(bt.dims[0][k]))
            if b is None or (prod - b).simplify() != 0:
                return False
        return True
