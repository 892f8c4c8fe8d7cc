"""Finding the versions of one kernel and which version refines which: from a folder,
a list of files, or the git history of one file; ``// refines: gpu_v1.mcpl`` in a
file names its parent explicitly."""

from __future__ import annotations

import re
import subprocess
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcl.diagnostics import Diagnostic, McplError, Span, error, warning
from mcl.mcpl import ast

_REFINES = re.compile(r"//\s*refines:\s*(\S+)")
_NUMBER = re.compile(r"^(.*?)_v(\d+)$")


@dataclass
class Version:
    """One version of the kernel: its text, level, checked module and parent."""

    name: str                      # file stem, or "stem@commit" for a git history
    file: str                      # the path spans name
    text: str
    number: int = 0                # the N of name_vN (0 for the translated file)
    commit: dict | None = None     # hash, date, subject (git histories)
    checked: Any = None
    level: str | None = None
    function: str | None = None    # the kernel (a function with foreach loops)
    parent: str | None = None
    why_parent: str = ""           # "refines comment", "level order", "git history"
    problems: list[Diagnostic] = field(default_factory=list)
    #: the kernel it holds when that is another than the set's: it is left out, no
    #: node of the tree (no parent, no child), listed after it
    other_kernel: str | None = None

    @property
    def usable(self) -> bool:
        """Checked without errors and a kernel of the set: it can be run."""
        return self.function is not None and not any(p.is_error for p in self.problems)

    @property
    def why_unusable(self) -> str:
        """Why the version is not run ("" when it is usable), its errors being in the
        problems: "another kernel" (``other_kernel``), "unreadable" (not UTF-8 text, or
        the file could not be read), "errors" (it does not check), "no kernel" (no
        function with foreach loops), "no leaf" (no leaf below its level to generate
        OpenCL for) or "compile error" (its OpenCL could not be generated or built)."""
        if self.usable:
            return ""
        if self.other_kernel is not None:
            return "another kernel"
        codes = {p.code for p in self.problems if p.is_error}
        if self.checked is None:     # not read (its text left empty), or not parsed
            unread = not self.text and codes & {"mcpl-file", "mcpl-encoding"}
            return "unreadable" if unread else "errors"
        if self.checked.has_errors:
            return "errors"
        for code, why in (("versions-no-kernel", "no kernel"), ("versions-no-leaf", "no leaf")):
            if code in codes:
                return why
        return "compile error"

    @property
    def function_node(self) -> ast.Function | None:
        if self.checked is None or self.function is None:
            return None
        return self.checked.module.function(self.function)


@dataclass
class VersionSet:
    """The versions of one kernel in refinement order, and what was wrong with the input."""

    source: str                    # the folder, file or list given
    versions: list[Version]
    kernel: str | None
    problems: list[Diagnostic] = field(default_factory=list)

    def get(self, name: str | None) -> Version | None:
        return next((v for v in self.versions if v.name == name), None)

    def children(self, name: str | None) -> list[Version]:
        return [v for v in self.versions if v.parent == name]

    @property
    def all_problems(self) -> list[Diagnostic]:
        return self.problems + [p for v in self.versions for p in v.problems]


# --------------------------------------------------------------------------- sources


def from_path(path: str | Path, *, git: bool | None = None,
              search_path: tuple[str, ...] = ()) -> VersionSet:
    """A folder of versions, or a file: its git history when it has one (``git`` None),
    else the folder it lies in."""
    p = Path(path)
    if p.is_dir():
        return from_folder(p, search_path=search_path)
    if not p.is_file():
        raise McplError(error("versions-no-such-path", f"{path}: no such file or folder",
                              hint="give a folder of versions or an MCPL file"))
    _refuse_other_file(p, "give the folder of the versions or one of its .mcpl files")
    if git is not False and _in_git(p):
        return from_git(p, search_path=search_path)
    if git:
        raise McplError(error("versions-not-in-git", f"{path} is not in a git repository",
                              Span.point(str(p), 1, 1),
                              hint="give the folder of its versions instead"))
    return from_folder(p.parent, search_path=search_path)


def _refuse_other_file(p: Path, hint: str) -> None:
    """A file that is not MCPL (reference.py, notes) given as a version is refused,
    rather than read as MCPL and reported as syntax errors at every line."""
    if p.suffix not in (".mcpl", ".mcl"):
        raise McplError(error("versions-not-mcpl", f"{p}: not an MCPL file (.mcpl)",
                              hint=hint))


def from_given(paths: list[str | Path], *, search_path: tuple[str, ...] = ()) -> VersionSet:
    """The versions in several files given on the command line: each an existing .mcpl
    file (a folder is given alone)."""
    for f in paths:
        p = Path(f)
        if p.is_dir():
            raise McplError(error("versions-folder-among-files", f"{f}: a folder among "
                                  f"{len(paths)} paths",
                                  hint="give one folder of versions alone, or several .mcpl "
                                       "files"))
        if not p.is_file():
            raise McplError(error("versions-no-such-path", f"{f}: no such file",
                                  hint="give existing .mcpl files"))
        _refuse_other_file(p, "give several .mcpl files, or the folder of the versions")
    return from_files(paths, search_path=search_path)


def from_folder(folder: str | Path, *, search_path: tuple[str, ...] = ()) -> VersionSet:
    folder = Path(folder)
    found = sorted(folder.glob("*.mcpl"))
    files = [f for f in found if f.is_file()]
    # a folder named *.mcpl, or a link to nothing, is no version: said, and left out
    skipped = [(warning if f.is_dir() else error)(
        "versions-not-a-file", f"{f}: {_what(f)}, not a version: left out", None)
        for f in found if not f.is_file()]
    if not files:
        problem = error("versions-no-mcpl-file", f"{folder}: the folder holds no MCPL file "
                        "(*.mcpl)", None,
                        hint="give the folder that holds the versions of one kernel "
                             "(perfect.mcpl, gpu_v1.mcpl, ...)")
        return VersionSet(str(folder), [], None, [*skipped, problem])
    vs = from_files(files, source=str(folder), search_path=search_path)
    vs.problems[:0] = skipped
    return vs


def _what(p: Path) -> str:
    return "a folder" if p.is_dir() else "not a readable file (a link to nothing?)"


def from_files(files: list[str | Path], *, source: str | None = None,
               search_path: tuple[str, ...] = (),
               texts: dict[str, str] | None = None) -> VersionSet:
    """Versions from files (level order and file names decide the tree); ``texts``
    gives the contents of some files by path (unsaved editor buffers)."""
    from mcl.mcpl.source import read_source
    versions = []
    for f in files:
        p = Path(f)
        text = (texts or {}).get(str(p))
        if text is None and not p.is_file():
            raise McplError(error("versions-no-such-path", f"{f}: no such file",
                                  hint="give existing .mcpl files"))
        problems = []
        if text is None:
            try:
                text = read_source(p)
            except McplError as e:   # not UTF-8, unreadable: a version with its problem
                text, problems = "", list(e.diagnostics)
        v = _version(p.stem, str(p), text)
        v.problems += problems
        versions.append(v)
    return _build(source or " ".join(map(str, files)), versions, search_path, history=False)


def from_git(file: str | Path, *, search_path: tuple[str, ...] = ()) -> VersionSet:
    """The versions of ``file`` in its git history, oldest first (renames followed),
    and the working copy when it differs from the last commit."""
    p = Path(file).resolve()
    out = _git(p.parent, "log", "--follow", "--format=%x01%H%x09%ad%x09%s", "--date=short",
               "--name-only", "--", p.name)
    top = _git(p.parent, "rev-parse", "--show-toplevel").strip()
    versions: list[Version] = []
    last = b""      # the bytes of the newest commit's version
    for record in reversed(out.split("\x01")[1:]):
        head, *names = [ln for ln in record.splitlines() if ln.strip()]
        commit, date, subject = (head.split("\t", 2) + ["", ""])[:3]
        rel = names[-1] if names else str(p.relative_to(top))
        try:
            data = _git_bytes(Path(top), "show", f"{commit}:{rel}")
        except McplError:
            continue  # the commit deleted the file
        name = f"{Path(rel).stem}@{commit[:7]}"
        text, problems = _utf8(data, f"{p}@{commit[:7]}")
        last = data
        v = _version(name, f"{p}@{commit[:7]}", text)
        v.commit = {"hash": commit, "date": date, "subject": subject}
        v.problems += problems
        versions.append(v)
    from mcl.mcpl.source import read_source
    try:
        current, problems = read_source(p), []
    except McplError as e:     # not UTF-8: the working copy is a version with its problem
        current, problems = "", list(e.diagnostics)
    if not versions or (last != p.read_bytes() if problems else versions[-1].text != current):
        v = _version(f"{p.stem}@working-copy", str(p), current)
        v.commit = {"hash": None, "date": "", "subject": "not committed"}
        v.problems += problems
        versions.append(v)
    for i, v in enumerate(versions):
        v.number = i
    return _build(str(file), versions, search_path, history=True)


def _in_git(p: Path) -> bool:
    try:
        _git(p.parent, "ls-files", "--error-unmatch", p.name)
        return True
    except McplError:
        return False


def _git(cwd: Path, *args: str) -> str:
    return _git_bytes(cwd, *args).decode("utf-8", errors="replace")


def _git_bytes(cwd: Path, *args: str) -> bytes:
    """git's output as bytes: a version committed in another encoding than UTF-8 is
    that version's problem, not a crash."""
    try:
        r = subprocess.run(["git", *args], cwd=cwd, capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise McplError(error("versions-git", f"git {args[0]} failed: {e}",
                              hint="is git installed?")) from None
    if r.returncode:
        err = r.stderr.decode("utf-8", errors="replace").strip()
        raise McplError(error("versions-git", f"git {args[0]} failed: "
                              f"{err.splitlines()[-1] if err else ''}"))
    return r.stdout


def _utf8(data: bytes, name: str) -> tuple[str, list[Diagnostic]]:
    """The text of a committed version, or "" and why it is not UTF-8 text."""
    try:
        return data.decode("utf-8").removeprefix("\ufeff"), []
    except UnicodeDecodeError as e:
        line = data[:e.start].count(b"\n") + 1
        col = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        return "", [error("mcpl-encoding", f"this version is not UTF-8 text (byte "
                          f"0x{data[e.start]:02x})", Span.point(name, line, col),
                          "save the file as UTF-8")]


def _version(name: str, file: str, text: str) -> Version:
    m = _NUMBER.match(name.split("@")[0])
    return Version(name, file, text, int(m.group(2)) if m else 0)


# --------------------------------------------------------------------------- the tree


def _build(source: str, versions: list[Version], search_path: tuple[str, ...],
           history: bool) -> VersionSet:
    from mcl.hdl import hardware_library
    from mcl.mcpl import check

    lib = hardware_library(search_path)
    for v in versions:
        if v.problems:      # the file could not be read
            continue
        try:
            v.checked = check(v.file, search_path, source=v.text)
        except McplError as e:
            v.problems += e.diagnostics
            continue
        v.problems += [d for d in v.checked.diagnostics if d.is_error]
        kernels = [f for f in v.checked.module.functions
                   if any(isinstance(n, ast.ForEach) for n in ast.walk(f.body))]
        if kernels:
            v.function, v.level = kernels[0].name, kernels[0].hardware
        elif not v.problems:
            v.problems.append(error("versions-no-kernel", f"{Path(v.file).name} has no function "
                                    "with foreach loops (no kernel to compare)",
                                    Span.point(v.file, 1, 1)))
        if v.level is None and v.checked.module.functions:
            v.level = v.checked.module.functions[0].hardware
    kernel = _kernel_name(versions, lib)
    for v in versions:
        if v.function is not None and kernel is not None and v.function != kernel:
            f = v.function_node
            v.problems.append(error(
                "versions-other-kernel", f"{Path(v.file).name} holds the kernel '{v.function}', "
                f"not '{kernel}' like the other versions: it is left out", f.span if f else None,
                hint="keep the versions of one kernel in a folder of their own"))
            v.other_kernel, v.function = v.function, None

    def depth(v: Version) -> int:
        return len(lib.ancestors(v.level)) if v.level in lib else 99

    if not history:
        versions.sort(key=lambda v: (depth(v), v.level or "", v.number, v.name))
    cycles = _parents(versions, lib, history)
    return VersionSet(source, _tree_order(versions), kernel, cycles)


def _kernel_name(versions: list[Version], lib: Any) -> str | None:
    """The kernel most versions hold; a tie goes to the highest level's."""
    names = Counter(v.function for v in versions if v.function)
    if not names:
        return None
    best = max(names.values())
    tied = [v for v in versions if v.function and names[v.function] == best]
    tied.sort(key=lambda v: len(lib.ancestors(v.level)) if v.level in lib else 99)
    return tied[0].function


def _parents(versions: list[Version], lib: Any, history: bool) -> list[Diagnostic]:
    """Each version's parent; the errors of refines comments that go round in a circle
    (of the set: those versions are still run). A version of another kernel is left
    out of the tree: it has no parent and is no version's parent (a refines comment
    naming it is told so)."""
    by_name = {v.name: v for v in versions}
    by_file = {Path(v.file).name: v for v in versions}
    for i, v in enumerate(versions):
        if v.other_kernel is not None:
            continue
        before = [u for u in versions[:i] if u.other_kernel is None]
        m = _REFINES.search(v.text)
        if m:
            target = m.group(1)
            parent = by_file.get(target) or by_name.get(target.removesuffix(".mcpl"))
            if parent is not None and parent is not v and parent.other_kernel is None:
                v.parent, v.why_parent = parent.name, "refines comment"
                continue
            v.problems.append(warning(
                "versions-unknown-parent",
                f"'refines: {target}' names this version itself: a version refines another"
                if parent is v else
                f"'refines: {target}' names a version of another kernel "
                f"('{parent.other_kernel}'), which is left out of this set"
                if parent is not None else f"'refines: {target}' names no version of this set",
                _refines_span(v, m),
                hint="name the version it was refined from, or remove the comment"
                if parent is not None else
                "name a file of the same folder, e.g. // refines: gpu_v1.mcpl"))
        if history:
            if before:
                v.parent, v.why_parent = before[-1].name, "git history"
            continue
        v.parent = _level_parent(v, before, lib)
        v.why_parent = "level order" if v.parent else ""
    return _break_cycles(versions, lib)


def _refines_span(v: Version, m: re.Match[str]) -> Span:
    line = v.text[:m.start()].count("\n") + 1
    col = m.start() - (v.text.rfind("\n", 0, m.start()) + 1) + 1
    return Span(v.file, line, col, line, col + len(m.group(0)))


def _break_cycles(versions: list[Version], lib: Any) -> list[Diagnostic]:
    """Refines comments that lead round in a circle: the first version of the circle
    (the highest level) takes its parent by level order instead, with an error at its
    comment. Each pass drops one comment's parent, and parents by level order come
    before their child, so this ends."""
    by_name = {v.name: v for v in versions}
    problems: list[Diagnostic] = []
    while True:
        cycle: list[Version] = []
        for v in versions:
            seen: list[Version] = []
            u: Version | None = v
            while u is not None and u not in seen:
                seen.append(u)
                u = by_name.get(u.parent) if u.parent else None
            if u is not None:
                cycle = seen[seen.index(u):]
                break
        if not cycle:
            return problems
        first = min((u for u in cycle if u.why_parent == "refines comment"),
                    key=versions.index)
        i = versions.index(first)
        m = _REFINES.search(first.text)
        circle = " -> ".join(u.name for u in cycle[cycle.index(first):] + cycle[
            :cycle.index(first)] + [first])
        first.parent = _level_parent(first, versions[:i], lib)
        first.why_parent = "level order" if first.parent else ""
        problems.append(error(
            "versions-refines-cycle",
            f"the refines comments go round in a circle: {circle} (each refines the "
            f"next); '{first.name}' is placed by level order instead"
            + (f", refining '{first.parent}'" if first.parent else ", as a root"),
            _refines_span(first, m) if m else None,
            hint="a version refines one written before it: remove or correct this "
                 "comment"))


def _level_parent(v: Version, before: list[Version], lib: Any) -> str | None:
    """The previous version at the same level, else the last version of the nearest
    level above that has versions (versions of another kernel are none)."""
    before = [u for u in before if u.other_kernel is None]
    same = [u for u in before if u.level == v.level and u.number < v.number]
    if same:
        return same[-1].name
    if v.level in lib:
        for above in lib.ancestors(v.level):
            at = [u for u in before if u.level == above]
            if at:
                return max(at, key=lambda u: u.number).name
    return None


def _tree_order(versions: list[Version]) -> list[Version]:
    """Depth-first from the roots, children in input order: a parent before its children;
    the versions of another kernel after the tree."""
    kids: dict[str | None, list[Version]] = {}
    names = {v.name for v in versions}
    for v in versions:
        if v.other_kernel is None:
            kids.setdefault(v.parent if v.parent in names else None, []).append(v)
    out: list[Version] = []

    def visit(v: Version) -> None:
        if v in out:
            return
        out.append(v)
        for c in kids.get(v.name, []):
            visit(c)

    for root in kids.get(None, []):
        visit(root)
    out += [v for v in versions if v not in out]   # another kernel's, or a cycle of refines
    return out


def highest(vs: VersionSet) -> Version | None:
    """The usable version closest to the root of the hierarchy (the first in order)."""
    return next((v for v in vs.versions if v.usable), None)
