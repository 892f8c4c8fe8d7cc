"""The entry points of translation (paper appendix A.1): every function whose level
lies above the target goes down the hierarchy one edge at a time; the module's
imports follow the hardware descriptions its functions now use."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from pathlib import Path

from mcl.diagnostics import McplError, error
from mcl.hdl import HardwareLibrary, hardware_library
from mcl.mcpl import CheckedModule, ast
from mcl.translate.consts import PropertyLookup
from mcl.translate.step import translate_step


def _library(library: HardwareLibrary | None,
             search_path: Sequence[str | os.PathLike[str]],
             function: str = "translate") -> HardwareLibrary:
    if library is not None and not isinstance(library, HardwareLibrary):
        raise TypeError(f"mcl.{function}: library is an mcl.HardwareLibrary or None, not "
                        f"{type(library).__name__} {library!r}; directories of descriptions "
                        "go in search_path")
    return library if library is not None else hardware_library(
        [str(p) for p in search_path])


def _lookup(lib: HardwareLibrary) -> PropertyLookup:
    """Integer properties of descriptions, for sizes known at compile time."""
    def lookup(path: tuple[str, ...]) -> int | None:
        if not path or path[0] not in lib:
            return None
        try:
            value = lib.get(path[0]).resolve_property(path)
        except McplError:
            return None
        return value if isinstance(value, int) and not isinstance(value, bool) else None
    return lookup


def _target(lib: HardwareLibrary, to: str, function: str = "translate") -> None:
    """Fails with the description's own diagnostics if ``to`` is unknown or invalid
    (a child that breaks the rules of section 6.1 is reported with the rule)."""
    if not isinstance(to, str):
        raise TypeError(f"mcl.{function}: to is the name of a hardware description (a str), "
                        f"not {type(to).__name__} {to!r}")
    lib.get(to)


def translate_function(function: ast.Function, to: str, *,
                       library: HardwareLibrary | None = None,
                       search_path: Sequence[str | os.PathLike[str]] = (),
                       assume_divisible: bool = False) -> ast.Function:
    """``function`` translated from its level down to ``to`` (a descendant of its level
    or the level itself), one edge of the hierarchy at a time. A new function; the
    input is not modified. Raises McplError if there is no path or something has no
    equivalent at a level on the way."""
    if not isinstance(function, ast.Function):
        raise TypeError("mcl.translate.translate_function: function is an ast.Function, not "
                        f"{type(function).__name__}")
    lib = _library(library, search_path, "translate.translate_function")
    _target(lib, to, "translate.translate_function")
    if function.hardware not in lib:
        raise McplError(error(
            "translate-unknown-level",
            f"function '{function.name}' is written for '{function.hardware}', an unknown "
            "hardware description", function.span,
            "add its directory with --hwd-path or MCL_HWD_PATH"))
    try:
        path = lib.path(function.hardware, to)
    except McplError as e:
        d = e.diagnostics[0]
        raise McplError(error(
            "translate-no-path",
            f"cannot translate '{function.name}' from '{function.hardware}' to '{to}': "
            f"{d.message}", function.span, d.hint)) from None
    lookup = _lookup(lib)
    for a, b in zip(path, path[1:], strict=False):
        function = translate_step(function, lib.get(a), lib.get(b), lookup,
                                  assume_divisible=assume_divisible)
    return function


def translate(module: ast.Module | CheckedModule | str | os.PathLike[str], to: str, *,
              library: HardwareLibrary | None = None,
              search_path: Sequence[str | os.PathLike[str]] = (),
              assume_divisible: bool = False) -> ast.Module:
    """The module with every function whose level is ``to`` or above it translated to
    ``to``; functions of other levels stay as they are. ``module`` may be a parsed
    Module, a CheckedModule (its module) or the path of a file. ``library`` (or
    ``search_path``, directories of extra descriptions) says where descriptions come
    from. A new module; the input is not modified. Raises McplError (with
    diagnostics) for bad input: an unknown or invalid target, no function that can
    reach it, a memory space or par_group without equivalent."""
    from mcl.mcpl import parse_file
    from mcl.mcpl.resolve import require_search_path, require_source

    require_source(module, "translate", "module")
    require_search_path(search_path, "translate")
    if isinstance(module, CheckedModule):   # what mcl.check gives, as mcl.feedback takes
        if module.has_errors:
            raise McplError(module.errors)
        module = module.module
    elif not isinstance(module, ast.Module):
        module = parse_file(Path(module))
    if not module.functions:
        raise McplError(error(
            "translate-no-function", f"{module.file or module.name} has no function to "
            "translate", hint="a module whose source has errors keeps none: mcl.check(file) "
                              "says what they are"))
    if library is None:     # the descriptions beside the module's file too, as mcl.check
        from mcl.mcpl.resolve import with_beside
        search_path = with_beside(search_path, module)
    lib = _library(library, search_path)
    _target(lib, to)
    reachable = [f for f in module.functions
                 if f.hardware in lib and (f.hardware == to or lib.is_descendant(to, f.hardware))]
    if module.functions and not reachable:
        f = module.functions[0]
        levels = sorted({g.hardware for g in module.functions})
        above = " > ".join(reversed(lib.ancestors(to)))
        above = (f"the levels above '{to}' are {above}" if above
                 else f"'{to}' is the top of the hierarchy")
        leaves = [x for x in levels if x in lib and not lib.children(x)]
        if leaves == levels:     # nothing lies below a leaf: it is compiled, not translated
            raise McplError(error(
                "translate-no-path",
                f"no function of module '{module.name}' can be translated to '{to}': "
                f"{', '.join(repr(x) for x in levels)} "
                f"{'is a leaf' if len(levels) == 1 else 'are leaves'} of the hierarchy, "
                "with no level below", f.span,
                f"{above}; a leaf level's kernel runs as it is: mcl.compile(...) "
                "(or `mcl run`)"))
        raise McplError(error(
            "translate-no-path",
            f"no function of module '{module.name}' can be translated to '{to}': "
            f"{', '.join(repr(x) for x in levels)} {'is' if len(levels) == 1 else 'are'} not "
            f"above it in the hierarchy", f.span,
            f"{above}; translate to a level below "
            f"{' or '.join(repr(x) for x in levels)} (see `mcl hwd list`)"))
    functions = tuple(
        translate_function(f, to, library=lib, assume_divisible=assume_divisible)
        if f in reachable else f for f in module.functions)
    return dataclasses.replace(module, functions=functions,
                               imports=_imports(module, functions, lib))


def _imports(module: ast.Module, functions: Sequence[ast.Function],
             lib: HardwareLibrary) -> tuple[ast.Import, ...]:
    """Hardware descriptions no longer used are dropped, new ones imported where the
    first description was (module imports stay as they are)."""
    needed: list[str] = []
    for f in functions:
        names = [f.hardware] + [n.path[0] for n in ast.walk(f.body) if isinstance(n, ast.HwdRef)]
        for n in names:
            if n in lib and n not in needed:
                needed.append(n)
    out: list[ast.Import] = []
    placed = False
    present = {i.path[0] for i in module.imports if len(i.path) == 1}
    for imp in module.imports:
        is_hwd = len(imp.path) == 1 and imp.path[0] in lib
        if is_hwd and not placed:
            out += [ast.Import((n,)) for n in needed if n not in present]
            placed = True
        if not is_hwd or imp.path[0] in needed:
            out.append(imp)
    if not placed:
        out = [ast.Import((n,)) for n in needed if n not in present] + out
    return tuple(out)
