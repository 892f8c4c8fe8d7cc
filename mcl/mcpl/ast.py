"""The MCPL abstract syntax tree: immutable dataclasses with source spans.

Every pass of the compiler (resolution, checks, analyses, translation, code
generation) works on these nodes; textX objects never leave the builder.

Shape of the tree::

    Module(package, name, exports, imports: (Import,), types: (TypeDef,),
           functions: (Function,), file, constants: (Constant,))
    Constant(type, name, value)                const float PI = 3.14159;  (module level)
    Import(path: (str,))                       import lib.atomics;  -> ("lib", "atomics")
    TypeDef(name, fields: (RecordField,))      type point { float x; float y; }
    RecordField(type, name)
    Function(hardware, return_type, name, params: (Param,), body: Block)
    Param(space, const, type, name, default)   const int n = 2048 / main float[n] a
    Type(name, dims)        dims: one tuple of size expressions per tile level:
                            float[nb, mb][ts, ts] -> (("nb", "mb"), ("ts", "ts"))
    View(type, name)        the `as float[..] b` part of a declaration or statement

  statements (all have ``comments``: the comment lines written just above them, with
  "" standing for a blank line before the statement)
    Block(statements, end_comments)  Declaration(space, const, type, name, views, init)
    Assign(target, op, value)        IncDec(target, op)         ExprStmt(expr)
    Return(value)  If(cond, then, orelse)  For(init, cond, update, body)  While(cond, body)
    ForEach(var: Declaration, size, group, body)   Barrier(space)   Break()  Continue()
    AsStatement(target, views)

  expressions
    Literal(value, kind, suffix)  kind: "int" | "float" | "bool"; suffix "f", "L", ...
    Name(id)   Index(base, groups)   Field(base, name)   Call(func, args)
    Unary(op, operand)   Binary(op, left, right)   Ternary(cond, then, orelse)
    Cast(type, operand)  HwdRef(path)  gpu.hierarchy.blocks.block.threads.max_nr_units

Children are tuples, never lists, so nodes are hashable and safe to share.
The ``span`` (and ``comments``) are keyword-only with defaults, so passes can
build nodes tersely (``Name("i")``) and use ``dataclasses.replace`` to derive
new ones. Spans take part in ``==``; use :func:`same` to compare two trees
while ignoring where they came from.

Traversal helpers: :func:`children` (direct child nodes, in source order),
:func:`walk` (pre-order iterator over a subtree), :func:`map_children`
(rebuild a node with a function applied to each direct child) and
:func:`transform` (bottom-up rewrite of a whole tree).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

from mcl.diagnostics import Span

#: The span of a node that a pass built rather than the parser.
NOWHERE = Span("<generated>", 0, 0, 0, 0)

#: The primitive types of MCPL, each with its size in bytes (``void`` has none).
PRIMITIVE_TYPES: dict[str, int] = {
    "int": 4, "long": 8, "float": 4, "double": 8, "bool": 1, "byte": 1, "void": 0,
}

#: Binary operators from the loosest to the tightest binding, as in C.
BINARY_PRECEDENCE: dict[str, int] = {
    "||": 1, "&&": 2, "|": 3, "^": 4, "&": 5,
    "==": 6, "!=": 6, "<": 7, "<=": 7, ">": 7, ">=": 7,
    "<<": 8, ">>": 8, "+": 9, "-": 9, "*": 10, "/": 10, "%": 10,
}
ASSIGN_OPS = ("=", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "|=", "^=")
UNARY_OPS = ("-", "!", "~", "+")


@dataclass(frozen=True)
class Node:
    """Base of every AST node; ``span`` says where in the source it was written."""

    span: Span = field(default=NOWHERE, kw_only=True, repr=False)


# --------------------------------------------------------------------------- expressions


@dataclass(frozen=True)
class Expr(Node):
    """Base of expressions."""


@dataclass(frozen=True)
class Literal(Expr):
    value: int | float | bool
    kind: str = "int"  # "int" | "float" | "bool"
    suffix: str = ""   # "f" for 1.0f, "L" for 1L, "" otherwise


@dataclass(frozen=True)
class Name(Expr):
    id: str


@dataclass(frozen=True)
class Index(Expr):
    """``a[i, j]`` or ``t[bi, bj][ti, tj]``: one tuple of indices per tile level."""

    base: Expr
    groups: tuple[tuple[Expr, ...], ...]


@dataclass(frozen=True)
class Field(Expr):
    """A record field ``r.x``."""

    base: Expr
    name: str


@dataclass(frozen=True)
class Call(Expr):
    func: str
    args: tuple[Expr, ...] = ()


@dataclass(frozen=True)
class Unary(Expr):
    op: str
    operand: Expr


@dataclass(frozen=True)
class Binary(Expr):
    op: str
    left: Expr
    right: Expr
    #: Where the operator is written (None in nodes a pass built): diagnostics about
    #: the operation itself (a division by zero) point at it.
    op_span: Span | None = field(default=None, kw_only=True, repr=False, compare=False)


@dataclass(frozen=True)
class Ternary(Expr):
    cond: Expr
    then: Expr
    orelse: Expr


@dataclass(frozen=True)
class Cast(Expr):
    type: Type
    operand: Expr


@dataclass(frozen=True)
class HwdRef(Expr):
    """A property of a hardware description: ``("gpu", "hierarchy", ..., "max_nr_units")``."""

    path: tuple[str, ...]


# --------------------------------------------------------------------------- types


@dataclass(frozen=True)
class Type(Node):
    """``name`` is a primitive type or a record; ``dims`` one tuple of sizes per tile level."""

    name: str
    dims: tuple[tuple[Expr, ...], ...] = ()

    @property
    def is_array(self) -> bool:
        return bool(self.dims)

    @property
    def is_primitive(self) -> bool:
        return self.name in PRIMITIVE_TYPES

    @property
    def element(self) -> Type:
        """The type of one element (the type without its dimensions)."""
        return Type(self.name, span=self.span) if self.dims else self

    @property
    def sizes(self) -> tuple[Expr, ...]:
        """All size expressions, outer tile level first (the number of indices an access needs)."""
        return tuple(e for level in self.dims for e in level)


@dataclass(frozen=True)
class View(Node):
    """``as float[n][m] b``: the same storage seen with another shape and name."""

    type: Type
    name: str


# --------------------------------------------------------------------------- statements


@dataclass(frozen=True)
class Stmt(Node):
    """Base of statements. ``comments``: the comments written on the lines just above."""

    comments: tuple[str, ...] = field(default=(), kw_only=True)


@dataclass(frozen=True)
class Block(Stmt):
    statements: tuple[Stmt, ...] = ()
    end_comments: tuple[str, ...] = field(default=(), kw_only=True)


@dataclass(frozen=True)
class Declaration(Stmt):
    """``shared const float[n][m] a as float[n*m] b = init``; ``space`` None means default."""

    type: Type
    name: str
    space: str | None = None
    const: bool = False
    views: tuple[View, ...] = ()
    init: Expr | None = None


@dataclass(frozen=True)
class Assign(Stmt):
    target: Expr
    op: str
    value: Expr


@dataclass(frozen=True)
class IncDec(Stmt):
    target: Expr
    op: str  # "++" | "--"


@dataclass(frozen=True)
class ExprStmt(Stmt):
    expr: Expr


@dataclass(frozen=True)
class Return(Stmt):
    value: Expr | None = None


@dataclass(frozen=True)
class If(Stmt):
    cond: Expr
    then: Stmt
    orelse: Stmt | None = None


@dataclass(frozen=True)
class For(Stmt):
    init: Declaration | Assign | None
    cond: Expr | None
    update: Assign | IncDec | None
    body: Stmt


@dataclass(frozen=True)
class While(Stmt):
    cond: Expr
    body: Stmt


@dataclass(frozen=True)
class ForEach(Stmt):
    """``foreach (int i in n threads) body``: ``var`` declares the index, ``group`` names
    the par_group."""

    var: Declaration
    size: Expr
    group: str
    body: Stmt


@dataclass(frozen=True)
class Barrier(Stmt):
    space: str


@dataclass(frozen=True)
class Break(Stmt):
    pass


@dataclass(frozen=True)
class Continue(Stmt):
    pass


@dataclass(frozen=True)
class AsStatement(Stmt):
    """``a as float[nb, k][ts, t] a2;``"""

    target: Expr
    views: tuple[View, ...]


# --------------------------------------------------------------------------- top level


@dataclass(frozen=True)
class Param(Node):
    """A function parameter; ``default`` is the example value analyses use."""

    type: Type
    name: str
    space: str | None = None
    const: bool = False
    default: Expr | None = None
    #: other memory spaces the argument may be in (``reg main float r``: a result
    #: written through a reference to a register or to main memory; legacy)
    alternatives: tuple[str, ...] = ()


@dataclass(frozen=True)
class Function(Node):
    hardware: str
    return_type: Type
    name: str
    params: tuple[Param, ...]
    body: Block
    comments: tuple[str, ...] = field(default=(), kw_only=True)


@dataclass(frozen=True)
class RecordField(Node):
    type: Type
    name: str


@dataclass(frozen=True)
class TypeDef(Node):
    name: str
    fields: tuple[RecordField, ...]
    comments: tuple[str, ...] = field(default=(), kw_only=True)


@dataclass(frozen=True)
class Constant(Node):
    """A module-level constant (``const int N = 16;``), exported and imported like a
    function; its value is an expression of literals and constants defined before."""

    type: Type
    name: str
    value: Expr
    comments: tuple[str, ...] = field(default=(), kw_only=True)


@dataclass(frozen=True)
class Import(Node):
    path: tuple[str, ...]

    @property
    def dotted(self) -> str:
        return ".".join(self.path)


@dataclass(frozen=True)
class Module(Node):
    name: str
    imports: tuple[Import, ...] = ()
    types: tuple[TypeDef, ...] = ()
    functions: tuple[Function, ...] = ()
    package: str | None = None
    exports: tuple[str, ...] = ()
    file: str = "<string>"
    comments: tuple[str, ...] = field(default=(), kw_only=True)
    constants: tuple[Constant, ...] = field(default=(), kw_only=True)
    #: where each name of ``exports`` is written (empty for a module built in code)
    export_spans: tuple[Span, ...] = field(default=(), kw_only=True, compare=False)
    #: the line end of the source ("\r\n" for a file written with CRLF), which the
    #: printer writes: a translation keeps the file's style; comments hold no "\r"
    newline: str = field(default="\n", kw_only=True, compare=False)

    def function(self, name: str) -> Function | None:
        """The function called ``name`` or None."""
        for f in self.functions:
            if f.name == name:
                return f
        return None


N = TypeVar("N", bound=Node)


# --------------------------------------------------------------------------- traversal

# Names of the fields that hold child nodes, per class, computed once: the
# traversals below run on every keystroke in the language server.
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def _child_fields(cls: type) -> tuple[str, ...]:
    names = _CHILD_FIELDS.get(cls)
    if names is None:
        names = tuple(f.name for f in dataclasses.fields(cls)
                      if f.name not in ("span", "op_span", "comments", "end_comments"))
        _CHILD_FIELDS[cls] = names
    return names


def _add_nodes(value: Any, out: list[Node]) -> None:
    """Append the nodes in a tuple (nested tuples flattened) to ``out``, in order."""
    for v in value:
        if isinstance(v, Node):
            out.append(v)
        elif isinstance(v, tuple):
            _add_nodes(v, out)


def _child_list(node: Node) -> list[Node]:
    out: list[Node] = []
    cls = type(node)
    names = _CHILD_FIELDS.get(cls) or _child_fields(cls)
    for name in names:
        value = getattr(node, name)
        if isinstance(value, Node):
            out.append(value)
        elif isinstance(value, tuple) and value:
            _add_nodes(value, out)
    return out


def children(node: Node) -> Iterator[Node]:
    """The direct child nodes of ``node`` in source order (nested tuples flattened)."""
    return iter(_child_list(node))


def walk(node: Node) -> Iterator[Node]:
    """All nodes of the subtree rooted at ``node``, pre-order (parents before children)."""
    stack = [node]
    pop = stack.pop
    extend = stack.extend
    while stack:
        n = pop()
        yield n
        kids = _child_list(n)
        if kids:
            kids.reverse()
            extend(kids)


def statements_of(s: Stmt) -> tuple[Stmt, ...]:
    """The statements of a block, or the statement itself (a loop's or an if's body)."""
    return s.statements if isinstance(s, Block) else (s,)


def contains_barrier(node: Node, space: str | None = None) -> bool:
    """Whether the subtree of ``node`` holds a barrier (of memory ``space``, where one
    is given)."""
    return any(isinstance(n, Barrier) and (space is None or n.space == space)
               for n in walk(node))


def _map_value(value: Any, fn: Callable[[Node], Node]) -> Any:
    if isinstance(value, Node):
        return fn(value)
    if isinstance(value, tuple):
        new = tuple(_map_value(v, fn) for v in value)
        # Keep the old tuple when nothing changed, so callers can test identity.
        return value if all(n is o for n, o in zip(new, value, strict=True)) else new
    return value


def map_children(node: N, fn: Callable[[Node], Node]) -> N:
    """A copy of ``node`` whose direct children are replaced by ``fn(child)``.

    Returns ``node`` itself when nothing changed, so unchanged subtrees stay shared."""
    changes = {}
    for name in _child_fields(type(node)):
        old = getattr(node, name)
        new = _map_value(old, fn)
        if new is not old:
            changes[name] = new
    return dataclasses.replace(node, **changes) if changes else node


def transform(node: N, fn: Callable[[Node], Node | None]) -> N:
    """Rewrite a tree bottom-up: children first, then ``fn`` on the rebuilt node.

    ``fn`` returns a replacement node, or None to keep the node as it is."""
    rebuilt = map_children(node, lambda c: transform(c, fn))
    out = fn(rebuilt)
    return rebuilt if out is None else out  # type: ignore[return-value]


def strip_spans(node: N) -> N:
    """The same tree with every span set to :data:`NOWHERE` (for comparisons)."""
    def clear(n: Node) -> Node:
        return dataclasses.replace(n, span=NOWHERE) if n.span is not NOWHERE else n
    return transform(node, clear)


def same(a: Any, b: Any) -> bool:
    """Structural equality of two trees (or tuples of them), ignoring spans (and the
    line end a module's source was written with)."""
    if isinstance(a, Node) and isinstance(b, Node):
        if type(a) is not type(b):
            return False
        for f in dataclasses.fields(a):
            if f.name in ("span", "op_span", "newline"):
                continue
            if not same(getattr(a, f.name), getattr(b, f.name)):
                return False
        return True
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b
