"""Seven probes of the GPU machine (benchmarks/opencl/unrolled_loads_probe.py,
row_pieces_probe.py, inflight_probe.py, gather_chain_probe.py, fma_block_probe.py,
block_end_probe.py, link_overlap_probe.py: timed
on the GPU machine) compute what they claim, here on PoCL (their ``--device cpu``): the
unrolled loop bodies MCL generates for hopper give numpy's values whatever their length
and calls, every shape of row reading sums every row, the reads and the copy with U
loads in flight read every element, spmv's rows with x's element chosen each of five
ways sum as numpy's, the multiply-add blocks compute numpy's sums, and the block-end
probe's streams, merges and stamps are what it reads (its queue of merges checked by
hand), and the link-overlap probe's streams and L1 loads read the elements it means."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("script,result,extra", [
    ("unrolled_loads_probe.py", "unrolled_loads_probe.json", []),
    ("row_pieces_probe.py", "row_pieces_probe.json", []),
    ("row_pieces_probe.py", "row_pieces_probe_unroll1.json", ["--unroll", "1"]),
    ("inflight_probe.py", "inflight.json", []),
    ("inflight_probe.py", "inflight_copy.json", ["--copy"]),
    ("gather_chain_probe.py", "gather_chain_probe.json", ["--repeats", "1"])])
def test_the_probe_s_kernels_are_right_on_the_cpu(opencl_device, tmp_path, script, result,
                                                  extra):
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "opencl" / script),
                          "--device", "cpu", "--out", str(tmp_path), *extra],
                         capture_output=True, text=True, timeout=900, cwd=ROOT)
    assert run.returncode == 0, run.stderr[-2000:]
    rows = json.loads((tmp_path / result).read_text())
    rows = rows["results"] if "results" in rows else rows["rows"]
    # inflight_probe and gather_chain_probe exit 1 at the first wrong result and have no
    # "correct" field
    assert len(rows) >= 6 and all(r.get("correct", True) for r in rows)


def test_the_multiply_add_blocks_are_right_on_the_cpu(opencl_device):
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "opencl" /
                                              "fma_block_probe.py"), "--device", "cpu"],
                         capture_output=True, text=True, timeout=900, cwd=ROOT)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    for name in ("stream8", "outer", "outer_lds", "conv_like", "outer_4x4", "outer_4x8",
                 "outer_8x4", "outer_8x16", "outer_16x8"):
        assert f"{name}: ok" in run.stdout



def test_the_block_end_probe_sums_merges_and_stamps_right_on_the_cpu(opencl_device):
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "opencl" /
                                              "block_end_probe.py"), "--device", "cpu"],
                         capture_output=True, text=True, timeout=900, cwd=ROOT)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert "grid 4 x 64: ok" in run.stdout


def test_the_block_end_probe_s_queue_of_merges():
    import numpy as np
    sys.path.insert(0, str(ROOT / "benchmarks" / "opencl"))
    from block_end_probe import queued_exposure, spread
    # four work-groups ending 1 apart with 8 of merges: 2 each; the queue ends at 3 + 5
    ends = np.array([0.0, 1.0, 2.0, 3.0])
    assert queued_exposure(ends, 8.0) == 5.0 and spread(ends, 8.0) == 3.0
    # merges shorter than the gaps: only the last work-group's share follows
    assert queued_exposure(ends, 2.0) == 0.5


def test_the_link_overlap_probe_reads_what_it_means_on_the_cpu(opencl_device, tmp_path):
    """Its sums, of elements that differ with the index, equal numpy's for each K, with
    the stream's passes rotated and with its loads all from the L1's arrays."""
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "opencl" /
                                              "link_overlap_probe.py"), "--device", "cpu",
                          "--out", str(tmp_path)],
                         capture_output=True, text=True, timeout=900, cwd=ROOT)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    families = json.loads((tmp_path / "link_overlap_probe.json").read_text())["families"]
    assert sorted(families) == ["dram", "l2"]
    assert all(len(f["rows"]) == 4 for f in families.values())
