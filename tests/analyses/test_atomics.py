"""The atomics analysis: updates per element of every atomic call (loops whose index
the element does not depend on, less those an enclosing ``if (tid == 0)`` fixes), a
lower bound on their serialised time, and whether that matters next to the kernel's
least time."""

import textwrap
from pathlib import Path

import pytest

import mcl
from mcl.hdl import load_hardware

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _atomics(path) -> list:
    return [d for d in mcl.feedback(mcl.check(path), only=["atomics"])
            if d.code == "feedback-atomics"]


def test_every_thread_updating_one_element():
    (d,) = _atomics(EXAMPLES / "reduction" / "perfect.mcpl")
    assert d.severity.name.lower() == "warning"
    assert "each of the n threads i: n (= 268435456) updates of one element" in d.message
    assert d.data["loops"] == ["i"]
    assert "tree in faster memory" in d.hint


@pytest.mark.parametrize("version, blocks, severity", [
    ("gpu_v1", 1048576, "warning"),     # 2^20 blocks: at least 419 ms against 7.16 ms
    ("hopper_v2", 1056, "warning"),     # at least 320 µs against a least time of 321 µs
    ("hopper_v3", 132, "info"),         # 40 µs: a small part of the least time
])
def test_one_update_per_block(version, blocks, severity):
    (d,) = _atomics(EXAMPLES / "reduction" / f"{version}.mcpl")
    assert f"each of the nrBlocks blocks bi: nrBlocks (= {blocks}) updates" in d.message
    assert d.severity.name.lower() == severity
    hw = load_hardware(version.split("_")[0])
    space = "global" if version.startswith("hopper") else "dev"
    assert d.data["seconds"] == pytest.approx(
        blocks * hw.memory_latency(space) / hw.clock_frequency())
    assert d.data["least_seconds"] > 0
    if severity == "warning":
        assert "use fewer blocks" in d.hint


def test_elements_chosen_by_data():
    (d,) = _atomics(EXAMPLES / "histogram" / "perfect.mcpl")
    assert d.severity.name.lower() == "info" and "chosen by the data" in d.message


def _kernel(tmp_path, guard: str) -> Path:
    body = "atomicAdd(result[0], l[t]);" if not guard else \
        f"if ({guard}) {{ atomicAdd(result[0], l[t]); }}"
    path = tmp_path / "k.mcpl"
    path.write_text(textwrap.dedent(f"""\
        module k;

        import hopper;

        hopper void k(const int n = 1048576, global float[n] input, global float[1] result) {{
          foreach (int bi in n / 256 blocks) {{
            shared float[256] l;
            foreach (int w in 8 warps) {{
              foreach (int t in 32 threads) {{
                int tid = w * 32 + t;
                l[tid] = input[bi * 256 + tid];
                {body}
              }}
            }}
          }}
        }}
        """))
    return path


@pytest.mark.parametrize("guard, updates", [
    ("", 1048576),               # every thread: blocks * warps * threads
    ("tid == 0", 4096),          # tid = w * 32 + t == 0 fixes w and t
    ("t == 0", 32768),           # one lane per warp
    ("t == 0 && w == 0", 4096),
    ("t < 1", 1048576),          # not recognised: counted as every thread (a bound)
])
def test_conditions_that_fix_the_updating_unit(tmp_path, guard, updates):
    (d,) = _atomics(_kernel(tmp_path, guard))
    assert f"(= {updates}) updates of one element" in d.message or \
        f": {updates} updates of one element" in d.message


def test_integer_updates_run_in_the_l2_and_data_chosen_ones_take_their_share():
    """histogram hopper_v1: the final integer atomicAdd into hist: the L2 performs the
    updates of one element 0.74 ns apart (hopper.target's atomic_update_interval,
    measured by benchmarks/opencl/atomic_rate.py), not one L2 latency (200 cycles) each,
    which would make its 1056 updates of each bin take 107 µs where the H100 measured
    0.092-0.098 ms for the whole kernel; all 1056 x 256 updates queue in the 2 units of
    the L2's atomics that the 1 kB of hist falls in (atomic_unit_bytes), a warp's request
    of 32 neighbouring ints 4 operations (one per sector): 12.5 µs. The updates of l_hist
    chosen by the data are at least n over all elements of every block's copy for the
    most updated one (a shared array: not the L2's units)."""
    found = _atomics(EXAMPLES / "histogram" / "hopper_v1.mcpl")
    final = next(d for d in found if "hist[k]" in d.message)
    assert "at least 0.781 µs (0.74 ns apart: the l2 performs integer updates of one " \
        "element back to back)" in final.message, final.message
    assert "in the 2 units of its atomics that the array's 1 kB falls in, about 4 " \
        "operations a warp request" in final.message, final.message
    assert final.data["seconds"] == pytest.approx(1056 * 8 * 4 * 0.74e-9 / 2)
    chosen = next(d for d in found if "chosen by the data" in d.message)
    assert "the most updated element takes at least its share" in chosen.message


@pytest.mark.parametrize("elements, operations", [
    (256, 22.27),      # histogram perfect's buckets: atomic_spread_probe.py measured 22.27
    (1, 32.0),         # every lane the same word: each in turn
    (1 << 24, 32.0),   # a large array: every lane a sector of its own
])
def test_operations_of_a_warp_request_where_the_data_choose_the_elements(elements, operations):
    """An operation per sector a warp's request updates, the most lanes on one of its
    words: with 32 lanes drawn at random over 256 ints, 22.3 on average."""
    from mcl.analyses.atomics import chosen_operations

    assert chosen_operations(elements, 8, 32) == pytest.approx(operations, rel=0.01)


def test_data_chosen_updates_queue_in_the_units_their_array_falls_in():
    """histogram perfect at the H200's size (2^26 values into 256 ints): 22.3 operations
    a warp request in the 2 units of 1 kB, 0.74 ns each: 17.3 ms (the H200 measured
    21.4 ms on reference.py's data, 17.3 on values drawn at random; the most updated
    element's share alone 0.19 ms)."""
    from mcl.analyses.atomics import chosen_operations

    got = _time(EXAMPLES / "histogram" / "perfect.mcpl", {"n": 1 << 26})
    assert got["limiter"] == "atomics"
    want = (1 << 26) / 32 * chosen_operations(256, 8, 32) * 0.74e-9 / 2
    assert got["parts"]["atomics"] == pytest.approx(want, rel=1e-6)
    from mcl.analyses.level import feedback_at_level
    (d,) = [d for d in feedback_at_level(mcl.check(EXAMPLES / "histogram" / "perfect.mcpl"),
                                         "hopper", only=("atomics",)).diagnostics
            if d.code == "feedback-atomics"]
    assert "the l2 performs them in the 2 units of its atomics that the array's 1 kB " \
        "falls in, about 22.3 operations a warp request" in d.message, d.message


def test_without_a_measured_interval_an_update_takes_the_caches_latency():
    """A description whose target file measures no interval (fermi): an integer update
    of global memory takes the latency of the L2's link; a float one (a compare-and-swap
    loop) the memory's latency, on hopper too."""
    from types import SimpleNamespace

    from mcl.analyses.atomics import update_latency, update_seconds

    def target(typ):
        return SimpleNamespace(space="global", symbol=SimpleNamespace(
            type=SimpleNamespace(name=typ)))

    fermi = load_hardware("fermi")
    seconds, how = update_seconds(fermi, target("int"))
    assert seconds == pytest.approx(update_latency(fermi, target("int"))
                                    / fermi.clock_frequency())
    assert "cycles each" in how
    hopper = load_hardware("hopper")
    seconds, how = update_seconds(hopper, target("float"))
    assert seconds == pytest.approx(hopper.memory_latency("global") / hopper.clock_frequency())
    assert how.startswith("one global memory latency of")


def _time(path, values: dict) -> dict:
    """The time pass's figures of ``path`` translated to hopper."""
    from mcl.analyses.level import feedback_at_level

    found = feedback_at_level(mcl.check(path), "hopper", values=values, only=("time",))
    (d,) = [d for d in found.diagnostics if d.code == "feedback-time"]
    return d.data


@pytest.mark.parametrize("version, n, pending, updates", [
    # every work-item of 2^16 updates at once: 64 blocks of 1024, all resident
    ("perfect", 1 << 16, 1 << 16, 1 << 16),
    # every work-item of 2^10 blocks of 1024 behind 2 x 132 resident ones (the case
    # study's 39.7 s, examples/reduction/NOTES.md)
    ("perfect", 1 << 20, 270336, 1 << 20),
    # one work-item a block, 2^16 blocks of 256 behind 8 x 132 resident ones
    ("gpu_v1", 1 << 24, 1056, 1 << 16),
    # the same at 2^28: 2^20 updates (the case study's 2,210 ms, examples/reduction/NOTES.md)
    ("gpu_v1", 1 << 28, 1056, 1 << 20),
    # one a block, 1024 blocks, all resident: they start together
    ("nvidia_v1", 1 << 24, 1024, 1024),
])
def test_compare_and_swap_updates_take_the_measured_time_with_that_many_pending(
        version, n, pending, updates):
    """A float atomicAdd that hopper's code makes a compare-and-swap loop retries while
    other updates come in between, so one takes longer the more are pending: the time
    model takes hopper.target's measured times per update (benchmarks/opencl/
    cas_rate.py), for updates that start together (``cas_update_seconds`` with that
    many pending), and for those that blocks replacing each other queue
    (``cas_stream_seconds`` with the resident blocks' pending). The H100 measured
    reduction perfect at n = 2^16 in 364 ms, gpu_v1 at 2^24 in 133 ms and nvidia_v1 in
    0.354 ms (tests/analyses/fidelity/vendor.json); one memory latency per update, the
    bound the atomics message states, is 20 ms for the first two."""
    from mcl.analyses.atomics import _interpolated
    from mcl.analyses.target_settings import device_settings

    hw = load_hardware("hopper")
    table = device_settings(hw)
    floor = hw.memory_latency("global") / hw.clock_frequency()
    first = min(updates, pending)
    want = first * max(floor, _interpolated(table["cas_update_seconds"], first))
    if updates > pending:
        want += (updates - pending) * _interpolated(table["cas_stream_seconds"], pending)
    got = _time(EXAMPLES / "reduction" / f"{version}.mcpl", {"n": n})
    assert got["limiter"] == "atomics"
    assert got["parts"]["atomics"] == pytest.approx(want)
    measured = {("perfect", 1 << 16): 0.364, ("perfect", 1 << 20): 39.7,
                ("gpu_v1", 1 << 24): 0.133,
                ("gpu_v1", 1 << 28): 2.21, ("nvidia_v1", 1 << 24): 0.354e-3}[version, n]
    assert got["parts"]["atomics"] == pytest.approx(measured, rel=0.2)


def test_measured_tables_interpolate_on_logarithmic_axes():
    from mcl.analyses.atomics import _interpolated

    table = {"1024": 1.0, "4096": 4.0}
    assert _interpolated(table, 2048) == pytest.approx(2.0)
    assert _interpolated(table, 8192) == pytest.approx(8.0)       # the last line beyond
    assert _interpolated(table, 512) == pytest.approx(0.5)        # fewer, proportionally
    assert _interpolated({"264": 3.0}, 1000) == pytest.approx(3.0)


def test_without_measured_tables_the_time_model_keeps_the_latency_bound(monkeypatch):
    """A target file that measured no compare-and-swap times (fermi's): one memory
    latency per update, the bound the atomics message states."""
    from mcl.analyses import atomics

    monkeypatch.setattr(atomics, "device_settings", lambda hw: {"float_atomic_add": "cas"})
    got = _time(EXAMPLES / "reduction" / "gpu_v1.mcpl", {"n": 1 << 24})
    hw = load_hardware("hopper")
    assert got["parts"]["atomics"] == pytest.approx(
        (1 << 16) * hw.memory_latency("global") / hw.clock_frequency())


def test_the_measured_queue_is_for_device_memory_not_shared_memory(tmp_path):
    """A float atomicAdd on shared memory (each block its own element) keeps one
    memory latency per update: the measured compare-and-swap times are of an element
    of device memory, which every SM's updates reach through the L2."""
    path = tmp_path / "k.mcpl"
    path.write_text(textwrap.dedent("""\
        module k;

        import hopper;

        hopper void k(const int n = 1048576, global float[n] input, global float[n] out) {
          foreach (int bi in n / 256 blocks) {
            shared float[1] s;
            foreach (int w in 8 warps) {
              foreach (int t in 32 threads) {
                int tid = w * 32 + t;
                atomicAdd(s[0], input[bi * 256 + tid]);
                barrier(shared);
                out[bi * 256 + tid] = s[0];
              }
            }
          }
        }
        """))
    from mcl.analyses import atomics

    checked = mcl.check(path)
    assert not checked.errors, [e.message for e in checked.errors]
    seen = []
    real = atomics.cas_seconds

    def spy(finding, view, occ):
        seen.append(real(finding, view, occ))
        return seen[-1]

    import unittest.mock
    with unittest.mock.patch.object(atomics, "cas_seconds", spy):
        found = [d for d in mcl.feedback(checked, only=["time"]) if d.code == "feedback-time"]
    assert found and seen == [None]
