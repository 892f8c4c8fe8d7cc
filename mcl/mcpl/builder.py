"""Turns MCPL text into the project's AST (mcl.mcpl.ast) through the textX grammar.

This is the only module that sees textX objects. It applies what the grammar
leaves open (C operator precedence, splitting declaration words into
modifiers, type and name, recognising hardware-description references),
attaches comments to the statements they precede, and turns syntax errors into
diagnostics a GPU programmer can act on.
"""

from __future__ import annotations

import dataclasses
import gc
import os
import re
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from mcl import textx_errors
from mcl.diagnostics import Diagnostic, LineIndex, McplError, Span, error
from mcl.mcpl import ast, chunks
from mcl.mcpl.build_ast import RESERVED, _Builder, _skip_space, comment_text, line_end

GRAMMAR = Path(__file__).with_name("mcpl.tx")




@lru_cache(maxsize=1)
def metamodel():
    """The textX metamodel of MCPL, built once per process."""
    from textx import metamodel_from_file

    return metamodel_from_file(str(GRAMMAR), autokwd=True, memoization=False)


@lru_cache(maxsize=1)
def item_metamodel():
    """The same grammar with an entry rule for one top-level item (a ``type``
    definition or a function): mcl.mcpl.chunks splits a module into items.

    Its ``Comment`` rule is renamed away: the builder blanks the comments of an
    item (same offsets) before parsing it, which spares Arpeggio trying the
    comment rule before every token (about 10% of the parse)."""
    from textx import metamodel_from_str

    grammar = GRAMMAR.read_text()
    assert "\nComment:" in grammar
    grammar = grammar.replace("\nComment:", "\nUnusedComment_:")
    return metamodel_from_str("McplItem: TypeDef | Constant | Function;\n" + grammar,
                              autokwd=True, memoization=False)


def _blank_comments(text: str) -> str:
    """``text`` with every comment replaced by spaces (line breaks kept, so
    every offset stays the same)."""
    if "/" not in text:
        return text
    return chunks.COMMENT_RE.sub(lambda m: _NOT_NEWLINE_RE.sub(" ", m.group()), text)


_NOT_NEWLINE_RE = re.compile(r"[^\n]")


def parse(source: str | os.PathLike[str], file: str = "<string>") -> ast.Module:
    """Parse MCPL text into a Module (a path, such as a ``pathlib.Path``, is a file to
    read). Raises McplError with diagnostics on syntax errors (every broken item is
    reported; the error's ``partial`` attribute holds the module of the items that
    parsed, its ``unparsed`` attribute an :class:`Unparsed` that says what is missing
    from it)."""
    if isinstance(source, os.PathLike):
        from mcl.mcpl.source import parse_file
        return parse_file(source)
    if not isinstance(source, str):
        fix = "; decode it first: .decode()" if isinstance(source, bytes | bytearray) else ""
        raise TypeError("mcl.parse: source is MCPL text (a str) or a path (os.PathLike), "
                        f"not {type(source).__name__}{fix}")
    if isinstance(file, os.PathLike):
        file = os.fspath(file)
    if not isinstance(file, str):
        raise TypeError(f"mcl.parse: file is the name of the source (a str), not "
                        f"{type(file).__name__}")
    module, diagnostics, unparsed = _parse_partial_no_gc(source, file)
    name = source.strip()
    if diagnostics and "\n" not in name and name.endswith((".mcpl", ".mcl")):
        # the name of a file, given as text: say how to read the file
        diagnostics = [dataclasses.replace(
            diagnostics[0], hint=f"a str is MCPL text; to parse the file {name}, pass "
                                 f"pathlib.Path({name!r})"), *diagnostics[1:]]
    if diagnostics:
        err = McplError(diagnostics)
        err.partial = module  # type: ignore[attr-defined]
        err.unparsed = unparsed  # type: ignore[attr-defined]
        raise err
    return module


@dataclass(frozen=True)
class Unparsed:
    """What the partial module of a text with syntax errors lacks, so that the
    checks do not report the consequences of a syntax error as errors of their
    own (a call to a function whose definition did not parse is not a call to
    an unknown function)."""

    functions: frozenset[str] = frozenset()   # names of functions that did not parse
    types: frozenset[str] = frozenset()       # names of type definitions that did not parse
    header: bool = False     # the header did not parse: its imports are unknown
    unnamed: bool = False    # a definition that did not parse has no recognisable name

    @property
    def any_name(self) -> bool:
        """Whether any function or type name may be missing (imports or a name lost)."""
        return self.header or self.unnamed

    def function(self, name: str) -> bool:
        """Whether a function of this name may be one that did not parse."""
        return self.any_name or name in self.functions

    def type(self, name: str) -> bool:
        """Whether a type of this name may be one that did not parse."""
        return self.any_name or name in self.types


_FUNCTION_NAME_RE = re.compile(
    r"\s*[A-Za-z_]\w*\s+[A-Za-z_]\w*(?:\s*\[[^\]{};]*\])*\s+([A-Za-z_]\w*)\s*\(")
_TYPE_NAME_RE = re.compile(r"\s*type\s+([A-Za-z_]\w*)")


def _unparsed_names(texts: list[tuple[str, str]], header: bool) -> Unparsed:
    """The :class:`Unparsed` of items (kind, text) that did not parse."""
    functions: set[str] = set()
    types: set[str] = set()
    unnamed = False
    for kind, text in texts:
        text = _blank_comments(text)
        m = (_TYPE_NAME_RE if kind == "type" else _FUNCTION_NAME_RE).match(text)
        if m:
            (types if kind == "type" else functions).add(m.group(1))
        elif "{" in text:
            # Something that may define a name (a stray `f();` at the top level does not).
            unnamed = True
    return Unparsed(frozenset(functions), frozenset(types), header, unnamed)


def parse_whole(source: str, file: str = "<string>") -> ast.Module:
    """Parse MCPL text as one textX model (the reference for :func:`parse`, which
    parses item by item and must give exactly the same Module, spans included).
    Stops at the first syntax error."""
    from textx.exceptions import TextXSyntaxError

    index = LineIndex(source)
    try:
        model = metamodel().model_from_str(source)
    except TextXSyntaxError as e:
        raise McplError(_syntax_diagnostic(e, source, index, file)) from None
    except RecursionError:
        raise McplError(_too_deep(file, 1, 1)) from None
    builder = _Builder(source, file, index)
    module = builder.module(model)
    if builder.errors:
        raise McplError(builder.errors)
    return module


def _too_deep(file: str, line: int, column: int) -> Diagnostic:
    return error("mcpl-syntax", "the program is nested too deeply to parse",
                 Span.point(file, line, column),
                 "split deeply nested expressions or blocks into smaller pieces")


# --------------------------------------------------------------------------- item by item

#: At most this many parsed items are kept (least recently used go first).
CACHE_SIZE = 8192


@dataclass
class _Cached:
    line: int                      # the line the item started on when it was built
    node: ast.TypeDef | ast.Function
    queries: frozenset[str]        # names the builder asked "is this a hardware name?"
    answer: frozenset[str]         # ... and those that were
    trailing: bool                 # whether a comment after the item was taken


_cache: OrderedDict[tuple[str, str, int], _Cached] = OrderedDict()


def clear_cache() -> None:
    """Forget every parsed item (tests and benchmarks measure cold parses with it)."""
    _cache.clear()


def is_cached(file: str, text: str, column: int, hardware_names: frozenset[str]) -> bool:
    """Whether the item ``text`` at ``column`` of ``file`` would come from the cache."""
    hit = _cache.get((file, text, column))
    return hit is not None and \
        frozenset(q for q in hit.queries if q in hardware_names) == hit.answer


def parse_partial(source: str, file: str = "<string>"
                  ) -> tuple[ast.Module, list[Diagnostic]]:
    """Parse MCPL text item by item (mcl.mcpl.chunks): the header, then each type
    definition and function on its own. Returns the Module of everything that
    parsed and the diagnostics of everything that did not, in source order.

    Items are cached by their text, file and start column: parsing a document
    again after an edit (the language server does it on every keystroke) only
    parses the items that changed; items that merely moved to other lines get
    their spans shifted.

    Python's cyclic garbage collector is paused meanwhile: parsing allocates
    many short-lived objects, and with the cache's trees alive every collection
    walks them all (about 20% of a cold parse of 10 000 lines).

    A large module whose items are not cached is parsed by worker processes as
    well (mcl.mcpl.parallel); the result is the same."""
    module, diagnostics, _ = _parse_partial_no_gc(source, file)
    return module, diagnostics


def _parse_partial_no_gc(source: str, file: str
                         ) -> tuple[ast.Module, list[Diagnostic], Unparsed]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _parse_partial(source, file)
    finally:
        if enabled:
            gc.enable()


def _parse_partial(source: str, file: str
                   ) -> tuple[ast.Module, list[Diagnostic], Unparsed]:
    from textx.exceptions import TextXSyntaxError

    index = LineIndex(source)
    diagnostics: list[Diagnostic] = []
    header_end, pos = chunks.header(source)
    header_text = source[:header_end]
    name, package, exports, imports = "<error>", None, (), ()
    export_spans: tuple[Span, ...] = ()
    header_ok = True
    try:
        model = metamodel().model_from_str(header_text)
    except TextXSyntaxError as e:
        header_ok = False
        diagnostics.append(_syntax_diagnostic(e, source, index, file, header_text))
        hardware = set(_IMPORT_RE.findall(header_text))
    else:
        hb = _Builder(header_text, file, index)
        name = model.name
        package = ".".join(model.package.parts) if model.package else None
        exports = tuple(model.exports)
        export_spans = hb.export_spans(exports)
        imports = tuple(ast.Import(tuple(i.path.parts), span=hb.span(i)) for i in model.imports)
        hardware = {i.path[0] for i in imports if len(i.path) == 1}
        for n in exports:
            hb.check_name(n, model)
        diagnostics += hb.errors
    items = chunks.items(source, pos)
    for item in items:
        if item.kind == "function":
            m = chunks._WORD_RE.match(source, item.start)
            if m:
                hardware.add(m.group())
    hardware_names = frozenset(hardware)

    comments = [(m.start(), m.end(), comment_text(m.group()))
                for m in chunks.COMMENT_RE.finditer(source)]
    next_comment = 0

    def take(before: int) -> tuple[str, ...]:
        nonlocal next_comment
        i = next_comment
        while i < len(comments) and comments[i][1] <= before:
            i += 1
        out = tuple(c[2] for c in comments[next_comment:i])
        next_comment = i
        return out

    module_end = chunks.skip_space(source, 0)
    if imports:
        module_end = max(module_end, header_end)
    module_comments = take(module_end)
    from mcl.mcpl import parallel

    pre = parallel.prefetch(source, file, index, items, comments, hardware_names)
    types: list[ast.TypeDef] = []
    functions: list[ast.Function] = []
    constants: list[ast.Constant] = []
    broken: list[tuple[str, str]] = []   # (kind, text) of the items that did not parse
    n = len(source)
    pending = items
    while pending:
        item = pending.pop(0)
        lead = take(item.start)
        # A comment on the line of the closing '}' can belong to the last statement.
        ext_end = item.end
        if next_comment < len(comments):
            c_start, c_end, _ = comments[next_comment]
            if c_start >= item.end and "\n" not in source[item.end:c_start]:
                ext_end = c_end
        node, errors, trailing = _item(source, item, ext_end, file, index, hardware_names,
                                       pre)
        if node is None:
            q = chunks.resync_point(source, item) if errors[0].code == "mcpl-syntax" else None
            if q is not None:
                # A missing '}' swallowed the items after it: report the error
                # of the part before them and go on from there.
                cut = chunks.Item(item.start, len(source[:q].rstrip()), item.kind)
                _, errors, _ = _item(source, cut, cut.end, file, index, hardware_names)
                pending = chunks.items(source, q)
                take(cut.end)
                broken.append((cut.kind, cut.text(source)))
            else:
                take(item.end)
                broken.append((item.kind, item.text(source)))
            diagnostics += errors or [error("mcpl-syntax", "this item cannot be parsed",
                                            index.span(file, item.start, item.end))]
            continue
        take(ext_end if trailing else item.end)
        if lead:
            node = dataclasses.replace(node, comments=lead)
        (types if isinstance(node, ast.TypeDef) else
         constants if isinstance(node, ast.Constant) else functions).append(node)
    module_comments += take(n + 1)
    module = ast.Module(name=name, imports=imports, types=tuple(types),
                        functions=tuple(functions), package=package, exports=exports,
                        file=file, comments=module_comments, constants=tuple(constants),
                        export_spans=export_spans, span=index.span(file, 0, max(1, n)),
                        newline=line_end(source))
    return module, diagnostics, _unparsed_names(broken, not header_ok)


_IMPORT_RE = re.compile(r"\bimport\s+([A-Za-z_]\w*)\s*;")


def _item(source: str, item: chunks.Item, ext_end: int, file: str, index: LineIndex,
          hardware_names: frozenset[str], pre: dict | None = None
          ) -> tuple[ast.TypeDef | ast.Function | None, list[Diagnostic], bool]:
    """(the AST of one item or None, its diagnostics, whether it took the comment
    after it). Uses and fills the cache; ``pre`` holds items parsed by worker
    processes for this call (mcl.mcpl.parallel), keyed like :func:`built_key`."""
    from textx.exceptions import TextXSyntaxError

    text = source[item.start:ext_end]
    line, column = index.position(item.start)
    key = (file, text, column)
    hit = _cache.get(key)
    if hit is not None and frozenset(q for q in hit.queries if q in hardware_names) == hit.answer:
        _cache.move_to_end(key)
        if hit.line != line:
            hit = _Cached(line, _shift(hit.node, line - hit.line), hit.queries, hit.answer,
                          hit.trailing)
            _cache[key] = hit
        return hit.node, [], hit.trailing
    item_len = item.end - item.start
    built = pre.pop(built_key(text, item_len, line, column), None) if pre else None
    if built is None:
        try:
            built = build_item(text, item_len, file, line, column, hardware_names)
        except TextXSyntaxError as e:
            return None, [_syntax_diagnostic(e, source, index, file, text, item.start,
                                           _parse_item_text)], False
        except RecursionError:
            return None, [_too_deep(file, line, column)], False
    node, errors, trailing, queries = built
    if node is None:
        return None, errors, False
    _cache[key] = _Cached(line, node, queries, queries & hardware_names, trailing)
    if len(_cache) > CACHE_SIZE:
        _cache.popitem(last=False)
    return node, [], trailing


def built_key(text: str, item_len: int, line: int, column: int) -> tuple[str, int, int, int]:
    """The key of an item built for one parse (the file and the hardware names are
    those of the parse)."""
    return text, item_len, line, column


def build_item(text: str, item_len: int, file: str, line: int, column: int,
               hardware_names: frozenset[str]
               ) -> tuple[ast.TypeDef | ast.Function | None, list[Diagnostic], bool,
                          frozenset[str]]:
    """Parse and build one item: ``text`` is the item (its first ``item_len``
    characters) and possibly a comment after it; it starts at ``line`` and
    ``column`` of ``file``. Returns (the node or None, the builder's errors,
    whether the comment after the item was taken, the names asked "is this a
    hardware name?"). Raises TextXSyntaxError or RecursionError.

    Depends on nothing but its arguments (worker processes call it too)."""
    model = _parse_item(_blank_comments(text[:item_len]))
    builder = _Builder(text, file, LineIndex(text, line, column), hardware_names)
    rule = type(model).__name__
    node = (builder.typedef(model, ()) if rule == "TypeDef" else
            builder.constant(model, ()) if rule == "Constant" else builder.function(model, ()))
    queries = frozenset(builder.hw_queries)
    if builder.errors:
        return None, builder.errors, False, queries
    trailing = builder._next_comment > sum(1 for c in builder.comments if c[1] <= item_len)
    return node, [], trailing, queries


class _Obj:
    """A grammar object as textX would make it (attributes, ``_tx_position``,
    ``_tx_position_end``; the class is named after the rule), without textX's
    model construction."""


@lru_cache(maxsize=1)
def _item_rules() -> dict[str, Any]:
    """For each rule of the item grammar: "match", "abstract", or (for a common
    rule) (its class, its attributes' default values, the names of its list attributes)."""
    from textx.const import RULE_ABSTRACT, RULE_MATCH

    mm = item_metamodel()
    rules: dict[str, Any] = {}
    for name, cls in _grammar_classes(mm):
        if cls._tx_type == RULE_MATCH:
            rules[name] = "match"
        elif cls._tx_type == RULE_ABSTRACT:
            rules[name] = "abstract"
        else:
            inst = cls.__new__(cls)
            mm._init_obj_attrs(inst)
            defaults = {k: getattr(inst, k) for k in cls._tx_attrs}
            lists = frozenset(k for k, v in defaults.items() if isinstance(v, list))
            rules[name] = (type(name, (_Obj,), {}), defaults, lists)
    return rules


def _grammar_classes(mm: Any) -> list[tuple[str, Any]]:
    out = []
    for name in re.findall(r"^([A-Za-z_]\w*)\s*:", GRAMMAR.read_text(), re.MULTILINE):
        if name != "Comment":
            out.append((name, mm[name]))
    return [("McplItem", mm["McplItem"]), *out]


def _parse_item(text: str) -> Any:
    """The grammar objects of one item: textX's Arpeggio parser, then a direct
    conversion of the parse tree (textX's model construction, which handles
    references, object processors and more that MCPL does not use, takes about
    as long as the parse itself). Raises TextXSyntaxError like textX."""
    parser = item_metamodel()._parser_blueprint.clone()
    tree = parser.parse(text)
    rules = _item_rules()
    from arpeggio import Terminal

    def node(n: Any) -> Any:
        if type(n) is Terminal:
            return n.value
        kind = rules[n.rule_name]
        if kind == "abstract":
            if len(n) > 1:
                return node(next(c for c in n if type(c) is not Terminal))
            return node(n[0])
        if kind == "match":
            return "".join(str(node(c)) for c in n) if len(n) > 1 else node(n[0])
        cls, defaults, lists = kind
        obj = cls()
        d = obj.__dict__
        d.update(defaults)
        for k in lists:
            d[k] = []
        d["_tx_position"] = n.position
        d["_tx_position_end"] = n.position_end
        for c in n:
            if type(c) is Terminal:
                continue
            name = c.rule_name
            if not name.startswith("__asgn"):
                node(c)
                continue
            attr = c.rule._attr_name
            op = name[name.rindex("_") + 1:]
            if op == "optional":
                d[attr] = True
            elif op == "plain":
                value = node(c[0])
                if attr in lists:
                    d[attr].append(value)
                else:
                    d[attr] = value
            else:
                d[attr].extend(node(x) for x in c if x.rule_name != "sep")
        return obj

    return node(tree[0])


def _shift(node: Any, lines: int) -> Any:
    """``node`` with every span moved down by ``lines`` lines."""
    if isinstance(node, ast.Node):
        new = object.__new__(type(node))
        d = new.__dict__
        for k, v in node.__dict__.items():
            if k in ("span", "op_span"):
                if v is not None and v.file != "<generated>":
                    v = Span(v.file, v.line + lines, v.column, v.end_line + lines, v.end_column)
            elif isinstance(v, _TREE):
                v = _shift(v, lines)
            d[k] = v
        return new
    if isinstance(node, tuple):
        return tuple(_shift(x, lines) for x in node)
    return node


_TREE = (ast.Node, tuple)


_RULE_WORDS = {
    "Name": "a name", "Number": "a number", "BinaryOp": "an operator",
    "AssignOp": "an assignment (=, +=, ...)", "IncDecOp": "++ or --",
    "PrimitiveType": "a type", "Word": "a type or a name", "NameRef": "an expression",
    "UnaryPrefix": "an expression", "UnaryOp": "an expression", "NumberText": "an expression",
    "Identifier": "an expression", "Comment": "a comment", "TypeOrConst": "a type",
}
# Continuations that are always possible after an expression; naming them
# only hides what is missing.
_NOISE = ("'['", "'.'", "'?'")


def _rule_word(name: str) -> str | None:
    return _RULE_WORDS.get(name) or ("an expression" if "Expr" in name else None)


def _describe_expected(rules: list[Any]) -> list[str]:
    words = textx_errors.describe_expected(rules, _rule_word, _NOISE)
    if "'foreach'" in words:
        # At the start of a statement every statement keyword is possible.
        keep = [w for w in words if w in ("'}'", textx_errors.END_OF_FILE)]
        words = ["a statement"] + keep
    if "an expression" in words and "'('" in words:
        words.remove("'('")
    return words


_TOKEN_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d[\w.]*|\S")
#: The same with comments as tokens of their own (skipped where ';' may be missing).
_TOKENS = re.compile(r"//[^\n]*|/\*[\s\S]*?\*/|[A-Za-z_][A-Za-z0-9_]*|\d[\w.]*|\S")


def _syntax_diagnostic(exc: Any, source: str, index: LineIndex, file: str,
                       text: str | None = None, base: int = 0,
                       parse: Callable[[str], Any] | None = None) -> Diagnostic:
    """The diagnostic of a textX syntax error in ``text`` (by default the whole
    ``source``), which starts at offset ``base`` of ``source``; ``index`` maps
    offsets of ``source``. ``parse`` parses a text like the one that failed (by
    default as a whole module)."""
    from mcl.mcpl import syntax_hints

    if base == 0:
        empty = syntax_hints.empty_file(source, file)
        if empty is not None:
            return empty
    parsed = source if text is None else text
    offset = textx_errors.error_offset(exc, parsed) + base
    m = _TOKEN_RE.match(source, _skip_space(source, offset))
    found = f"'{m.group()}'" if m else textx_errors.END_OF_FILE
    expected = _describe_expected(getattr(exc, "expected_rules", None))
    if len(expected) > 6:
        expected = expected[:6] + ["..."]
    what = " or ".join(expected) if expected else "something else"
    hint = None
    non_ascii = bool(m) and not m.group()[0].isascii()
    if non_ascii:
        hint = f"names in MCPL are written with ASCII letters, digits and '_': " \
            f"'{m.group()[0]}' is not one of them"
    elif "'module'" in expected and base == 0:
        hint = "a file must start with `module NAME;` (after `package NAME;`, if any), " \
            "then its imports"
    elif "';'" in expected:
        hint = "statements and declarations end with ';'"
    elif m and m.group() in RESERVED and ("a name" in expected or "a type" in expected):
        hint = f"'{m.group()}' is a reserved word of MCPL and cannot be used as a name"
    elif "'}'" in expected:
        hint = "check that every '{' has a matching '}'"
    span = index.span(file, m.start(), m.end()) if m else \
        textx_errors.end_of_file_span(source, file, index)
    misspelled = syntax_hints.keyword_diagnostic(source, base, offset, index, file, span, what,
                                                 found)
    if misspelled is not None:
        return misspelled
    if "';'" in expected and not non_ascii:
        # Like a C compiler: the ';' is missing where the statement ends, not where
        # the parser noticed (often the start of the next line).
        at = (m.start() if m else len(source)) - base
        # the header's text may end before the blanks and comments that precede the token
        parsed += source[base + len(parsed):base + at]
        after = textx_errors.missing_semicolon(
            parsed, at, _TOKENS, parse or metamodel().model_from_str)
        if after is not None:
            line, column = index.position(base + after.end())
            operand = textx_errors.operand_before(parsed, after, _TOKENS)
            return error("mcpl-syntax", f"syntax error: expected ';' after {operand!r}",
                         Span.point(file, line, column), hint)
    return error("mcpl-syntax", f"syntax error: expected {what}, found {found}", span, hint)


def _parse_item_text(text: str) -> Any:
    """Parse an item's text (comments and all) as :func:`build_item` does."""
    return _parse_item(_blank_comments(text))


# --------------------------------------------------------------------------- the builder
