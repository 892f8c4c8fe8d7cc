"""The register estimate (mcl.analyses.registers) on small kernels whose demand
follows from the code: the 64-bit addresses of device memory a run-time loop keeps,
and what the compiler can give back to reach an occupancy step."""

from __future__ import annotations

from mcl.analyses import register_elements, register_unrolling, register_values, registers
from tests.analyses.kernels import built


def _kernels(tmp_path, source: str, values: dict | None = None, allow: tuple[str, ...] = ()):
    sym, num, _ = built(tmp_path, source, values, allow=allow)
    return sym, num


#: a block of 256 threads that copies ``rows`` rows of a run-time width p per phase
COPY = """\
    module k;
    import hopper;
    hopper void k(const int n = 2048, const int p = 2048, global float[n, p] a,
                  global float[n] out) {{
      const int rows = {rows};
      foreach (int bi in n / (rows * 8) blocks) {{
        shared float[rows * 8, 32] l_a;
        foreach (int w in 8 warps) {{
          foreach (int t in 32 threads) {{
            float sum = 0.0;
            for (int l = 0; l < p / 32; l++) {{
              for (int s = 0; s < rows; s++) {{
                l_a[s * 8 + w, t] = a[bi * rows * 8 + s * 8 + w, l * 32 + t];
              }}
              barrier(shared);
              sum += l_a[w, t];
              barrier(shared);
            }}
            out[bi * rows * 8 + w * 32 + t] = sum;
          }}
        }}
      }}
    }}
"""


def test_rows_a_run_time_width_apart_take_an_address_each(tmp_path):
    """In the phase loop, row s of the copy is ``8 s`` rows of the run-time width p
    after row 0: the unrolled loop over s keeps one 64-bit address per row (two
    registers each); out, written after the loop, takes one address."""
    for rows in (1, 4):
        sym, num = _kernels(tmp_path, COPY.format(rows=rows))
        assert register_values.address_registers(num, sym) == 2 * rows + 2


def test_offsets_a_constant_apart_share_an_address(tmp_path):
    """``a[i, l * 4 + u]`` for u = 0 .. 3: the offsets differ by constants, which the
    loads take as immediates: one address, however many iterations."""
    sym, num = _kernels(tmp_path, """\
        module k;
        import hopper;
        hopper void k(const int n = 2048, const int p = 2048, global float[n, p] a,
                      global float[n] out) {
          foreach (int b in n / 256 blocks) {
            foreach (int w in 8 warps) {
              foreach (int t in 32 threads) {
                int i = b * 256 + w * 32 + t;
                float sum = 0.0;
                for (int l = 0; l < p / 4; l++) {
                  for (int u = 0; u < 4; u++) {
                    sum += a[i, l * 4 + u];
                  }
                }
                out[i] = sum;
              }
            }
          }
        }
    """)
    assert register_values.address_registers(num, sym) == 2 + 2


def test_without_the_symbolic_kernel_each_array_parameter_is_an_address(tmp_path):
    sym, num = _kernels(tmp_path, COPY.format(rows=4))
    assert register_values.address_registers(num, None) == 2 * 2


def test_the_demand_grows_with_the_addresses_the_loop_keeps(tmp_path):
    """Four rows per phase instead of one: three more 64-bit addresses (six
    registers); the unrolled loop's index and temporaries are the same names."""
    one = registers.register_demand(*reversed(_kernels(tmp_path, COPY.format(rows=1))))
    four = registers.register_demand(*reversed(_kernels(tmp_path, COPY.format(rows=4))))
    assert four - one == 6


def test_values_loaded_with_the_fragments_are_slack_for_the_step_down():
    """matmul hopper v1 reads l_a along its k-tile loop q four values at a time: the
    estimate keeps them (:func:`register_unrolling.merged_loads`), and the compiler can
    consume them as they arrive, as it does the fragments aFrag and bFrag (4 + 4)."""
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    sys.path.insert(0, str(root / "benchmarks" / "fidelity"))
    import fidelity_cases as C
    import fidelity_predict as P

    case = next(c for c in C.example_cases(["matmul"]) if c.version == "hopper_v1")
    sym, num = P.hopper_kernels(case)
    merged = register_unrolling.merged_loads(num, sym)
    assert merged > 0
    assert registers.squeeze_slack(num) == 8
    assert registers.squeeze_slack(num, sym) == 8 + merged


def test_one_recomputable_address_is_slack_even_with_values_in_flight(tmp_path):
    """Rows a run-time width apart: every address after the first is the first plus
    a multiple of p, which the compiler can compute again; it gives back one (two
    registers). With one row there is no such address, and what any kernel can give
    back is left: one value."""
    sym, num = _kernels(tmp_path, COPY.format(rows=1))
    assert register_values.recomputable_addresses(num, sym) == 0
    assert registers.recomputable(num, sym) == registers._ONE_VALUE == 1
    sym, num = _kernels(tmp_path, COPY.format(rows=4))
    assert register_values.recomputable_addresses(num, sym) == 6
    assert registers.recomputable(num, sym) == 2


HISTOGRAM = """\
    module k;
    import hopper;
    import lib.atomics;
    hopper void k(const int n = 1048576, global int[n] input, global int[256] hist) {{
      const int nrBlocks = 264;
      const int stride = nrBlocks * 256;
      foreach (int b in nrBlocks blocks) {{
        shared int[256] l_hist;
        foreach (int w in 8 warps) {{
          foreach (int t in 32 threads) {{
            for (int i = b * 256 + w * 32 + t; i < n; i += stride) {{
              atomicAdd({target}[input[i] % 256], 1);
            }}
          }}
        }}
      }}
    }}
"""


def test_atomics_of_shared_memory_do_not_stop_the_loop_from_growing(tmp_path):
    """The run-time loop reads device memory; an atomic of shared memory in it
    cannot change what the loads read, so the compiler may unroll it and keep
    loads in flight; an atomic of device memory orders the iterations."""
    sym, _ = _kernels(tmp_path, HISTOGRAM.format(target="l_hist"))
    assert register_unrolling.grows(sym)
    sym, _ = _kernels(tmp_path, HISTOGRAM.format(target="hist"))
    assert not register_unrolling.grows(sym)


#: a grid-stride sum of ``input`` in a while loop whose step is ``step``, adding ``k``
#: loads 256 apart an iteration into ``k`` partial sums, of which the kernel uses ``used``
WHILE = """\
    module k;
    import hopper;
    hopper void k(const int n = 1048576, global float[n] input, global float[1] out) {{
      const int nrBlocks = min(1056, n / 1024);
      const int stride = 1024 * nrBlocks;
      foreach (int bi in nrBlocks blocks) {{
        foreach (int w in 8 warps) {{
          foreach (int t in 32 threads) {{
            reg float[{k}] sums;
            for (int u = 0; u < {k}; u++) {{
              sums[u] = 0.0;
            }}
            int i = bi * 1024 + w * 32 + t;
            while (i + ({k} - 1) * 256 < n) {{
              for (int u = 0; u < {k}; u++) {{
                sums[u] += input[i + u * 256];
              }}
              i += {step};
            }}
            if (bi == 0 && w == 0 && t == 0) {{
              out[0] = {used};
            }}
          }}
        }}
      }}
    }}
"""


def test_a_while_loop_with_a_run_time_step_is_kept_rolled(tmp_path):
    """The NVIDIA compiler does not unroll a while loop whose step is a run-time value
    (reduction hopper v2's ``i += stride``: 20 registers, not the 32 of an unrolled
    loop); with a constant step it does (spmv_csr's ``k += 64``)."""
    two = "sums[0] + sums[1]"
    sym, _ = _kernels(tmp_path, WHILE.format(k=2, step="stride", used=two))
    assert not register_unrolling.grows(sym)
    sym, _ = _kernels(tmp_path, WHILE.format(k=2, step="512", used=two))
    assert register_unrolling.grows(sym)


def test_loads_a_rolled_loop_adds_up_hold_a_register_each(tmp_path):
    """A loop the compiler keeps rolled issues its unrolled body's loads together, ahead
    of the additions: each loaded value holds a register until it is added (reduction
    hopper v2: 4 loads, 20 registers where its named values and addresses are 16); as
    many as the sums that are used (the others' loads are removed), none where the loop
    is unrolled at run time (its growth counts the loads in flight)."""
    all4 = "(sums[0] + sums[1]) + (sums[2] + sums[3])"
    sym, num = _kernels(tmp_path, WHILE.format(k=4, step="stride", used=all4))
    assert register_unrolling.rolled_loads(num, sym) == 4
    sym, num = _kernels(tmp_path, WHILE.format(k=4, step="stride", used="sums[0] + sums[1]"))
    assert register_unrolling.rolled_loads(num, sym) == 2
    sym, num = _kernels(tmp_path, WHILE.format(k=4, step="1024", used=all4))
    assert register_unrolling.grows(sym) and register_unrolling.rolled_loads(num, sym) == 0


#: a grid-stride loop reading runs of 4 adjacent elements per thread (``body``)
RUNS = """\
    module k;
    import hopper;
    hopper void k(const int n = 1048576, global float[n] input, global float[1] out) {{
      foreach (int bi in 132 blocks) {{
        foreach (int w in 8 warps) {{
          foreach (int t in 32 threads) {{
            reg float[4] x;
            float sum = 0.0;
            for (int i = bi * 1024; i < n; i += 135168) {{
              for (int e = 0; e < 4; e++) {{
                int k = i + 4 * (w * 32 + t) + e;
                {body}
              }}
              sum += (x[0] + x[1]) + (x[2] + x[3]);
            }}
            if (bi == 0 && w == 0 && t == 0) {{
              out[0] = sum;
            }}
          }}
        }}
      }}
    }}
"""


def test_a_loop_round_guarded_runs_of_four_is_kept_rolled(tmp_path):
    """A guarded run of 4 adjacent elements is one 128-bit access only after a test of
    its alignment, beside the element-by-element form: the compiler keeps the loop
    around it rolled (reduction hopper v3 with one run an iteration: 20 registers, its
    own need); the same loop without the guard is unrolled."""
    sym, _ = _kernels(tmp_path, RUNS.format(
        body="if (k < n) { x[e] = input[k]; } else { x[e] = 0.0; }"))
    assert not register_unrolling.grows(sym)
    sym, _ = _kernels(tmp_path, RUNS.format(body="x[e] = input[k];"))
    assert register_unrolling.grows(sym)


def test_an_index_divided_by_zero_leaves_the_elements_unknown(tmp_path):
    # r[4 / e] at e = 0 (found by the mutation tests): the register array's elements
    # cannot be enumerated, so every element counts; no exception
    sym, num = _kernels(tmp_path, """\
        module k;
        import hopper;
        hopper void k(const int n = 1024, global float[n] out) {
          foreach (int bi in n / 32 blocks) {
            foreach (int w in 1 warps) {
              foreach (int t in 32 threads) {
                reg float[8] r;
                float s = 0.0;
                for (int e = 0; e < 8; e++) {
                  r[e] = 1.0;
                }
                for (int e = 0; e < 4; e++) {
                  s += r[4 / e];
                }
                out[bi * 32 + t] = s;
              }
            }
          }
        }
        """)
    read = next(a for a in num.accesses if a.name == "r" and not a.write)
    assert register_elements.elements(read) is None
    assert registers.register_demand(num, sym) >= 8


#: a 1-D convolution: each thread copies ``rows + 8`` values of the shared tile
#: into ``col`` and reads them through a window of 9 (``{read}``)
WINDOW = """\
    module k;
    import hopper;
    hopper void k(const int n = 4096, global float[n] out, global float[n + 8] input,
                  constant float[9] filter) {{
      const int rows = 8;
      foreach (int bi in n / (rows * 32) blocks) {{
        shared float[rows * 32 + 8] l_in;
        foreach (int w in 1 warps) {{
          foreach (int t in 32 threads) {{
            for (int e = t; e < rows * 32 + 8; e += 32) {{
              l_in[e] = input[bi * rows * 32 + e];
            }}
            barrier(shared);
            reg float[rows] acc;
            reg float[rows + 8] col;
            for (int e = 0; e < rows; e++) {{
              acc[e] = 0.0;
            }}
            for (int r = 0; r < rows + 8; r++) {{
              col[r] = l_in[t * rows + r];
            }}
            {read}
            for (int e = 0; e < rows; e++) {{
              out[bi * rows * 32 + t * rows + e] = acc[e];
            }}
          }}
        }}
      }}
    }}
"""


def test_a_fragment_read_through_a_sliding_window_keeps_the_window(tmp_path):
    """``col[e + y]``, e outer, y inner: each element is used over a stretch of at
    9 steps (col[e] is last used at y = 0 of row e, col[e + 8] first at y = 8), so
    8 of the 16 are live at once; the compiler loads an element when the window
    reaches it (convolution hopper v1: 32 registers, not 44)."""
    read = """for (int e = 0; e < rows; e++) {
                  for (int y = 0; y < 9; y++) {
                    acc[e] += filter[y] * col[e + y];
                  }
                }"""
    sym, num = _kernels(tmp_path, WINDOW.format(read=read))
    assert register_elements.passed_elements(num) == {"col": 16 - 8}
    # acc is updated with a constant-memory operand, not copied: no fragment
    assert register_elements.fragments(num) == {"col"}


def test_a_window_that_comes_round_again_keeps_every_element(tmp_path):
    """The same window inside a loop over an outer index that does not move it
    (``col[c + y]`` for every e): every element is used again in the next e."""
    read = """for (int e = 0; e < rows; e++) {
                  for (int y = 0; y < 9; y++) {
                    for (int c = 0; c < 2; c++) {
                      acc[e] += filter[y] * col[c + y];
                    }
                  }
                }"""
    sym, num = _kernels(tmp_path, WINDOW.format(read=read))
    assert register_elements.passed_elements(num) == {}


def test_a_fragment_read_at_one_index_is_not_a_window(tmp_path):
    """``col[e]`` (as aFrag[ei] in matmul): the compiler loads such fragments ahead,
    all their elements count."""
    read = """for (int e = 0; e < rows; e++) {
                  acc[e] += filter[0] * col[e];
                }"""
    sym, num = _kernels(tmp_path, WINDOW.format(read=read))
    assert register_elements.passed_elements(num) == {}


#: reduction hopper v2 with a register array of ``unroll`` sums, combined as four
SHRUNK = """\
    module k;
    import hopper;
    hopper void k(const int n = 1048576, global float[n] input, global float[n] out) {{
      const int unroll = {unroll};
      foreach (int bi in 132 blocks) {{
        foreach (int w in 8 warps) {{
          foreach (int t in 32 threads) {{
            int tid = w * 32 + t;
            reg float[unroll] sums;
            for (int u = 0; u < unroll; u++) {{
              sums[u] = 0.0;
            }}
            for (int i = bi * 256 * unroll + tid; i < n; i += 132 * 256 * unroll) {{
              for (int u = 0; u < unroll; u++) {{
                sums[u] += input[i + u * 256];
              }}
            }}
            out[bi * 256 + tid] = (sums[0] + sums[1]) + (sums[2] + sums[3]);
          }}
        }}
      }}
    }}
"""


def test_a_read_beyond_the_extent_drops_what_only_fed_it(tmp_path):
    """``sums[2]`` of a ``float[2]``: the value is undefined, the compiler drops the
    sums, the loads that fed them and the loop's unrolling (10 registers for
    reduction hopper v2 with unroll = 1 or 2). mcl check refuses that kernel
    (mcpl-index-range); the register analysis is tested on it all the same."""
    sym, num = _kernels(tmp_path, SHRUNK.format(unroll=4))
    assert register_elements.unused_elements(num) == {}
    assert register_elements.dead_reads(num) == set()
    assert register_unrolling.grows(sym)
    sym, num = _kernels(tmp_path, SHRUNK.format(unroll=2), allow=("mcpl-index-range",))
    assert register_elements.unused_elements(num) == {"sums": 2}
    load = next(a for a in num.accesses if a.name == "input")
    assert id(load.node) in register_elements.dead_reads(num)
    assert not register_unrolling.grows(sym)
    assert register_values.address_registers(num, sym) == 2      # out only


#: a thread's 4 outputs of a 1-D filter of fw taps, the nest unrolled when fw is built in
TAPS = """\
    module k;
    import hopper;
    hopper void k(const int n = 4096, const int fw = 5, global float[n] out,
                  global float[n + fw - 1] x) {
      foreach (int bi in n / 1024 blocks) {
        foreach (int w in 8 warps) {
          foreach (int t in 32 threads) {
            int i = bi * 1024 + (w * 32 + t) * 4;
            reg float[4] acc;
            for (int e = 0; e < 4; e++) {
              acc[e] = 0.0;
            }
            for (int r = 0; r < fw + 3; r++) {
              float v = x[i + r];
              for (int e = 0; e < 4; e++) {
                int y = r - e;
                if (y >= 0 && y < fw) {
                  acc[e] += v;
                }
              }
            }
            float scale = 1.0 / fw;
            for (int e = 0; e < 4; e++) {
              out[i + e] = acc[e] * scale;
            }
          }
        }
      }
    }
"""


def test_a_specialised_build_folds_the_indices_and_values_of_its_unrolled_nest(tmp_path):
    """Built specialised, fw is a compile-time constant: the loop over r + fw - 1
    input values is unrolled completely, as are the loops over e in it, so r, e
    and y = r - e are constants in each copy, as is scale = 1.0 / fw; left are
    the indices of the foreach loops, i, v and the 4 accumulators. The r loop is
    no loop the compiler unrolls at run time. Built for any fw, the same kernel
    keeps them all."""
    sym, num, _ = built(tmp_path, TAPS, specialized=True)
    assert register_values.named_registers(num, sym) == 3 + 1 + 1 + 4
    assert not register_unrolling.grows(sym)
    sym, num, _ = built(tmp_path, TAPS)
    assert register_values.named_registers(num, sym) == 3 + 1 + 1 + 4 + 1 + 1 + 1 + 1
    assert register_unrolling.grows(sym)


#: a thread's rows x 4 outputs of an fh x 9 filter, as convolution hopper v5: each of
#: the rows + fh - 1 input rows is read into ``line`` (12 values) and used for every output
#: row it contributes to
LINES = """\
    module k;
    import hopper;
    hopper void k(const int h = 1024, const int w = 1024, const int fh = 9,
                  global float[h, w] out, global float[h + fh - 1, w + 8] input,
                  constant float[fh, 9] filter) {{
      const int rows = {rows};
      foreach (int bi in h / (8 * rows) blocks) {{
        foreach (int bj in w / 128 blocks) {{
          foreach (int ty in 8 warps) {{
            foreach (int tx in 32 threads) {{
              int i = bi * 8 * rows + ty * rows;
              int j = bj * 128 + tx * 4;
              reg float[rows, 4] acc;
              reg float[12] line;
              for (int e = 0; e < rows; e++) {{
                for (int c = 0; c < 4; c++) {{
                  acc[e, c] = 0.0;
                }}
              }}
              for (int r = 0; r < rows + fh - 1; r++) {{
                for (int u = 0; u < 12; u++) {{
                  line[u] = input[i + r, j + u];
                }}
                for (int e = 0; e < rows; e++) {{
                  int y = r - e;
                  if (y >= 0 && y < fh) {{
                    for (int x = 0; x < 9; x++) {{
                      for (int c = 0; c < 4; c++) {{
                        acc[e, c] += filter[y, x] * line[c + x];
                      }}
                    }}
                  }}
                }}
              }}
              for (int e = 0; e < rows; e++) {{
                for (int c = 0; c < 4; c++) {{
                  out[i + e, j + c] = acc[e, c];
                }}
              }}
            }}
          }}
        }}
      }}
    }}
"""


def test_an_unrolled_row_used_often_is_loaded_while_the_previous_one_is_used(tmp_path):
    """Built specialised (fh = 9 built in), the loop over the input rows is unrolled
    completely and each of a row's 12 values feeds 3 multiply-adds per output row:
    with 8 output rows, 24 uses per value, the compiler loads the next row into 12
    more registers while the current one is used; with 4 rows, 12 uses, it does not
    (convolution hopper v5 and v4). Built for any size, the row loop stays a loop the compiler
    unrolls at run time, and its growth is :func:`register_unrolling.grows`'."""
    sym, num, _ = built(tmp_path, LINES.format(rows=8), specialized=True)
    assert register_unrolling.prefetched(num, sym) == 12
    assert registers.register_demand(num, sym) == 12 + registers._OFFSET + (
        register_values.named_registers(num, sym) + register_values.address_registers(num, sym)
        + register_unrolling.merged_loads(num, sym))
    sym, num, _ = built(tmp_path, LINES.format(rows=4), specialized=True)
    assert register_unrolling.prefetched(num, sym) == 0
    sym, num, _ = built(tmp_path, LINES.format(rows=8))
    assert register_unrolling.prefetched(num, sym) == 0
    assert register_unrolling.grows(sym)
