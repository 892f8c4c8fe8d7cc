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
    from mcl.analyses.kernel import build_kernel, parameter_values
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
    from mcl.analyses.kernel import build_kernel, parameter_values
    path = SPMV.parent / "reduction" / "hopper_v2.mcpl"
    checked = check(path)
    f = checked.module.functions[-1]
    num = build_kernel(f, checked, parameter_values(f, {"n": 2 ** 24}),
                       checked.hardware_of(f))
    dk = data_kernel(num)
    [loop] = [lp for lp in dk.kernel.loops if lp.kind == "while"]
    assert int(loop.trips) == 16      # ceil((2**24 - 768) / (1024 * 1056))
    assert loop not in dk.estimated
