"""User functions OpenCL would not compile are refused when the program is read, at the
name or operator at fault, with what to write instead; before, every candidate of a
search failed to build with a reason that named nothing, or the interpreter raised a
traceback. A build error that remains says the compiler's first error."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import program

from mcl.diagnostics import McplError
from mcl.lift.explore import first_compiler_error, reasons
from mcl.lift.interp import run
from mcl.lift.parser import parse

MAIN = "g = fun(x: float[N]) => map(f) $ x\n"


def _error(text: str):
    with pytest.raises(McplError) as e:
        parse(text, "t.lift")
    return e.value.diagnostics[0]


@pytest.mark.parametrize("userfun, words, column, hint", [
    ("userfun f(x: float): float = x % 2.0f", "'%' takes integers in OpenCL C", 32,
     "fmod(x, 2.0f)"),
    ("userfun f(x: float): float = sqrt(x, x)", "sqrt takes 1 argument(s), 2 given", 30, None),
    ("userfun f(x: float): float = fma(x)", "fma takes 3 argument(s), 1 given", 30, None),
    ("userfun f(x: float): float = x._1", "x._1: 'x' is a float, not a tuple", 30, None),
    ("userfun f(x: float): float = abs(x)", "abs takes integers in OpenCL C", 30, "fabs(x)"),
    ("userfun f(x: float): float = max(x, 0)", "max of a float and an int is ambiguous", 30,
     "0.0f"),
    ("userfun f(x: int): float = sqrt(x)", "sqrt of an int is ambiguous", 28, "x * 1.0f"),
    ("userfun f(int: float): float = int", "parameter 'int' is a word of OpenCL C", 11,
     "int_"),
    ("userfun f(x: float, x: float): float = x", "two parameters are named 'x'", 11, None),
    ("userfun f(x: float[4]): float = x", "parameter 'x' has type float[4]", 11, None),
])
def test_a_body_opencl_would_reject_is_located_with_a_hint(userfun, words, column, hint):
    d = _error(userfun + "\n" + MAIN.replace("map(f)", "map(fun(v) => f(v))")
               if "x: float[4]" not in userfun else userfun + "\n" + MAIN)
    assert d.code == "lift-userfun"
    assert words in d.message
    assert (d.span.line, d.span.column) == (1, column)
    if hint:
        assert hint in d.hint


@pytest.mark.parametrize("name, what", [
    ("float", "a word of OpenCL C"), ("kernel", "a word of OpenCL C"),
    ("dot", "a function of OpenCL C"), ("sqrt", "a function of OpenCL C"),
    ("map", "a Lift pattern"), ("kernel_0", "a name the generator gives"),
    ("out", "a name the generator gives"),
])
def test_a_user_function_may_not_take_a_name_of_c_opencl_lift_or_the_generator(name, what):
    d = _error(f"userfun {name}(v: float): float = v\n"
               f"g = fun(x: float[N]) => map(fun(v) => {name}(v)) $ x\n")
    assert f"user function '{name}': '{name}' is {what}" in d.message
    assert d.span.line == 1


def test_fmod_is_a_builtin_with_the_meaning_of_c():
    p = parse("userfun f(x: float): float = fmod(x, 2.0f)\n" + MAIN)
    assert run(p, np.array([5.5, -3.0], np.float32)).tolist() == [1.5, -1.0]


def test_bodies_opencl_accepts_are_accepted():
    for body in ("fmax(x, 0)", "max(x, 0.0f)", "x > 0.5f ? x : 0.0f", "pow(x, 2)",
                 "fma(x, 2, 1.0f)", "!x"):
        parse(f"userfun f(x: float): float = {body}\n" + MAIN)
    parse("userfun f(x: int): int = abs(x) % 3 + max(x, 1)\n"
          "g = fun(x: int[N]) => map(f) $ x\n")
    for name in ("add", "mult", "sum", "step_size", "x2"):
        parse(f"userfun {name}(v: float): float = v\n"
              f"g = fun(x: float[N]) => map(fun(v) => {name}(v)) $ x\n")


# ------------------------------------------------------------------ build errors


POCL = ("the OpenCL compiler rejected the kernel of g:\nerror: /root/.cache/pocl/kcache/"
        "tempfile_mE.cl:1:25 <Spelling=/usr/share/pocl/include/_builtin_renames.h:45:24>: "
        "call to '_cl_abs' is ambiguous\n1 error generated.")
CLANG = ("the OpenCL compiler rejected the kernel of g:\n<kernel>:5:10: error: use of "
         "undeclared identifier 'foo'\n")


@pytest.mark.parametrize("message, first", [
    (POCL, "the OpenCL compiler rejected the kernel of g: call to '_cl_abs' is ambiguous"),
    (CLANG, "the OpenCL compiler rejected the kernel of g: use of undeclared identifier 'foo'"),
])
def test_a_build_error_says_the_compilers_first_error_on_its_first_line(message, first):
    got = first_compiler_error(message)
    assert got.splitlines()[0] == first
    assert message.partition("\n")[2] in got              # the whole log follows
    (status, n, why), = reasons([{"status": "build-error", "message": got}] * 2)
    assert (status, n, why) == ("build-error", 2, first)


# ------------------------------------------------------------------ commands type-check


@pytest.mark.parametrize("command", [["rewrite", "--list"], ["gen", "--size", "N=8",
                                      "--size", "M=8"], ["explore", "--budget", "1"]])
def test_commands_refuse_an_ill_typed_program_that_bound_sizes_would_hide(run_cli, tmp_path,
                                                                          command):
    f = tmp_path / "zip.lift"
    f.write_text("userfun mult(x: float, y: float): float = x * y\n"
                 "f = fun(x: float[N], y: float[M]) => map(fun(p) => mult(p._0, p._1)) "
                 "$ zip(x, y)\n")
    code, out, err = run_cli("lift", command[0], f, *command[1:])
    assert code == 1 and out == ""
    assert "zip: the arrays have different lengths (N and M)" in err
    assert f"{f}:2:" in err


def test_the_bundled_programs_still_read():
    for name in ("asum", "dot", "gemv", "mm", "scal", "stencil", "sum"):
        program(name)


def test_a_parameter_that_hides_a_user_function_is_named_in_the_hint():
    import pytest

    from mcl.diagnostics import McplError
    from mcl.lift.parser import parse
    with pytest.raises(McplError) as e:
        parse("userfun f(a: float): float = a * 2.0f\n"
              "s = fun(f: float[N], y: float[N]) => map(f) $ y\n")
    [d] = e.value.diagnostics
    assert d.message == "map: expects a function here, got data"
    assert d.hint == ("'f' names data here (a parameter), which hides the user function "
                      "'f': rename one of them")
