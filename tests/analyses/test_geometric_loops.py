"""Loops that multiply or divide their index (a reduction's tree ``s >>= 1``, a scan's
``offset *= 2``): with numbers for start and bound the analyses know the values the
index takes, run as the kernel runs them, and count the loop's iterations."""

from __future__ import annotations

import pytest

from tests.analyses.kernels import built

TREE = """
    module t;
    import gpu;
    gpu void tree(const int n = 1024, float[n] x) {{
      foreach (int b in n / 256 blocks) {{
        local float[256] l;
        foreach (int t in 256 threads) {{
          l[t] = x[b * 256 + t];
          barrier(local);
          for ({header}) {{
            if (t < s) {{
              l[t] += l[t + s];
            }}
            barrier(local);
          }}
          x[b * 256 + t] = l[t];
        }}
      }}
    }}
"""


def tree_loop(tmp_path, header, values=None):
    sym, num, _ = built(tmp_path, TREE.format(header=header), values)
    pick = [lp for lp in num.loops if lp.var == "s"]
    return [lp for lp in sym.loops if lp.var == "s"][0], pick[0]


@pytest.mark.parametrize("header, values", [
    ("int s = 128; s > 0; s >>= 1", [128, 64, 32, 16, 8, 4, 2, 1]),
    ("int s = 128; s > 0; s /= 2", [128, 64, 32, 16, 8, 4, 2, 1]),
    ("int s = 128; s > 0; s = s / 2", [128, 64, 32, 16, 8, 4, 2, 1]),
    ("int s = 128; 0 < s; s >>= 1", [128, 64, 32, 16, 8, 4, 2, 1]),
    ("int s = 128; s > 32; s >>= 1", [128, 64]),
    ("int s = 128; s >= 32; s >>= 1", [128, 64, 32]),
    ("int s = 1; s < 256; s *= 2", [1, 2, 4, 8, 16, 32, 64, 128]),
    ("int s = 1; s <= 256; s <<= 2", [1, 4, 16, 64, 256]),
    ("int s = 100; s > 0; s /= 3", [100, 33, 11, 3, 1]),
])
def test_the_values_of_a_geometric_loop_are_run_as_written(tmp_path, header, values):
    _, lp = tree_loop(tmp_path, header)
    assert lp.values == tuple(values)
    assert int(lp.trips) == len(values) and lp.step is None and not lp.approximate
    assert lp.index_values() == values and lp.index_values(3) == values[:3]


@pytest.mark.parametrize("header", [
    "int s = 0; s < 256; s *= 2",           # 0 doubled stays 0: it does not end
    "int s = 128; s > 0 && s > 1; s >>= 1",  # two conditions: an upper bound
    "int s = 128; s > 0; s >>= t",          # a factor that is not a literal
])
def test_a_geometric_loop_the_counts_cannot_run_stays_unknown(tmp_path, header):
    _, lp = tree_loop(tmp_path, header)
    assert lp.values is None and lp.trips is None and lp.approximate


def test_a_start_from_a_size_is_counted_only_with_its_value(tmp_path):
    sym, num = tree_loop(tmp_path, "int s = n / 8; s > 0; s >>= 1")
    assert sym.values is None and sym.trips is None
    assert num.values == (128, 64, 32, 16, 8, 4, 2, 1)


def test_the_tree_is_counted_and_its_guard_decides_the_share(tmp_path):
    """The counts follow the 8 halvings: each of the n threads evaluates the ``if`` 8
    times, the add inside counts where the guard lets it (an upper bound: the guard
    depends on the thread)."""
    from mcl.analyses.stats import counts_of_kernel
    _, num, _ = built(tmp_path, TREE.format(header="int s = 128; s > 0; s >>= 1"))
    c = counts_of_kernel(num)
    assert c.flops == 1024 * 8
    assert c.reads["local"] == 1024 * (8 * 2 + 1)
    assert not [why for _node, why in num.imprecisions if "multiplies" in why]
