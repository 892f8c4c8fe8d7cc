"""Validation of a built hardware description: the nesting and property tables of the
language reference, names that statements refer to (spaces, par_units, connected
devices), the hierarchy (parent, cycles) and the constraints on a child level of
paper section 6.1. Every problem is a Diagnostic that says what to change."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcl.diagnostics import Diagnostic, Related, Span, article, error, warning
from mcl.hdl import blocks as B
from mcl.hdl import language as L
from mcl.hdl import model as M
from mcl.hdl.build import suggest
from mcl.hdl.hierarchy import (
    NotEquivalent,
    candidate_spaces,
    choose_equivalent,
    equivalent_par_groups,
    find_memory_space,
)

if TYPE_CHECKING:
    from mcl.hdl.library import HardwareLibrary

_ARTICLE = {k: article(k) for k in L.BLOCK_KEYWORDS}


#: Blocks whose required inner block no analysis reads (descriptions of earlier
#: releases omit them): a warning saying what is lost.
_OPTIONAL_INNER = {
    "load_store_group": "the number of its units counts for nothing; add a load_store_unit "
                        "block with the instructions it performs",
    "load_store_unit": "the cost of its loads and stores is unknown; add an instructions "
                       "block, e.g. 'instructions ops { op(\"load\", 4); }'",
}


def validate(hwd: M.HardwareDescription,
             library: HardwareLibrary | None = None) -> list[Diagnostic]:
    """All problems of one description (blocks reused from other descriptions are
    checked where they are placed, not inside)."""
    v = _Validator(hwd, library)
    v.run()
    return v.diags


def _given(b: B.Block, statement: str) -> bool:
    """Whether ``b`` has an argument statement, or one the builder rejected (and
    reported): then it is not missing."""
    return bool(b.calls_named(statement)) or statement in b.rejected


class _Validator:
    def __init__(self, hwd: M.HardwareDescription, library: HardwareLibrary | None):
        self.hwd = hwd
        self.lib = library
        self.diags: list[Diagnostic] = []
        self.space_names = {ms.name for ms in hwd.memory_spaces()}
        self.unit_names = {u.name for u in hwd.par_units()}

    def add(self, d: Diagnostic) -> None:
        if d not in self.diags:
            self.diags.append(d)

    def run(self) -> None:
        self.description_level()
        for b in self.hwd.blocks:
            self.block(b, b.span, None, set())
        self.hierarchy_names()
        self.device_level()
        self.parent_level()

    # ---------------------------------------------------------------- description

    def description_level(self) -> None:
        hwd = self.hwd
        where = hwd.name_span or hwd.span
        parallel = [b for b in hwd.blocks if b.kind == "parallelism"]
        if not parallel:
            self.add(error("hdl-missing-parallelism",
                           f"'{hwd.name}' has no parallelism block", where,
                           "add 'parallelism hierarchy { ... }' with par_groups and memory "
                           "spaces"))
        for extra in parallel[1:]:
            self.add(error("hdl-too-many", "a description has one parallelism block",
                           extra.keyword_span, "merge the parallelism blocks into one"))
        if hwd.device is not None and hwd.device.name != hwd.name:
            # Descriptions of earlier releases name the device after the product (the
            # builder takes a description's only device block as its device).
            self.add(warning("hdl-device-name",
                             f"the device block of '{hwd.name}' is named "
                             f"'{hwd.device.name}'", hwd.device.keyword_span,
                             f"it is taken as the device of '{hwd.name}'; rename it to "
                             f"'{hwd.name}' (the form of this release)"))
        elif hwd.device is None:
            others = [b.name for b in hwd.blocks if b.kind == "device"]
            self.add(error("hdl-missing-device",
                           f"'{hwd.name}' has no device block named '{hwd.name}'", where,
                           f"rename device '{others[0]}' to '{hwd.name}'" if others else
                           f"add 'device {hwd.name} {{ ... }}' holding the memories, "
                           "interconnects and execution groups"))
        placed = {id(p.block) for b in hwd.walk() for p in b.placements}
        for b in hwd.blocks:
            if b.kind in ("parallelism",) or b is hwd.device:
                continue
            if id(b) not in placed:
                self.add(warning("hdl-unused-block",
                                 f"{b.kind} '{b.name}' is defined but never placed", b.span,
                                 f"place it with the statement '{b.name};' inside the device "
                                 "or another block, or remove it"))

    # ---------------------------------------------------------------- blocks

    def anchor(self, block: B.Block, span: Span) -> Span:
        """Where to report a problem inside ``block``: in the block itself when this
        description wrote it, else at the reference statement that placed it here."""
        return span

    def block(self, b: B.Block, anchor: Span, parent: B.Block | None, seen: set[int]) -> None:
        if id(b) in seen:
            return
        seen = seen | {id(b)}
        own = b.origin == self.hwd.name

        def at(span: Span) -> Span:
            return span if own else anchor

        if own:
            self.block_statements(b)
        self.block_names(b, at)
        self.nesting(b, at)
        for p in b.placements:
            child_anchor = p.span if own else anchor
            self.block(p.block, child_anchor, b, seen)

    def block_statements(self, b: B.Block) -> None:
        kind = b.kind
        allowed = L.ALLOWED_PROPERTIES.get(kind, set())
        seen: dict[str, B.Property] = {}
        for p in b.properties:
            if p.name not in allowed:
                where = L.kinds_with_property(p.name)
                self.add(error(
                    "hdl-property-not-allowed", f"{_ARTICLE[kind]} cannot have '{p.name}'",
                    p.span, (f"'{p.name}' belongs in " + ", ".join(where)) if where else
                    f"remove '{p.name}'"))
            elif p.name in seen:
                self.add(error("hdl-duplicate-property", f"'{p.name}' is given twice", p.span,
                               "keep one of them",
                               [Related(seen[p.name].span, "the first one is here")]))
            else:
                seen[p.name] = p
        calls_allowed = L.ALLOWED_CALLS.get(kind, set())
        for c in b.calls:
            if c.name not in calls_allowed:
                where = L.kinds_with_call(c.name)
                self.add(error(
                    "hdl-property-not-allowed", f"{_ARTICLE[kind]} cannot have '{c.name}(...)'",
                    c.span, (f"'{c.name}' belongs in " + ", ".join(where)) if where else
                    f"remove '{c.name}'"))
        ops: dict[str, B.Call] = {}
        for c in b.calls:
            if isinstance(c, B.OpCall) and c.operation in ops:
                self.add(error("hdl-duplicate-property", f"operation '{c.operation}' is "
                               "given twice", c.span, "keep one of them: an operation has "
                               "one cost", [Related(ops[c.operation].span,
                                                    "the first one is here")]))
            elif isinstance(c, B.OpCall):
                ops[c.operation] = c
            # 'mem, mem' is one block joined to itself; 'gpus.gpu[*], gpus.gpu[*]' joins
            # the units of a group to each other (NVLink between the GPUs of a node)
            singles = [e.path for e in c.endpoints if not e.all_units] \
                if isinstance(c, B.ConnectsCall) else []
            if len(set(singles)) < len(singles):
                self.add(error("hdl-bad-arguments", "connects(...) names the same block "
                               "twice: a block is not connected to itself", c.span,
                               "name the two different things this interconnect joins; "
                               "'units.unit[*], units.unit[*]' joins the units of a group "
                               "to each other"))
        for f in b.flags:
            if f.name not in L.ALLOWED_FLAGS.get(kind, set()):
                self.add(error("hdl-property-not-allowed",
                               f"'{f.name}' marks a memory_space, not {_ARTICLE[kind]}",
                               f.span, f"move '{f.name};' into a memory_space block"))
        if kind in L.GROUP_KINDS:
            has_n, has_max = b.prop("nr_units"), b.prop("max_nr_units")
            given = {"nr_units", "max_nr_units"} & set(b.rejected)
            if has_n is None and has_max is None and not given:
                self.add(error(
                    "hdl-missing-property",
                    f"{kind} '{b.name}' needs nr_units (exact) or max_nr_units (upper bound)",
                    b.keyword_span, "add for example 'nr_units = 16;' or "
                                    "'max_nr_units = unlimited;'"))
            elif has_n is not None and has_max is not None:
                self.add(error("hdl-conflicting-property",
                               f"{kind} '{b.name}' has both nr_units and max_nr_units",
                               has_max.span, "keep nr_units for an exact number of units or "
                                             "max_nr_units for an upper bound"))
        if kind in L.MEMORY_KINDS and not _given(b, "space"):
            self.add(error("hdl-missing-property",
                           f"{kind} '{b.name}' does not say which memory space it holds",
                           b.keyword_span, "add 'space(name);' naming a memory_space of the "
                                           "parallelism hierarchy"))
        if kind == "cache" and b.prop("cache_line_size") is None and \
                "cache_line_size" not in b.rejected:
            self.add(warning("hdl-missing-property", f"cache '{b.name}' has no cache_line_size",
                             b.keyword_span, "the cache analysis cannot judge accesses in this "
                             "cache's lines; add for example 'cache_line_size = 128 B;'"))
        if kind == "interconnect" and not _given(b, "connects"):
            self.add(error("hdl-missing-property",
                           f"interconnect '{b.name}' does not say what it connects",
                           b.keyword_span, "add 'connects(a, b);' naming two devices"))
        if kind in L.EXECUTION_GROUPS:
            unit = b.unit if isinstance(b, B.ExecutionGroup) else None
            if not _given(b, "slots") and (unit is None or not _given(unit, "slots")):
                # No analysis asks which par_unit a load/store group serves.
                report = warning if kind == "load_store_group" else error
                self.add(report(
                    "hdl-missing-property",
                    f"{kind} '{b.name}' has no slots: say which par_unit runs on it",
                    b.keyword_span, f"add 'slots(par_unit, number);' to '{b.name}' or its "
                                    f"{L.UNIT_OF_GROUP[kind]}"))
        if kind == "execution_unit" and not _given(b, "slots"):
            self.add(error(
                "hdl-missing-property", f"execution_unit '{b.name}' has no slots",
                b.keyword_span, "add 'slots(par_unit, number);': how many units of a "
                                "par_unit it holds at once"))

    def block_names(self, b: B.Block, at) -> None:
        for c in b.calls:
            if isinstance(c, B.SpaceCall) and c.space not in self.space_names:
                close = suggest(c.space, self.space_names)
                self.add(error(
                    "hdl-unknown-space",
                    f"'{c.space}' is not a memory space of '{self.hwd.name}'",
                    at(c.space_span), (f"did you mean '{close}'? " if close else "")
                    + "memory spaces: " + (", ".join(sorted(self.space_names)) or "none")))
            elif isinstance(c, B.SlotsCall) and c.par_unit not in self.unit_names:
                close = suggest(c.par_unit, self.unit_names)
                hint = (f"did you mean '{close}'? " if close else "")
                if self.hwd.has_par_group(c.par_unit):
                    hint = (f"'{c.par_unit}' is a par_group; slots name its par_unit "
                            f"'{self.hwd.par_group(c.par_unit).unit.name}'. "
                            if self.hwd.par_group(c.par_unit).unit else "")
                self.add(error(
                    "hdl-unknown-par-unit",
                    f"slots name '{c.par_unit}', which is not a par_unit of '{self.hwd.name}'",
                    at(c.par_unit_span), hint + "par_units: "
                    + (", ".join(u.name for u in self.hwd.par_units()) or "none")))
            elif isinstance(c, B.ConnectsCall) and self.hwd.device is not None:
                for e in c.endpoints:
                    target = self.hwd.find_device_block(e.path)
                    if target is None:
                        self.add(error(
                            "hdl-unresolved-endpoint",
                            f"connects names '{e.text}', which is not a device block of "
                            f"'{self.hwd.name}'", at(e.span),
                            "name a memory, cache or execution block placed in the device, "
                            "e.g. 'mem' or 'cores.core[*]'"))
                    elif e.all_units and not target.kind.endswith("_unit"):
                        self.add(error(
                            "hdl-bad-endpoint",
                            f"'[*]' means all units of a group, but '{'.'.join(e.path)}' is "
                            f"{_ARTICLE[target.kind]}", at(e.span),
                            "write '[*]' after a unit of a group: 'cores.core[*]'"))
                self.units_joined_to_each_other(c, at)

    def units_joined_to_each_other(self, c: B.ConnectsCall, at) -> None:
        """``connects(g.u[*], g.u[*])`` joins the units of a group to each other: a group
        of exactly one unit has no other unit to join."""
        ends = c.endpoints
        if len(ends) != 2 or not (ends[0].all_units and ends[1].all_units) \
                or ends[0].path != ends[1].path:
            return
        target = self.hwd.find_device_block(ends[0].path)
        if target is None or not target.kind.endswith("_unit"):
            return
        groups = [p.ancestors[-1] for p in self.hwd.device_positions()
                  if p.block is target and p.ancestors
                  and isinstance(p.ancestors[-1], B.Grouping)]
        if groups and all(g.nr_units == 1 for g in groups):
            self.add(error(
                "hdl-bad-arguments",
                f"connects({ends[0].text}, {ends[1].text}) joins the units of "
                f"'{groups[0].name}' to each other, but it has one unit: a block is not "
                "connected to itself", at(c.span),
                f"give '{groups[0].name}' more than one unit, or connect its unit to "
                "another block"))

    def nesting(self, b: B.Block, at) -> None:
        rows = L.NESTING.get(b.kind, ())
        allowed = L.allowed_children(b.kind)
        names: dict[str, B.Placement] = {}
        for p in b.placements:
            c = p.block
            if c.kind not in allowed:
                hosts = L.parents_allowing(c.kind)
                self.add(error(
                    "hdl-bad-nesting",
                    f"{_ARTICLE[c.kind]} cannot be placed in {_ARTICLE[b.kind]}",
                    at(p.span),
                    (f"move {c.kind} '{c.name}' into " + " or ".join(_ARTICLE[h] for h in hosts))
                    if hosts else f"{c.kind} blocks are top-level only"))
            if c.name in names:
                self.add(error("hdl-duplicate-block",
                               f"{b.kind} '{b.name}' holds two blocks named '{c.name}'",
                               at(p.span), "rename one; references find blocks by name",
                               [Related(names[c.name].span, "the first one is here")]))
            names.setdefault(c.name, p)
        for row in rows:
            count = sum(1 for c in b.children if c.kind in row.inner)
            what = " or ".join(row.inner)
            if row.required and count == 0 and b.kind in _OPTIONAL_INNER:
                self.add(warning("hdl-missing-block",
                                 f"{b.kind} '{b.name}' has no {what}", at(b.keyword_span),
                                 _OPTIONAL_INNER[b.kind]))
            elif row.required and count == 0:
                self.add(error("hdl-missing-block",
                               f"{b.kind} '{b.name}' needs {_ARTICLE[row.inner[0]]}"
                               + (f" (or {' or '.join(row.inner[1:])})" if len(row.inner) > 1
                                  else ""),
                               at(b.keyword_span), f"add a {what} block inside '{b.name}'"))
            if not row.multiple and count > 1:
                extra = [p for p in b.placements if p.block.kind in row.inner][1]
                self.add(error("hdl-too-many",
                               f"{b.kind} '{b.name}' may hold only one {what}",
                               at(extra.span), f"keep one {what}; nest further levels inside "
                                               "its unit"))

    # ---------------------------------------------------------------- the hierarchy

    def hierarchy_names(self) -> None:
        seen: dict[str, B.Block] = {}
        for scope in self.hwd.scopes():
            items: list[B.Block] = list(scope.memory_spaces)
            if not isinstance(scope, B.Parallelism):
                items.append(scope)
            for item in items:
                if item.name in seen and seen[item.name] is not item:
                    self.add(error(
                        "hdl-duplicate-name",
                        f"the name '{item.name}' is used twice in the parallelism hierarchy",
                        item.span if item.origin == self.hwd.name else self.hwd.span,
                        "give memory spaces, par_groups and par_units distinct names; "
                        "MCPL code refers to them by name",
                        [Related(seen[item.name].span, "the other one")]))
                seen.setdefault(item.name, item)
            defaults = [ms for ms in scope.memory_spaces if ms.is_default]
            for extra in defaults[1:]:
                self.add(error("hdl-two-defaults",
                               f"two memory spaces of '{scope.name}' are marked default",
                               extra.span, "mark at most one memory space per scope default"))

    def device_level(self) -> None:
        hwd = self.hwd
        if hwd.device is None or hwd.parallelism is None:
            return
        unit = hwd.executing_unit()
        if unit is not None and not hwd.slots(unit.name):
            self.add(warning(
                "hdl-no-slots", f"no execution unit has slots for the executing par_unit "
                f"'{unit.name}'", hwd.device.keyword_span,
                f"add 'slots({unit.name}, 1);' to the execution units that run it"))
        for ms in hwd.memory_spaces():
            if not hwd.memories_holding(ms.name):
                self.add(warning(
                    "hdl-space-without-memory",
                    f"no memory of the device holds memory space '{ms.name}'",
                    ms.span if ms.origin == hwd.name else hwd.device.keyword_span,
                    f"add 'space({ms.name});' to the memory that holds it, so that analyses "
                    "know how fast it is"))

    # ---------------------------------------------------------------- parent / child

    def parent_level(self) -> None:
        hwd, lib = self.hwd, self.lib
        if hwd.parent is None:
            if hwd.name != "perfect":
                self.add(warning(
                    "hdl-no-parent", f"'{hwd.name}' does not specialise another description",
                    hwd.name_span or hwd.span,
                    "add 'specializes perfect;' (or another level) so that kernels can be "
                    "translated to it"))
            return
        if lib is None:
            return
        span = hwd.parent_span or hwd.span
        if hwd.parent == hwd.name:
            self.add(error("hdl-specializes-cycle", f"'{hwd.name}' specializes itself", span,
                           "name the level above it, e.g. 'specializes perfect;'"))
            return
        if hwd.parent not in lib:
            close = suggest(hwd.parent, lib.names())
            self.add(error(
                "hdl-missing-parent", f"'{hwd.name}' specializes '{hwd.parent}', which is not "
                "a known hardware description", span,
                (f"did you mean '{close}'? " if close else "")
                + "add its directory with --hwd-path or MCL_HWD_PATH"))
            return
        if lib.is_broken(hwd.parent):
            errors = lib.diagnostics(hwd.parent)
            first = next((d for d in errors if d.span is not None), None)
            file = lib.file(hwd.parent)
            self.add(error(
                "hdl-broken-dependency",
                f"'{hwd.name}' specializes '{hwd.parent}', whose description does not parse "
                f"({file})", span,
                f"fix the syntax error in {file} first (mcl hwd check {file}); '{hwd.name}' "
                f"is checked against '{hwd.parent}' once it parses",
                [Related(first.span, first.message)] if first else []))
            return
        chain = [hwd.name]
        p: str | None = hwd.parent
        while p is not None and p in lib:
            if p in chain:
                cycle = " -> ".join(chain[chain.index(p):] + [p]) if p != hwd.name else \
                    " -> ".join(chain + [p])
                self.add(error("hdl-specializes-cycle",
                               f"the specializes relation forms a cycle: {cycle}", span,
                               "the hierarchy is a tree rooted at perfect; break the cycle"))
                return
            chain.append(p)
            p = lib.parent(p)
        if chain[-1] != "perfect" and p is None and not any(lib.is_broken(n) for n in chain):
            self.add(warning("hdl-not-under-perfect",
                             f"'{hwd.name}' is not below 'perfect' in the hierarchy", span,
                             "specialise a level of the library"))
        self.child_constraints(lib.model(hwd.parent))

    def child_constraints(self, parent: M.HardwareDescription) -> None:
        hwd = self.hwd
        span = hwd.parent_span or hwd.span
        if parent.parallelism is None or hwd.parallelism is None or not parent.par_groups() \
                or not hwd.par_groups():
            return
        try:
            mapping = equivalent_par_groups(parent, hwd)
        except NotEquivalent as e:
            where = e.target.span if e.target is not None and e.target.origin == hwd.name \
                else span
            self.add(error(
                "hdl-child-hierarchy",
                f"the parallelism of '{hwd.name}' does not refine that of '{parent.name}': "
                f"{e.reason}", where,
                "a child may only add par_groups and memory spaces, and split a par_group "
                "into nested ones with more specific numbers of units (unlimited threads -> "
                "65535 blocks x 1024 threads)",
                [Related(e.source.span, f"the par_group of '{parent.name}'")]
                if e.source is not None else []))
            return
        for ms in parent.memory_spaces():
            found = find_memory_space(mapping, parent, ms.name)
            if found is None:
                continue
            level, in_unit = found
            cands = candidate_spaces(mapping, level, in_unit)
            if choose_equivalent(ms, cands) is not None:
                continue
            targets = mapping[level].targets
            if in_unit:
                last = targets[-1]
                place = f"par_unit '{last.unit.name}'" if isinstance(last, B.ParGroup) and \
                    last.unit else "the innermost new par_unit"
            else:
                place = "the parallelism block" if isinstance(targets[0], B.Parallelism) \
                    else f"par_group '{targets[0].name}'"
            kind = "read-only " if ms.read_only else ""
            self.add(error(
                "hdl-child-memory-space",
                f"memory space '{ms.name}' of '{parent.name}' has no {kind}equivalent in "
                f"'{hwd.name}'", span,
                f"declare a {'' if ms.read_only else 'writable '}memory space in {place}: the "
                "spaces of a split par_group go to the outermost new group, those of its "
                "par_unit to the innermost new unit",
                [Related(ms.span, f"'{ms.name}' is declared here")]))
