"""The Python runtime: bad input gives clear errors before anything runs; every
leaf-level example matches its reference on the OpenCL device (PoCL in CI) for
all its test sizes."""

from __future__ import annotations

import numpy as np
import pytest

import mcl
from mcl.diagnostics import McplError
from mcl.opencl.sizing import divisibility_problems
from tests.opencl.conftest import EXAMPLES, leaf_examples, reference


@pytest.fixture(scope="module")
def matmul():
    return mcl.compile(EXAMPLES / "matmul" / "hopper_v2.mcpl")


def test_compile_is_the_public_api():
    from mcl.opencl import compile as opencl_compile
    assert mcl.compile is opencl_compile


def test_wrong_dtype(matmul):
    a, b = np.zeros((4, 3), np.float32), np.zeros((3, 5), np.float64)
    with pytest.raises(McplError, match="'b' has dtype float64.*float32"):
        matmul(a=a, b=b)


def test_wrong_shape(matmul):
    a, b = np.zeros((4, 3), np.float32), np.zeros((3, 5), np.float32)
    with pytest.raises(McplError, match=r"'a' has shape \(4, 3\).*\(4, 2\)"):
        matmul(a=a, b=b, p=2)


def test_missing_size(matmul):
    with pytest.raises(McplError, match="needs the size m"):
        matmul(a=np.zeros((4, 3), np.float32))


def test_missing_input_and_unknown_argument(matmul):
    with pytest.raises(McplError, match="reads 'b'"):
        matmul(n=4, m=5, p=3, a=np.zeros((4, 3), np.float32))
    with pytest.raises(McplError, match="no parameter 'q'"):
        matmul(q=1)


@pytest.mark.parametrize(("value", "expected"), [
    (-5, "'n' is a size of 'matmul': it cannot be negative, not -5"),
    (2.5, "'n' is an int parameter of 'matmul': it takes an integer, not 2.5"),
    ("4", "'n' is an int parameter of 'matmul': it takes an integer, not '4'"),
    # beyond an int: the kernel would get it wrapped round
    (3_000_000_000, "'n' is an int parameter of 'matmul': 3000000000 does not fit it "
                    "(-2147483648 .. 2147483647)"),
    (2**31, "2147483648 does not fit it"),
])
def test_bad_size_names_the_parameter(matmul, value, expected):
    a, b = np.zeros((4, 3), np.float32), np.zeros((3, 5), np.float32)
    with pytest.raises(McplError) as e:
        matmul(n=value, m=3, p=5, a=a, b=b)
    assert expected in str(e.value)


def test_a_whole_number_as_float_is_a_size(matmul):
    a, b = np.ones((4, 3), np.float32), np.ones((3, 5), np.float32)
    sizes = matmul.check_scalars({"n": 4.0, "m": np.float32(5), "p": 3})
    assert sizes == {"n": 4, "m": 5, "p": 3} and all(type(v) is int for v in sizes.values())
    assert matmul(n=4.0, m=5.0, p=3.0, a=a, b=b)["c"].shape == (4, 5)


def test_negative_value_of_a_scalar_that_is_no_size_is_accepted():
    src = """module shift;
import cpu;
cpu void k(const int n, const int d, main int[n] a) {
  foreach (int i in n threads) { foreach (int v in 1 vectors) { a[i] = a[i] + d; } }
}
"""
    from mcl.mcpl import parse
    k = mcl.compile(parse(src, "shift.mcpl"), "cpu")
    assert list(k(d=-3, a=np.arange(4, dtype=np.int32))["a"]) == [-3, -2, -1, 0]


def test_empty_sizes_launch_nothing_and_time_nothing(opencl_device):
    k = mcl.compile(EXAMPLES / "vector_add" / "hopper_v1.mcpl")
    ones = np.ones(8, np.float32)
    k(n=8, a=ones, b=ones)
    assert k.last_event is not None
    empty = np.zeros(0, np.float32)
    assert k(n=0, a=empty, b=empty)["c"].shape == (0,)
    assert k.last_event is None         # not the event of the launch before
    assert k.time(repeat=2, n=0, a=empty, b=empty) == float("inf")

def test_a_kernel_that_updates_an_element_outside_its_array_is_not_launched(tmp_path):
    """reduction perfect updating result[n - 101], -1 at n = 100: launched on PoCL it
    corrupts the process's heap and the process aborts. The call is an error instead, and
    the kernel of the right text runs. (A constant result[-1] is mcl check's error.)"""
    source = (EXAMPLES / "reduction" / "perfect.mcpl").read_text()
    (tmp_path / "perfect.mcpl").write_text(source.replace("result[0]", "result[n - 101]"))
    k = mcl.compile(tmp_path / "perfect.mcpl", "hopper")
    with pytest.raises(McplError) as e:
        k(n=100, input=np.ones(100, np.float32), result=np.zeros(1, np.float32))
    d = e.value.diagnostics[0]
    assert d.code == "opencl-out-of-bounds" and d.span.line == 17
    assert "not run: at these sizes it writes outside its arrays: the index of result is " \
           "-1" in d.message
    k = mcl.compile(EXAMPLES / "reduction" / "perfect.mcpl", "hopper")
    assert k(n=100, input=np.ones(100, np.float32),
             result=np.zeros(1, np.float32))["result"][0] == 100
    # asked not to check (a kernel that keeps its stores inside in a way the analyses
    # do not follow), it would launch
    assert mcl.compile(tmp_path / "perfect.mcpl", "hopper",
                       check_writes=False).writes_outside is None


_FAR_READ = """module far;
import hopper;
hopper void k(const int n = 256, global float[n] out, global float[n] inp) {
  foreach (int b in n / 32 blocks) {
    foreach (int w in 1 warps) {
      foreach (int t in 32 threads) {
        out[b * 32 + t] = inp[b * {stride} + t];
      }
    }
  }
}
"""


def test_a_kernel_that_reads_far_outside_its_array_is_not_launched(opencl_device, tmp_path):
    """A load 700 million elements past its array's end: launched on PoCL, the process
    died of a segmentation fault (loads were launched, the comparison with a reference
    left to show the wrong result). The call is now an error naming the read; the kernel
    of the right stride runs."""
    (tmp_path / "far.mcpl").write_text(_FAR_READ.replace("{stride}", "100000000"))
    k = mcl.compile(tmp_path / "far.mcpl", "hopper")
    with pytest.raises(McplError) as e:
        k(n=256, inp=np.ones(256, np.float32))
    d = e.value.diagnostics[0]
    assert d.code == "opencl-out-of-bounds" and d.span.line == 7
    assert "not run: at these sizes it reads outside its arrays: the index of inp" in d.message
    (tmp_path / "near.mcpl").write_text(_FAR_READ.replace("{stride}", "32"))
    k = mcl.compile(tmp_path / "near.mcpl", "hopper")
    assert k(n=256, inp=np.arange(256, dtype=np.float32))["out"][255] == 255


def _in_own_process(script: str):
    """``script`` run by a Python of its own: a kernel that hangs fails the test (at the
    timeout) instead of the test suite."""
    import subprocess
    import sys
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=300)


def test_a_float_atomic_sum_that_becomes_nan_ends(tmp_path):
    """reduction perfect's atomicAdd on a float is a compare-and-swap loop; once the sum
    is NaN, a loop that compared floats went round for ever (found by fuzzing: mcl run
    hung). Run in a process of its own, so that a hang fails the test."""
    script = ("import numpy as np, mcl\n"
              f"k = mcl.compile({str(EXAMPLES / 'reduction' / 'perfect.mcpl')!r}, 'hopper')\n"
              "x = np.ones(1000, np.float32); x[3] = np.nan\n"
              "print(k(n=1000, input=x, result=np.zeros(1, np.float32))['result'][0])\n"
              "print(k(n=1000, input=np.ones(1000, np.float32),\n"
              "        result=np.zeros(1, np.float32))['result'][0])\n")
    out = _in_own_process(script)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["nan", "1000.0"]


def test_a_kernel_whose_loop_never_ends_is_not_launched(tmp_path):
    """reduction hopper_v1 with its grid stride mistyped to 0 (found by fuzzing: mcl run
    hung): not launched. In a process of its own, so that a launch fails the test."""
    source = (EXAMPLES / "reduction" / "hopper_v1.mcpl").read_text()
    assert "const int stride = 2 * nrThreads * nrBlocks;" in source
    (tmp_path / "v1.mcpl").write_text(source.replace(
        "const int stride = 2 * nrThreads * nrBlocks;", "const int stride = 0 * nrThreads;"))
    script = ("import numpy as np, mcl\n"
              "from mcl.diagnostics import McplError\n"
              f"k = mcl.compile({str(tmp_path / 'v1.mcpl')!r})\n"
              "try:\n"
              "    k(n=5000, input=np.ones(5000, np.float32), result=np.zeros(1, np.float32))\n"
              "except McplError as e:\n"
              "    print(e.diagnostics[0].code)\n")
    out = _in_own_process(script)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["opencl-endless-loop"]


def test_local_memory_larger_than_the_device():
    k = mcl.compile(EXAMPLES / "histogram" / "hopper_v1.mcpl")
    nr = 1 << 22    # 8 warps x 4 M buckets of int in local memory
    with pytest.raises(McplError, match="bytes of local memory"):
        k(n=10, nrBuckets=nr, input=np.zeros(10, np.int32), hist=np.zeros(nr, np.int32))


def test_work_group_larger_than_the_device():
    src = """module big;
import xeon_phi;
xeon_phi void k(const int n, dev float[n] a) {
  foreach (int i in n threads) { foreach (int v in 8 vectors) { a[i] = v; } }
}
"""
    from mcl.mcpl import parse
    from mcl.opencl.target import load_target
    t = load_target("xeon_phi")   # vectors are work-items there (on cpu, a loop)
    # the same program with an absurd number of vector lanes per thread
    module = parse(src.replace("8 vectors", "100000000 vectors"), "big.mcpl")
    k = mcl.compile(module, t.name)
    with pytest.raises(McplError, match="work-groups of 100000000"):
        k(n=1, a=np.zeros(1, np.float32))


def _cases():
    for f in leaf_examples():
        ref = reference(f)
        divisible = ref.get("DIVISIBLE_BY", {}).get(f.stem, {})
        for sizes in ref["SIZES"]:
            if divisibility_problems(divisible, sizes):
                continue
            yield pytest.param(f, sizes, id=f"{f.parent.name}/{f.stem}-"
                               + "-".join(f"{k}{v}" for k, v in sizes.items()))


@pytest.mark.parametrize(("file", "sizes"), list(_cases()))
def test_leaf_example_matches_reference(opencl_device, file, sizes):
    from mcl.opencl import device
    k = mcl.compile(file)
    if k.plan.assumes_lockstep and device.describe(k.device).kind != "GPU":
        pytest.skip("warp-synchronous code: correct only where warps run in lock-step")
    ref = reference(file)
    data = ref["inputs"](np.random.default_rng(1), **sizes)
    got = k(**data)
    want = ref["reference"](**data)
    for name, expected in want.items():
        np.testing.assert_allclose(got[name], expected, **ref["TOLERANCE"])


def test_build_error_names_the_mcpl_line(opencl_device):
    from dataclasses import replace

    from mcl.opencl.runtime import Kernel
    k = mcl.compile(EXAMPLES / "vector_add" / "hopper_v1.mcpl")
    lines = k.source.split("\n")
    at = next(i for i, ln in enumerate(lines) if "c[k] = a[k] + b[k];" in ln)
    lines[at] = lines[at].replace("a[k]", "undeclared_name")   # as if the generator erred
    mcpl_line = k.plan.line_map[at + 1]
    broken = Kernel(replace(k.generated, source="\n".join(lines)), k.context, k.queue)
    with pytest.raises(McplError) as e:
        broken(n=4, a=np.zeros(4, np.float32), b=np.zeros(4, np.float32))
    text = str(e.value)
    assert "undeclared_name" in text
    assert f"hopper_v1.mcpl:{mcpl_line}: c[k] = a[k] + b[k];" in text


def test_a_view_that_does_not_cover_its_array_is_an_error(opencl_device):
    # hopper_v10 reads a through a view of p / 16 phases of 16: at p = 20 it would
    # leave 4 columns of a out and give a wrong product without a word
    from mcl.opencl.plan import LaunchPlan
    k = mcl.compile(EXAMPLES / "matmul" / "hopper_v10.mcpl")
    assert [v.view for v in k.plan.view_checks] == ["a3", "b3", "c3"]
    assert LaunchPlan.from_json(k.plan.to_json()).view_checks == k.plan.view_checks
    rng = np.random.default_rng(0)
    a, b = rng.random((128, 20), np.float32), rng.random((20, 128), np.float32)
    with pytest.raises(McplError) as e:
        k(n=128, m=128, p=20, a=a, b=b)
    d = e.value.diagnostics[0]
    assert d.code == "opencl-view-size"
    assert "the view a3 of a (hopper_v10.mcpl, line 39) has 2048 elements where a has " \
           "2560" in d.message
    a, b = rng.random((128, 32), np.float32), rng.random((32, 128), np.float32)
    np.testing.assert_allclose(k(n=128, m=128, p=32, a=a, b=b)["c"], a @ b, rtol=1e-4)


def test_a_failed_build_says_it_once(opencl_device, capfd):
    """The compiler's log is in the error; its tally ("1 error generated.", which PoCL's
    compiler writes to the process's standard error) does not come beside it."""
    from mcl.opencl.device import build_program, runtime
    with pytest.raises(McplError, match="opencl-build-failed|rejected") as e:
        build_program(runtime().context, "kernel void k(global float *x) { x[0] = ; }")
    assert "expected expression" in str(e.value)
    assert "generated." not in capfd.readouterr().err


def test_what_else_goes_to_standard_error_during_a_build_stays(capfd):
    """Only the tallies are held back: other output of the process meanwhile is written
    back to standard error."""
    import os

    from mcl.opencl.device import _without_compiler_tally
    with _without_compiler_tally():
        os.write(2, b"2 warnings generated.\nsomething else\n")
    assert capfd.readouterr().err == "something else\n"


# ---- bad input to a compiled kernel (an audit of the Python API)

@pytest.fixture(scope="module")
def vector_add():
    return mcl.compile(EXAMPLES / "vector_add" / "hopper_v1.mcpl")


def test_positional_arguments_name_the_keywords(vector_add):
    ones = np.ones(4, np.float32)
    with pytest.raises(TypeError, match=r"by name, not by position \(got 3\): call it as "
                                        r"k\(n=\.\.\., c=\.\.\., a=\.\.\., b=\.\.\.\)"):
        vector_add(4, ones, ones)


@pytest.mark.parametrize(("value", "expected"), [
    ([[1.0], [1.0, 2.0]], "'a' of 'vector_add' is no array: numpy cannot read the list"),
    ([1.0] * 4, r"'a' has dtype float64 \(a list, as numpy reads it\)"),
])
def test_what_numpy_cannot_read_as_the_array_is_an_error(vector_add, value, expected):
    with pytest.raises(McplError, match=expected) as e:
        vector_add(n=4, a=value, b=np.ones(4, np.float32))
    assert "np.asarray(a, np.float32)" in (e.value.diagnostics[0].hint or "") \
        or e.value.diagnostics[0].code == "opencl-bad-argument"


def test_views_of_numpy_arrays_and_one_array_for_two_parameters_are_right(vector_add):
    """Every numpy argument is copied to a buffer of its own in C order: strided,
    reversed and Fortran-ordered views, a read-only array and the same array given for
    the output and an input all give the right result."""
    x = np.arange(16, dtype=np.float32)
    a, b = x[::2], x[:8][::-1]
    assert np.array_equal(vector_add(a=a, b=b)["c"], a + b)
    a.flags.writeable = False
    assert np.array_equal(vector_add(a=a, b=b, c=a)["c"], a + b)
    matmul = mcl.compile(EXAMPLES / "matmul" / "hopper_v2.mcpl")
    m = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_allclose(matmul(a=np.asfortranarray(m), b=m.T)["c"], m @ m.T)


@pytest.mark.parametrize("value", [True, np.bool_(True)])
def test_a_bool_is_no_size(vector_add, value):
    with pytest.raises(McplError, match=r"it takes an integer, not (np\.)?True"):
        vector_add(n=value, a=np.ones(1, np.float32), b=np.ones(1, np.float32))


@pytest.fixture(scope="module")
def black_scholes():
    return mcl.compile(EXAMPLES / "black_scholes" / "hopper_v1.mcpl")


@pytest.mark.parametrize(("value", "expected"), [
    (10**400, "'riskFree' is a float parameter of 'black_scholes': a whole number of 401 "
              "digits does not fit it"),
    # it would reach the kernel as inf
    (1e300, "1e+300 does not fit it (-3.4028234663852886e+38 .. 3.4028234663852886e+38)"),
    (True, "it takes a number, not True"),
])
def test_a_float_parameter_out_of_range_or_of_the_wrong_type(black_scholes, value, expected):
    x = np.ones(4, np.float32)
    with pytest.raises(McplError) as e:
        black_scholes(n=4, riskFree=value, volatility=0.3, stockPrice=x, optionStrike=x,
                      optionYears=x)
    assert expected in str(e.value)


def test_a_missing_scalar_that_is_no_size_is_not_called_a_size(black_scholes):
    x = np.ones(4, np.float32)
    with pytest.raises(McplError, match="needs the argument volatility$"):
        black_scholes(n=4, riskFree=0.02, stockPrice=x, optionStrike=x, optionYears=x)


def test_pyopencl_arrays_the_kernel_would_read_wrongly_are_errors(vector_add):
    """A pyopencl array is passed as its buffer: a view that starts at an offset or skips
    elements, a buffer of another context, or one buffer for an input and the output
    would give the kernel other elements than meant (a strided view was read as the
    first elements of its buffer)."""
    import pyopencl as cl
    import pyopencl.array as cla
    q = vector_add.queue
    x = cla.to_device(q, np.arange(16, dtype=np.float32))
    y = cla.to_device(q, np.ones(16, np.float32))
    cases = [
        ({"a": x[8:], "b": y[8:]}, "opencl-bad-layout", "a copy: a.copy()"),
        ({"a": x[::2], "b": y[::2]}, "opencl-bad-layout", "not consecutive in C order"),
        ({"a": x[:8], "b": y[:8], "c": x[:8]}, "opencl-aliased-arguments",
         "'c' and 'a' of 'vector_add' are the same pyopencl buffer"),
    ]
    other = cl.Context(devices=[vector_add.device])
    cases.append(({"a": cla.to_device(cl.CommandQueue(other), np.ones(8, np.float32)),
                   "b": y[:8]}, "opencl-bad-argument", "of another context"))
    for args, code, text in cases:
        with pytest.raises(McplError) as e:
            vector_add(**args)
        d = e.value.diagnostics[0]
        assert d.code == code and text in f"{d.message} {d.hint}", (code, str(e.value))
    got = vector_add(a=x[:8], b=y[:8], c=cla.zeros(q, 8, np.float32))["c"]
    assert np.array_equal(got.get(), np.arange(8) + 1)


@pytest.mark.parametrize(("args", "error", "expected"), [
    ({"repeat": 0}, ValueError, "repeat=0: time at least 1 launch"),
    ({"warmup": -1}, ValueError, "warmup=-1"),
    ({"repeat": 2.5}, TypeError, "repeat is a number of launches, not float"),
])
def test_time_with_no_launch_to_time(vector_add, args, error, expected):
    ones = np.ones(4, np.float32)
    with pytest.raises(error, match=expected):
        vector_add.time(**args, a=ones, b=ones)


@pytest.mark.parametrize("how", ["call", "time"])
def test_a_masked_array_is_refused_not_read_without_its_mask(vector_add, how):
    """numpy's conversions drop a mask silently: the kernel would add the masked-out
    elements as values. A masked array is an error naming the parameter, the call and
    the timing alike (Kernel.time copies arrays to the device before the call's checks)."""
    a = np.ma.masked_array(np.arange(4, dtype=np.float32), mask=[0, 1, 0, 0])
    with pytest.raises(McplError) as e:
        getattr(vector_add, "__call__" if how == "call" else "time")(
            a=a, b=np.ones(4, np.float32))
    d = e.value.diagnostics[0]
    assert d.code == "opencl-bad-argument"
    assert "'a' of 'vector_add' is a numpy masked array" in d.message
    assert "a.filled(value)" in d.hint and "np.asarray(a.data)" in d.hint
    # what the hint says runs
    got = vector_add(a=a.filled(0), b=np.ones(4, np.float32))["c"]
    assert list(got) == [1, 1, 3, 4]


@pytest.mark.parametrize("size", [np.ma.masked_array(4, mask=True),
                                  np.ma.masked_array(4, mask=False), np.ma.masked])
def test_a_masked_scalar_is_refused_as_a_size(vector_add, size):
    """operator.index read a masked 4 as 4 (and a masked-out one too): the kernel ran
    with the data under the mask. A masked scalar is refused as a masked array is."""
    ones = np.ones(4, np.float32)
    with pytest.raises(McplError) as e:
        vector_add(n=size, a=ones, b=ones)
    d = e.value.diagnostics[0]
    assert d.code == "opencl-bad-argument"
    assert d.message.startswith("'n' of 'vector_add' is a numpy masked scalar: the kernel "
                                "reads its value"), d.message
    assert "n.filled(value)" in d.hint and "np.asarray(n.data)" in d.hint
    assert list(vector_add(n=np.asarray(np.ma.masked_array(4).data), a=ones, b=ones)["c"]) \
        == [2, 2, 2, 2]


def test_time_does_not_make_up_the_arrays_the_kernel_reads(vector_add):
    """Kernel.time zero-filled an input left out and timed the kernel on made-up data;
    now, as a call, it names the missing input. An output may still be left out."""
    ones = np.ones(4, np.float32)
    with pytest.raises(McplError) as e:
        vector_add.time(repeat=1, warmup=0, a=ones)
    d = e.value.diagnostics[0]
    assert d.code == "opencl-missing-argument" and "reads 'b'" in d.message
    assert "b=<float32 array of shape (4,)>" in d.hint
    assert vector_add.time(repeat=1, warmup=0, a=ones, b=ones) > 0    # 'c' left out


@pytest.mark.parametrize(("kwargs", "expected"), [
    ({"device": 0}, "mcl.compile: device is a name (a str) or None, not int 0"),
    ({"target": 42}, "mcl.compile: target is a name"),
    ({"max_registers": "64"}, "max_registers is a whole number of registers or None, not str"),
    ({"search_path": "examples"}, "search_path is a list of directories, not one str: "
                                  "search_path=['examples']"),
])
def test_compile_options_of_the_wrong_type(kwargs, expected):
    with pytest.raises(TypeError) as e:
        mcl.compile(EXAMPLES / "vector_add" / "hopper_v1.mcpl", **kwargs)
    assert expected in str(e.value)
