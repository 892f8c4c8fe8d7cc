"""The arguments of Lift's Python API (``parse``, ``explore``, ``bind_sizes``, ...) checked
where they come in: one of the wrong kind (a number for a program or a path, a dict of
sizes with a name the program does not use) is refused with an error naming the
function and the argument, instead of an AttributeError from deep inside or a search
that runs before anything fails."""

from __future__ import annotations

import difflib
import numbers
import os
from collections.abc import Mapping
from typing import Any

from mcl.diagnostics import McplError, error


class LiftArgumentError(McplError, TypeError):
    """An argument of the wrong kind: a project error (code ``lift-argument``, which the
    CLI prints as a diagnostic) and a TypeError, as Python's own are."""

    def __init__(self, function: str, argument: str, message: str, hint: str | None = None):
        super().__init__(error("lift-argument", f"{function}: {argument} {message}",
                               hint=hint))


def _kind(value: Any) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 40 else text[:37] + '...'}"


def program_argument(value: Any, function: str, argument: str = "program") -> Any:
    """``value`` where a :class:`~mcl.lift.ir.Program` is taken; refuses anything else,
    with the way to get one from a text or a path."""
    from mcl.lift.ir import Program
    if isinstance(value, Program):
        return value
    if isinstance(value, str) and "\n" not in value and value.strip().endswith(".lift"):
        hint = f"read the file first: mcl.lift.parse_file({value!r})"
    elif isinstance(value, str):
        hint = "parse the text first: mcl.lift.parse(text)"
    elif isinstance(value, os.PathLike):
        hint = "read the file first: mcl.lift.parse_file(path)"
    else:
        hint = "get one with mcl.lift.parse(text) or mcl.lift.parse_file(path)"
    raise LiftArgumentError(function, argument, f"is a Lift Program, not {_kind(value)}",
                            hint)


def text_argument(value: Any, function: str, argument: str = "text") -> str:
    """``value`` where the text of a program is taken."""
    if isinstance(value, str):
        return value
    if isinstance(value, bytes | bytearray):
        hint = "decode it first: .decode('utf-8')"
    elif isinstance(value, os.PathLike):
        hint = "mcl.lift.parse_file(path) reads a file"
    else:
        hint = None
    raise LiftArgumentError(function, argument, f"is the text of a Lift program (a str), "
                            f"not {_kind(value)}", hint)


def path_argument(value: Any, function: str, argument: str = "path",
                  optional: bool = False) -> Any:
    """``value`` where the path of a file is taken (None too, with ``optional``)."""
    if (optional and value is None) or isinstance(value, os.PathLike):
        return value
    if isinstance(value, str):
        if "\n" in value:
            raise LiftArgumentError(function, argument, "is the path of a file, not the text "
                                    f"of a program ({value.count(chr(10)) + 1} lines)",
                                    "parse text with mcl.lift.parse(text)")
        return value
    raise LiftArgumentError(function, argument, "is the path of a file (a str or a "
                            f"pathlib.Path){' or None' if optional else ''}, not "
                            f"{_kind(value)}")


def int_argument(value: Any, function: str, argument: str, what: str = "1 or more") -> int:
    """``value`` where a whole number is taken (its range, ``what``, is the caller's to
    check)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise LiftArgumentError(function, argument, f"is a whole number ({what}), not "
                                f"{_kind(value)}")
    return int(value)


def sizes_argument(sizes: Any, function: str | None = None,
                   argument: str = "sizes") -> dict[str, int]:
    """``sizes`` (a mapping of size names, or sympy symbols, to positive ints) as a dict
    of names; refuses another kind of value, a name that is not a str and a value that
    is not a positive int, naming it (and ``function``, where given)."""
    import sympy
    owner = function or "mcl.lift"
    if not isinstance(sizes, Mapping):
        raise LiftArgumentError(owner, argument, "maps size names to positive integers "
                                f"(a dict such as {{'N': 1024}}), not {_kind(sizes)}")
    out: dict[str, int] = {}
    for name, value in sizes.items():
        if isinstance(name, sympy.Symbol):
            name = name.name
        if not isinstance(name, str):
            raise LiftArgumentError(owner, argument, "names sizes by str (such as 'N'), not "
                                    f"by {_kind(name)}")
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
            raise McplError(error("lift-size", (f"{function}: " if function else "")
                                  + f"size {name} = {value!r}: a size is a positive integer"))
        out[name] = int(value)
    return out


def sizes_of_program(sizes: dict[str, int], prog: Any, function: str,
                     argument: str = "sizes") -> None:
    """Refuse a size name ``prog`` does not use, and a size of it without a value, at once
    and naming the program's sizes (before, an unknown name was carried through a
    whole search, and a missing one failed deep inside with "Cannot convert symbols
    to int"). A program whose sizes are bound already has none to check against."""
    from mcl.lift.ir import size_names
    known = size_names(prog)
    if not known:
        return      # bound already (or of no sizes): the names cannot be checked
    listed = ", ".join(known) if known else "none"
    unknown = [n for n in sizes if n not in known]
    if unknown:
        close = [k for n in unknown for k in known if k.lower() == n.lower()] or \
            [m for n in unknown for m in difflib.get_close_matches(n, known, n=1)]
        raise McplError(error(
            "lift-size", f"{function}: {argument} names {_names(unknown)}, which "
            f"'{prog.name}' does not use (its sizes: {listed})",
            hint=f"did you mean '{close[0]}'?" if close else None))
    missing = [n for n in known if n not in sizes]
    if missing:
        raise McplError(error(
            "lift-size", f"{function}: {argument} gives no value for {_names(missing)} "
            f"(the sizes of '{prog.name}': {listed})",
            hint="mcl.lift.explore.default_sizes(program, sizes) gives values for the "
                 "sizes not given"))


def _names(names: list[str]) -> str:
    return ("size " if len(names) == 1 else "sizes ") + ", ".join(f"'{n}'" for n in names)
