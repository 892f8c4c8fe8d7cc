"""The function walk of ``check_statements`` against its hardware description: foreach
loops over the description's par_groups in its order, with sizes that do not depend on
the enclosing indices; memory spaces that exist and are visible where they are used (or
a default); barriers on spaces that the surrounding units share."""

from __future__ import annotations

from typing import Any

from mcl.diagnostics import Related
from mcl.mcpl import ast
from mcl.mcpl.check_common import _show, _suggest
from mcl.mcpl.fold import fold_constant
from mcl.mcpl.resolve import Symbol


class _Hardware:
    """A hardware description (mcl.hdl model) that remembers the answers to the
    questions the checks ask for every declaration and loop (which memory
    spaces exist and are visible, the par_groups, ...): the model computes them
    afresh each time, and a large module asks them tens of thousands of times.
    The checkers of all functions of a module share ``memo`` (one per model;
    models do not change)."""

    def __init__(self, model: Any, memo: dict):
        self._model = model
        self._memo = memo

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._model, name)
        if not callable(value):
            return value
        memo = self._memo

        def ask(*args: Any) -> Any:
            key = (name, *(tuple(a) if isinstance(a, list) else a for a in args))
            try:
                return memo[key]
            except KeyError:
                pass
            except TypeError:  # an argument that cannot be a key
                return value(*args)
            memo[key] = answer = value(*args)
            return answer

        return ask


class _HardwareChecks:
    """The checks of foreach loops, memory spaces and barriers; mixed into
    ``_FunctionChecker``, whose state (the description ``hwd``, its par_groups
    ``groups``, the scopes and the walk) they use."""

    def foreach_(self, s: ast.ForEach) -> None:
        gi = -1
        if self.hwd is not None:
            if s.group not in self.groups:
                units = [u.name for u in self.hwd.par_units()]
                hint = _suggest(s.group, self.groups) or (
                    f"the par_groups of '{self.f.hardware}' are: {', '.join(self.groups)}")
                if s.group in units:
                    g = self.hwd.group_of_unit(s.group)
                    hint = f"'{s.group}' is a par_unit; foreach names its par_group '{g.name}'"
                self.error("mcpl-unknown-par-group",
                           f"'{s.group}' is not a par_group of '{self.f.hardware}'", s, hint)
            else:
                gi = self.groups.index(s.group)
                self.result._groups[id(s)] = self.hwd.par_group(s.group)
                self.check_nesting(s, gi)
        # The size is evaluated outside the loop: it must not depend on enclosing indices.
        size = self.expr(s.size)
        if size is not None and (size.name not in ("int", "long", "byte") or size.dims):
            # OpenCL would compare the indices with the float: a grid of 3 units for 2.5
            self.error("mcpl-bad-size", f"the number of units of a foreach must be an "
                       f"integer, not {_show(size)}", s.size,
                       "give the number of units, such as a size of the array" if size.dims
                       else "convert it: `foreach (int i in (int) x threads)`")
        count = fold_constant(s.size, self.constant_value)
        if isinstance(count, int | float) and count < 0:
            self.error("mcpl-bad-size", f"the number of units of a foreach cannot be "
                       f"negative, not {count}", s.size, "give 0 or more units")
        self.check_size_independent(s)
        self.scopes.append({})
        var = s.var
        if var.type.name not in ("int", "long") or var.type.dims:
            self.error("mcpl-bad-index-type", "a foreach index must be an int", var,
                       "write `foreach (int i in n threads)`")
        self.foreach.append((s, gi))
        self.record(var)
        sym = Symbol(var.name, "index", var, var.type, const=var.const, function=self.f.name,
                     foreach=s, index_deps=frozenset({id(s)}))
        if var.space is not None:
            sym.space = self.space_for(var, var.space, var.type, written=False)
        self.declare(sym)
        # a foreach of no units runs its body never; one whose count is not known, always
        self.guarded(None, False if count == 0 else True,
                     lambda: self.loop(s, lambda: self.sub(s.body)),
                     never="the foreach has 0 units")
        self.foreach.pop()
        self.scopes.pop()

    def check_nesting(self, s: ast.ForEach, gi: int) -> None:
        outer = next((g for _, g in reversed(self.foreach) if g >= 0), None)
        if outer is None:
            if gi != 0:
                self.error("mcpl-foreach-order",
                           f"a foreach over '{s.group}' must be nested inside a foreach over "
                           f"'{self.groups[gi - 1]}'", s,
                           f"in '{self.f.hardware}', {self.groups[gi]} are inside "
                           f"{self.groups[gi - 1]}; wrap this loop in "
                           f"`foreach (int b in nb {self.groups[gi - 1]})`")
            return
        if gi == outer or gi == outer + 1:
            return
        if gi < outer:
            self.error("mcpl-foreach-order",
                       f"a foreach over '{s.group}' cannot be inside a foreach over "
                       f"'{self.groups[outer]}'", s,
                       f"'{self.f.hardware}' nests {' > '.join(self.groups)}; "
                       "swap the loops")
        else:
            self.error("mcpl-foreach-order",
                       f"a foreach over '{s.group}' must be directly inside a foreach over "
                       f"'{self.groups[gi - 1]}', not '{self.groups[outer]}'", s,
                       f"'{self.f.hardware}' nests {' > '.join(self.groups)}")

    def check_size_independent(self, s: ast.ForEach) -> None:
        enclosing = {id(fe): fe for fe, _ in self.foreach}
        for n in ast.walk(s.size):
            if not isinstance(n, ast.Name):
                continue
            sym = self.result.declaration_of(n)
            if sym is None:
                continue
            deps = [enclosing[d] for d in sym.index_deps if d in enclosing]
            if deps:
                self.error("mcpl-foreach-size-depends",
                           f"the size of this foreach depends on the index "
                           f"'{deps[0].var.name}' of an enclosing foreach", s.size,
                           "every unit of a par_group must agree on the number of units: "
                           "compute the size from parameters and constants only",
                           [Related(deps[0].var.span, "the enclosing index")])
                return

    def param_space(self, p: ast.Param, written: bool) -> str | None:
        """The memory space of a parameter. A legacy parameter with several spaces
        (`reg main float r`) takes an argument in any of them: each must exist, and
        the parameter's space is the first one visible in the function."""
        if not p.alternatives or self.hwd is None:
            return self.space_for(p, p.space, p.type, written=written, param=True)
        options = [p.space, *p.alternatives]
        visible = {ms.name for ms in self.hwd.visible_memory_spaces(self.enclosing_groups())}
        for s in options:
            if self.hwd.has_memory_space(s) and s in visible:
                return self.space_for(p, s, p.type, written=written, param=True)
        for s in options:
            if not self.hwd.has_memory_space(s):
                return self.space_for(p, s, p.type, written=written, param=True)
        return self.space_for(p, p.space, p.type, written=written, param=True)

    def space_for(self, node: ast.Node, space: str | None, type_: ast.Type, *,
                  written: bool, param: bool = False) -> str | None:
        """Check an explicit memory space, or find the default; returns the space."""
        hwd = self.hwd
        if hwd is None:
            return space
        enclosing = self.enclosing_groups()
        if space is not None:
            if not hwd.has_memory_space(space):
                known = [ms.name for ms in hwd.memory_spaces()]
                what = "a type or memory space" if not param else "a memory space"
                self.error("mcpl-unknown-space",
                           f"'{space}' is not {what} of '{self.f.hardware}'", node,
                           _suggest(space, known) or f"its memory spaces are: {', '.join(known)}")
                return space
            visible = [ms.name for ms in hwd.visible_memory_spaces(enclosing)]
            if space not in visible:
                self.error("mcpl-space-not-visible", self.invisible_message(space), node,
                           self.invisible_hint(space))
            if hwd.memory_space(space).read_only and written:
                self.error("mcpl-write-read-only",
                           f"'{space}' is read-only memory but this variable is written", node,
                           "use a writable memory space")
            return space
        default = hwd.default_memory_space(enclosing)
        if default is not None:
            return default.name
        return None

    def invisible_message(self, space: str) -> str:
        owner = self.hwd.owner_of(space)
        kind = "par_unit" if owner is not None and owner.kind == "par_unit" else "par_group"
        return (f"'{space}' is not visible here: it belongs to {kind} '{owner.name}' "
                f"of '{self.f.hardware}'")

    def invisible_hint(self, space: str) -> str:
        owner = self.hwd.owner_of(space)
        if owner is not None and owner.kind == "par_unit":
            group = self.hwd.group_of_unit(owner.name)
            return f"declare it inside `foreach (... {group.name})`"
        if owner is not None:
            gi = self.groups.index(owner.name)
            if gi > 0:
                return f"declare it inside `foreach (... {self.groups[gi - 1]})`"
        return f"visible here: {', '.join(self.visible_hint().split('one of ')[-1:])}"

    def barrier(self, s: ast.Barrier) -> None:
        hwd = self.hwd
        if not self.foreach:
            self.error("mcpl-barrier-outside-foreach", "a barrier must be inside a foreach", s,
                       "a barrier synchronises the units of a par_group")
        if hwd is None:
            return
        if not hwd.has_memory_space(s.space):
            known = [ms.name for ms in hwd.memory_spaces()]
            self.error("mcpl-unknown-space",
                       f"'{s.space}' is not a memory space of '{self.f.hardware}'", s,
                       _suggest(s.space, known) or f"its memory spaces are: {', '.join(known)}")
            return
        if not self.foreach or self.foreach[-1][1] < 0:
            return
        group = self.groups[self.foreach[-1][1]]
        scopes = hwd.scopes()
        unit_pos = next(i for i, sc in enumerate(scopes)
                        if sc.kind == "par_unit" and hwd.group_of_unit(sc.name) is not None
                        and hwd.group_of_unit(sc.name).name == group)
        owner = hwd.owner_of(s.space)
        owner_pos = 0 if owner is None else next(i for i, sc in enumerate(scopes) if sc is owner)
        visible = [ms.name for ms in hwd.visible_memory_spaces(self.enclosing_groups())]
        if owner_pos >= unit_pos:
            shared = [n for n in visible if (lambda o: 0 if o is None else next(
                i for i, sc in enumerate(scopes) if sc is o))(hwd.owner_of(n)) < unit_pos]
            self.error("mcpl-barrier-private-space",
                       f"barrier({s.space}) synchronises nothing: '{s.space}' is private to "
                       f"each unit of '{group}' ({owner.kind} '{owner.name}')", s,
                       f"name a space the {group} share: {', '.join(shared)}" if shared else
                       None)
        elif s.space not in visible:
            self.error("mcpl-space-not-visible", self.invisible_message(s.space), s,
                       self.invisible_hint(s.space))
