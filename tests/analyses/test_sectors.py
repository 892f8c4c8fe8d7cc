"""Global-load requests and sectors (mcl.analyses.sectors) of small kernels whose
figures follow from the generated code: what the load/store units issue per warp."""

from __future__ import annotations

import pytest

from mcl.analyses.functions import KernelView
from mcl.analyses.sectors import global_loads
from tests.analyses.kernels import built


def _loads(tmp_path, source: str, values: dict | None = None):
    return global_loads(KernelView(*built(tmp_path, source, values)))


def test_a_name_declared_again_in_another_scope_is_another_variable(tmp_path):
    """``int q = e % 16`` is defined once; the loop ``for (int q ...)`` elsewhere in
    the kernel assigns its own q, not this one: the load's address is known."""
    loads = _loads(tmp_path, """\
        module k;
        import hopper;
        hopper void k(const int n = 1024, global float[n, 16] a, global float[n, 16] b) {
          foreach (int bi in n / 16 blocks) {
            foreach (int w in 8 warps) {
              foreach (int t in 32 threads) {
                int e = w * 32 + t;
                if (e < 256) {
                  int q = e % 16;
                  b[bi * 16 + e / 16, q] = a[bi * 16 + e / 16, q];
                }
                for (int q = 0; q < 4; q++) {
                  b[bi, q] = 0.0;
                }
              }
            }
          }
        }
        """)
    assert not loads.unpredicted
    # 64 blocks of 8 warps, each reading 32 adjacent floats: 4 sectors
    assert loads.requests == pytest.approx(64 * 8)
    assert loads.sectors_per_request == pytest.approx(4.0)


def test_lanes_an_if_leaves_out_do_not_load(tmp_path):
    """A 16 x 16 block at hopper runs as 16 warps of which 16 lanes pass ``tj < 16``:
    a request reads the 16 adjacent floats of those lanes (2 sectors), and a warp
    whose lanes all fail the test issues none."""
    loads = _loads(tmp_path, """\
        module k;
        import hopper;
        hopper void k(const int n = 1024, global float[n, 16] a, global float[n, 16] b) {
          foreach (int bi in n / 16 blocks) {
            foreach (int w in 16 warps) {
              foreach (int t in 32 threads) {
                if (t < 16) {
                  b[bi * 16 + w, t] = a[bi * 16 + w, t];
                }
                if (w * 32 + t < 64) {
                  b[bi, t] = a[bi, t];
                }
              }
            }
          }
        }
        """)
    first, second = loads.loads
    assert first.requests == pytest.approx(64 * 16)
    assert first.sectors_per_request == pytest.approx(2.0)
    # only warps 0 and 1 pass w * 32 + t < 64
    assert second.requests == pytest.approx(64 * 2)
    assert second.sectors_per_request == pytest.approx(4.0)


_FILTER = """\
    module k;
    import hopper;
    hopper void k(const int n = 256, global float[n, 256] out, constant float[3, 3] f) {
      foreach (int bi in n blocks) {
        foreach (int w in 8 warps) {
          foreach (int t in 32 threads) {
            reg float[4] acc;
            for (int e = 0; e < 4; e++) {
              acc[e] = 0.0;
              GUARD {
                for (int y = 0; y < 3; y++) {
                  for (int x = 0; x < 3; x++) {
                    acc[e] += f[y, x];
                  }
                }
              }
            }
            out[bi, w * 32 + t] = acc[0] + acc[1] + acc[2] + acc[3];
          }
        }
      }
    }
    """


def test_a_read_only_element_in_unrolled_loops_is_loaded_once(tmp_path):
    """The loops e, y and x are unrolled: each of the 9 filter elements is loaded once
    per work-item, not once per iteration of e; a condition that unrolling decides
    keeps that, a run-time condition inside loop e makes it a load per iteration."""
    loads = _loads(tmp_path, _FILTER.replace("GUARD", "if (e < 4)"))
    assert loads.requests == pytest.approx(256 * 8 * 9)
    assert loads.sectors_per_request == pytest.approx(1.0)
    loads = _loads(tmp_path, _FILTER.replace("GUARD", "if (bi + e < n)"))
    assert loads.requests == pytest.approx(256 * 8 * 9 * 4)


def test_a_kernel_built_specialised_unrolls_loops_over_its_sizes(tmp_path):
    """Loop e runs to the parameter ``rows``, which sizes no array of the kernel: built
    with run-time sizes the loop stays, and the filter is loaded once per iteration of
    e; built specialised (``mcl run`` of a version written for its sizes) the loop is
    unrolled and each filter element is loaded once per work-item. A filter in constant
    memory is then passed by value (mcl.opencl.by_value): its reads are operands, no
    loads."""
    source = _FILTER.replace("const int n = 256,", "const int n = 256, const int rows = 4,")
    source = source.replace("e < 4; e++", "e < rows; e++").replace("GUARD", "if (e < 4)")

    def requests(source: str, specialized: bool) -> float:
        loads = global_loads(KernelView(*built(tmp_path, source, specialized=specialized)))
        return loads.requests if loads.loads else 0.0

    in_global = source.replace("constant float[3, 3] f", "global float[3, 3] f")
    assert requests(in_global, False) == pytest.approx(256 * 8 * 9 * 4)
    assert requests(in_global, True) == pytest.approx(256 * 8 * 9)
    assert requests(source, False) == pytest.approx(256 * 8 * 9 * 4)
    assert requests(source, True) == 0.0


def test_a_float_atomic_add_reads_its_element_first(tmp_path):
    """hopper's target writes a float atomicAdd as a compare-and-swap loop that starts
    with a read of the element: one request of one sector per warp that runs it; an
    int atomic reads nothing."""
    source = """\
        module k;
        import hopper;
        hopper void k(const int n = 65536, global TYPE[1] result) {
          foreach (int bi in n / 256 blocks) {
            foreach (int w in 8 warps) {
              foreach (int t in 32 threads) {
                if (w * 32 + t == 0) {
                  atomicAdd(result[0], ONE);
                }
              }
            }
          }
        }
        """
    loads = _loads(tmp_path, source.replace("TYPE", "float").replace("ONE", "1.0"))
    assert loads.requests == pytest.approx(256)
    assert loads.sectors_per_request == pytest.approx(1.0)
    loads = _loads(tmp_path, source.replace("TYPE", "int").replace("ONE", "1"))
    assert loads.requests == 0
