"""The predicted times at `h200` against the H200's own cold times of the examples
(tests/analyses/fidelity/h200_times.json: two runs of benchmarks/fidelity/measure.py
time --cold on 2026-11-30, each version's best of 10 cold launches a run, with the
NVIDIA compiler's registers of each build). The GPU machine is an H200 since 2026-11-29;
test_fidelity.py holds the analyses to the H100's record. No GPU needed: a change to the
analyses that ranks the versions worse on this machine, or moves the predictions away
from its times, fails here."""

from __future__ import annotations

import json
import statistics
import sys
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks" / "fidelity"))

import fidelity_cases as C  # noqa: E402
import fidelity_predict as P  # noqa: E402
from ranking import best_time, spearman  # noqa: E402

RECORD = json.loads((Path(__file__).parent / "fidelity" / "h200_times.json").read_text())


@cache
def _predictions() -> dict[str, float]:
    """Predicted seconds at h200 of every recorded example, with its registers."""
    cases = {c.name: c for c in C.example_cases(None)}
    return {name: P.predicted_time(cases[name], registers=RECORD["registers"][name],
                                   level="h200")["seconds"] for name in RECORD["times"]}


def _measured(name: str) -> float:
    return best_time(*RECORD["times"][name])


#: the least Spearman per kernel (matmul 0.981 since 2026-12-02: busiest_share;
#: 2026-11-30, the analyses of that day: black_scholes 0.90,
#: convolution 0.952, gesummv 0.886, histogram 1.00, matmul 0.954, reduction 0.979,
#: spmv_csr 1.00, vector_add 0.80), rounded down: histogram 0.87 while the merges of each
#: block's bins into hist overlapped its memory-bound stream (gpu_v1 and nvidia_v1
#: predicted level, measured 7% apart: nvidia_v1's 2048 blocks merge twice the updates;
#: hopper_v1 and v2 predicted 1% apart the other way, measured 7% apart), 1.00 since the
#: updates beyond the spread of the blocks' ends follow the rest (h200.target's
#: block_end_spread, benchmarks/opencl/block_end_probe.py); vector_add's
#: nvidia_v1 and hopper_v1 measured 1.6% apart (1024 and 1056 work-groups, 16 and 15.5
#: rounds of their grid-stride loop), predicted 0.04% apart the other way; gesummv's
#: nvidia_v1 and hopper_v1 measured 0.9% apart, within the runs' 1.9% spread
LEAST = {"black_scholes": 0.9, "convolution": 0.95, "gesummv": 0.88, "histogram": 1.0,
         "matmul": 0.98, "reduction": 0.97, "spmv_csr": 1.0, "vector_add": 0.8}


@pytest.mark.parametrize("kernel", sorted(LEAST))
def test_predicted_times_rank_the_versions_like_the_h200(kernel):
    names = [n for n in RECORD["times"] if n.split("/")[0] == kernel]
    pred = [_predictions()[n] for n in names]
    meas = [_measured(n) for n in names]
    assert spearman(pred, meas) >= LEAST[kernel] - 1e-9, list(zip(names, pred, meas,
                                                                  strict=True))


def test_predicted_times_within_20_percent_of_the_h200():
    """57 of the 60 examples within 20% of the H200's times, median error 6.40% (2026-12-03,
    since the issue slots and the shared memory's banks overlap only in part, h200.target's
    issue_overlap_exponent, benchmarks/opencl/issue_overlap_probe.py: matmul hopper_v4 ..
    v12 -10..-20% -> -7..+4%, hopper_v1 -7% -> +8%; 9.12% before; the same day,
    since an issue-bound grid of any number of rounds takes its busiest SM's time:
    convolution +0.1..+2.5%, matmul hopper_v1 -9.0% -> -6.8%; 9.15% before; 2026-12-02,
    since an issue-bound grid of at most two rounds took its busiest SM's time,
    mcl.analyses.timing.busiest_share: matmul hopper_v2 .. v10 at 2048^3 -15..-22% ->
    -13..-20%, its Spearman 0.954 -> 0.981); 56 and 9.2% before (2026-12-01,
    since the L2's requests follow the compulsory traffic where the warps gather, the
    ``gathers`` part of mcl.analyses.timing: spmv_csr gpu_v1, nvidia_v1 and hopper_v1
    -30..-31% -> -5..-7%, ranked as before). 53 and 10.9% before (2026-11-30; 54 until the
    requests the L2 serves waited the latency of its link with the resident warps' loads in
    flight: matmul gpu_v2 -10% -> -3%, gpu_v3 and nvidia -8% -> +3%, its Spearman 0.937 ->
    0.954, but perfect, accelerator and gpu +16% -> +20%, their L2 bandwidth part already
    above what the L2 serves where its request coalescer merges neighbouring SMs' reads,
    which the model does not predict. 54 since an atomic update counts as no load a warp
    keeps in flight: histogram gpu_v1 and nvidia_v1 -27% and -32% -> -4% and -10%, as the
    compiled code's bytes in flight have them; 52 and 11.8% before, 11.6% until spmv_csr
    perfect's lanes' rows took x's room in the L1, mcl.analyses.block_reuse.gather_sectors:
    its L2 read bytes -30% -> +3% of the L1's misses, its time +11% -> +17%, bound by its
    load-store path, which its gathers' L2 requests overlap only in part). The 4 misses:
    matmul hopper_v4 22% fast and perfect 20.0% slow; convolution's issue-bound hopper_v2
    and v3 33-37% fast. spmv_csr's gpu_v1, nvidia_v1 and hopper_v1 were 30-31% fast while
    their gathers' requests overlapped the rest (42-43% before those were each a request of
    the L2's 158 G a second, h200.target's cache_request_rate): measured, they add to it
    (benchmarks/opencl/spmv_data.py, gather_chain_probe.py). That day three measured
    figures moved them: the L2's link at 10 TB/s, not 8
    (benchmarks/opencl/l2_stream_probe.py: matmul's first four versions +38..40% ->
    +12..16%), a warp's load whose lanes' words spread over the L1's banks at about half a
    cycle a line, not one (benchmarks/opencl/lane_rows_probe.py: spmv_csr perfect +112% ->
    +11%, its other versions -16% -> -43%), and the updates of an array queued in the L2's
    atomic units (atomic_spread_probe.py: histogram perfect -99% -> -19%): 49 within 20%
    and 11.9% before; 47 and 12.6% before the copies of a predicated loop body were in
    flight together (h200.target's predicated_body). vector_add nvidia_v1 and hopper_v1,
    24-26% slow while each of their unrolled copies counted one load in flight, are 4-6%
    slow."""
    errors = {n: abs(_predictions()[n] / _measured(n) - 1) for n in RECORD["times"]}
    within = sum(e <= 0.2 for e in errors.values())
    assert within >= 57, sorted(errors.items(), key=lambda kv: -kv[1])[:15]
    assert statistics.median(errors.values()) <= 0.065


#: the bytes a warp keeps in flight in each version's SASS (fidelity/h200_in_flight.json):
#: what mcl feedback counts beside the GPU where ptxas and cuobjdump are at hand
IN_FLIGHT = json.loads((Path(__file__).parent / "fidelity" / "h200_in_flight.json")
                       .read_text())["in_flight"]


@cache
def _compiled_predictions() -> dict[str, float]:
    """Predicted seconds at h200 with the compiler's registers and bytes in flight."""
    cases = {c.name: c for c in C.example_cases(None)}
    return {name: P.predicted_time(cases[name], registers=RECORD["registers"][name],
                                   level="h200", in_flight=IN_FLIGHT[name])["seconds"]
            for name in RECORD["times"]}


def test_with_the_compiled_code_s_bytes_in_flight_more_versions_are_within_20_percent():
    """57 of the 60 within 20%, median error 6.2% (2026-12-03, with the issue slots and the
    shared memory overlapping in part as above); 56 and 9.1% before (2026-12-01, with the
    ``gathers`` part as above); 53 and 10.1% before (54 before the L2 link's latency, as
    above; 2026-11-30, with the L2's link at 10 TB/s, the L1's banks and the L2's atomic
    units; 51 and 11.8% before), against 54 and 10.9% with the bytes in flight counted
    from the kernel: gesummv hopper_v1 -9% -> -2%, nvidia_v1 -11% -> -9% (the compiler
    keeps 768 B of their 1536 and 1152 in flight). histogram's gpu_v1 and nvidia_v1, -27% and -32%
    while the count took their updates of hist for loads in flight, are at the compiled
    code's -4% and -10% in both since an atomic update is none. Ranked the same: histogram
    0.87 in both (hopper_v1 and v2 4% under and over, measured 7% apart the other way:
    v1's buckets drawn at random by the model, where half the data fall in one bank)."""
    errors = {n: abs(_compiled_predictions()[n] / _measured(n) - 1) for n in RECORD["times"]}
    assert sum(e <= 0.2 for e in errors.values()) >= 57, sorted(errors.items(),
                                                                key=lambda kv: -kv[1])[:12]
    assert statistics.median(errors.values()) <= 0.063
    for kernel, least in LEAST.items():
        names = [n for n in RECORD["times"] if n.split("/")[0] == kernel]
        got = spearman([_compiled_predictions()[n] for n in names],
                       [_measured(n) for n in names])
        assert got >= least - 1e-9, (kernel, got)
