"""The "approximate" marks of operation statistics: "at most" only where a count
is an upper bound (conditions, estimated loop bounds); an unknown number of
iterations is a symbol ``iterations_<var>`` with the reason stated, not a bound."""

from __future__ import annotations

from pathlib import Path

from mcl.analyses import feedback, operation_counts
from mcl.mcpl import check

ROOT = Path(__file__).resolve().parents[2]

WHILE = """module w;
import perfect;
perfect void halve(const int n = 1024, float[n] x) {
  foreach (int i in n threads) {
    float v = x[i];
    while (v > 1.0) {
      v = v / 2.0;
    }
    x[i] = v;
  }
}
"""


def ops(checked):
    [d] = [d for d in feedback(checked, only={"ops"})]
    return d


def test_guarded_counts_are_upper_bounds():
    c = check(ROOT / "examples" / "matmul" / "gpu.mcpl")  # if (j < m) around the body
    counts = operation_counts(c.module.functions[0], c)
    assert counts.approximate and counts.upper_bound
    d = ops(c)
    assert d.message.startswith("at most ")
    assert "upper bounds" in d.hint
    assert d.data["upper_bound"] is True


def test_exact_counts_have_no_mark():
    c = check(ROOT / "examples" / "matmul" / "perfect.mcpl")
    counts = operation_counts(c.module.functions[0], c)
    assert not counts.approximate and not counts.upper_bound
    d = ops(c)
    assert not d.message.startswith("at most") and d.hint is None


def test_unknown_iterations_are_a_stated_symbol_not_a_bound(tmp_path):
    f = tmp_path / "w.mcpl"
    f.write_text(WHILE)
    c = check(f)
    assert not c.has_errors
    counts = operation_counts(c.module.functions[0], c)
    assert counts.approximate and not counts.upper_bound
    assert "iterations_while" in {s.name for s in counts.flops.free_symbols}
    d = ops(c)
    assert not d.message.startswith("at most")
    assert "iterations_while" in d.message
    assert "while loop runs an unknown number of times" in d.hint


def test_data_dependent_loop_bounds_are_stated():
    c = check(ROOT / "examples" / "spmv_csr" / "perfect.mcpl")  # k from rowPtr[r]
    counts = operation_counts(c.module.functions[0], c)
    assert counts.approximate and not counts.upper_bound
    d = ops(c)
    assert "iterations_k" in d.message and not d.message.startswith("at most")
    assert "'k' is not known statically" in d.hint


def test_code_under_an_if_that_unrolled_loops_decide_is_counted_exactly(tmp_path):
    """``if (y >= 0 && y < 3)`` with ``y = r - e`` in counted loops r (6 iterations) and
    e (4) holds for 12 of the 24 (r, e): with numbers for the sizes the add runs 12
    times per thread, an exact count; a condition on a size left symbolic, or on the
    thread, keeps the count an upper bound."""
    from mcl.analyses.stats import counts_of_kernel
    from tests.analyses.kernels import built

    source = """\
        module k;
        import perfect;
        perfect void k(const int n = 64, float[n] out, float[n] x) {
          foreach (int i in n threads) {
            float s = 0.0;
            for (int r = 0; r < 6; r++) {
              for (int e = 0; e < 4; e++) {
                int y = r - e;
                if (COND) {
                  s = s + x[i];
                }
              }
            }
            out[i] = s;
          }
        }
        """
    _, num, _ = built(tmp_path, source.replace("COND", "y >= 0 && y < 3"))
    counts = counts_of_kernel(num)
    assert counts.flops == 64 * 12
    assert counts.reads["main"] == 64 * 12
    assert not counts.upper_bound
    _, num, _ = built(tmp_path, source.replace("COND", "y >= 0 && i < 3"))
    counts = counts_of_kernel(num)
    assert counts.flops == 64 * 24 and counts.upper_bound


# --------------------------------------------------------------------------- value = formula


def test_a_grid_stride_loop_counts_its_threads_average_rounds():
    # black_scholes hopper v1: 270336 threads go round i += stride 14.8 times on
    # average (4e6 options); the number beside the formula is the formula's value,
    # not every thread at the first thread's 15 rounds (279797760)
    d = ops(check(ROOT / "examples" / "black_scholes" / "hopper_v1.mcpl"))
    assert "at most 69*n (= 276000000) computational operations" in d.message
    assert d.data["flops_value"] == 276000000


def test_a_rounded_up_quotient_of_sizes_stays_rounded_in_the_formula():
    # matmul gpu: (m + 1023) / 1024 blocks of 1024 threads, guarded by j < m; the formula
    # was 2*n*p*(m + 1023), 50% above its own value (= 17179869184) at m = 2048
    d = ops(check(ROOT / "examples" / "matmul" / "gpu.mcpl"))
    assert ("at most 2048*n*p*floor((m + 1023)/1024) (= 17179869184) computational "
            "operations") in d.message


def _halving_ops(tmp_path, start: str):
    """The ops diagnostic of WHILE with its while loop replaced by
    ``for (int step = start; step > 0; step = step / 2) v = v + 1.0;``."""
    src = WHILE.replace("""    while (v > 1.0) {
      v = v / 2.0;
    }
""", f"""    for (int step = {start}; step > 0; step = step / 2) {{
      v = v + 1.0;
    }}
""")
    path = tmp_path / "h.mcpl"
    path.write_text(src)
    return ops(check(path))


def test_a_halving_written_as_an_assignment_is_said_to_be_one(tmp_path):
    # `step = step / 2` is the halving `step /= 2` is. From a size the formula cannot
    # follow it, which is what the help says, not "not known statically" (rowsum of the
    # held-out kernels); at the size's value the counts run it: 11 halvings of 1024
    d = _halving_ops(tmp_path, "n")
    assert "loop 'step' multiplies or divides its index (step = step / 2)" in d.hint
    assert "(= 11264) computational operations" in d.message


def test_a_halving_from_a_number_is_counted(tmp_path):
    # from 16 the index takes 16, 8, 4, 2, 1: five additions a thread, no symbol left
    d = _halving_ops(tmp_path, "16")
    assert "multiplies or divides" not in (d.hint or "")
    assert d.message.startswith("5*n (= 5120) computational operations")
