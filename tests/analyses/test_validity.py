"""What makes a kernel wrong whatever its speed (mcl.analyses.validity): a loop that
never runs with the kernel's constants (a tile size that an integer division rounds down
to nothing) is named at the loop with what it would write, an index that leaves its
dimension for a tile size at the access with how far it reaches, also inside an ``if``
whose condition holds there, and a read of elements of a shared tile or register array
that nothing writes at the read; a loop that runs, an index inside, a read of written
elements and an access under a condition on data are not."""

from __future__ import annotations

import pytest

from mcl.analyses import feedback

_KERNEL = """module k;
import hopper;
hopper void k(const int n = 4096, global float[n] out, global float[n] inp) {{
  const int cols = {cols};
  foreach (int b in n / 128 blocks) {{
    foreach (int w in 1 warps) {{
      foreach (int t in 32 threads) {{
        for (int v = 0; v < cols / 4; v++) {{
          for (int u = 0; u < 4; u++) {{
            out[b * 128 + t * 4 + u] = inp[b * 128 + t * 4 + u];
          }}
        }}
      }}
    }}
  }}
}}
"""


def _empty(tmp_path, cols: int) -> list:
    f = tmp_path / "k.mcpl"
    f.write_text(_KERNEL.format(cols=cols))
    return [d for d in feedback(str(f), only=["ops"]) if d.code == "feedback-empty-loop"]


def test_a_loop_whose_bound_rounds_down_to_zero_is_named(tmp_path):
    (d,) = _empty(tmp_path, 2)
    assert d.severity.name == "WARNING"
    assert d.span.line == 8                        # the loop v, not the inner loop u
    assert "loop v never runs" in d.message and "'v < cols / 4'" in d.message
    assert "'out'" in d.message


def test_a_loop_that_runs_is_not_named(tmp_path):
    assert _empty(tmp_path, 4) == []
    assert _empty(tmp_path, 8) == []


_TILE = """module k;
import hopper;
hopper void k(const int n = 4096, global float[n, 128] out, global float[n, 128] inp) {{
  const int tn = {tn};
  const int nrThreads = 128 / tn;
  foreach (int b in n blocks) {{
    foreach (int w in 1 warps) {{
      foreach (int t in nrThreads threads) {{
        for (int e = 0; e < tn; e++) {{
          {guard}out[b, e / 4 * 64 + 4 * t + e % 4] = inp[b, t * tn + e];
        }}
      }}
    }}
  }}
}}
"""


def _bounds(tmp_path, tn: int, guard: str = "") -> list:
    f = tmp_path / "k.mcpl"
    f.write_text(_TILE.format(tn=tn, guard=guard))
    return [d for d in feedback(str(f), only=["ops"]) if d.code == "feedback-out-of-bounds"]


def test_an_index_beyond_its_dimension_for_a_tile_size_is_named(tmp_path):
    # written for tn = 8: two runs of 4 columns, 64 apart; with tn = 16 the runs of the
    # last threads reach column 7 * 4 + 3 + 3 * 64 = 223 of 128
    (d,) = _bounds(tmp_path, 16)
    assert d.severity.name == "WARNING"
    assert d.span.line == 10
    assert "index 2 of out (e / 4 * 64 + 4 * t + e % 4) reaches 223 (at e = 15, t = 7)" in d.message
    assert "outside its 128 elements (0 .. 127)" in d.message


def test_an_index_beyond_2_to_the_53_is_named_with_its_magnitude(tmp_path):
    # a mistyped multiplier: past 2^53 the index is no longer an exact float and past
    # 2^63 int64 arithmetic wraps round; it was let through (mcl run then launched a
    # store 6.7e24 elements away: a segmentation fault on PoCL)
    from mcl.analyses import wrong_kernel
    from mcl.mcpl import check, parse_file
    f = tmp_path / "k.mcpl"
    f.write_text(_KERNEL.format(cols=4).replace(
        "out[b * 128 + t * 4 + u]", "out[(b * 128 + t * 4 + u) * 100000000000000000]"))
    (d,) = [d for d in feedback(str(f), only=["ops"]) if d.code == "feedback-out-of-bounds"]
    assert "reaches about 4.1e+20 (at b = 31, t = 31, u = 3)" in d.message, \
        d.message
    found = wrong_kernel(check(parse_file(str(f))), {"n": 4096})
    (w,) = [x for x in found if x.code == "feedback-out-of-bounds"]
    assert w.data["modifies"]
    # the store reaches out[0] alone: the rest are proven unwritten too
    assert [x.code for x in found if x is not w] == ["feedback-unwritten-output"]


_FLAT = """module flat;
import hopper;
hopper void flat(const int n = 50000, const int m = 50000,
                 global float[n * m] a, global float[n] y) {{
  foreach (int b in n / 256 blocks) {{
    foreach (int w in 8 warps) {{
      foreach (int t in 32 threads) {{
        int i = b * 256 + w * 32 + t;
        float s = 0.0;
        for (int j = 0; j < m; j++) {{
          {row}
          s += a[{index}];
        }}
        y[i] = s;
      }}
    }}
  }}
}}
"""


def test_an_index_past_32_bit_ints_inside_a_larger_dimension_is_named(tmp_path):
    # a 50000 x 50000 matrix flattened by hand: i * m + j passes 2^31 - 1 from row 42950
    # on, and the generated code computes it in 32-bit ints; two dimensions (offsets in
    # 64 bits where needed) or a long index do not wrap
    f = tmp_path / "flat.mcpl"
    f.write_text(_FLAT.format(row="", index="i * m + j"))
    (d,) = [d for d in feedback(str(f), only=["ops"]) if d.code == "feedback-out-of-bounds"]
    assert d.message.startswith("the index of a (i * m + j) reaches 2,495,999,999 (at b = "
                                "194, j = 49999, t = 31, w = 7), past the 2,147,483,647 of "
                                "the 32-bit int arithmetic"), d.message
    assert "float[n, m]" in d.hint
    f.write_text(_FLAT.format(row="long k = i;", index="k * m + j"))
    assert [d for d in feedback(str(f), only=["ops"])
            if d.code == "feedback-out-of-bounds"] == []
    f.write_text(_FLAT.format(row="", index="i * m + j"))
    assert [d for d in feedback(str(f), only=["ops"], values={"n": 40000})
            if d.code == "feedback-out-of-bounds"] == []


_STRIDE = """module k;
import hopper;
hopper void k(const int n = 5000, global float[n] out, global float[n] inp) {{
  const int nrBlocks = 4;
  const int stride = {stride};
  foreach (int b in nrBlocks blocks) {{
    foreach (int w in 1 warps) {{
      foreach (int t in 32 threads) {{
        for (int i = {loop}) {{
          out[i] = inp[i];
        }}
      }}
    }}
  }}
}}
"""


@pytest.mark.parametrize("stride, loop, message", [
    # a mistyped grid stride (found by fuzzing mcl run: the run hung)
    ("0 * 32 * nrBlocks", "b * 32 + t; i < n; i += stride",
     "loop i never ends: its step ('i += stride') is 0 at these sizes (at b = 0, t = 0)"),
    # a step of the wrong sign
    ("32 * nrBlocks", "b * 32 + t; i < n; i -= stride",
     "loop i never ends: its step ('i -= stride', -128 at these sizes) moves i away from "
     "the bound of 'i < n' (at b = 0, t = 0)"),
])
def test_a_loop_that_never_ends_is_named(tmp_path, stride, loop, message):
    from mcl.analyses import wrong_kernel
    from mcl.mcpl import check, parse_file
    f = tmp_path / "k.mcpl"
    f.write_text(_STRIDE.format(stride=stride, loop=loop))
    (d,) = [d for d in wrong_kernel(check(parse_file(str(f)))) if d.code != "feedback-race"]
    assert d.code == "feedback-endless-loop" and d.message == message, d.message
    assert d.span.line == 9


@pytest.mark.parametrize("stride, loop", [
    ("32 * nrBlocks", "b * 32 + t; i < n; i += stride"),
    # a count-down loop
    ("32 * nrBlocks", "n - 1 - b * 32 - t; i >= 0; i -= stride"),
    # a step of 0 in a loop whose condition fails from the start: it does not run
    ("0", "n + t; i < n; i += stride"),
])
def test_a_loop_that_ends_is_not_named(tmp_path, stride, loop):
    from mcl.analyses import wrong_kernel
    from mcl.mcpl import check, parse_file
    f = tmp_path / "k.mcpl"
    f.write_text(_STRIDE.format(stride=stride, loop=loop))
    assert [d for d in wrong_kernel(check(parse_file(str(f))))
            if d.code == "feedback-endless-loop"] == []


@pytest.mark.parametrize("update, stuck", [
    ("s >>= 1", None),                   # reduction hopper_v2's tree, as written
    ("s >>= 0", "its update ('s >>= 0') leaves s at 128, where 's > 0' holds"),
    ("s /= 1", "its update ('s /= 1') leaves s at 128, where 's > 0' holds"),
    ("s = s * 1", "its update ('s = s * 1') leaves s at 128, where 's > 0' holds"),
])
def test_a_tree_loop_whose_update_leaves_its_index_is_named(tmp_path, update, stuck):
    """reduction hopper_v2's tree ``for (int s = nrThreads / 2; s > 0; s >>= 1)`` with
    its shift mistyped as 0 (found by mutating the examples: `mcl run` hung on PoCL): a
    loop that multiplies, divides or shifts its index by a factor that leaves it runs
    forever; now feedback-endless-loop, and `mcl run` does not launch it."""
    from pathlib import Path

    from mcl.analyses import wrong_kernel
    from mcl.mcpl import check, parse_file
    source = (Path(__file__).resolve().parents[2] / "examples" / "reduction" /
              "hopper_v2.mcpl").read_text()
    assert "s > 0; s >>= 1)" in source
    f = tmp_path / "hopper_v2.mcpl"
    f.write_text(source.replace("s > 0; s >>= 1)", f"s > 0; {update})"))
    found = [d for d in wrong_kernel(check(parse_file(str(f)))) if
             d.code == "feedback-endless-loop"]
    if stuck is None:
        assert found == []
    else:
        (d,) = found
        assert d.message == f"loop s never ends: {stuck}", d.message


def test_an_index_inside_its_dimension_is_not_named(tmp_path):
    assert _bounds(tmp_path, 8) == []


def test_a_guarded_access_is_checked_where_its_condition_holds(tmp_path):
    # a guard that keeps the index inside: e < 8 leaves columns up to 64 + 28 + 3
    assert _bounds(tmp_path, 16, guard="if (e < 8) ") == []
    # one that does not (matmul hopper v3's tile loads with twice the threads: the
    # bounds test of the global element holds for rows beyond the shared tile)
    (d,) = _bounds(tmp_path, 16, guard="if (b < n && e >= 4) ")
    assert "reaches 223 (at b = 0, e = 15, t = 7)" in d.message
    # the else branch runs where the condition fails
    (d,) = _bounds(tmp_path, 16, guard="if (e < 12) {} else ")
    assert "reaches 223" in d.message and "e = 15" in d.message


def test_a_branch_that_leaves_guards_the_statements_after_it(tmp_path):
    """`if (e >= 8) continue;` (or return, break): the rest of its block runs where the
    condition fails, as CUDA's `if (i >= n) return;`; where the branch does not leave,
    or after the block, it guards nothing."""
    for leave in ("continue;", "break;", "return;", "{ continue; }"):
        assert _bounds(tmp_path, 16, guard=f"if (e >= 8) {leave} ") == [], leave
    (d,) = _bounds(tmp_path, 16, guard="if (e >= 8) { e = e; } ")
    assert "reaches 223" in d.message
    (d,) = _bounds(tmp_path, 16, guard="if (e >= 12) { continue; } ")
    assert "reaches 159 (at e = 11, t = 7)" in d.message


def test_an_access_under_a_condition_on_data_is_not_named(tmp_path):
    # the analyses cannot tell where a condition on data holds: no proof, no warning
    assert _bounds(tmp_path, 16, guard="if (inp[b, 0] > 0.0) ") == []


_PHASES = """module k;
import gpu;
gpu void k(const int n = 64, dev float[n] out) {{
  const int nrPhases = 8;
  foreach (int b in 1 blocks) {{
    local float[2, 32] l_a;
    foreach (int t in 32 threads) {{
      for (int l = 0; l < nrPhases; l++) {{
        int cur = l % {buffers};
        bool more = {more};
        if ({cond}) {{
          l_a[1 - cur, t] = 1.0;
        }}
        barrier(local);
        out[t] = l_a[cur, t];
        barrier(local);
      }}
    }}
  }}
}}
"""


def _phase_bounds(tmp_path, buffers: int, cond: str = "more",
                  more: str = "l + 1 < nrPhases") -> list:
    f = tmp_path / "k.mcpl"
    f.write_text(_PHASES.format(buffers=buffers, cond=cond, more=more))
    return [d for d in feedback(str(f), only=["ops"]) if d.code == "feedback-out-of-bounds"
            and d.span.line == 12]


def test_a_condition_held_in_a_bool_variable_is_the_condition_it_was_given(tmp_path):
    """A double buffer's store of the next phase under ``if (more)``, ``more`` the
    condition ``l + 1 < nrPhases``: a store whose index leaves the buffer (a mistyped
    ``cur = l % 33``) was not checked, as under a condition on data, and `mcl run`
    launched it (PoCL: a segmentation fault); the bool is now its condition."""
    assert _phase_bounds(tmp_path, 2) == []
    (d,) = _phase_bounds(tmp_path, 33)
    assert "index 1 of l_a (1 - cur) reaches -5 (at l = 6)" in d.message
    assert d.data["modifies"]
    # negated: the store runs at the last phase only
    (d,) = _phase_bounds(tmp_path, 33, cond="!more")
    assert "reaches -6 (at l = 7)" in d.message
    # a bool of data stays a condition the analyses cannot compute
    assert _phase_bounds(tmp_path, 33, more="out[0] > 0.0") == []


def test_the_examples_have_no_index_beyond_its_dimension():
    from pathlib import Path
    examples = Path(__file__).resolve().parents[2] / "examples"
    for path in sorted(examples.glob("*/hopper*.mcpl")):
        found = [d for d in feedback(str(path), only=["ops"])
                 if d.code in ("feedback-out-of-bounds", "feedback-empty-loop")]
        assert found == [], (path, [d.message for d in found])


_PARTIALS = """module k;
import hopper;
hopper void k(const int n = 4096, global float[n] out, global float[n, 64] inp) {{
  const int unroll = {unroll};
  foreach (int b in n / 32 blocks) {{
    foreach (int w in 1 warps) {{
      foreach (int t in 32 threads) {{
        int i = b * 32 + t;
        if (i < n) {{
          reg float[unroll] sums;
          for (int u = 0; u < unroll; u++) {{
            sums[u] = inp[i, u];
          }}
          out[i] = (sums[0] + sums[1]) + (sums[2] + sums[3]);
        }}
      }}
    }}
  }}
}}
"""


def test_a_constant_index_beyond_its_dimension_is_named_even_when_guarded(tmp_path):
    # the partial sums are named one by one for unroll = 4; with unroll = 2, sums[2] and
    # sums[3] do not exist (gesummv hopper_v1's sweep variant: NaN on the H100), and the
    # bounds test around them tests i, not the constant
    # (index and size both constants: mcl check reports it, before any analysis)
    f = tmp_path / "k.mcpl"
    f.write_text(_PARTIALS.format(unroll=2))
    from mcl.diagnostics import McplError
    with pytest.raises(McplError) as raised:
        feedback(str(f), only=["ops"])
    found = [d for d in raised.value.diagnostics if d.code == "mcpl-index-range"]
    assert [d.message for d in found] == [
        "index 2 of 'sums' is outside its dimension (0 .. 1)",
        "index 3 of 'sums' is outside its dimension (0 .. 1)"]
    assert all(d.is_error for d in found)
    f.write_text(_PARTIALS.format(unroll=4))
    assert [d for d in feedback(str(f), only=["ops"])
            if d.code == "feedback-out-of-bounds"] == []


_FILL = """module k;
import hopper;
hopper void k(const int n = 1024, global float[n, 64] out, global float[n, 64] inp) {{
  const int rows = {rows};                   // rows of the tile the loop fills
  foreach (int b in n / 8 blocks) {{
    shared float[2, 8, 64] tile;
    foreach (int w in 2 warps) {{
      foreach (int t in 32 threads) {{
        int tid = w * 32 + t;
        reg float[8] v;
        for (int l = 0; l < 16; l++) {{
          int cur = l % 2;
          for (int r = 0; r < rows; r++) {{
            if (b * 8 + r < n) {{
              tile[cur, r, tid] = inp[b * 8 + r, tid];
              v[r] = inp[b * 8 + r, 63 - tid];
            }}
          }}
          barrier(shared);
          for (int e = 0; e < 8; e++) {{
            {guard}out[b * 8 + e, tid] += tile[cur, e, 63 - tid] + v[e];
          }}
          barrier(shared);
        }}
      }}
    }}
  }}
}}
"""


def _unwritten(tmp_path, rows: int, guard: str = "") -> list:
    f = tmp_path / "k.mcpl"
    f.write_text(_FILL.format(rows=rows, guard=guard))
    return [d for d in feedback(str(f), only=["ops"]) if d.code == "feedback-unwritten-read"]


def test_a_read_of_elements_nothing_writes_is_named(tmp_path):
    # the loop fills 4 of the 8 rows each phase's reads take, of the shared tile (its
    # double buffer chosen by l % 2) and of the register array: the writes count
    # whatever their bounds test, the reads where they run
    tile, regs = _unwritten(tmp_path, 4)
    assert tile.severity.name == "WARNING" and tile.span.line == 21
    assert tile.message.startswith("tile[cur, e, 63 - tid] reads elements of tile that "
                                   "nothing writes (512 elements, first [0, 4, 63]")
    assert "its value is whatever the memory held" in tile.message
    assert regs.message.startswith("v[e] reads elements of v that nothing writes "
                                   "(4 elements, first [4]")


def test_reads_of_written_elements_are_not_named(tmp_path):
    assert _unwritten(tmp_path, 8) == []
    # reads the analyses cannot place (a condition on data) are not named
    assert _unwritten(tmp_path, 4, guard="if (inp[b, e] > 0.0) ") == []
    # nor those whose condition keeps them to the rows written
    assert _unwritten(tmp_path, 4, guard="if (e < 4) ") == []


def _counted_grid(tmp_path, count: str):
    """The checked kernel of _KERNEL with its blocks counted by ``nrBlocks = count``."""
    from mcl.mcpl import check, parse_file
    f = tmp_path / "k.mcpl"
    f.write_text(_KERNEL.format(cols=4).replace(
        "foreach (int b in n / 128 blocks)",
        f"const int nrBlocks = {count};\n  foreach (int b in nrBlocks blocks)"))
    return f, check(parse_file(str(f)))


def test_a_grid_of_no_blocks_at_the_sizes_of_a_run_is_named(tmp_path):
    # 128 elements a block: n = 64 rounds the number of blocks down to none, and
    # nothing is written to out (mcl run prints it before it runs)
    from mcl.analyses import wrong_kernel
    _, checked = _counted_grid(tmp_path, "n / 128")
    (d,) = wrong_kernel(checked, {"n": 64})
    assert d.code == "feedback-empty-grid" and d.span.line == 6
    assert d.message == ("the nrBlocks blocks b: none at these sizes (nrBlocks = n / 128, "
                         "with n = 64): nothing is written to 'out'")
    assert wrong_kernel(checked, {"n": 256}) == []
    assert wrong_kernel(checked, {"n": 0}) == []     # an output of no elements


def test_a_grid_whose_count_comes_out_below_zero_is_named_and_counted_as_none(tmp_path):
    # a mistyped count, (n - 257) / 128, is -2 at n = 1: no block starts, as with 0; the
    # model's figures count none (not -2 blocks and accesses below zero), and the
    # warning says why
    from mcl.analyses import feedback as run_feedback
    from mcl.analyses import wrong_kernel
    f, checked = _counted_grid(tmp_path, "(n - 257) / 128")
    (d,) = wrong_kernel(checked, {"n": 1})
    assert d.code == "feedback-empty-grid" and d.span.line == 6
    assert d.message == ("the nrBlocks blocks b: -2, so none, at these sizes (nrBlocks = "
                         "(n - 257) / 128, with n = 1): nothing is written to 'out'")
    ops = [x for x in run_feedback(str(f), values={"n": 1}) if x.code == "feedback-ops"]
    assert ops and "(= -" not in ops[0].message, ops[0].message


def test_a_tile_written_through_a_view_is_not_named(tmp_path):
    # rows 0 .. 3 written as tile, rows 4 .. 7 as tile4 (tile seen as runs of 4): the
    # reads of every row find their elements written
    f = tmp_path / "k.mcpl"
    f.write_text(_FILL.format(rows=4, guard="").replace(
        "reg float[8] v;",
        "reg float[8] v;\n        tile as float[2, 8, 16, 4] tile4;").replace(
        "          barrier(shared);\n          for (int e",
        "          for (int r = 4; r < 8; r++) {\n"
        "            tile4[cur, r, tid / 4, tid % 4] = inp[b * 8 + r, tid];\n"
        "            v[r] = inp[b * 8 + r, 63 - tid];\n"
        "          }\n"
        "          barrier(shared);\n          for (int e", 1))
    assert "tile4[cur, r" in f.read_text()
    found = [d for d in feedback(str(f), only=["ops"])
             if d.code in ("feedback-unwritten-read", "feedback-out-of-bounds")]
    assert found == [], [d.message for d in found]


_UNITS = """module k;
import {level};
{level} void k(const int n = 16777216, {space} float[n] a) {{
  foreach (int b in n / 256 blocks) {{
    {inner}
  }}
}}
"""


def _too_many(tmp_path, level: str, space: str, inner: str) -> list:
    f = tmp_path / "k.mcpl"
    f.write_text(_UNITS.format(level=level, space=space, inner=inner))
    return [d for d in feedback(str(f), only=["ops"]) if d.code == "feedback-too-many-units"]


def test_a_block_of_more_threads_than_the_description_allows_is_named(tmp_path):
    # gpu: threads max_nr_units = 1024; two foreach loops of one par_group multiply
    inner = ("foreach (int ti in 64 threads) { foreach (int tj in 32 threads) { "
             "a[b * 256 + (ti * 32 + tj) % 256] = 1.0; } }")
    (d,) = _too_many(tmp_path, "gpu", "dev", inner)
    assert "64 x 32 = 2048 threads in a block" in d.message
    assert "gpu.hierarchy.blocks.block.threads.max_nr_units" in d.message
    assert d.span.line == 5


def test_a_warp_of_more_threads_than_its_exact_count_is_named(tmp_path):
    # hopper: a warp is exactly 32 threads (nr_units = 32)
    inner = ("foreach (int w in 8 warps) { foreach (int t in 64 threads) { "
             "a[b * 256 + (w * 32 + t) % 256] = 1.0; } }")
    (d,) = _too_many(tmp_path, "hopper", "global", inner)
    assert "64 threads in a warp" in d.message and "at most 32" in d.message


def test_units_within_the_limits_and_a_large_grid_are_not_named(tmp_path):
    # 65536 blocks exceed the descriptions' blocks max_nr_units = 65535, which the
    # generator's NDRange does not meet (the grid's dimensions are the driver's)
    inner = ("foreach (int w in 8 warps) { foreach (int t in 32 threads) { "
             "a[b * 256 + w * 32 + t] = 1.0; } }")
    assert _too_many(tmp_path, "hopper", "global", inner) == []


def test_the_examples_start_their_units():
    from pathlib import Path
    examples = Path(__file__).resolve().parents[2] / "examples"
    for path in sorted(examples.glob("*/*.mcpl")):
        found = [d for d in feedback(str(path), only=["ops"])
                 if d.code == "feedback-too-many-units"]
        assert found == [], (path, [d.message for d in found])


def test_a_loop_that_runs_no_iteration_keeps_its_accesses_from_those_points(tmp_path):
    """matmul cpu_v4 stores c[i0 + ei, j0 + ej * nrVectors + v] in `for r < nrFull`,
    where nrFull is 0 for the threads whose columns are not whole: at n = 8, m = 40 those
    threads would store past c's 40 columns, but their loop runs no iteration. (Before,
    the loop's range was not evaluated with the index: 'index 2 of c reaches 47'.)"""
    from pathlib import Path

    from mcl.analyses import wrong_kernel
    from mcl.mcpl import check
    matmul = Path(__file__).resolve().parents[2] / "examples" / "matmul"
    checked = check(str(matmul / "cpu_v4.mcpl"))
    assert [d for d in wrong_kernel(checked, {"n": 8, "m": 40, "p": 256})
            if d.code == "feedback-out-of-bounds"] == []
    # the same store with the loop's guard gone is warned of, and modifies memory
    source = (matmul / "cpu_v4.mcpl").read_text()
    assert "int nrFull = j0 + y * nrVectors <= m ? rows / x : 0;" in source
    (tmp_path / "cpu_v4.mcpl").write_text(source.replace(
        "int nrFull = j0 + y * nrVectors <= m ? rows / x : 0;", "int nrFull = rows / x;"))
    bad = check(str(tmp_path / "cpu_v4.mcpl"))
    found = {d.message.split(" (")[0]: d.data for d in wrong_kernel(
        bad, {"n": 8, "m": 40, "p": 256}) if d.code == "feedback-out-of-bounds"}
    assert found["index 2 of c"]["modifies"] and not found["index 2 of c"]["certain"]
    assert not found["index 2 of b"]["modifies"]       # b's packing reads past b too


def test_a_grid_count_below_zero_gets_feedback_not_a_crash(tmp_path):
    """gesummv hopper_v3 with its block count mistyped so that n = 1 gives -1 blocks
    (found by the property test of mutated kernels): the L1's room per resident block
    divided by no block."""
    from pathlib import Path
    source = (Path(__file__).resolve().parents[2] / "examples" / "gesummv" /
              "hopper_v3.mcpl").read_text()
    assert "(n + rowsPerBlock - 1) / rowsPerBlock" in source
    path = tmp_path / "hopper_v3.mcpl"
    path.write_text(source.replace("(n + rowsPerBlock - 1) / rowsPerBlock",
                                   "(n + rowsPerBlock - 3) / rowsPerBlock"))
    codes = {d.code for d in feedback(str(path), values={"n": 1})}
    assert "feedback-time" in codes


_COUNTED = """module k;
import perfect;
perfect void k(const int n, float[n] x) {{
  foreach (int i in n threads) {{
    for ({loop}) {{ x[i] = x[i] + 1.0; }}
  }}
}}
"""


@pytest.mark.parametrize("loop, trips, warned", [
    # the step moves away from a bound the condition holds from the start: not "never runs"
    ("int r = 0; r < 10; r--", None, "feedback-endless-loop"),
    ("int r = 0; r < n; r--", None, "feedback-endless-loop"),
    ("int r = n; r > 0; r++", None, "feedback-endless-loop"),
    # a condition false from the start runs no iteration, whichever way the loop steps
    ("int r = 5; r < 2; r--", 0, "feedback-empty-loop"),
    ("int r = 0; r > 3; r++", 0, "feedback-empty-loop"),
    ("int r = 10; r >= 0; r--", 11, None),
    ("int r = 1; r < 8; r += 2", 4, None),
])
def test_a_loop_stepping_either_way_is_counted_as_it_runs(tmp_path, loop, trips, warned):
    from mcl.analyses import wrong_kernel
    from mcl.analyses.kernel_build import build_kernel
    from mcl.mcpl import check, parse_file
    f = tmp_path / "k.mcpl"
    f.write_text(_COUNTED.format(loop=loop))
    checked = check(parse_file(str(f)))
    (fn,) = checked.module.functions
    (lp,) = [lp for lp in build_kernel(fn, checked, None).loops if lp.kind == "for"]
    assert (None if lp.trips is None else int(lp.trips)) == trips
    codes = [d.code for d in wrong_kernel(checked, values={"n": 64})
             if d.code != "feedback-race"]
    assert codes == ([warned] if warned else [])


@pytest.mark.parametrize("loop, endless", [
    ("while (true) { x[i] = x[i] + 1.0; }", True),
    ("while (1) { x[i] = x[i] + 1.0; }", True),
    ("while (true) { x[i] = x[i] + 1.0; if (x[i] > 9.0) { break; } }", False),
    ("while (x[i] < 9.0) { x[i] = x[i] + 1.0; }", False),
    ("while (false) { x[i] = 1.0; }", False),
])
def test_a_while_loop_that_never_ends_is_named(tmp_path, loop, endless):
    from mcl.analyses import wrong_kernel
    from mcl.mcpl import check, parse_file
    f = tmp_path / "k.mcpl"
    f.write_text(_COUNTED.replace("for ({loop}) {{ x[i] = x[i] + 1.0; }}", loop)
                 .replace("{{", "{").replace("}}", "}"))
    found = [d for d in wrong_kernel(check(parse_file(str(f))), values={"n": 64})
             if d.code == "feedback-endless-loop"]
    assert bool(found) == endless, found
    if endless:
        assert found[0].message.startswith("the while loop never ends: its condition")


_COPY = """module k;
import hopper;
hopper void k(const int n = 4096, global float[n] out, global float[n] inp) {{
  foreach (int b in {blocks} blocks) {{
    foreach (int w in 4 warps) {{
      foreach (int t in 32 threads) {{
        int i = b * 128 + w * 32 + t;
        {guard}out[i] = inp[i];
      }}
    }}
  }}
}}
"""


def _unwritten_outputs(tmp_path, n: int, blocks: str, guard: str = "") -> list:
    f = tmp_path / "k.mcpl"
    f.write_text(_COPY.format(blocks=blocks, guard=guard))
    return [d for d in feedback(str(f), values={"n": n}, only=["ops"])
            if d.code == "feedback-unwritten-output"]


def test_an_output_a_rounded_down_grid_leaves_in_part_is_named(tmp_path):
    """n / 128 blocks at n = 200: one block writes out[0..127], out[128..199] keep what
    the array held (matmul hopper_v10 at n = 200 left rows 128-199 of c so, silently)."""
    found = _unwritten_outputs(tmp_path, 200, "n / 128")
    assert len(found) == 1
    assert "out: 72 of its 200 elements are never written at these sizes (the first, " \
           "out[128])" in found[0].message
    assert _unwritten_outputs(tmp_path, 256, "n / 128") == []


def test_an_output_a_rounded_up_and_guarded_grid_covers_is_not_named(tmp_path):
    assert _unwritten_outputs(tmp_path, 200, "(n + 127) / 128", "if (i < n) ") == []


def test_an_output_written_through_a_view_and_the_examples_at_a_size_they_are_not_for():
    """matmul hopper_v10 at n = 200 (its grid of n / 128 block rows: rows 128-199 of c
    never written, through its view c3); at n = 256 every element is written; cpu_v2
    at n = 37 writes its last rows in a loop from rows / x to (rows + x - 1) / x, whose
    bound floats made 6 instead of 7 (37/6 + 5/6 = 6.999...): now exact."""
    from pathlib import Path
    examples = Path(__file__).resolve().parents[2] / "examples" / "matmul"

    def found(version, **values):
        return [d.message for d in feedback(str(examples / f"{version}.mcpl"), values=values,
                                            only=["ops"])
                if d.code == "feedback-unwritten-output"]
    got = found("hopper_v10", n=200, m=256, p=16)
    assert len(got) == 1 and got[0].startswith(
        "c (written as c3): 18,432 of its 51,200 elements are never written"), got
    assert found("hopper_v10", n=256, m=256, p=16) == []
    assert found("cpu_v2", n=37, m=100, p=19) == []


def test_a_compiled_kernel_does_not_launch_with_an_output_it_leaves_in_part(tmp_path):
    """mcl.compile's kernel refuses the sizes (opencl-unwritten-output) where it would
    return an array wrong in part; check_writes=False launches it."""
    import numpy as np

    import mcl
    from mcl.diagnostics import McplError
    pytest.importorskip("pyopencl")
    f = tmp_path / "k.mcpl"
    f.write_text(_COPY.format(blocks="n / 128", guard=""))
    try:
        k = mcl.compile(str(f), target="hopper")
    except McplError as e:      # no OpenCL device here
        pytest.skip(str(e))
    x = np.arange(200, dtype=np.float32)
    with pytest.raises(McplError) as e:
        k(n=200, inp=x)
    assert e.value.diagnostics[0].code == "opencl-unwritten-output"
    assert "leaves part of an output unwritten: out: 72 of its 200 elements" in str(e.value)
    assert np.array_equal(k(n=256, inp=np.ones(256, np.float32))["out"], np.ones(256))


def test_the_accesses_whose_element_the_data_choose_are_listed():
    """mcl.analyses.data_indexed: an index read from an array, or a loop variable whose
    bounds are read from one (spmv_csr's rows), and nothing in a kernel whose indices the
    loops and sizes decide (matmul, convolution)."""
    from pathlib import Path

    from mcl.analyses import data_indexed
    from mcl.mcpl import check, parse_file
    from mcl.mcpl.printer import print_expr
    examples = Path(__file__).resolve().parents[2] / "examples"

    def listed(path):
        return {print_expr(a) for a, _ in data_indexed(check(parse_file(str(examples / path))))}

    assert listed("spmv_csr/perfect.mcpl") == {"values[k]", "colIdx[k]", "x[colIdx[k]]"}
    assert listed("histogram/perfect.mcpl") == {"hist[input[i]]"}
    assert listed("matmul/hopper_v12.mcpl") == set()
    assert listed("convolution/hopper_v4.mcpl") == set()
    # the indices the data choose, by position: histogram hopper_v2's l_hist[v[u], c],
    # whose copy c the thread decides
    found = data_indexed(check(parse_file(str(examples / "histogram" / "hopper_v2.mcpl"))))
    assert {(print_expr(a), positions) for a, positions in found} == {("l_hist[v[u], c]", (0,))}
