"""The textX parse tree of MCPL turned into the project's AST: C operator precedence,
declaration words split into modifiers, type and name, hardware-description
references, comments attached to statements (used by ``builder``)."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from mcl.diagnostics import Diagnostic, LineIndex, Span, error
from mcl.mcpl import ast

RESERVED = frozenset(
    "module package export import type if else for while foreach in return break continue "
    "barrier as const true false int long float double bool byte void".split())

_COMMENT_RE = re.compile(r"//[^\n]*|/\*[\s\S]*?\*/")
#: the `export` list of a module header (its names are strings in the parse tree)
_EXPORT_RE = re.compile(r"^[ \t]*export\b([^;]*);", re.M)
# Only comments can hold `//` or `/*` in MCPL (it has no string literals), but a
# comment start inside another comment must not count: the regex scans left to
# right and consumes whole comments, so nested markers are skipped.

_BLANK_LINE_RE = re.compile(r"\n[ \t\r]*\n")


def comment_text(raw: str) -> str:
    """A comment as the AST keeps it: its lines end in "\\n" whatever the file's line
    ends are (the printer writes the module's own, :func:`line_end`)."""
    return raw.replace("\r\n", "\n").rstrip("\r") if "\r" in raw else raw


def line_end(source: str) -> str:
    """The line end ``source`` is written with: "\\r\\n" if its first line ends so,
    else "\\n"."""
    first = source.find("\n")
    return "\r\n" if first > 0 and source[first - 1] == "\r" else "\n"


def _skip_space(source: str, offset: int) -> int:
    while True:
        while offset < len(source) and source[offset].isspace():
            offset += 1
        m = _COMMENT_RE.match(source, offset)
        if not m:
            return offset
        offset = m.end()




# --------------------------------------------------------------------------- syntax errors



class _Builder:
    """Walks a textX model once and produces AST nodes; collects errors."""

    def __init__(self, source: str, file: str, index: LineIndex,
                 hardware_names: frozenset[str] = frozenset()):
        self.source = source
        self.file = file
        self.index = index
        self.errors: list[Diagnostic] = []
        self.hardware_names: set[str] = set(hardware_names)
        # Names asked about by hardware-reference recognition (the cache keys on them).
        self.hw_queries: set[str] = set()
        self.comments = [(m.start(), m.end(), comment_text(m.group()))
                         for m in _COMMENT_RE.finditer(source)]
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
        items = sorted([*m.types, *m.constants, *m.functions], key=lambda o: o._tx_position)
        types: list[ast.TypeDef] = []
        functions: list[ast.Function] = []
        constants: list[ast.Constant] = []
        for item in items:
            comments = self.take_comments(item._tx_position)
            if type(item).__name__ == "TypeDef":
                types.append(self.typedef(item, comments))
            elif type(item).__name__ == "Constant":
                constants.append(self.constant(item, comments))
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
            newline=line_end(self.source),
            constants=tuple(constants), export_spans=self.export_spans(m.exports),
            span=self.index.span(self.file, 0, max(1, len(self.source))))

    def constant(self, c: Any, comments: tuple[str, ...]) -> ast.Constant:
        self.check_name(c.name, c)
        self.skip_comments(c._tx_position_end)
        return ast.Constant(self.type(c.type), c.name, self.expr(c.value), span=self.span(c),
                            comments=comments)

    def export_spans(self, names: Any) -> tuple[Span, ...]:
        """Where the names of the module's `export` list are written (the parse tree
        keeps them as strings, without positions)."""
        m = _EXPORT_RE.search(self.source)
        if m is None:
            return ()
        spans, at = [], m.start(1)
        for name in names:
            found = re.compile(rf"\b{re.escape(name)}\b").search(self.source, at, m.end())
            if found is None:
                return ()
            spans.append(self.index.span(self.file, found.start(), found.end()))
            at = found.end()
        return tuple(spans)

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
        spaces: list[str] = []
        space, const, type_, name = self.declaration_head(p, "parameter", spaces)
        default = self.expr(p.default) if p.default is not None else None
        return ast.Param(type_, name, space, const, default, tuple(spaces[1:]),
                         span=self.span(p))

    # ---- declarations

    def declaration_head(self, d: Any, what: str, spaces: list[str] | None = None
                         ) -> tuple[str | None, bool, ast.Type, str]:
        """Split ``words dims name?`` into (memory space, const, type, name). Where
        ``spaces`` is given (parameters), several memory spaces are allowed and all
        are appended to it."""
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
            elif spaces is not None:
                spaces.append(w)
                space = space or w
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
        # The grammar keeps no position for an operator: it is the first token
        # after its left operand.
        op_spans = []
        for u, op in zip(b.operands, ops, strict=False):
            start = _skip_space(self.source, u._tx_position_end)
            op_spans.append(self.index.span(self.file, start, start + len(op)))
        # Precedence climbing over the flat operand/operator list; all C binary
        # operators are left-associative.
        pos = 0

        def climb(min_prec: int) -> ast.Expr:
            nonlocal pos
            left = operands[pos]
            while pos < len(ops) and ast.BINARY_PRECEDENCE[ops[pos]] >= min_prec:
                op = ops[pos]
                op_span = op_spans[pos]
                prec = ast.BINARY_PRECEDENCE[op]
                pos += 1
                right = climb(prec + 1)
                left = ast.Binary(op, left, right, span=left.span.merge(right.span),
                                  op_span=op_span)
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
