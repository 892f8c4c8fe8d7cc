"""The printer: parse(print(ast)) == ast up to spans, for the examples and for
generated programs."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcl.mcpl import ast, parse, parse_file, print_module
from mcl.mcpl.builder import RESERVED

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").rglob("*.mcpl")) + sorted(
    (ROOT / "mcl" / "mcpl" / "lib").glob("*.mcpl"))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: str(p.relative_to(ROOT)))
def test_examples_round_trip(path):
    m = parse_file(path)
    text = print_module(m)
    again = parse(text, str(path))
    assert ast.same(m, again)
    assert print_module(again) == text  # printing is stable


def test_printed_layout():
    m = parse("module m; import perfect; perfect void f(int n, main float[n] a) "
              "{ foreach (int i in n threads) { if (i > 0) { a[i] = 1.0f; } else a[i] = 0; } }")
    assert print_module(m) == """module m;

import perfect;

perfect void f(int n, main float[n] a) {
    foreach (int i in n threads) {
        if (i > 0) {
            a[i] = 1.0f;
        } else
            a[i] = 0;
    }
}
"""


def test_dangling_else_keeps_its_if():
    inner = ast.If(ast.Name("b"), ast.ExprStmt(ast.Call("g")))
    outer = ast.If(ast.Name("a"), inner, ast.ExprStmt(ast.Call("h")))
    f = ast.Function("perfect", ast.Type("void"), "f", (), ast.Block((outer,)))
    m = parse(print_module(ast.Module("m", functions=(f,))))
    printed_if = m.functions[0].body.statements[0]
    assert printed_if.orelse is not None  # the else stayed with the outer if


# --------------------------------------------------------------------------- generated programs

names = st.sampled_from(["a", "b", "n", "i", "x_1", "sum", "tile"]).filter(
    lambda n: n not in RESERVED)
int_lits = st.integers(0, 10**6).map(lambda v: ast.Literal(v, "int"))
float_lits = st.sampled_from([0.0, 0.5, 1.0, 2.25, 1e-3, 3e10]).flatmap(
    lambda v: st.sampled_from(["", "f"]).map(lambda s: ast.Literal(v, "float", s)))
bool_lits = st.booleans().map(lambda v: ast.Literal(v, "bool"))
leaves = st.one_of(names.map(ast.Name), int_lits, float_lits, bool_lits)
types = st.builds(
    ast.Type, st.sampled_from(["int", "float", "double", "long", "bool", "point"]),
    st.lists(st.lists(names.map(ast.Name), min_size=1, max_size=3).map(tuple),
             max_size=2).map(tuple))


def extend(children):
    return st.one_of(
        st.builds(ast.Binary, st.sampled_from(list(ast.BINARY_PRECEDENCE)), children, children),
        st.builds(ast.Unary, st.sampled_from(list(ast.UNARY_OPS)), children),
        st.builds(ast.Ternary, children, children, children),
        st.builds(ast.Cast, st.sampled_from(["int", "float", "double"]).map(ast.Type), children),
        st.builds(ast.Call, st.sampled_from(["min", "sqrt", "f"]),
                  st.lists(children, max_size=3).map(tuple)),
        st.builds(ast.Index, names.map(ast.Name),
                  st.lists(st.lists(children, min_size=1, max_size=2).map(tuple),
                           min_size=1, max_size=2).map(tuple)),
        st.builds(ast.Field, names.map(ast.Name), names),
    )


exprs = st.recursive(leaves, extend, max_leaves=12)
lvalues = st.one_of(
    names.map(ast.Name),
    st.builds(ast.Index, names.map(ast.Name),
              st.lists(st.lists(exprs, min_size=1, max_size=2).map(tuple), min_size=1,
                       max_size=2).map(tuple)))
spaces = st.sampled_from([None, "main", "shared", "reg"])
comments = st.lists(st.sampled_from(["// note", "/* block */", "// x = 1;"]), max_size=2).map(
    tuple)
declarations = st.builds(
    ast.Declaration, types, names, spaces, st.booleans(),
    st.lists(st.builds(ast.View, types, names), max_size=2).map(tuple),
    st.one_of(st.none(), exprs), comments=comments)
simple = st.one_of(
    declarations,
    st.builds(ast.Assign, lvalues, st.sampled_from(ast.ASSIGN_OPS), exprs, comments=comments),
    st.builds(ast.IncDec, lvalues, st.sampled_from(["++", "--"]), comments=comments),
    st.builds(ast.ExprStmt, st.builds(ast.Call, names, st.lists(exprs, max_size=2).map(tuple)),
              comments=comments),
    st.builds(ast.Return, st.one_of(st.none(), exprs)),
    st.builds(ast.Barrier, names),
    st.builds(ast.Break, comments=comments), st.builds(ast.Continue),
    st.builds(ast.AsStatement, names.map(ast.Name),
              st.lists(st.builds(ast.View, types, names), min_size=1, max_size=2).map(tuple)),
)


def compound(children):
    blocks = st.lists(children, max_size=3).map(lambda ss: ast.Block(tuple(ss)))
    bodies = st.one_of(blocks, children)
    return st.one_of(
        blocks,
        st.builds(ast.If, exprs, bodies, st.one_of(st.none(), bodies)),
        st.builds(ast.While, exprs, bodies),
        st.builds(ast.For,
                  st.one_of(st.none(), st.builds(ast.Declaration, types, names,
                                                 init=exprs)),
                  st.one_of(st.none(), exprs),
                  st.one_of(st.none(), st.builds(ast.IncDec, names.map(ast.Name),
                                                 st.just("++"))),
                  bodies),
        st.builds(ast.ForEach, st.builds(ast.Declaration, st.just(ast.Type("int")), names,
                                         spaces), exprs, names, bodies),
    )


statements = st.recursive(simple, compound, max_leaves=10)
params = st.builds(ast.Param, types, names, spaces, st.booleans(), st.one_of(st.none(), exprs))
functions = st.builds(
    ast.Function, st.sampled_from(["perfect", "gpu"]), types, names,
    st.lists(params, max_size=3).map(tuple),
    st.lists(statements, max_size=4).map(lambda ss: ast.Block(tuple(ss))),
    comments=st.lists(st.just("// doc"), max_size=1).map(tuple))
modules = st.builds(
    ast.Module, names,
    st.lists(st.sampled_from([("perfect",), ("lib", "atomics")]).map(ast.Import), max_size=2,
             unique=True).map(tuple),
    st.lists(st.builds(ast.TypeDef, names, st.lists(st.builds(ast.RecordField, types, names),
                                                    max_size=2).map(tuple)),
             max_size=1).map(tuple),
    st.lists(functions, max_size=2).map(tuple))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(modules)
def test_generated_round_trip(m):
    text = print_module(m)
    again = parse(text)
    printed_again = print_module(again)
    assert printed_again == text
    if not _has_dangling_else(m):
        assert ast.same(again, m)


def _has_dangling_else(m: ast.Module) -> bool:
    from mcl.mcpl.printer import _ends_with_open_if

    return any(isinstance(n, ast.If) and n.orelse is not None and _ends_with_open_if(n.then)
               for n in ast.walk(m))
