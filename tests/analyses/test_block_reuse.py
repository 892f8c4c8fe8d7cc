"""The bytes global loads take from the L2 when the warps of a block share sectors
through the SM's L1 (mcl.analyses.block_reuse, the time model's `l2 bandwidth` part):
small kernels whose L2 traffic follows from their addresses. The examples against
ncu's L2 read sectors are in test_fidelity.py."""

from __future__ import annotations

import pytest

from mcl.analyses.functions import KernelView
from mcl.analyses.timing_counts import cache_bytes, estimated_loads
from tests.analyses.kernels import built


def _l2_bytes(tmp_path, source: str) -> float:
    view = KernelView(*built(tmp_path, source))
    return cache_bytes(view, "global", estimated_loads(view))


def test_a_vector_every_warp_of_a_block_reads_is_fetched_once_per_block(tmp_path):
    # 64 blocks of 8 warps, one row of a per warp; x (16 kB) read by all 8 warps of
    # a block: a's 64 x 8 rows once, x once per SM (every block reads the same x and
    # it fits in the L1), not once per warp
    got = _l2_bytes(tmp_path, """\
        module k;
        import hopper;
        hopper void k(const int n = 4096, global float[512, n] a, global float[n] x,
                      global float[512] y) {
          foreach (int bi in 64 blocks) {
            foreach (int w in 8 warps) {
              foreach (int t in 32 threads) {
                float s = 0.0;
                for (int j0 = 0; j0 < n; j0 += 32) {
                  s += a[bi * 8 + w, j0 + t] * x[j0 + t];
                }
                y[bi * 8 + w] = s;
              }
            }
          }
        }
        """)
    assert got == 512 * 4096 * 4 + 64 * 4096 * 4


def test_two_requests_that_each_fill_half_of_every_sector_fetch_it_once(tmp_path):
    # lane t reads elements 8 (t % 2) + u of row t / 2: u = 0..3 and u = 4..7 are two
    # 128-bit requests, each half of the row's two sectors; together the block reads
    # each of its 32 x 16 x 4 B rows' sectors once (a warp-by-warp count: twice)
    got = _l2_bytes(tmp_path, """\
        module k;
        import hopper;
        hopper void k(const int n = 4096, global float[n, 16] a, global float[n, 16] b) {
          foreach (int bi in n / 64 blocks) {
            foreach (int w in 4 warps) {
              foreach (int t in 32 threads) {
                int r = bi * 64 + w * 16 + t / 2;
                for (int u = 0; u < 8; u++) {
                  b[r, 8 * (t % 2) + u] = a[r, 8 * (t % 2) + u];
                }
              }
            }
          }
        }
        """)
    assert got == 4096 * 16 * 4


def test_rows_that_the_warps_of_a_block_read_in_turn_are_fetched_once(tmp_path):
    # thread row ti reads input rows 4 ti + r, r = 0..11: the 8 thread rows of a block
    # read 40 distinct rows of 128 elements (512 B, 16 sectors), not 8 x 12 rows,
    # where the block's rows fit in its share of the L1
    got = _l2_bytes(tmp_path, """\
        module k;
        import hopper;
        hopper void k(const int n = 256, global float[n * 32 + 8, 128] a,
                      global float[n * 32, 128] b) {
          foreach (int bi in n blocks) {
            foreach (int w in 8 warps) {
              foreach (int t in 32 threads) {
                float s = 0.0;
                for (int r = 0; r < 12; r++) {
                  for (int u = 0; u < 4; u++) {
                    s += a[bi * 32 + 4 * w + r, 4 * t + u];
                  }
                }
                b[bi * 32 + 4 * w, 4 * t] = s;
              }
            }
          }
        }
        """)
    assert got == 256 * 40 * 16 * 32


_GATHER = """\
    module k;
    import hopper;
    hopper void k(const int n = 1048576, const int m = {m}, global int[n] idx,
                  global float[m] x, global float[n] y) {{
      foreach (int b in n / 256 blocks) {{
        foreach (int w in 8 warps) {{
          foreach (int t in 32 threads) {{
            int i = b * 256 + w * 32 + t;
            y[i] = x[idx[i]];
          }}
        }}
      }}
    }}
    """


def test_a_gather_finds_the_part_of_its_array_the_l1_holds(tmp_path):
    # a sector per lane of x[idx[i]], less the share of x that fits in an SM's L1: all
    # of a 64 kB x (each SM reads it once), none of a 64 MB one; idx streams (4 MB)
    stream = 1048576 * 4
    small = _l2_bytes(tmp_path, _GATHER.format(m=16384))
    assert small == stream + 132 * 16384 * 4
    large = _l2_bytes(tmp_path, _GATHER.format(m=1 << 24))
    assert large == pytest.approx(stream + 1048576 * 32, rel=0.01)


def test_a_row_guard_leaves_a_vector_every_block_reads_shared(tmp_path):
    # 512 blocks, a row a warp behind `if (i < rows)`: every block that passes the
    # guard reads the same x, which each of the 132 SMs' L1 keeps for all its blocks
    # (gesummv hopper_v3: 4096 blocks, ncu's L2 reads 134.9 MB, x once per block would
    # be 201 MB)
    got = _l2_bytes(tmp_path, """\
        module k;
        import hopper;
        hopper void k(const int n = 4096, const int rows = 4096, global float[rows, n] a,
                      global float[n] x, global float[rows] y) {
          foreach (int bi in rows / 8 blocks) {
            foreach (int w in 8 warps) {
              foreach (int t in 32 threads) {
                int i = bi * 8 + w;
                float s = 0.0;
                if (i < rows) {
                  for (int j0 = 0; j0 < n; j0 += 32) {
                    s += a[i, j0 + t] * x[j0 + t];
                  }
                  y[i] = s;
                }
              }
            }
          }
        }
        """)
    assert got == 4096 * 4096 * 4 + 132 * 4096 * 4


def test_a_guard_that_gives_each_block_its_own_slice_is_not_shared(tmp_path):
    # the same x[c * 32 + t] in every block, but the guard lets block bi read chunk
    # bi % 64 only (4 sectors): the 264 blocks' chunks are not one set that each SM
    # keeps for all its blocks, so each block fetches its own (264 x 4 sectors, not
    # the first block's chunk once per SM)
    got = _l2_bytes(tmp_path, """\
        module k;
        import hopper;
        hopper void k(global float[2048] x, global float[2112] y) {
          foreach (int bi in 264 blocks) {
            foreach (int w in 8 warps) {
              foreach (int t in 32 threads) {
                float s = 0.0;
                for (int c = 0; c < 64; c++) {
                  if (c == bi % 64) {
                    s += x[c * 32 + t];
                  }
                }
                y[bi * 8 + w] = s;
              }
            }
          }
        }
        """)
    assert got == 264 * 4 * 32


def test_a_guard_that_picks_a_warp_per_block_leaves_the_vector_shared(tmp_path):
    # one warp of each block (w == bi % 8) reads all of x: other threads than in the
    # first block, the same elements, which each SM's L1 keeps for all its blocks
    got = _l2_bytes(tmp_path, """\
        module k;
        import hopper;
        hopper void k(const int n = 4096, global float[n] x, global float[2112] y) {
          foreach (int bi in 264 blocks) {
            foreach (int w in 8 warps) {
              foreach (int t in 32 threads) {
                float s = 0.0;
                if (w == bi % 8) {
                  for (int j0 = 0; j0 < n; j0 += 32) {
                    s += x[j0 + t];
                  }
                }
                y[bi * 8 + w] = s;
              }
            }
          }
        }
        """)
    assert got == 132 * 4096 * 4
