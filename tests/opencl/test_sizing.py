"""mcl.opencl.sizing: the ladder of smaller sizes and the fit that never starts a run
predicted to exceed the limit (cost models, no device)."""

import pytest

from mcl.opencl.sizing import divisibility_problems, fit_size, scaled_sizes, size_ladder

# A running OpenCL kernel cannot be interrupted (the perfect reduction, 2^28 float
# atomics on one address, stalled a whole H100 run): the driver times each version on
# smaller sizes first and never starts a run predicted to exceed --max-version-s.


def test_size_ladder_halves_the_size_parameters_and_keeps_divisors():
    ladder = size_ladder({"n": 2 ** 28}, ("n",))
    assert [s["n"] for s in ladder] == [2 ** k for k in range(20, 29)]
    mm = size_ladder({"n": 4096, "m": 4096, "p": 4096}, ("n", "m", "p"), {"p": 256})
    assert mm[0] == {"n": 512, "m": 512, "p": 512} and mm[-1]["p"] == 4096
    assert all(s["p"] % 256 == 0 for s in mm)
    tiny = size_ladder({"n": 64, "m": 64, "p": 256}, ("n", "m", "p"), {"p": 256})
    assert all(s["p"] == 256 for s in tiny) and tiny[-1] == {"n": 64, "m": 64, "p": 256}
    conv = size_ladder({"h": 4096, "w": 4096, "fh": 9, "fw": 9}, ("h", "w"))
    assert all(s["fh"] == 9 for s in conv) and conv[0]["h"] == 256


def test_scaled_sizes_are_reference_py_s_scale_else_n_else_every_integer_size():
    class Conv:
        SCALE = ("h", "w")
    conv = {"h": 4096, "w": 4096, "fh": 9, "fw": 9}
    assert scaled_sizes(Conv, conv) == ("h", "w")
    assert scaled_sizes(object(), {"n": 2 ** 28, "nrBuckets": 256}) == ("n",)
    assert scaled_sizes(object(), {"rows": 64, "cols": 32, "alpha": 1.5}) == ("rows", "cols")


def _fit(seconds_per_work, works, limit):
    measured = []

    def measure(i):
        measured.append(i)
        return seconds_per_work(works[i]) * works[i]
    fit = fit_size(measure, lambda i: works[i], len(works), limit)
    return fit, measured


def test_fit_size_runs_the_paper_size_when_predicted_within_the_limit():
    works = [2.0 ** k for k in range(20, 29)]
    fit, measured = _fit(lambda w: 1e-9, works, 20.0)
    assert fit["rung"] == len(works) - 1 and measured == [0]
    assert fit["predicted_s"] == pytest.approx(2 ** 28 * 1e-9)


def test_fit_size_extrapolates_and_measures_the_largest_size_that_fits():
    works = [2.0 ** k for k in range(20, 29)]
    # 1 µs per element: 268 s at 2^28, far over 20 s; 2^22 is 4.2 s <= 20 / 4
    fit, measured = _fit(lambda w: 1e-6, works, 20.0)
    assert fit["predicted_s"] == pytest.approx(2 ** 28 * 1e-6)
    assert works[fit["rung"]] == 2 ** 22
    assert measured == [0, 2]  # never a run predicted to take more than 20 / 4 s
    assert max(t for _, t in fit["probes"]) <= 20.0 / 4 * 1.0001


def test_fit_size_measures_again_where_the_small_size_overestimated():
    works = [2.0 ** k for k in range(20, 29)]
    # per-element time falls with size (launch overhead at small sizes): the paper
    # size turns out to fit once a larger size is measured
    fit, measured = _fit(lambda w: 1e-6 if w < 2 ** 22 else 5e-8, works, 20.0)
    assert measured == [0, 2] and fit["rung"] == len(works) - 1


def test_fit_size_with_max_step_climbs_in_bounded_steps():
    """Contended atomics: time per element grows with the size (here 50x from 2^12 to
    2^20). Unbounded, the first prediction from 2^12 sends the next probe to a size
    that runs 40 s; steps of at most 64x keep every probe near its prediction."""
    works = [2.0 ** k for k in range(12, 29)]

    def per_element(w):
        return 1e-6 * min(50.0, max(1.0, w / 2 ** 14))
    fit, measured = _fit(per_element, works, 10.0)
    assert max(t for _, t in fit["probes"]) > 10.0             # the surprise, unbounded
    fit, measured = _fit_step(per_element, works, 10.0, 64.0)
    assert fit["rung"] != len(works) - 1                       # too slow, found out
    assert max(t for _, t in fit["probes"]) < 10.0
    assert all(works[b] <= 64 * works[a] for a, b in zip(measured, measured[1:], strict=False))


def test_fit_size_with_max_step_reaches_the_paper_size_of_a_fast_kernel():
    works = [2.0 ** k for k in range(12, 29)]
    fit, measured = _fit_step(lambda w: 1e-10, works, 10.0, 64.0)
    assert fit["rung"] == len(works) - 1
    assert [works[i] for i in measured] == [2.0 ** 12, 2.0 ** 18, 2.0 ** 24]


def _fit_step(seconds_per_work, works, limit, step):
    measured = []

    def measure(i):
        measured.append(i)
        return seconds_per_work(works[i]) * works[i]
    return fit_size(measure, lambda i: works[i], len(works), limit, max_step=step), measured


def test_divisibility_demands_on_sizes_and_sums_of_sizes():
    need = {"h": 32, "w": 128, "w + fw - 1": 4}     # convolution hopper_v4
    assert divisibility_problems(need, {"h": 64, "w": 256, "fh": 9, "fw": 9}) == []
    assert divisibility_problems(need, {"h": 40, "w": 128, "fh": 3, "fw": 3}) == [
        "h a multiple of 32", "w + fw - 1 a multiple of 4"]
    assert divisibility_problems(need, {"h": 32}) == []     # sizes not given: not checked
    with pytest.raises(ValueError, match="not a size or a sum"):
        divisibility_problems({"w / 2": 4}, {"w": 8})
