import json

import numpy as np
import pytest
from conftest import EXAMPLES, PROGRAMS, program

from mcl.diagnostics import McplError
from mcl.lift import macros  # noqa: F401
from mcl.lift.codegen import Options, generate
from mcl.lift.explore import Evaluation, explore
from mcl.lift.interp import random_inputs, run
from mcl.lift.ir import bind_sizes
from mcl.lift.parser import parse
from mcl.lift.printer import key, show
from mcl.lift.rules import Limits, apply_rule

REDUCE6 = """
userfun add(x: float, y: float): float = x + y
sum = fun(x: float[N]) =>
  join o mapWrg(
    join o toGlobal(mapLcl(mapSeq(id))) o split(1) o
    join o mapWarp(
       join o mapLane(reduceSeq(add, 0.0f)) o split(2) o reorderStride(1) o
       join o mapLane(reduceSeq(add, 0.0f)) o split(2) o reorderStride(2) o
       join o mapLane(reduceSeq(add, 0.0f)) o split(2) o reorderStride(4) o
       join o mapLane(reduceSeq(add, 0.0f)) o split(2) o reorderStride(8) o
       join o mapLane(reduceSeq(add, 0.0f)) o split(2) o reorderStride(16) o
       join o mapLane(reduceSeq(add, 0.0f)) o split(2) o reorderStride(32)
    ) o split(64) o
    join o toLocal(mapLcl(reduceSeq(add, 0.0f))) o split(2) o reorderStride(64) o
    join o toLocal(mapLcl(reduceSeq(add, 0.0f))) o split(N/128/128) o reorderStride(128)
  ) o split(N/128) $ x
"""


def test_walkthrough_kernel_has_the_structure_of_reduce6():
    g = generate(parse(REDUCE6), {"N": 1 << 20})
    src = g.source
    k = g.kernels[0]
    assert k.local_size == (128,) and k.global_size == (128 * 128,)
    # each work-item reads a strided (coalesced) chunk into a private accumulator
    import re
    assert re.search(r"acc_\d+ = add\(acc_\d+, x\[[^]]*128\*i_\d+[^]]*\]\)", src)
    assert "for (int i_" in src
    # a barrier after the work-group steps, none between the warp's lane steps
    warp = src[src.index("get_local_id(0) / 32"):src.index("out[")]
    lanes = warp[:warp.rindex("barrier")] if "barrier" in warp else warp
    assert lanes.count("% 32") >= 6 and "barrier" not in lanes
    assert "local volatile float" in src and src.count("barrier(CLK_LOCAL_MEM_FENCE)") >= 2
    assert g.plan()["buffers"]["out"]["count"] == 128


def test_views_cost_no_copies():
    src = ("userfun twice(x: float): float = x * 2.0f\n"
           "s = fun(x: float[64]) => join o mapGlb(mapSeq(twice)) o split(4) o "
           "reorderStride(16) $ x")
    g = generate(parse(src), {})
    body = g.source.split("kernel_0")[1]
    assert body.count("twice(") == 4 and "x[g_1 + 16]" in body
    assert len(g.buffers) == 2


def test_vectorised_loads_use_vector_types():
    p = bind_sizes(program("sum"), {"N": 1 << 14})
    lowered = apply_rule(p, "reduce-to-workgroup-tree", None, 0, Limits(vector_widths=(4,)))
    # find a choice with 4-wide vectors
    from mcl.lift.rules import rewrites
    vec = [r for r in rewrites(p, limits=Limits(vector_widths=(4,)))
           if r.rule == "reduce-to-workgroup-tree" and "asVector(4)" in show(r.result.body)]
    assert vec
    src = generate(vec[0].result, {}).source
    assert "float4" in src and "add_v4" in src
    assert lowered is not None


def test_not_lowered_program_is_a_clear_error():
    with pytest.raises(McplError) as e:
        generate(program("sum"), {"N": 64})
    d = e.value.diagnostics[0]
    assert d.code == "lift-not-lowered" and "reduce" in d.message and d.span and d.hint


def test_missing_size_is_a_clear_error():
    with pytest.raises(McplError) as e:
        generate(parse("userfun f(x: float): float = x\n"
                       "s = fun(x: float[N]) => mapGlb(f) $ x"), {})
    assert e.value.diagnostics[0].code == "lift-size"


def test_sizes_beyond_32_bit_indices_are_a_clear_error():
    # the generated kernels index with 32-bit integers: 2^31 elements are one too many
    text = ("userfun f(x: float): float = x\n"
            "s = fun(x: float[N]) => mapGlb(f) $ x")
    assert generate(parse(text), {"N": 2 ** 31 - 1}).buffers["out"].count == 2 ** 31 - 1
    with pytest.raises(McplError) as e:
        generate(parse(text), {"N": 2 ** 31})
    d = e.value.diagnostics[0]
    assert d.code == "lift-size" and "holds 2,147,483,648 elements" in d.message


def test_invalid_nesting_is_rejected():
    with pytest.raises(McplError) as e:
        generate(parse("userfun f(x: float): float = x\n"
                       "s = fun(x: float[64]) => join o mapGlb(mapLcl(f)) o split(8) $ x"), {})
    assert "mapLcl" in e.value.diagnostics[0].message


@pytest.mark.parametrize("name, sizes, rule", [
    ("sum", {"N": 1 << 12}, "reduce-to-workgroup-tree"),
    ("mm", {"M": 16, "N": 16, "K": 8}, "mm-register-blocking"),
])
def test_generated_kernels_run_and_match_the_interpreter(rt, name, sizes, rule):
    from mcl.lift.execute import run_generated
    p = bind_sizes(program(name), sizes)
    low = apply_rule(p, rule)
    xs = random_inputs(p, sizes)
    got = run_generated(generate(low, sizes, Options(local_size=4)), rt, xs)
    np.testing.assert_allclose(got, run(p, *xs), rtol=1e-4, atol=1e-4)


def _fake(sizes):
    """Stands in for the device: generation only, 'time' = size of the kernel."""
    calls = []

    def ev(prog, ls):
        calls.append(key(prog.body))
        try:
            g = generate(prog, sizes, Options(local_size=ls))
        except McplError as e:
            return Evaluation(key(prog.body), show(prog.body.body), "codegen-error",
                              message=e.diagnostics[0].message)
        return Evaluation(key(prog.body), show(prog.body.body), "ok", len(g.source) * 1e-9, ls,
                          source=g.source)
    ev.calls = calls
    return ev


@pytest.mark.parametrize("strategy", ["mcts", "random", "exhaustive"])
def test_exploration_strategies_find_lowered_candidates(strategy, tmp_path):
    sizes = {"N": 1 << 12}
    res = explore(program("sum"), sizes, strategy, budget=6, evaluator=_fake(sizes),
                  results_path=tmp_path / "r.json", progress=False, depth=1, limits=Limits())
    best = res.best()
    assert best and "mapWrg" in best["expression"]
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["best"]["key"] == best["key"] and data["curve"]


def test_progress_ends_its_line_when_the_search_ends_before_the_budget(tmp_path):
    import io
    sizes = {"N": 1 << 12}
    progress = io.StringIO()
    res = explore(program("scal"), sizes, "exhaustive", budget=200, evaluator=_fake(sizes),
                  results_path=tmp_path / "r.json", progress=progress, depth=1,
                  limits=Limits())
    assert 0 < len(res.evaluations) < 200
    text = progress.getvalue()
    assert text.endswith("\n") and text.count("\n") == 1

def test_exploration_is_memoised_and_resumable(tmp_path):
    from mcl.lift.parser import parse_file
    sizes = {"N": 1 << 12}
    f = tmp_path / "r.json"
    ev1 = _fake(sizes)
    explore(parse_file(PROGRAMS / "sum.lift"), sizes, "mcts", budget=5, evaluator=ev1,
            results_path=f, progress=False, seed=3, limits=Limits())
    assert len(set(ev1.calls)) == len(ev1.calls) == 5
    # a new parse (new parameter identities), the same search again: every candidate
    # comes from the file, nothing is evaluated again
    ev2 = _fake(sizes)
    res = explore(parse_file(PROGRAMS / "sum.lift"), sizes, "mcts", budget=5, evaluator=ev2,
                  results_path=f, progress=False, seed=3, limits=Limits())
    assert ev2.calls == [] and len(res.evaluations) == 5
    # a larger budget resumes: only new candidates are evaluated
    ev3 = _fake(sizes)
    res = explore(parse_file(PROGRAMS / "sum.lift"), sizes, "mcts", budget=8, evaluator=ev3,
                  results_path=f, progress=False, seed=3, limits=Limits())
    assert not set(ev3.calls) & set(ev1.calls) and len(ev3.calls) == 3
    assert len(res.evaluations) == 8


def test_results_of_another_program_or_size_are_not_reused(tmp_path):
    f = tmp_path / "r.json"
    explore(program("sum"), {"N": 1 << 12}, "random", budget=2, evaluator=_fake({"N": 1 << 12}),
            results_path=f, progress=False, limits=Limits())
    ev = _fake({"N": 1 << 13})
    # nor silently replaced: the search is refused, naming the file's (see also
    # test_new_user_input.py)
    with pytest.raises(McplError, match="holds the search of 'sum' at N=4096"):
        explore(program("sum"), {"N": 1 << 13}, "random", budget=2, evaluator=ev,
                results_path=f, progress=False, limits=Limits())
    assert len(ev.calls) == 0


def test_rewrites_never_produce_invalid_nesting():
    """Lowering the outer map after the inner one (or the other way round) must not
    give mapWrg(mapWrg), mapGlb(mapGlb), ...: such candidates wasted gemv's budget."""
    import random

    from mcl.lift.codegen import check_lowered
    from mcl.lift.rules import nesting_problem, rewrites
    sizes = {"M": 64, "N": 256}
    p = bind_sizes(program("gemv"), sizes)
    rng = random.Random(0)
    lowered = 0
    for _ in range(6):
        q = p
        for _ in range(10):
            moves = rewrites(q, limits=Limits(max_work_group=256), explore_only=True)
            for m in moves:
                assert nesting_problem(m.result.body.body) is None, m.describe()
            if not moves:
                break
            q = rng.choice(moves).result
            try:
                check_lowered(q.body.body)
            except McplError:
                continue
            generate(q, sizes, Options(local_size=64))   # no lift-not-lowered error
            lowered += 1
            break
    assert nesting_problem(parse(
        "userfun f(x: float): float = x\n"
        "p = fun(x: float[16][16]) => mapWrg(mapWrg(f)) $ x").body.body)
    assert nesting_problem(parse(
        "userfun f(x: float): float = x\n"
        "p = fun(x: float[16][16]) => map(mapLcl(f)) $ x").body.body) is None


def test_no_warp_synchronous_candidates_without_lock_step_warps():
    from mcl.lift.rules import rewrites
    sizes = {"N": 1 << 14}
    p = bind_sizes(program("sum"), sizes)
    moves = rewrites(p, limits=Limits(warp_size=1), explore_only=True)
    assert moves and not any("mapWarp" in show(m.result.body.body) for m in moves)
    assert any("mapWarp" in show(m.result.body.body)
               for m in rewrites(p, limits=Limits(), explore_only=True))


def test_kernels_declare_their_work_group_size():
    g = generate(parse(REDUCE6), {"N": 1 << 20})
    assert "__attribute__((reqd_work_group_size(128, 1, 1)))" in g.source
    src = ("userfun twice(x: float): float = x * 2.0f\n"
           "s = fun(x: float[64][64]) => mapGlb(1, mapGlb(twice)) $ x")
    g = generate(parse(src), {}, Options(local_size=32))
    assert g.kernels[0].local_size == (32, 1)
    assert "reqd_work_group_size(32, 1, 1)" in g.source


def test_modulo_and_division_of_sums_are_parenthesised():
    from mcl.lift.arith import var
    i, j = var("i", 32), var("j", 64)
    assert ((256 * i + 4 * j) % 512).c() == "((256*i + 4*j) % 512)"
    assert ((256 * i + 4 * j) // 512).c() == "((256*i + 4*j) / 512)"
    # C semantics of the printed text match the index function
    for a in (0, 5, 31):
        for b in (0, 17, 63):
            env = {"i": a, "j": b}
            for e, want in (((256 * i + 4 * j) % 512, (256 * a + 4 * b) % 512),
                            ((256 * i + 4 * j) // 512, (256 * a + 4 * b) // 512)):
                assert eval(e.c().replace(" / ", " // "), {}, env) == want


def test_failing_candidates_are_recorded_and_the_search_goes_on(tmp_path):
    sizes = {"M": 4, "N": 128}

    def flaky(prog, ls):
        return Evaluation(key(prog.body), show(prog.body.body), "build-error", message="no")
    res = explore(program("gemv"), sizes, "random", budget=4, evaluator=flaky, progress=False,
                  limits=Limits())
    assert len(res.evaluations) == 4 and res.best() is None


def test_explore_on_the_device(rt, tmp_path):
    res = explore(program("sum"), {"N": 1 << 12}, "random", budget=3, progress=False,
                  results_path=tmp_path / "r.json", repeat=2)
    assert res.best() is not None


def test_cli(run_cli, tmp_path):
    s = str(PROGRAMS / "sum.lift")
    code, out, _ = run_cli("lift", "check", s)
    assert code == 0 and "float[1]" in out
    code, out, _ = run_cli("lift", "print", s)
    assert code == 0 and "reduce(add, 0.0f) $ x" in out
    code, out, _ = run_cli("lift", "rewrite", s, "--size", "N=1024", "--list")
    assert code == 0 and "reduce-partial" in out
    code, out, _ = run_cli("lift", "rewrite", "--rules", s)
    assert code == 0 and "map-to-mapLcl" in out
    low = tmp_path / "low.lift"
    code, out, _ = run_cli("lift", "rewrite", s, "--size", "N=4096", "--rule",
                           "reduce-to-workgroup-tree")
    assert code == 0 and "mapWrg" in out
    low.write_text(out)
    code, out, _ = run_cli("lift", "gen", low, "-o", tmp_path / "gen")
    assert code == 0 and (tmp_path / "gen" / "kernel.cl").exists()
    code, _, err = run_cli("lift", "gen", s, "--size", "N=64")
    assert code == 1 and "not fully lowered" in err
    code, _, err = run_cli("lift", "rewrite", s, "--rule", "split-join")
    assert code == 1 and "does not apply" in err
    code, _, err = run_cli("lift", "explore", s, "--size", "N=-4")
    assert code == 2 and "--size N: -4 is not a size" in err


def test_default_sizes_keep_each_input_array_small():
    from mcl.lift.explore import default_sizes
    assert default_sizes(program("sum"), {}) == {"N": 1 << 16}
    assert default_sizes(program("gemv"), {}) == {"M": 256, "N": 256}   # A is M x N
    assert default_sizes(program("mm"), {"M": 64}) == {"K": 256, "N": 256}
    assert default_sizes(program("sum"), {"N": 1024}) == {}


def test_explore_without_sizes_uses_and_states_the_defaults(rt, run_cli):
    code, out, err = run_cli("lift", "explore", PROGRAMS / "sum.lift", "--budget", "2",
                             "--repeat", "1")
    assert code == 0, err
    assert "sizes: N=65536 (not given: a default; choose with --size N=...)" in out
    assert "best:" in out


def _mm_tiled(sizes, choice):
    p = bind_sizes(program("mm"), sizes)
    return p, apply_rule(p, "mm-tiling", choice=choice)


@pytest.mark.parametrize("sizes", [{"M": 64, "N": 64, "K": 32}, {"M": 128, "N": 64, "K": 16}])
def test_mm_tiling_preserves_the_result_in_the_interpreter(sizes):
    from mcl.lift.macros_mm import mm_tiling_choices
    n = len(mm_tiling_choices(sizes["M"], sizes["N"], sizes["K"], Limits()))
    assert n >= 3
    for choice in (0, n // 2, n - 1):
        p, q = _mm_tiled(sizes, choice)
        xs = random_inputs(p, sizes)
        np.testing.assert_allclose(run(q, *xs), run(p, *xs), rtol=1e-5, atol=1e-5)


def test_mm_tiling_kernel_structure():
    sizes = {"M": 256, "N": 256, "K": 64}
    _, q = _mm_tiled(sizes, 0)          # 128x128 tiles, 8x8 register blocks, k-tile 16
    g = generate(q, sizes)
    k = g.kernels[0]
    assert k.local_size == (16, 16) and k.global_size == (32, 32)
    assert "reqd_work_group_size(16, 16, 1)" in g.source
    assert k.local_bytes == (128 + 128) * 16 * 4
    # the accumulator is the work-item's own 8x8 block, in private memory
    assert "float acc_3[64];" in g.source and "local float" in g.source
    # the k-tile loop is not unrolled; one barrier after both (independent) tile copies
    # and one before the next tiles load
    loop = g.source[g.source.index("for (int i_4 = 0; i_4 < 4; i_4++)"):]
    assert loop.count("barrier(CLK_LOCAL_MEM_FENCE)") == 2


def test_mm_tiling_runs_on_the_device(rt):
    from mcl.lift.execute import run_generated
    sizes = {"M": 64, "N": 128, "K": 32}
    p, q = _mm_tiled(sizes, 1)
    xs = random_inputs(p, sizes)
    got = run_generated(generate(q, sizes), rt, xs)
    np.testing.assert_allclose(got, xs[0].astype(np.float64) @ xs[1], rtol=1e-4, atol=1e-4)


GESUMMV_ROWS = """
userfun mult(x: float, y: float): float = x * y
userfun add(x: float, y: float): float = x + y
rows = fun(a: float[N][M], x: float[M]) =>
  mapGlb(fun(row) => reduceSeq(add, 0.0f) o join o
                     toPrivate(mapSeq(mapSeq(fun(p) => mult(p._0, p._1)))) o
                     split(K) $ zip(row, x)) $ a
"""


@pytest.mark.parametrize("m, ok", [(512, True), (2048, False)])
def test_private_arrays_over_the_limit_are_not_generated(m, ok):
    """A materialised product row of M floats per work-item: 4 KB is the default limit
    (an array of 16 KB per work-item overflowed PoCL's stack)."""
    prog, sizes = parse(GESUMMV_ROWS), {"N": 8, "M": m, "K": 32}
    if ok:
        assert "float p_" in generate(prog, sizes).source
        return
    with pytest.raises(McplError, match=r"private arrays of 819\d bytes per work-item"):
        generate(prog, sizes)
    generate(prog, sizes, Options(private_memory=None))


def test_direct_lowering_fuses_maps_into_reductions():
    from mcl.lift.explore import direct_lowering
    p = program("gemv")
    low = direct_lowering(p)
    text = show(low.body.body)
    assert text.startswith("mapGlb(") and "mapSeq(fun(" not in text.split("reduceSeq")[1]
    assert "toPrivate" not in text
    sizes = {"N": 16, "M": 24}
    xs = random_inputs(p, sizes)
    np.testing.assert_allclose(run(bind_sizes(low, sizes), *xs),
                               run(bind_sizes(p, sizes), *xs), rtol=1e-5)


def test_macro_seeds_are_lowered_and_include_every_applicable_macro():
    from mcl.lift.explore import is_lowered, macro_seeds
    sizes = {"M": 256, "N": 256, "K": 256}
    seeds = macro_seeds(bind_sizes(program("mm"), sizes), Limits())
    assert len(seeds) >= 3 and all(is_lowered(p) for p in seeds)
    texts = [show(p.body.body) for p in seeds]
    assert texts[0].startswith("mapGlb(") and any("asVector(4)" in t for t in texts)


def test_cli_explore_counts_must_be_positive(run_cli):
    s = PROGRAMS / "sum.lift"
    for option in ("--budget", "--depth", "--repeat"):
        code, out, err = run_cli("lift", "explore", s, option, "0")
        assert code == 2 and f"{option}: 0; give 1 or more" in err and out == ""


def test_unknown_rule_points_at_the_list_of_rules(run_cli):
    code, _, err = run_cli("lift", "rewrite", PROGRAMS / "sum.lift", "--rule", "zzz")
    assert code == 1 and "mcl lift rewrite --rules" in err


def test_an_mcpl_file_given_to_a_lift_command_says_how_to_get_its_lift_program(run_cli):
    code, _, err = run_cli("lift", "check", EXAMPLES / "matmul" / "perfect.mcpl")
    assert code == 1
    assert "perfect.mcpl is an MCPL kernel, not a Lift program" in err
    assert "mcl lift from-mcpl" in err and "syntax error" not in err


def test_explore_without_any_candidate_says_why_and_what_to_try(rt, run_cli, monkeypatch):
    # a search that lowered nothing (sum at N=1000 has candidates since the work-group
    # tree takes arrays shorter than 1024 elements)
    import mcl.lift.explore as ex
    monkeypatch.setattr(ex, "explore", lambda prog, *a, **k: ex.Results(None, {}))
    code, out, err = run_cli("lift", "explore", PROGRAMS / "sum.lift", "--size", "N=1000",
                             "--budget", "2", "--repeat", "1")
    assert code == 1, err
    assert "candidates: \n" not in out
    assert "no sequence of rewrites lowered 'sum' at N=1000" in out
    assert "try N=1024" in out
