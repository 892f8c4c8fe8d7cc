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
from bisect import bisect_right
from collections import OrderedDict
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from mcl.diagnostics import Diagnostic, McplError, Span, error
from mcl.mcpl import ast, chunks

GRAMMAR = Path(__file__).with_name("mcpl.tx")

RESERVED = frozenset(
    "module package export import type if else for while foreach in return break continue "
    "barrier as const true false int long float double bool void".split())

_COMMENT_RE = re.compile(r"//[^\n]*|/\*[\s\S]*?\*/")
# Only comments can hold `//` or `/*` in MCPL (it has no string literals), but a
# comment start inside another comment must not count: the regex scans left to
# right and consumes whole comments, so nested markers are skipped.


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
    return metamodel_from_str("McplItem: TypeDef | Function;\n" + grammar,
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
    module, diagnostics, unparsed = _parse_partial_no_gc(source, file)
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

    index = _Lines(source)
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

    index = _Lines(source)
    diagnostics: list[Diagnostic] = []
    header_end, pos = chunks.header(source)
    header_text = source[:header_end]
    name, package, exports, imports = "<error>", None, (), ()
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

    comments = [(m.start(), m.end(), m.group()) for m in chunks.COMMENT_RE.finditer(source)]
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
        (types if isinstance(node, ast.TypeDef) else functions).append(node)
    module_comments += take(n + 1)
    module = ast.Module(name=name, imports=imports, types=tuple(types),
                        functions=tuple(functions), package=package, exports=exports,
                        file=file, comments=module_comments,
                        span=index.span(file, 0, max(1, n)))
    return module, diagnostics, _unparsed_names(broken, not header_ok)


_IMPORT_RE = re.compile(r"\bimport\s+([A-Za-z_]\w*)\s*;")


def _item(source: str, item: chunks.Item, ext_end: int, file: str, index: _Lines,
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
            return None, [_syntax_diagnostic(e, source, index, file, text, item.start)], False
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
    builder = _Builder(text, file, _Lines(text, line, column), hardware_names)
    node = (builder.typedef(model, ()) if type(model).__name__ == "TypeDef"
            else builder.function(model, ()))
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
            if k == "span":
                if v.file != "<generated>":
                    v = Span(v.file, v.line + lines, v.column, v.end_line + lines, v.end_column)
            elif isinstance(v, _TREE):
                v = _shift(v, lines)
            d[k] = v
        return new
    if isinstance(node, tuple):
        return tuple(_shift(x, lines) for x in node)
    return node


_TREE = (ast.Node, tuple)


class _Lines:
    """Maps offsets of a text to 1-based (line, column); the text may start at
    line ``line`` and column ``column`` of a file (an item of a module)."""

    def __init__(self, text: str, line: int = 1, column: int = 1):
        self.text = text
        self._starts = [0, *(m.end() for m in _NEWLINE_RE.finditer(text))]
        self._line = line - 1
        self._column = column - 1

    def position(self, offset: int) -> tuple[int, int]:
        offset = max(0, min(offset, len(self.text)))
        i = bisect_right(self._starts, offset) - 1
        column = offset - self._starts[i] + 1
        if i == 0:
            column += self._column
        return i + 1 + self._line, column

    def offset(self, line: int, column: int) -> int:
        """The offset of a 1-based (line, column) relative to this text."""
        line = max(1, min(line, len(self._starts)))
        return min(self._starts[line - 1] + column - 1, len(self.text))

    def span(self, file: str, start: int, end: int) -> Span:
        l1, c1 = self.position(start)
        l2, c2 = self.position(max(end, start + 1) if end <= start else end)
        return Span(file, l1, c1, l2, c2)


_NEWLINE_RE = re.compile("\n")


# --------------------------------------------------------------------------- syntax errors

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


def _describe_expected(rules: list[Any]) -> list[str]:
    words: list[str] = []
    for rule in rules or []:
        to_match = getattr(rule, "to_match", None)
        name = getattr(rule, "rule_name", "") or getattr(rule, "name", "")
        if type(rule).__name__ == "StrMatch" and to_match:
            w = f"'{to_match}'"
        elif not name.strip() or name.startswith("RegExMatch"):
            # textX turns keywords into anonymous regexes (autokwd).
            word = (to_match or "").removesuffix(r"\b")
            w = f"'{word}'" if word.isidentifier() else "something else"
        elif name in _RULE_WORDS:
            w = _RULE_WORDS[name]
        elif name == "EOF":
            w = "the end of the file"
        else:
            w = "an expression" if "Expr" in name else (name or "something else")
        if w not in words:
            words.append(w)
    if "'foreach'" in words:
        # At the start of a statement every statement keyword is possible.
        keep = [w for w in words if w in ("'}'", "the end of the file")]
        words = ["a statement"] + keep
    if "an expression" in words and "'('" in words:
        words.remove("'('")
    if len(words) > 1 and any(w not in _NOISE for w in words):
        words = [w for w in words if w not in _NOISE]
    return words


_BLANK_LINE_RE = re.compile(r"\n[ \t\r]*\n")
_TOKEN_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d[\w.]*|\S")


def _syntax_diagnostic(exc: Any, source: str, index: _Lines, file: str,
                       text: str | None = None, base: int = 0) -> Diagnostic:
    """The diagnostic of a textX syntax error in ``text`` (by default the whole
    ``source``), which starts at offset ``base`` of ``source``; ``index`` maps
    offsets of ``source``."""
    cause = exc.__cause__
    offset = getattr(cause, "position", None)
    if offset is None:
        offset = _Lines(source if text is None else text).offset(exc.line or 1, exc.col or 1)
    offset += base
    m = _TOKEN_RE.match(source, _skip_space(source, offset))
    found = f"'{m.group()}'" if m else "the end of the file"
    start = m.start() if m else len(source)
    end = m.end() if m else len(source)
    expected = _describe_expected(getattr(exc, "expected_rules", None))
    if len(expected) > 6:
        expected = expected[:6] + ["..."]
    what = " or ".join(expected) if expected else "something else"
    hint = None
    if "';'" in expected:
        hint = "statements and declarations end with ';'"
    elif m and m.group() in RESERVED:
        hint = f"'{m.group()}' is a reserved word of MCPL and cannot be used as a name"
    elif "'}'" in expected:
        hint = "check that every '{' has a matching '}'"
    span = index.span(file, start, end) if source else Span.point(file, 1, 1)
    return error("mcpl-syntax", f"syntax error: expected {what}, found {found}", span, hint)


def _skip_space(source: str, offset: int) -> int:
    while True:
        while offset < len(source) and source[offset].isspace():
            offset += 1
        m = _COMMENT_RE.match(source, offset)
        if not m:
            return offset
        offset = m.end()


# --------------------------------------------------------------------------- the builder


class _Builder:
    """Walks a textX model once and produces AST nodes; collects errors."""

    def __init__(self, source: str, file: str, index: _Lines,
                 hardware_names: frozenset[str] = frozenset()):
        self.source = source
        self.file = file
        self.index = index
        self.errors: list[Diagnostic] = []
        self.hardware_names: set[str] = set(hardware_names)
        # Names asked about by hardware-reference recognition (the cache keys on them).
        self.hw_queries: set[str] = set()
        self.comments = [(m.start(), m.end(), m.group()) for m in _COMMENT_RE.finditer(source)]
        self._next_comment = 0

    # ---- helpers

    def span(self, obj: Any) -> Span:
        return self.index.span(self.file, obj._tx_position, obj._tx_position_end)

    def error(self, code: str, message: str, obj: Any, hint: str | None = None) -> None:
        self.errors.append(error(code, message, self.span(obj), hint))

    def take_comments(self, before: int) -> tuple[str, ...]:
        """Comments not yet attached that end before offset ``before``."""
        out = []
        i = self._next_comment
        while i < len(self.comments) and self.comments[i][1] <= before:
            out.append(self.comments[i][2])
            i += 1
        self._next_comment = i
        return tuple(out)

    def take_trailing(self, after: int) -> tuple[str, ...]:
        """A comment on the same line just after offset ``after`` (``x = 1; // why``)."""
        i = self._next_comment
        if i < len(self.comments):
            start = self.comments[i][0]
            if start >= after and "\n" not in self.source[after:start]:
                self._next_comment = i + 1
                return (self.comments[i][2],)
        return ()

    def skip_comments(self, before: int) -> None:
        """Drop comments inside a construct that has no place for them."""
        self.take_comments(before)

    # ---- top level

    def module(self, m: Any) -> ast.Module:
        for imp in m.imports:
            if len(imp.path.parts) == 1:
                self.hardware_names.add(imp.path.parts[0])
        for f in m.functions:
            self.hardware_names.add(f.hardware)
        # Comments before the first token and among the imports describe the module;
        # those after the header belong to the type or function that follows.
        header_end = _skip_space(self.source, 0)
        for imp in m.imports:
            header_end = max(header_end, imp._tx_position_end)
        module_comments = self.take_comments(header_end)
        items = sorted([*m.types, *m.functions], key=lambda o: o._tx_position)
        types: list[ast.TypeDef] = []
        functions: list[ast.Function] = []
        for item in items:
            comments = self.take_comments(item._tx_position)
            if type(item).__name__ == "TypeDef":
                types.append(self.typedef(item, comments))
            else:
                functions.append(self.function(item, comments))
        module_comments += self.take_comments(len(self.source) + 1)
        for name in m.exports:
            self.check_name(name, m)
        return ast.Module(
            name=m.name,
            imports=tuple(ast.Import(tuple(i.path.parts), span=self.span(i)) for i in m.imports),
            types=tuple(types), functions=tuple(functions),
            package=".".join(m.package.parts) if m.package else None,
            exports=tuple(m.exports), file=self.file, comments=module_comments,
            span=self.index.span(self.file, 0, max(1, len(self.source))))

    def check_name(self, name: str, obj: Any) -> None:
        if name in RESERVED:
            self.error("mcpl-syntax", f"'{name}' is a reserved word and cannot be used as a name",
                       obj)

    def typedef(self, t: Any, comments: tuple[str, ...]) -> ast.TypeDef:
        fields = tuple(ast.RecordField(self.type(f.type), f.name, span=self.span(f))
                       for f in t.fields)
        self.skip_comments(t._tx_position_end)
        return ast.TypeDef(t.name, fields, span=self.span(t), comments=comments)

    def function(self, f: Any, comments: tuple[str, ...]) -> ast.Function:
        params = tuple(self.param(p) for p in f.params)
        self.skip_comments(f.body._tx_position)
        body = self.block(f.body)
        return ast.Function(f.hardware, self.type(f.return_type), f.name, params, body,
                            span=self.span(f), comments=comments)

    def param(self, p: Any) -> ast.Param:
        space, const, type_, name = self.declaration_head(p, "parameter")
        default = self.expr(p.default) if p.default is not None else None
        return ast.Param(type_, name, space, const, default, span=self.span(p))

    # ---- declarations

    def declaration_head(self, d: Any, what: str) -> tuple[str | None, bool, ast.Type, str]:
        """Split ``words dims name?`` into (memory space, const, type, name)."""
        words = list(d.words)
        dims = tuple(self.dims(x) for x in d.dims)
        name = d.name
        if name is None:
            if dims or len(words) < 2:
                which = "the type" if dims else f"'{words[-1]}'"
                self.error("mcpl-syntax", f"this {what} has no name: expected a name after "
                           f"{which}", d, f"write it as `{'float x' if not dims else 'float[n] x'}`"
                           " : modifiers, then the type, then the name")
                return None, False, ast.Type("int", dims, span=self.span(d)), "_"
            name = words.pop()
        type_word = words.pop()
        type_ = ast.Type(type_word, dims, span=self.span(d))
        if type_word == "const":
            self.error("mcpl-syntax", f"this {what} has no type after 'const'", d,
                       "write `const int n`")
        self.check_name(name, d)
        space: str | None = None
        const = False
        for w in words:
            if w == "const":
                const = True
            elif w in ast.PRIMITIVE_TYPES:
                self.error("mcpl-syntax", f"two types in one {what}: '{w}' and '{type_word}'",
                           d, "a declaration has one type; words before it are memory spaces or "
                           "'const'")
            elif space is not None:
                self.error("mcpl-two-spaces",
                           f"this {what} names two memory spaces, '{space}' and '{w}'", d,
                           "a variable lives in exactly one memory space")
            else:
                space = w
        return space, const, type_, name

    def var_decl(self, d: Any, comments: tuple[str, ...] = ()) -> ast.Declaration:
        space, const, type_, name = self.declaration_head(d, "declaration")
        views = tuple(self.view(v) for v in d.views)
        init = self.expr(d.init) if d.init is not None else None
        return ast.Declaration(type_, name, space, const, views, init, span=self.span(d),
                               comments=comments)

    def view(self, v: Any) -> ast.View:
        self.check_name(v.name, v)
        return ast.View(self.type(v.type), v.name, span=self.span(v))

    def type(self, t: Any) -> ast.Type:
        return ast.Type(t.base, tuple(self.dims(d) for d in t.dims), span=self.span(t))

    def dims(self, d: Any) -> tuple[ast.Expr, ...]:
        return tuple(self.expr(e) for e in d.sizes)

    # ---- statements

    def block(self, b: Any, comments: tuple[str, ...] = ()) -> ast.Block:
        out = []
        prev_end: int | None = None
        for s in b.statements:
            if isinstance(s, str):  # an empty statement `;`
                continue
            start = s._tx_position
            lead = self.take_comments(start)
            if prev_end is not None and self.blank_line_between(prev_end, start):
                # A blank line is kept as an empty comment line: printed, it is
                # an empty line again.
                lead = ("",) + lead
            stmt = self.statement(s, lead)
            prev_end = s._tx_position_end
            if stmt is not None:
                trailing = self.take_trailing(prev_end)
                if trailing:
                    prev_end = self.comments[self._next_comment - 1][1]
                    stmt = _with_comments(stmt, stmt.comments + trailing)
                out.append(stmt)
        end = self.take_comments(b._tx_position_end)
        return ast.Block(tuple(out), span=self.span(b), comments=comments, end_comments=end)

    def blank_line_between(self, start: int, end: int) -> bool:
        """Whether an empty line separates ``start`` from the first comment or ``end``."""
        gap = self.source[start:end]
        cut = gap.find("/")
        return _BLANK_LINE_RE.search(gap if cut < 0 else gap[:cut]) is not None

    def statement(self, s: Any, comments: tuple[str, ...] = ()) -> ast.Stmt | None:
        kind = type(s).__name__
        span = self.span(s)
        if kind == "Block":
            return self.block(s, comments)
        if kind not in ("IfStmt", "ForStmt", "WhileStmt", "ForEachStmt"):
            # Comments inside a simple statement stay with it.
            comments += self.take_comments(s._tx_position_end)
        if kind == "SimpleStmt":
            return self.simple(s, span, comments)
        if kind == "DeclStmt":
            return self.var_decl(s.decl, comments)
        if kind == "IfStmt":
            cond = self.expr(s.cond)
            then = self.sub_statement(s.then, s)
            orelse = self.sub_statement(s.orelse, s) if s.orelse is not None else None
            return ast.If(cond, then, orelse, span=span, comments=comments)
        if kind == "WhileStmt":
            return ast.While(self.expr(s.cond), self.sub_statement(s.body, s), span=span,
                             comments=comments)
        if kind == "ForStmt":
            init = update = None
            if s.init is not None:
                init = (self.assign(s.init) if type(s.init).__name__ == "Assign"
                        else self.var_decl(s.init))
            if s.update is not None:
                update = (self.assign(s.update) if type(s.update).__name__ == "Assign"
                          else self.incdec(s.update))
            cond = self.expr(s.cond) if s.cond is not None else None
            return ast.For(init, cond, update, self.sub_statement(s.body, s), span=span,
                           comments=comments)
        if kind == "ForEachStmt":
            var = self.var_decl(s.var)
            if var.init is not None or var.views:
                self.error("mcpl-syntax", "a foreach index cannot have an initial value or a "
                           "view", s.var, "write `foreach (int i in n threads)`")
            return ast.ForEach(var, self.expr(s.size), s.group, self.sub_statement(s.body, s),
                               span=span, comments=comments)
        if kind == "ReturnStmt":
            value = self.expr(s.value) if s.value is not None else None
            return ast.Return(value, span=span, comments=comments)
        if kind == "BreakStmt":
            return ast.Break(span=span, comments=comments)
        if kind == "ContinueStmt":
            return ast.Continue(span=span, comments=comments)
        if kind == "BarrierStmt":
            return ast.Barrier(s.space, span=span, comments=comments)
        if kind == "EmptyStmt":
            return None
        raise AssertionError(f"unknown statement {kind}")  # the grammar has no other kind

    def sub_statement(self, s: Any, parent: Any = None) -> ast.Stmt:
        """The body of an if/for/while/foreach (an empty statement becomes an empty block)."""
        if isinstance(s, str):  # `;`: textX gives the matched text, without a position
            return ast.Block((), span=self.span(parent) if parent is not None else ast.NOWHERE)
        lead = self.take_comments(s._tx_position)
        stmt = self.statement(s, lead)
        return stmt if stmt is not None else ast.Block((), span=self.span(s))

    def simple(self, s: Any, span: Span, comments: tuple[str, ...]) -> ast.Stmt:
        if s.prefix:
            return ast.IncDec(self.lvalue(s.target), s.prefix, span=span, comments=comments)
        if s.op:
            return ast.Assign(self.lvalue(s.target), s.op, self.expr(s.value), span=span,
                              comments=comments)
        if s.postfix:
            return ast.IncDec(self.lvalue(s.target), s.postfix, span=span, comments=comments)
        if s.views:
            return ast.AsStatement(self.lvalue(s.target), tuple(self.view(v) for v in s.views),
                                   span=span, comments=comments)
        return ast.ExprStmt(self.expr(s.target), span=span, comments=comments)

    def assign(self, a: Any) -> ast.Assign:
        return ast.Assign(self.lvalue(a.target), a.op, self.expr(a.value), span=self.span(a))

    def incdec(self, a: Any) -> ast.IncDec:
        return ast.IncDec(self.lvalue(a.target), a.prefix or a.op, span=self.span(a))

    def lvalue(self, e: Any) -> ast.Expr:
        node = self.expr(e)
        if not isinstance(node, ast.Name | ast.Index | ast.Field):
            self.error("mcpl-not-assignable", "this expression cannot be assigned to", e,
                       "the left side must be a variable, an array element or a record field")
        return node

    # ---- expressions

    def expr(self, e: Any) -> ast.Expr:
        kind = type(e).__name__
        if kind == "Expr":
            cond = self.binary(e.cond)
            if e.then is None:
                return cond
            return ast.Ternary(cond, self.expr(e.then), self.expr(e.orelse), span=self.span(e))
        if kind == "PostfixExpr":
            return self.postfix(e)
        if kind == "BinaryExpr":
            return self.binary(e)
        raise AssertionError(f"unknown expression {kind}")

    def binary(self, b: Any) -> ast.Expr:
        operands = [self.unary(u) for u in b.operands]
        ops = list(b.ops)
        if not ops:
            return operands[0]
        # Precedence climbing over the flat operand/operator list; all C binary
        # operators are left-associative.
        pos = 0

        def climb(min_prec: int) -> ast.Expr:
            nonlocal pos
            left = operands[pos]
            while pos < len(ops) and ast.BINARY_PRECEDENCE[ops[pos]] >= min_prec:
                op = ops[pos]
                prec = ast.BINARY_PRECEDENCE[op]
                pos += 1
                right = climb(prec + 1)
                left = ast.Binary(op, left, right, span=left.span.merge(right.span))
            return left

        return climb(1)

    def unary(self, u: Any) -> ast.Expr:
        node = self.postfix(u.operand)
        for p in reversed(u.prefixes):
            span = self.span(p).merge(node.span)
            if p.cast is not None:
                node = ast.Cast(self.type(p.cast), node, span=span)
            else:
                node = ast.Unary(p.op, node, span=span)
        return node

    def postfix(self, p: Any) -> ast.Expr:
        node = self.primary(p.primary)
        start = p._tx_position
        groups: list[tuple[ast.Expr, ...]] = []
        groups_end = start
        for s in p.suffixes:
            if s.field:
                if groups:
                    node = ast.Index(node, tuple(groups),
                                     span=self.index.span(self.file, start, groups_end))
                    groups = []
                span = self.index.span(self.file, start, s._tx_position_end)
                node = ast.Field(node, s.field, span=span)
            else:
                groups.append(tuple(self.expr(x) for x in s.index))
                groups_end = s._tx_position_end
        if groups:
            node = ast.Index(node, tuple(groups),
                             span=self.index.span(self.file, start, groups_end))
        if isinstance(node, ast.Field):
            path = _field_path(node)
            if path is not None:
                self.hw_queries.add(path[0])
            if path is not None and path[0] in self.hardware_names:
                node = ast.HwdRef(path, span=node.span)
        return node

    def primary(self, p: Any) -> ast.Expr:
        kind = type(p).__name__
        span = self.span(p)
        if kind == "NameRef":
            name = p.name
            if p.call is not None:
                if name in RESERVED:
                    self.error("mcpl-syntax", f"'{name}' is a reserved word, not a function",
                               p, "casts are written `(float) x`" if name in
                               ast.PRIMITIVE_TYPES else None)
                return ast.Call(name, tuple(self.expr(a) for a in p.call.args), span=span)
            if name in ("true", "false"):
                return ast.Literal(name == "true", "bool", span=span)
            if name in RESERVED:
                self.error("mcpl-syntax", f"syntax error: expected an expression, found '{name}'",
                           p, f"'{name}' is a reserved word of MCPL")
            return ast.Name(name, span=span)
        if kind == "Number":
            return _number(p.text, span)
        if kind == "Paren":
            return self.expr(p.expr)
        raise AssertionError(f"unknown primary {kind}")


def _with_comments(stmt: ast.Stmt, comments: tuple[str, ...]) -> ast.Stmt:
    import dataclasses

    return dataclasses.replace(stmt, comments=comments)


def _field_path(node: ast.Expr) -> tuple[str, ...] | None:
    """``a.b.c`` as ("a", "b", "c") when the chain holds only names and fields."""
    parts: list[str] = []
    while isinstance(node, ast.Field):
        parts.append(node.name)
        node = node.base
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return tuple(reversed(parts))


_SUFFIX_RE = re.compile(r"[fFlLuU]+$")


def _number(text: str, span: Span) -> ast.Literal:
    if text[:2] in ("0x", "0X"):
        digits = text.rstrip("uUlL")
        return ast.Literal(int(digits, 16), "int", text[len(digits):], span=span)
    m = _SUFFIX_RE.search(text)
    suffix = m.group() if m else ""
    body = text[: len(text) - len(suffix)]
    is_float = any(c in body for c in ".eE") or "f" in suffix or "F" in suffix
    if is_float:
        return ast.Literal(float(body), "float", suffix, span=span)
    return ast.Literal(int(body), "int", suffix, span=span)
