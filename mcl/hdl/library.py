"""The library of hardware descriptions: the bundled ones (``mcl/hwdescs/*.hdl``) plus
those of user directories (``--hwd-path``, ``MCL_HWD_PATH``) and those beside a kernel
(:func:`with_descriptions_beside`), the hierarchy that ``specializes`` builds among them,
and validation results per description."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from mcl.diagnostics import Diagnostic, McplError, Related, Span, error, has_errors, info, warning
from mcl.hdl import syntax as S
from mcl.hdl.build import Resolver, suggest
from mcl.hdl.model import HardwareDescription

BUNDLED = Path(__file__).resolve().parent.parent / "hwdescs"
ROOT = "perfect"
_NAME_RE = re.compile(r"hardware_description\s+([A-Za-z_]\w*)")
_PARENT_RE = re.compile(r"specializes\s+([A-Za-z_]\w*)")


@dataclass(frozen=True)
class _Broken:
    """A description whose file does not parse: its syntax errors, its file and the
    parent its text seems to name."""
    errors: list[Diagnostic]
    file: str
    parent: str | None


class HardwareLibrary:
    """Hardware descriptions by name.

    ``search_path``: directories of user ``.hdl`` files, or single ``.hdl`` files (the
    descriptions beside a kernel: :func:`with_descriptions_beside`); a user description
    may specialise a library one and may replace one of the same name (except
    ``perfect``). ``files``: extra ``.hdl`` files (``mcl hwd check``). ``texts``:
    file path -> text that wins over the file on disk (an editor's unsaved buffer)."""

    def __init__(self, search_path: Sequence[str | Path] = (), files: Sequence[str | Path] = (),
                 texts: Mapping[str, str] | None = None):
        require_paths(search_path, "HardwareLibrary")
        require_paths(files, "HardwareLibrary", "files", "files")
        #: where the descriptions beside the bundled ones come from: the directories and
        #: files of the search path, then ``files`` (what mcl.feedback(library=...) checks
        #: a module with)
        search_path, files = list(search_path), list(files)    # iterators read once
        self.search_path: tuple[str, ...] = (*map(str, search_path), *map(str, files))
        if texts is not None and (not isinstance(texts, Mapping) or not all(
                isinstance(k, str | os.PathLike) and isinstance(v, str) for k, v in texts.items())):
            raise TypeError("HardwareLibrary: texts maps file paths to their text (a dict of "
                            f"str to str), not {type(texts).__name__} {texts!r}")
        self._texts = dict(texts or {})
        self._syntax: dict[str, S.DescriptionSyntax] = {}
        self._file_diags: dict[str, list[Diagnostic]] = {}   # name -> load problems
        self.load_diagnostics: list[Diagnostic] = []          # problems not tied to a name
        # Names whose file failed to parse: they stay known (a user's broken gpu.hdl
        # replaces the library's gpu), so that what depends on them can say so.
        self._broken: dict[str, _Broken] = {}
        self._bundled: set[str] = set()
        # name -> the file it was read from (resolved): a file met twice (on the search
        # path and named on the command line) is one definition.
        self._files: dict[str, Path] = {}
        for path in sorted(BUNDLED.glob("*.hdl")):
            self._add_file(path, bundled=True)
        for d in search_path:
            directory = Path(d)
            if directory.suffix == ".hdl" and directory.is_file():
                self._add_file(directory, bundled=False)
                continue
            if not directory.is_dir():
                self.load_diagnostics.append(error(
                    "hdl-path", f"hardware-description directory '{d}' does not exist",
                    None, "check --hwd-path and MCL_HWD_PATH"))
                continue
            for path in sorted(directory.glob("*.hdl")):
                self._add_file(path, bundled=False)
        for f in files:
            self._add_file(Path(f), bundled=False, explicit=True)
        self._resolver = Resolver(self._syntax.get, self._broken_errors)
        self._validated: dict[str, list[Diagnostic]] = {}

    # ------------------------------------------------------------------ loading

    def _read(self, path: Path) -> str:
        key = str(path)
        if key in self._texts:
            return self._texts[key]
        return path.read_text(encoding="utf-8")

    def _add_file(self, path: Path, bundled: bool, explicit: bool = False) -> None:
        if str(path) not in self._texts and path.exists() and not path.is_file():
            # a named pipe or a device: reading it would wait for a writer for ever
            self.load_diagnostics.append(error(
                "hdl-file", f"cannot read hardware description '{path}': not a regular file",
                None, "hardware descriptions are .hdl text files; move it out of the folder"))
            return
        try:
            text = self._read(path)
        except UnicodeDecodeError as e:
            line = path.read_bytes()[:e.start].count(b"\n") + 1
            self.load_diagnostics.append(error(
                "hdl-file", f"cannot read hardware description '{path}': byte "
                f"0x{e.object[e.start]:02x} on line {line} is not UTF-8 text", None,
                "save the file as UTF-8 (hardware descriptions are text)"))
            return
        except OSError as e:
            reason = e.strerror or str(e)
            self.load_diagnostics.append(error(
                "hdl-file", f"cannot read hardware description '{path}': {reason}", None,
                "check the file name; hardware descriptions are .hdl files"))
            return
        try:
            syn = _parse(text, str(path))
        except McplError as e:
            m = _NAME_RE.search(text)
            name = m.group(1) if m else None
            if name is None:
                self.load_diagnostics.extend(e.diagnostics)
            elif name == ROOT and name in self._bundled and not bundled:
                # 'perfect' cannot be replaced: the library's stays, the error is shown
                self._file_diags.setdefault(name, []).extend(e.diagnostics)
            else:
                parent = _PARENT_RE.search(text, m.end())
                self._broken[name] = _Broken(list(e.diagnostics), str(path),
                                             parent.group(1) if parent else None)
                self._syntax.pop(name, None)
                self._bundled.discard(name)
                self._files.pop(name, None)
            return
        name = syn.name
        self._broken.pop(name, None)
        if name in self._syntax and self._files.get(name) == path.resolve():
            return
        replaced = None
        if name in self._syntax:
            old = self._syntax[name]
            if name == ROOT and name in self._bundled and not bundled:
                self._file_diags.setdefault(name, []).append(error(
                    "hdl-replaces-perfect", "the description 'perfect' is part of MCL and "
                    "cannot be replaced", syn.name_span,
                    "give your description another name and write 'specializes perfect;'"))
                return
            if not (name in self._bundled and not bundled):
                # two user files define the same name: the later one would silently win
                self._file_diags.setdefault(name, []).append(error(
                    "hdl-duplicate-description",
                    f"hardware description '{name}' is defined twice", syn.name_span,
                    "rename one of them", [Related(old.name_span, "the other definition")]))
                return
            self._bundled.discard(name)
            replaced = old
        self._syntax[name] = syn
        self._files[name] = path.resolve()
        if bundled:
            self._bundled.add(name)
        if replaced is not None:
            self._file_diags.setdefault(name, []).append(info(
                "hdl-replaces-library",
                f"this description replaces the library's '{name}': descriptions that "
                f"specialise '{name}' are checked against this one", syn.name_span,
                "rename it to keep the library's description as well",
                [Related(replaced.name_span, "the library's description")]))
        stem = path.stem
        if stem != name:
            # a file given by its path is read whatever its name (mcl hwd check), but a
            # search finds a description only in the file of its name: say so there too
            # (a kernel importing 'fermi' gets the library's, not this 'fermo')
            report = warning if explicit else error
            self._file_diags.setdefault(name, []).append(report(
                "hdl-file-name", f"the description '{name}' is in a file named '{path.name}'",
                syn.name_span, f"rename the file to '{name}.hdl' so that it can be found"
                + (f" by a kernel's import or --hwd-path (import {stem} does not find it)"
                   if explicit else "")))

    # ------------------------------------------------------------------ names and hierarchy

    def names(self) -> list[str]:
        """All descriptions, in hierarchy order (parents before children)."""
        order: list[str] = []

        def visit(n: str) -> None:
            if n in order:
                return
            order.append(n)
            for c in self.children(n):
                visit(c)

        for root in sorted(self.roots(), key=lambda r: (r != ROOT, r)):
            visit(root)
        for n in sorted(self._parents()):   # members of specializes cycles
            if n not in order:
                order.append(n)
        return order

    def __contains__(self, name: str) -> bool:
        """Whether the library knows the name, even if its file does not parse
        (:meth:`get` and :meth:`model` then raise with the syntax error)."""
        return name in self._syntax or name in self._broken

    def is_bundled(self, name: str) -> bool:
        return name in self._bundled

    def _broken_errors(self, name: str) -> list[Diagnostic] | None:
        """The syntax errors of description ``name`` where its file does not parse."""
        broken = self._broken.get(name)
        return broken.errors if broken is not None else None

    def is_broken(self, name: str) -> bool:
        """Whether the file of description ``name`` does not parse."""
        _require_name(name)
        return name in self._broken and name not in self._syntax

    def file(self, name: str) -> str:
        if self.is_broken(name):
            return self._broken[name].file
        return self._syntax_of(name).file

    def syntax(self, name: str) -> S.DescriptionSyntax:
        return self._syntax_of(name)

    def parent(self, name: str) -> str | None:
        """The name given in ``specializes`` (None for a root; for a description that
        does not parse, the name its text seems to give)."""
        if self.is_broken(name):
            return self._broken[name].parent
        return self._syntax_of(name).parent

    def _parents(self) -> dict[str, str | None]:
        """Every known name -> its parent's name, broken descriptions included."""
        parents = {n: s.parent for n, s in self._syntax.items()}
        for n, b in self._broken.items():
            parents.setdefault(n, b.parent)
        return parents

    def children(self, name: str) -> list[str]:
        return sorted(n for n, p in self._parents().items() if p == name and n != name)

    def roots(self) -> list[str]:
        parents = self._parents()
        return sorted(n for n, p in parents.items() if p is None or p not in parents)

    def ancestors(self, name: str) -> list[str]:
        """Parent, grandparent, ... up to the root (stops at a cycle or a missing parent)."""
        parents = self._parents()
        out: list[str] = []
        p = self.parent(name)
        while p is not None and p in parents and p not in out and p != name:
            out.append(p)
            p = parents[p]
        return out

    def is_descendant(self, name: str, ancestor: str) -> bool:
        """Whether ``name`` lies strictly below ``ancestor`` in the hierarchy."""
        return name in self and ancestor in self.ancestors(name)

    def path(self, from_name: str, to_name: str) -> list[str]:
        """The levels from ``from_name`` down to ``to_name``, both included; each
        consecutive pair is one translation step. Raises McplError if ``to_name`` is
        not ``from_name`` or one of its descendants."""
        self._syntax_of(from_name)
        self._syntax_of(to_name)
        if from_name == to_name:
            return [from_name]
        up = self.ancestors(to_name)
        if from_name not in up:
            raise McplError(error(
                "hdl-no-path", f"'{to_name}' is not below '{from_name}' in the hierarchy of "
                f"hardware descriptions", None,
                f"'{to_name}' descends from {' > '.join(reversed(up)) or 'nothing'}; "
                "a kernel can only be translated down the hierarchy"))
        chain = [to_name] + up[:up.index(from_name) + 1]
        return chain[::-1]

    def leaves(self) -> list[str]:
        return [n for n in self.names() if not self.children(n)]

    def _syntax_of(self, name: str) -> S.DescriptionSyntax:
        _require_name(name)
        syn = self._syntax.get(name)
        if syn is None:
            if name in self._broken:
                raise McplError(self._broken[name].errors)
            close = suggest(name, self._syntax)
            raise McplError(error(
                "hdl-unknown-description", f"unknown hardware description '{name}'", None,
                (f"did you mean '{close}'? " if close else "")
                + "known: " + ", ".join(self.names())
                + "; add directories of your own with --hwd-path or MCL_HWD_PATH"))
        return syn

    # ------------------------------------------------------------------ models

    def model(self, name: str) -> HardwareDescription:
        """The built model, even if it has errors (see :meth:`diagnostics`)."""
        _require_name(name, "model")
        self._syntax_of(name)
        hwd = self._resolver.description(name)
        assert hwd is not None
        return hwd

    def get(self, name: str) -> HardwareDescription:
        """The validated description; raises McplError with its errors if it is invalid."""
        _require_name(name, "get")
        diags = self.diagnostics(name)
        if has_errors(diags):
            raise McplError([d for d in diags if d.is_error])
        return self.model(name)

    def diagnostics(self, name: str) -> list[Diagnostic]:
        """Everything wrong with a description: load, reference and validation problems."""
        _require_name(name, "diagnostics")
        if name in self._broken and name not in self._syntax:
            return list(self._broken[name].errors)
        if name in self._validated:
            return self._validated[name]
        from mcl.hdl.validate import validate

        hwd = self.model(name)
        diags = list(self._file_diags.get(name, []))
        diags += self._resolver.diagnostics.get(name, [])
        for d in validate(hwd, self):
            if d not in diags:
                diags.append(d)
        diags.sort(key=_order)
        self._validated[name] = diags
        return diags

    def all_diagnostics(self) -> list[Diagnostic]:
        out = list(self.load_diagnostics)
        for n in self.names():   # broken descriptions included
            out += self.diagnostics(n)
        return out

    def descriptions_in(self, file: str | Path) -> list[str]:
        """Names of the descriptions read from a file."""
        f = Path(file).resolve()
        return [n for n, s in self._syntax.items() if Path(s.file).resolve() == f]

    def broken_in(self, file: str | Path) -> list[Diagnostic]:
        """The errors of a file whose description was not taken: its syntax errors, and
        those of a file that would replace ``perfect`` (the library's stays, so that the
        file holds no description of its own and :meth:`descriptions_in` misses them)."""
        f = Path(file).resolve()
        kept_out = [d for name, diags in self._file_diags.items()
                    if name not in self.descriptions_in(f) for d in diags]
        return [d for d in [*(d for b in self._broken.values() for d in b.errors), *kept_out]
                if d.span and Path(d.span.file).resolve() == f]


def _require_name(name: object, method: str = "") -> None:
    """A TypeError unless ``name`` given to ``HardwareLibrary.<method>`` is a str."""
    if not isinstance(name, str):
        raise TypeError(f"HardwareLibrary{'.' * bool(method)}{method}: name is the name of "
                        f"a hardware description (a str), not {type(name).__name__} {name!r}")


def require_paths(value: object, owner: str, argument: str = "search_path",
                  kind: str = "directories") -> None:
    """A TypeError naming ``argument`` of ``owner`` unless ``value`` is a list (an
    iterable) of paths: a single str would be read as a list of one-letter paths."""
    if isinstance(value, str | bytes | os.PathLike):
        raise TypeError(f"{owner}: {argument} is a list of {kind}, not one "
                        f"{type(value).__name__}: {argument}=[{str(value)!r}]")
    if not isinstance(value, Iterable) or isinstance(value, Mapping):
        raise TypeError(f"{owner}: {argument} is a list of {kind}, not "
                        f"{type(value).__name__}")
    if isinstance(value, Sequence | set | frozenset):   # an iterator is not used up here
        for item in value:
            if not isinstance(item, str | os.PathLike):
                raise TypeError(f"{owner}: {argument} holds {type(item).__name__} {item!r}: "
                                "each of its entries is a path (a str or a Path)")


@lru_cache(maxsize=256)
def _parse(text: str, file: str) -> S.DescriptionSyntax:
    """Parse once per (text, file): syntax trees are immutable, so every library of
    the process shares the bundled ones."""
    return S.parse_text(text, file)


def _order(d: Diagnostic) -> tuple:
    s = d.span or Span("", 0, 0, 0, 0)
    return (s.file, s.line, s.column, d.code)


@lru_cache(maxsize=16)
def _library(search_path: tuple[str, ...]) -> HardwareLibrary:
    return HardwareLibrary(search_path)


def hardware_library(search_path: Sequence[str | Path] = ()) -> HardwareLibrary:
    """The library for a search path, loaded once per process and search path."""
    return _library(tuple(str(p) for p in search_path))


def with_descriptions_beside(search_path: Sequence[str | Path],
                             kernels: Iterable[str | Path]) -> list[str]:
    """``search_path``, then the hardware descriptions in the folder of each of ``kernels``
    (MCPL files, or folders of versions) that describe a level neither the library nor
    ``search_path`` has: ``import mylevel;`` finds ``mylevel.hdl`` beside the kernel, as
    C's ``#include "..."`` finds a header beside the source, in every command that reads
    the kernel. Such a file never replaces a description found otherwise (a copy of the
    library's ``gpu.hdl`` beside a kernel leaves ``gpu`` the library's; the check warns of
    it at the import: :func:`beside_but_not_read`); on ``--hwd-path`` it would. The files
    are added one by one, not their folder: the library reads every description of a
    folder on the path and lets it replace its own. Only ``NAME.hdl`` that declares
    ``NAME`` (what an import can name); one that does not parse is added too, so that
    its import says why it cannot be used."""
    path = [str(p) for p in search_path]
    beside: dict[str, str] = {}
    for kernel in kernels:
        k = Path(kernel)
        folder = k if k.is_dir() else k.parent
        for f in sorted(folder.glob("*.hdl")):
            name = description_name(f)
            if name == f.stem and name not in beside:
                beside[name] = str(f)
    if not beside:
        return path
    known = hardware_library(path)
    return path + [f for name, f in beside.items() if name not in known]


def description_name(file: str | Path) -> str | None:
    """The name a ``.hdl`` file declares (``hardware_description NAME``), read without
    parsing the file; None if it cannot be read or declares none."""
    if not Path(file).is_file():     # a named pipe would wait for a writer for ever
        return None
    try:
        m = _NAME_RE.search(Path(file).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return None
    return m.group(1) if m else None


def beside_but_not_read(library: HardwareLibrary, name: str, kernel: str | Path) -> Path | None:
    """``NAME.hdl`` beside ``kernel`` when it declares ``name`` but ``library`` took
    ``name`` from another file (the bundled library or the search path), else None."""
    f = Path(kernel).parent / f"{name}.hdl"
    if name not in library or not f.is_file() or description_name(f) != name:
        return None
    try:
        return None if Path(library.file(name)).resolve() == f.resolve() else f
    except (KeyError, McplError):
        return None


def forget_hardware_libraries() -> None:
    """Drop the cached libraries, so that the next use reads the descriptions from disk
    again (the language server calls this when a .hdl file changes)."""
    _library.cache_clear()


def load_hardware(name: str, search_path: Sequence[str | Path] = ()) -> HardwareDescription:
    """A validated hardware description by name (bundled or from ``search_path``).
    Raises McplError with diagnostics if it is unknown or invalid."""
    return hardware_library(search_path).get(name)
