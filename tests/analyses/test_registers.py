"""The register estimate (mcl.analyses.registers) on small kernels whose demand
follows from the code: the 64-bit addresses of device memory a run-time loop keeps,
and what the compiler can give back to reach an occupancy step."""

from __future__ import annotations

from mcl.analyses import registers
from tests.analyses.kernels import built


def _kernels(tmp_path, source: str, values: dict | None = None):
    sym, num, _ = built(tmp_path, source, values)
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
        assert registers._address_registers(num, sym) == 2 * rows + 2


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
    assert registers._address_registers(num, sym) == 2 + 2


def test_without_the_symbolic_kernel_each_array_parameter_is_an_address(tmp_path):
    sym, num = _kernels(tmp_path, COPY.format(rows=4))
    assert registers._address_registers(num, None) == 2 * 2


def test_the_demand_grows_with_the_addresses_the_loop_keeps(tmp_path):
    """Four rows per phase instead of one: three more 64-bit addresses (six
    registers); the unrolled loop's index and temporaries are the same names."""
    one = registers.register_demand(*reversed(_kernels(tmp_path, COPY.format(rows=1))))
    four = registers.register_demand(*reversed(_kernels(tmp_path, COPY.format(rows=4))))
    assert four - one == 6


def test_values_loaded_with_the_fragments_are_slack_for_the_step_down():
    """matmul hopper v1 reads l_a along its k-tile loop q four values at a time: the
    estimate keeps them (:func:`registers._merged_loads`), and the compiler can
    consume them as they arrive, as it does the fragments aFrag and bFrag (4 + 4)."""
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    sys.path.insert(0, str(root / "benchmarks" / "fidelity"))
    import fidelity_cases as C
    import fidelity_predict as P

    case = next(c for c in C.example_cases(["matmul"]) if c.version == "hopper_v1")
    sym, num = P.hopper_kernels(case)
    merged = registers._merged_loads(num, sym)
    assert merged > 0
    assert registers.squeeze_slack(num) == 8
    assert registers.squeeze_slack(num, sym) == 8 + merged


def test_one_recomputable_address_is_slack_even_with_values_in_flight(tmp_path):
    """Rows a run-time width apart: every address after the first is the first plus
    a multiple of p, which the compiler can compute again; it gives back one."""
    sym, num = _kernels(tmp_path, COPY.format(rows=1))
    assert registers.recomputable(num, sym) == 0
    sym, num = _kernels(tmp_path, COPY.format(rows=4))
    assert registers._recomputable_addresses(num, sym) == 6
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
    assert registers.grows(sym)
    sym, _ = _kernels(tmp_path, HISTOGRAM.format(target="hist"))
    assert not registers.grows(sym)


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
    assert registers._elements(next(a for a in num.accesses if a.name == "r" and not a.write)) \
        is None
    assert registers.register_demand(num, sym) >= 8
