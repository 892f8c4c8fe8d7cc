"""What a new user gets wrong: each is a usage error naming the problem (never a
result computed from converted or missing data, never an OpenCL error)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import mcl.skel as sk
from mcl.diagnostics import McplError


@pytest.fixture(autouse=True)
def one_device():
    sk.init(num_devices=1, platform="Portable Computing Language")


def code_of(call) -> str:
    with pytest.raises(McplError) as e:
        call()
    return e.value.diagnostics[0].code, e.value.diagnostics[0].message


X = np.arange(6, dtype=np.float32) + 0.5


@pytest.mark.parametrize("value, why", [
    (None, "None was given"), ("2", "'2' was given"), (np.ones(3), "array"),
    (2.7, "not a whole number"), (float("nan"), "not a whole number"),
    (2 ** 40, "holds -2147483648 to 2147483647")])
def test_scalar_arguments_are_not_converted_with_loss(value, why):
    """C would make None NaN, 2.7 the int 2; an array was an OpenCL error."""
    f = sk.Map("float f(float x, int k) { return x * k; }")
    code, message = code_of(lambda: f(sk.Vector(X), value))
    assert code == "skel-bad-arguments" and why in message, message
    g = sk.Map("float g(float x, float s) { return x * s; }")
    assert code_of(lambda: g(sk.Vector(X), None))[0] == "skel-bad-arguments"
    assert code_of(lambda: g(sk.Vector(X), 1e40))[0] == "skel-bad-arguments"
    assert np.array_equal(g(sk.Vector(X), np.float64(2.0)).to_numpy(), X * 2)
    assert np.isnan(g(sk.Vector(X), float("nan")).to_numpy()).all()
    assert np.array_equal(f(sk.Vector(X), 3.0).to_numpy(), X * 3)


@pytest.mark.parametrize("value", [True, False, np.True_, np.array(False)])
def test_a_bool_is_no_scalar_argument(value):
    """Python's True is an int to isinstance: Map(f)(X, True) multiplied by 1 silently;
    np.array(True) passed too."""
    f = sk.Map("float f(float x, int k) { return x * k; }")
    code, message = code_of(lambda: f(sk.Vector(X), value))
    assert code == "skel-bad-arguments", message
    assert message == f"parameter 'k' of 'f' is an int; {value!r} was given (a bool, not a " \
                      "number)"
    g = sk.Map("float g(float x, float s) { return x * s; }")
    assert "'s' of 'g'" in code_of(lambda: g.lazy(sk.Vector(X), value))[1]
    assert np.array_equal(f(sk.Vector(X), int(value)).to_numpy(), X * int(value))


def test_the_messages_put_an_before_a_vowel():
    """The scalar-argument messages said 'is a int' (and 'a int holds', 'pass a number a
    int holds'); 'a uint' and 'a float' stay as they are."""
    f = sk.Map("float f(float x, int k) { return x * k; }")
    with pytest.raises(McplError) as e:
        f(sk.Vector(X), 2 ** 40)
    d = e.value.diagnostics[0]
    assert d.message == "parameter 'k' of 'f' is an int; 1099511627776 was given (an int " \
                        "holds -2147483648 to 2147483647)"
    assert d.hint == "pass a number an int holds"
    u = sk.Map("float u(float x, uint k) { return x * k; }")
    assert "'k' of 'u' is a uint; -1 was given (a uint holds 0 to 4294967295)" \
        in code_of(lambda: u(sk.Vector(X), -1))[1]
    assert "'s' of 'g' is a float; None was given" in code_of(lambda: sk.Map(
        "float g(float x, float s) { return x * s; }")(sk.Vector(X), None))[1]
    assert code_of(lambda: sk.IndexVector(2.5))[1].startswith("an IndexVector's size must be")


MASKED = np.ma.masked_array(X, mask=[0, 1, 0, 0, 1, 0])


@pytest.mark.parametrize("make, subject, name", [
    (lambda: sk.Vector(MASKED), "the data of a Vector", "data"),
    (lambda: sk.Matrix(MASKED.reshape(2, 3)), "the data of a Matrix", "data"),
    (lambda: sk.Vector(X).__setitem__(slice(None), MASKED), "the value written into a Vector",
     "value")])
def test_a_masked_array_is_refused_not_held_without_its_mask(make, subject, name):
    """np.array and numpy's assignment drop a mask: the container held the masked-out
    elements as values, silently. Refused as a compiled kernel refuses one."""
    with pytest.raises(McplError) as e:
        make()
    d = e.value.diagnostics[0]
    assert d.code == "skel-bad-container"
    assert d.message.startswith(f"{subject} is a numpy masked array: "), d.message
    assert f"{name}.filled(value)" in d.hint and f"np.asarray({name}.data)" in d.hint
    assert np.array_equal(sk.Vector(MASKED.filled(0)).to_numpy(), MASKED.filled(0))


@pytest.mark.parametrize("value", [np.ma.masked_array(3, mask=True),
                                   np.ma.masked_array(3, mask=False), np.ma.masked])
def test_a_masked_scalar_argument_is_refused(value):
    """A masked 3 was passed as 3, np.ma.masked as 0.0 to a float parameter."""
    for src, name in (("float f(float x, int k) { return x * k; }", "k"),
                      ("float g(float x, float s) { return x * s; }", "s")):
        f = sk.Map(src)
        code, message = code_of(lambda f=f: f(sk.Vector(X), value))
        assert code == "skel-bad-arguments", message
        assert message.startswith(f"the value given for parameter '{name}' of "
                                  f"'{src[6]}' is a numpy masked scalar"), message


@pytest.mark.parametrize("use", [
    lambda d: d.to_numpy(), lambda d: np.asarray(d), lambda d: d[0], lambda d: sk.Vector(d),
    len, list])
def test_a_deferred_call_read_as_a_container_says_to_compute_it(use):
    """Zip(f).lazy(X, Y).to_numpy() was an AttributeError, np.asarray of it a 0-d array
    of objects."""
    d = sk.Zip("float mult(float x, float y) { return x * y; }").lazy(sk.Vector(X),
                                                                       sk.Vector(X))
    code, message = code_of(lambda: use(d))
    assert code == "skel-not-computed", message
    assert message.startswith("Zip(mult).lazy(...) is a deferred call, not a Vector: it has "
                              "no elements to ")
    assert np.array_equal(d.compute().to_numpy(), X * X)


def test_a_deferred_map_over_indices_is_no_index_vector():
    """The message called the deferred Map over an IndexVector 'a IndexVector'; its
    result, what compute() returns, is a Vector."""
    d = sk.Map("float h(int i) { return i; }").lazy(sk.IndexVector(4))
    code, message = code_of(lambda: len(d))
    assert code == "skel-not-computed" and "a deferred call, not a Vector" in message
    assert d and type(d.compute()) is sk.Vector        # a deferred call is true


SCALE = "float f(float x, int k) { return x * k; }"
MULT = "float mult(float x, float y) { return x * y; }"


@pytest.mark.parametrize("call, message, hint", [
    (lambda: sk.Map(SCALE).lazy(sk.Vector(X), k=2),
     "Map(f).lazy takes 1 container and the additional argument(s) of its function 'f' (k), "
     "by position; called with 1 argument and the keyword(s) k",
     "call it as Map(...).lazy(x, *additional)"),
    (lambda: sk.Map(SCALE).lazy(),
     "Map(f).lazy takes 1 container and the additional argument(s) of its function 'f' (k), "
     "by position; called with 0 arguments", "call it as Map(...).lazy(x, *additional)"),
    (lambda: sk.Zip(MULT).lazy(sk.Vector(X)),
     "Zip(mult).lazy takes 2 containers, by position; called with 1 argument",
     "call it as Zip(...).lazy(a, b, *additional)"),
    (lambda: sk.Map(SCALE).lazy(sk.Vector(X), 2).compute(1),
     "Map(f).lazy(...).compute() takes no arguments (the call's containers and additional "
     "arguments were given to lazy); called with 1 argument",
     "call .compute(); for other arguments, make another deferred call, Map(f).lazy(...), or "
     "call Map(f)(...)"),
    (lambda: sk.Map(SCALE).lazy(sk.Vector(X), 2).compute(k=3),
     "called with 0 arguments and the keyword(s) k", "call .compute()"),
])
def test_a_deferred_call_of_the_wrong_form_is_said_in_the_skeletons_terms(call, message, hint):
    """Map(f).lazy(X, k=1), Zip(f).lazy(X) and d.compute(1) were Python TypeErrors about
    Map.lazy() and Deferred.compute(), where a call of the skeleton says what it takes."""
    with pytest.raises(McplError) as e:
        call()
    d = e.value.diagnostics[0]
    assert d.code == "skel-bad-arguments"
    assert message in d.message, d.message
    assert d.hint.startswith(hint), d.hint
    assert np.array_equal(sk.Map(SCALE).lazy(sk.Vector(X), 2).compute().to_numpy(), X * 2)


@pytest.mark.parametrize("make, named, hint", [
    (lambda: sk.Reduce("float add(float a, float b) { return a + b; }"), "Reduce(add)",
     "call it: Reduce(add)(x); to reduce a Map or Zip without a temporary container, give it "
     "the deferred call: Reduce(add)(Map(f).lazy(X))"),
    (lambda: sk.Scan("float add(float a, float b) { return a + b; }"), "Scan(add)",
     "call it: Scan(add)(x)"),
    (lambda: sk.AllPairs(zip=MULT, reduce="float add(float a, float b) { return a + b; }"),
     "AllPairs(...)", "call it: AllPairs(...)(a, b, *additional)")])
def test_a_skeleton_without_a_deferred_form_says_so(make, named, hint):
    """Reduce(f).lazy was an AttributeError: only Map and Zip have a deferred form."""
    with pytest.raises(McplError) as e:
        make().lazy(sk.Vector(X))
    d = e.value.diagnostics[0]
    assert d.code == "skel-no-lazy-form"
    assert d.message.startswith(f"{named}.lazy(...): "), d.message
    assert "has no deferred form; only a Map or Zip call is deferred" in d.message
    assert d.hint == hint


def test_a_pointer_argument_of_another_element_type():
    """A float* given a Vector of int32 read the integers' bits as floats."""
    f = sk.Map("float f(float x, __global const float* t) { return x + t[1]; }")
    table = sk.Vector(np.arange(3, dtype=np.int32), distribution=sk.copy())
    code, message = code_of(lambda: f(sk.Vector(X), table))
    assert code == "skel-type-mismatch" and "points to float" in message


@pytest.mark.parametrize("make", [
    lambda: sk.Reduce("int f(int a, int b) { return a + b; }")(sk.Vector(X)),
    lambda: sk.Scan("int f(int a, int b) { return a + b; }")(sk.Vector(X)),
    lambda: sk.Reduce("float f(float a, float b) { return a + b; }")(
        sk.Vector(np.array([2 ** 40, 1, 2 ** 40]))),
    lambda: sk.Reduce("int f(float a, float b) { return a + b; }")(sk.Vector(X)),
    lambda: sk.Reduce("int f(int a, int b) { return a + b; }")(
        sk.Map("float h(float x) { return x; }").lazy(sk.Vector(X))),
    lambda: sk.Map("int f(int x) { return 2 * x; }")(sk.Vector(X)),
    lambda: sk.Zip("float f(float x, int y) { return x + y; }")(sk.Vector(X), sk.Vector(X)),
    lambda: sk.AllPairs(zip="int m(int x, int y) { return x * y; }",
                        reduce="int a(int x, int y) { return x + y; }")(
        sk.Matrix(X.reshape(2, 3)), sk.Matrix(X.reshape(3, 2))),
])
def test_an_operator_of_another_type_than_the_elements(make):
    """An int operator over floats summed truncated elements (45 for 50), a float one
    over int64 lost the low bits, silently."""
    assert code_of(make)[0] == "skel-type-mismatch"


def test_operators_of_the_element_type_still_run():
    add = sk.Reduce("double add(double a, double b) { return a + b; }")
    assert add(sk.Vector(X.astype(np.float64))).to_numpy()[0] == X.sum()
    ints = sk.Map("float f(int i) { return i * 0.5f; }")(sk.Vector(np.arange(4, dtype=np.int32)))
    assert np.array_equal(ints.to_numpy(), np.arange(4) * 0.5)       # int -> float: exact
    narrow = sk.Map("float f(float x) { return x; }")(sk.Vector(X.astype(np.float64)))
    assert np.array_equal(narrow.to_numpy(), X)                      # double -> float


@pytest.mark.parametrize("data", [np.array(5.0, np.float32), 5.5, True])
def test_a_vector_of_a_scalar(data):
    """Vector(np.array(5.0)) and Vector(5.5) were Vectors of five zeros."""
    code, message = code_of(lambda: sk.Vector(data))
    assert code == "skel-needs-vector" and "size (an integer)" in message
    assert sk.Vector(np.int64(3)).shape == (3,)


def test_which_function_of_a_source_customises():
    """A helper defined before the function was taken as the customising function."""
    f = sk.Map("float sq(float x) { return x * x; }\n"
               "float f(float x) { return sq(x) + 1.0f; }")
    assert f.func.name == "f"
    assert np.array_equal(f(sk.Vector(X)).to_numpy(), X * X + 1)
    g = sk.Map("#define K 2.0f\nfloat g(float x) { return x * K; }")    # was 'f float'
    assert np.array_equal(g(sk.Vector(X)).to_numpy(), X * 2)
    h = sk.Map("float h(float x) { if (x > 0) { return x; } return 0; }")
    assert h.func.name == "h"


def test_unbalanced_braces_are_said_before_building():
    code, message = code_of(lambda: sk.Map("float f(float x) {\n  if (x > 0) {\n return x;\n}"))
    assert code == "skel-bad-function" and "2 '{' and 1 '}'" in message


M = np.arange(35, dtype=np.float32).reshape(7, 5)


@pytest.mark.parametrize("make, code", [
    (lambda: sk.MapOverlap("float f(float_matrix_t m) { return get(m, -1, 0); }", 1,
                           neutral="x"), "skel-bad-arguments"),
    (lambda: sk.MapOverlap("float f(float_matrix_t m) { return get(m, -1, 0); }", True),
     "skel-bad-arguments"),
    (lambda: sk.MapOverlap("int f(int_matrix_t m) { return get(m, -1, 0); }", 1,
                           neutral=1.5)(sk.Matrix(M.astype(np.int32))), "skel-type-mismatch"),
    (lambda: sk.MapOverlap("float f(float x) { return x; }", 1)(sk.Matrix(M)),
     "skel-type-mismatch"),
    (lambda: sk.MapOverlap("float f(float_matrix_t m) { return get(m, -2, 0); }", 1),
     "skel-reads-beyond-reach"),
    (lambda: sk.Stencil("float f(float_matrix_t m) { return get(m, 2, 0); }", (1, 1, 1, 1)),
     "skel-reads-beyond-reach"),
])
def test_neighbour_skeletons_misused(make, code):
    """A string neutral value gave garbage, 1.5 for an int matrix 1; a read two rows up
    with size 1 gave another part's rows on several devices."""
    assert code_of(make)[0] == code


def test_neighbour_skeletons_take_numpy_sizes_and_values():
    f = sk.MapOverlap("float f(float_matrix_t m) { return get(m, -1, 0) + get(m, 0, 3); }",
                      np.int64(1), neutral=np.float32(0.5))
    ref = np.vstack([np.full((1, 5), 0.5), M[:-1]]) + np.hstack([M[:, 3:], np.full((7, 3), 0.5)])
    assert np.array_equal(f(sk.Matrix(M)).to_numpy(), ref)


def explain(tmp_path, text: str, *options: str) -> subprocess.CompletedProcess:
    prog = tmp_path / "app.py"
    prog.write_text(text)
    return subprocess.run([sys.executable, "-m", "mcl", "skel", "explain", *options, str(prog)],
                          capture_output=True, text=True, timeout=300)


def test_explain_a_program_that_does_not_parse_or_fails(tmp_path):
    """Both were 'internal error: this is a bug in mcl' with mcl's traceback."""
    r = explain(tmp_path, "import mcl.skel as sk\nx = (\n")
    assert r.returncode == 1 and "internal error" not in r.stderr
    assert "app.py:2:5: error: the program does not parse: '(' was never closed" in r.stderr
    r = explain(tmp_path, "def f():\n    raise ValueError('bad input')\nf()\n")
    assert r.returncode == 1 and "internal error" not in r.stderr
    assert "ValueError: bad input" in r.stderr and "mcl/skel" not in r.stderr
    assert "raised ValueError" in r.stderr


def test_explain_with_more_devices_than_the_node(tmp_path):
    """The report spoke of gpus.gpu[2] of a node of two."""
    r = explain(tmp_path, "print(1)\n", "--devices", "3")
    assert r.returncode == 2 and "node 'h200x2' has 2" in r.stderr


@pytest.mark.parametrize("make", [lambda: sk.Vector(size=5.5), lambda: sk.Matrix(shape=(2, 2.5)),
                                  lambda: sk.Vector(size="4")])
def test_a_size_that_is_no_whole_number_is_refused(make):
    """Vector(size=5.5) held 5 elements."""
    code, message = code_of(make)
    assert code == "skel-bad-container" and "must be a whole number" in message


def test_whole_sizes_of_any_number_type_are_sizes():
    assert sk.Vector(size=np.int64(3)).shape == (3,)
    assert sk.Matrix(shape=(2, 4.0)).shape == (2, 4)


def test_a_type_mismatch_says_an_int():
    m = sk.Map("int f(int x) { return x; }")
    with pytest.raises(McplError) as e:
        m(sk.Vector(np.ones(4, np.float32)))
    assert "is an int, but" in str(e.value)


def test_explain_a_program_that_exits(tmp_path):
    """sys.exit('message') said 'the program exited with status message', and the
    message was not printed as Python prints it."""
    r = explain(tmp_path, "import sys\nsys.exit('no input file')\n")
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stderr.splitlines()[0] == "no input file"
    assert f"mcl: the program {tmp_path / 'app.py'} exited with status 1; nothing to " \
        "explain" in r.stderr
    r = explain(tmp_path, "import sys\nsys.exit(4)\n")
    assert r.returncode == 1 and "app.py exited with status 4" in r.stderr


def test_explain_without_a_program_asks_only_for_the_program(run_cli):
    """argparse said 'the following arguments are required: program, args'."""
    code, _, err = run_cli("skel", "explain")
    assert code == 2
    assert err.rstrip().endswith("the following arguments are required: program")
