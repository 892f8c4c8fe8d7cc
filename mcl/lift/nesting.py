"""What may be nested in what: the post-condition of every rewrite (a parallel map
inside another may only be one the code generator can give work-items: mapLcl inside
mapWrg, mapLane inside mapWarp, a mapGlb of another dimension with only layout
patterns between, :func:`nesting_problem`), and which functions and expressions are
layout only (views of their inputs, computing nothing), which those rules and the
lowering rules of mcl.lift.rules ask."""

from __future__ import annotations

from mcl.lift.ir import LAYOUT, PARALLEL_MAPS, Call, Compose, Expr, Fun, Node, Param, Prim, children


def is_layout_map(p: Prim) -> bool:
    """A map whose function only rearranges (a view)."""
    return layout_fun(p.args[0])


def layout_fun(f: Fun) -> bool:
    from mcl.lift.lowered import is_layout_fun
    return is_layout_fun(f)


def layout_expr(e: Expr) -> bool:
    """A view of parameters: only layout patterns applied to parameters."""
    if isinstance(e, Param):
        return True
    return isinstance(e, Call) and layout_fun(e.fun) and all(layout_expr(a) for a in e.args)


def nesting_problem(e: Node, partial: bool = True) -> str | None:
    """Why the parallel maps of ``e`` cannot be nested the way they are (None: they
    can). The lowering rules check what encloses the map they lower; this checks
    the other direction too (a map lowered to mapWrg around one already lowered to
    mapWrg or mapGlb), so that no rewrite produces an expression the code generator
    must reject. With ``partial``, a map not yet lowered may still become the
    mapWrg/mapWarp that a mapLcl/mapLane needs."""
    def go(n: Node, ctx: tuple[str, ...]) -> str | None:
        if isinstance(n, Prim) and (n.name in PARALLEL_MAPS or n.name == "mapSeq"):
            k = n.name
            pending = partial and "map" in ctx
            same = f"{k}{n.dim}" in ctx
            if k == "mapWrg" and (same or "mapGlb" in ctx or ctx_has(ctx, "mapLcl", "mapWarp",
                                                                        "mapLane", "mapSeq")):
                return "mapWrg inside another mapWrg, a mapGlb or a sequential map"
            if k == "mapGlb" and (same or ctx_has(ctx, "mapWrg", "mapLcl", "mapWarp", "mapLane",
                                                  "mapSeq")):
                return "mapGlb inside another parallel or sequential map"
            if k == "mapGlb" and "mapGlb" in ctx and _COMPUTE in ctx[_last(ctx, "mapGlb"):]:
                return ("mapGlb inside a mapGlb of another dimension with computation between "
                        "them (only layout patterns may lie between the two)")
            if k == "mapLcl" and (("mapWrg" not in ctx and not pending) or same or ctx_has(
                    ctx, "mapWarp", "mapLane", "mapSeq", "mapGlb")):
                return "mapLcl outside a mapWrg (or inside mapWarp/mapLane/mapSeq)"
            if k == "mapWarp" and (("mapWrg" not in ctx and not pending) or ctx_has(
                    ctx, "mapLcl", "mapWarp", "mapLane", "mapSeq", "mapGlb")):
                return "mapWarp outside a mapWrg or inside a mapLcl"
            if k == "mapLane" and (("mapWarp" not in ctx and not pending) or "mapLane" in ctx):
                return "mapLane outside a mapWarp"
            ctx = ctx + (k, f"{k}{n.dim}")
        elif isinstance(n, Prim) and n.name == "map" and not is_layout_map(n):
            ctx = ctx + ("map",)
        elif partial and isinstance(n, Prim) and n.name == "reduce" and \
                ctx_has(ctx, "mapWrg", "mapWarp") and not ctx_has(ctx, "map", "mapLcl", "mapLane",
                                                                  "mapSeq"):
            # reduce-to-reduceSeq needs a mapLcl/mapLane/mapSeq around it and no rule
            # puts one there: a dead end for the search
            return "reduce inside a mapWrg/mapWarp outside every map that could run it"
        kids = children(n)
        inside_glb = "mapGlb" in ctx and _COMPUTE not in ctx[_last(ctx, "mapGlb"):]
        for i, c in enumerate(kids):
            msg = go(c, ctx + (_COMPUTE,) if inside_glb and _computes_around(n, i) else ctx)
            if msg:
                return msg
        return None
    return go(e, ())


#: marks, in nesting_problem's context, that something inside the innermost mapGlb
#: computes with (or for) the node below: a mapGlb of another dimension there would have
#: every work-item of that dimension redo the computation, or read what the others write
_COMPUTE = "<compute>"


def _last(ctx: tuple[str, ...], name: str) -> int:
    return len(ctx) - 1 - ctx[::-1].index(name)


def _computes_around(n: Node, i: int) -> bool:
    """Child ``i`` of ``n`` is combined with computation: an argument of a function that
    is not a view, a function of a computed argument, a part of a composition with
    other computing parts, the function of a pattern that is not a map or layout."""
    if isinstance(n, Call):
        if i == 0:
            return not all(layout_expr(a) for a in n.args)
        return not layout_fun(n.fun)
    if isinstance(n, Compose):
        return not all(layout_fun(g) for j, g in enumerate(n.funs) if j != i)
    if isinstance(n, Prim):
        return n.name not in LAYOUT + ("id", "map", "mapGlb", "toGlobal")
    return False


def ctx_has(ctx: tuple[str, ...], *names: str) -> bool:
    return any(c in ctx for c in names)
