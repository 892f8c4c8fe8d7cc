"""Bad input a new user of Lift gives: positions, work-group sizes, array lengths in
types, windows, inputs of the Python API of the wrong shape or dtype, search settings.
Each is refused with a message saying what to give, never a traceback or a silently
wrong result."""

from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import PROGRAMS, program

from mcl.diagnostics import McplError
from mcl.lift.codegen import Options, generate
from mcl.lift.explore import explore
from mcl.lift.interp import run
from mcl.lift.ir import bind_sizes
from mcl.lift.parser import parse
from mcl.lift.rules import apply_rule
from mcl.lift.typecheck import check_program

ADD = "userfun add(x: float, y: float): float = x + y\n"
SCAL = PROGRAMS / "scal.lift"


def _error(text: str):
    with pytest.raises(McplError) as e:
        check_program(parse(text, "t.lift"))
    return e.value.diagnostics[0]


# ------------------------------------------------------------------ the command line


def test_a_position_that_is_not_numbers_is_a_usage_error(run_cli):
    code, out, err = run_cli("lift", "rewrite", SCAL, "--rule", "split-join", "--at", "abc")
    assert code == 2 and out == ""
    assert "--at abc: a position is numbers separated by dots" in err
    assert "internal error" not in err and "Traceback" not in err


def test_the_root_position_as_list_prints_it_is_accepted(run_cli):
    code, out, err = run_cli("lift", "rewrite", SCAL, "--rule", "split-join", "--at", "root")
    assert code == 0, err
    assert "join o map(map(fun(v) => mult(a, v))) o split(2) $ x" in out


@pytest.mark.parametrize("size", ["0", "-3"])
def test_a_work_group_of_no_work_items_is_refused(run_cli, size):
    code, out, err = run_cli("lift", "gen", SCAL, "--size", "N=8", "--rule", "map-to-mapGlb",
                             "--local-size", size)
    assert code == 1 and out == ""
    assert f"work-group size {size}: give 1 or more" in err
    with pytest.raises(McplError, match="work-group size"):
        low = apply_rule(bind_sizes(program("scal"), {"N": 8}), "map-to-mapGlb")
        generate(low, {"N": 8}, Options(local_size=int(size)))


def test_options_of_mcpl_kernels_are_not_silently_ignored_for_a_lift_program(run_cli):
    code, out, err = run_cli("lift", "explore", SCAL, "--target", "hopper", "--budget", "0")
    assert code == 2 and out == ""
    assert "warning: --target is ignored: it applies to an MCPL kernel (.mcpl)" in err


# ------------------------------------------------------------------ types and patterns


@pytest.mark.parametrize("length", ["0", "-4", "2.5"])
def test_an_array_length_that_is_not_a_positive_whole_number_is_refused(length):
    d = _error(ADD + f"g = fun(x: float[{length}]) => reduce(add, 0.0f) $ x\n")
    assert d.code == "lift-type"
    assert f"'{length}' is not a length" in d.message
    assert (d.span.line, d.span.column) == (2, 17)     # at its brackets


def test_a_window_of_no_elements_is_refused():
    d = _error(ADD + "g = fun(x: float[N]) => map(reduce(add, 0.0f)) o slide(0, 1) $ x\n")
    assert "slide 0 1: a window of 0 elements" in d.message


def test_a_window_longer_than_the_array_is_refused():
    d = _error(ADD + "g = fun(x: float[8]) => map(reduce(add, 0.0f)) o slide(10, 1) $ x\n")
    assert "a window of 10 elements does not fit in float[8]" in d.message
    assert "pad" in d.hint


def test_an_input_of_tuples_is_refused_with_zip_as_the_way():
    d = _error(ADD + "g = fun(p: (float, float)[N]) => map(fun(t) => add(t._0, t._1)) $ p\n")
    assert "parameter 'p' of 'g' has type (float, float)[N]" in d.message
    assert "zip(a, b)" in d.hint


# ------------------------------------------------------------------ the interpreter


@pytest.mark.parametrize("inputs, words", [
    ((np.ones((4, 2), np.float32), np.ones((4, 2), np.float32)),
     "input 'x' should be float[N] (1 axis), given an array of shape (4, 2)"),
    ((np.ones(3, np.complex64), np.ones(3, np.float32)),
     "input 'x' holds complex64 values; the program reads float32"),
    ((np.array(list("abc")), np.ones(3, np.float32)), "input 'x' should be float[N], given"),
    ((None, np.ones(3, np.float32)), "given None"),
    ((np.ones(3, np.float32),), "'dot' takes 2 input(s) (x, y), 1 given"),
])
def test_the_interpreter_refuses_inputs_of_the_wrong_shape_or_dtype(inputs, words):
    with pytest.raises(McplError) as e:
        run(program("dot"), *inputs)
    assert words in e.value.diagnostics[0].message


def test_an_array_for_a_scalar_is_refused():
    with pytest.raises(McplError, match="input 'a' should be float \\(a scalar\\), given an "
                                        "array of shape \\(3,\\)"):
        run(program("scal"), np.ones(3, np.float32), np.ones(4, np.float32))


def test_conversions_that_keep_the_values_are_made():
    got = run(program("dot"), [1, 2, 3], np.arange(3, dtype=np.float64))
    assert got.dtype == np.float32 and float(got.reshape(())) == 8.0


def test_a_float_literal_in_an_int_function_keeps_its_fraction():
    p = parse("userfun pos(x: float): int = x > 0.5f\ng = fun(x: float[N]) => map(pos) $ x\n")
    assert run(p, np.array([0.2, 0.7, -1.0], np.float32)).tolist() == [0, 1, 0]


def test_a_bool_result_is_an_int_buffer_as_the_kernel_writes_it(rt):
    from mcl.lift.execute import run_generated
    p = parse("userfun pos(x: float): bool = x > 0.5f\ng = fun(x: float[N]) => map(pos) $ x\n")
    low = apply_rule(bind_sizes(p, {"N": 64}), "map-to-mapGlb")
    gen = generate(low, {"N": 64})
    assert gen.buffers["out"].dtype == "int32"      # the kernel's int, not numpy's 1-byte bool
    x = np.linspace(0, 1, 64, dtype=np.float32)
    assert run_generated(gen, rt, [x]).tolist() == run(p, x).tolist() == (x > 0.5).tolist()


# ------------------------------------------------------------------ generated kernels


def test_a_generated_kernel_refuses_inputs_it_cannot_take(rt):
    from mcl.lift.execute import run_generated
    low = apply_rule(bind_sizes(program("scal"), {"N": 8}), "map-to-mapGlb")
    gen = generate(low, {"N": 8})
    with pytest.raises(McplError, match="takes 2 input\\(s\\) \\(a, x\\), 1 given"):
        run_generated(gen, rt, [np.ones(8, np.float32)])
    with pytest.raises(McplError, match="input 'a' should be float32 \\(a scalar\\)"):
        run_generated(gen, rt, [np.ones(3), np.ones(8, np.float32)])
    with pytest.raises(McplError, match="holds complex64 values"):
        run_generated(gen, rt, [2.0, np.ones(8, np.complex64)])


def _scal_kernel(n: int = 8):
    return generate(apply_rule(bind_sizes(program("scal"), {"N": n}), "map-to-mapGlb"), {"N": n})


def _square_rows_kernel():
    p = parse("userfun sq(x: float): float = x * x\n"
              "s = fun(A: float[M][N]) => mapGlb(mapSeq(sq)) $ A\n")
    return p, generate(p, {"M": 4, "N": 8})


@pytest.mark.parametrize("given", [(4, 2), (8, 1), (1, 8), (2, 2, 2)])
def test_a_generated_kernel_refuses_its_elements_in_another_shape(rt, given):
    """8 elements as 4 x 2 for a float[8] were read in memory order, silently."""
    from mcl.lift.execute import run_generated
    with pytest.raises(McplError) as e:
        run_generated(_scal_kernel(), rt, [2.0, np.ones(given, np.float32)])
    d = e.value.diagnostics[0]
    assert d.code == "lift-run"
    assert (f"input 'x' should be an array of shape (8,) (8 float32 elements), given an "
            f"array of shape {given} (the same 8 elements in another shape)") in d.message
    assert "x.reshape((8,))" in d.hint


@pytest.mark.parametrize("given", [(32,), (8, 4), (2, 16), (4, 8, 1)])
def test_a_generated_kernel_refuses_a_matrix_in_another_shape(rt, given):
    from mcl.lift.execute import run_generated
    p, gen = _square_rows_kernel()
    assert gen.plan()["buffers"]["A"]["shape"] == [4, 8]
    with pytest.raises(McplError, match=f"input 'A' should be an array of shape \\(4, 8\\) "
                                        f"\\(32 float32 elements\\), given an array of shape "
                                        f"{re.escape(str(given))}"):
        run_generated(gen, rt, [np.ones(given, np.float32)])
    a = np.arange(32, dtype=np.float32).reshape(4, 8)
    np.testing.assert_array_equal(run_generated(gen, rt, [a]), a * a)
    np.testing.assert_array_equal(run(p, a), a * a)


def test_a_generated_kernel_refuses_an_array_of_the_wrong_length(rt):
    from mcl.lift.execute import run_generated
    with pytest.raises(McplError, match="input 'x' should be an array of shape \\(8,\\) "
                                        "\\(8 float32 elements\\), given an array of "
                                        "shape \\(9,\\)$"):
        run_generated(_scal_kernel(), rt, [2.0, np.ones(9, np.float32)])


@pytest.mark.parametrize("scalar", [np.array([2.0]), np.array([[2.0]]), [2.0]])
def test_a_scalar_is_a_number_not_an_array_of_one_element(rt, scalar):
    from mcl.lift.execute import run_generated
    x = np.ones(8, np.float32)
    words = f"input 'a' should be float32 \\(a scalar\\), given an array of shape " \
            f"{re.escape(str(np.shape(scalar)))}"
    with pytest.raises(McplError, match=words) as e:
        run_generated(_scal_kernel(), rt, [scalar, x])
    assert "x.reshape(())" in e.value.diagnostics[0].hint
    with pytest.raises(McplError, match="input 'a' should be float \\(a scalar\\)"):
        run(program("scal"), scalar, x)
    for good in (2.0, np.float32(2.0), np.array(2.0), np.array([2.0]).reshape(())):
        assert run_generated(_scal_kernel(), rt, [good, x]).tolist() == [2.0] * 8


def test_the_plan_gives_the_shape_of_each_input_and_the_output():
    plan = _scal_kernel().plan()["buffers"]
    assert plan["a"]["shape"] == [] and plan["x"]["shape"] == [8] and plan["out"]["shape"] == [8]


@pytest.mark.parametrize("value, words", [
    (np.array([1, 2 ** 40], np.int64), "input 'x' holds 1099511627776, outside the range of int32"),
    (np.array([-(2 ** 33)], np.int64), "input 'x' holds -8589934592, outside the range of int32"),
    (np.array([1, 2 ** 31], np.uint64), "outside the range of int32"),
])
def test_an_integer_outside_the_programs_type_is_refused_not_wrapped(rt, value, words):
    from mcl.lift.execute import run_generated
    p = parse("userfun inc(x: int): int = x + 1\ng = fun(x: int[N]) => mapGlb(inc) $ x\n")
    gen = generate(p, {"N": len(value)})
    with pytest.raises(McplError, match=re.escape(words)):
        run_generated(gen, rt, [value])
    with pytest.raises(McplError, match=re.escape(words)):
        run(p, value)
    fits = np.array([1, 2 ** 31 - 2][:len(value)], np.int64)
    assert run_generated(gen, rt, [fits]).tolist() == (fits + 1).tolist()


def test_a_float64_that_is_infinite_as_a_float32_is_refused(rt):
    from mcl.lift.execute import run_generated
    x = np.ones(8)
    x[3] = 1e300
    with pytest.raises(McplError, match="input 'x' holds 1e\\+300, which is infinite as the "
                                        "float32 the program reads"):
        run_generated(_scal_kernel(), rt, [2.0, x])
    with pytest.raises(McplError, match="which is infinite as the float32"):
        run(program("scal"), 2.0, x)
    x[3] = np.inf           # infinite already: converted as it is
    assert np.isinf(run_generated(_scal_kernel(), rt, [2.0, x])[3])


# ------------------------------------------------------------------ exploration


@pytest.mark.parametrize("kwargs, words", [
    (dict(budget=0), "budget 0: give 1 or more"),
    (dict(budget=-1), "budget -1: give 1 or more"),
    (dict(strategy="greedy"), "unknown strategy 'greedy'"),
    (dict(sizes={"N": "64"}), "size N = '64': a size is a positive integer"),
    (dict(sizes={"N": 0}), "size N = 0: a size is a positive integer"),
])
def test_explore_refuses_settings_that_search_nothing(kwargs, words):
    kwargs = {"sizes": {"N": 64}, **kwargs}

    def never(prog, local_size=None):     # nothing may be evaluated
        raise AssertionError("evaluated")
    with pytest.raises(McplError) as e:
        explore(program("scal"), evaluator=never, **kwargs)
    assert words in e.value.diagnostics[0].message


# ------------------------------------------------------------------ literals, definitions


@pytest.mark.parametrize("text, words, hint", [
    ("userfun f(x: int): int = x + 010\ng = fun(x: int[N]) => map(f) $ x\n",
     "'010' is an octal number in C (8)", "write 10 (or 8, its value in C)"),
    ("userfun f(x: int): int = x + 09\ng = fun(x: int[N]) => map(f) $ x\n",
     "'09' is not a number in C", "write 9"),
    ("userfun f(x: int): int = x + 99999999999\ng = fun(x: int[N]) => map(f) $ x\n",
     "'99999999999' does not fit in an int", "1e10f"),
    ("userfun add(x: int, y: int): int = x + y\ng = fun(x: int[N]) => reduce(add, 010) $ x\n",
     "'010' is an octal number in C (8)", None),
])
def test_integer_literals_c_would_read_otherwise_are_refused(text, words, hint):
    d = _error(text)          # (were a ValueError / OverflowError of the interpreter)
    assert d.code == "lift-syntax" and words in d.message
    if hint:
        assert hint in d.hint


@pytest.mark.parametrize("second, words", [
    ("userfun add(x: float, y: float): float = x * y\n",
     "the user function 'add' is defined twice (first at line 1)"),
    ("g = fun(x: float[8]) => map(fun(v) => add(v, v)) $ x\n",
     "the definition 'g' is defined twice (first at line 2)"),
])
def test_a_second_definition_of_a_name_is_refused_not_silently_taken(second, words):
    d = _error(ADD + "g = fun(x: float[8]) => reduce(add, 0.0f) $ x\n" + second)
    assert words in d.message and d.span.line == 3


def test_a_program_may_share_its_name_with_a_user_function():
    p = parse(ADD + "add = fun(x: float[8]) => reduce(add, 0.0f) $ x\n")
    assert p.name == "add"


# ------------------------------------------------------------------ short arrays


@pytest.mark.parametrize("n", [2, 64, 1000])
def test_a_reduction_of_fewer_than_1024_elements_has_a_work_group_tree(rt, n):
    """The macro rule had no choice below 1024 elements: `mcl lift explore sum.lift
    --size N=64` lowered nothing and advised a larger budget."""
    from mcl.lift.execute import run_generated
    from mcl.lift.explore import direct_lowering, is_lowered
    p = bind_sizes(program("sum"), {"N": n})
    low = apply_rule(p, "reduce-to-workgroup-tree")
    low = low if is_lowered(low) else direct_lowering(low)
    x = np.random.default_rng(0).uniform(0, 1, n).astype(np.float32)
    got = run_generated(generate(low, {"N": n}), rt, [x])
    assert got.reshape(()) == pytest.approx(float(x.sum()), rel=1e-5)


def test_from_mcpl_refuses_a_lift_program_naming_what_reads_it(run_cli):
    code, out, err = run_cli("lift", "from-mcpl", PROGRAMS / "sum.lift")
    assert code == 1 and out == ""
    assert "is a Lift program already; from-mcpl reads an MCPL kernel (.mcpl)" in err
    assert "mcl lift explore" in err and "mcpl-syntax" not in err


# ------------------------------------------------------------------ results files


def test_a_results_file_of_another_search_is_refused_not_silently_replaced(tmp_path):
    from mcl.lift.explore import Evaluation
    from mcl.lift.printer import key, show

    def stand_in(prog, local_size=None):
        return Evaluation(key(prog.body), show(prog.body.body), "ok", 1e-3, local_size)
    f = tmp_path / "r.json"
    first = explore(program("scal"), {"N": 64}, "random", budget=2, evaluator=stand_in,
                    results_path=f, progress=False)
    kept = f.read_text()
    for prog, sizes, why in (("sum", {"N": 64}, "another program"),
                             ("scal", {"N": 128}, "other sizes")):
        with pytest.raises(McplError) as e:
            explore(program(prog), sizes, "random", budget=2, evaluator=stand_in,
                    results_path=f, progress=False)
        d = e.value.diagnostics[0]
        assert "holds the search of 'scal' at N=64" in d.message and why in d.message
        assert "remove this one" in d.hint
        assert f.read_text() == kept                      # its results are still there
    again = explore(program("scal"), {"N": 64}, "random", budget=3, evaluator=stand_in,
                    results_path=f, progress=False)
    assert len(again.evaluations) >= len(first.evaluations)


def test_an_expected_result_too_large_for_memory_is_said_with_what_to_try(rt):
    """mm at 2048^3: the interpreter's 32 GiB of products were a MemoryError traceback."""
    import io

    from mcl.lift.explore import Evaluator

    def reference(*inputs):
        raise MemoryError("Unable to allocate 32.0 GiB for an array with shape (2048, 2048, "
                          "2048) and data type float32")
    log = io.StringIO()
    sizes = {"M": 16, "N": 16, "K": 16}
    ev = Evaluator(bind_sizes(program("mm"), sizes), sizes, reference=reference, progress=log)
    with pytest.raises(McplError) as e:
        ev.setup()
    d = e.value.diagnostics[0]
    assert "the expected result of 'mm' at M=16, N=16, K=16 does not fit in this machine's " \
           "memory (Unable to allocate 32.0 GiB" in d.message
    assert "smaller sizes" in d.hint
    assert log.getvalue() == "explore: computing the expected result of 'mm' at M=16, N=16, " \
                             "K=16 (the reference)\n"


# ------------------------------------------------------------------ help


def test_the_help_shows_a_program_the_syntax_and_where_the_examples_are(run_cli):
    _, text, _ = run_cli("lift", "--help")
    assert "sum = fun(x: float[N]) => reduce(add, 0.0f) $ x" in text
    assert "'f o g' composes" in text and "mcl/lift/programs/" in text
    for example in ("check", "rewrite", "explore"):
        assert f"mcl lift {example} mcl/lift/programs/sum.lift" in text
    # every example program named exists
    for name in ("sum", "dot", "asum", "scal", "gemv", "mm", "stencil"):
        assert (PROGRAMS / f"{name}.lift").is_file()
    _, text, _ = run_cli("lift", "rewrite", "--help")
    assert "its position (--at) and parameter choice (--choice)" in " ".join(text.split())


def test_gen_output_that_is_a_file_says_that_o_names_a_folder(run_cli, tmp_path):
    f = tmp_path / "afile"
    f.write_text("keep")
    code, out, err = run_cli("lift", "gen", SCAL, "--size", "N=8", "--rule", "map-to-mapGlb",
                             "-o", f)
    assert code == 2 and out == ""
    assert f"mcl lift gen: error: cannot write to '{f}': it is a file (-o names the folder " \
        "where kernel.cl" in err
    assert f.read_text() == "keep"
    code, out, err = run_cli("lift", "gen", SCAL, "--size", "N=8", "--rule", "map-to-mapGlb",
                             "-o", tmp_path / "k")
    assert code == 0 and (tmp_path / "k" / "kernel.cl").is_file()


@pytest.mark.parametrize("value", [0, -4, 2.5, "8"])
def test_binding_a_size_to_what_is_not_a_length_is_refused(value):
    from mcl.lift.interp import random_inputs
    with pytest.raises(McplError, match=f"size N = {value!r}: a size is a positive integer"):
        bind_sizes(program("sum"), {"N": value})   # (type-checked as float[-4] before)
    with pytest.raises(McplError, match="a size is a positive integer"):
        random_inputs(program("sum"), {"N": value})


def test_an_int_where_a_float_is_taken_says_how_to_write_the_literal():
    d = _error(ADD + "g = fun(x: float[8]) => reduce(add, 0) $ x\n")
    assert "argument 'x' has type float but receives int" in d.message
    assert "written 0.0f (not 0)" in d.hint


@pytest.mark.parametrize("text", ["g = fun(x: float[N]) => map(fun(v) => v) $ x\n",
                                  "g = fun(A: float[N][M]) => map(map(id)) o transpose $ A\n"])
def test_a_program_that_only_rearranges_its_inputs_says_so_and_how_to_copy(run_cli, tmp_path,
                                                                            text):
    f = tmp_path / "view.lift"
    f.write_text(text)
    code, out, err = run_cli("lift", "gen", f, "--size", "N=64", *(
        ["--size", "M=32"] if "M" in text else []))
    assert code == 1 and out == ""
    assert "the program computes nothing: it only rearranges its inputs" in err
    assert "userfun copy(v: float): float = v" in err


def test_vectors_of_the_wrong_width_are_refused():
    p = parse("userfun add4(x: float4, y: float4): float4 = x + y\n"
              "g = fun(x: float4[N], y: float4[N]) => map(fun(p) => add4(p._0, p._1)) "
              "$ zip(x, y)\n")
    assert run(p, np.ones((3, 4)), np.ones((3, 4))).shape == (3, 4)
    for lanes in (3, 8):         # (were taken, giving a result of 3 or 8 lanes)
        with pytest.raises(McplError, match="input 'x' should have 4 lanes"):
            run(p, np.ones((3, lanes)), np.ones((3, lanes)))


def test_every_rule_is_listed_without_a_program(run_cli):
    code, out, err = run_cli("lift", "rewrite", "--rules")
    assert code == 0 and out.startswith("id-intro ") and "reduce-to-workgroup-tree" in out
    code, out, err = run_cli("lift", "rewrite")
    assert code == 2 and "give a Lift program (.lift) to rewrite" in err


def test_from_mcpl_reads_a_description_on_the_hwd_path(run_cli, tmp_path):
    """A kernel importing a level of the user's (`import mygpu;`) derives with
    --hwd-path naming its folder; without it, the import is the error."""
    from tests.conftest import ROOT
    levels, kernels = tmp_path / "levels", tmp_path / "k"
    levels.mkdir()
    kernels.mkdir()
    gpu = (ROOT / "mcl" / "hwdescs" / "gpu.hdl").read_text()
    (levels / "mygpu.hdl").write_text(gpu.replace("hardware_description gpu;",
                                                  "hardware_description mygpu;"))
    text = (ROOT / "examples" / "vector_add" / "perfect.mcpl").read_text()
    kernel = kernels / "va.mcpl"
    kernel.write_text(text.replace("import perfect;", "import perfect;\nimport mygpu;"))
    code, out, err = run_cli("lift", "from-mcpl", kernel)
    assert code == 1 and "mygpu" in out + err
    code, out, err = run_cli("lift", "from-mcpl", "--hwd-path", levels, kernel)
    assert code == 0 and "map(" in out, out + err


MASKED_X = np.ma.masked_array(np.arange(8, dtype=np.float32), mask=[0, 1] * 4)


@pytest.mark.parametrize("a, x, bad", [
    (2.0, MASKED_X, "x"),
    (np.ma.masked_array(2.0, mask=True), np.ones(8, np.float32), "a")])
def test_a_masked_input_is_refused_not_read_without_its_mask(rt, a, x, bad):
    """np.asarray dropped the mask: the interpreter and a generated kernel computed with
    the masked-out elements as values, silently. Refused, as a compiled MCPL kernel
    refuses one, with the same hint."""
    from mcl.lift.execute import Bound, compile_generated, run_generated
    calls = {"the interpreter": lambda: run(program("scal"), a, x),
             "a generated kernel": lambda: run_generated(_scal_kernel(), rt, [a, x]),
             "Bound": lambda: Bound(compile_generated(_scal_kernel(), rt), [a, x])}
    kind = "array" if bad == "x" else "scalar"
    for what, call in calls.items():
        with pytest.raises(McplError) as e:
            call()
        d = e.value.diagnostics[0]
        assert d.code == "lift-run", what
        assert d.message.startswith(f"input '{bad}' is a numpy masked {kind}: the program "
                                    "reads "), d.message
        assert f"{bad}.filled(value)" in d.hint and f"np.asarray({bad}.data)" in d.hint
    filled = MASKED_X.filled(0)
    assert run_generated(_scal_kernel(), rt, [2.0, filled]).tolist() == (2 * filled).tolist()


def test_a_program_derived_from_mcpl_refuses_masked_values():
    """Derivation.run converted its values with np.asarray, which drops the mask."""
    from mcl.lift.from_mcpl import derive
    from tests.conftest import EXAMPLES
    d = derive(EXAMPLES / "vector_add" / "perfect.mcpl")
    ones = np.ones(8, np.float32)
    for values, bad in (({"n": 8, "a": MASKED_X, "b": ones}, "a"),
                        ({"n": np.ma.masked_array(8, mask=True), "a": ones, "b": ones}, "n")):
        with pytest.raises(McplError) as e:
            d.run(values)
        diag = e.value.diagnostics[0]
        assert diag.code == "from-mcpl-run"
        assert diag.message.startswith(f"'{bad}' is a numpy masked "), diag.message
        assert f"{bad}.filled(value)" in diag.hint
    assert d.run({"n": 8, "a": MASKED_X.filled(0), "b": ones}).tolist() == \
        (MASKED_X.filled(0) + 1).tolist()
