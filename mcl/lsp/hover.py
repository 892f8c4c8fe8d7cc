"""Hover texts (Markdown): for a variable its type, memory space and the memory that
holds the space with capacity and latency; for a foreach its par_group and the
group's limits; for a description reference its value; and short summaries of
functions, descriptions, memory spaces and blocks."""

from __future__ import annotations

from typing import Any

from mcl.diagnostics import Span
from mcl.lsp.analysis import Analysis
from mcl.lsp.navigation import Target, target_at
from mcl.mcpl import ast

_KIND = {"param": "parameter", "local": "local variable", "index": "foreach index",
         "view": "view", "loop": "loop variable"}


def hover(analysis: Analysis, line: int, column: int) -> tuple[str, Span] | None:
    """Markdown for the word at a position and the span it describes."""
    t = target_at(analysis, line, column)
    if t is None:
        return None
    text = render(t)
    if not text:
        return None
    return text, t.span or Span(analysis.file, line, column, line, column + 1)


def render(t: Target) -> str:
    render_fn = {
        "symbol": _symbol, "function": _function, "builtin": _builtin, "type": _type,
        "module": _module, "hardware": _hardware, "par_group": _par_group,
        "memory_space": _memory_space, "property": _property, "block": _block,
    }.get(t.kind)
    return render_fn(t) if render_fn else ""


def _code(text: str) -> str:
    return f"```mcpl\n{text}\n```"


def _count(c: Any) -> str:
    return str(c).lower() if not isinstance(c, int | float) else f"{c:g}" \
        if isinstance(c, float) else str(c)


def _quantity(value: Any, dimension: str) -> str:
    from mcl.hdl.units import format_quantity

    return format_quantity(value, dimension)


# --------------------------------------------------------------------------- MCPL things


def _symbol(t: Target) -> str:
    from mcl.mcpl import print_type

    sym = t.value
    words = []
    if sym.const:
        words.append("const")
    if sym.explicit_space:
        words.append(sym.explicit_space)
    words += [print_type(sym.type), sym.name]
    lines = [_code(" ".join(words)),
             f"{_KIND.get(sym.kind, sym.kind)} of `{sym.function}`" if sym.function
             else _KIND.get(sym.kind, sym.kind)]
    if sym.type.is_array:
        elem = ast.PRIMITIVE_TYPES.get(sym.type.name)
        if elem:
            from mcl.mcpl import print_expr

            sizes = " × ".join(print_expr(e) for e in sym.type.sizes)
            lines.append(f"{sizes} elements of {elem} B")
    hw = t.hardware
    if sym.space is None:
        lines.append("no memory space (a value that is only read)")
    else:
        how = "" if sym.explicit_space else " (the default of the level)"
        lines.append(f"memory space **{sym.space}**{how}")
        if hw is not None and hw.has_memory_space(sym.space):
            lines += _space_details(hw, sym.space)
    return "\n\n".join(lines)


def _space_details(hw: Any, space: str) -> list[str]:
    """Who shares the space, and which memories of the device hold it."""
    from mcl.hdl import ParGroup

    out = []
    owner = hw.owner_of(space)
    if owner is None:
        out.append(f"shared by the whole `{hw.name}` device")
    elif isinstance(owner, ParGroup):
        out.append(f"shared by the units of par_group `{owner.name}`")
    else:
        out.append(f"private to each `{owner.name}`")
    memories = hw.memories_holding(space)
    if not memories:
        out.append(f"no memory of `{hw.name}` holds it")
    speed = hw.memory_speed(space) if memories else None
    for m in memories:
        facts = [f"capacity {_quantity(m.capacity, 'B')}" if m.capacity is not None else None]
        latency = m.latency
        if latency is None and speed is not None and speed.memory is m:
            latency = speed.latency
        if latency is not None:
            facts.append(f"latency {_quantity(latency, 'cycles')}")
        bandwidth = m.bandwidth
        if bandwidth is None and speed is not None and speed.memory is m:
            bandwidth = speed.bandwidth
        if bandwidth is not None and bandwidth != float("inf"):
            facts.append(f"bandwidth {_quantity(bandwidth, 'B/s')}")
        if m.nr_banks:
            facts.append(f"{m.nr_banks} banks")
        kind = "cache" if m.kind == "cache" else "memory"
        detail = ", ".join(f for f in facts if f)
        out.append(f"held by {kind} `{m.name}` of `{m.origin}`" + (f": {detail}" if detail
                                                                 else ""))
    return out


def _function(t: Target) -> str:
    from mcl.mcpl.printer import print_param, print_type

    info = t.value
    f = info.function if hasattr(info, "function") else info
    head = f"{f.hardware} {print_type(f.return_type)} {f.name}(" + \
        ", ".join(print_param(p) for p in f.params) + ")"
    lines = [_code(head)]
    hw = t.hardware
    if hw is not None:
        lines.append(f"written for `{hw.name}`" +
                     (f" (a child of `{hw.parent}`)" if hw.parent else ""))
    if hasattr(info, "writes") and info.writes:
        lines.append("writes " + ", ".join(f"`{w}`" for w in sorted(info.writes)))
    return "\n\n".join(lines)


def _builtin(t: Target) -> str:
    from mcl.mcpl.checks import BUILTINS

    b = BUILTINS.get(t.name)
    if b is None:
        return ""
    args = ", ".join("x" if b.arity == 1 else f"x{i + 1}" for i in range(b.arity))
    return f"{_code(f'{t.name}({args})')}\n\nbuilt-in function"


def _type(t: Target) -> str:
    from mcl.mcpl.printer import print_typedef

    return _code(print_typedef(t.value)) + "\n\nrecord type"


def _module(t: Target) -> str:
    return f"module `{t.name}`" + (f"\n\n{t.value}" if t.value else "")


# --------------------------------------------------------------------------- hardware


def _hardware(t: Target) -> str:
    hw = t.value
    if hw is None:
        return f"hardware description `{t.name}` (it has errors)"
    lines = [f"hardware description **{hw.name}**"]
    if hw.parent:
        lines.append(f"specializes `{hw.parent}`")
    groups = " → ".join(f"`{g.name}` ({_count(g.size)})" for g in hw.par_groups())
    if groups:
        lines.append(f"par_groups: {groups}")
    spaces = ", ".join(f"`{s.name}`" + (" (default)" if s.is_default else "")
                       for s in hw.memory_spaces())
    if spaces:
        lines.append(f"memory spaces: {spaces}")
    lines.append(f"defined in {hw.file}")
    return "\n\n".join(lines)


def _par_group(t: Target) -> str:
    g, hw = t.value, t.hardware
    lines = [f"par_group **{g.name}** of `{hw.name}`"]
    if g.nr_units is not None:
        lines.append(f"exactly {_count(g.nr_units)} units")
    elif g.max_nr_units is not None:
        lines.append(f"at most {_count(g.max_nr_units)} units (max_nr_units)")
    unit = g.unit
    if unit is not None:
        lines.append(f"each unit is a `{unit.name}`")
        resident = hw.max_resident(unit.name)
        if resident is not None:
            lines.append(f"at most {_count(resident)} `{unit.name}` resident on the device "
                         "at once")
    spaces = [s.name for s in g.memory_spaces] + ([s.name for s in unit.memory_spaces]
                                                  if unit is not None else [])
    if spaces:
        lines.append("memory spaces: " + ", ".join(f"`{s}`" for s in spaces))
    lockstep = hw.lockstep_par_groups()
    if any(x is g for x in lockstep):
        lines.append("its units run in lock-step")
    return "\n\n".join(lines)


def _memory_space(t: Target) -> str:
    ms, hw = t.value, t.hardware
    flags = [w for w, on in (("default", ms.is_default), ("read-only", ms.read_only)) if on]
    lines = [f"memory space **{ms.name}** of `{hw.name}`" +
             (f" ({', '.join(flags)})" if flags else "")]
    lines += _space_details(hw, ms.name)
    return "\n\n".join(lines)


def _property(t: Target) -> str:
    prop = t.value
    value = _quantity(prop.value, prop.dimension)
    return f"{_code(f'{t.name} = {value}')}\n\nproperty of `{t.hardware.name}`"


def _block(t: Target) -> str:
    b = t.value
    lines = [f"{b.kind} **{b.name}** (defined in `{b.origin}`)"]
    for p in b.properties:
        lines.append(f"{p.name} = {_quantity(p.value, p.dimension)}")
    for f in b.flags:
        lines.append(f.name)
    if b.kind == "memory_space" and t.hardware is not None:
        lines += _space_details(t.hardware, b.name)
    kids = ", ".join(f"`{c.name}`" for c in b.children)
    if kids:
        lines.append(f"contains {kids}")
    return "\n\n".join(lines)
