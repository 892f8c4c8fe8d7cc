"""Completion: what may be written at the cursor.

The context comes from the text before the cursor, scanned lexically (so that it
works while the line being typed does not parse): which function and which
foreach loops are open, whether the cursor is in a foreach header, after
``import``, after a dotted description path, or at a statement start. The
meaning comes from the hardware description of the enclosing function (memory
spaces visible at that depth, par_groups that may nest there) and from the
latest analysis (names in scope, functions, record types).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from lsprotocol import types as lsp

from mcl.lsp.analysis import Analysis
from mcl.lsp.settings import Settings
from mcl.mcpl import ast

CK = lsp.CompletionItemKind

TYPES = ("int", "long", "float", "double", "bool", "byte", "void")
STATEMENT_KEYWORDS = ("foreach", "for", "if", "else", "while", "return", "barrier", "break",
                      "continue", "const")
TOP_KEYWORDS = ("module", "import", "type", "package", "export")
HDL_STATEMENTS = ("nr_units", "max_nr_units", "capacity", "latency", "bandwidth", "nr_banks",
                  "clock_frequency", "addressable", "cache_line_size", "width", "consistency",
                  "allocation_unit", "reserved", "sector_size",
                  "slots", "connects", "space", "op", "performance_feedback", "default",
                  "read_only")

_TOKEN = re.compile(r"//[^\n]*|/\*[\s\S]*?(?:\*/|$)|\"(?:[^\"\\\n]|\\.)*\"?|[A-Za-z_]\w*"
                    r"|\d[\w.]*|\S")


@dataclass
class Context:
    """Where the cursor is, lexically."""

    level: str | None = None             # the hardware description of the open function
    groups: list[str] = field(default_factory=list)   # open foreach par_groups, outermost first
    depth: int = 0                       # open braces
    in_foreach_header: bool = False      # between `foreach (` and its `)`
    after_in: bool = False               # ... and after `in <size> `


def scan(before: str) -> Context:
    """The lexical context at the end of ``before`` (the text up to the cursor)."""
    ctx = Context()
    toks = [t for t in _TOKEN.findall(before) if not t.startswith(("//", "/*"))]
    # One entry per open brace: the par_group of a foreach it opened, "" for others.
    braces: list[str] = []
    parens = 0
    header: list[str] | None = None     # tokens of an open foreach header
    pending_group: str | None = None    # a foreach header just closed, awaiting its body
    single: str | None = None           # the group of an open one-statement foreach body
    for i, t in enumerate(toks):
        if header is not None:
            if t == "(":
                parens += 1
            elif t == ")":
                parens -= 1
                if parens == 0:
                    pending_group = header[-1] if header else None
                    header = None
                    continue
            header.append(t)
            continue
        if t == "foreach":
            header, parens = [], 0
            if i + 1 < len(toks) and toks[i + 1] == "(":
                continue
        elif t == "{":
            if not braces and i >= 3:
                # `level type name(...) {`: the level is the first word of the header
                ctx.level = _function_level(toks[:i])
            braces.append(pending_group or "")
            pending_group = None
        elif t == "}":
            if braces:
                braces.pop()
            if not braces:
                ctx.level = None
        elif t == ";":
            pending_group = single = None
        elif pending_group is not None:
            # A foreach whose body is one statement: its group is open until ';'.
            single, pending_group = pending_group, None
    if header is not None:
        ctx.in_foreach_header = True
        inner = [t for t in header if t != "("]
        if "in" in inner:
            after = inner[inner.index("in") + 1:]
            # `in n ` or `in n thr`: the size is written, the group comes next
            ctx.after_in = (bool(after) and before[-1:].isspace()) or len(after) >= 2
    ctx.groups = [g for g in braces if g] + ([single] if single else [])
    ctx.depth = len(braces)
    return ctx


def _function_level(toks: list[str]) -> str | None:
    """The first word of the function header that ends at the end of ``toks``."""
    depth = 0
    j = len(toks) - 1
    while j >= 0:
        t = toks[j]
        if t == ")":
            depth += 1
        elif t == "(":
            depth -= 1
            if depth == 0:
                break
        j -= 1
    # before '(' : name, type (maybe with dims), level
    k = j - 1
    words = []
    while k >= 0 and toks[k] not in (";", "}") and len(words) < 40:
        words.append(toks[k])
        k -= 1
    words.reverse()
    return words[0] if words and re.match(r"[A-Za-z_]", words[0]) else None


# --------------------------------------------------------------------------- items


def _item(label: str, kind: lsp.CompletionItemKind, detail: str | None = None,
          doc: str | None = None, sort: str = "5") -> lsp.CompletionItem:
    return lsp.CompletionItem(
        label=label, kind=kind, detail=detail, sort_text=f"{sort}{label}",
        documentation=lsp.MarkupContent(lsp.MarkupKind.Markdown, doc) if doc else None)


def complete(text: str, language: str, line: int, column: int, analysis: Analysis | None,
             settings: Settings) -> list[lsp.CompletionItem]:
    """Completion items at a (1-based) position of ``text``."""
    lines = text.split("\n")
    prefix = lines[line - 1][: column - 1] if 1 <= line <= len(lines) else ""
    before = "\n".join(lines[: line - 1] + [prefix])
    lib = _library(settings, analysis)
    if language == "hdl":
        return _complete_hdl(prefix, analysis, lib)
    dotted = re.search(r"([A-Za-z_][\w.]*)\.(\w*)$", prefix)
    if dotted:
        return _property_paths(dotted.group(1).split("."), lib, analysis)
    if re.match(r"^\s*import\s+[\w.]*$", prefix):
        return _imports(lib, analysis)
    ctx = scan(before)
    hw = _hardware(lib, ctx.level)
    if ctx.in_foreach_header:
        items = []
        if ctx.after_in and hw is not None:
            items += _par_groups(hw, ctx.groups)
        items += _names(analysis, line, column, before)
        return items
    if ctx.depth == 0:
        return _top_level(prefix, lib)
    if re.search(r"\bbarrier\s*\(\s*\w*$", prefix):
        return _spaces(hw, ctx.groups)
    items = _names(analysis, line, column, before)
    items += _functions(analysis)
    items += [_item(h, CK.Module, "hardware description", sort="8") for h in _names_of(lib)]
    items += [_item(w, CK.Keyword, sort="7") for w in ("true", "false")]
    if re.match(r"^\s*[A-Za-z_]*$", prefix) or re.search(r"[;{}]\s*[A-Za-z_]*$", prefix):
        # a statement or declaration may start here
        items += [_item(k, CK.Keyword, sort="6") for k in STATEMENT_KEYWORDS]
        items += [_item(t, CK.TypeParameter, "type", sort="6") for t in TYPES]
        items += _spaces(hw, ctx.groups)
        items += _record_types(analysis)
    return _unique(items)


def _unique(items: list[lsp.CompletionItem]) -> list[lsp.CompletionItem]:
    seen: set[str] = set()
    out = []
    for it in items:
        if it.label not in seen:
            seen.add(it.label)
            out.append(it)
    return out


def _library(settings: Settings, analysis: Analysis | None = None) -> Any:
    """The descriptions the document is checked against: with an analysis of a kernel
    saved on disk, those beside it too (``import mylevel;`` offers ``mylevel``)."""
    from mcl.hdl import hardware_library

    try:
        return analysis.library() if analysis is not None else \
            hardware_library(settings.search_path)
    except Exception:  # a broken search path: no descriptions to offer
        return None


def _names_of(lib: Any) -> list[str]:
    return list(lib.names()) if lib is not None else []


def _hardware(lib: Any, name: str | None) -> Any:
    if lib is None or name is None or name not in lib:
        return None
    try:
        return lib.model(name)
    except Exception:  # the description does not build
        return None


def _top_level(prefix: str, lib: Any) -> list[lsp.CompletionItem]:
    """Outside functions: a description in the level slot of a new function, the
    top-level keywords, or a type after the level."""
    if re.match(r"^\s*[A-Za-z_]\w*\s+\w*$", prefix):
        return [_item(t, CK.TypeParameter, "return type") for t in TYPES]
    items = [_item(h, CK.Module, "hardware description (function level)", sort="1")
             for h in _names_of(lib)]
    items += [_item(k, CK.Keyword, sort="6") for k in TOP_KEYWORDS]
    return items


def _imports(lib: Any, analysis: Analysis | None) -> list[lsp.CompletionItem]:
    from pathlib import Path

    from mcl.mcpl.resolve import STDLIB

    items = [_item(h, CK.Module, "hardware description") for h in _names_of(lib)]
    items += [_item(f"lib.{p.stem}", CK.Module, "standard library", sort="6")
              for p in sorted(STDLIB.glob("*.mcpl"))]
    # an unsaved buffer has no folder (Path("untitled:1").parent is the server's cwd)
    if analysis is not None and Path(analysis.file).is_absolute():
        here = Path(analysis.file)
        for p in sorted([*here.parent.glob("*.mcpl"), *here.parent.glob("*.mcl")]):
            if p.name != here.name:
                items.append(_item(p.stem, CK.File, "module next to this file", sort="7"))
    return items


def _par_groups(hw: Any, enclosing: list[str]) -> list[lsp.CompletionItem]:
    """The par_groups a foreach may use inside loops over ``enclosing``: the innermost
    enclosing group itself (a 2-D grid) and the ones nested in it."""
    groups = hw.par_groups()
    names = [g.name for g in groups]
    start = max((names.index(g) for g in enclosing if g in names), default=0)
    out = []
    for g in groups[start:]:
        limit = g.nr_units if g.nr_units is not None else g.max_nr_units
        out.append(_item(g.name, CK.Enum, f"par_group of {hw.name}",
                         f"at most {limit} units" if limit is not None else None, sort="1"))
    return out


def _spaces(hw: Any, enclosing: list[str]) -> list[lsp.CompletionItem]:
    if hw is None:
        return []
    return [_item(ms.name, CK.Unit, f"memory space of {hw.name}" +
                  (" (default)" if ms.is_default else ""), sort="4")
            for ms in hw.visible_memory_spaces(enclosing)]


def _functions(analysis: Analysis | None) -> list[lsp.CompletionItem]:
    from mcl.mcpl.checks import BUILTINS

    items = []
    checked = analysis.checked if analysis is not None else None
    if checked is not None:
        items += [_item(n, CK.Function, f"function for {info.function.hardware}", sort="3")
                  for n, info in checked.functions.items()]
    elif analysis is not None and analysis.module is not None:
        items += [_item(f.name, CK.Function, f"function for {f.hardware}", sort="3")
                  for f in analysis.module.functions]
    items += [_item(n, CK.Function, "built-in", sort="8") for n in BUILTINS]
    return items


def _record_types(analysis: Analysis | None) -> list[lsp.CompletionItem]:
    checked = analysis.checked if analysis is not None else None
    if checked is None:
        return []
    return [_item(n, CK.Struct, "record type", sort="6") for n in checked.types]


_DECLARED = re.compile(r"\b(?:int|long|float|double|bool)\s*(?:\[[^\]\n]*\])*\s+"
                       r"([A-Za-z_]\w*)")


def _names(analysis: Analysis | None, line: int, column: int, before: str
           ) -> list[lsp.CompletionItem]:
    """Variables in scope at the cursor: from the AST of the latest analysis, plus
    declarations typed since (found lexically in the open function)."""
    from mcl.mcpl.printer import print_type

    items: list[lsp.CompletionItem] = []
    module = analysis.module if analysis is not None else None
    if module is not None:
        from mcl.lsp.navigation import nodes_at

        path = nodes_at(module, line, column)
        function = next((n for n in path if isinstance(n, ast.Function)), None)
        if function is not None:
            for p in function.params:
                items.append(_item(p.name, CK.Variable, print_type(p.type), sort="2"))
            for node in path:
                for d in _declared_in(node, line, column):
                    items.append(_item(d.name, CK.Variable, print_type(d.type), sort="2"))
    # Declarations in the text of the open function (the AST may be older).
    start = max(before.rfind("\n}"), 0)
    for m in _DECLARED.finditer(before, start):
        items.append(_item(m.group(1), CK.Variable, sort="2"))
    return _unique(items)


def _declared_in(node: ast.Node, line: int, column: int) -> list[ast.Declaration]:
    """Declarations that ``node`` makes visible at the position (inside it)."""
    if isinstance(node, ast.ForEach):
        return [node.var]
    if isinstance(node, ast.For) and isinstance(node.init, ast.Declaration):
        return [node.init]
    if isinstance(node, ast.Block):
        out = []
        for s in node.statements:
            if isinstance(s, ast.Declaration) and \
                    (s.span.end_line, s.span.end_column) <= (line, column):
                out.append(s)
                out += [ast.Declaration(v.type, v.name) for v in s.views]
            elif isinstance(s, ast.AsStatement) and \
                    (s.span.end_line, s.span.end_column) <= (line, column):
                out += [ast.Declaration(v.type, v.name) for v in s.views]
        return out
    return []


# --------------------------------------------------------------------------- description paths


def _property_paths(parts: list[str], lib: Any, analysis: Analysis | None
                    ) -> list[lsp.CompletionItem]:
    """Blocks and properties after ``gpu.hierarchy.`` (a path from a description)."""
    from mcl.hdl.units import format_quantity

    if lib is None or not parts:
        return []
    hw = None
    if parts[0] in lib:
        hw = _hardware(lib, parts[0])
        rest = parts[1:]
    elif analysis is not None and analysis.language == "hdl" and analysis.hardware is not None:
        hw, rest = analysis.hardware, parts
    if hw is None:
        return []
    if not rest:
        blocks = list(hw.blocks)
        props: list[Any] = []
    else:
        block = hw.top_block(rest[0])
        for name in rest[1:]:
            block = block.child(name) if block is not None else None
        if block is None:
            return []
        blocks = list(block.children)
        props = list(block.properties)
    items = [_item(b.name, CK.Module if b.children else CK.Field, b.kind, sort="2")
             for b in blocks]
    items += [_item(p.name, CK.Property, format_quantity(p.value, p.dimension), sort="1")
              for p in props]
    return items


def _complete_hdl(prefix: str, analysis: Analysis | None, lib: Any
                  ) -> list[lsp.CompletionItem]:
    from mcl.hdl.language import BLOCK_KEYWORDS

    dotted = re.search(r"([A-Za-z_][\w.]*)\.(\w*)$", prefix)
    if dotted:
        return _property_paths(dotted.group(1).split("."), lib, analysis)
    if re.search(r"\bspecializes\s+\w*$", prefix) or re.search(r"^\s*[A-Za-z_]*$", prefix):
        items = [_item(h, CK.Module, "hardware description", sort="3")
                 for h in _names_of(lib)]
        if re.search(r"\bspecializes\s+\w*$", prefix):
            return items
        items += [_item(k, CK.Keyword, "block", sort="1") for k in BLOCK_KEYWORDS]
        items += [_item(k, CK.Property, sort="2") for k in HDL_STATEMENTS]
        return items
    if re.search(r"\bspace\s*\(\s*\w*$", prefix) and analysis is not None and \
            analysis.hardware is not None:
        return [_item(ms.name, CK.Unit, "memory space")
                for ms in analysis.hardware.memory_spaces()]
    return [_item(w, CK.Keyword) for w in ("unlimited", "countable", "true", "false")]
