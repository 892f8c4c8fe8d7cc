"""From syntax to model: evaluates property values and units, types argument
statements, and resolves reference statements (``on_chip;``,
``perfect.hierarchy.threads;``) so that the model holds the real block.

A :class:`Resolver` works over a set of parsed descriptions (a library), because a
reference may lead into another description; it builds each top-level block once
and detects reference cycles. Problems become diagnostics, never exceptions."""

from __future__ import annotations

import difflib
import math
import sys
from collections.abc import Callable, Mapping

from mcl.diagnostics import Diagnostic, Related, Span, error, warning
from mcl.hdl import blocks as B
from mcl.hdl import language as L
from mcl.hdl import model as M
from mcl.hdl import syntax as S
from mcl.hdl.units import (
    COUNTABLE,
    NUMBER,
    UNLIMITED,
    Symbolic,
    dimension_of,
    is_number,
    normalise,
    parse_unit,
)


def suggest(word: str, choices) -> str | None:
    """The closest known word, for 'did you mean' hints."""
    found = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return found[0] if found else None


def feedback_function_names() -> list[str]:
    """The names ``performance_feedback("name")`` may give: the functions mcl.analyses
    provides, those a program registered (mcl.analyses.feedback_function) and plug-ins'
    (by their entry points' names: nothing is loaded)."""
    names = list(L.FEEDBACK_FUNCTIONS)
    registry = sys.modules.get("mcl.analyses.functions")  # loaded: it may hold more
    if registry is not None:
        names += [n for n in registry.registered() if n not in names]
    try:
        from importlib.metadata import entry_points
        names += [ep.name for ep in entry_points(group=L.FEEDBACK_ENTRY_POINTS)
                  if ep.name not in names]
    except Exception:  # broken package metadata: the names known here still count
        pass
    return names


#: Properties that count things: whole numbers.
_WHOLE = ("nr_units", "max_nr_units", "nr_banks", "associativity")
#: Properties that may be 0 (no latency, nothing reserved); every other quantity is a
#: size, rate, frequency or count that must be greater than 0.
#: the largest number a description may write (before its unit scales it)
_LARGEST = 10 ** 30
_MAY_BE_ZERO = ("latency", "reserved")


class _Failure(Exception):
    """An expression that cannot be evaluated (the diagnostic is already recorded)."""


class Resolver:
    """Builds the models of a set of parsed descriptions. ``lookup(name)`` gives the
    syntax of a description by name (None if there is none); ``broken(name)`` the
    syntax errors of a description whose file does not parse (None if it parses or
    does not exist)."""

    def __init__(self, lookup: Callable[[str], S.DescriptionSyntax | None],
                 broken: Callable[[str], list[Diagnostic] | None] | None = None):
        self._lookup = lookup
        self._broken = broken or (lambda name: None)
        self._built: dict[tuple[str, str], B.Block | None] = {}
        self._building: list[tuple[str, str]] = []
        self._descriptions: dict[str, M.HardwareDescription] = {}
        self.diagnostics: dict[str, list[Diagnostic]] = {}

    def _report(self, desc: str, d: Diagnostic) -> None:
        lst = self.diagnostics.setdefault(desc, [])
        if d not in lst:
            lst.append(d)

    # ----------------------------------------------------------------- descriptions

    def description(self, name: str) -> M.HardwareDescription | None:
        """The model of a description (built on first request)."""
        if name in self._descriptions:
            return self._descriptions[name]
        syn = self._lookup(name)
        if syn is None:
            return None
        self.diagnostics.setdefault(name, [])
        seen: dict[str, S.BlockStmt] = {}
        for b in syn.blocks:
            if b.name in seen:
                self._report(name, error(
                    "hdl-duplicate-block",
                    f"there are two top-level blocks named '{b.name}' in '{name}'",
                    b.name_span, "rename one of them; references find blocks by name",
                    [Related(seen[b.name].name_span, "the first one is here")]))
            else:
                seen[b.name] = b
        blocks = [self.top_block(name, b.name, b.name_span) for b in syn.blocks
                  if seen.get(b.name) is b]
        blocks = [b for b in blocks if b is not None]
        parallelism = next((b for b in blocks if isinstance(b, B.Parallelism)), None)
        device = next((b for b in blocks if b.kind == "device" and b.name == name), None)
        devices = [b for b in blocks if b.kind == "device"]
        if device is None and len(devices) == 1:
            device = devices[0]   # legacy: named after the product (validate warns)
        hwd = M.HardwareDescription(
            name=name, parent=syn.parent, file=syn.file, span=syn.span,
            parallelism=parallelism, device=device if isinstance(device, B.DeviceBlock) else None,
            blocks=tuple(blocks), parent_span=syn.parent_span, name_span=syn.name_span)
        self._descriptions[name] = hwd
        return hwd

    # ----------------------------------------------------------------- blocks

    def top_block(self, desc: str, name: str, use: Span | None) -> B.Block | None:
        """The built top-level block ``name`` of description ``desc``."""
        key = (desc, name)
        if key in self._built:
            return self._built[key]
        if key in self._building:
            cycle = self._building[self._building.index(key):] + [key]
            text = " -> ".join(f"{d}.{b}" for d, b in cycle)
            self._report(self._building[-1][0], error(
                "hdl-reference-cycle", f"the references form a cycle: {text}",
                use, "a block cannot contain itself; remove one of the references"))
            return None
        syn = self._lookup(desc)
        stmt = next((b for b in syn.blocks if b.name == name), None) if syn else None
        if stmt is None:
            return None
        self._building.append(key)
        try:
            block = self._block(desc, stmt)
        finally:
            self._building.pop()
        self._built[key] = block
        return block

    def _block(self, desc: str, stmt: S.BlockStmt) -> B.Block | None:
        cls = B.BLOCK_CLASSES.get(stmt.keyword)
        if cls is None:
            close = suggest(stmt.keyword, L.BLOCK_KEYWORDS)
            self._report(desc, error(
                "hdl-unknown-keyword", f"unknown block keyword '{stmt.keyword}'",
                stmt.keyword_span,
                f"did you mean '{close}'?" if close else
                "a block starts with one of: " + ", ".join(L.BLOCK_KEYWORDS)))
            return None
        props: list[B.Property] = []
        rejected: list[str] = []
        calls: list[B.Call] = []
        flags: list[B.Flag] = []
        placements: list[B.Placement] = []
        for st in stmt.statements:
            if isinstance(st, S.BlockStmt):
                child = self._block(desc, st)
                if child is not None:
                    placements.append(B.Placement(child, st.span, None))
            elif isinstance(st, S.PropertyStmt):
                p = self._property(desc, st)
                if p is not None:
                    props.append(p)
                elif st.name in L.PROPERTIES:
                    rejected.append(st.name)
            elif isinstance(st, S.ArgStmt):
                c = self._call(desc, st)
                if c is not None:
                    calls.append(c)
                elif st.name in L.CALLS:
                    rejected.append(st.name)
            elif isinstance(st, S.NameStmt):
                parts = st.name.parts
                if len(parts) == 1 and parts[0] in L.FLAGS and not st.name.all_units:
                    flags.append(B.Flag(parts[0], st.span))
                    continue
                target = self.reference(desc, st.name)
                if target is not None:
                    placements.append(B.Placement(target, st.span, parts))
        return cls(kind=stmt.keyword, name=stmt.name, span=stmt.span,
                   keyword_span=stmt.keyword_span, origin=desc, properties=tuple(props),
                   calls=tuple(calls), flags=tuple(flags), placements=tuple(placements),
                   rejected=tuple(rejected))

    def reference(self, desc: str, name: S.Name) -> B.Block | None:
        """Resolve a reference statement written in description ``desc``."""
        parts = name.parts
        syn = self._lookup(desc)
        local = {b.name for b in syn.blocks} if syn else set()
        if name.all_units:
            self._report(desc, error(
                "hdl-bad-reference", f"a reference statement cannot use '[*]': '{name.text}'",
                name.span, "'[*]' is for connects(...); write the block's name alone"))
            return None
        if parts[0] in local:
            start_desc, rest = desc, parts
        elif len(parts) > 1 and self._lookup(parts[0]) is not None:
            start_desc, rest = parts[0], parts[1:]
            other = self._lookup(start_desc)
            if not any(b.name == rest[0] for b in other.blocks):
                close = suggest(rest[0], [b.name for b in other.blocks])
                self._report(desc, error(
                    "hdl-unresolved-reference",
                    f"'{name.text}': description '{start_desc}' has no top-level block "
                    f"'{rest[0]}'", name.span,
                    f"did you mean '{start_desc}.{close}'?" if close else
                    "top-level blocks of " + start_desc + ": "
                    + ", ".join(b.name for b in other.blocks)))
                return None
        elif len(parts) > 1 and (errors := self._broken(parts[0])):
            first = next((d for d in errors if d.span is not None), None)
            self._report(desc, error(
                "hdl-broken-dependency",
                f"'{name.text}' refers to the description '{parts[0]}', which does not parse",
                name.span, f"fix the syntax error in {first.span.file if first else parts[0]} "
                "first; this reference is checked once it parses",
                [Related(first.span, first.message)] if first else []))
            return None
        else:
            if len(parts) == 1 and parts[0] in L.SYMBOLS:
                msg = f"'{parts[0]}' is a value, not a statement"
                hint = "write it as a property value, e.g. 'nr_units = unlimited;'"
            else:
                msg = f"unresolved reference '{name.text}'"
                close = suggest(parts[0], list(local) + list(L.FLAGS))
                hint = (f"did you mean '{close}'?" if close else
                        "a reference names a top-level block of this description "
                        "(on_chip;) or, qualified, of another one (perfect.hierarchy.threads;)")
            self._report(desc, error("hdl-unresolved-reference", msg, name.span, hint))
            return None
        block = self.top_block(start_desc, rest[0], name.span)
        walked = [start_desc, rest[0]] if start_desc != desc else [rest[0]]
        for part in rest[1:]:
            if block is None:
                return None
            child = block.child(part)
            if child is None:
                close = suggest(part, [c.name for c in block.children])
                self._report(desc, error(
                    "hdl-unresolved-reference",
                    f"'{'.'.join(walked)}' has no block named '{part}' (in reference "
                    f"'{name.text}')", name.span,
                    f"did you mean '{close}'?" if close else
                    "its blocks are: " + (", ".join(c.name for c in block.children) or "none")))
                return None
            block = child
            walked.append(part)
        return block

    # ----------------------------------------------------------------- statements

    def _property(self, desc: str, st: S.PropertyStmt) -> B.Property | None:
        spec = L.PROPERTIES.get(st.name)
        if spec is None:
            close = suggest(st.name, L.PROPERTIES)
            self._report(desc, error(
                "hdl-unknown-property", f"unknown property '{st.name}'", st.name_span,
                f"did you mean '{close}'?" if close else
                "properties are: " + ", ".join(L.PROPERTIES)))
            return None
        try:
            value = self._eval(desc, st.value)
        except _Failure:
            return None
        if isinstance(value, bool) or value in ("full", "barrier"):
            ok = spec.boolean if isinstance(value, bool) else value in spec.words
            if not ok or st.unit is not None:
                self._report(desc, error(
                    "hdl-bad-value", f"'{st.name}' cannot be '{str(value).lower()}'",
                    st.value.span, _value_hint(st.name, spec)))
                return None
            return B.Property(st.name, value, NUMBER, st.span)
        if spec.boolean or spec.words:
            self._report(desc, error(
                "hdl-bad-value", f"'{st.name}' must be "
                + (" or ".join(spec.words) if spec.words else "true or false"),
                st.value.span, _value_hint(st.name, spec)))
            return None
        if isinstance(value, Symbolic) and not spec.symbolic:
            self._report(desc, error(
                "hdl-bad-value", f"'{st.name}' must be a number, not '{value}'",
                st.value.span, _value_hint(st.name, spec)))
            return None
        if isinstance(value, Symbolic) and st.unit is None:
            # `capacity = unlimited;` needs no unit: there is no number to scale
            return B.Property(st.name, value, spec.dimensions[0], st.span)
        unit_text = st.unit.text if st.unit is not None else spec.bare_unit
        if unit_text is None:
            self._report(desc, error(
                "hdl-missing-unit", f"'{st.name}' needs a unit", st.span,
                _value_hint(st.name, spec)))
            return None
        unit = parse_unit(unit_text) if unit_text else None
        if unit_text and unit is None:
            span = st.unit.span if st.unit is not None else st.span
            close = suggest(unit_text, ["B", "kB", "MB", "GB", "bit", "cycles", "Hz", "MHz",
                                        "GHz", "GB/s", "bit/s", "s"])
            self._report(desc, error(
                "hdl-unknown-unit", f"unknown unit '{unit_text}'", span,
                (f"did you mean '{close}'? " if close else "")
                + "units are a prefix k, M, G or T and B, bit, cycle(s), s or Hz, "
                  "optionally per another (GB/s)"))
            return None
        dim = dimension_of(unit)
        if dim not in spec.dimensions:
            self._report(desc, error(
                "hdl-wrong-unit",
                f"'{st.name}' is not measured in {unit_text or 'plain numbers'}",
                st.unit.span if st.unit is not None else st.span, _value_hint(st.name, spec)))
            return None
        if isinstance(value, Symbolic):
            return B.Property(st.name, value, dim, st.span)
        written = f"{value} {unit_text}" if st.unit is not None else f"{value}"
        if value < 0 or (value == 0 and st.name not in _MAY_BE_ZERO):
            if st.name in _MAY_BE_ZERO:
                message, hint = f"'{st.name}' cannot be negative: {written}", "write 0 or more"
            else:
                message = f"'{st.name}' must be greater than 0, not {written}"
                hint = "write a number greater than 0" + (
                    ", 'unlimited' or 'countable'" if spec.symbolic else "")
            self._report(desc, error("hdl-bad-value", message, st.value.span,
                                     f"{hint}; {_value_hint(st.name, spec)}"))
            return None
        if st.name in _WHOLE and not float(value).is_integer():
            self._report(desc, error(
                "hdl-bad-value", f"'{st.name}' must be a whole number, not {value}",
                st.value.span, "write a positive integer"
                + (", 'unlimited' or 'countable'" if spec.symbolic else "")))
            return None
        result = normalise(value, unit)
        if st.name in _WHOLE:
            result = int(result)
        if st.name == "cache_line_size" and (result & (result - 1) or result > _LARGEST_LINE):
            self._report(desc, error(
                "hdl-bad-value", f"a cache line is a power of two bytes up to "
                f"{_LARGEST_LINE // 1024} kB, not {written}", st.value.span,
                "write for example 'cache_line_size = 128 B;'"))
            return None
        if st.name in ("nr_units", "max_nr_units") and result > _MOST_UNITS:
            # units are counted by foreach loops, whose counts are MCPL ints
            self._report(desc, error(
                "hdl-bad-value", f"'{st.name}' cannot be more than {_MOST_UNITS} (the "
                f"largest count of a foreach, an int), not {written}", st.value.span,
                "write a smaller number, or 'unlimited' where there is no limit"))
            return None
        return B.Property(st.name, result, dim, st.span)

    def _call(self, desc: str, st: S.ArgStmt) -> B.Call | None:
        if st.name not in L.CALLS:
            close = suggest(st.name, L.CALLS)
            self._report(desc, error(
                "hdl-unknown-statement", f"unknown statement '{st.name}(...)'", st.name_span,
                f"did you mean '{close}'?" if close else
                "argument statements are: " + ", ".join(L.CALLS)))
            return None
        args = st.args

        def bad(expected: str) -> None:
            self._report(desc, error(
                "hdl-bad-arguments", f"'{st.name}' takes {expected}", st.span,
                f"write it as {_CALL_FORMS[st.name]}"))

        try:
            if st.name == "slots":
                if len(args) != 2 or not isinstance(args[0], S.Name) or len(args[0].parts) != 1:
                    return bad("a par_unit name and a number")
                count = self._eval(desc, args[1])
                if is_number(count) and count <= 0:
                    self._report(desc, error(
                        "hdl-bad-value", f"a number of slots must be greater than 0, not "
                        f"{count}", args[1].span,
                        "write 1 or more: how many of the par_unit it holds at once"))
                    return None
                if not (isinstance(count, Symbolic) or
                        (is_number(count) and float(count).is_integer())):
                    return bad("a whole number of slots")
                count = count if isinstance(count, Symbolic) else int(count)
                return B.SlotsCall("slots", st.span, args[0].parts[0], count, args[0].span)
            if st.name == "connects":
                if len(args) < 2 or not all(isinstance(a, S.Name) for a in args):
                    return bad("two (or more) device names")
                return B.ConnectsCall("connects", st.span, tuple(
                    B.Endpoint(a.parts, a.all_units, a.span) for a in args))
            if st.name == "space":
                if len(args) != 1 or not isinstance(args[0], S.Name) or len(args[0].parts) != 1:
                    return bad("the name of one memory space")
                return B.SpaceCall("space", st.span, args[0].parts[0], args[0].span)
            if st.name == "op":
                if len(args) != 2 or not isinstance(args[0], S.OperationSym | S.Str):
                    return bad("an operation and a number of cycles")
                cycles = self._eval(desc, args[1])
                if not (is_number(cycles) or isinstance(cycles, Symbolic)) or \
                        isinstance(cycles, bool):
                    return bad("a number of cycles")
                if is_number(cycles) and cycles <= 0:
                    self._report(desc, error(
                        "hdl-bad-value", f"an operation cannot take {cycles} cycles",
                        args[1].span, "write a number of cycles greater than 0"))
                    return None
                op = args[0].symbol if isinstance(args[0], S.OperationSym) else args[0].value
                if isinstance(args[0], S.Str) and op not in _OPERATION_NAMES:
                    close = suggest(op, sorted(_OPERATION_NAMES))
                    self._report(desc, warning(
                        "hdl-unknown-operation", f"no MCPL operation is called '{op}': no "
                        "kernel's operation is counted with this cost", args[0].span,
                        f"did you mean '{close}'?" if close else "name a built-in function "
                        "(sqrt, exp, fma, ...), load or store"))
                return B.OpCall("op", st.span, op, cycles)
            if len(args) != 1 or not isinstance(args[0], S.Str):
                return bad("the name of a feedback function as a string")
            name = args[0].value
            if name not in L.FEEDBACK_FUNCTIONS and \
                    name not in (known := feedback_function_names()):
                close = suggest(name, known)
                self._report(desc, error(
                    "hdl-unknown-feedback", f"no feedback function is called '{name}'",
                    args[0].span, (f"did you mean '{close}'? " if close else "") +
                    "known: " + ", ".join(known) + " (plug-ins add names in the entry point "
                    f"group '{L.FEEDBACK_ENTRY_POINTS}')"))
                return None
            return B.FeedbackCall("performance_feedback", st.span, name)
        except _Failure:
            return None

    def _eval(self, desc: str, e: S.Expr):
        """Evaluate a value expression: numbers, + - * / and the symbolic words."""
        try:
            value = self._eval_unchecked(desc, e)
        except OverflowError:
            value = math.inf
        if is_number(value) and not isinstance(value, bool) and not abs(value) <= _LARGEST:
            # Analyses multiply figures as floats: beyond this they would overflow.
            self._report(desc, error(
                "hdl-bad-value", "this number is too large: no hardware has that many of "
                "anything", e.span,
                "write a number up to 1e30 (units scale it: 4 TB), or 'unlimited' where "
                "there is no limit"))
            raise _Failure
        return value

    def _eval_unchecked(self, desc: str, e: S.Expr):
        if isinstance(e, S.Num):
            return e.value
        if isinstance(e, S.Name):
            if len(e.parts) == 1 and not e.all_units:
                word = e.parts[0]
                if word == "unlimited":
                    return UNLIMITED
                if word == "countable":
                    return COUNTABLE
                if word in ("true", "false"):
                    return word == "true"
                if word in ("full", "barrier"):
                    return word
            self._report(desc, error(
                "hdl-bad-value", f"'{e.text}' is not a value", e.span,
                "write a number, unlimited, countable, true, false, full or barrier"))
            raise _Failure
        if isinstance(e, S.Neg):
            v = self._eval_unchecked(desc, e.operand)
            if not is_number(v):
                self._report(desc, error("hdl-bad-value", "only a number can be negated",
                                         e.span, "remove the '-'"))
                raise _Failure
            return -v
        if isinstance(e, S.BinOp):
            a, b = self._eval_unchecked(desc, e.left), self._eval_unchecked(desc, e.right)
            if isinstance(a, Symbolic) or isinstance(b, Symbolic):
                if is_number(a) or is_number(b) or (isinstance(a, Symbolic)
                                                     and isinstance(b, Symbolic)):
                    return UNLIMITED if UNLIMITED in (a, b) else COUNTABLE
            if not (is_number(a) and is_number(b)):
                self._report(desc, error(
                    "hdl-bad-value", f"'{e.op}' needs numbers on both sides", e.span,
                    "arithmetic is on numbers only"))
                raise _Failure
            if e.op == "+":
                return a + b
            if e.op == "-":
                return a - b
            if e.op == "*":
                return a * b
            if b == 0:
                self._report(desc, error("hdl-bad-value", "division by zero", e.span,
                                         "divide by a number other than 0"))
                raise _Failure
            return a // b if isinstance(a, int) and isinstance(b, int) and a % b == 0 else a / b
        what = "an operation" if isinstance(e, S.OperationSym) else "a string"
        self._report(desc, error(
            "hdl-bad-value", f"{what} is not a value here", e.span,
            "operations and strings appear only in op(...) and performance_feedback(...)"))
        raise _Failure


_CALL_FORMS = {
    "slots": "slots(par_unit, number);",
    "connects": "connects(a, b); with device names, b.unit[*] for all units of a group",
    "space": "space(memory_space);",
    "op": 'op((+), cycles); or op("name", cycles);',
    "performance_feedback": 'performance_feedback("function");',
}


#: the largest cache line believed: caches have lines of 32 to 256 bytes
_LARGEST_LINE = 4096


def _operation_names() -> frozenset[str]:
    from mcl.mcpl.check_common import BUILTINS
    return frozenset(BUILTINS) | {"load", "store"}


_OPERATION_NAMES = _operation_names()

#: the most units a group may have: a foreach count is a 32-bit int
_MOST_UNITS = 2**31 - 1


def _value_hint(name: str, spec: L.PropertySpec) -> str:
    examples = {
        "capacity": "capacity = 48 kB;", "latency": "latency = 400 cycles;",
        "bandwidth": "bandwidth = 177 GB/s;", "clock_frequency": "clock_frequency = 1.4 GHz;",
        "cache_line_size": "cache_line_size = 128 B;", "width": "width = 384 bit;",
        "addressable": "addressable = false;", "consistency": "consistency = barrier;",
        "nr_units": "nr_units = 16;", "max_nr_units": "max_nr_units = 1024;",
        "nr_banks": "nr_banks = 32;",
    }
    return f"for example: {examples.get(name, name + ' = 1;')}"


def build_all(syntaxes: Mapping[str, S.DescriptionSyntax]) -> tuple[
        dict[str, M.HardwareDescription], dict[str, list[Diagnostic]]]:
    """Build every description of a mapping name -> syntax."""
    r = Resolver(syntaxes.get)
    models = {}
    for name in syntaxes:
        hwd = r.description(name)
        if hwd is not None:
            models[name] = hwd
    return models, r.diagnostics

