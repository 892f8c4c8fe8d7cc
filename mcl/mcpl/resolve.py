"""Resolution results of an MCPL module and the loading of modules and their imports.

``check(path_or_module)`` parses (if needed), loads imports (hardware descriptions
and MCPL modules, relative to the importing file, on a search path and in the
bundled standard library under ``mcl/mcpl/lib``), runs the checks of
``mcl.mcpl.checks`` and returns a :class:`CheckedModule`: the module, its
diagnostics and the tables later passes need (the declaration of every name,
the memory space and type of every declaration, the par_group of every
foreach, the hardware description of every function, what each function reads
and writes, the loops around any node) so that no pass re-derives them.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from mcl.diagnostics import Diagnostic, McplError, Related, Span, error, has_errors, sort_key
from mcl.mcpl import ast
from mcl.mcpl.source import EXTENSIONS

#: The bundled standard library: ``import lib.atomics;`` reads ``lib/atomics.mcpl`` here.
STDLIB = Path(__file__).with_name("lib")
#: Built-in modules of the first release, imported without ``lib.`` (``import math;``).
LEGACY_LIBRARY = ("math", "atomics")


class Reach(NamedTuple):
    """A condition around code under which it runs, as the checks decide it
    (``check_statements.guarded``): ``never`` where it surely does not hold (``if
    (false)``, ``if (K > 10)`` of a constant K, a loop whose condition is false from its
    start, a foreach of 0 units), else one on parameters, constants or data alone
    (``if (n > 10)``) that may or may not hold. A test of the units' or iterations'
    indices (``if (i < n)``) is none: that code runs whenever the loops around it do."""

    never: bool
    #: "its condition `false` is always false", "where `n > 10` holds"
    why: str
    #: the condition (None: a foreach of 0 units), and whether the code runs where it
    #: does not hold (an else branch, the right side of ``||``)
    cond: ast.Expr | None = None
    negated: bool = False


@dataclass(eq=False)
class Symbol:
    """A declared name: a parameter, a local variable, a view or a foreach/for index.

    ``node`` is the declaring AST node (Param, Declaration or View). ``space`` is the
    memory space (the explicit modifier or the default of the hardware description;
    None for read-only scalars without either). ``written`` and ``read`` are filled
    in by the checks."""

    name: str
    kind: str                  # "param" | "local" | "index" | "view" | "loop" | "constant"
    node: ast.Node
    type: ast.Type
    space: str | None = None
    const: bool = False
    function: str = ""
    foreach: ast.ForEach | None = None   # for foreach indices: their loop
    init: ast.Expr | None = None
    written: bool = False
    read: bool = False
    # Foreach loops whose index this variable's value depends on (by id).
    index_deps: frozenset[int] = frozenset()

    @property
    def span(self) -> Span:
        return self.node.span

    @property
    def explicit_space(self) -> str | None:
        return getattr(self.node, "space", None)


@dataclass
class FunctionInfo:
    """What the checks learned about one function."""

    function: ast.Function
    hardware: Any = None                     # mcl.hdl HardwareDescription or None
    params: tuple[Symbol, ...] = ()
    module: str = ""                         # name of the module that defines it
    reads: frozenset[str] = frozenset()      # parameter names read
    writes: frozenset[str] = frozenset()     # parameter names written (also through calls)

    @property
    def is_library(self) -> bool:
        """Whether it comes from the bundled standard library (lib.atomics, ...)."""
        return Path(self.function.span.file).resolve().parent == STDLIB.resolve()

    @property
    def written_indices(self) -> frozenset[int]:
        return frozenset(i for i, p in enumerate(self.function.params) if p.name in self.writes)


@dataclass
class CheckedModule:
    """A module with its diagnostics and resolution tables (keyed by node identity)."""

    module: ast.Module
    diagnostics: list[Diagnostic] = field(default_factory=list)
    functions: dict[str, FunctionInfo] = field(default_factory=dict)
    #: imported modules by dotted name (checked), and hardware descriptions by name
    modules: dict[str, CheckedModule] = field(default_factory=dict)
    hardware: dict[str, Any] = field(default_factory=dict)
    #: record types visible in the module (its own and imported ones)
    types: dict[str, ast.TypeDef] = field(default_factory=dict)
    #: module-level constants visible in the module (its own and imported ones)
    constants: dict[str, Symbol] = field(default_factory=dict)
    _names: dict[int, Symbol] = field(default_factory=dict, repr=False)
    _decls: dict[int, Symbol] = field(default_factory=dict, repr=False)
    _loops: dict[int, tuple[ast.Stmt, ...]] = field(default_factory=dict, repr=False)
    _groups: dict[int, Any] = field(default_factory=dict, repr=False)
    _callees: dict[int, FunctionInfo] = field(default_factory=dict, repr=False)
    _function_of: dict[int, ast.Function] = field(default_factory=dict, repr=False)
    _reach: dict[int, tuple[Reach, ...]] = field(default_factory=dict, repr=False)

    # ---- queries

    @property
    def has_errors(self) -> bool:
        return has_errors(self.diagnostics)

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.is_error]

    def declaration_of(self, name: ast.Name | ast.Node) -> Symbol | None:
        """The symbol a Name refers to (None if it is undeclared)."""
        return self._names.get(id(name))

    def reach_of(self, access: ast.Index) -> tuple[Reach, ...]:
        """The conditions around an array access under which it runs, outermost first:
        none where it runs whenever the loops around it do (:class:`Reach`)."""
        return self._reach.get(id(access), ())

    def symbol(self, decl: ast.Node) -> Symbol | None:
        """The symbol declared by a Param, Declaration or View node."""
        return self._decls.get(id(decl))

    def space_of(self, decl: ast.Node) -> str | None:
        """Memory space of a declaration or parameter: explicit, else the default."""
        sym = self.symbol(decl)
        return sym.space if sym else None

    def type_of(self, decl: ast.Node) -> ast.Type | None:
        sym = self.symbol(decl)
        return sym.type if sym else None

    def par_group_of(self, foreach: ast.ForEach) -> Any:
        """The mcl.hdl ParGroup a foreach maps to (None if the group is unknown)."""
        return self._groups.get(id(foreach))

    def info(self, function: ast.Function | str) -> FunctionInfo | None:
        name = function if isinstance(function, str) else function.name
        return self.functions.get(name)

    def hardware_of(self, function: ast.Function | str) -> Any:
        """The hardware description (mcl.hdl model) a function is written for."""
        info = self.info(function)
        return info.hardware if info else None

    def reads(self, function: ast.Function | str) -> frozenset[str]:
        info = self.info(function)
        return info.reads if info else frozenset()

    def writes(self, function: ast.Function | str) -> frozenset[str]:
        info = self.info(function)
        return info.writes if info else frozenset()

    def loops_around(self, node: ast.Node) -> tuple[ast.Stmt, ...]:
        """The ForEach/For/While statements enclosing a statement or expression,
        outermost first (the node itself not included)."""
        return self._loops.get(id(node), ())

    def foreach_around(self, node: ast.Node) -> tuple[ast.ForEach, ...]:
        return tuple(s for s in self.loops_around(node) if isinstance(s, ast.ForEach))

    def callee(self, call: ast.Call) -> FunctionInfo | None:
        """The user or library function a call refers to (None for built-ins)."""
        return self._callees.get(id(call))

    def function_of(self, node: ast.Node) -> ast.Function | None:
        """The function a statement or expression belongs to."""
        return self._function_of.get(id(node))


# --------------------------------------------------------------------------- loading


def module_search_path(search_path: Sequence[str | os.PathLike[str]] = ()) -> list[Path]:
    """Directories searched for imported modules: ``search_path``, then MCL_PATH."""
    dirs = [Path(p) for p in search_path]
    dirs += [Path(p) for p in os.environ.get("MCL_PATH", "").split(os.pathsep) if p]
    return dirs


def package_root(file: str | None, package: str | None) -> Path | None:
    """The directory that holds the top of a module's package: ``prnu/fastnoise/f.mcl``
    in ``package prnu.fastnoise;`` has the root that holds ``prnu``. None when the
    file's place does not match its package declaration (or it has none)."""
    if not file or file.startswith("<") or not package:
        return None
    here = Path(file).resolve().parent
    parts = package.split(".")
    if len(here.parts) <= len(parts) or list(here.parts[-len(parts):]) != parts:
        return None
    return here.parents[len(parts) - 1]


def module_candidates(path: tuple[str, ...], importer: str | None,
                      search_path: Sequence[str | os.PathLike[str]] = (),
                      package: str | None = None) -> list[Path]:
    """The files an import may name, in the first place that has any: next to the
    importing file, under the root of the importer's package, on the search path
    (``--module-path``, ``--hwd-path``, MCL_PATH), then in the bundled standard
    library (``lib.*``, and the legacy ``math`` and ``atomics``). More than one file
    means the import is ambiguous (``x.mcl`` beside ``x.mcpl``, or a file next to the
    importer and another under its package root)."""
    local: list[Path] = []
    if importer and not importer.startswith("<"):
        local.append(Path(importer).resolve().parent)
        root = package_root(importer, package)
        if root is not None:
            local.append(root)
    groups = [local] + [[d] for d in module_search_path(search_path)]
    for dirs in groups:
        found: list[Path] = []
        for d in dirs:
            for ext in EXTENSIONS:
                f = d.joinpath(*path[:-1], path[-1] + ext)
                if f.is_file() and f.resolve() not in found:
                    found.append(f.resolve())
        if found:
            return found
    if path[0] == "lib" and len(path) > 1:
        f = STDLIB.joinpath(*path[1:-1], path[-1] + ".mcpl")
        if f.is_file():
            return [f]
    if len(path) == 1 and path[0] in LEGACY_LIBRARY:
        return [STDLIB / f"{path[0]}.mcpl"]
    return []


def find_module(path: tuple[str, ...], importer: str | None,
                search_path: Sequence[str | os.PathLike[str]] = (),
                package: str | None = None) -> Path | None:
    """The file of an imported module (the first of :func:`module_candidates`)."""
    found = module_candidates(path, importer, search_path, package)
    return found[0] if found else None


def load_module(path: str | os.PathLike[str],
                search_path: Sequence[str | os.PathLike[str]] = ()) -> CheckedModule:
    """Parse and check a module file with its imports (see :func:`check`)."""
    return check(path, search_path)


def require_source(value: Any, function: str, argument: str) -> None:
    """A TypeError naming ``argument`` of ``mcl.<function>`` unless ``value`` is what the
    API takes for a module: a path (str or os.PathLike), a parsed Module or a
    CheckedModule (without it, ``None`` became the path 'None')."""
    if isinstance(value, str | os.PathLike | ast.Module | CheckedModule):
        return
    fix = "; decode it first: .decode()" if isinstance(value, bytes | bytearray) else ""
    raise TypeError(f"mcl.{function}: {argument} is the path of an MCPL file (a str or "
                    f"os.PathLike) or a Module of mcl.parse, not {type(value).__name__}{fix}")


def require_search_path(value: Any, function: str) -> None:
    """A TypeError unless ``search_path`` of ``mcl.<function>`` is a list of directories
    (mcl.hdl.library.require_paths)."""
    from mcl.hdl.library import require_paths
    require_paths(value, f"mcl.{function}")


def with_beside(search_path: Sequence[str | os.PathLike[str]], source: Any) -> list[str]:
    """``search_path`` and the hardware descriptions beside ``source`` (a path, or a
    Module read from a file) that neither it nor the library has
    (mcl.hdl.library.with_descriptions_beside): ``import mylevel;`` finds
    ``mylevel.hdl`` beside the kernel from Python as on the command line. A module
    without a file (parsed from text) adds none."""
    from mcl.hdl.library import with_descriptions_beside
    file = source.file if isinstance(source, ast.Module) else \
        source if isinstance(source, str | os.PathLike) else None
    if not file or not Path(file).is_file():
        return [str(p) for p in search_path]
    return with_descriptions_beside(search_path, [file])


def check(path_or_module: str | os.PathLike[str] | ast.Module,
          search_path: Sequence[str | os.PathLike[str]] = (),
          *, source: str | None = None) -> CheckedModule:
    """Resolve and check a module (a path, or an already parsed Module).

    ``search_path``: extra directories holding hardware descriptions (.hdl) and
    MCPL modules; MCL_PATH adds module directories; the descriptions beside the file
    come after them (:func:`with_beside`). ``source`` checks this text
    instead of the file's contents (the language server passes unsaved text).
    Syntax errors do not raise: they come back as diagnostics of a CheckedModule
    whose module holds the top-level items that parsed; those are checked too,
    and errors that only follow from an item that did not parse (a call to a
    function whose definition has a syntax error, say) are not reported."""
    require_source(path_or_module, "check", "path_or_module")
    require_search_path(search_path, "check")
    if isinstance(path_or_module, CheckedModule):
        path_or_module = path_or_module.module
    loader = _Loader(tuple(with_beside(search_path, path_or_module)))
    # The checks allocate many small objects (symbols, table entries) that are
    # never cyclic garbage; with a large module alive every collection walks it
    # (about 10% of checking 10 000 lines). Paused, as in builder.parse_partial.
    enabled = gc.isenabled()
    gc.disable()
    try:
        return loader.check(path_or_module, source)
    except RecursionError:
        file = path_or_module.file if isinstance(path_or_module, ast.Module) \
            else str(path_or_module)
        raise McplError(error(
            "mcpl-too-deep", f"{Path(file).name} nests too deeply to be checked (an "
            "expression of thousands of operators, say)", Span.point(file, 1, 1),
            "split it with intermediate variables")) from None
    finally:
        if enabled:
            gc.enable()


class _Loader:
    """Checks a module and, once each, the modules it imports (cycles are reported)."""

    def __init__(self, search_path: tuple[str, ...]):
        self.search_path = search_path
        self.done: dict[str, CheckedModule] = {}
        self.active: list[str] = []
        # What the module of a checked file with syntax errors lacks (by id of the
        # CheckedModule): an importer must not report calls to those functions.
        self.unparsed: dict[int, Any] = {}

    def check(self, what: str | os.PathLike[str] | ast.Module,
              source: str | None = None) -> CheckedModule:
        from mcl.mcpl.builder import parse
        from mcl.mcpl.checks import check_module
        from mcl.mcpl.source import read_source

        syntax: list[Diagnostic] = []
        unparsed = None
        if isinstance(what, ast.Module):
            module = what
        else:
            file = str(what)
            try:
                text = read_source(file) if source is None else source
                module = parse(text, file)
            except McplError as e:
                partial = getattr(e, "partial", None)
                if partial is None:  # the file could not be read
                    empty = ast.Module("<error>", file=file)
                    return CheckedModule(empty, sorted(e.diagnostics, key=sort_key))
                module, syntax, unparsed = partial, list(e.diagnostics), e.unparsed
        key = str(Path(module.file).resolve()) if not module.file.startswith("<") else module.file
        self.active.append(key)
        try:
            result = check_module(module, self, unparsed)
        finally:
            self.active.pop()
        if syntax:
            result.diagnostics = sorted(syntax + result.diagnostics, key=sort_key)
            self.unparsed[id(result)] = unparsed
        return result

    def import_module(self, imp: ast.Import, importer: ast.Module
                      ) -> tuple[CheckedModule | None, list[Diagnostic]]:
        """The checked module an import names, or None with the reason."""
        found = module_candidates(imp.path, importer.file, self.search_path, importer.package)
        if not found:
            return None, []
        if len(found) > 1:
            return None, [error(
                "mcpl-ambiguous-import",
                f"'{imp.dotted}' names {len(found)} files: " + ", ".join(map(str, found)),
                imp.span, "keep one of them (a module is one .mcpl or .mcl file)")]
        f = found[0]
        key = str(f.resolve())
        if key in self.active:
            return None, [error("mcpl-import-cycle",
                                f"module '{imp.dotted}' imports itself (through a cycle)",
                                imp.span, "remove one of the imports in the cycle")]
        if key not in self.done:
            self.done[key] = self.check(f)
        checked = self.done[key]
        diags = []
        mismatch = _package_mismatch(imp, checked.module, f)
        if mismatch is not None:
            diags.append(mismatch)
        if checked.has_errors:
            first = checked.errors[0]
            diags.append(error("mcpl-import-errors",
                               f"imported module '{imp.dotted}' has errors: {first.message}",
                               imp.span, f"see {first.span}" if first.span else None))
        return checked, diags


def _package_mismatch(imp: ast.Import, module: ast.Module, file: Path) -> Diagnostic | None:
    """An error when a module found by a dotted import declares another package than
    the import's path says (``import a.b.c;`` reads ``a/b/c.mcl``: package ``a.b``)."""
    if len(imp.path) < 2 or Path(file).resolve().parent == STDLIB.resolve():
        return None
    want = ".".join(imp.path[:-1])
    if module.package in (None, want):
        return None
    return error("mcpl-package-mismatch",
                 f"'{imp.dotted}' is {file}, which declares package '{module.package}', "
                 f"not '{want}'", imp.span,
                 f"change its declaration to `package {want};` or move the file to "
                 f"{'/'.join(module.package.split('.'))}/",
                 [Related(module.span, f"'{module.name}' declares its package here")])
