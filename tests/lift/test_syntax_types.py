import pytest
import sympy
from conftest import PROGRAMS, program
from hypothesis import given, settings
from hypothesis import strategies as st

from mcl.diagnostics import McplError
from mcl.lift.ir import JOIN, Call, Param, Prim, apply, compose, mk, split
from mcl.lift.parser import parse
from mcl.lift.printer import key, show, show_program
from mcl.lift.typecheck import check_program, fun_type, type_of
from mcl.lift.types import FLOAT, ArrayType, array, size_symbol

N = size_symbol("N")
ALL = sorted(p.stem for p in PROGRAMS.glob("*.lift"))


def test_bundled_programs_are_there():
    assert {"scal", "asum", "dot", "gemv", "mm", "sum", "stencil"} <= set(ALL)


@pytest.mark.parametrize("name", ALL)
def test_bundled_programs_typecheck_and_print_round_trip(name):
    p = program(name)
    t = check_program(p)
    assert isinstance(t, ArrayType)
    again = parse(show_program(p))
    assert key(again.body) == key(p.body)


def test_split_type_is_symbolic():
    t = fun_type(split(4), [array(FLOAT, N)])
    assert t == ArrayType(ArrayType(FLOAT, sympy.Integer(4)), N / 4)
    assert str(t) == "float[N/4][4]"
    assert str(fun_type(JOIN, [t])) == "float[N]"


def test_python_api_builds_what_the_parser_builds():
    src = parse("userfun add(x: float, y: float): float = x + y\n"
                "s = fun(x: float[N]) => reduce(add, 0.0f) o join o split(4) $ x")
    add = src.userfuns["add"]
    x = Param("x", type=array(FLOAT, N))
    e = apply(compose(mk("reduce", add, "0.0f"), JOIN, split(4)), x)
    assert show(e, canonical=True) == key(src.body.body)
    assert str(type_of(e)) == "float[1]"


@pytest.mark.parametrize("text, words", [
    ("s = fun(x: float[10]) => split(3) $ x", ["split 3", "does not divide"]),
    ("s = fun(x: float) => join $ x", ["join", "expects an array"]),
    ("s = fun(x: float[N]) => transpose $ x", ["transpose", "array"]),
    ("s = fun(x: float[N], y: float[M]) => zip(x, y)", ["zip", "different lengths"]),
    ("s = fun(x: float[N]) => asVector(5) $ x", ["asVector 5"]),
])
def test_type_errors_name_the_pattern(text, words):
    with pytest.raises(McplError) as e:
        check_program(parse(text))
    d = e.value.diagnostics[0]
    assert d.code == "lift-type" and d.span is not None
    for w in words:
        assert w in d.message


@pytest.mark.parametrize("text, code", [
    ("s = fun(x: float[N]) => reduse(add, 0.0f) $ x", "lift-name"),
    ("s = fun(x: float[N]) => map(nosuch) $ x", "lift-name"),
    ("userfun f(x: float): float = foo(x)\ns = fun(x: float[N]) => map(f) $ x", "lift-name"),
    ("s = fun(x: float[N]) => map( $ x", "lift-syntax"),
])
def test_name_and_syntax_errors_are_located(text, code):
    with pytest.raises(McplError) as e:
        parse(text)
    assert e.value.diagnostics[0].code == code
    assert e.value.diagnostics[0].span is not None


LAYOUTS = [("split(2)", 2), ("join", None), ("transpose", None), ("reorderStride(2)", None)]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(["split(2)", "join", "id", "reorderStride(2)", "map(id)"]),
                min_size=1, max_size=5))
def test_printer_parser_round_trip_on_random_chains(chain):
    text = "s = fun(x: float[64]) => " + " o ".join(chain) + " $ x"
    try:
        p = parse(text)
        check_program(p)
    except McplError:
        return     # ill-typed chains are rejected, which is all we ask of them
    assert key(parse(show_program(p)).body) == key(p.body)


def test_canonical_key_ignores_parameter_names():
    a = parse("s = fun(x: float[N]) => map(fun(a) => a) $ x")
    b = parse("s = fun(y: float[N]) => map(fun(b) => b) $ y")
    assert key(a.body) == key(b.body)
    assert isinstance(a.body.body, Call) and isinstance(a.body.body.fun, Prim)
