"""The MCPL-versus-Lift comparison without an OpenCL device: MCPL versions are
"measured" by a stand-in, Lift's exploration evaluates candidates with the
interpreter (a lowered candidate must compute what the reference computes), and
the table's figures are derived from the times."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mcl.lift.compare import Comparison, Row, compare, default_sizes, table, versions
from mcl.lift.explore import Evaluation
from mcl.lift.interp import run
from mcl.lift.printer import key, show
from mcl.lift.rules import Limits

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_versions_in_refinement_order():
    names = [p.stem for p in versions(EXAMPLES / "reduction")]
    assert names[0] == "perfect"
    assert names.index("gpu_v1") < names.index("gpu_v2") < names.index("gpu_v4")
    assert default_sizes(EXAMPLES / "vector_add" / "perfect.mcpl") == {"n": 67108864}


def test_table_figures():
    c = Comparison("vector_add", "leaf", {"n": 1000}, "dev", flops=1e9, bytes=4e9, bound_s=0.5)
    c.rows = [Row("perfect", "ok", 1.0), Row("gpu_v1", "wrong", note="max |error| 1"),
              Row("Lift best", "ok", 2.0)]
    text = table(c)
    assert "50.0%" in text and "25.0%" in text          # 0.5 s of 1 s and of 2 s
    assert "1.0" in text and "4.0" in text               # GFLOP/s and GB/s at 1 s
    md = table(c, markdown=True)
    assert md.count("\n|") == 5 and "gpu_v1 (wrong)" in md


def test_compare_with_interpreter_evaluator():
    """Every candidate Lift reports as correct is checked with the interpreter against
    reference.py's result; the MCPL rows come from a stand-in measurement."""
    sizes = {"n": 64}
    checked = []

    def evaluator(prog, local_size=None):
        from mcl.lift.from_mcpl import reference_module
        ref = reference_module(EXAMPLES / "vector_add" / "perfect.mcpl")
        vals = ref.inputs(np.random.default_rng(0), **sizes)
        got = run(prog, vals["a"], vals["b"])
        ok = np.array_equal(got, ref.reference(**vals)["c"])
        checked.append(ok)
        return Evaluation(key(prog.body), show(prog.body.body), "ok" if ok else "wrong",
                          1e-3 * (1 + len(checked)))

    def measure(path, leaf, inputs, expected, tol, device, repeat, max_version_s):
        assert inputs.output == "c" and expected.shape == (64,)
        return Row(path.stem, "ok", 4e-3)

    c = compare(EXAMPLES / "vector_add" / "perfect.mcpl", "hopper", sizes, budget=5,
                strategy="random", measure=measure, evaluator=evaluator, limits=Limits())
    assert checked and all(checked)
    assert [r.version for r in c.rows][-1] == "Lift best"
    assert c.rows[-1].status == "ok" and c.rows[-1].time_s == 2e-3
    assert c.bytes == 12 * 64 and c.bound_s is not None and c.bound_s > 0
    assert "mapGlb" in c.lift_expression or "mapWrg" in c.lift_expression


def test_only_versions_on_the_path_to_the_leaf_are_compared():
    measured = []

    def measure(path, leaf, inputs, expected, tol, device, repeat, max_version_s):
        measured.append(path.stem)
        return Row(path.stem, "ok", 1e-3)

    c = compare(EXAMPLES / "matmul" / "perfect.mcpl", "hopper", {"n": 64, "m": 64, "p": 64},
                budget=1, strategy="random", measure=measure,
                evaluator=lambda prog, local_size=None: Evaluation(
                    key(prog.body), show(prog.body.body), "ok", 1e-3), limits=Limits())
    assert "perfect" in measured and "hopper_v1" in measured and "gpu_v1" in measured
    assert not any(v.startswith(("mic", "xeon_phi", "fermi")) for v in measured)
    assert {"fermi", "mic", "xeon_phi"} <= set(c.other_branches)
    assert "Not for hopper" in table(c)


@pytest.mark.parametrize("kernel", ["gesummv", "matmul", "reduction"])
def test_roofline_bound_of_the_perfect_version_translated_to_the_leaf(kernel):
    from mcl.lift.compare import _roofline_bound
    folder = EXAMPLES / kernel
    sizes = default_sizes(folder / "perfect.mcpl")
    bound, note = _roofline_bound(folder, "hopper", sizes)
    assert bound is not None and bound > 0, note
    assert "perfect.mcpl translated to hopper" in note


def test_a_version_predicted_too_slow_is_not_run(rt):
    """Timed at a small fraction of the size first; a limit it cannot meet leaves it out, with the
    prediction in the note; a generous limit runs it at the compared size."""
    from mcl.lift.compare import Inputs, measure_mcpl
    from mcl.lift.from_mcpl import reference_module
    path = EXAMPLES / "vector_add" / "perfect.mcpl"
    ref = reference_module(path)
    sizes = {"n": 1 << 16}
    values = ref.inputs(np.random.default_rng(0), **sizes)
    inputs = Inputs(ref, sizes, values, "c")
    expected = ref.reference(**values)["c"]
    slow = measure_mcpl(path, "hopper", inputs, expected, ref.TOLERANCE, None, 2,
                        max_version_s=1e-9)
    assert slow.status == "too slow" and slow.time_s is None
    assert "at n=1:" in slow.note and "not run" in slow.note
    fast = measure_mcpl(path, "hopper", inputs, expected, ref.TOLERANCE, None, 2,
                        max_version_s=60.0)
    assert fast.status == "ok" and fast.time_s > 0


def test_a_version_written_for_its_sizes_is_built_for_them_on_the_ladder(rt):
    """convolution hopper_v4 (reference.py: SPECIALIZE, DIVISIBLE_BY "w + fw - 1": 4) is
    built with its sizes as constants and probed on smaller sizes of h and w only (SCALE):
    its 9 x 9 filter is not halved, so w + fw - 1 stays a multiple of 4 on every rung."""
    from mcl.lift.compare import Inputs, measure_mcpl
    from mcl.lift.from_mcpl import reference_module
    path = EXAMPLES / "convolution" / "hopper_v4.mcpl"
    ref = reference_module(path)
    sizes = {"h": 64, "w": 256, "fh": 9, "fw": 9}
    values = ref.inputs(np.random.default_rng(0), **sizes)
    inputs = Inputs(ref, sizes, values, "output")
    assert inputs.ladder(ref.DIVISIBLE_BY["hopper_v4"])[0] == {**sizes, "h": 32, "w": 128}
    expected = ref.reference(**values)["output"]
    row = measure_mcpl(path, "hopper", inputs, expected, ref.TOLERANCE, None, 2,
                       max_version_s=60.0)
    assert row.status == "ok", row.note
    assert "h specialised: it is a compile-time constant" in row.source


def test_the_roofline_is_the_devices_level_where_it_lies_below_the_leaf(monkeypatch):
    """On an H200 (h200.target describes "NVIDIA H200") versions built for hopper are held
    against h200's roofline, the memory they run with; a device no level describes, or
    one described by a level not below the leaf, leaves the leaf's."""
    from mcl.lift.compare import _roofline_level
    assert _roofline_level("hopper", "NVIDIA CUDA:NVIDIA H200") == "h200"
    assert _roofline_level("hopper", "NVIDIA CUDA:NVIDIA H100 80GB HBM3") == "hopper"
    assert _roofline_level("hopper", "Portable Computing Language:cpu") == "hopper"
    assert _roofline_level("fermi", "NVIDIA CUDA:NVIDIA H200") == "fermi"
