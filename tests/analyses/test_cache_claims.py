"""What mcl.analyses.cache claims: "X in loop L does not benefit from the cache" only
where it is true and can be acted on (benchmarks/fidelity/heldout_kernels/REVIEW.md,
section 4). Not for a loop over blocks, whose blocks run on different SMs with an L1
each; not where by the counts lines serve several iterations; not for the target of
an atomic update or a store of each element once; not for a cooperative copy into
shared memory; not for the lanes of a warp, or the warps of a block, whose lines
another loop uses again (a lane's row walked contiguously, rows the next warps read).
The messages that are true stay: matmul's b[k, j] in loop k on the CPUs and in loop
k2 on fermi, and a lane's row on fermi, whose L1 cannot hold the rows of a block."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcl.analyses import _kernels, feedback
from mcl.analyses.cache import CacheAnalysis
from mcl.analyses.level import feedback_at_level
from mcl.mcpl import check

ROOT = Path(__file__).resolve().parents[2]
HELDOUT = ROOT / "benchmarks" / "fidelity" / "heldout_kernels"
EXAMPLES = ROOT / "examples"
MATMUL = EXAMPLES / "matmul"


def _path(kernel: str) -> Path:
    return HELDOUT / kernel / "hopper.mcpl"


def _warnings(source) -> list:
    """The "does not benefit from the cache" warnings of a module."""
    return [d for d in feedback(check(source), only={"cache"})
            if d.code == "feedback-cache" and "does not benefit" in d.message]


def _analysis(source) -> list:
    """The cache analysis' accesses (AccessCache) of every function of a module."""
    checked = check(source)
    out = []
    for f in checked.module.functions:
        hw = checked.hardware_of(f)
        sym, num = _kernels(f, checked, hw, None, False)
        out += CacheAnalysis().analyze(sym, num)["accesses"]
    return out


def _access(accesses: list, text: str, line: int | None = None):
    found = [ac for ac in accesses if ac.access.text == text
             and (line is None or ac.access.node.span.line == line)]
    assert found, [ac.access.text for ac in accesses]
    return found[0]


def _loop(ac, var: str):
    return next(lc for lc in ac.loops if lc.loop.var == var)


def _source(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "k.mcpl"
    path.write_text(text)
    return path


# --------------------------------------------------------------------------- the review


@pytest.mark.parametrize("kernel", ["transpose_naive", "matvec", "nbody", "hist256",
                                    "conv3x3"])
def test_the_reviewed_kernels_get_no_false_cache_warning(kernel):
    # REVIEW.md section 4: the 6 warnings on these kernels were all false or misleading
    assert not _warnings(_path(kernel))


# --------------------------------------------------------------------------- loops over blocks


def test_blocks_and_cpu_threads_share_no_cache():
    """A foreach over blocks spreads them over the SMs (the description places blocks
    in an smp, which holds the l1, and there are 132 of them); the warps and lanes of
    a block run in one SM. On the CPU the threads spread over the cores."""
    at = _access(_analysis(_path("transpose_naive")), "at[j, i]")
    assert {lc.loop.var: lc.verdict == "not shared" for lc in at.loops} == \
        {"bi": True, "bj": True, "w": False, "t": False}
    b = _access(_analysis(MATMUL / "cpu.mcpl"), "b[k, j]")
    assert {lc.loop.var: lc.verdict == "not shared" for lc in b.loops} == \
        {"ti": True, "tj": True, "vj": False, "k": False}


_BLOCK_ROWS = """module block_rows;
import hopper;
hopper void k(const int n = 4096, global float[n] y, global float[n, 64] a) {
  foreach (int b in n / 8 blocks) {
    foreach (int w in 8 warps) {
      foreach (int t in 32 threads) {
        float s = 0.0;
        for (int r = 0; r < 4; r++) {
          s = s + a[b * 8 + w, t] * r;
        }
        y[b * 8 + w] = s;
      }
    }
  }
}
"""


def test_a_block_loop_gets_no_advice_to_reorder_it(tmp_path):
    # a[b * 8 + w, t]: rows 2 kB apart in loop b, each row read 4 times (loop r); the
    # blocks run on different SMs, so no order of them shares a line in an L1; the
    # warps of a block read different rows, 256 B apart: that stays
    path = _source(tmp_path, _BLOCK_ROWS)
    [d] = _warnings(path)
    assert d.data["array"] == "a" and d.data["loop"] == "w"
    assert {lp["loop"]: lp["verdict"] for lp in d.data["loops"]}["b"] == "not shared"


# --------------------------------------------------------------------------- the counts


def test_does_not_only_where_no_line_serves_two_iterations():
    # transpose_naive's at[j, i] in loop bi: 512 iterations 32 B apart, 128 lines of
    # 128 B: 4 iterations per line, which was "does not benefit"
    for source in (_path("transpose_naive"), _path("matvec"), _path("conv3x3"),
                   MATMUL / "fermi.mcpl", MATMUL / "cpu_v1.mcpl"):
        for ac in _analysis(source):
            for lc in ac.loops:
                if lc.verdict == "does not":
                    assert lc.best >= lc.iterations, (source, ac.access.text, lc.loop.var)


# --------------------------------------------------------------------------- atomics, stores


def test_the_target_of_an_atomic_update_is_not_judged():
    # hist256: atomicAdd(bins[tid], ..) runs in the L2, where the L1 plays no part
    accesses = _analysis(_path("hist256"))
    assert not [ac for ac in accesses if ac.access.name == "bins"]
    assert [ac for ac in accesses if ac.access.name == "data"]


def test_a_store_of_each_element_once_is_a_stream():
    # at[j, i]: a line per lane (the coalescing message says so), each element written
    # once: no cache could write fewer lines
    assert _access(_analysis(_path("transpose_naive")), "at[j, i]").streamed


# --------------------------------------------------------------------------- copies


def test_cooperative_copies_into_shared_memory_are_not_judged():
    # each element loaded once per block, then read by its 256 threads from xs / spos
    assert _access(_analysis(_path("matvec")), "xv[j0 + tid]").copied
    assert _access(_analysis(_path("nbody")), "pos[tile * nrThreads + tid, c]").copied
    # matmul hopper v1: the tiles of a and b (a's loads were "in loop bi")
    accesses = _analysis(MATMUL / "hopper_v1.mcpl")
    assert _access(accesses, "a[i, k0 + q]").copied and _access(accesses, "b[k0 + q, j]").copied


def test_a_copy_through_registers_into_shared_memory_is_a_copy():
    # matmul hopper v10: the next tile of a loaded into registers (aNext) during the
    # multiply-adds, then stored into l_a; it was "a3[i, l + 1, aq + u] in loop w does
    # not benefit from the cache"
    path = MATMUL / "hopper_v10.mcpl"
    accesses = _analysis(path)
    assert _access(accesses, "a3[i, l + 1, aq + u]").copied
    assert not [d for d in _warnings(path) if d.data["array"] in ("a3", "b3")]


_USED = """module used;
import hopper;
hopper void k(const int n = 4096, global float[n] y, global float[n] x) {
  foreach (int b in n / 256 blocks) {
    shared float[256] xs;
    foreach (int w in 8 warps) {
      foreach (int t in 32 threads) {
        int tid = w * 32 + t;
        float s = 0.0;
        for (int tile = 0; tile < n / 256; tile++) {
          xs[tid] = x[tile * 256 + tid];
          barrier(shared);
          for (int q = 0; q < 256; q++) {
            s = s + xs[q];
          }
          barrier(shared);
        }
        y[b * 256 + tid] = s;
      }
    }
  }
}
"""


def test_a_copy_is_a_store_into_on_chip_memory_that_the_block_reads(tmp_path):
    accesses = _analysis(_source(tmp_path, _USED))
    assert _access(accesses, "x[tile * 256 + tid]").copied
    # the same read added to the sum instead: no copy
    used = _USED.replace("xs[tid] = x[tile * 256 + tid];", "s = s + x[tile * 256 + tid];")
    accesses = _analysis(_source(tmp_path, used))
    assert not _access(accesses, "x[tile * 256 + tid]").copied


# --------------------------------------------------------------------------- lines used again


def test_a_lane_whose_row_its_own_loop_walks_uses_each_line_again():
    # matvec A[i, j0 + k]: lane t reads row i; loop k uses each of its lines 32 times
    # (the analysis itself: 8 lines for 256 iterations), as the time model assumes
    a = _access(_analysis(_path("matvec")), "A[i, j0 + k]")
    for var in ("t", "w"):
        assert _loop(a, var).verdict == "does not" and _loop(a, var).reused_in.var == "k"
    assert _loop(a, "k").verdict == "may"


def test_rows_that_the_next_warps_read_are_used_again():
    # conv3x3 img[i + y, j + x]: warp wy + 1 reads at y = 0 the row that warp wy reads
    # at y = 1 (the reuse ratio of 8.90 at the same place)
    img = _access(_analysis(_path("conv3x3")), "img[i + y, j + x]")
    assert _loop(img, "wy").reused_in.var == "y"
    assert _loop(img, "y").reused_in.var == "wy"


def test_rows_that_do_not_fit_the_l1_keep_their_message():
    """gesummv perfect: a lane per row of A, each lane walking its row in loop j. A
    block's 1024 rows take 1024 lines of 128 B: 128 kB, which hopper's l1 (256 kB)
    holds until loop j comes back to them and fermi's (16 kB) does not (the paper's
    finding on fermi)."""
    def cache(level):
        got = feedback_at_level(check(EXAMPLES / "gesummv" / "perfect.mcpl"), level,
                                only={"cache"})
        return {d.data["array"]: d.data["loop"] for d in got.diagnostics
                if d.code == "feedback-cache" and "does not benefit" in d.message}
    assert cache("fermi") == {"A": "wti", "B": "wti"}
    assert cache("hopper") == {}


# --------------------------------------------------------------------------- true messages stay


@pytest.mark.parametrize("version,expected", [
    # the paper's: b[k, j] walks a column, p lines per thread; a[i, k] in loop ti (the
    # threads run on different cores) is gone
    ("cpu", {("b", "k")}),
    ("xeon_phi", {("b", "k")}),
    ("xeon_phi_v1", {("b", "k")}),
    # fermi: b[k, j] in loop k2, 256 lines per block; a2's copy into l_a (loop bi) is gone
    ("fermi", {("b", "k2")}),
    ("fermi_v1", {("b", "k2")}),
    # cpu v1: b[k, ..] read again in loop ei is a reuse of the element (a register's),
    # not a walk over its line: loop k keeps its message (both paths of the kernel);
    # a[i0 + ei, k]'s six rows, which loop k walks together, get none in loop ei
    ("cpu_v1", {("b", "k")}),
    ("cpu_v2", {("b", "k")})])
def test_the_true_messages_stay(version, expected):
    assert {(d.data["array"], d.data["loop"]) for d in _warnings(MATMUL / f"{version}.mcpl")} \
        == expected
