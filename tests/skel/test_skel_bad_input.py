"""Odd values given to mcl.skel's constructors and skeletons: each is a usage error
(McplError) that says what to give, never an error from deep inside numpy or OpenCL
and never a result computed from a value silently converted."""

from __future__ import annotations

import numpy as np
import pytest

import mcl.skel as sk
from tests.conftest import error_of

pytestmark = pytest.mark.usefixtures("one_pocl_device")


@pytest.mark.parametrize("make, code, words", [
    (lambda: sk.Vector([[1, 2], [3]]), "skel-bad-container", "not an array of numbers"),
    (lambda: sk.Matrix([[1.0, 2.0], [3.0]]), "skel-bad-container", "not an array of numbers"),
    (lambda: sk.Vector(["a", "b"], dtype=np.float32), "skel-bad-container",
     "not an array of numbers"),
    (lambda: sk.Vector([1, 2], dtype="foo"), "skel-unsupported-type", "not an element type"),
    (lambda: sk.Vector(size=3, dtype="foo"), "skel-unsupported-type", "not an element type"),
    (lambda: sk.Matrix(shape=3), "skel-bad-container", "a tuple of sizes"),
    (lambda: sk.Matrix(shape="ab"), "skel-bad-container", "a tuple of sizes"),
])
def test_data_a_container_cannot_hold(make, code, words):
    """Ragged lists and unknown dtypes raised numpy's ValueError/TypeError; a shape that
    is no tuple, "'int' object is not iterable"."""
    got, message = error_of(make)
    assert got == code and words in message


def test_big_endian_data_is_data_of_its_type():
    """A big-endian float32 array was refused as 'element type >f4 has no OpenCL C
    equivalent' (with the hint to use float32)."""
    a = np.arange(5, dtype=">f4")
    v = sk.Vector(a)
    assert v.dtype == np.float32
    got = sk.Map("float f(float x) { return 2.0f * x; }")(v).to_numpy()
    assert np.array_equal(got, 2 * np.arange(5, dtype=np.float32))


@pytest.mark.parametrize("n", [2.5, "5", None])
def test_an_index_vector_of_no_whole_size(n):
    """IndexVector(2.5) held the indices 0 and 1, IndexVector("5") five, and
    IndexVector(None) raised int()'s TypeError."""
    code, message = error_of(lambda: sk.IndexVector(n))
    assert code == "skel-bad-container" and "must be a whole number" in message
    assert sk.IndexVector(np.int64(3)).shape == (3,) == sk.IndexVector(3.0).shape


AVG = "float f(float_matrix_t m) { return get(m, -1, 0) + get(m, 1, 0); }"


@pytest.mark.parametrize("make, words", [
    (lambda: sk.Stencil(AVG, None), "a stencil shape is (up, right, down, left)"),
    (lambda: sk.Stencil(AVG, 1)(sk.Matrix(np.ones((4, 4), np.float32)), iterations=True),
     "not True"),
    (lambda: sk.Stencil(AVG, 1, sync_every=2.0), "not 2.0"),
    (lambda: sk.overlap(True), "overlap(True, True)"),
    (lambda: sk.single("0"), "a device is numbered by an integer"),
    (lambda: sk.single(0.0), "a device is numbered by an integer"),
])
def test_counts_that_are_no_whole_numbers(make, words):
    """Stencil(f, None) raised "'NoneType' object is not iterable", iterations=True ran
    once, and single("0") said 'there is no device 0'."""
    _, message = error_of(make)
    assert words in message


def test_numpy_integers_count_as_integers():
    """iterations=np.int64(2), sync_every=np.int64(2) and overlap(np.int64(1)) were
    refused as 'must be a non-negative integer' (which they are)."""
    a = np.arange(16, dtype=np.float32).reshape(4, 4)
    st = sk.Stencil(AVG, 1, sync_every=np.int64(2))
    twice = st(sk.Matrix(a), iterations=np.int64(2)).to_numpy()
    assert np.array_equal(twice, st(sk.Matrix(a), iterations=2).to_numpy())
    assert sk.overlap(np.int64(1)) == sk.overlap(1)
    assert sk.single(np.int32(0)) == sk.single(0)


MUL_I = "int mul(int x, int y) { return x * y; }"
ADD_I = "int add(int x, int y) { return x + y; }"


def test_an_allpairs_identity_that_is_no_number():
    """identity="x" raised float()'s ValueError when the kernel was made."""
    code, message = error_of(lambda: sk.AllPairs(zip=MUL_I, reduce=ADD_I, identity="x"))
    assert code == "skel-bad-arguments" and "must be a number" in message


def test_an_allpairs_identity_the_result_type_cannot_hold():
    """identity=1.5 for int results was used as 1: every element came out 1 larger
    than the sum of products, with no error."""
    a = sk.Matrix(np.ones((2, 3), np.int32))
    b = sk.Matrix(np.ones((3, 2), np.int32))
    code, message = error_of(lambda: sk.AllPairs(zip=MUL_I, reduce=ADD_I, identity=1.5)(a, b))
    assert code == "skel-type-mismatch" and "1.5" in message and "int" in message
    got = sk.AllPairs(zip=MUL_I, reduce=ADD_I, identity=np.int64(0))(a, b).to_numpy()
    assert np.array_equal(got, np.full((2, 2), 3))


@pytest.mark.parametrize("count", ["2", 2.5, True])
def test_a_number_of_devices_that_is_no_count(count):
    """init("2") raised "'<' not supported between instances of 'str' and 'int'" and
    init(2.5) a TypeError about slice indices."""
    code, message = error_of(lambda: sk.init(count))
    assert code == "skel-no-such-device" and "give the number of devices" in message


def test_a_number_of_devices_in_the_environment_that_is_no_count(monkeypatch):
    """MCL_SKEL_DEVICES=two raised int()'s ValueError."""
    monkeypatch.setenv("MCL_SKEL_DEVICES", "two")
    code, message = error_of(sk.init)
    assert code == "skel-no-such-device" and "MCL_SKEL_DEVICES='two'" in message
    monkeypatch.setenv("MCL_SKEL_DEVICES", "1")
    assert sk.init().count == 1


def test_allpairs_build_options_in_one_string():
    """options="-cl-mad-enable" became one option per character and the kernel was
    reported as not compiling (INVALID_BUILD_OPTIONS)."""
    mm = sk.AllPairs(zip=MUL_I, reduce=ADD_I, options="-cl-mad-enable  -cl-no-signed-zeros")
    assert mm.options == ("-cl-mad-enable", "-cl-no-signed-zeros")
    a = sk.Matrix(np.ones((2, 3), np.int32))
    assert np.array_equal(mm(a, sk.Matrix(np.ones((3, 2), np.int32))).to_numpy(),
                          np.full((2, 2), 3))


def test_a_function_holding_a_nul_character():
    """The OpenCL compiler read the source only up to the NUL: pyopencl's LogicError
    'clCreateKernel failed: INVALID_KERNEL_NAME' at the call."""
    code, message = error_of(lambda: sk.Map("float f(float x) { return x; }\0"))
    assert code == "skel-bad-function" and "NUL character" in message
