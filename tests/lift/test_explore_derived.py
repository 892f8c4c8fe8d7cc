"""Exploration of programs derived from MCPL kernels: random walks must end in
lowered programs (gesummv's derived program, two nested maps, two reductions and
their zips, gave no candidate at all: every walk reached a dead end), and
candidates whose generated source is enormous are not handed to the compiler."""

from __future__ import annotations

from pathlib import Path

from mcl.lift.explore import Evaluator, Results, Search, is_lowered
from mcl.lift.from_mcpl import derive
from mcl.lift.ir import bind_sizes
from mcl.lift.parser import parse
from mcl.lift.rules import Limits, rewrites

ROOT = Path(__file__).resolve().parents[2]
FUNS = "userfun absval(x: float): float = fabs(x)\n"


def test_inner_map_not_lowered_to_global_or_workgroup_inside_a_map():
    # lowering the inner map first to mapGlb/mapWrg leaves an outer map no rule can lower
    p = parse(FUNS + "s = fun(x: float[8][8]) => map(map(absval)) $ x")
    for rule in ("map-to-mapGlb", "map-to-mapWrg"):
        paths = [rw.path for rw in rewrites(p) if rw.rule == rule]
        assert len(paths) == 1, (rule, paths)
        assert all(is_lowered(r.result) is False for r in rewrites(p) if r.rule == rule)
    # inside a mapWrg, a map between it and a mapLcl would be a dead end too
    q = parse(FUNS + "s = fun(x: float[8][8][8]) => mapWrg(map(map(absval))) $ x")
    lcl = [rw.path for rw in rewrites(q) if rw.rule == "map-to-mapLcl"]
    assert len(lcl) == 1


def test_no_reduce_left_inside_a_workgroup_outside_its_maps():
    p = parse("userfun add(x: float, y: float): float = x + y\n"
              "s = fun(x: float[8][16]) => map(fun(r) => reduce(add, 0.0f) $ r) $ x")
    assert not [rw for rw in rewrites(p) if rw.rule == "map-to-mapWrg"]
    assert [rw for rw in rewrites(p) if rw.rule == "map-to-mapGlb"]


def test_random_walks_lower_the_derived_gesummv_program():
    d = derive(ROOT / "examples" / "gesummv" / "perfect.mcpl", constants={"n": 64})
    prog = bind_sizes(d.program, {"n": 64})
    s = Search(prog, None, Results(None), 8, Limits(warp_size=1), seed=0, progress=False)
    lowered = [w for w in (s.walk(prog) for _ in range(8)) if w is not None]
    assert len(lowered) >= 4, f"only {len(lowered)} of 8 walks ended lowered"
    assert all(is_lowered(w) for w in lowered)


def test_too_long_sources_are_not_compiled(rt):
    p = bind_sizes(parse(FUNS + "s = fun(x: float[N]) => mapGlb(absval) $ x"), {"N": 64})
    ev = Evaluator(p, {"N": 64}, max_source=10)
    e = ev(p, 64)
    assert e.status == "codegen-error" and "too long" in e.message
    assert Evaluator(p, {"N": 64})(p, 64).status == "ok"
