"""What the word under the cursor refers to, for hover and go to definition.

:func:`target_at` finds the innermost AST node at a position and, with the
resolution tables of the checked module, the thing the word there names: a
variable, a function, a record type, a module, a hardware description, a
par_group, a memory space, a property or block of a description. Hover renders
a target as Markdown; definition turns it into a location (into the library's
``.hdl`` files for hardware). Positions here are the compiler's: 1-based lines,
1-based code-point columns.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from mcl.diagnostics import Span
from mcl.lsp.analysis import Analysis
from mcl.mcpl import ast

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


# --------------------------------------------------------------------------- text helpers


def word_at(line_text: str, column: int) -> tuple[str, int, int] | None:
    """The identifier at 1-based ``column`` (or just before it, where a cursor sits
    after typing): (word, start column, end column exclusive)."""
    for m in _IDENT.finditer(line_text):
        if m.start() + 1 <= column <= m.end() + 1:
            if column == m.end() + 1 and m.end() < len(line_text) and \
                    _IDENT.match(line_text, m.end()):
                continue
            return m.group(), m.start() + 1, m.end() + 1
    return None


def dotted_at(line_text: str, column: int) -> tuple[list[str], int] | None:
    """The dotted name around ``column`` (``gpu.hierarchy.blocks``) and the index of the
    segment under the cursor."""
    w = word_at(line_text, column)
    if w is None:
        return None
    _, start, end = w
    i, j = start - 1, end - 1
    while i > 0 and (line_text[i - 1].isalnum() or line_text[i - 1] in "._"):
        i -= 1
    while j < len(line_text) and (line_text[j].isalnum() or line_text[j] in "._"):
        j += 1
    before = line_text[i:start - 1].strip(".")
    parts = [p for p in line_text[i:j].strip(".").split(".") if p]
    return parts, before.count(".") + (1 if before else 0)


@lru_cache(maxsize=64)
def _file_text(path: str, mtime: float) -> str:
    return Path(path).read_text(encoding="utf-8", errors="replace")


def file_text(path: str, analysis: Analysis | None = None) -> str | None:
    """The text of a file: the buffer if it is the analysed document, else the disk."""
    if analysis is not None and _same(path, analysis.file):
        return analysis.text
    try:
        return _file_text(path, Path(path).stat().st_mtime)
    except OSError:
        return None


def _same(a: str, b: str) -> bool:
    from mcl.lsp.analysis import same_file

    return same_file(a, b)


def name_span(span: Span, name: str, text: str | None, after: Span | None = None) -> Span:
    """The span of ``name`` written inside ``span`` (after ``after`` if given) outside
    brackets, so that a definition selects the declared name rather than the whole
    declaration (``dev float[n, m] c``: the ``c``, not an ``n`` of the sizes)."""
    if text is None or span.line <= 0:
        return span
    lines = text.split("\n")
    start_line, start_col = (after.end_line, after.end_column) if after else (span.line,
                                                                               span.column)
    pattern = re.compile(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])")
    depth = 0
    for ln in range(start_line, min(span.end_line, len(lines)) + 1):
        s = lines[ln - 1]
        begin = start_col - 1 if ln == start_line else 0
        stop = span.end_column - 1 if ln == span.end_line else len(s)
        i = begin
        while i < stop:
            ch = s[i]
            if ch in "[(":
                depth += 1
            elif ch in "])":
                depth -= 1
            elif depth == 0:
                m = pattern.match(s, i)
                if m and (i == 0 or not (s[i - 1].isalnum() or s[i - 1] == "_")):
                    return Span(span.file, ln, m.start() + 1, ln, m.end() + 1)
            i += 1
    return span


# --------------------------------------------------------------------------- nodes at a position


def nodes_at(module: ast.Module, line: int, column: int) -> list[ast.Node]:
    """The nodes whose span contains the position, outermost first, down to the
    innermost one. Several children may contain it (a declaration's Type carries the
    declaration's span): the deepest path wins."""
    best: list[ast.Node] = []
    stack: list[tuple[ast.Node, list[ast.Node]]] = [
        (n, [n]) for n in (*module.imports, *module.types, *module.functions)
        if _contains(n.span, line, column)]
    while stack:
        node, path = stack.pop()
        if len(path) > len(best):
            best = path
        for c in ast.children(node):
            if _contains(c.span, line, column):
                stack.append((c, path + [c]))
    return best


def _contains(span: Span, line: int, column: int) -> bool:
    if span.line <= 0:
        return False
    return (span.line, span.column) <= (line, column) < (span.end_line, span.end_column)


# --------------------------------------------------------------------------- targets


@dataclass
class Target:
    """What a word refers to. ``kind`` is one of: symbol, function, builtin, type,
    module, hardware, par_group, memory_space, property, block, hdl_block."""

    kind: str
    name: str
    value: Any = None           # the Symbol, FunctionInfo, TypeDef, model block, ...
    hardware: Any = None        # the hardware description it belongs to
    path: tuple[str, ...] = ()  # for properties and blocks: the dotted path
    span: Span | None = None    # the span of the word in the document


def target_at(analysis: Analysis, line: int, column: int) -> Target | None:
    """The target of the word at a position of an MCPL or HDL document."""
    if analysis.language == "hdl":
        return _hdl_target(analysis, line, column)
    module = analysis.module
    if module is None:
        return None
    line_text = analysis.text.split("\n")[line - 1] if line >= 1 else ""
    w = word_at(line_text, column)
    if w is None:
        return None
    word, start, end = w
    here = Span(analysis.file, line, start, line, end)
    checked = analysis.checked
    path = nodes_at(module, line, start)
    function = next((n for n in path if isinstance(n, ast.Function)), None)
    hw = _hardware_of(analysis, function) if function is not None else None
    for node in reversed(path):
        t = _target_in(node, word, here, analysis, checked, hw, line_text, column)
        if t is not None:
            t.span = t.span or here
            return t
    if not path and word == module.name:
        return Target("module", word, analysis.file, span=here)
    return None


def _hardware_of(analysis: Analysis, function: ast.Function) -> Any:
    checked = analysis.checked
    hw = checked.hardware_of(function) if checked is not None else None
    if hw is None:
        try:
            hw = analysis.library().get(function.hardware)
        except Exception:  # unknown or invalid description: nothing to show
            hw = None
    return hw


def _target_in(node: ast.Node, word: str, here: Span, analysis: Analysis, checked: Any,
               hw: Any, line_text: str, column: int) -> Target | None:
    if isinstance(node, ast.Name) and node.id == word:
        sym = checked.declaration_of(node) if checked is not None else None
        if sym is not None:
            return Target("symbol", word, sym, hw)
        return None
    if isinstance(node, ast.HwdRef) and word in node.path:
        d = dotted_at(line_text, column)
        parts, i = (d if d is not None else (list(node.path), node.path.index(word)))
        return _hwd_path_target(analysis, parts[: i + 1], tuple(node.path), hw)
    if isinstance(node, ast.Call) and node.func == word:
        callee = checked.callee(node) if checked is not None else None
        if callee is not None:
            return Target("function", word, callee, callee.hardware)
        return Target("builtin", word)
    if isinstance(node, ast.Type) and node.name == word:
        if checked is not None and word in checked.types:
            return Target("type", word, checked.types[word])
        return None
    if isinstance(node, ast.Declaration | ast.Param | ast.View):
        if node.name == word:
            sym = checked.symbol(node) if checked is not None else None
            if sym is not None:
                return Target("symbol", word, sym, hw)
        if getattr(node, "space", None) == word and hw is not None:
            return _space_target(hw, word)
        return None
    if isinstance(node, ast.ForEach) and word in (node.group, "foreach") and hw is not None:
        group = checked.par_group_of(node) if checked is not None else None
        if group is None and hw.has_par_group(node.group):
            group = hw.par_group(node.group)
        if group is not None:
            return Target("par_group", group.name, group, hw)
        return None
    if isinstance(node, ast.Barrier) and node.space == word and hw is not None:
        return _space_target(hw, word)
    if isinstance(node, ast.Function):
        if word == node.hardware:
            return _hardware_target(analysis, word)
        if word == node.name:
            info = checked.info(node) if checked is not None else None
            return Target("function", word, info or node, hw)
        return None
    if isinstance(node, ast.Import):
        dotted = node.dotted
        if len(node.path) == 1:
            t = _hardware_target(analysis, dotted)
            if t is not None:
                return t
        sub = checked.modules.get(dotted) if checked is not None else None
        if sub is not None:
            return Target("module", dotted, sub.module.file)
        from mcl.mcpl.resolve import find_module

        f = find_module(node.path, analysis.file, analysis.settings.search_path)
        return Target("module", dotted, str(f)) if f is not None else None
    if isinstance(node, ast.TypeDef) and node.name == word:
        return Target("type", word, node)
    return None


def _space_target(hw: Any, name: str) -> Target | None:
    if not hw.has_memory_space(name):
        return None
    return Target("memory_space", name, hw.memory_space(name), hw)


def _hardware_target(analysis: Analysis, name: str) -> Target | None:
    lib = analysis.library()
    if name not in lib:
        return None
    try:
        hw = lib.model(name)
    except Exception:  # a description that does not even build
        return Target("hardware", name, None)
    return Target("hardware", name, hw, hw)


def _hwd_path_target(analysis: Analysis, parts: list[str], full: tuple[str, ...],
                     hw: Any) -> Target | None:
    """The block or property a prefix of a description path names."""
    lib = analysis.library()
    desc = None
    if parts and parts[0] in lib:
        t = _hardware_target(analysis, parts[0])
        desc = t.hardware if t else None
        if len(parts) == 1:
            return t
        rest = parts[1:]
    else:
        desc, rest = hw, parts
    if desc is None or not rest:
        return None
    block = desc.top_block(rest[0])
    for name in rest[1:-1]:
        block = block.child(name) if block is not None else None
    if block is None:
        return None
    if len(rest) == 1:
        return Target("block", ".".join(parts), block, desc, tuple(parts))
    last = rest[-1]
    child = block.child(last)
    if child is not None:
        return Target("block", ".".join(parts), child, desc, tuple(parts))
    prop = block.prop(last)
    if prop is not None:
        return Target("property", ".".join(parts), prop, desc, tuple(parts))
    return None


# --------------------------------------------------------------------------- HDL documents


def _hdl_target(analysis: Analysis, line: int, column: int) -> Target | None:
    """In a description: a qualified reference (``perfect.hierarchy.threads``), the
    parent after ``specializes``, or a block name used in ``space(..)``/``slots(..)``."""
    hw = analysis.hardware
    line_text = analysis.text.split("\n")[line - 1] if line >= 1 else ""
    d = dotted_at(line_text, column)
    if d is None:
        return None
    parts, i = d
    w = word_at(line_text, column)
    assert w is not None
    here = Span(analysis.file, line, w[1], line, w[2])
    prefix = parts[: i + 1]
    lib = analysis.library()
    if len(prefix) == 1 and (prefix[0] in lib or (hw is not None and prefix[0] == hw.name)):
        t = _hardware_target(analysis, prefix[0])
        if t is not None and hw is not None and prefix[0] == hw.name:
            t = Target("hardware", hw.name, hw, hw)
        if t is not None:
            t.span = here
            return t
    if hw is None:
        return None
    t = _hwd_path_target(analysis, prefix, tuple(parts), hw)
    if t is None and len(prefix) == 1:
        name = prefix[0]
        block = next((b for b in hw.walk() if b.name == name), None)
        if block is not None:
            t = Target("block", name, block, hw, (name,))
    if t is not None:
        t.span = here
    return t


# --------------------------------------------------------------------------- definitions


def definition(analysis: Analysis, line: int, column: int) -> list[Span]:
    """Where the target at a position is defined (empty if nowhere known)."""
    t = target_at(analysis, line, column)
    if t is None:
        return []
    if t.kind == "symbol":
        node = t.value.node
        return [name_span(node.span, t.name, file_text(node.span.file, analysis))]
    if t.kind == "function":
        f = t.value.function if hasattr(t.value, "function") else t.value
        text = file_text(f.span.file, analysis)
        return [name_span(f.span, f.name, text)]
    if t.kind == "type":
        text = file_text(t.value.span.file, analysis)
        return [name_span(t.value.span, t.name, text)]
    if t.kind == "module":
        return [Span(str(t.value), 1, 1, 1, 1)] if t.value else []
    if t.kind == "hardware":
        hw = t.value
        if hw is None:
            return []
        span = hw.name_span or hw.span
        return [span]
    if t.kind in ("par_group", "memory_space", "block"):
        return [_block_name_span(t.value, analysis)]
    if t.kind == "property":
        return [t.value.span]
    return []


def _block_name_span(block: Any, analysis: Analysis) -> Span:
    text = file_text(block.span.file, analysis)
    return name_span(block.span, block.name, text, block.keyword_span)
