"""Readable, collision-free names for what translation generates: dimension variables
(``nrThreadsM``, ``nrBlocksM``) and indices of new foreach loops (``bi``, ``bj``,
``tj``), derived from the programmer's own names as in paper Fig. 9."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from mcl.mcpl import ast


def names_in(function: ast.Function) -> set[str]:
    """Every identifier a function declares or mentions (so new names avoid them all)."""
    used = {p.name for p in function.params}
    for node in ast.walk(function.body):
        if isinstance(node, ast.Name):
            used.add(node.id)
        elif isinstance(node, ast.Declaration | ast.View):
            used.add(node.name)
        elif isinstance(node, ast.Call):
            used.add(node.func)
    return used


class NameAllocator:
    """Hands out names that are unused in one function; every name it returns is
    reserved, so two generated variables never clash either."""

    def __init__(self, used: Iterable[str]):
        self.used = set(used)

    def free(self, name: str) -> bool:
        return name not in self.used

    def take(self, name: str) -> str:
        """``name`` itself if free, else ``name2``, ``name3``, ..."""
        candidate, n = name, 2
        while candidate in self.used:
            candidate, n = f"{name}{n}", n + 1
        self.used.add(candidate)
        return candidate

    def take_all(self, options: Sequence[Sequence[str]]) -> list[str]:
        """The first of ``options`` (a list of name sets) whose names are all free, else
        the first one made unique with numbers; all are reserved."""
        for names in options:
            if all(self.free(n) for n in names) and len(set(names)) == len(names):
                self.used.update(names)
                return list(names)
        return [self.take(n) for n in options[0]]


def capitalized(word: str) -> str:
    return word[:1].upper() + word[1:]


_NR_NAME = re.compile(r"nr([A-Z]\w*)$")


def dimension_suffixes(size: ast.Expr, index: str, source_group: str) -> list[str]:
    """Candidate suffixes for the dimension variables of a split foreach, best first:
    the size's name (``m`` -> ``M``, ``nrRows`` -> ``Rows``, ``nrThreadsM`` -> ``M``),
    then the index's name (``tj`` -> ``Tj``)."""
    out: list[str] = []
    if isinstance(size, ast.Name):
        m = _NR_NAME.match(size.id)
        if m is None:
            out.append(capitalized(size.id))
        else:
            rest = m.group(1)
            group = capitalized(source_group)
            if rest.startswith(group) and len(rest) > len(group):
                rest = rest[len(group):]
            if rest != group:
                out.append(capitalized(rest))
    out.append(capitalized(index))
    return list(dict.fromkeys(out))


def dimension_name(group: str, suffix: str) -> str:
    """``nrThreadsM`` for par_group ``threads`` and suffix ``M``."""
    return f"nr{capitalized(group)}{suffix}"


def index_name(group: str, index: str) -> str:
    """``bj`` for the ``blocks`` part of index ``j``: the group's initial and the index."""
    return f"{group[:1].lower()}{index}"
