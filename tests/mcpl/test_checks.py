"""Each semantic check with a program that violates it and the message it gets;
the examples check clean; the resolution tables."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcl.mcpl import ast, check, parse

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").rglob("*.mcpl"))
LIB = sorted((ROOT / "mcl" / "mcpl" / "lib").glob("*.mcpl"))


def diags(src: str, hw: str = "nvidia"):
    module = parse(f"module t;\nimport {hw};\n{src}\n", "t.mcpl")
    return check(module).diagnostics


def kernel(body: str, hw: str = "nvidia", params: str = "int n, global float[n] a"):
    return diags(f"{hw} void k({params}) {{\n{body}\n}}", hw)


def codes(ds):
    return [d.code for d in ds if d.is_error]


@pytest.mark.parametrize("path", EXAMPLES + LIB, ids=lambda p: str(p.relative_to(ROOT)))
def test_examples_check_clean(path):
    result = check(path)
    assert [str(d.span) + " " + d.message for d in result.diagnostics] == []


INNER = "foreach (int b in n blocks) {{ foreach (int t in 32 threads) {{ {} }} }}"

CASES = [
    # (program body, code, words of the message, words of the hint)
    (INNER.format("a[t] = q;"), "mcpl-undeclared", "'q' is not declared", None),
    (INNER.format("a[t] = nn;"), "mcpl-undeclared", "'nn'", "did you mean 'n'?"),
    (INNER.format("int x = 1; int x = 2;"), "mcpl-redeclared", "already declared", None),
    (INNER.format("foo y;"), "mcpl-unknown-type", "unknown type 'foo'", None),
    (INNER.format("a[t, t] = 1.0;"), "mcpl-index-count", "needs indices [i]", None),
    (INNER.format("a[1.5] = 1.0;"), "mcpl-bad-index", "must be an integer", None),
    (INNER.format("int s = 0; s[1] = 2;"), "mcpl-not-array", "not an array", None),
    (INNER.format("a[t] = frob(1);"), "mcpl-unknown-function", "unknown function", None),
    (INNER.format("a[t] = sqrt(1, 2);"), "mcpl-arg-count", "takes 1 argument", None),
    (INNER.format("a[t] = a;"), "mcpl-array-assign", "whole arrays", None),
    (INNER.format("int i = t % 2.0;"), "mcpl-bad-operand", "needs integers", None),
    (INNER.format("t = 1;"), "mcpl-write-index", "cannot be changed", None),
    (INNER.format("const int c = 1; c = 2;"), "mcpl-write-const", "is const", None),
    (INNER.format("break;"), "mcpl-break-outside-loop", "not inside a for or while", None),
    (INNER.format("return 1;"), "mcpl-return-value", "is void", None),
    ("shared float[n] s;", "mcpl-space-not-visible",
     "'shared' is not visible here: it belongs to par_unit 'block' of 'nvidia'",
     "declare it inside `foreach (... blocks)`"),
    (INNER.format("shard float x;"), "mcpl-unknown-space", "not a type or memory space",
     "did you mean 'shared'?"),
    (INNER.format("constant float c2; c2 = 1.0;"), "mcpl-write-read-only", "read-only", None),
    (INNER.format("barrier(reg);"), "mcpl-barrier-private-space",
     "barrier(reg) synchronises nothing", "shared"),
    (INNER.format("barrier(memory);"), "mcpl-unknown-space", "not a memory space", None),
    ("int x = 1;\nbarrier(global);", "mcpl-barrier-outside-foreach", "inside a foreach", None),
    ("foreach (int t in n threads) { a[t] = 0.0; }", "mcpl-foreach-order",
     "must be nested inside a foreach over 'blocks'", "foreach (int b in nb blocks)"),
    ("foreach (int b in n blocks) { foreach (int t in 32 threads) { "
     "foreach (int c in 2 blocks) { } } }", "mcpl-foreach-order", "cannot be inside", None),
    ("foreach (int b in 2.5 blocks) { }", "mcpl-bad-size",
     "the number of units of a foreach must be an integer, not float", "(int) x"),
    ("foreach (int b in a blocks) { }", "mcpl-bad-size", "an integer, not float[n]", None),
    ("foreach (int b in n block) { }", "mcpl-unknown-par-group",
     "'block' is not a par_group", "'block' is a par_unit"),
    ("foreach (int b in n blocks) { foreach (int t in b threads) { a[t] = 0.0; } }",
     "mcpl-foreach-size-depends", "depends on the index 'b'", None),
    ("foreach (int b in n blocks) { int m = b * 2; foreach (int t in m threads) { } }",
     "mcpl-foreach-size-depends", "depends on the index 'b'", None),
    ("foreach (int b in n blocks) { a[b] = 0.0; foreach (int t in 32 threads) { } }",
     "mcpl-not-innermost", "inside the innermost foreach (over 'threads')", None),
    ("a[0] = 1.0;\n" + INNER.format(""), "mcpl-not-innermost", "outside every foreach",
     None),
    (INNER.format("int m = t; reg float[m] v;"), "mcpl-nonconstant-size",
     "array size uses 'm', which is computed from a foreach index", None),
    (INNER.format("reg float[t] v;"), "mcpl-nonconstant-size", "a foreach index", None),
    (INNER.format("reg float[4 - 5] v;"), "mcpl-bad-size",
     "an array size must be at least 1, and this one is -1", "positive"),
    (INNER.format("const int z = 0; reg float[2, z] v;"), "mcpl-bad-size", "this one is 0",
     None),
    ("a as float[n][2] a2;", "mcpl-view-size", "has 2*n elements but 'a' has n", None),
    ("a as int[n] a2;", "mcpl-view-element-type", "elements of type 'float'", None),
    (INNER.format("if (a) { }"), "mcpl-bad-condition", "must be a number or bool", None),
    (INNER.format("int x = gpu.hierarchy.blocks.max_nr_units;"), "mcpl-hardware-not-imported",
     "'gpu' is not an imported hardware description", "import gpu;"),
    (INNER.format("int x = nvidia.hierarchy.blocks.nope;"), "mcpl-bad-hwd-ref",
     "not a property", None),
]


@pytest.mark.parametrize("body, code, message, hint", CASES, ids=[c[1] + "-" + str(i)
                                                                  for i, c in enumerate(CASES)])
def test_each_check(body, code, message, hint):
    ds = [d for d in kernel(body) if d.code == code]
    assert ds, f"expected {code}, got {[(d.code, d.message) for d in kernel(body)]}"
    d = ds[0]
    assert message in d.message
    if hint is not None:
        assert hint in (d.hint or "")
    assert d.span is not None and d.span.file == "t.mcpl" and d.span.line >= 3


def test_unknown_hardware_and_missing_import():
    ds = diags("nvidai void k() { }", "perfect")
    assert "mcpl-unknown-hardware" in codes(ds)
    assert "did you mean 'nvidia'?" in ds[0].hint
    ds = diags("gpu void k() { }", "perfect")
    assert codes(ds) == ["mcpl-hardware-not-imported"]
    assert "import gpu;" in ds[0].hint


def test_array_and_written_need_a_space_without_default(tmp_path):
    # A description like perfect but without default memory spaces.
    text = (ROOT / "mcl" / "hwdescs" / "perfect.hdl").read_text()
    text = text.replace("    default;\n", "").replace("perfect", "nodefault")
    assert "    default;" not in text
    (tmp_path / "nodefault.hdl").write_text(text)
    src = ("module t;\nimport nodefault;\nnodefault void k(int n, main float[n] a) {\n"
           "  foreach (int i in n threads) { float[4] v; float s = 1.0; s = 2.0; a[i] = n; }\n}")
    c = check(parse(src, "t.mcpl"), [tmp_path])
    # the description loads (it is not an unknown one): only the spaces are missing
    assert {d.code for d in c.diagnostics if d.is_error} == {"mcpl-no-space"}, c.diagnostics
    errors = [d for d in c.diagnostics if d.code == "mcpl-no-space"]
    assert [d.message.split("'")[1] for d in errors] == ["v", "s"]
    assert "add a memory space" in errors[0].hint


def test_read_scalar_needs_no_space():
    assert codes(kernel(INNER.format("a[t] = n;"))) == []


def test_several_errors_all_reported():
    ds = kernel(INNER.format("a[t] = q; r = 2; a[t, t] = 1.0;"))
    assert codes(ds) == ["mcpl-undeclared", "mcpl-undeclared", "mcpl-index-count"]


def test_writes_inferred_through_calls():
    src = """
perfect void set(float x, const float v) { x = v; }
perfect void twice(float y) { set(y, 2.0); }
perfect void k(int n, main float[n] a, main float[n] b) {
  foreach (int i in n threads) { twice(a[i]); b[i] = a[i]; }
}"""
    c = check(parse(f"module t;\nimport perfect;\n{src}", "t.mcpl"))
    assert not c.has_errors, c.diagnostics
    assert c.writes("set") == {"x"} and c.writes("twice") == {"y"}
    assert c.writes("k") == {"a", "b"}
    assert c.reads("k") >= {"n", "a"} and "b" not in c.reads("k")


def test_writes_through_a_view_are_the_parameters():
    # matmul hopper_v12 writes c only through `c as float[n, nrBlocksM, bn] c3`: the
    # transfer analysis and the checks must see c written
    src = """
perfect void k(int n, main float[n] a, main float[n] b, const main float[n] d) {
  a as float[n / 4, 4] a4;
  d as float[n / 4, 4] d4;
  foreach (int i in n / 4 threads) { a4[i, 0] = b[i]; d4[i, 1] = 0.0; }
}"""
    c = check(parse(f"module t;\nimport perfect;\n{src}", "t.mcpl"))
    assert c.writes("k") == {"a", "d"}
    # a const parameter written through its view: the error a direct write gets
    assert any(d.code == "mcpl-write-const" and "parameter 'd' is const but written" in d.message
               for d in c.diagnostics)


def test_library_functions_declare_writes():
    c = check(parse("module t;\nimport perfect;\nimport lib.atomics;\n"
                    "perfect void k(int n, main int[1] h) {\n"
                    "  foreach (int i in n threads) { atomicMax(h[0], i); }\n}", "t.mcpl"))
    assert not c.has_errors, c.diagnostics
    assert c.writes("k") == {"h"}
    call = next(x for x in ast.walk(c.module) if isinstance(x, ast.Call))
    assert c.callee(call).is_library and c.callee(call).writes == {"x"}


def test_unknown_import():
    ds = diags("perfect void k() { }", "lib.nothing")
    assert "mcpl-unknown-import" in codes(ds)


def test_user_module_import(tmp_path):
    (tmp_path / "helpers.mcpl").write_text(
        "module helpers;\nimport perfect;\nperfect float twice(const float x) { return 2 * x; }\n")
    main = tmp_path / "main.mcpl"
    main.write_text("module main;\nimport perfect;\nimport helpers;\n"
                    "perfect void k(int n, main float[n] a) {\n"
                    "  foreach (int i in n threads) { a[i] = twice(a[i]); }\n}\n")
    c = check(main)
    assert not c.diagnostics, c.diagnostics
    assert "helpers" in c.modules


def test_import_cycle(tmp_path):
    (tmp_path / "a.mcpl").write_text("module a;\nimport b;\n")
    (tmp_path / "b.mcpl").write_text("module b;\nimport a;\n")
    c = check(tmp_path / "a.mcpl")
    assert any(d.code == "mcpl-import-cycle" for d in c.diagnostics) or any(
        "cycle" in d.message for d in c.diagnostics)


def test_resolution_tables():
    c = check(ROOT / "examples" / "matmul" / "nvidia_v1.mcpl")
    f = c.module.functions[0]
    assert c.hardware_of(f).name == "nvidia"
    loops = [n for n in ast.walk(f) if isinstance(n, ast.ForEach)]
    assert [c.par_group_of(x).name for x in loops] == ["blocks", "blocks", "threads"]
    decls = {n.name: n for n in ast.walk(f) if isinstance(n, ast.Declaration)}
    assert c.space_of(decls["l_a"]) == "shared" and c.space_of(decls["sums"]) == "reg"
    assert c.type_of(decls["l_a"]).name == "float"
    uses = [n for n in ast.walk(f) if isinstance(n, ast.Name) and n.id == "tj"]
    assert all(c.declaration_of(u).node is loops[2].var for u in uses)
    assert [x.var.name for x in c.foreach_around(uses[-1])] == ["bi", "bj", "tj"]
    assert c.writes(f) == {"c"} and {"a", "b", "n"} <= c.reads(f)


def test_views_symbolic_sizes_from_consts():
    ds = kernel("const int x = 4;\nconst int nb = n / x;\na as float[nb][x] a2;")
    assert codes(ds) == []


# ---- writes that are not allowed are reported where they happen

VECTOR_ADD = (ROOT / "examples" / "vector_add" / "perfect.mcpl").read_text()


def vector_add_with(statement: str):
    """vector_add/perfect.mcpl (`const int n`, arrays of size n) with a statement
    added in its foreach, on line 13; the declaration of n is at 9:25."""
    lines = VECTOR_ADD.splitlines()
    assert lines[11].strip() == "c[i] = a[i] + b[i];"
    lines.insert(12, "    " + statement)
    return check("va.mcpl", source="\n".join(lines) + "\n").diagnostics


def test_write_to_const_parameter_is_reported_at_the_write():
    ds = vector_add_with("n = 3;")
    # one root cause: the write (not the declaration, not the three array sizes)
    assert [(d.code, d.span.line, d.span.column) for d in ds] == [("mcpl-write-const", 13, 5)]
    (d,) = ds
    assert d.message == "parameter 'n' is const but written"
    notes = [(r.span.line, r.span.column, r.message) for r in d.related]
    assert notes[0] == (9, 25, "'n' is declared const here")
    # the array sizes that use n are folded into one note, and the hint does not
    # suggest removing `const` (which would make them the next errors)
    assert notes[1][:2] == (10, 36) and "array size" in notes[1][2] and "2 more" in notes[1][2]
    assert "copy it into a variable" in d.hint and "remove `const`" not in d.hint


def test_write_to_const_parameter_through_a_call_is_reported_at_the_argument():
    src = """
perfect void set(int x) { x = 1; }
perfect void k(const int m, int n, main float[n] a) {
  foreach (int i in n threads) { set(m); }
}"""
    ds = check(parse(f"module t;\nimport perfect;\n{src}", "t.mcpl")).diagnostics
    assert [(d.code, d.span.line, d.span.column) for d in ds] == [("mcpl-write-const", 6, 38)]
    assert ds[0].related[0].span.line == 5 and ds[0].hint.startswith("remove `const`")


def test_written_parameter_used_as_size_names_the_write():
    # not const: a size that uses it is the error, and it says where the write is
    ds = diags("perfect void k(int n, main float[n] a) {\n"
               "  foreach (int i in n threads) { n = 2; }\n}", "perfect")
    (d,) = ds
    assert d.code == "mcpl-nonconstant-size" and (d.span.line, d.span.column) == (3, 34)
    assert [(r.span.line, r.message) for r in d.related][-1] == (4, "'n' is written here")


# ---- integer division by a constant zero

ZERO = "perfect void k(int n, main int[n] b, main float[n] a) {{\n" \
       "  foreach (int i in n threads) {{\n    {}\n  }}\n}}"


@pytest.mark.parametrize("statement, column, message", [
    ("b[i] = i / 0;", 14, "integer division by zero: the divisor of '/' is 0"),
    ("b[i] = i % 0;", 14, "integer remainder by zero: the divisor of '%' is 0"),
    ("b[i] = (i + 1) % (2 - 2);", 20, "the divisor of '%' is '2 - 2', which is 0"),
    # const ints are folded, with C's integer division (1 / 2 is 0)
    ("const int z = 1 / 2; b[i] = i / (z * 3);", 35, "is 'z * 3', which is 0"),
    ("const int z = 0; a[i] = (float) (i / z);", 40, "is 'z', which is 0"),
    ("int x = i; x /= 0;", 16, "the divisor of '/=' is 0"),
    ("int x = i; x %= 1 - 1;", 16, "the divisor of '%=' is '1 - 1', which is 0"),
])
def test_integer_division_by_zero(statement, column, message):
    ds = diags(ZERO.format(statement), "perfect")
    assert [(d.code, d.span.line, d.span.column) for d in ds] == \
        [("mcpl-division-by-zero", 5, column)], ds
    assert message in ds[0].message and "undefined" in ds[0].hint
    if "/=" not in statement and "%=" not in statement:
        assert ds[0].span.end_column - ds[0].span.column == 1   # the operator itself


@pytest.mark.parametrize("statement", [
    # IEEE 754 defines float division by zero (inf or nan): not an error
    "a[i] = a[i] / 0.0;",
    "a[i] = a[i] / 0;",          # float / int is a float division
    "float x = a[i]; x /= 0;",
    # a variable written anywhere in the function (before or after, in a loop) or a
    # parameter may be anything
    "int z = 0; z = n; b[i] = i / z;",
    "int z = 0; for (int r = 0; r < 2; r++) { b[i] = i / z; z++; }",
    "int z = 0; int y = z + 1; b[i] = i / y;",
    "int z = 0; int y = z; y += 3; b[i] = i / y;",
    "b[i] = i / n;",
    "b[i] = i / 2;",
])
def test_no_error_for_float_or_unknown_divisors(statement):
    assert diags(ZERO.format(statement), "perfect") == []


@pytest.mark.parametrize("statement, column, notes", [
    ("int z = 0; b[i] = i / z;", 25, [(5, 5, "'z' is 0 here and never written after")]),
    ("int z = 0; int y = 2 * z; b[i] = i % y;", 40,
     [(5, 16, "'y' is 2 * z here and never written after"),
      (5, 5, "'z' is 0 here and never written after")]),
    ("int z = 1 - 1; for (int r = 0; r < 2; r++) { b[i] += r / z; }", 60,
     [(5, 5, "'z' is 1 - 1 here and never written after")]),
])
def test_division_by_a_local_that_stays_zero(statement, column, notes):
    """A local whose initialiser is 0 and that nothing writes again is a constant 0 as
    much as a const one: the error, with a note where it got its value."""
    ds = diags(ZERO.format(statement), "perfect")
    assert [(d.code, d.span.line, d.span.column) for d in ds] == \
        [("mcpl-division-by-zero", 5, column)], ds
    assert [(r.span.line, r.span.column, r.message) for r in ds[0].related] == notes


@pytest.mark.parametrize("statement, column, message", [
    ("int x = 3000000000; b[i] = x;", 13,
     "the constant 3000000000 does not fit 'int' (-2147483648 .. 2147483647): stored there, "
     "it becomes -1294967296"),
    ("b[i] = -2147483647 - 2;", 12, "(= -2147483649) does not fit 'int'"),
    # where the constant is declared, not again where it is used
    ("const int big = 1 << 31; b[i] = big;", 21, "the constant 1 << 31 (= 2147483648)"),
    ("a[i] = 1e40;", 12, "does not fit 'float' (about -3.4e38 .. 3.4e38): stored there, "
                         "it becomes infinity"),
    ("byte c = 256; b[i] = c;", 14, "does not fit 'byte' (0 .. 255): stored there, it becomes 0"),
    ("int x = 1e10; b[i] = x;", 13, "its value is undefined (as in C)"),
])
def test_a_constant_beyond_its_target_s_range_is_warned_of(statement, column, message):
    ds = diags(ZERO.format(statement), "perfect")
    assert [(d.code, d.severity.name, d.span.line, d.span.column) for d in ds] == \
        [("mcpl-constant-range", "WARNING", 5, column)], ds
    assert message in ds[0].message


@pytest.mark.parametrize("statement", [
    "int x = 2147483647; b[i] = -2147483647 - 1;",
    "a[i] = 3.4e38; a[i] = -1e-50;",
    "long y = 3000000000; b[i] = (int) y;",   # a cast is the programmer's word
    "a[i] = 3000000000;",                       # an int constant in a float: fits
    "int x = 1; x += 2147483647;",              # not stored as it is
])
def test_a_constant_within_its_target_s_range_is_quiet(statement):
    assert diags(ZERO.format(statement), "perfect") == []


def test_division_by_zero_in_a_module_constant():
    ds = diags("const int Z = 4 / (2 - 2);\nconst int W = Z % 2;\n" + ZERO.format("b[i] = i / Z;"),
               "perfect")
    # reported once, where the constant is defined; its uses do not repeat it
    assert [(d.code, d.span.line, d.span.column) for d in ds] == \
        [("mcpl-division-by-zero", 3, 17)]


def test_division_by_zero_located_in_a_moved_function():
    # items of a module are cached by text: the operator's position moves with them
    src = "module t;\nimport perfect;\n" + ZERO.format("b[i] = i / 0;")
    first = check("moved.mcpl", source=src).diagnostics
    again = check("moved.mcpl", source="\n\n" + src).diagnostics
    assert [(d.span.line, d.span.column) for d in first] == [(5, 14)]
    assert [(d.span.line, d.span.column) for d in again] == [(7, 14)]


# ---- control flow: recursion and functions that end without their value

def test_a_function_that_calls_itself_is_an_error():
    ds = diags("perfect float f(float v) { return f(v - 1.0); }", "perfect")
    assert [(d.code, d.span.line, d.span.column) for d in ds] == [("mcpl-recursion", 3, 35)]
    assert "'f' calls itself (directly)" in ds[0].message and "no recursion" in ds[0].message


def test_a_cycle_of_calls_is_one_error_naming_the_functions_on_it():
    ds = diags("perfect int f(int v) { return g(v) + 1; }\n"
               "perfect int g(int v) { return h(v); }\n"
               "perfect int h(int v) { if (v > 0) { return f(v - 1); } return 0; }\n"
               "perfect int leaf(int v) { return v; }\n"
               "perfect int caller(int v) { return f(leaf(v)); }", "perfect")
    assert [(d.code, d.span.line) for d in ds] == [("mcpl-recursion", 3)]
    assert "'f' calls itself (through g -> h)" in ds[0].message
    assert [r.message for r in ds[0].related] == ["'g' is declared here", "'h' is declared here"]


@pytest.mark.parametrize("body", [
    "if (v > 0) { return 1; }",
    "while (v > 0) { return 1; }",
    "if (v > 0) { return 1; } else { v = 2; }",
    "while (true) { if (v > 3) { break; } v++; }",
])
def test_a_function_that_can_end_without_its_value_is_warned_of(body):
    ds = diags(f"perfect int g(int v) {{ {body} }}", "perfect")
    assert [(d.code, d.severity.name, d.span.line) for d in ds] == \
        [("mcpl-missing-return", "WARNING", 3)], ds


@pytest.mark.parametrize("body", [
    "return v;",
    "if (v > 0) { return 1; } else { return 2; }",
    "if (v > 0) { return 1; } return 2;",
    "while (true) { if (v > 3) { return v; } v++; }",
    "for (;;) { for (int i = 0; i < 2; i++) { break; } return 1; }",
])
def test_a_function_that_returns_on_every_path_is_quiet(body):
    assert diags(f"perfect int g(int v) {{ {body} }}", "perfect") == []


@pytest.mark.parametrize("statement, column", [
    ("int q; b[i] = q;", 19),
    ("float s; s += a[i]; a[i] = s;", 14),      # += reads it first
    ("int q; q = q + 1; b[i] = q;", 16),
    ("int q; for (int r = 0; r < 2; r++) { b[i] = q; q = r; }", 49),   # the first time round
])
def test_a_scalar_read_before_it_is_written_is_warned_of(statement, column):
    ds = diags(ZERO.format(statement), "perfect")
    assert [(d.code, d.span.line, d.span.column) for d in ds] == \
        [("mcpl-uninitialised", 5, column)], ds
    assert ds[0].related[0].message == "declared here"


@pytest.mark.parametrize("statement", [
    "int q; q = i; b[i] = q;",
    "int q; if (i > 2) { q = 1; } else { q = 2; } b[i] = q;",
    "int q; if (i > 2) { q = 1; } b[i] = q;",      # maybe written: not said
    "int q = 0; b[i] = q;",
])
def test_a_scalar_written_before_it_is_read_is_quiet(statement):
    assert diags(ZERO.format(statement), "perfect") == []


def test_an_import_of_a_description_beside_the_file_finds_it(tmp_path):
    gpu = (Path(__file__).parents[2] / "mcl" / "hwdescs" / "gpu.hdl").read_text()
    (tmp_path / "mygpu.hdl").write_text(
        gpu.replace("hardware_description gpu;", "hardware_description mygpu;")
        .replace("specializes accelerator;", "specializes gpu;"))
    (tmp_path / "k.mcpl").write_text("module k;\nimport mygpu;\n")
    assert check(str(tmp_path / "k.mcpl")).diagnostics == []     # found beside it
    assert check(str(tmp_path / "k.mcpl"), search_path=(str(tmp_path),)).diagnostics == []
    (tmp_path / "mygpu.hdl").write_text("// not yet written\n")
    [d] = check(str(tmp_path / "k.mcpl")).diagnostics
    assert d.code == "mcpl-unknown-import"
    assert d.hint == ("'mygpu.hdl' beside this file declares no description: it should "
                      "begin with 'hardware_description mygpu;'")


def test_a_description_beside_the_file_that_names_another_level_says_so(tmp_path):
    gpu = (Path(__file__).parents[2] / "mcl" / "hwdescs" / "gpu.hdl").read_text()
    (tmp_path / "mygpu.hdl").write_text(
        gpu.replace("hardware_description gpu;", "hardware_description othergpu;"))
    (tmp_path / "k.mcpl").write_text("module k;\nimport mygpu;\n")
    [d] = check(str(tmp_path / "k.mcpl")).diagnostics
    assert d.code == "mcpl-unknown-import"
    assert d.hint == "'mygpu.hdl' beside this file describes 'othergpu', not 'mygpu': name " \
        "the description after its file"


def test_a_description_beside_the_file_that_the_library_has_is_warned_of(tmp_path):
    """A copy of the library's gpu.hdl beside a kernel (edited, say) is not read: the
    import takes the library's, and says so rather than silently."""
    gpu = (Path(__file__).parents[2] / "mcl" / "hwdescs" / "gpu.hdl").read_text()
    (tmp_path / "gpu.hdl").write_text(gpu)
    (tmp_path / "k.mcpl").write_text("module k;\nimport gpu;\n")
    checked = check(str(tmp_path / "k.mcpl"))
    [d] = checked.diagnostics
    assert (d.code, d.severity.name, d.span.line) == ("mcpl-description-beside", "WARNING", 2)
    assert d.message == "'gpu.hdl' beside this file is not read: 'gpu' is the library's"
    assert f"give --hwd-path {tmp_path} (it then replaces the library's 'gpu')" in d.hint
    assert checked.hardware["gpu"].file != str(tmp_path / "gpu.hdl")
    # on the search path it is the one read (and replaces the library's): no warning
    on_path = check(str(tmp_path / "k.mcpl"), search_path=(str(tmp_path),))
    assert [d.code for d in on_path.diagnostics] == []
    assert Path(on_path.hardware["gpu"].file).resolve() == (tmp_path / "gpu.hdl").resolve()


@pytest.mark.parametrize("statement, warned", [
    ("b[i] = i << 40;", True),
    ("b[i] = i >> 32;", True),
    ("b[i] = i << -1;", True),
    ("const int s = 33; b[i] = i << s;", True),
    ("b[i] = i << 31;", False),
    ("b[i] = (int) ((long) i << 40);", False),     # a long shifts by up to 63
    ("b[i] = i << n;", False),                     # not known before the run
])
def test_a_shift_by_a_constant_beyond_the_width_is_warned_of(statement, warned):
    ds = diags(ZERO.format(statement), "perfect")
    assert [d.code for d in ds] == (["mcpl-shift-range"] if warned else []), ds


@pytest.mark.parametrize("statement", [
    "byte c = (byte) 300; b[i] = c;",             # C's conversion: 44, the programmer's word
    "int x = (int) 3000000000L; b[i] = x;",       # -1294967296
])
def test_a_cast_folds_as_c_converts(statement):
    assert diags(ZERO.format(statement), "perfect") == []


def test_folded_casts_wrap_round_their_type():
    from mcl.mcpl.fold import fold_constant
    for text, value in (("(byte) 300", 44), ("(int) 3000000000L", -1294967296),
                        ("(byte) -1", 255), ("(int) 2.7", 2), ("(int) -2.7", -2),
                        ("(bool) 5", 1)):
        module = parse(f"module t;\nconst long C = {text};\n", "t.mcpl")
        assert fold_constant(module.constants[0].value, lambda n: None) == value, text


def test_an_export_must_name_something_the_module_defines():
    # export lists were kept and never looked at: a misspelt name passed `mcl check`
    ds = [d for d in diags("nvidia void k(int n) { }", "nvidia") if d.is_error]
    assert ds == []
    module = parse("module t;\nexport k, kk;\nimport nvidia;\nnvidia void k(int n) { }\n",
                   "t.mcpl")
    ds = [d for d in check(module).diagnostics if d.is_error]
    assert [d.code for d in ds] == ["mcpl-unknown-export"]
    assert "'kk' is exported" in ds[0].message and "did you mean 'k'?" in ds[0].hint
    assert (ds[0].span.line, ds[0].span.column) == (2, 11)


@pytest.mark.parametrize("body, warned", [
    # matmul xeon_phi_v2's k loop with `sum` mistyped as `k` (found by mutating the
    # examples: with negative data the loop stepped k back and mcl run hung)
    ("for (int k = 0; k < n; k++) { k += a[k] * 2.0; }", "k += a[k] * 2.0"),
    ("for (int k = 0; k < n; k++) { if (a[k] > 0.0) { k--; } }", "k--"),
    # another variable, or a body that declares its own k: nothing to say
    ("float s = 0.0; for (int k = 0; k < n; k++) { s += a[k]; } a[0] = s;", None),
    ("for (int k = 0; k < n; k++) { int k2 = k; k2 += 1; a[k] = k2; }", None),
])
def test_a_counted_loop_whose_body_changes_its_index_is_warned_of(body, warned):
    found = [d for d in kernel(INNER.format(body).replace("{{", "{").replace("}}", "}"))
             if d.code == "mcpl-loop-index-assigned"]
    if warned is None:
        assert found == []
    else:
        (d,) = found
        assert d.severity.name == "WARNING" and f"(`{warned}`)" in d.message
