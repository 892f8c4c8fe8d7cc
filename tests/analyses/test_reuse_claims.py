"""What mcl.analyses.reuse claims about threads, guarded reads and read-only memory:
no "each computing one element" where the threads of a row write it together, no
reuse counted for lanes that an if keeps from reading, and no cooperative load
into memory that a kernel cannot write."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcl.analyses import feedback
from mcl.diagnostics import Severity
from mcl.mcpl import check

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def _diags(kernel: str, version: str, code: str) -> list:
    diags = feedback(check(EXAMPLES / kernel / f"{version}.mcpl"))
    return [d for d in diags if d.code == code]


def _source(tmp_path: Path, text: str) -> list:
    path = tmp_path / "k.mcpl"
    path.write_text(text)
    return feedback(check(path))


# --------------------------------------------------------------------------- work per thread


@pytest.mark.parametrize("kernel,version", [
    # a block of 256 threads per element of y, written by tid == 0
    ("gesummv", "gpu_v1"),
    # 32 lanes per row, the row written by lane == 0
    ("spmv_csr", "gpu_v1"),
    ("spmv_csr", "nvidia_v1")])
def test_threads_that_combine_into_one_element_are_not_one_element_each(kernel, version):
    assert not _diags(kernel, version, "feedback-work-per-thread")


@pytest.mark.parametrize("kernel,version,output", [
    ("matmul", "gpu", "c"), ("matmul", "gpu_v1", "c"), ("matmul", "mic", "c"),
    # guarded by bounds tests on sizes (i < n): still one element per thread
    ("vector_add", "gpu_v1", "c"), ("convolution", "gpu_v1", "output")])
def test_one_element_per_thread_keeps_its_message(kernel, version, output):
    [d] = _diags(kernel, version, "feedback-work-per-thread")
    assert f"each computing one element of {output}" in d.message


_FIRST_LANES = """module first_lanes;
import gpu;
gpu void k(const int n = 1048576, dev float[n] y, dev float[n] x) {
  foreach (int b in n / 256 blocks) {
    foreach (int t in 256 threads) {
      if (t < 4) {
        y[b * 256 + t] = 2.0 * x[b * 256 + t];
      }
    }
  }
}
"""


def test_threads_an_if_keeps_from_writing_compute_no_element(tmp_path):
    # 4 of a block's 256 threads write, each its own element; y is as long as there
    # are threads, so only the guard tells that the other 252 write nothing
    diags = _source(tmp_path, _FIRST_LANES)
    assert not [d for d in diags if d.code == "feedback-work-per-thread"]
    # without the if, every thread computes one element
    diags = _source(tmp_path, _FIRST_LANES.replace("if (t < 4)", "if (t < 256)"))
    [d] = [d for d in diags if d.code == "feedback-work-per-thread"]
    assert "1048576 threads, each computing one element of y" in d.message


# --------------------------------------------------------------------------- guarded reuse


def test_a_reuse_ratio_counts_only_the_lanes_the_if_lets_read():
    # spmv_csr nvidia v1: rowPtr[r + lane] under `if (lane < 2 && r < nrRows)`: lanes 0
    # and 1 read, about 2 nrRows reads of nrRows + 1 elements
    [d] = [d for d in _diags("spmv_csr", "nvidia_v1", "feedback-reuse")
           if d.data["array"] == "rowPtr"]
    assert 1.9 < d.data["ratio_value"] < 2.1
    # nrBlocks = (nrRows + 7) / 8 rounds up: the formula keeps the rounding
    assert ("reuse ratio 8*floor(nrRows/8 + 7/8)/(4*floor(nrRows/8 + 7/8) + 5) = 2.00 "
            "overall") in d.message


#: rows of 32 lanes (8 rows a block) that copy rowPtr at ``INDEX`` where ``GUARD`` holds,
#: at the level ``LEVEL`` with its device memory ``SPACE``
_ROWS = """module rows;
import LEVEL;
LEVEL void k(const int nrRows = 65536, SPACE float[nrRows, 32] out,
             SPACE int[nrRows + 1] rowPtr) {
  foreach (int bi in nrRows / 8 blocks) {
    foreach (int rr in 8 threads) {
      foreach (int lane in 32 threads) {
        int r = bi * 8 + rr;
        if (GUARD) {
          out[r, lane] = rowPtr[INDEX];
        }
      }
    }
  }
}
"""


def _rows(tmp_path: Path, level: str, space: str, index: str, guard: str) -> list:
    source = _ROWS.replace("LEVEL", level).replace("SPACE", space) \
        .replace("INDEX", index).replace("GUARD", guard)
    return [d for d in _source(tmp_path, source) if d.data.get("array") == "rowPtr"]


def _ratio(tmp_path: Path, guard: str) -> list:
    return [d for d in _rows(tmp_path, "nvidia", "global", "r + lane", guard)
            if d.code == "feedback-reuse"]


def test_a_guard_the_ratio_cannot_count_gives_no_ratio(tmp_path):
    # a bound on the lane by another index: how many lanes read is not one number
    assert not _ratio(tmp_path, "lane < rr")
    # a bound by a constant is counted: 2 of the 32 lanes
    [d] = _ratio(tmp_path, "lane < 2")
    assert 1.9 < d.data["ratio_value"] < 2.1
    # a bounds test on a size drops at most a last partial block: all 32 lanes
    [d] = _ratio(tmp_path, "r < nrRows")
    assert d.data["ratio_value"] > 31


def _row_start(tmp_path: Path, guard: str, code: str) -> list:
    return [d for d in _rows(tmp_path, "gpu", "dev", "r", guard) if d.code == code]


def test_an_element_one_lane_reads_is_not_loaded_for_each_lane(tmp_path):
    # rowPtr[r] does not depend on lane, but only lane 0 reads it
    assert not _row_start(tmp_path, "lane == 0", "feedback-reuse")
    # two lanes read it: loaded twice, and no on-chip copy to share among the 32
    [d] = _row_start(tmp_path, "lane < 2", "feedback-reuse")
    assert "it is loaded for 2 of the 32 threads lane (2 times)" in d.message
    assert d.data["times_value"] == 2
    assert not _row_start(tmp_path, "lane < 2", "feedback-faster-memory")
    # every lane reads it
    [d] = _row_start(tmp_path, "r < nrRows", "feedback-reuse")
    assert "it is loaded for each of the 32 threads lane (32 times)" in d.message
    assert _row_start(tmp_path, "r < nrRows", "feedback-faster-memory")


# --------------------------------------------------------------------------- read-only memory


def test_constant_memory_is_passed_in_not_loaded_by_the_kernel():
    # gesummv nvidia v1: x (16 kB) in constant memory (64 kB), which the kernel cannot write
    x = [d for d in _diags("gesummv", "nvidia_v1", "feedback-faster-memory")
         if d.data["array"] == "x" and d.data["space"] == "constant"]
    assert x
    for d in x:
        assert "barrier(constant)" not in d.hint and "cooperatively" not in d.hint
        assert "`constant float[n] x`" in d.hint
        assert "16 kB" in d.hint and "64 kB" in d.hint


_STENCIL = """module stencil;
import nvidia;
nvidia void k(const int n = 1024, global float[n] out, global float[n + 8] inp) {
  foreach (int b in n / 256 blocks) {
    foreach (int t in 256 threads) {
      int i = b * 256 + t;
      float s = 0.0;
      for (int y = 0; y < 9; y++) {
        s += inp[i + y];
      }
      out[i] = s;
    }
  }
}
"""


def test_a_tile_with_its_halo_is_not_loaded_into_constant_memory(tmp_path):
    faster = [d for d in _source(tmp_path, _STENCIL)
              if d.code == "feedback-faster-memory" and d.data["array"] == "inp"]
    constant = [d for d in faster if d.data["space"] == "constant"]
    assert constant
    for d in constant:
        assert "`constant float[n + 8] inp`" in d.hint
        assert "halo" not in d.hint


# --------------------------------------------------------------------------- a cache that holds it


_SHARED_VECTOR = """module rows;
import hopper;
hopper void rows(const int n = 4096, const int len = LEN, global float[n] y,
                 global float[n, len] A, global float[len] x) {
  foreach (int b in n / 8 blocks) {
    foreach (int w in 8 warps) {
      foreach (int t in 32 threads) {
        float s = 0.0;
        for (int j = t; j < len; j += 32) {
          s += A[b * 8 + w, j] * x[j];
        }
        if (t == 0) {
          y[b * 8 + w] = s;
        }
      }
    }
  }
}
"""


@pytest.mark.parametrize(("length", "cached"), [
    (4096, True),                 # x of 16 kB: the SM's 256 kB L1 holds it for the warps
    (1 << 20, False)])            # x of 4 MB does not fit: staging it saves traffic
def test_shared_memory_for_what_the_l1_holds_is_no_warning(tmp_path, length, cached):
    # gesummv hopper_v1's x[j], read by the 8 warps of a block: measured (the fidelity
    # record), its repeated reads never reach the L2, so shared memory would only
    # replace L1 hits; a vector beyond the L1 keeps the warning
    x = [d for d in _source(tmp_path, _SHARED_VECTOR.replace("LEN", str(length)))
         if d.code == "feedback-faster-memory" and d.data["array"] == "x"]
    [d] = [d for d in x if d.data["loop"] == "w"]
    assert d.data["space"] == "shared"
    if cached:
        assert d.severity is Severity.INFO and d.data["cached_by"] == "l1"
        assert "fits in l1 (256 kB)" in d.message and "not traffic from global" in d.message
        assert "barrier(shared)" in d.hint
    else:
        assert d.severity is Severity.WARNING and "cached_by" not in d.data
        assert "shared memory can be leveraged for x[j]" in d.message


def test_gesummv_hopper_is_told_the_l1_serves_x():
    [d] = [d for d in _diags("gesummv", "hopper_v1", "feedback-faster-memory")
           if d.data["array"] == "x"]
    assert d.data["cached_by"] == "l1" and d.severity is Severity.INFO
