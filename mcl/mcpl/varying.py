"""Which values of a kernel differ between the units of a foreach: a dataflow over the
AST, shared by the generator's loops over vector lanes (mcl.opencl.lanes: what stays
outside the lane loop) and the barrier check (mcl.analyses.barriers: which conditions
split a work-group).

A value *varies* where it names a varying variable, reads an array at a varying index,
reads an array each unit has its own of that varies (``own``), or calls a function
with side effects (an atomic update returns what the others left). A variable varies
where a varying value is assigned to it, or any value under a condition, or in a loop,
that varies (the fixpoint of those rules), and an array where an element is written at
a varying index. A loop varies where its header does, or where a ``break`` or
``continue`` of it lies under a varying condition.
"""

from __future__ import annotations

from collections.abc import Container, Iterable

from mcl.mcpl import ast

#: Built-in functions without side effects (their value depends on their arguments).
PURE = frozenset({"sqrt", "exp", "log", "sin", "cos", "fabs", "min", "max", "pow",
                  "floor", "ceil"})


def root(e: ast.Expr) -> str | None:
    """The variable an assignment's target writes (``a`` of ``a[i].x``)."""
    while isinstance(e, ast.Index | ast.Field):
        e = e.base
    return e.id if isinstance(e, ast.Name) else None


def statements(s: ast.Stmt | None) -> tuple[ast.Stmt, ...]:
    if s is None:
        return ()
    return s.statements if isinstance(s, ast.Block) else (s,)


class Varying:
    """The names whose values differ between the units, over ``body``: from ``seeds``
    (the units' indices, and the arrays each has its own of), ``own`` the arrays whose
    elements differ however they are indexed, ``markable`` the names that may become
    varying (None: any)."""

    def __init__(self, body: ast.Stmt, seeds: Iterable[str], own: Iterable[str] = (),
                 markable: Container[str] | None = None):
        self.names: set[str] = set(seeds)
        self.own = frozenset(own)
        self._markable = markable
        self._changed = True
        while self._changed:
            self._changed = False
            self._visit(statements(body), False)

    def __contains__(self, name: object) -> bool:
        return name in self.names

    def expr(self, e: ast.Node | None) -> bool:
        """Whether the value of ``e`` may differ between the units."""
        if e is None:
            return False
        if isinstance(e, ast.Name):
            return e.id in self.names
        if isinstance(e, ast.Call) and e.func not in PURE:
            return True
        if isinstance(e, ast.Index):
            base = root(e.base) if isinstance(e.base, ast.Name) else None
            if base in self.names and base in self.own:
                return True
            return any(self.expr(i) for group in e.groups for i in group) or \
                (base is None and self.expr(e.base))
        return any(self.expr(c) for c in ast.children(e))

    def header(self, s: ast.For | ast.While) -> bool:
        """Whether the units may go round ``s`` different numbers of times by its
        header: its start, condition or step varies."""
        if isinstance(s, ast.While):
            return self.expr(s.cond)
        init = s.init.init if isinstance(s.init, ast.Declaration) else \
            s.init.value if isinstance(s.init, ast.Assign) else None
        update = s.update.value if isinstance(s.update, ast.Assign) else None
        return any(self.expr(e) for e in (init, s.cond, update))

    def leaves_early(self, s: ast.For | ast.While) -> ast.If | None:
        """The outermost ``if`` with a varying condition in the body of ``s`` around a
        ``break`` or ``continue`` (not in a loop inside it) or a ``return`` (anywhere in
        it): its units leave the loop or skip the rest of an iteration unequally."""
        def search(n: ast.Stmt, under: ast.If | None, inner: bool) -> ast.If | None:
            if isinstance(n, ast.Return) or isinstance(n, ast.Break | ast.Continue) \
                    and not inner:
                return under
            if isinstance(n, ast.If):
                here = n if under is None and self.expr(n.cond) else under
                found = search(n.then, here, inner)
                if found is None and n.orelse is not None:
                    found = search(n.orelse, here, inner)
                return found
            if isinstance(n, ast.Block):
                for c in n.statements:
                    found = search(c, under, inner)
                    if found is not None:
                        return found
            if isinstance(n, ast.For | ast.While):    # its own break; a return leaves
                return search(n.body, under, True)
            return None
        return search(s.body, None, False)

    def loop(self, s: ast.For | ast.While) -> bool:
        """Whether the units may go round ``s`` different numbers of times."""
        return self.header(s) or self.leaves_early(s) is not None

    def _mark(self, name: str | None) -> None:
        if name is not None and name not in self.names and (
                self._markable is None or name in self._markable):
            self.names.add(name)
            self._changed = True

    def _visit(self, stmts: Iterable[ast.Stmt], ctrl: bool) -> None:
        for s in stmts:
            if isinstance(s, ast.Declaration):
                if ctrl or self.expr(s.init):
                    self._mark(s.name)
            elif isinstance(s, ast.Assign | ast.IncDec):
                value = s.value if isinstance(s, ast.Assign) else None
                if ctrl or self.expr(value) or self.expr(s.target):
                    self._mark(root(s.target))
            elif isinstance(s, ast.ExprStmt):
                for n in ast.walk(s.expr):
                    if isinstance(n, ast.Call) and n.func not in PURE:
                        for a in n.args:
                            self._mark(root(a))
            elif isinstance(s, ast.If):
                c = ctrl or self.expr(s.cond)
                self._visit(statements(s.then), c)
                self._visit(statements(s.orelse), c)
            elif isinstance(s, ast.For):
                c = ctrl or self.loop(s)
                if s.init is not None:
                    self._visit((s.init,), c)
                if c and s.init is None and s.update is not None:
                    self._mark(root(s.update.target))
                self._visit(statements(s.body), c)
            elif isinstance(s, ast.While):
                self._visit(statements(s.body), ctrl or self.loop(s))
            elif isinstance(s, ast.Block):
                self._visit(s.statements, ctrl)
            elif isinstance(s, ast.ForEach):
                self._visit(statements(s.body), ctrl)
