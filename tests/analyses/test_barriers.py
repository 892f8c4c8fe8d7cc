"""Barriers that not every unit of a work-group reaches (mcl.analyses.barriers): named
where a condition or a loop around them differs between the units, not where it is the
same for all of them (the examples' reduction trees and tiled loops)."""

from __future__ import annotations

import pytest

from mcl.analyses import feedback

_KERNEL = """module k;
import hopper;
hopper void k(const int n = 4096, global float[n] out, global float[n] inp) {{
  foreach (int b in n / 256 blocks) {{
    shared float[256] tile;
    foreach (int w in 8 warps) {{
      foreach (int t in 32 threads) {{
        int tid = w * 32 + t;
        tile[tid] = inp[b * 256 + tid];
        {body}
        out[b * 256 + tid] = tile[255 - tid];
      }}
    }}
  }}
}}
"""


def _found(tmp_path, body: str) -> list:
    f = tmp_path / "k.mcpl"
    f.write_text(_KERNEL.format(body=body))
    return [d for d in feedback(str(f), only=["ops"])
            if d.code == "feedback-divergent-barrier"]


@pytest.mark.parametrize("body, where", [
    ("if (tid < 128) { barrier(shared); }", "inside 'if (tid < 128)', whose condition"),
    # a value computed from the thread's index varies too
    ("int half = tid / 128;\n if (half == 0) { barrier(shared); }",
     "inside 'if (half == 0)'"),
    # an element read at the thread's index
    ("if (tile[tid] > 0.0) { barrier(shared); }", "inside 'if (tile[tid] > 0.0)'"),
    # a trip count that differs between threads
    ("for (int j = tid; j < 256; j += 64) { barrier(shared); }",
     "inside a loop ('j < 256') whose trip count"),
    # a loop some threads leave early
    ("for (int j = 0; j < 4; j++) { if (t == j) { break; } barrier(shared); }",
     "in a loop that 'if (t == j)' leaves or skips for some units"),
    # a flag set under a condition that varies
    ("int go = 0;\n if (w == 0) { go = 1; }\n if (go == 1) { barrier(shared); }",
     "inside 'if (go == 1)'"),
    # after a return some threads take (CUDA's `if (i >= n) return;`)
    ("if (tid >= 200) { return; }\n barrier(shared);",
     "after 'if (tid >= 200)', which ends the kernel for some units"),
    ("if (w == 0) { if (t > 3) { return; } }\n barrier(shared);",
     "after 'if (t > 3)', which ends the kernel for some units"),
    # a return in a loop: its later rounds' barriers too
    ("for (int j = 0; j < 4; j++) { barrier(shared); if (t == j) { return; } }",
     "in a loop that 'if (t == j)' leaves or skips for some units"),
])
def test_a_barrier_behind_a_condition_that_varies_is_named(tmp_path, body, where):
    (d,) = _found(tmp_path, body)
    assert d.message.startswith(f"barrier(shared) {where}"), d.message
    assert "every unit must reach the barrier" in d.message
    assert d.span.line >= 10


@pytest.mark.parametrize("body", [
    "barrier(shared);",
    # a reduction tree: the loop's bound is the same for all, the if holds no barrier
    "for (int s = 128; s > 0; s >>= 1) { if (tid < s) { tile[tid] += tile[tid + s]; }\n"
    " barrier(shared); }",
    # a condition on the block: the same for every thread of it
    "if (b < n / 512) { barrier(shared); }",
    # an element read at the same index by all of them
    "if (tile[0] > 0.0) { barrier(shared); }",
    # a loop over the sizes
    "for (int l = 0; l < n / 1024; l++) { barrier(shared); }",
    # a range that names the thread's index, but 8 rounds for every thread
    "for (int k = t; k < 256; k += 32) { barrier(shared); }",
    # a return every thread of the block takes or none does, or after the last barrier
    "if (b > n) { return; }\n barrier(shared);",
    "barrier(shared);\n if (tid >= 200) { return; }",
])
def test_a_barrier_every_unit_reaches_is_not_named(tmp_path, body):
    assert _found(tmp_path, body) == []


def test_the_examples_barriers_are_reached_by_every_unit():
    from pathlib import Path

    from mcl.analyses.barriers import divergent_barriers
    from mcl.mcpl import check
    examples = Path(__file__).resolve().parents[2] / "examples"
    found, seen = [], 0
    for f in sorted(examples.glob("*/*.mcpl")):
        if "barrier(" not in f.read_text():
            continue
        checked = check(str(f))
        for fn in checked.module.functions:
            seen += 1
            found += [(f.name, d.span.line)
                      for d in divergent_barriers(fn, checked.hardware_of(fn))]
    assert seen > 30 and found == []
