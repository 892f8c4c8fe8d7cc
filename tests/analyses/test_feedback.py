"""Feedback on the paper's matmul walk-through (Table II, section 5) and the
other examples: the same issues at the same places, numbers where the paper
gives them, a stated imprecision where a kernel cannot be understood."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import sympy

from mcl.analyses import feedback, operation_counts, roofline
from mcl.cli import main
from mcl.mcpl import check

ROOT = Path(__file__).resolve().parents[2]
MATMUL = ROOT / "examples" / "matmul"
GOLDEN = Path(__file__).with_name("golden")
VERSIONS = ["perfect", "accelerator", "gpu", "gpu_v1", "gpu_v2", "gpu_v3", "nvidia",
            "nvidia_v1", "fermi", "fermi_v1", "mic", "mic_v1", "mic_v2", "xeon_phi",
            "xeon_phi_v1", "xeon_phi_v2", "xeon_phi_v3"]

_cache: dict[str, list] = {}


def fb(version: str, **kw):
    key = version + repr(sorted(kw.items()))
    if key not in _cache:
        _cache[key] = feedback(check(MATMUL / f"{version}.mcpl"), **kw)
    return _cache[key]


def codes(diags, code):
    return [d for d in diags if d.code == code]


def source_text(version: str, d) -> str:
    line = (MATMUL / f"{version}.mcpl").read_text().splitlines()[d.span.line - 1]
    return line[d.span.column - 1:]


def render(diags) -> str:
    return "\n".join(f"{d.span.line}:{d.span.column} {d.code}: {d.message}" for d in diags) + "\n"


@pytest.mark.parametrize("version", VERSIONS)
def test_golden(version):
    """The whole feedback per version, pinned (refresh with MCL_REFRESH_GOLDEN=1)."""
    got = render(fb(version))
    path = GOLDEN / f"matmul_{version}.txt"
    if os.environ.get("MCL_REFRESH_GOLDEN") or not path.exists():
        path.write_text(got)
    assert got == path.read_text()


def test_perfect_operation_statistics():
    c = check(MATMUL / "perfect.mcpl")
    counts = operation_counts(c.module.functions[0], c)
    n, m, p = sympy.symbols("n m p", integer=True, positive=True)
    assert sympy.simplify(counts.flops - 2 * n * m * p) == 0
    assert sympy.simplify(counts.data_accesses - (2 * n * m * p + n * m)) == 0
    assert not counts.approximate
    assert not counts.transfers
    assert not codes(fb("perfect"), "feedback-faster-memory")
    assert not codes(fb("perfect"), "feedback-work-per-thread")


def test_accelerator_transfers():
    c = check(MATMUL / "accelerator.mcpl")
    counts = operation_counts(c.module.functions[0], c)
    n, m, p = sympy.symbols("n m p", integer=True, positive=True)
    assert sympy.simplify(counts.transfer_bytes - (4 * n * p + 4 * m * p + 4 * n * m)) == 0
    directions = {(t.param, t.direction) for t in counts.transfers}
    assert directions == {("a", "to device"), ("b", "to device"), ("c", "to host")}
    assert codes(fb("accelerator"), "feedback-transfer")


@pytest.mark.parametrize(("kernel", "version", "expected"), [
    # c written only through its view c3 (`c as float[n, nrBlocksM, bn] c3;`)
    ("matmul", "hopper_v12", {("a", "to device"), ("b", "to device"), ("c", "to host")}),
    # output through out4, and the filter in constant memory, which the host fills over
    # the link although the on-chip constant memory has no link of its own
    ("convolution", "hopper_v4", {("input", "to device"), ("filter", "to device"),
                                  ("output", "to host")})])
def test_transfers_follow_views_and_constant_memory(kernel, version, expected):
    c = check(ROOT / "examples" / kernel / f"{version}.mcpl")
    counts = operation_counts(c.module.functions[0], c)
    assert {(t.param, t.direction) for t in counts.transfers} == expected
    [d] = [d for d in feedback(c) if d.code == "feedback-transfer"]
    assert "back to the host" in d.message


def test_gpu_three_messages():
    diags = fb("gpu")
    faster = codes(diags, "feedback-faster-memory")
    assert len(faster) == 1
    assert faster[0].data["array"] == "a" and faster[0].data["loop"] == "tj"
    assert faster[0].data["space"] == "local"
    assert source_text("gpu", faster[0]).startswith("a[i, k]")
    reuse_b = [d for d in codes(diags, "feedback-reuse") if d.data["array"] == "b"]
    assert reuse_b and reuse_b[0].data["loops"] == ["bi"]
    assert codes(diags, "feedback-work-per-thread")
    # most specific first: the faster-memory proposal comes before the others
    assert diags[0].code == "feedback-faster-memory"


def test_gpu_v1_local_memory_message_gone_work_per_thread_stays():
    diags = fb("gpu_v1")
    assert not [d for d in codes(diags, "feedback-faster-memory") if d.data["loop"] == "tj"]
    assert codes(diags, "feedback-work-per-thread")


def test_gpu_v2_b_reused_over_blocks_and_loop():
    diags = fb("gpu_v2")
    assert not codes(diags, "feedback-work-per-thread")
    b = [d for d in codes(diags, "feedback-reuse") if d.data["array"] == "b"]
    assert b[0].data["loops"] == ["bi", "ei"]
    assert b[0].data["times_value"] == 2048          # n times


def test_gpu_v3_b_reused_over_blocks_only():
    b = [d for d in codes(fb("gpu_v3"), "feedback-reuse") if d.data["array"] == "b"]
    assert b[0].data["loops"] == ["bi"]
    assert b[0].data["times_value"] == 512           # n / x times


def test_nvidia_occupancy_one_of_eight_shared_memory_scarce():
    occ = codes(fb("nvidia"), "feedback-occupancy")
    assert len(occ) == 1
    assert (occ[0].data["resident"], occ[0].data["slots"]) == (1, 8)
    assert "1/8" in occ[0].message
    assert "shared memory" in occ[0].data["limiting"]
    assert "phases" in occ[0].hint
    assert source_text("nvidia", occ[0]).startswith("shared float[x][p] l_a")


def test_nvidia_v1_occupancy_four_of_eight():
    occ = codes(fb("nvidia_v1"), "feedback-occupancy")
    assert (occ[0].data["resident"], occ[0].data["slots"]) == (4, 8)
    assert "shared memory" not in occ[0].data["limiting"]


def test_one_block_of_every_thread_slot_with_barriers_stays_a_warning():
    # matmul nvidia: one block of 1024 threads fills the smp, and each of its barriers
    # idles it: the paper's step to several blocks (shared memory in phases)
    occ = codes(fb("nvidia"), "feedback-occupancy")[0]
    assert occ.severity.label == "warning" and "in use" not in occ.message


def test_several_blocks_of_every_thread_slot_are_information():
    # matmul nvidia_v1: 4 blocks of 256 threads fill the 1024 thread slots; while one
    # waits at a barrier the others run
    occ = codes(fb("nvidia_v1"), "feedback-occupancy")[0]
    assert occ.severity.label == "info" and occ.hint is None
    assert "all 1024 thread slots in use" in occ.message


def test_every_thread_slot_busy_is_information():
    # black_scholes hopper_v1: 8 blocks of 256 threads fill the 2048 thread slots of an
    # H100 SM: more blocks of fewer threads would run no more threads, so there is
    # nothing to advise
    root = Path(__file__).resolve().parents[2]
    diags = feedback(check(str(root / "examples/black_scholes/hopper_v1.mcpl")))
    occ = codes(diags, "feedback-occupancy")[0]
    assert occ.severity.label == "info" and occ.hint is None
    assert (occ.data["resident"], occ.data["slots"]) == (8, 32)
    assert "all 2048 thread slots in use" in occ.message


def test_fermi_optimal_access_no_bank_conflicts_b_256_fetches():
    diags = fb("fermi")
    co = codes(diags, "feedback-coalescing")
    assert len(co) == 1 and co[0].data["arrays"] == ["a2", "b", "c"]
    bank = codes(diags, "feedback-bank-conflicts")
    assert len(bank) == 1 and "no bank conflicts" in bank[0].message
    b = [d for d in codes(diags, "feedback-cache") if d.data.get("array") == "b"]
    assert b[0].data["best"] == 256 and b[0].data["best"] == b[0].data["worst"]
    assert "does not benefit" in b[0].message


def test_results_written_once_are_a_stream_not_a_cache_problem():
    """matmul hopper v1 writes each element of c once, a warp's lanes covering whole
    lines (``tj = tid % 16`` columns of 4): no cache could save any of it, so no
    'does not benefit from the cache' with advice to reuse c. Nor for a's tile loads:
    they are copies into the shared tile l_a (the reuse is already through it), and the
    loop they do not depend on is one over blocks, which no L1 is shared across (the
    reuse message says that a is loaded for each block bj)."""
    diags = feedback(check(str(MATMUL / "hopper_v1.mcpl")), only={"cache"})
    arrays = {d.data.get("array") for d in codes(diags, "feedback-cache")}
    assert "c" not in arrays and "a" not in arrays


def test_the_roofline_of_accesses_is_no_ceiling_where_caches_serve_them():
    """matmul hopper counts 69.9 GB of accesses to global, 1.97 operations per byte:
    6.59 TFLOP/s at the bandwidth, where the H100 runs it at 15.4 TFLOP/s because the
    L1 and L2 serve the repeated ones. Where the description has caches for the space,
    the help says the compulsory figure is the ceiling, not 'stop optimising' at the
    first; at the gpu level, which has none, it keeps that advice."""
    def roof(version):
        (d,) = codes(feedback(check(str(MATMUL / f"{version}.mcpl")), only={"roofline"}),
                     "feedback-roofline")
        return d
    assert "the second figure is the ceiling" in roof("hopper").hint
    assert roof("gpu").hint.startswith("stop optimising")


def test_a_halving_loop_of_constants_is_counted():
    """reduction hopper v2's tree ``for (int s = nrThreads / 2; s > 0; s >>= 1)`` runs
    8 times (nrThreads = 256): the counts follow the halving, so the formula keeps no
    symbol for it and the time counts the arithmetic and shared memory."""
    diags = feedback(check(str(ROOT / "examples" / "reduction" / "hopper_v2.mcpl")),
                     only={"ops", "time"})
    (ops,) = codes(diags, "feedback-ops")
    assert "iterations_s" not in ops.message
    assert "multiplies or divides its index" not in (ops.hint or "")
    (time,) = codes(diags, "feedback-time")
    assert "shared memory" in time.message and "not counted" in time.message
    assert "the arithmetic and issue are not counted" in time.message   # the while loop


def test_runs_a_lane_covers_side_by_side_get_advice_to_interleave():
    """convolution hopper v3's lanes each read and write 8 adjacent elements as two runs
    of 4: the last index already varies with the lane, so the help is to interleave the
    runs, and the store is said to write."""
    diags = feedback(check(str(ROOT / "examples" / "convolution" / "hopper_v3.mcpl")),
                     only={"coalescing"})
    out = [d for d in codes(diags, "feedback-coalescing") if d.data.get("array") == "output"]
    assert out and "(each writing a run of 4 adjacent elements)" in out[0].message
    assert "runs 32 runs apart (wx, wx + 32, ...)" in out[0].hint
    assert "should vary with" not in out[0].hint


def test_adjacent_lanes_that_cross_a_segment_are_not_told_to_vary_the_last_index():
    """convolution gpu_v1 translated to fermi: neighbouring ttj read neighbouring
    elements (4 B apart) and still touch 2 segments of 128 B: the help is about the
    segments' boundary, not the index order."""
    from mcl.analyses.level import feedback_at_level
    checked = check(str(ROOT / "examples" / "convolution" / "gpu_v1.mcpl"))
    diags = feedback_at_level(checked, "fermi", only={"coalescing"}).diagnostics
    inp = [d for d in codes(diags, "feedback-coalescing") if d.data.get("array") == "input"]
    assert inp and "(stride 4 B between neighbouring ttj)" in inp[0].message
    assert "already" in inp[0].hint and "should vary with" not in inp[0].hint


def test_a_time_without_the_figures_for_a_part_says_which():
    """mic's ring has no bandwidth and fermi's L2 link none: the predicted time leaves
    that traffic out and says so, and so does mic_v2's 'predicted slower' (the paper
    measured it 1.33 times faster than mic_v1, for traffic the model cannot count at
    that level); hopper's description has every figure."""
    def time(version):
        (d,) = codes(fb(version), "feedback-time")
        return d
    assert "'mic' gives no figure for the bandwidth of 'dev'" in time("mic_v2").message
    assert time("fermi").data["missing"] == ["the bandwidth of l2's link to the execution units"]
    from mcl.analyses.previous import against_previous
    (slower,) = against_previous(check(MATMUL / "mic_v2.mcpl"))
    assert "whose traffic the comparison leaves out" in slower.message
    assert not time("hopper_v1").data["missing"]


def test_mic_work_per_thread_then_gone():
    assert codes(fb("mic"), "feedback-work-per-thread")
    assert not codes(fb("mic"), "feedback-faster-memory")  # mic exposes no faster memory
    assert not codes(fb("mic_v1"), "feedback-work-per-thread")
    a = [d for d in codes(fb("mic_v1"), "feedback-reuse") if d.data["array"] == "a"]
    assert "ej" in a[0].data["loops"]


def test_xeon_phi_cache_oriented_and_b_p_fetches():
    diags = codes(fb("xeon_phi"), "feedback-cache")
    assert any("cache-oriented" in d.message for d in diags)
    b = [d for d in diags if d.data.get("array") == "b"]
    assert b[0].data["loop"] == "k" and b[0].data["best"] == 2048 and "p = 2048" in b[0].message


def test_xeon_phi_temporary_size_advice_until_v3():
    def temp(v):
        return [d for d in codes(fb(v), "feedback-cache") if "adjust the size" in d.message]
    assert temp("xeon_phi_v1") and temp("xeon_phi_v1")[0].data["array"] == "bTemp"
    assert not temp("xeon_phi_v3")


def test_convolution_reuse_ratio():
    c = check(ROOT / "examples" / "convolution" / "perfect.mcpl")
    diags = feedback(c, values={"h": 2048, "fh": 9}, only={"reuse"})
    ratio = [d for d in diags if d.data.get("array") == "input"][0]
    dim1 = ratio.data["per_dimension"][0]
    assert dim1["ratio"] == "fh*h/(fh + h)"
    assert round(dim1["value"], 2) == 8.96


def test_roofline_fermi():
    c = check(MATMUL / "fermi.mcpl")
    r = roofline(c.module.functions[0], c, None)
    assert r is not None and r.bound == "bandwidth" and r.best_bound == "compute"
    assert r.attainable <= r.peak_flops


def test_symbolic_without_values_needs_value(tmp_path):
    text = (MATMUL / "nvidia.mcpl").read_text().replace(
        "const int n = 2048, const int m = 2048, const int p = 2048",
        "const int n, const int m, const int p")
    f = tmp_path / "k.mcpl"
    f.write_text(text)
    diags = feedback(check(f))
    needs = {d.message.split("'")[1] for d in codes(diags, "feedback-needs-value")}
    assert "p" in needs
    assert not codes(diags, "feedback-occupancy")
    # and with values, the number comes back
    diags = feedback(check(f), values={"n": 2048, "m": 2048, "p": 2048})
    assert codes(diags, "feedback-occupancy")[0].data["resident"] == 1


@pytest.mark.parametrize("path", sorted((ROOT / "examples").glob("*/*.mcpl")),
                         ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_example_gets_feedback_without_crashing(path):
    diags = feedback(check(path))
    assert any(d.code == "feedback-ops" for d in diags)


def test_data_dependent_indices_are_stated(tmp_path):
    f = tmp_path / "gather.mcpl"
    f.write_text("module g;\nimport fermi;\n"
                 "fermi void g(const int n = 1024, global int[n] idx, global float[n] x, "
                 "global float[n] y) {\n"
                 "  foreach (int b in n / 32 blocks) { foreach (int w in 1 warps) {\n"
                 "    foreach (int t in 32 threads) {\n"
                 "      int i = b * 32 + t;\n      y[i] = x[idx[i]];\n"
                 "  } } }\n}\n")
    diags = feedback(check(f))
    assert any(d.code == "feedback-cache" and "'idx[i]' is read from memory" in d.message
               for d in diags)


def test_an_index_the_kernel_assigns_is_not_called_data(tmp_path):
    """A grid-stride index that a while loop steps (reduction hopper v2's ``i``) is
    beyond the cache analysis and the time model's count of sectors, but it is no data:
    the messages say what the index is not, and why, or that it may be a while loop's."""
    diags = feedback(check(str(ROOT / "examples" / "reduction" / "hopper_v2.mcpl")))
    cache = [d for d in codes(diags, "feedback-cache") if "'i' is assigned" in d.message]
    assert cache and not any("depends on data" in d.message for d in cache)
    time = codes(diags, "feedback-time")
    assert time and "input[i + u * nrThreads], whose addresses or trip counts depend on " \
        "data or on a while loop, are counted" in time[0].message


def test_cli(capsys):
    rc = main(["feedback", str(MATMUL / "nvidia_v1.mcpl"), "--only", "occupancy"])
    out = capsys.readouterr().out
    assert rc == 0 and "4/8" in out and "feedback-occupancy" in out
    rc = main(["feedback", str(MATMUL / "perfect.mcpl"), "--set", "n=1024", "--json",
               "--only", "ops"])
    out = capsys.readouterr().out
    assert rc == 0 and '"feedback-ops"' in out and "8589934592" in out   # 2 * 1024 * 2048^2
    assert main(["feedback", str(MATMUL / "perfect.mcpl"), "--only", "nonsense"]) == 2
    assert main(["feedback", str(MATMUL / "perfect.mcpl"), "--set", "n"]) == 2


def test_a_negative_size_is_an_error_at_its_parameter():
    from mcl.diagnostics import McplError
    with pytest.raises(McplError) as e:
        feedback(check(MATMUL / "gpu.mcpl"), values={"n": -5})
    d = e.value.diagnostics[0]
    assert "'n' sizes arrays of 'matmul': it cannot be negative, not -5" in d.message
    assert d.span is not None and d.span.file.endswith("gpu.mcpl") and d.span.line == 14


def test_cli_set_of_a_parameter_no_function_has_is_a_usage_error(run_cli):
    code, out, err = run_cli("feedback", MATMUL / "gpu.mcpl", "--set", "N=4096")
    assert code == 2 and out == ""
    assert "has a parameter 'N' (parameters: n, m, p)" in err
    code, _, err = run_cli("feedback", MATMUL / "gpu.mcpl", "--set", "n=-1")
    assert code == 1 and "it cannot be negative" in err


def _example_feedback(kernel: str, version: str) -> list:
    return feedback(check(ROOT / "examples" / kernel / f"{version}.mcpl"))


@pytest.mark.parametrize("version", ["gpu_v1", "nvidia_v1", "hopper_v1", "hopper_v3"])
def test_an_atomic_update_is_no_reuse_and_gets_no_read_only_memory(version):
    # reduction's atomicAdd(result[0], ...) behind tid == 0: the atomics analysis
    # counts its serialised updates; the element changes with each, so there is no
    # value to share, and a memory the kernel cannot write is no place for it
    diags = _example_feedback("reduction", version)
    assert codes(diags, "feedback-atomics")
    assert not [d for d in diags if d.code in ("feedback-reuse", "feedback-faster-memory")
                and d.data.get("array") == "result"]


def test_no_constant_memory_for_an_element_each_lane_of_a_warp_reads_apart(tmp_path):
    # gesummv hopper_v1: x[j] with j running along the 32 lanes of a warp; a constant
    # cache serves a warp one address at a time. The reuse stays, and shared memory
    # is still proposed
    diags = _example_feedback("gesummv", "hopper_v1")
    assert [d for d in codes(diags, "feedback-reuse") if d.data["array"] == "x"]
    x = [d for d in codes(diags, "feedback-faster-memory") if d.data["array"] == "x"]
    assert x and all("constant" not in d.data["faster"] for d in x)
    # a weight every lane of a warp reads at once still gets constant memory
    path = tmp_path / "weigh.mcpl"
    path.write_text("""module uniform;
import hopper;
hopper void weigh(const int n = 4096, global float[n] y, global float[16] w,
                  global float[n] x) {
  foreach (int b in n / 256 blocks) {
    foreach (int v in 8 warps) {
      foreach (int t in 32 threads) {
        int i = b * 256 + v * 32 + t;
        float s = 0.0;
        for (int k = 0; k < 16; k++) {
          s += w[k] * x[i];
        }
        y[i] = s;
      }
    }
  }
}
""")
    w = [d for d in codes(feedback(check(path)), "feedback-faster-memory")
         if d.data["array"] == "w"]
    # (not for t: a warp's lanes reading one element already make one request)
    assert {d.data["loop"] for d in w} == {"b", "v"}
    assert all(d.data["space"] == "constant" for d in w)


def test_a_loop_bound_dividing_by_an_outer_index_at_zero_is_not_known(tmp_path):
    # `kLen = min(kb, p / k0)` with k0 from 0: the loop k < k0 + kLen has no finite
    # trip count for the first k0; the feedback says so instead of failing
    source = (MATMUL / "cpu_v2.mcpl").read_text()
    assert "int kLen = min(kb, p - k0);" in source
    path = tmp_path / "cpu_v2.mcpl"
    path.write_text(source.replace("min(kb, p - k0)", "min(kb, p / k0)"))
    diags = feedback(check(path))
    assert any("the number of iterations of loop 'k' is not known statically" in
               (d.hint or "") for d in diags)


@pytest.mark.parametrize("kernel,version,arrays", [
    ("vector_add", "hopper_v1", {"a", "b", "c"}),
    ("gesummv", "hopper_v1", {"A", "B"}),
    # y[i] written by the first lane of each warp (``if (t < rows)``), once per element
    ("gesummv", "hopper_v2", {"y"}),
    ("black_scholes", "hopper_v1", {"stockPrice", "optionStrike", "optionYears"}),
    # one element for a warp's 32 lanes, which their warp reads in one request: the
    # 2048 lines of rowPtr are fetched once whatever the cache does
    ("spmv_csr", "hopper_v1", {"rowPtr"})])
def test_a_stream_is_not_told_it_misses_the_cache(kernel, version, arrays):
    # each element read (or written) once, a warp's lanes sharing the lines: no cache
    # could fetch fewer lines, whatever the loop around the access (an array read
    # again keeps the message: fermi's b, test_fermi_optimal_access_...)
    diags = _example_feedback(kernel, version)
    assert not arrays & {d.data["array"] for d in codes(diags, "feedback-cache")
                         if "array" in d.data}



def test_a_loop_started_from_data_depends_on_the_indices_it_names():
    # spmv_csr gpu_v1: for (k = rowPtr[r] + lane; k < rowPtr[r + 1]; k += lanes), r from
    # bi and rr: values[k] depends on all three; rowPtr[r] truly does not depend on lane
    diags = _example_feedback("spmv_csr", "gpu_v1")
    reuse = {d.data["array"]: d for d in codes(diags, "feedback-reuse")}
    assert "values" not in reuse and "colIdx" not in reuse
    assert reuse["rowPtr"].data["loops"] == ["lane"]
    assert not [d for d in codes(diags, "feedback-faster-memory")
                if d.data["array"] in ("values", "colIdx")]


def test_a_negative_block_count_gives_feedback_not_a_crash(tmp_path):
    # found by the property test: nrBlocks = (n - nrThreads - 1) / nrThreads at n = 1 is
    # negative, and the reuse ratio of l_data[tid + s] is no real number
    source = (ROOT / "examples" / "reduction" / "gpu_v1.mcpl").read_text()
    assert "(n + nrThreads - 1) / nrThreads" in source
    path = tmp_path / "gpu_v1.mcpl"
    path.write_text(source.replace("(n + nrThreads - 1) / nrThreads",
                                   "(n - nrThreads - 1) / nrThreads"))
    diags = feedback(check(path), values={"n": 1})
    assert codes(diags, "feedback-atomics")
    assert not codes(diags, "feedback-reuse")


def test_the_comparison_with_the_previous_version_reuses_the_time_computed():
    """`mcl feedback` passes the version's own feedback to the comparison with the
    version it refines: the predicted time in it is used, not computed again (a time
    ten times convolution nvidia_v1's makes it slower than gpu_v1; its own is not)."""
    from mcl.analyses.previous import against_previous
    from mcl.diagnostics import info
    root = Path(__file__).resolve().parents[2]
    checked = check(str(root / "examples/convolution/nvidia_v1.mcpl"))
    assert not against_previous(checked)
    own = [d for d in feedback(checked, only=["time"]) if d.code == "feedback-time"][0]
    slow = info("feedback-time", "predicted")
    slow.data.update(seconds=10 * own.data["seconds"],
                     parts={k: 10 * v for k, v in own.data["parts"].items()})
    flagged = against_previous(checked, computed=[slow])
    assert flagged and "predicted slower than gpu_v1" in flagged[0].message


def test_the_roofline_weighs_built_in_functions_at_the_targets_costs():
    # black_scholes: a log, exps, a sqrt and divisions an option, each one operation in
    # the counts but 7-26 multiply-adds with NVIDIA's precise math (hopper.target's
    # function_costs, measured), as the time feedback weighs them
    bs = ROOT / "examples" / "black_scholes"
    [d] = [d for d in feedback(check(bs / "hopper_v2.mcpl")) if d.code == "feedback-roofline"]
    assert "0.276 GFLOP" in d.message
    assert ("with the built-in functions at their cost with the target's compiler "
            "(divisions, exp, log, sqrt: hopper.target's function_costs), at most 1.03 GFLOP "
            "(12.9 operations per byte): bandwidth-bound") in d.message
    # a level without a target file counts one operation a call; convolution's one
    # division an output adds too little to say
    for path in (bs / "gpu_v1.mcpl", ROOT / "examples" / "convolution" / "hopper_v4.mcpl"):
        [d] = [d for d in feedback(check(path)) if d.code == "feedback-roofline"]
        assert "at their cost" not in d.message


def test_values_of_no_parameter_or_not_numbers_are_refused():
    """A mistyped size name would leave the feedback at the defaults without a word."""
    from mcl.diagnostics import McplError
    checked = check(str(ROOT / "examples" / "vector_add" / "perfect.mcpl"))
    with pytest.raises(McplError) as e:
        feedback(checked, values={"nn": 1024})
    assert e.value.diagnostics[0].code == "feedback-unknown-value"
    assert "its parameters: n" in e.value.diagnostics[0].hint
    with pytest.raises(McplError) as e:
        feedback(checked, values={"n": "1024"})
    assert e.value.diagnostics[0].code == "feedback-bad-value"
    assert feedback(checked, values={"n": 1024}, only=("time",)) is not None


def test_set_of_a_parameter_only_one_of_the_files_has(capsys):
    """`mcl feedback a.mcpl b.mcpl --set NAME=...` gives each file the values of its own
    parameters; a name no file has is a usage error."""
    files = [str(ROOT / "examples" / "vector_add" / "perfect.mcpl"),
             str(MATMUL / "perfect.mcpl")]
    assert main(["feedback", *files, "--set", "p=64", "--only", "time"]) == 0
    assert main(["feedback", *files, "--set", "q=64", "--only", "time"]) == 2
    assert "--set q: no function of" in capsys.readouterr().err
