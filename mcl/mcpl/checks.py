"""The semantic checks of MCPL against the hardware descriptions its functions name.

One walk per function resolves names in nested scopes, gives every expression
a type, and checks what LANGUAGE.md section 2 requires: declared names, types
and index counts per tile level, imported hardware descriptions, memory spaces
that exist and are visible where they are used (or a default), barriers on
spaces shared by the surrounding units, foreach nesting in the order of the
description with sizes independent of enclosing foreach indices, executable
statements only at the innermost level, constant array sizes, and views that
keep the number of elements (compared with sympy). Which parameters a
function reads and writes is inferred, through calls, before the walk.

Every problem is a diagnostic; the walk goes on after one, so independent
errors are all reported.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcl.diagnostics import Diagnostic, McplError, Related, error, sort_key, warning
from mcl.mcpl import ast
from mcl.mcpl.check_common import (
    _NOTHING_MISSING,
    BUILTINS,
    Builtin,
    _check_type_name,
    _Missing,
    _suggest,
    infer_writes,
)
from mcl.mcpl.check_constants import check_constants
from mcl.mcpl.check_flow import missing_return, recursion
from mcl.mcpl.check_statements import _FunctionChecker
from mcl.mcpl.resolve import CheckedModule, FunctionInfo, package_root

if TYPE_CHECKING:
    from mcl.mcpl.builder import Unparsed
    from mcl.mcpl.resolve import _Loader


def check_module(module: ast.Module, loader: _Loader,
                 unparsed: Unparsed | None = None) -> CheckedModule:
    """Check a parsed module; imports are loaded through ``loader``. ``unparsed``
    says which items of the module's text did not parse (see builder.Unparsed)."""
    result = CheckedModule(module)
    diags = result.diagnostics
    missing = _NOTHING_MISSING.add(unparsed, own=True)
    # ---- imports: hardware descriptions and modules
    imported_functions: dict[str, FunctionInfo] = {}
    imported_from: dict[str, str] = {}
    library = None
    try:
        from mcl.hdl import hardware_library

        library = hardware_library(loader.search_path)
    except McplError as e:
        diags.extend(e.diagnostics)
    seen_imports: set[str] = set()
    for imp in module.imports:
        if imp.dotted in seen_imports:
            diags.append(warning("mcpl-duplicate-import", f"'{imp.dotted}' is imported twice",
                                 imp.span, "remove one of the imports"))
            continue
        seen_imports.add(imp.dotted)
        if len(imp.path) == 1 and library is not None and imp.path[0] in library:
            ignored = _description_ignored(library, module.file, imp)
            if ignored is not None:
                diags.append(ignored)
            try:
                result.hardware[imp.path[0]] = library.get(imp.path[0])
            except McplError as e:
                diags.append(error(
                    "mcpl-bad-hardware",
                    f"hardware description '{imp.path[0]}' has errors: "
                    f"{e.diagnostics[0].message if e.diagnostics else ''}", imp.span,
                    "run `mcl hwd check` on it",
                    [Related(d.span, _with_code(d)) for d in e.diagnostics[:3] if d.span]))
                # One root cause: what only follows from its absence is not reported.
                missing = missing.add_hardware(imp.path[0])
            continue
        checked, problems = loader.import_module(imp, module)
        diags.extend(problems)
        if checked is not None:
            missing = missing.add(getattr(loader, "unparsed", {}).get(id(checked)), own=False)
        if checked is None:
            if not problems:
                known = sorted(library.names()) if library is not None else []
                beside = _description_beside(module.file, imp)
                hint = _beside_hint(beside, imp) if beside is not None else \
                    (_suggest(imp.dotted, known) or
                     f"hardware descriptions: {', '.join(known)}") + \
                    "; modules are searched next to this file, under the root of its " \
                    "package, on --module-path and MCL_PATH and in the standard library " \
                    "(lib.atomics, lib.math, lib.complex)"
                diags.append(error(
                    "mcpl-unknown-import",
                    f"cannot find '{imp.dotted}': it is neither a hardware description nor "
                    "a module", imp.span, hint))
            else:
                # The module exists but cannot be used: what it defines may be called.
                missing = missing.add_any()
            continue
        result.modules[imp.dotted] = checked
        for name, info in checked.functions.items():
            if name in imported_functions and imported_from[name] != imp.dotted:
                diags.append(error(
                    "mcpl-import-clash",
                    f"function '{name}' is defined by both '{imported_from[name]}' and "
                    f"'{imp.dotted}'", imp.span, "import only one of them"))
            imported_functions[name] = info
            imported_from[name] = imp.dotted
        for name, t in checked.types.items():
            result.types.setdefault(name, t)
        for name, sym in checked.constants.items():
            if name in result.constants and result.constants[name] is not sym:
                diags.append(error(
                    "mcpl-import-clash", f"constant '{name}' is defined by two imported "
                    f"modules, the other before '{imp.dotted}'", imp.span,
                    "import only one of them"))
            result.constants.setdefault(name, sym)
    # `perfect` is always known (the root of every hierarchy; earlier releases
    # did not import it).
    if library is not None and "perfect" in library and "perfect" not in result.hardware:
        try:
            result.hardware["perfect"] = library.get("perfect")
        except McplError:
            pass
    _check_exports(module, result, imported_functions, missing, diags)
    if module.package and not module.file.startswith("<") and \
            package_root(module.file, module.package) is None:
        diags.append(warning(
            "mcpl-package-place",
            f"'{module.file}' declares package '{module.package}' but is not in a folder "
            f"{'/'.join(module.package.split('.'))}", module.span,
            "modules of the package are then not found from here: move the file or change "
            "the declaration (imports are searched next to it, on --module-path and MCL_PATH)"))
    # ---- types
    for t in module.types:
        if t.name in result.types and result.types[t.name] is not t:
            prev = result.types[t.name]
            diags.append(error("mcpl-redeclared", f"type '{t.name}' is declared twice", t.span,
                               "rename one of them", [Related(prev.span, "first declared here")]))
        result.types[t.name] = t
    for t in module.types:
        names: set[str] = set()
        for f in t.fields:
            if f.name in names:
                diags.append(error("mcpl-redeclared",
                                   f"field '{f.name}' appears twice in type '{t.name}'", f.span))
            names.add(f.name)
            _check_type_name(f.type, result, diags, missing)
            if f.type.name == t.name and not f.type.dims:
                diags.append(error("mcpl-recursive-type",
                                   f"type '{t.name}' contains itself", f.span,
                                   "a record cannot hold a value of its own type"))
    check_constants(module, result, diags)
    # ---- functions
    own: dict[str, ast.Function] = {}
    for f in module.functions:
        if f.name in own:
            diags.append(error("mcpl-redeclared", f"function '{f.name}' is declared twice",
                               f.span, "rename one of them (MCPL has no overloading)",
                               [Related(own[f.name].span, "first declared here")]))
            continue
        if f.name in BUILTINS:
            diags.append(warning("mcpl-shadows-builtin",
                                 f"function '{f.name}' hides the built-in of the same name",
                                 f.span))
        own[f.name] = f
    diags.extend(recursion(own))
    external = {n: i.written_indices for n, i in imported_functions.items()}
    summaries = infer_writes(own, external)
    for name, f in own.items():
        result.functions[name] = FunctionInfo(
            f, module=module.name, writes=frozenset(f.params[i].name for i in summaries[name]))
    callable_functions = {**imported_functions, **result.functions}
    hardware_memos: dict[int, dict] = {}   # by id of the model, held by result.hardware
    for f in own.values():
        info = result.functions[f.name]
        info.hardware = _function_hardware(f, result, library, diags, missing)
        _FunctionChecker(f, info, result, callable_functions, diags, library, missing,
                         hardware_memos).run()
        unreturned = missing_return(f, _constant_definition(result))
        if unreturned is not None:
            diags.append(unreturned)
    diags.sort(key=sort_key)
    return result


def _check_exports(module: ast.Module, result: CheckedModule,
                   imported: dict[str, FunctionInfo], missing: _Missing,
                   diags: list[Diagnostic]) -> None:
    """An exported name must be a function, type or constant of the module (or one it
    imports): a misspelt one would otherwise pass unnoticed."""
    own = [*(f.name for f in module.functions), *(t.name for t in module.types),
           *(c.name for c in module.constants)]
    for name, span in zip(module.exports, module.export_spans, strict=False):
        if name in own or name in imported or name in result.types or \
                name in result.constants or missing.function(name) or missing.type(name):
            continue
        diags.append(error(
            "mcpl-unknown-export", f"'{name}' is exported, but the module defines no "
            "function, type or constant of that name", span,
            _suggest(name, own) or "define it, or remove it from the export list"))


def _description_beside(file: str, imp: ast.Import):
    """The file ``NAME.hdl`` beside the module ``file`` for ``import NAME;``, or None."""
    from pathlib import Path
    if len(imp.path) != 1 or file.startswith("<"):
        return None
    found = Path(file).parent / f"{imp.path[0]}.hdl"
    return found if found.is_file() else None


def _beside_hint(beside, imp: ast.Import) -> str:
    """Why ``NAME.hdl`` beside the module was not read for ``import NAME;``: it declares
    another name or none (mcl.check, the commands and the language server read the
    descriptions beside a kernel's file: mcl.mcpl.resolve.with_beside; a module checked
    without its file, else)."""
    from mcl.hdl.library import description_name
    declared = description_name(beside)
    if declared is not None and declared != imp.path[0]:
        return (f"'{beside.name}' beside this file describes '{declared}', not "
                f"'{imp.path[0]}': name the description after its file")
    if declared is None:
        return (f"'{beside.name}' beside this file declares no description: it should "
                f"begin with 'hardware_description {imp.path[0]};'")
    return (f"'{beside.name}' is beside this file but was not read: give its folder in "
            f"the search path (search_path=['{beside.parent}'])")


def _description_ignored(library: Any, file: str, imp: ast.Import) -> Diagnostic | None:
    """A warning where ``NAME.hdl`` beside the module declares ``NAME`` but the import
    takes ``NAME`` from elsewhere (the bundled library or the search path): the file the
    user may be editing is not the one the compiler reads."""
    from mcl.hdl.library import beside_but_not_read
    if file.startswith("<"):
        return None
    name = imp.path[0]
    ignored = beside_but_not_read(library, name, file)
    if ignored is None:
        return None
    if name == "perfect":
        where, hint = "the library's", "'perfect' is part of MCL: rename the file's description"
    elif library.is_bundled(name):
        where, hint = "the library's", (
            "a description beside a kernel does not replace the library's; to use this one, "
            f"give --hwd-path {ignored.parent} (it then replaces the library's '{name}'), "
            "else rename it")
    else:
        where, hint = f"the one in {library.file(name)}", (
            "two descriptions have this name: rename or remove one of them")
    return warning("mcpl-description-beside",
                   f"'{ignored.name}' beside this file is not read: '{name}' is {where}",
                   imp.span, hint)


def _constant_definition(result: CheckedModule):
    """The expression that defines a module constant (own or imported), by name."""
    def definition(name: ast.Name) -> ast.Expr | None:
        sym = result.constants.get(name.id)
        return sym.init if sym is not None else None
    return definition


def _function_hardware(f: ast.Function, result: CheckedModule, library: Any,
                       diags: list[Diagnostic], missing: _Missing = _NOTHING_MISSING) -> Any:
    if f.hardware in result.hardware:
        return result.hardware[f.hardware]
    if library is None:
        return None
    if f.hardware in missing.hardware:
        return None     # imported, but broken: reported at the import
    if f.hardware in library:
        if not missing.imports:
            diags.append(error(
                "mcpl-hardware-not-imported",
                f"function '{f.name}' is written for '{f.hardware}', which is not imported",
                f.span, f"add `import {f.hardware};` after the module line"))
        try:
            return library.get(f.hardware)
        except McplError:
            return None
    known = sorted(library.names())
    diags.append(error(
        "mcpl-unknown-hardware",
        f"unknown hardware description '{f.hardware}' for function '{f.name}'", f.span,
        _suggest(f.hardware, known) or f"known descriptions: {', '.join(known)}"))
    return None


def _with_code(d: Diagnostic) -> str:
    """``d``'s message for a note, with its code (``[hdl-syntax]``) unless it says it."""
    return d.message if not d.code or d.code in d.message else f"{d.message} [{d.code}]"


__all__ = ["check_module", "infer_writes", "BUILTINS", "Builtin"]
