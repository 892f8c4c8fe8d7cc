"""Reading MCPL source files: missing files and text that is not UTF-8 become
diagnostics with a location instead of Python exceptions."""

from __future__ import annotations

import os
from pathlib import Path

from mcl.diagnostics import LineIndex, McplError, Span, error
from mcl.mcpl import ast
from mcl.mcpl.builder import parse

#: File extensions of MCPL modules; ``.mcl`` is the legacy one.
EXTENSIONS = (".mcpl", ".mcl")


def read_source(path: str | os.PathLike[str]) -> str:
    """The text of an MCPL file. Raises McplError when it cannot be read or is not UTF-8."""
    name = str(path)
    if "\n" in name:     # text where a path was expected
        raise McplError(error(
            "mcpl-file", f"expected the path of an MCPL file, not MCPL text "
            f"({name.count(chr(10)) + 1} lines beginning {name.lstrip()[:30]!r})", None,
            "parse text with mcl.parse(text) and pass the Module it returns"))
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        if name == "-":
            raise McplError(error(
                "mcpl-file", "'-' (standard input) is not read: mcl reads MCPL files", None,
                "save the kernel to a file (e.g. kernel.mcpl) and give its path")) from None
        raise McplError(error("mcpl-file", f"no such file: {name}", None,
                              "check the path; MCPL files end in .mcpl (or .mcl)")) from None
    except IsADirectoryError:
        raise McplError(error("mcpl-file", f"{name} is a directory, not an MCPL file")) from None
    except OSError as e:
        raise McplError(error("mcpl-file", f"cannot read {name}: {e.strerror}")) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        good = data[: e.start].decode("utf-8", errors="replace")
        line, col = LineIndex(good).position(len(good))
        raise McplError(error(
            "mcpl-encoding", f"this file is not UTF-8 text (byte 0x{data[e.start]:02x})",
            Span.point(name, line, col), "save the file as UTF-8")) from None
    # A byte-order mark is not part of the program.
    return text[1:] if text.startswith("\ufeff") else text


def parse_file(path: str | os.PathLike[str]) -> ast.Module:
    """Parse an MCPL file into a Module (spans name the file as given)."""
    return parse(read_source(path), str(path))
