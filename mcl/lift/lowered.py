"""Which Lift expressions the OpenCL generator (:mod:`mcl.lift.codegen`) accepts: only
hardware patterns (``check_lowered``; a ``map`` only where its function merely
rearranges data, ``is_layout_fun``) and parallel maps nested as OpenCL's hierarchy
of work-groups and work-items (``check_nesting``)."""

from __future__ import annotations

from mcl.diagnostics import McplError, error
from mcl.lift.ir import ALL_MAPS, LAYOUT, PATTERNS, Fun, Node, Prim, UserFun, walk


class NotLowered(McplError):
    """The expression still contains patterns the generator does not know."""


def not_lowered(node: Node, message: str, hint: str | None = None) -> NotLowered:
    return NotLowered(error("lift-not-lowered", message, getattr(node, "span", None), hint))


def is_layout_fun(f: Fun) -> bool:
    """A function that only rearranges data (it can be a view)."""
    for _, n in walk(f):
        if isinstance(n, UserFun):
            return False
        if isinstance(n, Prim) and n.name not in LAYOUT + ("id", "map"):
            return False
    return True


def check_lowered(e: Node) -> None:
    """Raise NotLowered naming the first pattern the generator cannot handle."""
    for _, n in walk(e):
        if isinstance(n, Prim):
            spec = PATTERNS[n.name]
            if spec.lowered:
                continue
            if n.name == "map" and is_layout_fun(n.args[0]):
                continue
            hint = {"map": "lower it with a map rule (mapGlb, mapWrg, mapLcl, mapSeq, ...)",
                    "reduce": "lower it to reduceSeq (inside a mapLcl/mapGlb), split it "
                              "into partial reductions first (an associative function), "
                              "or fold it on one work-item (reduce-sequential)",
                    "partRed": "rewrite it with the reduction rules (split, iterate, reduce)",
                    "reorder": "lower it to reorderStride or id"}.get(n.name)
            raise not_lowered(n, f"'{n.name}' is not fully lowered: the code generator only "
                                 f"knows hardware patterns", hint)


def check_nesting(e: Node) -> None:
    """The lowering post-conditions of seed 001 (figure 'Map'), checked again here."""
    def go(n: Node, ctx: tuple[str, ...]):
        if isinstance(n, Prim) and n.name in ALL_MAPS:
            k = n.name
            bad = None
            same = f"{k}{n.dim}" in ctx
            if k == "mapWrg" and (same or "mapGlb" in ctx):
                bad = "mapWrg inside another mapWrg or a mapGlb"
            elif k == "mapGlb" and (same or any(c in ctx for c in ("mapWrg", "mapLcl"))):
                bad = "mapGlb inside another parallel map"
            elif k == "mapLcl" and ("mapWrg" not in ctx or same or any(
                    c in ctx for c in ("mapWarp", "mapLane", "mapSeq"))):
                bad = "mapLcl outside a mapWrg (or inside mapWarp/mapLane/mapSeq)"
            elif k == "mapWarp" and ("mapWrg" not in ctx or "mapLcl" in ctx or "mapWarp" in ctx):
                bad = "mapWarp outside a mapWrg or inside a mapLcl"
            elif k == "mapLane" and "mapWarp" not in ctx:
                bad = "mapLane outside a mapWarp"
            if bad:
                raise not_lowered(n, f"invalid nesting of parallel maps: {bad}",
                                  hint="maps follow the OpenCL hierarchy: mapGlb, or mapWrg "
                                       "containing mapLcl or mapWarp(mapLane)")
            ctx = ctx + (k, f"{k}{n.dim}")
        for c in _kids(n):
            go(c, ctx)
    go(e, ())


def _kids(n: Node) -> list[Node]:
    from mcl.lift.ir import children
    return children(n)
