"""Bad input: clear McplErrors at the user's lines; MCPL customising functions."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import mcl.skel as sk
from mcl.diagnostics import McplError

DATA = Path(__file__).parent / "data"


@pytest.fixture(autouse=True)
def one_device():
    sk.init(num_devices=1, platform="Portable Computing Language")


def test_build_error_points_at_the_users_line():
    f = sk.Map("""float f(float x) {
        float y = x * 2.0f;
        return y + undefined_thing;
    }""")
    v = sk.Vector(np.ones(4, np.float32))
    with pytest.raises(McplError) as e:
        f(v)
    d = e.value.diagnostics[0]
    assert d.code == "skel-function-build" and "undefined_thing" in d.message
    # the caret goes to the Python file, at the identifier inside the string literal
    assert d.span.file == __file__
    lines = Path(__file__).read_text().splitlines()
    assert lines[d.span.line - 1][d.span.column - 1:].startswith("undefined_thing")
    assert np.array_equal(np.asarray(v), np.ones(4))


def test_zip_of_different_sizes():
    z = sk.Zip("float f(float a, float b) { return a + b; }")
    with pytest.raises(McplError) as e:
        z(sk.Vector(np.ones(3, np.float32)), sk.Vector(np.ones(4, np.float32)))
    assert e.value.diagnostics[0].code == "skel-size-mismatch"


def test_matrix_where_vector_needed():
    with pytest.raises(McplError) as e:
        sk.Scan("float f(float a, float b) { return a + b; }")(sk.Matrix(np.ones((2, 2))))
    assert e.value.diagnostics[0].code == "skel-needs-vector"
    with pytest.raises(McplError) as e:
        sk.MapOverlap("float f(float_matrix_t m) { return get(m, 0, 0); }", 1)(
            sk.Vector(np.ones(3, np.float32)))
    assert e.value.diagnostics[0].code == "skel-needs-matrix"


def test_wrong_arguments():
    f = sk.Map("float f(float x, float a) { return a * x; }")
    v = sk.Vector(np.ones(3, np.float32))
    with pytest.raises(McplError) as e:
        f(v)
    assert e.value.diagnostics[0].code == "skel-bad-arguments"
    with pytest.raises(McplError) as e:
        sk.Map("float f(float x, __global float* t) { return t[0]; }")(
            v, sk.Vector(np.ones(2, np.float32)))
    assert e.value.diagnostics[0].code == "skel-needs-distribution"
    with pytest.raises(McplError) as e:
        sk.Map("no function here")
    assert e.value.diagnostics[0].code == "skel-bad-function"
    with pytest.raises(McplError):
        sk.Reduce("float f(float x) { return x; }")


def test_a_call_with_too_few_or_too_many_containers():
    """The skeleton says what it takes, not Python what a private method takes."""
    v = sk.Vector(np.ones(4, np.float32))
    add = "float f(float a, float b) { return a + b; }"
    calls = {"an AllPairs takes 2 containers; called with 1 argument":
             lambda: sk.AllPairs(zip=add, reduce=add)(sk.Matrix(np.ones((2, 2), np.float32))),
             "a Zip takes 2 containers; called with 1 argument": lambda: sk.Zip(add)(v),
             "a Reduce takes 1 container; called with 2 arguments":
             lambda: sk.Reduce(add)(v, v),
             "a Map takes 1 container and the additional argument(s) of its function 'f' "
             "(a); called with 2 arguments and the keyword(s) iterations":
             lambda: sk.Map("float f(float x, float a) { return a * x; }")(v, 2.0,
                                                                          iterations=3)}
    for message, call in calls.items():
        with pytest.raises(McplError) as e:
            call()
        d = e.value.diagnostics[0]
        assert d.code == "skel-bad-arguments" and d.message == message, d.message
        assert d.hint.startswith("call it as ")
    assert np.array_equal(np.asarray(v), np.ones(4))
    with pytest.raises(McplError) as e:
        sk.Map("float f(float x, float a) { return a * x; }")(v, "text")
    assert e.value.diagnostics[0].message == "parameter 'a' of 'f' is a float; 'text' was given"


def test_containers_beyond_32_bit_indices_are_refused():
    """The skeletons' kernels index with 32-bit integers: a container of more than
    2^31 - 1 elements is a usage error (made without data, nothing is allocated), and
    so is an AllPairs whose result would be one, before any kernel runs."""
    for make in (lambda: sk.Vector(size=2 ** 31), lambda: sk.Matrix((50000, 50000)),
                 lambda: sk.IndexVector(2 ** 31)):
        with pytest.raises(McplError) as e:
            make()
        d = e.value.diagnostics[0]
        assert d.code == "skel-too-large" and "32-bit integers, up to 2,147,483,647" \
            in d.message, d.message
    assert sk.Vector(size=2 ** 31 - 1, dtype=np.uint8).shape == (2 ** 31 - 1,)
    mm = sk.AllPairs(zip="float mul(float x, float y) { return x * y; }",
                     reduce="float add(float x, float y) { return x + y; }")
    a, b = sk.Matrix(np.ones((46341, 1), np.float32)), sk.Matrix(np.ones((1, 46341), np.float32))
    with pytest.raises(McplError) as e:
        mm(a, b)
    assert "a Matrix of shape (46341, 46341) holds 2,147,488,281 elements" in \
        e.value.diagnostics[0].message


def test_mcpl_functions():
    saxpy = sk.Zip(sk.mcpl_function(DATA / "funcs.mcpl", "saxpy"))
    x, y = np.arange(5, dtype=np.float32), np.ones(5, np.float32)
    assert np.allclose(saxpy(sk.Vector(x), sk.Vector(y), 3.0).to_numpy(), 3 * x + y)
    total = sk.Reduce(sk.mcpl_function(DATA / "funcs.mcpl", "add"))(sk.Vector(x))
    assert total.to_numpy()[0] == x.sum()


def test_mcpl_function_errors(tmp_path):
    with pytest.raises(McplError) as e:
        sk.mcpl_function(DATA / "funcs.mcpl", "nothing")
    assert e.value.diagnostics[0].code == "skel-unknown-function"
    bad = tmp_path / "bad.mcpl"
    bad.write_text("module bad;\nimport perfect;\nperfect float f(float x) {\n  return y;\n}\n")
    with pytest.raises(McplError) as e:
        sk.mcpl_function(bad, "f")
    d = e.value.diagnostics[0]
    assert d.span.file.endswith("bad.mcpl") and d.span.line == 4


def test_program_cache_on_disk(tmp_path, monkeypatch):
    from mcl.skel import program
    monkeypatch.setenv("MCL_SKEL_CACHE", str(tmp_path))
    src = "float f(float x) { return x + 41.0f; }"
    v = sk.Vector(np.ones(3, np.float32))
    before = dict(program.stats)
    assert sk.Map(src)(v).to_numpy()[0] == 42
    assert program.stats["built"] == before["built"] + 1
    assert list(tmp_path.glob("*.bin"))
    program._memory.clear()
    assert sk.Map(src)(v).to_numpy()[0] == 42
    assert program.stats["disk"] == before["disk"] + 1
    for f in tmp_path.glob("*.bin"):       # a damaged binary is rebuilt, not trusted
        f.write_bytes(b"garbage")
    program._memory.clear()
    assert sk.Map(src)(v).to_numpy()[0] == 42
