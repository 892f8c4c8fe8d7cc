"""Customising functions: OpenCL C source given as a string (its first function that
no other function of the string calls: helpers may come first) or an MCPL function of
a module, emitted by mcl's OpenCL generator.

A :class:`UserFunction` knows its name, return type and parameters, and maps a line
of the OpenCL compiler's log back to the user's string or MCPL file."""

from __future__ import annotations

import functools
import inspect
import os
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mcl.diagnostics import Diagnostic, McplError, Severity, Span, error
from mcl.skel.errors import skel_error

#: OpenCL C scalar types and their numpy dtypes
CTYPES = {"float": np.float32, "double": np.float64, "int": np.int32, "uint": np.uint32,
          "unsigned int": np.uint32, "long": np.int64, "ulong": np.uint64,
          "unsigned long": np.uint64, "short": np.int16, "ushort": np.uint16,
          "char": np.int8, "uchar": np.uint8, "unsigned char": np.uint8}


_CTYPE_OF: dict = {}


def ctype_of(dtype) -> str:
    known = _CTYPE_OF.get(dtype)        # asked for at every skeleton call
    if known is not None:
        return known
    dt = np.dtype(dtype)
    for name, t in CTYPES.items():
        if np.dtype(t) == dt:
            _CTYPE_OF[dtype] = name
            return name
    raise skel_error("unsupported-type", f"element type {dt} has no OpenCL C equivalent",
                     hint="use float32, float64, int8..int64 or uint8..uint64")


@functools.lru_cache(maxsize=256)
def dtype_of(ctype: str):
    """The numpy type of an OpenCL scalar type (None if it is none), asked at every
    call of a skeleton with additional arguments: remembered."""
    t = " ".join(ctype.replace("const", " ").split())
    if t not in CTYPES:
        return None
    return np.dtype(CTYPES[t])


@functools.lru_cache(maxsize=256)
def _base_type(ctype: str) -> str:
    """The element type of a parameter type, qualifiers and pointer removed."""
    t = ctype.replace("*", " ")
    for q in ("const", "__global", "global", "__constant", "constant", "restrict",
              "__restrict", "volatile"):
        t = re.sub(rf"\b{q}\b", " ", t)
    return " ".join(t.split())


@dataclass(frozen=True)
class Param:
    ctype: str          # as written, qualifiers included
    name: str
    pointer: bool

    @property
    def base(self) -> str:
        return _base_type(self.ctype)


@dataclass(frozen=True)
class UserFunction:
    """A customising function ready to be pasted into a kernel."""

    name: str
    source: str                 # OpenCL C (address spaces completed)
    return_type: str
    params: tuple[Param, ...]
    origin: str                 # "<string given at app.py:12>" or the MCPL file
    kind: str                   # "opencl" | "mcpl"
    first_line: int = 1         # line of the origin where ``source`` line 1 is
    mcpl_span: Span | None = None
    #: arithmetic operations per call as mcl's analyses count them (MCPL functions)
    flops: int | None = None
    #: the Python file and line that created the skeleton (OpenCL C strings)
    py_file: str | None = None
    py_line: int = 0

    @property
    def return_dtype(self):
        return dtype_of(self.return_type)

    def location(self, line: int, column: int) -> Span:
        """Where line ``line``, column ``column`` of the function is: in the MCPL file;
        for a string, in the Python file that gave it when its text is found there
        (a string literal at or just after the call), else in the string."""
        if self.kind == "mcpl" and self.mcpl_span is not None:
            return self.mcpl_span
        found = self._in_python_file(line, column)
        return found or Span.point(self.origin, self.first_line + line - 1, column)

    def _in_python_file(self, line: int, column: int) -> Span | None:
        if not self.py_file:
            return None
        try:
            file_lines = Path(self.py_file).read_text(encoding="utf-8").splitlines()
            text = self.source.splitlines()[line - 1]
        except (OSError, IndexError, UnicodeDecodeError):
            return None
        stripped = text.strip()
        if len(stripped) < 3:
            return None
        indent = len(text) - len(text.lstrip())
        for skip in range(4):       # the literal may start a line or more after the call
            i = self.py_line - 1 + line - 1 + skip
            if 0 <= i < len(file_lines) and stripped in file_lines[i]:
                start = file_lines[i].find(stripped)
                return Span.point(self.py_file, i + 1, start + 1 + max(0, column - 1 - indent))
        return None

    def build_error(self, log: str, skeleton: str, offset: int) -> McplError:
        """The compiler's ``log`` for a kernel where this function starts at line
        ``offset + 1``, as diagnostics at the user's lines."""
        diags = self.diagnostics(log, skeleton, offset)
        if not diags:
            diags.append(error("skel-function-build",
                               f"the {skeleton} kernel for '{self.name}' ({self.origin}) does "
                               f"not compile:\n{log.strip()}",
                               hint="check the parameter types against the skeleton's inputs"))
        return McplError(diags)

    def diagnostics(self, log: str, skeleton: str, offset: int) -> list[Diagnostic]:
        """The errors of ``log`` that lie in this function (its line 1 is kernel line
        ``offset + 1``)."""
        from mcl.skel.program import error_lines
        diags = []
        src_lines = self.source.splitlines()
        for line, col, msg in error_lines(log):
            own = line - offset
            if 1 <= own <= len(src_lines):
                text = src_lines[own - 1].strip()
                diags.append(Diagnostic(
                    Severity.ERROR, "skel-function-build", f"{msg} (in '{text}')",
                    self.location(own, col),
                    hint=f"the customising function of this {skeleton} does not compile "
                         "as OpenCL C"))
        return diags


def _strip_comments(text: str) -> str:
    """``text`` with its comments, string and character literals and preprocessor lines
    blanked (lines and columns kept): what is left are declarations and code."""
    def blank(m: re.Match) -> str:
        return re.sub(r"[^\n]", " ", m.group(0))
    return re.sub(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|'
                  r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", blank, text, flags=re.S | re.M)


def _top_level_functions(clean: str) -> list[re.Match]:
    """The function definitions of ``clean`` outside any braces, in order."""
    depth, found, pos = 0, [], 0
    for m in _HEADER.finditer(clean):
        depth += clean.count("{", pos, m.start()) - clean.count("}", pos, m.start())
        pos = m.start()
        if depth == 0:
            found.append(m)
    return found


def _body_end(clean: str, open_brace: int) -> int:
    """The index after the brace closing the one at ``open_brace``."""
    depth = 0
    for i in range(open_brace, len(clean)):
        depth += {"{": 1, "}": -1}.get(clean[i], 0)
        if depth == 0:
            return i + 1
    return len(clean)


def _customising(clean: str) -> re.Match | None:
    """The customising function of a source: the first function that no other function
    of the source calls (helpers may come before it); SkelCL's first function where
    each is called by another."""
    heads = _top_level_functions(clean)
    bodies = [clean[m.end() - 1:_body_end(clean, m.end() - 1)] for m in heads]
    for i, m in enumerate(heads):
        call = re.compile(rf"\b{re.escape(m.group('name'))}\s*\(")
        if not any(call.search(b) for j, b in enumerate(bodies) if j != i):
            return m
    return heads[0] if heads else None


def _check_braces(clean: str, name: str, where: Span) -> None:
    opened, closed = clean.count("{"), clean.count("}")
    if opened != closed:
        missing = "'}'" if opened > closed else "'{'"
        raise McplError(error(
            "skel-bad-function", f"the braces of the customising function '{name}' do not "
            f"balance: {opened} '{{' and {closed} '}}' (a {missing} is missing)",
            where, hint="close every block of the function"))


_HEADER = re.compile(r"(?P<ret>[A-Za-z_][\w\s\*]*?)\s*\b(?P<name>[A-Za-z_]\w*)\s*"
                     r"\((?P<params>[^()]*)\)\s*\{")


def _caller() -> tuple[str, int]:
    """File and line of the user's code that created the skeleton."""
    here = os.path.dirname(__file__)
    for fr in inspect.stack()[2:]:
        if not fr.filename.startswith(here):
            return fr.filename, fr.lineno
    return "<string>", 1


def from_source(source: str, skeleton: str = "skeleton") -> UserFunction:
    """The first function of OpenCL C ``source``."""
    if isinstance(source, UserFunction):
        return source
    if not isinstance(source, str):
        raise skel_error("bad-function", f"a {skeleton} needs its customising function as "
                         f"OpenCL C source (a string) or mcl.skel.mcpl_function(...), "
                         f"not {type(source).__name__}")
    file, line = _caller()
    origin = f"<{skeleton} function given at {file}:{line}>"
    if "\0" in source:
        at = source.index("\0")
        row = source.count("\n", 0, at) + 1
        raise McplError(error("skel-bad-function", f"the {skeleton}'s customising function "
                              f"holds a NUL character (line {row} of the string), where "
                              "OpenCL C source ends", Span.point(origin, row, 1),
                              hint="remove the '\\0' from the string"))
    clean = _strip_comments(source)
    m = _customising(clean)
    if m is None:
        raise McplError(error("skel-bad-function", f"no function definition found in the "
                              f"{skeleton}'s customising function", Span.point(origin, 1, 1),
                              hint="write it as OpenCL C: 'float f(float x) { return x; }'"))
    _check_braces(clean, m.group("name"), Span.point(file, line, 1) if file != "<string>"
                  else Span.point(origin, 1, 1))
    ret = " ".join(m.group("ret").replace("inline", " ").replace("static", " ").split())
    params: list[Param] = []
    inserts: list[int] = []
    pos = m.start("params")
    raw = m.group("params")
    if raw.strip() not in ("", "void"):
        for part in raw.split(","):
            text = " ".join(part.split())
            pm = re.match(r"(.*?)\b([A-Za-z_]\w*)\s*$", text)
            if pm is None or not pm.group(1).strip():
                raise McplError(error("skel-bad-function", f"cannot read parameter '{text}' "
                                      f"of '{m.group('name')}'", Span.point(origin, 1, 1)))
            ctype = pm.group(1).strip()
            pointer = "*" in ctype
            if pointer and not re.search(r"\b(__)?(global|constant|local|private)\b", ctype):
                inserts.append(pos + len(part) - len(part.lstrip()))
                ctype = "__global " + ctype
            params.append(Param(ctype, pm.group(2), pointer))
            pos += len(part) + 1
    text = source
    for at in sorted(inserts, reverse=True):
        text = text[:at] + "__global " + text[at:]
    return UserFunction(m.group("name"), text, ret, tuple(params), origin, "opencl",
                        py_file=file if file != "<string>" else None, py_line=line)


def mcpl_function(module: str | os.PathLike[str], name: str,
                  search_path=()) -> UserFunction:
    """The MCPL function ``name`` of ``module`` (a path), emitted as OpenCL C by mcl's
    generator; the front end's diagnostics (file, line, column) come first."""
    from mcl.mcpl import check
    from mcl.opencl.generate import function_source
    checked = check(str(module), search_path)
    errors = [d for d in checked.diagnostics if d.is_error]
    if errors:
        raise McplError(errors)
    mod = checked.module
    f = mod.function(name)
    if f is None:
        names = ", ".join(g.name for g in mod.functions)
        raise McplError(error("skel-unknown-function", f"{module} has no function '{name}'",
                              hint=f"its functions: {names}"))
    if any(p.type.is_array for p in f.params):
        raise McplError(error("skel-bad-function", f"'{name}' takes an array; a customising "
                              "function takes elements", f.span,
                              hint="write it for one element (scalar parameters)"))
    target = _target_for(f.hardware, search_path)
    text = function_source(mod, f, target)
    head = _HEADER.search(text)
    ret = " ".join(head.group("ret").replace("inline", " ").split())
    params = tuple(Param(" ".join(p.rsplit(None, 1)[0].split()), p.split()[-1], "*" in p)
                   for p in head.group("params").split(",") if p.strip())
    cname = head.group("name")
    return UserFunction(cname, text, ret, params, str(Path(module)), "mcpl",
                        mcpl_span=f.span, flops=_flops(f, checked))


def _flops(f, checked) -> int | None:
    """The function's operations per call by mcl's operation statistics (loops
    included), when they are a number."""
    from mcl.analyses import operation_counts
    try:
        n = operation_counts(f, checked).flops
        return int(n) if getattr(n, "is_number", True) else None
    except (McplError, TypeError, ValueError):
        return None


def _target_for(level: str, search_path):
    """A code-generation target for a function written at ``level``: its own when
    it is a leaf, else that of the first leaf below it."""
    from mcl.hdl import HardwareLibrary
    from mcl.opencl.target import load_target
    try:
        return load_target(level, search_path)
    except McplError:
        lib = HardwareLibrary(search_path)
        for leaf in lib.leaves():
            if lib.is_descendant(leaf, level):
                try:
                    return load_target(leaf, search_path)
                except McplError:
                    continue
        raise
