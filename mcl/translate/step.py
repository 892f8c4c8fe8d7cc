"""One translation step of a function, from a hardware description to one of its
children (paper 004, appendix A.1 TRANSLATE): equivalent par_groups (A.2, computed by
:func:`mcl.hdl.equivalent_par_groups`), memory spaces of parameters, declarations and
barriers (A.3), references to hierarchy properties, and foreach statements (A.4),
split into dimension statements, new foreach statements and indexing statements
where a par_group of the parent becomes several par_groups of the child.

Unlike the paper, sizes need not divide: the outermost new dimension is rounded up
and the body guarded (see :mod:`mcl.translate.guard`), unless the sizes are known to
divide or the caller asks to assume that they do.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from mcl.diagnostics import Diagnostic, McplError, Related, error
from mcl.hdl import (
    GroupMapping,
    HardwareDescription,
    NotEquivalent,
    ParGroup,
    equivalent_memory_space,
    equivalent_par_groups,
)
from mcl.mcpl import ast
from mcl.translate.consts import PropertyLookup, const_env, evaluate
from mcl.translate.guard import guard
from mcl.translate.naming import (
    NameAllocator,
    dimension_name,
    dimension_suffixes,
    index_name,
    names_in,
)

INT = ast.Type("int")
CHILD_RULE = ("a child may only add par_groups and memory spaces, and split a par_group into "
              "nested ones with more specific numbers of units; the memory spaces of a split "
              "par_group go to the outermost new group, those of its par_unit to the "
              "innermost new unit (paper section 6.1)")


def group_mapping(source: HardwareDescription, target: HardwareDescription,
                  span=None) -> list[GroupMapping]:
    """Appendix A.2 for one step, with a failure turned into a diagnostic."""
    try:
        return equivalent_par_groups(source, target)
    except NotEquivalent as e:
        related = [Related(e.source.span, f"the par_group of '{source.name}'")] \
            if e.source is not None else []
        raise McplError(error(
            "translate-not-equivalent",
            f"cannot translate from '{source.name}' to '{target.name}': {e.reason}",
            span, CHILD_RULE, related)) from None


def translate_step(function: ast.Function, source: HardwareDescription,
                   target: HardwareDescription, lookup: PropertyLookup, *,
                   assume_divisible: bool = False) -> ast.Function:
    """``function`` (written for ``source``) rewritten for ``target``, a direct child
    of ``source``. Raises McplError when something has no equivalent."""
    return _Step(function, source, target, lookup, assume_divisible).run()


def _product(exprs: Sequence[ast.Expr]) -> ast.Expr:
    out = exprs[0]
    for e in exprs[1:]:
        out = ast.Binary("*", out, e)
    return out


def _with_blank_line(s: ast.Stmt) -> ast.Stmt:
    """``s`` preceded by an empty line (once)."""
    if s.comments[:1] == ("",):
        return s
    return dataclasses.replace(s, comments=("", *s.comments))


def _without_blank_line(s: ast.Stmt) -> ast.Stmt:
    if s.comments[:1] == ("",):
        return dataclasses.replace(s, comments=s.comments[1:])
    return s


def _free_names(e: ast.Node) -> set[str]:
    return {n.id for n in ast.walk(e) if isinstance(n, ast.Name)}


class _Step:
    def __init__(self, function: ast.Function, source: HardwareDescription,
                 target: HardwareDescription, lookup: PropertyLookup, assume_divisible: bool):
        self.f = function
        self.src = source
        self.dst = target
        self.lookup = lookup
        self.assume_divisible = assume_divisible
        self.mapping = group_mapping(source, target, function.span)
        self.targets: dict[str, tuple[ParGroup, ...]] = {
            m.source.name: tuple(t for t in m.targets if isinstance(t, ParGroup))
            for m in self.mapping if isinstance(m.source, ParGroup)}
        self.names = NameAllocator(names_in(function))
        self.env = const_env(function, lookup)
        self.diagnostics: list[Diagnostic] = []
        # Dimension statements that only depend on function-level names are placed
        # before the top-level statement being translated; identical ones are shared.
        self.hoisted: list[ast.Stmt] = []
        self.hoisted_names: dict[str, str] = {}
        self.top_names: set[str] = {p.name for p in function.params}

    # ------------------------------------------------------------------ driver

    def run(self) -> ast.Function:
        params = tuple(self.param_spaces(p) if p.space is not None else p
                       for p in self.f.params)
        body = ast.transform(self.f.body, self.spaces_and_refs)
        out: list[ast.Stmt] = []
        for s in body.statements:
            new = self.stmt(s)
            if self.hoisted:
                dims = self.hoisted
                if out and s.comments[:1] == ("",):
                    dims[0] = _with_blank_line(dims[0])
                out.extend(dims)
                new[0] = dataclasses.replace(new[0], comments=("", *_without_blank_line(
                    new[0]).comments))
                self.hoisted = []
            out.extend(new)
            if isinstance(s, ast.Declaration):
                self.top_names.add(s.name)
                self.top_names.update(v.name for v in s.views)
            elif isinstance(s, ast.AsStatement):
                self.top_names.update(v.name for v in s.views)
        if any(d.is_error for d in self.diagnostics):
            raise McplError(self.diagnostics)
        return dataclasses.replace(self.f, hardware=self.dst.name, params=params,
                                   body=dataclasses.replace(body, statements=tuple(out)))

    # ------------------------------------------------------------------ memory spaces (A.3)

    def param_spaces(self, p: ast.Param) -> ast.Param:
        """A parameter with its memory space (and the alternatives of a legacy
        `reg main float r`) mapped to this level's equivalents."""
        space = self.space(p.space, p)
        others = (self.space(s, p) for s in p.alternatives)
        return dataclasses.replace(p, space=space, alternatives=tuple(
            dict.fromkeys(s for s in others if s is not None and s != space)))

    def space(self, name: str | None, node: ast.Node) -> str | None:
        if name is None or not self.src.has_memory_space(name):
            return name  # unknown spaces are the checker's business
        eq = equivalent_memory_space(self.src, self.dst, name, self.mapping)
        if eq is None:
            self.diagnostics.append(error(
                "translate-no-equivalent-space",
                f"memory space '{name}' of '{self.src.name}' has no equivalent in "
                f"'{self.dst.name}'", node.span, CHILD_RULE,
                [Related(self.src.memory_space(name).span, f"'{name}' is declared here")]))
            return name
        return eq.name

    def spaces_and_refs(self, node: ast.Node) -> ast.Node | None:
        if isinstance(node, ast.Declaration) and node.space is not None:
            return dataclasses.replace(node, space=self.space(node.space, node))
        if isinstance(node, ast.Barrier):
            return dataclasses.replace(node, space=self.space(node.space, node))
        if isinstance(node, ast.HwdRef):
            return self.hwd_ref(node)
        return None

    # ------------------------------------------------------------------ property references

    def units_ref(self, group: ParGroup) -> ast.HwdRef | None:
        """The number of units of a par_group of the target, exact or at most."""
        prop = "nr_units" if group.nr_units is not None else \
            "max_nr_units" if group.max_nr_units is not None else None
        if prop is None or self.lookup(self.dst.par_group_path(group) + (prop,)) is None:
            return None  # unlimited or countable: no number to use
        return ast.HwdRef(self.dst.par_group_path(group) + (prop,))

    def hwd_ref(self, e: ast.HwdRef) -> ast.Expr:
        """``gpu.hierarchy.blocks.block.threads.max_nr_units`` of the source becomes the
        same property of the equivalent par_groups (their product where it is split).
        Other properties stay references to the level they name."""
        p = e.path
        if (len(p) < 4 or p[0] != self.src.name or self.src.parallelism is None
                or p[1] != self.src.parallelism.name or p[-1] not in ("nr_units", "max_nr_units")
                or p[-2] not in self.targets):
            return e
        refs = [self.units_ref(t) for t in self.targets[p[-2]]]
        if not refs or any(r is None for r in refs):
            return e
        return _product([dataclasses.replace(r, span=e.span) for r in refs if r is not None])

    # ------------------------------------------------------------------ statements (A.4)

    def stmts(self, stmts: Sequence[ast.Stmt]) -> tuple[ast.Stmt, ...]:
        return tuple(x for s in stmts for x in self.stmt(s))

    def one(self, s: ast.Stmt) -> ast.Stmt:
        out = self.stmt(s)
        return out[0] if len(out) == 1 else ast.Block(tuple(out))

    def stmt(self, s: ast.Stmt) -> list[ast.Stmt]:
        if isinstance(s, ast.ForEach):
            return self.foreach(s)
        if isinstance(s, ast.Block):
            return [dataclasses.replace(s, statements=self.stmts(s.statements))]
        if isinstance(s, ast.If):
            orelse = self.one(s.orelse) if s.orelse is not None else None
            return [dataclasses.replace(s, then=self.one(s.then), orelse=orelse)]
        if isinstance(s, ast.For | ast.While):
            return [dataclasses.replace(s, body=self.one(s.body))]
        return [s]

    def foreach(self, s: ast.ForEach) -> list[ast.Stmt]:
        targets = self.targets.get(s.group)
        if targets is None:
            return [dataclasses.replace(s, body=self.one(s.body))]  # the checker reports it
        if len(targets) == 1:  # TRANSLATEFOREACHSIMPLE
            return [dataclasses.replace(s, group=targets[0].name, body=self.one(s.body))]
        return self.split(s, targets)

    def nest(self, s: ast.ForEach) -> tuple[list[ast.ForEach], list[tuple[tuple, tuple]]]:
        """The dimensions of a foreach (GETNRDIMENSIONS): directly nested foreach
        statements of the same par_group, with the declarations between them."""
        nest, between = [s], []
        cur = s
        while True:
            body = ast.statements_of(cur.body)
            same = [x for x in body if isinstance(x, ast.ForEach) and x.group == s.group]
            if len(same) != 1 or not all(
                    x is same[0] or isinstance(x, ast.Declaration | ast.AsStatement)
                    for x in body):
                return nest, between
            i = body.index(same[0])
            between.append((body[:i], body[i + 1:]))
            nest.append(same[0])
            cur = same[0]

    def split(self, s: ast.ForEach, targets: tuple[ParGroup, ...]) -> list[ast.Stmt]:
        """TRANSLATEFOREACHADVANCED and CREATEFOREACH: the last dimension is split over
        all ``targets``, the others go to the outermost one."""
        nest, between = self.nest(s)
        last = nest[-1]
        size = last.size
        suffixes = dimension_suffixes(size, last.var.name, s.group)
        dim_vars = self.names.take_all(
            [[dimension_name(t.name, suf) for t in targets] for suf in suffixes])
        idx_vars = self.names.take_all([[index_name(t.name, last.var.name) for t in targets]])

        # Dimension statements, innermost first: the inner groups take the number of
        # units the description gives, the outermost the rest of the iterations.
        hoist = _free_names(size) <= self.top_names
        local_dims: list[ast.Stmt] = []
        dims: list[ast.Expr] = [ast.Literal(0)] * len(targets)
        inner_values: list[int | None] = []
        for k in range(len(targets) - 1, 0, -1):
            ref = self.units_ref(targets[k])
            if ref is None:
                raise McplError(error(
                    "translate-unbounded-group",
                    f"par_group '{targets[k].name}' of '{self.dst.name}' has no number of "
                    f"units, so '{s.group}' cannot be split over it", s.span, CHILD_RULE))
            inner_values.append(self.lookup(ref.path))
            dims[k] = self.dimension(dim_vars[k], ref, hoist, local_dims)
        inner = _product(dims[1:])
        s_value = evaluate(size, self.env, self.lookup)
        known = None if s_value is None or None in inner_values else s_value
        divides = known is not None and known % _prod(inner_values) == 0
        if self.assume_divisible and known is not None and not divides:
            # The assumption is known to be false: exact division would drop iterations.
            units = _prod(inner_values)
            raise McplError(error(
                "translate-not-divisible",
                f"--assume-divisible: the {known} iterations of this foreach are not a "
                f"multiple of {units}, the units of "
                f"{' x '.join(repr(t.name) for t in targets[1:])} of '{self.dst.name}': "
                f"exact division would leave out {known % units} of them",
                s.span, f"translate without --assume-divisible (the last units are then "
                        f"guarded), or make the size a multiple of {units}"))
        guarded = not divides and not self.assume_divisible
        if guarded:
            total = ast.Binary("/", ast.Binary("-", ast.Binary("+", size, inner), ast.Literal(1)),
                               inner)
            comments: tuple[str, ...] = ()
        else:
            total = ast.Binary("/", size, inner)
            comments = () if divides else (
                f"// --assume-divisible: {print_expr(size)} is taken to be a multiple of "
                f"{print_expr(inner)}",)
        dims[0] = self.dimension(dim_vars[0], total, hoist, local_dims, comments)

        # Indexing statements (CREATEINDEXINGSTAT): the old indices from the new ones.
        indexing: list[ast.Stmt] = []
        renamed: list[str] = []
        for a, d in enumerate(nest[:-1]):
            mentioned = any(d.var.name in _free_names(x)
                            for before, after in between[a:] for x in before + after)
            if mentioned:  # a declaration between the loops uses it: keep the name
                renamed.append(d.var.name)
                continue
            new = self.names.take(index_name(targets[0].name, d.var.name))
            renamed.append(new)
            indexing.append(ast.Declaration(d.var.type, d.var.name, init=ast.Name(new)))
        terms = [ast.Binary("*", ast.Name(v), _product(dims[k + 1:]))
                 for k, v in enumerate(idx_vars[:-1])] + [ast.Name(idx_vars[-1])]
        index_expr = terms[0]
        for t in terms[1:]:
            index_expr = ast.Binary("+", index_expr, t)
        indexing.append(ast.Declaration(last.var.type, last.var.name, init=index_expr))

        # The body: other par_groups inside are translated; guarded if rounded up.
        body_stmts = self.stmts(ast.statements_of(last.body))
        if guarded:
            body_stmts = guard(body_stmts, ast.Binary("<", ast.Name(last.var.name), size))
        if body_stmts:
            body_stmts = (_with_blank_line(body_stmts[0]), *body_stmts[1:])
        end = last.body.end_comments if isinstance(last.body, ast.Block) else ()
        node: ast.Stmt = ast.Block((*indexing, *body_stmts), end_comments=end)
        for k in range(len(targets) - 1, -1, -1):
            loop = ast.ForEach(ast.Declaration(INT, idx_vars[k]), dims[k], targets[k].name,
                               node if isinstance(node, ast.Block) else ast.Block((node,)),
                               comments=last.comments if k == 0 else (), span=last.span)
            node = loop
        for a in range(len(nest) - 2, -1, -1):
            d = nest[a]
            before, after = between[a]
            body = ast.Block((*self.stmts(before), node, *self.stmts(after)),
                             end_comments=d.body.end_comments
                             if isinstance(d.body, ast.Block) else ())
            node = ast.ForEach(dataclasses.replace(d.var, name=renamed[a]), d.size,
                               targets[0].name, body, comments=d.comments, span=d.span)
        if local_dims:
            node = _with_blank_line(node)
        return [*local_dims, node]

    def dimension(self, name: str, value: ast.Expr, hoist: bool, local: list[ast.Stmt],
                  comments: tuple[str, ...] = ()) -> ast.Name:
        """A dimension statement ``const int name = value;`` (shared with an identical
        earlier one at function level); the variable to use."""
        if hoist:
            key = print_expr(value)
            if key in self.hoisted_names and not comments:
                return ast.Name(self.hoisted_names[key])
            self.hoisted_names[key] = name
        decl = ast.Declaration(INT, name, const=True, init=value, comments=comments)
        (self.hoisted if hoist else local).append(decl)
        return ast.Name(name)


def _prod(values: list[int | None]) -> int:
    out = 1
    for v in values:
        out *= v or 1
    return out


def print_expr(e: ast.Expr) -> str:
    from mcl.mcpl.printer import print_expr as p

    return p(e)
