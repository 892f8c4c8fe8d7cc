"""Deriving Lift programs from MCPL kernels: the programs of the examples, their
results against reference.py (Lift's interpreter), and the explanations of what
Lift cannot express (with MCPL spans)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mcl.diagnostics import McplError
from mcl.lift.from_mcpl import derive, reference_module, verify
from mcl.lift.ir import Prim, walk
from mcl.lift.parser import parse
from mcl.lift.printer import key
from mcl.lift.typecheck import check_program
from mcl.mcpl import parse as parse_mcpl

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

FIVE = ["vector_add", "matmul", "gesummv", "reduction", "convolution"]


def _patterns(prog) -> set[str]:
    return {n.name for _, n in walk(prog.body) if isinstance(n, Prim)}


def _errors(text: str) -> list:
    with pytest.raises(McplError) as e:
        derive(parse_mcpl(text, "k.mcpl"))
    return e.value.diagnostics


@pytest.mark.parametrize("kernel", FIVE)
def test_derived_program_matches_reference(kernel):
    path = EXAMPLES / kernel / "perfect.mcpl"
    d = derive(path)
    ref = reference_module(path)
    for sizes in ref.SIZES[:4]:
        c = verify(d, ref, sizes, seed=1)
        assert c.ok, (sizes, c.max_error)


@pytest.mark.parametrize("kernel", FIVE)
def test_printed_program_parses_back(kernel):
    d = derive(EXAMPLES / kernel / "perfect.mcpl")
    again = parse(d.text())
    assert key(again.body) == key(d.program.body)
    check_program(again)


def test_patterns_of_the_examples():
    assert _patterns(derive(EXAMPLES / "vector_add" / "perfect.mcpl").program) == {"map", "zip",
                                                                                 "get"}
    mm = derive(EXAMPLES / "matmul" / "perfect.mcpl").program
    assert {"map", "reduce", "zip", "transpose", "join"} <= _patterns(mm)
    conv = derive(EXAMPLES / "convolution" / "perfect.mcpl").program
    assert {"slide", "transpose", "reduce", "join"} <= _patterns(conv)
    red = derive(EXAMPLES / "reduction" / "perfect.mcpl")
    assert "reduce" in _patterns(red.program)
    assert [p.name for p in red.program.params] == ["input", "result"]


def test_accelerator_level_derives_the_same_program():
    a = derive(EXAMPLES / "matmul" / "accelerator.mcpl").program
    p = derive(EXAMPLES / "matmul" / "perfect.mcpl").program
    assert key(a.body) == key(p.body)


def test_histogram_is_explained():
    with pytest.raises(McplError) as e:
        derive(EXAMPLES / "histogram" / "perfect.mcpl")
    (d,) = e.value.diagnostics
    assert d.code == "from-mcpl-data-index"
    assert d.span.line == 14 and "data" in d.message


def test_spmv_is_explained():
    with pytest.raises(McplError) as e:
        derive(EXAMPLES / "spmv_csr" / "perfect.mcpl")
    codes = sorted(d.code for d in e.value.diagnostics)
    assert codes == ["from-mcpl-data-bounds", "from-mcpl-data-bounds", "from-mcpl-data-index"]
    assert all(d.span.line in (17, 18) for d in e.value.diagnostics)


def test_lower_level_versions_are_refused():
    with pytest.raises(McplError) as e:
        derive(EXAMPLES / "matmul" / "gpu_v1.mcpl")
    assert {d.code for d in e.value.diagnostics} <= {"from-mcpl-structure", "from-mcpl-unsupported",
                                                     "from-mcpl-access", "from-mcpl-write"}


HEAD = "module k;\nimport perfect;\n"


def test_early_exit_is_explained():
    (d,) = _errors(HEAD + """perfect void k(const int n = 8, const int m = 8, main float[n] c,
        main float[n, m] a) {
      foreach (int i in n threads) {
        float s = 0.0;
        for (int j = 0; j < m; j++) { s += a[i, j]; if (s > 1.0) { break; } }
        c[i] = s;
      }
    }""")
    assert d.code == "from-mcpl-early-exit" and d.span.line == 7


def test_non_associative_loop_is_explained():
    diags = _errors(HEAD + """perfect void k(const int n = 8, const int m = 8, main float[n] c,
        main float[n, m] a) {
      foreach (int i in n threads) {
        float s = 0.0;
        for (int j = 0; j < m; j++) { s = s * 0.5 + a[i, j]; }
        c[i] = s;
      }
    }""")
    assert [d.code for d in diags] == ["from-mcpl-loop-carried"]


def test_constant_offset_and_index_value_are_explained():
    diags = _errors(HEAD + """perfect void k(const int n = 8, main float[n] c, main float[n] a) {
      foreach (int i in n threads) { c[i] = a[i + 1]; }
    }""")
    assert diags[0].code == "from-mcpl-access" and "offset" in diags[0].message
    diags = _errors(HEAD + """perfect void k(const int n = 8, main float[n] c, main float[n] a) {
      foreach (int i in n threads) { c[i] = a[i] * i; }
    }""")
    assert diags[0].code == "from-mcpl-index-value"


def test_race_on_output_is_explained():
    diags = _errors(HEAD + """perfect void k(const int n = 8, const int m = 8, main float[n] c,
        main float[n, m] a) {
      foreach (int i in n threads) { foreach (int j in m threads) { c[i] = a[i, j]; } }
    }""")
    assert diags[0].code == "from-mcpl-write" and "race" in diags[0].message


def test_branches_transposed_writes_and_nested_loops():
    """?: from if, an output written as c[j, i], a block access split(s), -= and max."""
    text = HEAD + """perfect void k(const int n = 4, const int m = 6, const int s = 3,
        main float[m, n] c, main float[n, m] a, main float[n, m * s] b) {
      foreach (int i in n threads) {
        foreach (int j in m threads) {
          float v = a[i, j];
          if (v < 0.0) { v = -v; } else { v = v * 2.0; }
          float acc = 1.0;
          float best = -100.0;
          for (int x = 0; x < s; x++) {
            acc -= b[i, s * j + x];
            best = max(best, b[i, s * j + x]);
          }
          c[j, i] = v + acc * best;
        }
      }
    }"""
    d = derive(parse_mcpl(text, "k.mcpl"))
    rng = np.random.default_rng(3)
    n, m, s = 4, 6, 3
    a = rng.uniform(-1, 1, (n, m)).astype(np.float32)
    b = rng.uniform(-1, 1, (n, m * s)).astype(np.float32)
    got = d.run({"n": n, "m": m, "s": s, "a": a, "b": b})
    blocks = b.reshape(n, m, s)
    v = np.where(a < 0, -a, a * 2)
    want = (v + (1.0 - blocks.sum(-1)) * np.maximum(-100.0, blocks.max(-1))).T
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert "split" in _patterns(d.program)


def test_size_used_as_value_becomes_parameter_or_constant():
    path = EXAMPLES / "convolution" / "perfect.mcpl"
    assert [p.name for p in derive(path).program.params][:2] == ["fh_value", "fw_value"]
    bound = derive(path, constants={"fh": 3, "fw": 5}).program
    assert [p.name for p in bound.params] == ["input", "filter"]


def test_cli_prints_program_and_explains(run_cli):
    code, out, err = run_cli("lift", "from-mcpl", EXAMPLES / "matmul" / "perfect.mcpl",
                             "--explain", "--verify")
    assert code == 0, err
    assert "reduce(add, 0.0f)" in out and "transpose" in out
    assert "verify" in out and "MISMATCH" not in out
    code, out, err = run_cli("lift", "from-mcpl", EXAMPLES / "histogram" / "perfect.mcpl")
    assert code == 1
    assert "perfect.mcpl:14:" in err and "from-mcpl-data-index" in err


def test_front_end_errors_come_before_any_derivation(tmp_path):
    # the size of the inner foreach depends on i: `mcl check` rejects it, so derive
    # reports that, not a consequence of it
    from mcl.diagnostics import McplError
    from mcl.lift.from_mcpl import derive
    src = tmp_path / "k.mcpl"
    src.write_text("""module m;
import perfect;
perfect void f(const int n, main float[n] a, main float[n] b) {
    foreach (int i in n threads) {
        foreach (int j in i threads) { a[i] = b[j]; }
    }
}
""")
    import pytest
    with pytest.raises(McplError) as e:
        derive(src)
    assert [d.code for d in e.value.diagnostics] == ["mcpl-foreach-size-depends"]
