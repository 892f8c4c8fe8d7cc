"""Set conflicts in caches with an associativity: lines a power of two apart that
fit a cache by capacity but fall into one of its sets (the cpu matmul versions)."""

from __future__ import annotations

from pathlib import Path

from mcl.analyses import feedback
from mcl.hdl import load_hardware
from mcl.mcpl import check, parse

ROOT = Path(__file__).resolve().parents[2]
MATMUL = ROOT / "examples" / "matmul"

KERNEL = """module sets;
import cpu;
cpu void k(const int n = 2048, const int m = 2048, main float[n, m] b, main float[n] s) {
  foreach (int t in n threads) {
    foreach (int v in 1 vectors) {
      float sum = 0.0;
      for (int r = 0; r < 8; r++) {
        for (int k = 0; k < ROWS; k++) {
          sum += b[k, t % m];
        }
      }
      s[t] = sum;
    }
  }
}
"""


def sets(source: str):
    return [d for d in feedback(check(parse(source, "sets.mcpl"))) if d.code ==
            "feedback-cache-sets"]


def test_the_cpu_caches_have_ways():
    hw = load_hardware("cpu")
    ways = {c.name: c.associativity for c in hw.caches()}
    assert ways == {"l1": 8, "l2": 8, "l3": 16}


def test_rows_a_power_of_two_apart_share_one_set_of_l1():
    [d] = sets(KERNEL.replace("ROWS", "128"))
    assert d.data["cache"] == "l1" and d.data["loop"] == "k" and d.data["reuse"] == "r"
    # rows of 2048 floats: 8 kB apart, a multiple of l1's set span (32 kB / 8 ways)
    assert d.data["stride"] == 8192 and d.data["lines"] == 128
    assert d.data["sets_used"] == 1 and d.data["per_set"] == 128 and d.data["ways"] == 8
    assert "evict each other before loop r reads them again" in d.message


def test_no_conflict_where_the_lines_spread_or_are_too_many():
    # 8 rows fit the 8 ways of the set
    assert sets(KERNEL.replace("ROWS", "8")) == []
    # rows padded by a cache line (2064 floats) spread over the sets; a float more is
    # not enough (16 rows share a line offset)
    assert sets(KERNEL.replace("ROWS", "128").replace("m = 2048", "m = 2064")) == []
    assert sets(KERNEL.replace("ROWS", "128").replace("m = 2048", "m = 2049"))
    # without a loop reading them again there is nothing to keep
    assert sets(KERNEL.replace("ROWS", "128").replace("r < 8", "r < 1")) == []


def test_cpu_v2_is_told_to_pack_and_v3_is_not():
    v2 = [d for d in feedback(check(MATMUL / "cpu_v2.mcpl")) if d.code == "feedback-cache-sets"]
    main = [d for d in v2 if d.data["array"] == "b" and d.data["cache"] == "l1"]
    assert main and main[0].data["loop"] == "k" and main[0].data["reuse"] == "r"
    assert "packing" in main[0].hint
    v3 = [d for d in feedback(check(MATMUL / "cpu_v3.mcpl")) if d.code == "feedback-cache-sets"]
    # what remains is the guarded edge path, which reads b column by column
    assert all(d.data["cache"] != "l1" for d in v3)
