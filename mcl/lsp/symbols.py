"""Document symbols: the outline of an MCPL module (types, functions, their parameters
and foreach structure) and of a hardware description (its nested blocks).

The MCPL outline comes from the AST (of the items that parse, repaired, when
the buffer does not parse, see :mod:`mcl.lsp.analysis`), completed by a lexical
scan for functions too broken to parse and used alone while a large document
is still being checked. The HDL outline is always lexical: it only needs keywords, names
and braces, so it works on a description in the middle of an edit too."""

from __future__ import annotations

import re

from lsprotocol import types as lsp

from mcl.diagnostics import LineIndex, Span
from mcl.lsp.analysis import Analysis
from mcl.lsp.positions import PositionMapper
from mcl.mcpl import ast

K = lsp.SymbolKind


def document_symbols(analysis: Analysis, mapper: PositionMapper) -> list[lsp.DocumentSymbol]:
    if analysis.language == "hdl":
        return hdl_outline(analysis.text, mapper)
    if analysis.module is None:
        return mcpl_outline(analysis.text, mapper)
    out = _module_symbols(analysis.module, analysis.text, mapper)
    if not analysis.parses:
        # Functions too broken to repair are missing from the module: add them
        # from the lexical outline, in source order.
        known = {f.name for f in analysis.module.functions}
        extra = [s for s in mcpl_outline(analysis.text, mapper) if s.name not in known]
        if extra:
            out = sorted(out + extra, key=lambda s: (s.range.start.line,
                                                     s.range.start.character))
    return out


# --------------------------------------------------------------------------- MCPL from the AST


def _symbol(name: str, kind: lsp.SymbolKind, span: Span, mapper: PositionMapper,
            detail: str | None = None, selection: Span | None = None,
            children: list[lsp.DocumentSymbol] | None = None) -> lsp.DocumentSymbol:
    rng = mapper.range(span)
    sel = mapper.range(selection) if selection is not None else rng
    # The protocol requires the selection inside the range.
    if (sel.start.line, sel.start.character) < (rng.start.line, rng.start.character) or \
            (sel.end.line, sel.end.character) > (rng.end.line, rng.end.character):
        sel = rng
    return lsp.DocumentSymbol(name=name or "?", kind=kind, range=rng, selection_range=sel,
                              detail=detail, children=children or None)


def _module_symbols(module: ast.Module, text: str, mapper: PositionMapper
                    ) -> list[lsp.DocumentSymbol]:
    from mcl.lsp.navigation import name_span
    from mcl.mcpl.printer import print_param, print_type

    out: list[lsp.DocumentSymbol] = []
    for imp in module.imports:
        out.append(_symbol(imp.dotted, K.Module, imp.span, mapper, "import"))
    for t in module.types:
        fields = [_symbol(f.name, K.Field, f.span, mapper, print_type(f.type))
                  for f in t.fields if f.span.line > 0]
        out.append(_symbol(t.name, K.Struct, t.span, mapper, "type",
                           name_span(t.span, t.name, text), fields))
    for f in module.functions:
        kids = [_symbol(p.name, K.Variable, p.span, mapper, print_param(p),
                        name_span(p.span, p.name, text)) for p in f.params]
        kids += _statement_symbols(f.body, text, mapper)
        detail = f"{f.hardware} {print_type(f.return_type)}"
        out.append(_symbol(f.name, K.Function, f.span, mapper, detail,
                           name_span(f.span, f.name, text), kids))
    return out


def _statement_symbols(stmt: ast.Stmt, text: str, mapper: PositionMapper
                       ) -> list[lsp.DocumentSymbol]:
    """The foreach structure of a body, with the declarations of each level."""
    from mcl.lsp.navigation import name_span
    from mcl.mcpl.printer import print_expr, print_type

    out: list[lsp.DocumentSymbol] = []
    for node in ast.children(stmt):
        if isinstance(node, ast.ForEach):
            name = f"foreach {node.var.name} in {print_expr(node.size)} {node.group}"
            out.append(_symbol(name, K.Namespace, node.span, mapper, node.group, None,
                               _statement_symbols(node.body, text, mapper)))
        elif isinstance(node, ast.Declaration) and node.span.line > 0:
            detail = " ".join(x for x in (node.space, print_type(node.type)) if x)
            out.append(_symbol(node.name, K.Variable, node.span, mapper, detail,
                               name_span(node.span, node.name, text)))
        elif isinstance(node, ast.Stmt):
            out += _statement_symbols(node, text, mapper)
    return out


# --------------------------------------------------------------------------- lexical outlines

_TOKENS = re.compile(r"//[^\n]*|/\*[\s\S]*?\*/|\"(?:[^\"\\\n]|\\.)*\"|[A-Za-z_][A-Za-z0-9_]*"
                     r"|[{}();\[\]]|\S")

HDL_BLOCK_KEYWORDS = frozenset((
    "parallelism", "memory_space", "par_group", "par_unit", "device", "device_group",
    "device_unit", "memory", "cache", "interconnect", "execution_group", "execution_unit",
    "simd_group", "simd_unit", "load_store_group", "load_store_unit", "instructions"))

_HDL_KIND = {
    "parallelism": K.Namespace, "par_group": K.Namespace, "par_unit": K.Class,
    "memory_space": K.Variable, "memory": K.Field, "cache": K.Field,
    "interconnect": K.Interface, "instructions": K.Method,
}


def _tokens(text: str) -> list[tuple[str, int, int]]:
    return [(m.group(), m.start(), m.end()) for m in _TOKENS.finditer(text)
            if not m.group().startswith(("//", "/*"))]


def hdl_outline(text: str, mapper: PositionMapper) -> list[lsp.DocumentSymbol]:
    """``keyword name { ... }`` blocks, nested as written, under the description."""
    index = LineIndex(text)
    toks = _tokens(text)
    root: list[lsp.DocumentSymbol] = []
    desc: lsp.DocumentSymbol | None = None
    # One entry per open brace: the block symbol it opened (None for other braces).
    stack: list[lsp.DocumentSymbol | None] = []

    def children() -> list[lsp.DocumentSymbol]:
        owner = next((s for s in reversed(stack) if s is not None), desc)
        if owner is None:
            return root
        if owner.children is None:
            owner.children = []
        return owner.children

    for i, (tok, start, end) in enumerate(toks):
        if tok == "hardware_description" and i + 1 < len(toks) and desc is None:
            name, s, e = toks[i + 1]
            desc = _symbol(name, K.Module, index.span("", start, len(text)), mapper,
                           "hardware_description", index.span("", s, e))
            root.append(desc)
        elif tok == "{":
            sym = None
            if i >= 2 and toks[i - 2][0] in HDL_BLOCK_KEYWORDS:
                kw, kstart, _ = toks[i - 2]
                name, ns, ne = toks[i - 1]
                sym = lsp.DocumentSymbol(
                    name=name, kind=_HDL_KIND.get(kw, K.Object), detail=kw,
                    range=mapper.range(index.span("", kstart, end)),
                    selection_range=mapper.range(index.span("", ns, ne)))
                children().append(sym)
            stack.append(sym)
        elif tok == "}" and stack:
            sym = stack.pop()
            if sym is not None:
                sym.range = lsp.Range(sym.range.start,
                                      mapper.range(index.span("", start, end)).end)
    return root


_FUNCTION_HEAD = re.compile(
    r"^[ \t]*([A-Za-z_]\w*)[ \t]+([A-Za-z_]\w*(?:\[[^\]\n]*\])*)[ \t]+([A-Za-z_]\w*)[ \t]*\(",
    re.M)
_FOREACH = re.compile(r"foreach\s*\(\s*(?:\w+\s+)*?(\w+)\s+in\s+([^)]*?)\s+(\w+)\s*\)")


def mcpl_outline(text: str, mapper: PositionMapper) -> list[lsp.DocumentSymbol]:
    """Functions (by their header ``level type name(``) and their foreach loops, found
    without parsing; used when the text is too broken to parse at all."""
    index = LineIndex(text)
    heads = list(_FUNCTION_HEAD.finditer(text))
    out = []
    for k, m in enumerate(heads):
        if m.group(1) in ("return", "else", "foreach", "for", "if", "while"):
            continue
        end = heads[k + 1].start() if k + 1 < len(heads) else len(text)
        body = text[m.start():end]
        loops = [_symbol(f"foreach {f.group(1)} in {f.group(2)} {f.group(3)}", K.Namespace,
                         index.span("", m.start() + f.start(), m.start() + f.end()), mapper,
                         f.group(3))
                 for f in _FOREACH.finditer(body)]
        span = index.span("", m.start(), end)
        sel = index.span("", m.start(3), m.end(3))
        out.append(_symbol(m.group(3), K.Function, span, mapper,
                           f"{m.group(1)} {m.group(2)}", sel, loops))
    return out
