"""Prints an MCPL AST as source text a person would write: 4-space indents, C
style braces, only the parentheses precedence needs, comments where they were.

Printing and parsing are inverse: ``parse(print_module(m))`` gives ``m`` back
up to spans (see ``ast.same``). Translation and code generation print through
this module.
"""

from __future__ import annotations

from mcl.mcpl import ast

INDENT = "    "
LINE_WIDTH = 90

# Binding strength of expressions that are not binary operators.
_TERNARY_PREC = 0
_UNARY_PREC = 11
_POSTFIX_PREC = 12


def print_module(module: ast.Module) -> str:
    """The whole module as MCPL text, ending with a newline; lines end as those of
    the module's source (``module.newline``)."""
    out: list[str] = list(module.comments)
    if module.package:
        out.append(f"package {module.package};")
    out.append(f"module {module.name};")
    if module.exports:
        out.append(f"export {', '.join(module.exports)};")
    if module.imports:
        out.append("")
        out.extend(f"import {imp.dotted};" for imp in module.imports)
    for t in module.types:
        out.append("")
        out.append(print_typedef(t))
    if module.constants:
        out.append("")
        for c in module.constants:
            out.extend(c.comments)
            out.append(f"const {print_type(c.type)} {c.name} = {print_expr(c.value)};")
    for f in module.functions:
        out.append("")
        out.append(print_function(f))
    text = "\n".join(out) + "\n"
    # The source's line ends (a CRLF file translated stays CRLF, every line of it).
    return text if module.newline == "\n" else text.replace("\n", module.newline)


def print_typedef(t: ast.TypeDef) -> str:
    lines = list(t.comments)
    lines.append(f"type {t.name} {{")
    lines.extend(f"{INDENT}{print_type(f.type)} {f.name};" for f in t.fields)
    lines.append("}")
    return "\n".join(lines)


def print_function(f: ast.Function) -> str:
    """A function with its leading comments, no trailing newline."""
    head = f"{f.hardware} {print_type(f.return_type)} {f.name}("
    params = [print_param(p) for p in f.params]
    lines = list(f.comments)
    one_line = head + ", ".join(params) + ") {"
    if len(one_line) <= LINE_WIDTH:
        lines.append(one_line)
    else:
        # Fill lines, continuation aligned under the first parameter.
        pad = " " * len(head)
        current = head
        for i, p in enumerate(params):
            piece = p + (", " if i < len(params) - 1 else ") {")
            too_long = len(current) + len(piece.rstrip()) > LINE_WIDTH
            if current != head and too_long:
                lines.append(current.rstrip())
                current = pad
            current += piece
        lines.append(current)
    lines.extend(_block_body(f.body, 1))
    lines.append("}")
    return "\n".join(lines)


def print_param(p: ast.Param) -> str:
    text = _modifiers(p.const, p.space) + "".join(f"{s} " for s in p.alternatives) \
        + f"{print_type(p.type)} {p.name}"
    if p.default is not None:
        text += f" = {print_expr(p.default)}"
    return text


def print_type(t: ast.Type) -> str:
    return t.name + "".join(f"[{', '.join(print_expr(e) for e in level)}]" for level in t.dims)


def print_statement(s: ast.Stmt, level: int = 0) -> str:
    """One statement (with its comments) indented ``level`` times, no trailing newline."""
    return "\n".join(_statement(s, level))


def _modifiers(const: bool, space: str | None) -> str:
    return ("const " if const else "") + (f"{space} " if space else "")


def _declaration(d: ast.Declaration) -> str:
    text = _modifiers(d.const, d.space) + f"{print_type(d.type)} {d.name}"
    text += "".join(f" as {print_type(v.type)} {v.name}" for v in d.views)
    if d.init is not None:
        text += f" = {print_expr(d.init)}"
    return text


def _simple(s: ast.Stmt) -> str:
    """Statements that fit on one line, without the ';' (also used in for headers)."""
    if isinstance(s, ast.Declaration):
        return _declaration(s)
    if isinstance(s, ast.Assign):
        return f"{print_expr(s.target)} {s.op} {print_expr(s.value)}"
    if isinstance(s, ast.IncDec):
        return f"{print_expr(s.target)}{s.op}"
    raise TypeError(f"not a simple statement: {type(s).__name__}")


def _comment_lines(comments: tuple[str, ...], pad: str) -> list[str]:
    # An empty comment stands for a blank line the programmer left.
    return [pad + c if c else "" for c in comments]


def _block_body(b: ast.Block, level: int) -> list[str]:
    lines: list[str] = []
    for s in b.statements:
        lines.extend(_statement(s, level))
    lines.extend(_comment_lines(b.end_comments, INDENT * level))
    return lines


def _body(body: ast.Stmt, level: int, head: str) -> list[str]:
    """``head`` followed by a body: ``head {`` ... ``}`` for blocks, else an indented line."""
    pad = INDENT * level
    if isinstance(body, ast.Block) and not body.comments:
        return [f"{pad}{head} {{", *_block_body(body, level + 1), f"{pad}}}"]
    return [f"{pad}{head}", *_statement(body, level + 1)]


def _statement(s: ast.Stmt, level: int) -> list[str]:
    pad = INDENT * level
    lines = _comment_lines(s.comments, pad)
    if isinstance(s, ast.Block):
        lines += [f"{pad}{{", *_block_body(s, level + 1), f"{pad}}}"]
    elif isinstance(s, ast.Declaration | ast.Assign | ast.IncDec):
        lines.append(f"{pad}{_simple(s)};")
    elif isinstance(s, ast.ExprStmt):
        lines.append(f"{pad}{print_expr(s.expr)};")
    elif isinstance(s, ast.Return):
        lines.append(f"{pad}return;" if s.value is None else f"{pad}return {print_expr(s.value)};")
    elif isinstance(s, ast.Break):
        lines.append(f"{pad}break;")
    elif isinstance(s, ast.Continue):
        lines.append(f"{pad}continue;")
    elif isinstance(s, ast.Barrier):
        lines.append(f"{pad}barrier({s.space});")
    elif isinstance(s, ast.AsStatement):
        views = "".join(f" as {print_type(v.type)} {v.name}" for v in s.views)
        lines.append(f"{pad}{print_expr(s.target)}{views};")
    elif isinstance(s, ast.If):
        lines += _if(s, level)
    elif isinstance(s, ast.While):
        lines += _body(s.body, level, f"while ({print_expr(s.cond)})")
    elif isinstance(s, ast.For):
        init = _simple(s.init) if s.init is not None else ""
        cond = f" {print_expr(s.cond)}" if s.cond is not None else ""
        update = f" {_simple(s.update)}" if s.update is not None else ""
        lines += _body(s.body, level, f"for ({init};{cond};{update})")
    elif isinstance(s, ast.ForEach):
        var = _modifiers(s.var.const, s.var.space) + f"{print_type(s.var.type)} {s.var.name}"
        lines += _body(s.body, level, f"foreach ({var} in {print_expr(s.size)} {s.group})")
    else:
        raise TypeError(f"cannot print statement {type(s).__name__}")
    return lines


def _if(s: ast.If, level: int) -> list[str]:
    pad = INDENT * level
    then = s.then
    if s.orelse is not None and _ends_with_open_if(then):
        # `if (a) if (b) x; else y;` would give the else to the inner if; braces
        # keep it with the outer one (the meaning is unchanged).
        then = ast.Block((then,), span=then.span)
    lines = _body(then, level, f"if ({print_expr(s.cond)})")
    orelse = s.orelse
    while orelse is not None:
        if isinstance(orelse, ast.If) and not orelse.comments:
            # `else if` chains stay flat instead of nesting deeper and deeper.
            head, body, following = f"else if ({print_expr(orelse.cond)})", orelse.then, \
                orelse.orelse
            if following is not None and _ends_with_open_if(body):
                body = ast.Block((body,), span=body.span)
        else:
            head, body, following = "else", orelse, None
        if lines[-1] == f"{pad}}}":
            lines.pop()
            head = "} " + head
        lines += _body(body, level, head)
        orelse = following
    return lines


def _ends_with_open_if(s: ast.Stmt) -> bool:
    """Whether ``s`` printed without braces ends in an ``if`` that has no ``else``."""
    while True:
        if isinstance(s, ast.If):
            if s.orelse is None:
                return True
            s = s.orelse
        elif isinstance(s, ast.For | ast.While | ast.ForEach) and not isinstance(s.body, ast.Block):
            s = s.body
        else:
            return False


# --------------------------------------------------------------------------- expressions


def _prec(e: ast.Expr) -> int:
    if isinstance(e, ast.Binary):
        return ast.BINARY_PRECEDENCE[e.op]
    if isinstance(e, ast.Ternary):
        return _TERNARY_PREC
    if isinstance(e, ast.Unary | ast.Cast):
        return _UNARY_PREC
    return _POSTFIX_PREC


def _wrap(e: ast.Expr, min_prec: int) -> str:
    text = print_expr(e)
    return f"({text})" if _prec(e) < min_prec else text


def print_expr(e: ast.Expr) -> str:
    """An expression with the parentheses C precedence needs and no others."""
    if isinstance(e, ast.Name):
        return e.id
    if isinstance(e, ast.Literal):
        if e.kind == "bool" or isinstance(e.value, bool):
            return "true" if e.value else "false"
        if e.kind == "float":
            return repr(float(e.value)) + e.suffix
        return str(e.value) + e.suffix
    if isinstance(e, ast.Binary):
        p = ast.BINARY_PRECEDENCE[e.op]
        return f"{_wrap(e.left, p)} {e.op} {_wrap(e.right, p + 1)}"
    if isinstance(e, ast.Unary):
        operand = print_expr(e.operand)
        if _prec(e.operand) < _UNARY_PREC or isinstance(e.operand, ast.Unary) or (
                isinstance(e.operand, ast.Literal) and operand.startswith("-")):
            operand = f"({operand})"
        return f"{e.op}{operand}"
    if isinstance(e, ast.Cast):
        return f"({print_type(e.type)}) {_wrap(e.operand, _UNARY_PREC)}"
    if isinstance(e, ast.Ternary):
        return (f"{_wrap(e.cond, 1)} ? {print_expr(e.then)} : "
                f"{print_expr(e.orelse)}")
    if isinstance(e, ast.Index):
        groups = "".join(f"[{', '.join(print_expr(i) for i in g)}]" for g in e.groups)
        return _wrap(e.base, _POSTFIX_PREC) + groups
    if isinstance(e, ast.Field):
        return f"{_wrap(e.base, _POSTFIX_PREC)}.{e.name}"
    if isinstance(e, ast.Call):
        return f"{e.func}({', '.join(print_expr(a) for a in e.args)})"
    if isinstance(e, ast.HwdRef):
        return ".".join(e.path)
    raise TypeError(f"cannot print expression {type(e).__name__}")
