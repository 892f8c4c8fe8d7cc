"""The time of a kernel whose registers spill: a thread's spilled bytes are stored and
loaded once in each pass of the loops the generated code keeps around its loads, and the
memory part counts the stores as crossing to device memory
(mcl.analyses.timing_counts.spill_traffic; on the H200 gesummv hopper_v2 with 32 warps a
block, 280 B a thread, stores 149 MB in its 4 passes, and its time was predicted 57%
short before)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcl.analyses import Resources, feedback
from mcl.mcpl import check

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
N = 4096
#: gesummv hopper_v2 with 32 warps a block: 128 blocks of 1024 threads, each thread
#: going round its loop over the row 4 times (128 columns of runs of 4, unrolled 8 times)
THREADS, PASSES = 128 * 1024, N // (128 * 8)


def _time(tmp_path, spill_bytes: int | None, warps: int = 32):
    source = (EXAMPLES / "gesummv" / "hopper_v2.mcpl").read_text()
    assert "const int nrWarps = 8;" in source
    f = tmp_path / "gs.mcpl"
    f.write_text(source.replace("const int nrWarps = 8;", f"const int nrWarps = {warps};"))
    checked = check(f)
    res = None if spill_bytes is None else {
        fn.name: Resources(64, "NVIDIA compiler", spill_bytes=spill_bytes)
        for fn in checked.module.functions}
    [d] = [d for d in feedback(checked, only={"time"}, resources=res, values={"n": N})
           if d.code == "feedback-time"]
    return d


def test_the_compiler_s_spills_cross_to_device_memory(tmp_path):
    spilled = _time(tmp_path, 280)
    frame = _time(tmp_path, 8)          # a stack frame, not spills
    memory = frame.data["parts"]["memory"]
    extra = spilled.data["parts"]["memory"] - memory
    # the memory part is traffic at one bandwidth: bytes in proportion to seconds
    compulsory = 2 * N * N * 4 + 2 * N * 4
    assert extra / memory == pytest.approx(280 * THREADS * PASSES / compulsory, rel=0.02)
    assert spilled.data["seconds"] > 1.8 * frame.data["seconds"]
    assert "the compiler's spills store to local memory (280 B a thread" in spilled.message
    assert "spills" not in frame.message


def test_without_a_compiler_the_estimate_s_register_arrays_spill(tmp_path):
    # no compiler asked: 1024 threads may have 64 registers each, and the register arrays
    # alone (va, vb and vx of 32 elements, ta and tb of 4) are 104: kept in local memory
    d = _time(tmp_path, None)
    assert "the estimated spills store to local memory (416 B a thread" in d.message
    # 8 warps a block: 255 registers a thread, no spills
    assert "spills" not in _time(tmp_path, None, warps=8).message
