"""Skeletons misused at run time, as a new user would: each is a usage error
(McplError) naming the skeleton, the argument and what it takes, never an error from
deep inside numpy or OpenCL and never a result computed from a silently wrong value."""

from __future__ import annotations

import numpy as np
import pytest

import mcl.skel as sk
from mcl.diagnostics import McplError
from tests.conftest import error_of

pytestmark = pytest.mark.usefixtures("one_pocl_device")


ADD_I = "int add(int x, int y) { return x + y; }"
ADD_F = "float add(float x, float y) { return x + y; }"
EMPTY_I = np.zeros(0, np.int32)


@pytest.mark.parametrize("identity", ["x", "0", [0], True, 1j])
def test_a_reduce_identity_that_is_no_number(identity):
    """Reduce(f, identity="x") of an empty Vector raised int()'s ValueError, "0" and
    True were used as 0 and 1, and [0] made a 'one-element' Vector of shape (1, 1)."""
    code, message = error_of(lambda: sk.Reduce(ADD_I, identity=identity))
    assert code == "skel-bad-arguments" and "Reduce identity= must be a number" in message


@pytest.mark.parametrize("identity, data", [
    (1.5, EMPTY_I), (2 ** 40, EMPTY_I), (float("nan"), EMPTY_I),
    (1.5, np.arange(4, dtype=np.int32)),
    (1e40, np.zeros(0, np.float32))])
def test_a_reduce_identity_the_element_type_cannot_hold(identity, data):
    """identity=1.5 for int elements gave 1 for an empty Vector, 2**40 numpy's
    OverflowError, nan a ValueError, 1e40 for floats inf (with a RuntimeWarning); a
    Vector with elements hid the mistake until the day it was empty."""
    code, message = error_of(lambda: sk.Reduce(ADD_I if data.dtype.kind == "i" else ADD_F,
                                               identity=identity)(sk.Vector(data)))
    assert code == "skel-type-mismatch" and "the identity" in message
    assert "of Reduce 'add' is not a" in message, message


def test_reduce_identities_of_the_element_type_still_serve():
    assert sk.Reduce(ADD_I, identity=np.int64(3))(sk.Vector(EMPTY_I)).to_numpy()[0] == 3
    assert sk.Reduce(ADD_I, identity=2.0)(sk.Vector(EMPTY_I)).to_numpy().dtype == np.int32
    inf = sk.Reduce(ADD_F, identity=float("-inf"))(sk.Vector(np.zeros(0, np.float32)))
    assert inf.to_numpy()[0] == -np.inf
    total = sk.Reduce(ADD_I, identity=0)(sk.Vector(np.arange(5, dtype=np.int32)))
    assert total.to_numpy()[0] == 10


def test_an_allpairs_identity_a_float_cannot_hold():
    """identity=1e40 for float results was the literal 1e+40 in the kernel: inf."""
    mm = sk.AllPairs(zip="float m(float x, float y) { return x * y; }", reduce=ADD_F,
                     identity=1e40)
    a, b = sk.Matrix(np.ones((2, 3), np.float32)), sk.Matrix(np.ones((3, 2), np.float32))
    code, message = error_of(lambda: mm(a, b))
    assert code == "skel-type-mismatch" and "AllPairs reduce 'add' is not a float" in message


def test_the_way_reduce_documents_to_read_its_result_reads_it():
    """Reduce's docstring said '``.value`` reads it': the result, a Vector, has no
    attribute value (AttributeError)."""
    import re
    how = re.search(r"a single device \(``(\.[^`]+)`` reads it\)", sk.Reduce.__doc__).group(1)
    result = sk.Reduce(ADD_I)(sk.Vector(np.arange(5, dtype=np.int32)))
    assert eval(f"result{how}", {"result": result}) == 10


X = np.arange(6, dtype=np.float32)


@pytest.mark.parametrize("make, words", [
    (lambda: sk.Map("float f(float* x) { return *x; }"),
     "parameter 'x' of the Map function 'f' is a pointer (float*); a Map passes it an element"),
    (lambda: sk.Zip("float f(float a, __global const float* b) { return a + b[0]; }"),
     "parameter 'b' of the Zip function 'f' is a pointer"),
    (lambda: sk.Reduce("float f(float* a, float* b) { return *a + *b; }"),
     "parameter 'a' of the Reduce function 'f' is a pointer"),
    (lambda: sk.AllPairs(zip="float m(float* x, float y) { return *x * y; }", reduce=ADD_F),
     "parameter 'x' of the AllPairs function 'm' is a pointer"),
])
def test_an_element_parameter_that_is_a_pointer(make, words):
    """The skeleton's kernel passed the element to the pointer: 'does not compile' with
    the OpenCL compiler's log about an incompatible type in the skeleton's own code."""
    code, message = error_of(make)
    assert code == "skel-bad-function" and words in message, message


@pytest.mark.parametrize("space", ["__local", "local", "__private"])
def test_an_additional_pointer_outside_global_memory(space):
    """A __local float* given a Vector was an OpenCL error when launched
    (clSetKernelArg failed: INVALID_ARG_VALUE), a __private one did not compile."""
    code, message = error_of(lambda: sk.Map(f"float f(float x, {space} float* t) "
                                            "{ return x; }"))
    assert code == "skel-bad-function" and "parameter 't' of the Map function 'f' points " \
        f"to {space.strip('_')} memory" in message, message


def test_additional_pointers_in_global_or_constant_memory_still_serve():
    table = sk.Vector(np.array([1.0, 2.0], np.float32), distribution=sk.copy())
    for param in ("const float* t", "__global const float* t", "__constant float* t"):
        f = sk.Map(f"float f(float x, {param}) {{ return x + t[1]; }}")
        assert np.array_equal(f(sk.Vector(X), table).to_numpy(), X + 2)


def _remade_devices():
    sk.init(num_devices=1, platform="Portable Computing Language")


@pytest.mark.parametrize("call", [
    lambda old: sk.Map("float f(float x, __global const float* t) { return x + t[0]; }")(
        sk.Vector(X), old),
    lambda old: sk.Zip(ADD_F)(sk.Vector(X), old),
    lambda old: sk.Reduce(ADD_F)(sk.Map("float g(float x, const float* t) { return t[0]; }")
                                 .lazy(sk.Vector(X), old)),
])
def test_a_container_of_an_earlier_init_among_a_calls_containers(call):
    """A table made before init() was called again, passed as an additional argument,
    gave the kernel a buffer of another OpenCL context (PoCL ran it; a GPU driver fails
    with INVALID_MEM_OBJECT or reads the other context's memory)."""
    old = sk.Vector(X, distribution=sk.copy())
    _remade_devices()
    code, message = error_of(lambda: call(old))
    assert code == "skel-stale-container" and "was made before mcl.skel.init() chose " \
        "other devices" in message, message
    assert "argument 2 of this" in message or "argument 2 of the deferred Map" in message


def test_containers_of_one_earlier_init_still_compute_together():
    a, b = sk.Vector(X), sk.Vector(X)
    _remade_devices()
    assert np.array_equal(sk.Zip(ADD_F)(a, b).to_numpy(), 2 * X)


@pytest.mark.parametrize("second, words", [
    (X, "its second input is a ndarray"),
    (sk.IndexVector, "its second input is an IndexVector"),
    (2.0, "its second input is a float")])
def test_a_zip_input_that_is_no_container_is_named(second, words):
    """'Zip takes two Vectors or two Matrices' did not say which input was not one, nor
    what it was (a numpy array the user forgot to wrap)."""
    other = second(6) if second is sk.IndexVector else second
    with pytest.raises(McplError) as e:
        sk.Zip(ADD_F)(sk.Vector(X), other)
    d = e.value.diagnostics[0]
    assert d.code == "skel-bad-arguments" and words in d.message, d.message
    assert (d.hint is not None) == isinstance(other, np.ndarray)
