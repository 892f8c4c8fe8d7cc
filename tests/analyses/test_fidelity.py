"""The analyses against the H100's own figures, recorded by benchmarks/fidelity
(tests/analyses/fidelity/vendor.json: the NVIDIA compiler's registers, the CUDA
occupancy calculator's resident blocks, ncu's counters, per kernel). No GPU needed:
a change to the analyses that moves a figure away from the hardware fails here."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks" / "fidelity"))

import fidelity_cases as C  # noqa: E402
import fidelity_predict as P  # noqa: E402

RECORD = json.loads((Path(__file__).parent / "fidelity" / "vendor.json").read_text())
BY_NAME = {c["name"]: c for c in RECORD["cases"]}
CASES = {c.name: c for c in C.all_cases()}
EXAMPLES = [n for n in BY_NAME if n in CASES and not CASES[n].sweep]
#: every 12th sweep variant (the whole sweep runs in benchmarks/fidelity/report.py)
SWEEP = [n for n in BY_NAME if n in CASES and CASES[n].sweep][::12]


def _case(name: str) -> C.Case:
    case = CASES[name]
    if case.digest != BY_NAME[name]["digest"]:
        pytest.fail(f"{case.file} changed since its figures were measured: run "
                    "benchmarks/fidelity/run_gpu.sh on the GPU machine and report.py")
    return case


def test_the_record_covers_the_examples_and_a_sweep():
    assert len(EXAMPLES) >= 45 and len(BY_NAME) >= 250


@pytest.mark.parametrize("name", EXAMPLES + SWEEP)
def test_occupancy_equals_cuda_with_the_compilers_registers(name):
    rec = BY_NAME[name]
    got = P.predict(_case(name), registers=rec["registers"], only=("occupancy",))
    assert got["resident_blocks"] == rec["resident_blocks"], got
    assert got["registers_source"] == "NVIDIA compiler"
    # the record holds no kernel the feedback proves wrong (report.py leaves them out)
    assert "invalid" not in got, got["invalid"]


def test_register_estimate_stays_within_its_recorded_accuracy():
    """The estimate used without a GPU: within ±10% of the compiler for at least as
    many example kernels as when recorded (43 of 55 with the fragments a sliding
    window keeps live, accumulators not given back at a step-down and reads beyond a
    register array's extent undefined: 44 until convolution hopper_v4's filter was
    passed by value, which took the compiler from 48 to 40 registers, the estimate
    staying at 50; 42 of 54 before; the issue asks for 90%, not yet reached; the
    sweep, benchmarks/fidelity/registers_fit.py: 465 of 600 before hopper_v4's 40
    variants were measured, 471 of 640 with them; 44 and 486 of 680 with hopper_v5's;
    44 and 491 since a specialised build folds its unrolled nests' indices: hopper_v4
    in, hopper_v5 out; 49 and 404 of 599 with matmul v11 and v12 and histogram's
    growth share; 50 and 431 since an unrolled loop that fills a register array from
    device memory for many uses counts the next fill too, register_unrolling.prefetched:
    convolution hopper_v5 in; 54 and 436 since a counted loop too long to unroll
    completely is unrolled four times with its loads in flight,
    register_unrolling.partly_unrolled_loads: matmul gpu_v3, nvidia, nvidia_v1 and hopper in;
    443 since the compiler gives up that unrolling where it keeps 3/4 of the SM's
    threads busy, occupancy._busy_registers; 450 since a prefetch through registers
    holding fewer values than the fragments lets the compiler step down,
    registers._staged_elements: matmul hopper_v3's 16 x 8 tiles in; of the 369
    kernels left when the feedback named 230 of the 599 wrong kernels, 54 and 263, and
    55 and 266 since a step-down has to gain blocks worth the registers,
    occupancy._WORTH: convolution hopper_v2 in),
    with a median error of at most 10%. And the resident blocks the feedback reports
    with it equal to CUDA's for at least 55 of the 58 (51 before any kernel could give
    back one value to reach an occupancy step, registers.recomputable: convolution
    hopper_v4's 41 -> 40, 6 blocks; 52 before the four-times unrolled loops; 54 before
    occupancy._WORTH)."""
    errors = []
    same_blocks = 0
    for name in EXAMPLES:
        got = P.predict(_case(name), only=("occupancy",))
        vendor = BY_NAME[name]["registers"]
        errors.append(abs(got["registers"] - vendor) / vendor)
        assert got["registers_source"] == "estimated"
        same_blocks += got["resident_blocks"] == BY_NAME[name]["resident_blocks"]
    within = sum(e <= 0.10 for e in errors)
    assert within >= 55, within
    assert sorted(errors)[len(errors) // 2] <= 0.10
    assert same_blocks >= 55, same_blocks


def test_register_estimate_steps_down_to_an_occupancy_step_where_the_compiler_does():
    """matmul hopper v1 needs about 89 registers (2 blocks of 256 threads per SM); its
    device reads only fill shared memory, so the compiler can give back the fragments
    it loads from there (registers.squeeze_slack) and reschedules to 80 (3 blocks), as
    recorded (so did hopper v2 with 64-row
    tiles at 128 threads, 108 -> 96, before the feedback named the variant a wrong
    kernel: its loads fill half of l_b). Its v10 at bk = 32 prefetches device memory
    into registers: no step down."""
    from mcl.analyses import registers
    name = "matmul/hopper_v1"
    sym, num = P.hopper_kernels(_case(name))
    assert registers.register_demand(num, sym) > 84
    got = P.predict(_case(name), only=("occupancy",))
    assert got["registers"] == 80 == BY_NAME[name]["registers"], got
    assert got["resident_blocks"] == 3 == BY_NAME[name]["resident_blocks"]
    name = "matmul/hopper_v10[bk=32]"
    got = P.predict(_case(name), only=("occupancy",))
    assert got["registers"] > 128 and BY_NAME[name]["registers"] > 128, got


def test_register_estimate_holds_the_next_fragments_where_no_block_is_lost():
    """matmul hopper v10 - v12 read their fragments (``aFrag[ei] = l_a[cur, q, ..]``)
    from shared memory in a completely unrolled loop ``q``: the compiler reads the next
    q's while the current ones feed the multiply-adds, holding a second set where
    that keeps the resident blocks (register_unrolling.prefetched(on_chip=True)): v10
    with bk = 32 takes 161 (estimated 144 without the second set), v12 213 (192), one
    block of 256 threads either way. With bk = 16, v10 needs 128, the most for 2
    blocks: the compiler keeps them (126) and so does the estimate."""
    for name, blocks in (("matmul/hopper_v10[bk=32]", 1), ("matmul/hopper_v12", 1),
                         ("matmul/hopper_v10", 2)):
        got = P.predict(_case(name), only=("occupancy",))
        vendor = BY_NAME[name]["registers"]
        assert abs(got["registers"] - vendor) <= 0.1 * vendor, (name, got, vendor)
        assert got["resident_blocks"] == blocks == BY_NAME[name]["resident_blocks"], name


def test_register_estimate_counts_a_loop_the_compiler_unrolls_four_times():
    """matmul nvidia's ``for (k = 0; k < p; k++)`` (p sizes the shared array: built
    in, 2048 iterations) is unrolled four times by NVIDIA's OpenCL driver: four loads
    of b in flight, each with its address, and the reads of l_a merged into 128-bit
    loads: about 41 registers where the compiler takes 42 (without them the estimate
    grew to 32). In nvidia v1 (256 threads) the same loop reaches 43, and the compiler
    gives up part of its unrolling to keep 6 blocks (3/4 of the SM's threads): 40, as
    recorded, for x = 4 as for x = 16."""
    for name, want in (("matmul/nvidia", range(38, 47)), ("matmul/nvidia_v1", (40,)),
                       ("matmul/nvidia_v1[x=16]", (40,))):
        got = P.predict(_case(name), only=("occupancy",))
        vendor = BY_NAME[name]["registers"]
        assert got["registers"] in want, (name, got)
        assert abs(got["registers"] - vendor) <= 0.1 * vendor, (name, got, vendor)


def _measured_dram(rec: dict) -> float:
    return rec["ncu"]["dram_read"] + rec["ncu"]["dram_write"]


def test_dram_traffic_within_20_percent():
    """ncu's DRAM bytes against the predicted traffic (compulsory, less the written
    lines the L2 holds at kernel end): within 20% for 48 of 49 examples (all but the
    perfect reduction at n = 2^16, whose atomics ncu counts as 7 MB of writes), and
    for every version of vector_add, gesummv, histogram, convolution, black_scholes
    and matmul (matmul hopper_v10 writes c through a view, c3: the lines written are
    c's, and the L2 holds them at the end of its one wave, as for hopper_v7)."""
    within = 0
    for name in EXAMPLES:
        rec = BY_NAME[name]
        if "ncu" not in rec:
            continue
        measured = _measured_dram(rec)
        predicted = P.memory_figures(_case(name), rec["registers"])["dram_bytes"]
        ok = abs(predicted - measured) <= 0.2 * measured
        within += ok
        if CASES[name].kernel in ("vector_add", "gesummv", "histogram", "convolution",
                                  "black_scholes", "matmul"):
            assert ok, (name, predicted, measured)
    assert within >= 48, within


def test_sectors_per_request_of_coalesced_and_strided_loads():
    """Global loads in 32 B sectors per warp request as ncu counts them
    (mcl.analyses.sectors): 4 for a warp reading 128 adjacent bytes, 16 for 128-bit
    runs (black_scholes hopper_v2), 21.7 for the perfect gesummv's rows (its two
    reads of x[j] are one load), about 1 where a warp-uniform filter element in
    constant memory dominates (convolution nvidia_v1), 2.9 for a window that slides
    across sectors (convolution perfect), 2 for warps of which an if leaves 16 lanes
    (convolution gpu_v1 at hopper), 1.37 where 81 filter elements are loaded once per
    work-item in unrolled loops (convolution hopper_v1), 2.5 where a float
    atomicAdd's compare-and-swap reads its element (reduction perfect), 9.5 to 27
    where a data-bound loop runs as long as a warp's slowest lane (spmv_csr: 12.1 to
    32 with the average trip count). Within 20% for every example ncu measured (53;
    49 before the slowest lane)."""
    within = 0
    for name in EXAMPLES:
        rec = BY_NAME[name]
        if "ncu" not in rec or not rec["ncu"].get("ld_requests"):
            continue
        measured = rec["ncu"]["ld_sectors"] / rec["ncu"]["ld_requests"]
        predicted = P.memory_figures(_case(name)).get("sectors_per_request")
        within += predicted is not None and abs(predicted - measured) <= 0.2 * measured
        if name in ("vector_add/perfect", "black_scholes/hopper_v2", "matmul/hopper_v6",
                    "gesummv/perfect", "convolution/nvidia_v1", "matmul/hopper_v2",
                    "convolution/gpu_v1", "convolution/hopper_v1", "matmul/hopper_v1",
                    "reduction/perfect", "reduction/gpu_v1"):
            assert predicted == pytest.approx(measured, rel=0.02), name
        if name.startswith("spmv_csr/"):
            assert predicted == pytest.approx(measured, rel=0.15), name
    assert within >= 53, within


def test_warp_requests_equal_the_counted_ones():
    """The number of global load requests, not only their ratio: within 5% of ncu's
    for the coalesced and tiled versions of matmul, vector_add and gesummv."""
    for name in ("matmul/perfect", "matmul/gpu_v3", "matmul/hopper_v2", "matmul/hopper_v5",
                 "vector_add/gpu_v1", "gesummv/perfect", "gesummv/hopper_v2",
                 "convolution/perfect", "convolution/nvidia_v1", "convolution/hopper_v1",
                 "matmul/hopper_v1", "reduction/perfect", "reduction/gpu_v1"):
        rec = BY_NAME[name]
        got = P.memory_figures(_case(name))
        assert got["ld_requests"] == pytest.approx(rec["ncu"]["ld_requests"], rel=0.05), name


def _spearman(a: list[float], b: list[float]) -> float:
    sys.path.insert(0, str(ROOT / "benchmarks" / "fidelity"))
    from report import spearman
    return spearman(a, b)


@pytest.mark.parametrize("kernel,least", [("matmul", 0.93), ("convolution", 0.97),
                                          ("reduction", 0.97), ("histogram", 1.0),
                                          ("gesummv", 0.89), ("vector_add", 0.99),
                                          ("black_scholes", 0.59), ("spmv_csr", 0.99)])
def test_predicted_times_rank_the_versions_like_the_measured_ones(kernel, least):
    """Spearman of the feedback's predicted times against the H100's (recorded: the best of
    two runs of 10 cold launches, the L2 flushed clean before each, a write and a read
    of 256 MB, as ncu flushes it and the prediction models it) over a kernel's versions:
    matmul 0.94 over 19 versions (0.92 until the requests the L2 serves waited the
    latency of its link with the resident warps' loads in flight: gpu_v2, one block an
    SM, -21% -> -18%, gpu_v3 and nvidia -15% -> -8%; the global-load versions are bound
    by the L2's bandwidth, the tiled ones by the issue slots they share with their shared-memory
    wavefronts; hopper_v11 and v12 have 128 blocks at the record's sizes, which do
    their arithmetic on 128 of the 132 SMs: predicted level with v5 and v7, 11% below
    the measured 0.37 ms where they were 13% below and ahead of v5 and v7, measured
    8-9% slower; 0.95 before), convolution 0.98 over 8 (0.93 while the reads of its
    filter in __constant memory were counted as operands of the arithmetic: NVIDIA's
    OpenCL compiler reads them with global loads, nvidia_v1 predicted 363 us against 368
    measured, 201 before; hopper_v2's warps wait at the barrier after
    filling their shared tile, while hopper_v3, its input through the L1 cache, overlaps
    its loads with its arithmetic; hopper_v5, 8 x 4 outputs on 4 warps, is predicted 6%
    slower than hopper_v4 with the compiler's registers, its 7 blocks of 4 warps hiding
    less of the memory latency than v4's 6 of 8 (17% while the memory part summed the
    two times), and measured 3% faster), reduction 0.98 (0.95 while a float
    compare-and-swap update took one memory latency: perfect's 2^16 updates of every
    work-item at once, 364 ms, predicted 20 ms and faster than gpu_v1's; with the
    measured time per update with that many pending, benchmarks/opencl/cas_rate.py,
    367 ms and 118 ms against 133; gpu_v1..v3, measured within 0.01%, predicted
    level), histogram 1.0 (0.95 while gpu_v1 and nvidia_v1, measured 2% apart, were
    predicted level: memory bound, nvidia_v1's 2048 blocks of 128 merge twice the
    updates into hist that gpu_v1's 1024 do, and the part of them that follows the
    blocks' streams beyond the spread of their ends is now added, hopper.target's
    block_end_spread, benchmarks/opencl/block_end_probe.py; hopper_v1
    fastest, its per-warp bins contended least; hopper_v1's 4 loads a warp that fill
    its register array before their use are in flight together), spmv_csr 1.0 (0.8 while
    gpu_v1, nvidia_v1 and hopper_v1,
    measured within 2.8% of each other, were predicted within 1.3% and about half their times,
    hopper_v1 first where it is second: their gathers' sectors are now each a request of the L2,
    at the 158 G a second benchmarks/opencl/l2_request_probe.py measured, hopper.target's
    cache_request_rate; still 46% short, the gathers adding to the rest, which the model
    overlaps them with: benchmarks/opencl/gather_chain_probe.py), gesummv 0.9
    (1.0 until the loads
    of the loops the compiler unrolls by 4 were in flight together: gpu_v1, 3 loads an iteration in
    32 registers, 4 iterations, is now predicted 0.4% ahead of hopper_v2, measured 2.7%
    behind it; both within 4% of their measured times; the memory part adds
    the latency the resident warps cannot hide: fewer resident blocks, fewer loads in
    flight: nvidia_v1's 6 blocks against gpu_v1's 8; hopper_v2's loads fill a
    register array, all of them in flight at once: fastest) and vector_add 1.0
    (perfect's blocks of 1024 threads, 2 per SM, hold their slots until their last
    warp has its data: fewest warps in flight, slowest, then gpu_v1; hopper_v1's
    threads go round their grid-stride loop 15 or 16 times, the last round with half
    the warps, so its 1056 blocks are predicted 0.1% behind nvidia_v1's 1024, which go
    round 16 times each: measured 0.5%; the 4 copies of their unrolled loop, a short
    guarded body the compiler predicates, keep their 8 loads in flight together,
    hopper.target's predicated_body). Below 0.9: black_scholes 0.6 (gpu_v1, 4
    options a thread in blocks of 256, is measured 3% ahead of hopper_v1 and nvidia_v1,
    which are measured 0.2% apart; none of them keeps more than one option's loads in
    flight (their SASS: each option's loads after the previous option's stores); ncu
    measures gpu_v1's warps active 84% of the time, nvidia_v1's 81% and hopper_v1's
    70%, which the model does not predict: it has the three within 0.1% of each
    other, gpu_v1 last; benchmarks/opencl/sequence_probe.py measured the warps active
    falling with the options a work-item handles in sequence where the issue slots are
    busy, benchmarks/fidelity/CALIBRATION.md says why it is not built yet)."""
    pred, meas = [], []
    for name in EXAMPLES:
        if CASES[name].kernel != kernel or "time_s" not in BY_NAME[name]:
            continue
        rec = BY_NAME[name]
        pred.append(P.predicted_time(_case(name), rec["registers"])["seconds"])
        meas.append(rec["time_s"])
    assert _spearman(pred, meas) >= least - 1e-9, list(zip(pred, meas, strict=True))


def test_a_filter_in_constant_memory_is_read_by_global_loads():
    """convolution nvidia_v1 reads its 9 x 9 filter in __constant memory at the same
    element in every lane, in unrolled loops, for each of 4 outputs under an ``if`` of
    its own: NVIDIA's compiler issues 324 LDG.E.CONSTANT a thread (its SASS,
    benchmarks/results/fidelity/raw/h200_2026-11-30_constant_reads), the requests the
    sectors analysis counts, which the H100 measured (4.33e7). With them in its memory
    instructions the predicted time is within 5% of the measured 0.368 ms (0.201 while
    they were counted as operands of the arithmetic)."""
    name = "convolution/nvidia_v1"
    rec = BY_NAME[name]
    got = P.predicted_time(_case(name), rec["registers"])
    assert got["limiter"] == "memory instructions"
    assert got["seconds"] == pytest.approx(rec["time_s"], rel=0.05)


def test_uncoalesced_perfect_gesummv_is_predicted_slowest():
    """One thread per row of A: a warp's load touches 32 lines, on 4 of 132 SMs (4
    blocks): measured 4.5 ms against 0.05 ms for the other versions."""
    times = {v: P.predicted_time(_case(f"gesummv/{v}"),
                                 BY_NAME[f"gesummv/{v}"]["registers"])["seconds"]
             for v in ("perfect", "gpu_v1", "nvidia_v1", "hopper_v1")}
    assert times["perfect"] > 10 * max(t for v, t in times.items() if v != "perfect")


def test_a_block_of_more_warps_than_allowed_does_not_fit(tmp_path):
    """CUDA answers 0 blocks for 2048 threads per block; so does the feedback."""
    src = (ROOT / "examples" / "reduction" / "hopper_v3.mcpl").read_text()
    case = C.Case("r", "reduction", "hopper_v3", "hopper", "x",
                  C.with_consts(src, {"nrThreads": 2048}), {}, {"nrThreads": 2048}, True)
    got = P.predict(case, registers=32, only=("occupancy",))
    assert got["resident_blocks"] == 0 and "warps per block" in got["occupancy_limiting"]


def test_feedback_says_whose_register_count_it_prints():
    import mcl
    from mcl.analyses import Resources

    checked = mcl.check(str(ROOT / "examples" / "matmul" / "hopper_v5.mcpl"))
    vendor = [d for d in mcl.feedback(checked, only=["occupancy"],
                                      resources={"matmul": Resources(127, "NVIDIA compiler")})]
    assert any("127 registers per thread (NVIDIA compiler)" in d.message for d in vendor)
    estimated = mcl.feedback(checked, only=["occupancy"])
    assert any("(estimated)" in d.message for d in estimated)


def test_feedback_says_how_far_the_count_is_from_losing_a_block():
    """The occupancy message gives the most registers per thread with which as many
    blocks stay resident: how near the count, estimated or the compiler's, is to losing
    a block (convolution hopper_v5 built with its sizes as parameters: about 72
    estimated, its run-time loops grown to the step, 7 blocks up to 72, which is what
    the compiler takes; matmul hopper_v5: 127 of the 128 that keep 2 blocks)."""
    import mcl
    from mcl.analyses import Resources

    def occupancy(name, resources=None):
        checked = mcl.check(str(ROOT / "examples" / name))
        (d,) = [d for d in mcl.feedback(checked, only=["occupancy"], resources=resources)
                if d.code == "feedback-occupancy"]
        return d

    d = occupancy("convolution/hopper_v5.mcpl")
    assert "about 72 registers per thread (estimated)" in d.message, d.message
    assert d.message.endswith("; 7 blocks fit up to 72 registers per thread"), d.message
    assert d.data["registers_headroom"] == 72
    compiler = BY_NAME["convolution/hopper_v5"]["registers"]
    d = occupancy("convolution/hopper_v5.mcpl",
                  {"convolution": Resources(compiler, "NVIDIA compiler")})
    assert compiler == 72 and d.data["resident"] == 7
    assert d.message.endswith("; 7 blocks fit up to 72 registers per thread"), d.message
    d = occupancy("matmul/hopper_v5.mcpl", {"matmul": Resources(127, "NVIDIA compiler")})
    assert d.message.endswith("; 2 blocks fit up to 128 registers per thread"), d.message
    d = occupancy("vector_add/hopper_v1.mcpl", {"vector_add": Resources(32, "NVIDIA compiler")})
    assert d.message.endswith("; 8 blocks fit up to 32 registers per thread"), d.message


def test_without_an_nvidia_device_the_cli_falls_back_to_the_estimate():
    from mcl.opencl.vendor import nvidia_device, resources_of
    if nvidia_device() is not None:
        pytest.skip("an NVIDIA device is present")
    path = str(ROOT / "examples" / "matmul" / "hopper_v5.mcpl")
    assert resources_of(path) == {}
    p = subprocess.run([sys.executable, "-m", "mcl.cli", "feedback", "--only", "occupancy",
                        path], capture_output=True, text=True, cwd=ROOT)
    assert "(estimated)" in p.stdout, p.stdout + p.stderr


def test_the_vendor_count_is_of_the_build_mcl_run_makes(monkeypatch):
    """matmul hopper_v10 is written for its sizes (reference.py: SPECIALIZE): mcl run
    builds it with n, m and p as compile-time constants (126 registers on the H100,
    141 without), so the feedback asks NVIDIA's compiler about that build; hopper_v7
    is built with run-time sizes."""
    import argparse
    import types

    from mcl.analyses.commands import _specialized, _vendor_resources
    from mcl.mcpl.resolve import check
    from mcl.opencl import vendor

    builds = []
    fake = types.SimpleNamespace(platform=types.SimpleNamespace(name="NVIDIA CUDA"))
    monkeypatch.setattr(vendor, "nvidia_device", lambda: fake)
    monkeypatch.setattr(vendor, "ptx_of", lambda dev, src, opts: builds.append(opts) or b"")
    monkeypatch.setattr(vendor, "_vendor_figures",
                        lambda ptx, kernel, maxrreg: vendor.Resources(126, vendor.SOURCE))
    for version, specialised in (("hopper_v10", True), ("hopper_v7", False)):
        builds.clear()
        path = str(ROOT / "examples" / "matmul" / f"{version}.mcpl")
        args = argparse.Namespace(registers="auto", specialize=False)
        assert _specialized(args, path) == specialised
        got = _vendor_resources(args, check(path), None, {}, _specialized(args, path))
        assert got["matmul"].registers == 126
        assert ("-DMCL_n=4096" in builds[0]) == specialised, builds


def test_the_harness_says_when_there_is_no_nvidia_device(tmp_path):
    from mcl.opencl.vendor import nvidia_device
    if nvidia_device() is not None:
        pytest.skip("an NVIDIA device is present")
    p = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "fidelity" / "measure.py"),
                        "resources", "--out", str(tmp_path), "--sweep", "0"],
                       capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 2 and "no NVIDIA OpenCL device" in p.stderr
    assert "Traceback" not in p.stderr


def _cli(*args: str) -> str:
    p = subprocess.run([sys.executable, "-m", "mcl.cli", "feedback", *args],
                       capture_output=True, text=True, cwd=ROOT)
    return p.stdout + p.stderr


def test_a_step_predicted_slower_is_flagged_by_the_feedback_of_the_new_version():
    """convolution gpu_v1 (a tile in local memory) measured 0.66 ms against perfect's
    0.49 ms on the H100: its feedback says it is predicted slower, and why."""
    out = _cli("--only", "time", "examples/convolution/gpu_v1.mcpl")
    assert "this version is predicted slower than perfect" in out
    assert "because its memory instructions time grows" in out
    assert "predicted slower" not in _cli("--only", "time", "--no-previous",
                                          "examples/convolution/gpu_v1.mcpl")
    # its successor is faster, measured and predicted
    assert "predicted slower" not in _cli("--only", "time",
                                          "examples/convolution/nvidia_v1.mcpl")


def test_bank_conflicts_the_feedback_counts_agree_with_ncu():
    """The extra wavefronts of the feedback's bank-conflict messages (mcl.analyses.banks)
    against ncu's bank conflicts: within 20% wherever the feedback reports a conflict
    (matmul hopper_v5..v12's transposed stores of a, 1.05e6-2.1e6; reduction gpu_v2's
    tree, 4.07e6 loads and 2.33e6 stores measured against 4.59e6 and 2.29e6; gesummv
    nvidia_v1's 7,294 loads against 6,144), and where it reports none for the reads,
    ncu counts fewer than 2% of the load wavefronts (matmul hopper_v1's merged
    fragment reads: 42,629 of 100.7 million). The writes of copies from global into
    shared memory are listed in REPORT.md: ncu counts extra store wavefronts there
    (up to 38% for matmul gpu_v1) where each lane writes its own bank."""
    flagged = 0
    for name in EXAMPLES:
        n = BY_NAME[name].get("ncu")
        if not n or "shared_ld_wavefronts" not in n:
            continue
        got = P.bank_figures(_case(name))
        if got is None:     # histograms: the bins are read from memory
            continue
        for kind in ("ld", "st"):
            measured = n[f"shared_{kind}_conflicts"]
            if not n[f"shared_{kind}_wavefronts"]:
                continue    # no shared memory
            if got[kind] > 0:
                flagged += 1
                assert got[kind] == pytest.approx(measured, rel=0.2), (name, kind)
            elif kind == "ld":
                assert measured < 0.02 * n["shared_ld_wavefronts"], (name, measured)
    assert flagged >= 8, flagged


L1_MISSES = json.loads((Path(__file__).parent / "fidelity" / "l1_misses.json").read_text())


def test_l2_read_bytes_of_the_time_model_against_the_l1_misses():
    """The bytes the global loads take from the L2, as the time model's `l2 bandwidth`
    part counts them (mcl.analyses.timing_counts.cache_bytes: the sectors a block's loads
    miss in its SM's L1, mcl.analyses.block_reuse), against the sectors ncu counts
    as missing in the L1 (global-load sectors less L1 hits; l1_misses.json, measured
    on the H200, whose SMs and L1 are the H100's: its global-load sectors equal the
    H100 record's for all 58 examples): within 20% for 57 of the 58. Off: gesummv
    perfect (-36%: one iteration's lines of A and B fill the L1, which the model
    keeps and the hardware partly fetches again; 217 MB on the H200 and 311 MB of L2
    reads on the H100, so the refetch varies from run to run). spmv_csr perfect +3%
    (-30% while its gather of x had the L1's room to itself: its 1024 lanes a block
    each keep the lines of their own rows of values and colIdx there, about 224 kB,
    mcl.analyses.block_reuse.gather_sectors). A floor, so that a change that moves the
    count away from the hardware fails."""
    within = 0
    for name, n in L1_MISSES["cases"].items():
        if name not in CASES or CASES[name].digest != n["digest"]:
            pytest.fail(f"{name} changed since its L1 misses were measured: run "
                        "benchmarks/runs/l1_fill_h200.sh and record_l1_misses.py")
        got = P.memory_figures(CASES[name]).get("l2_read_bytes")
        measured = n["l1_miss_sectors"] * 32
        within += got is not None and abs(got - measured) <= 0.2 * measured
        if CASES[name].kernel in ("vector_add", "black_scholes", "histogram"):
            assert got == pytest.approx(measured, rel=0.1), name
    assert len(L1_MISSES["cases"]) == 58
    assert within >= 57, within


def test_the_l2s_request_coalescer_explains_the_l2_reads_below_the_l1_misses():
    """The L2's own read lookups (ncu's `lts__t_sectors_srcunit_tex_op_read`, the H100
    record) are fewer than the L1s' misses where SMs near each other read the same
    sectors at the same time: the L2's request coalescer merges their requests
    (benchmarks/opencl/coalescer_probe.py: groups with neighbouring ids streaming
    the same data at the same time, up to about 4 to one; none where they read it
    at other times or are far apart). The model does not predict the merging, which
    depends on how closely the blocks keep pace: matmul's tiled versions, whose
    blocks read the same tiles in the same phase, see 52% (hopper_v11) to 96%
    (hopper_v1) of their misses at the L2. Here: the L2 never counts more than the
    misses in the same run (l1_misses.json; 2% for the reads the coalescer cannot
    merge), and the model's count is within 20% of the L2's own (the H100 record)
    for at least 47 of the 58 (the floor before)."""
    for name, n in L1_MISSES["cases"].items():
        assert n["l2_read_sectors"] <= 1.02 * n["l1_miss_sectors"], name
    within = 0
    for name in EXAMPLES:
        n = BY_NAME[name].get("ncu")
        if not n or not n.get("l2_read_sectors"):
            continue
        got = P.memory_figures(_case(name)).get("l2_read_bytes")
        measured = n["l2_read_sectors"] * 32
        within += got is not None and abs(got - measured) <= 0.2 * measured
    assert within >= 47, within


def test_predicted_times_of_the_reductions_within_20_percent():
    """The reductions' time is their float atomicAdds (compare-and-swap loops on the
    H100): predicted with the target's measured time per update for as many updates
    pending (mcl.analyses.atomics.queued_seconds), within 20% of the H100's times for
    all 9 versions (perfect +1%, gpu_v1..v3 -12%, gpu_v4 -10%, nvidia_v1, hopper_v1,
    hopper_v2 +5% to +6%, hopper_v3 +11%): the updates each block makes at its end
    follow the streams beyond the spread of the blocks' ends (hopper.target's
    block_end_spread; 8 within 20% while they overlapped the reads: hopper_v3 -27%,
    its 132 updates at one memory latency each). With one memory latency an update,
    perfect and gpu_v1..v4 were 6 to 18 times below."""
    within = 0
    for name in EXAMPLES:
        if CASES[name].kernel != "reduction":
            continue
        rec = BY_NAME[name]
        got = P.predicted_time(_case(name), rec["registers"])["seconds"]
        within += abs(got - rec["time_s"]) <= 0.2 * rec["time_s"]
    assert within >= 9, within


def test_predicted_times_of_spmv_csr_within_20_percent():
    """spmv_csr's gathers of x (a sector a lane, the L2's 158 G requests a second) follow
    the compulsory traffic rather than hiding under it (mcl.analyses.timing's ``gathers``
    part: the traffic at the sustained bandwidth, then the L2's requests; measured by
    benchmarks/opencl/gather_chain_probe.py on the H200): on the H100's record gpu_v1,
    nvidia_v1 and hopper_v1 -15%, -17% and -17% (-46..-47% while the requests
    overlapped it), perfect, bound by its load-store path, +10%; ranked as measured."""
    got, measured = {}, {}
    for name in EXAMPLES:
        if CASES[name].kernel != "spmv_csr":
            continue
        rec = BY_NAME[name]
        got[name] = P.predicted_time(_case(name), rec["registers"])["seconds"]
        measured[name] = rec["time_s"]
    assert len(got) == 4
    assert all(abs(got[n] / measured[n] - 1) <= 0.2 for n in got), got
    names = sorted(got)
    assert _spearman([got[n] for n in names], [measured[n] for n in names]) == pytest.approx(1)
