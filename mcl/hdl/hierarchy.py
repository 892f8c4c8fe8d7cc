"""Equivalence between a description and its child (paper, section 6.1 and appendix
A.2-A.3): which par_groups of the child a par_group of the parent maps to, and which
memory space of the child stands for a memory space of the parent. Validation uses
it to check the child constraints; translation uses it to lower kernels."""

from __future__ import annotations

from dataclasses import dataclass

from mcl.hdl.blocks import MemorySpace, Parallelism, ParGroup, ParUnit
from mcl.hdl.model import HardwareDescription
from mcl.hdl.units import count_key, count_product

#: a par_group, or the parallelism block as the outermost "group" (appendix A)
Scope = ParGroup | Parallelism


@dataclass(frozen=True)
class GroupMapping:
    """One level of the mapping: ``source`` of the parent maps to ``targets`` of the
    child (more than one where the child splits the group), outermost first."""

    source: Scope
    targets: tuple[Scope, ...]


class NotEquivalent(Exception):
    """The child's hierarchy cannot represent the parent's; ``reason`` says why and
    ``source``/``target`` name the groups where the comparison failed."""

    def __init__(self, reason: str, source: Scope | None = None, target: Scope | None = None):
        super().__init__(reason)
        self.reason = reason
        self.source = source
        self.target = target


def _parent_scope(hwd: HardwareDescription, g: Scope) -> Scope:
    """The par_group around ``g`` (the parallelism block for the outermost)."""
    groups = hwd.par_groups()
    for i, x in enumerate(groups):
        if x is g:
            return groups[i - 1] if i > 0 else hwd.parallelism
    return hwd.parallelism


def _size(g: Scope):
    return g.size if isinstance(g, ParGroup) else 1


def equivalent_par_groups(parent: HardwareDescription,
                          child: HardwareDescription) -> list[GroupMapping]:
    """FINDEQUIVALENTPARGROUPS of appendix A.2, starting from the executing par_groups.
    The result is ordered outermost first and starts with the parallelism blocks.
    Raises :class:`NotEquivalent` if the child is not a valid refinement."""
    src, dst = parent.executing_group(), child.executing_group()
    if src is None or dst is None or parent.parallelism is None or child.parallelism is None:
        raise NotEquivalent("a description without par_groups cannot be compared")
    mapping: list[list] = [[src, [dst]]]
    for _ in range(4 * (len(parent.par_groups()) + len(child.par_groups()) + 2)):
        frm, to = mapping[0][0], mapping[0][1]
        if isinstance(frm, Parallelism) and isinstance(to[0], Parallelism):
            return [GroupMapping(m[0], tuple(m[1])) for m in mapping]
        if isinstance(frm, Parallelism) or isinstance(to[0], Parallelism):
            extra = to[0] if isinstance(frm, Parallelism) else frm
            raise NotEquivalent(
                f"par_group '{extra.name}' has no counterpart: the levels of parallelism "
                "do not line up", frm if isinstance(frm, ParGroup) else None,
                to[0] if isinstance(to[0], ParGroup) else None)
        parent_from = _parent_scope(parent, frm)
        parent_to = _parent_scope(child, to[0])
        n_from, n_to = _size(frm), count_product(_size(g) for g in to)
        if count_key(n_from) == count_key(n_to):
            mapping.insert(0, [parent_from, [parent_to]])
        elif count_key(n_from) < count_key(n_to):
            names = " x ".join(g.name for g in to)
            raise NotEquivalent(
                f"par_group '{frm.name}' of '{parent.name}' has {n_from} units, fewer than "
                f"the {n_to} of {names} in '{child.name}'", frm, to[0])
        elif isinstance(parent_to, Parallelism):
            mapping.insert(0, [parent_from, [parent_to]])
        else:
            mapping[0][1] = [parent_to] + to
    raise NotEquivalent("the parallelism hierarchies could not be matched")


def find_memory_space(mapping: list[GroupMapping], hwd: HardwareDescription,
                      space: str) -> tuple[int, bool] | None:
    """(level in ``mapping``, declared in the par_unit?) of a space of the parent."""
    for level, m in enumerate(mapping):
        src = m.source
        if any(ms.name == space for ms in src.memory_spaces):
            return level, False
        unit = src.unit if isinstance(src, ParGroup) else None
        if unit is not None and any(ms.name == space for ms in unit.memory_spaces):
            return level, True
    return None


def candidate_spaces(mapping: list[GroupMapping], level: int,
                     in_unit: bool) -> tuple[MemorySpace, ...]:
    """Where an equivalent must be: the innermost new unit for a space of a par_unit,
    the outermost new group for a space of a par_group (appendix A.3)."""
    targets = mapping[level].targets
    if in_unit:
        last = targets[-1]
        unit: ParUnit | None = last.unit if isinstance(last, ParGroup) else None
        return unit.memory_spaces if unit is not None else ()
    return targets[0].memory_spaces


def choose_equivalent(space: MemorySpace,
                      candidates: tuple[MemorySpace, ...]) -> MemorySpace | None:
    """Prefer a space of the same read-only-ness; a read-only space may map to a
    writable one, never the other way round (appendix A.3)."""
    for c in candidates:
        if c.read_only == space.read_only:
            return c
    if space.read_only and candidates:
        return candidates[0]
    return None


def equivalent_memory_space(parent: HardwareDescription, child: HardwareDescription,
                            space: str,
                            mapping: list[GroupMapping] | None = None) -> MemorySpace | None:
    """The memory space of ``child`` that stands for ``space`` of ``parent``."""
    if mapping is None:
        mapping = equivalent_par_groups(parent, child)
    found = find_memory_space(mapping, parent, space)
    if found is None:
        return None
    level, in_unit = found
    return choose_equivalent(parent.memory_space(space), candidate_spaces(mapping, level, in_unit))
