"""Loads whose addresses or trip counts depend on data get a stated estimate
(mcl.analyses.datadep): a gather fetches a sector per active lane, a loop that data
bound runs the average that reads the arrays it walks once in all."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcl.analyses import feedback
from mcl.mcpl import check

SPMV = Path(__file__).resolve().parents[2] / "examples" / "spmv_csr"
NNZ = 8589935


def _diag(name: str, code: str):
    [d] = [d for d in feedback(check(SPMV / f"{name}.mcpl"), only={"functions", "time"})
           if d.code == code]
    return d


@pytest.mark.parametrize("name", ["hopper_v1"])
def test_spmv_loads_are_estimated(name):
    d = _diag(name, "feedback-requests")
    data = d.data
    assert not data["unpredicted"], data
    assert "x[colIdx[k]]" in data["estimated"]
    assert "an estimate for" in d.message and "depend on data" in d.message, d.message
    assert "read once in all" in d.message, d.message
    # a sector per non-zero for the gather, about 1/8 of one for values and colIdx:
    # ncu counted 1.15e7 sectors at these sizes
    assert 0.9 * 1.15e7 < data["sectors"] < 1.1 * 1.15e7, data


def test_spmv_time_names_the_estimate():
    d = _diag("hopper_v1", "feedback-time")
    assert "depend on data" in d.message, d.message
    assert "x[colIdx[k]]" in d.data["estimated"]


def test_trip_count_from_the_walked_array():
    from mcl.analyses.datadep import data_kernel
    from mcl.analyses.kernel import parameter_values
    from mcl.analyses.kernel_build import build_kernel
    checked = check(SPMV / "hopper_v1.mcpl")
    f = checked.module.functions[-1]
    num = build_kernel(f, checked, parameter_values(f, {}), checked.hardware_of(f))
    dk = data_kernel(num)
    [(loop, why)] = dk.estimated.items()
    assert loop.kind == "while"
    # 2 elements of values an iteration, 65536 rows x 32 lanes, less the reads after it
    execs = 65536 * 32
    assert float(loop.trips) == pytest.approx((NNZ - execs) / (2 * execs), rel=1e-3)
    assert "values" in why


def test_while_loop_counted_from_its_condition():
    # reduction hopper_v2: `while (i + 3 * nrThreads < n) { ...; i += stride; }` does
    # not depend on data: n / stride iterations, not an estimate
    from mcl.analyses.datadep import data_kernel
    from mcl.analyses.kernel import parameter_values
    from mcl.analyses.kernel_build import build_kernel
    path = SPMV.parent / "reduction" / "hopper_v2.mcpl"
    checked = check(path)
    f = checked.module.functions[-1]
    num = build_kernel(f, checked, parameter_values(f, {"n": 2 ** 24}),
                       checked.hardware_of(f))
    dk = data_kernel(num)
    [loop] = [lp for lp in dk.kernel.loops if lp.kind == "while"]
    assert int(loop.trips) == 16      # ceil((2**24 - 768) / (1024 * 1056))
    assert loop not in dk.estimated


def loop_nest(dk, loop):
    """The loops around ``loop`` (outer first), from an access inside it."""
    acc = next(a for a in dk.kernel.accesses if loop in a.loops)
    return acc.loops[:acc.loops.index(loop)]


def _data_kernel(name: str):
    from mcl.analyses.datadep import data_kernel
    from mcl.analyses.kernel import parameter_values
    from mcl.analyses.kernel_build import build_kernel
    checked = check(SPMV / f"{name}.mcpl")
    f = checked.module.functions[-1]
    num = build_kernel(f, checked, parameter_values(f, {}), checked.hardware_of(f))
    return data_kernel(num)


@pytest.mark.parametrize("name,kind,runs,average", [
    # a row per warp, lanes 32 apart: rows of about 131 elements (Poisson), 4.1
    # iterations a lane on average, the slowest lane 4 or 5; the compiler's remainder
    # loop of the unrolling by 4 and the unrolled loop in turn: about 5.7
    ("gpu_v1", "for", 5.69, 4.1),
    # the same rows, 2 elements a lane an iteration after the first 32: a while loop,
    # not unrolled: the slowest lane's 2
    ("hopper_v1", "while", 2.0, 1.55),
    # a row per lane: the longest of 32 rows (about 154) and the remainders first
    ("perfect", "for", 157.0, 131.0),
])
def test_a_warp_runs_a_data_bound_loop_as_long_as_its_slowest_lane(name, kind, runs,
                                                                  average):
    from mcl.analyses.datadep import warp_iterations
    dk = _data_kernel(name)
    [loop] = dk.estimated
    assert loop.kind == kind
    assert float(loop.trips) == pytest.approx(average, rel=0.02)
    # the lanes of a warp: consecutive iterations of the innermost thread loop
    lane = [lp for lp in loop_nest(dk, loop) if lp.kind == "foreach"][-1]
    got = warp_iterations(dk, loop, lane, 32)
    assert got == pytest.approx(runs, rel=0.03), got


def test_requests_of_spmv_count_the_warps_slowest_lane():
    """ncu counted 1.26e6 load requests of hopper_v1, 9.10 sectors each: the average
    trip count gave 9.4e5 requests (12.1 sectors a request, 33% too many); a warp
    running as long as its slowest lane gives about 1.12e6 (10.2)."""
    d = _diag("hopper_v1", "feedback-requests")
    assert d.data["requests"] == pytest.approx(1.26e6, rel=0.15), d.data
    assert d.data["sectors"] / d.data["requests"] == pytest.approx(9.10, rel=0.15)
    assert "a warp runs about 2.01, as long as its slowest lane" in d.message, d.message


def _coalescing(name: str, level: str | None = None) -> dict[str, list]:
    """The coalescing messages of a version (at ``level``, translated there), by the
    text of the access they name."""
    from mcl.mcpl import parse, print_module
    from mcl.translate import translate
    checked = check(SPMV / f"{name}.mcpl")
    if level is not None:
        checked = check(parse(print_module(translate(checked.module, to=level)),
                              str(SPMV / f"{name}.mcpl@{level}")))
    out: dict[str, list] = {}
    for d in feedback(checked, only={"functions"}):
        if d.code == "feedback-coalescing":
            out.setdefault(d.message.split(":")[0], []).append(d)
    return out


@pytest.mark.parametrize("name", ["hopper_v1", "nvidia_v1"])
def test_a_row_per_warp_is_coalesced_from_a_start_that_data_choose(name):
    """``values[k]`` with ``k = rowPtr[r] + lane`` (a row per warp): the lanes read 32
    adjacent elements from where the row starts, 4 sectors of 32 B where that start is
    aligned and 5 where not; ncu counts 9.10 sectors per request over hopper_v1's loads
    (the gathers of x included), not the 32 of a gather."""
    got = _coalescing(name, None if name.startswith("hopper") else "hopper")
    for text in ("values[k]", "colIdx[k]"):
        d = got[text][0]
        assert d.severity.name == "INFO", d.message
        assert "start known only at run time (" in d.message, d.message
        assert "4 sectors of 32 B where that start is aligned" in d.message, d.message
        assert "5 where it is not" in d.message and "(coalesced)" in d.message, d.message
        assert (d.data["segments"], d.data["segments_unaligned"], d.data["ideal"]) == \
            (4, 5, 4), d.data
    gather = got["x[colIdx[k]]"][0]
    assert gather.data["gather"] == ["colIdx[k]"], gather.data
    assert "1 to 32 sectors" in gather.message, gather.message


def test_a_row_per_lane_is_a_gather_of_where_the_rows_start():
    """perfect: each lane walks its own row (``for (k = rowPtr[r]; ...)``): what the
    lanes read depends on where their rows start, which the data choose for each
    (ncu: 25.6 sectors per request). Before, the loop's unknown start was taken as 0
    for every lane, and values[k] counted as one element for the warp."""
    got = _coalescing("perfect", "hopper")
    for text in ("values[k]", "colIdx[k]"):
        d = got[text][0]
        assert d.data["gather"] == ["rowPtr[r]"], (text, d.data)
        assert "differ between them (rowPtr[r])" in d.message, d.message


def test_no_faster_memory_for_an_element_the_lanes_of_a_warp_share():
    """hopper_v1's ``rowPtr[r]`` is the same for the 32 lanes of a warp: one request, a
    broadcast. Shared memory has nothing to save, and the feedback said it had."""
    diags = feedback(check(SPMV / "hopper_v1.mcpl"), only={"reuse"})
    assert not [d for d in diags if d.code == "feedback-faster-memory"
                and "rowPtr" in d.message], [d.message for d in diags]
    [d] = [d for d in diags if d.code == "feedback-reuse"
           and d.message.startswith("rowPtr[r] ")]
    assert "one request" in d.message and "broadcasts" in d.message, d.message
    assert d.hint is None


def test_a_start_a_while_loop_moves_by_whole_sectors_is_aligned():
    """reduction hopper_v2's partial chunk after its while loop starts at ``i``, moved by
    ``stride`` (1024 x 1056 elements) per iteration: the start is a multiple of the
    stride from an aligned one, so the warp's 32 floats take 4 sectors, not 4 or 5; in
    the loop, where the iteration is a loop index, the loads are judged as any other
    (coalesced: no message of their own)."""
    from mcl.mcpl import check as check_
    path = SPMV.parent / "reduction" / "hopper_v2.mcpl"
    msgs = [d for d in feedback(check_(path), only={"functions"})
            if d.code == "feedback-coalescing"]
    [after] = [d for d in msgs if d.span.line == 50]
    assert "the iterations of the while loop over i" in after.message, after.message
    assert "4 sectors of 32 B (coalesced)" in after.message, after.message
    assert (after.data["segments"], after.data["segments_unaligned"]) == (4, 4)
    assert not [d for d in msgs if d.span.line == 43]
