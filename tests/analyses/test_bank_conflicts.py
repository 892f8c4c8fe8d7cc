"""The bank-conflict analysis and its remedy: the padding it proposes is checked
against the banks (the fewest extra elements per row that leave one word per bank,
and whether one that keeps rows a multiple of 4 elements, as 128-bit accesses need,
exists), not a rule of thumb; the degree at the iterations of the loops around an
access (mcl.analyses.banks) and the extra wavefronts it costs, against ncu."""

import textwrap
from pathlib import Path

import pytest

import mcl
from mcl.analyses import feedback
from mcl.analyses.bank_data import uniform_passes
from mcl.mcpl import check, parse, print_module
from mcl.translate import translate

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _conflicts(path) -> list:
    return [d for d in mcl.feedback(mcl.check(path), only=["bank-conflicts"])
            if d.code == "feedback-bank-conflicts"]


def _kernel(tmp_path, row: int, store: str, rows: int = 8) -> Path:
    # a 2 x 8 x row tile filled as matmul fills a's transposed k-tile: lane t writes
    # row t / 2 of the tile at k = 4 (t % 2) + u
    path = tmp_path / "k.mcpl"
    path.write_text(textwrap.dedent(f"""\
        module k;

        import hopper;

        hopper void k(const int n = 4096, global float[n, 8] a, global float[n] out) {{
          foreach (int bi in n / 64 blocks) {{
            shared float[2, {rows}, {row}] l;
            foreach (int w in 4 warps) {{
              foreach (int t in 32 threads) {{
                int tid = w * 32 + t;
                for (int u = 0; u < 4; u++) {{
                  {store}
                }}
                out[bi * 64 + tid / 2] = l[0, 0, tid / 2];
              }}
            }}
          }}
        }}
        """))
    return path


def test_padding_that_spares_the_conflict_keeps_rows_aligned(tmp_path):
    # rows of 128: k and k + 4 are 512 words apart, one bank: 2-way. 132: 528, 16 banks
    # apart: the lanes' 32 words fall into 32 banks
    k = _kernel(tmp_path, 128, "l[0, 4 * (tid % 2) + u, tid / 2] = a[bi * 64 + tid / 2, "
                               "4 * (tid % 2) + u];")
    (d,) = _conflicts(k)
    assert "2-way bank conflict" in d.message
    assert d.data["row"] == 128 and d.data["padding"] == 4 and d.data["aligned_padding"] == 4
    assert "pad the rows of l by 4 elements (128 -> 132)" in d.hint
    k = _kernel(tmp_path, 132, "l[0, 4 * (tid % 2) + u, tid / 2] = a[bi * 64 + tid / 2, "
                               "4 * (tid % 2) + u];")
    (d,) = _conflicts(k)
    assert "no bank conflicts" in d.message


def test_a_column_of_a_tile_has_no_aligned_padding(tmp_path):
    # lane t writes row t of a column, 32-bit words: rows of 32 put every lane into one
    # bank; one more element per row spreads them over the 32 banks, but a row of a
    # multiple of 4 elements leaves at least 4 lanes a bank
    k = _kernel(tmp_path, 32, "l[1, tid % 32, 0] = 1.0;", rows=32)
    (d,) = [d for d in _conflicts(k) if "l[1, tid % 32, 0]" in d.message]
    assert "32-way" in d.message
    assert d.data["padding"] == 1 and d.data["aligned_padding"] is None
    assert "padding the rows of l by 1 elements (32 -> 33) removes it, but no padding " \
           "that keeps a row a multiple of 4 elements" in d.hint


@pytest.mark.parametrize("line", [74, 118])
def test_matmul_hopper_v10_padding_cannot_help(line):
    # v10 pads a's transposed tile by 4 and its stores still conflict 2-way: lanes k = 0
    # and k = 8 are 8 rows of 132 (1056 words, one bank) apart; only a row of 2 mod 4
    # elements separates them, which breaks the 128-bit reads of the rows
    ds = [d for d in _conflicts(EXAMPLES / "matmul" / "hopper_v10.mcpl")
          if d.span.line == line]
    (d,) = ds
    assert "2-way" in d.message
    assert (d.data["row"], d.data["padding"], d.data["aligned_padding"]) == (132, 2, None)
    assert "change which index varies with t" in d.hint


def test_runs_of_four_down_a_column(tmp_path):
    # the same column written as runs of 4 (128-bit stores, served 8 lanes at a time):
    # 8-way; rows of 36 put the 8 lanes' runs into 32 different banks
    k = _kernel(tmp_path, 32, "l[1, tid % 32, u] = 1.0;", rows=32)
    (d,) = [d for d in _conflicts(k) if "l[1, tid % 32, u]" in d.message]
    assert "8-way" in d.message
    assert (d.data["padding"], d.data["aligned_padding"]) == (4, 4)


def test_only_the_lanes_an_if_lets_run_conflict():
    # gesummv nvidia_v1 at hopper: y[i] = ... l_tmp[tid, 0] inside if (tid < rows), rows
    # = 4: four lanes read four words of one bank (4-way, not 32-way); hopper_v2 reads
    # l_tmp[w, t, 0] inside if (t < rows) with rows = 1: one lane, no conflict
    from mcl.analyses.level import feedback_at_level
    found = feedback_at_level(mcl.check(EXAMPLES / "gesummv" / "nvidia_v1.mcpl"), "hopper",
                              only=["bank-conflicts"]).diagnostics
    degrees = {d.data["array"]: d.data["degree"] for d in found
               if d.code == "feedback-bank-conflicts" and "degree" in d.data}
    assert degrees == {"l_tmp": 4, "l_y": 4}
    assert all("the 4 of a warp's 32 threads" in d.message for d in found if "degree" in d.data)
    assert not [d for d in _conflicts(EXAMPLES / "gesummv" / "hopper_v2.mcpl")
                if "degree" in d.data]


def _bank_messages(kernel: str, version: str, level: str | None = None) -> list:
    path = EXAMPLES / kernel / f"{version}.mcpl"
    checked = check(path)
    if level is not None:
        checked = check(parse(print_module(translate(checked.module, to=level)),
                              f"{path}@{level}"))
    return [d for d in feedback(checked, only={"functions"})
            if d.code == "feedback-bank-conflicts"]


def test_a_reduction_tree_conflicts_more_as_its_stride_doubles():
    """reduction gpu_v2 (``l_data[2 * s * tid]``, s = 1, 2, 4, ...): 2-way at s = 1,
    then 4-way and 8-way, fewer as the if lets fewer lanes run; the message said
    2-way, the first iteration's. ncu at n = 2^26: 4.07e6 extra load wavefronts and
    2.33e6 store ones (tests/analyses/test_fidelity.py checks the counts)."""
    msgs = {d.data["array"] + str(d.span.column): d
            for d in _bank_messages("reduction", "gpu_v2", "hopper")}
    assert msgs, "no bank-conflict warning"
    for d in msgs.values():
        assert "1- to 8-way bank conflicts, depending on loop s" in d.message, d.message
        assert d.data["degree"] == 8 and d.data["mildest"] == 1
        assert d.data["extra_wavefronts"] > 0 and "extra wavefronts in all" in d.message
        # a one-dimensional array has no rows to pad: gpu_v3's sequential addressing
        assert d.hint.startswith("make neighbouring ttid access neighbouring words of "
                                 "l_data"), d.hint


def test_reads_the_compiler_merges_into_128_bit_ones_are_judged_as_such():
    """matmul hopper_v1's fragment ``aFrag[ei] = l_a[ti * tm + ei, q]`` in the unrolled q
    loop: 32-bit reads two rows apart would conflict 2-way, but the compiler reads 4
    values of q at once, and half a warp's lanes read one run: ncu counts 42,629 load
    conflicts in 100.7 million wavefronts. The feedback used to warn of a 2-way
    conflict."""
    [d] = _bank_messages("matmul", "hopper_v1")
    assert d.message.startswith("no bank conflicts in the accesses to"), d.message
    assert "l_a[ti * tm + ei, q]" in d.data["accesses"]


def test_a_transposed_store_conflicts_at_every_phase():
    """matmul hopper_v10's store of a's transposed tile: 2-way in every k-phase (ncu:
    2,097,152 extra store wavefronts at 2048^3, 2,113,536 predicted)."""
    warned = [d for d in _bank_messages("matmul", "hopper_v10") if d.data["degree"] == 2]
    assert {d.data["array"] for d in warned} == {"l_a"}
    assert all(d.data["mildest"] == 2 for d in warned)


def test_the_values_a_doubling_or_halving_loop_takes():
    from mcl.analyses.banks import loop_values
    from mcl.analyses.functions import KernelView
    from mcl.analyses.kernel import parameter_values
    from mcl.analyses.kernel_build import build_kernel
    path = EXAMPLES / "reduction" / "gpu_v2.mcpl"
    checked = check(path)
    f = checked.module.functions[-1]
    hw = checked.hardware_of(f)
    num = build_kernel(f, checked, parameter_values(f, {}), hw)
    view = KernelView(num, num, hw)
    [s] = [lp for lp in num.loops if lp.var == "s"]
    assert loop_values(view, s) == [1, 2, 4, 8, 16, 32, 64, 128]
    path = EXAMPLES / "reduction" / "hopper_v2.mcpl"      # s = nrThreads / 2; s > 0; s >>= 1
    checked = check(path)
    f = checked.module.functions[-1]
    hw = checked.hardware_of(f)
    num = build_kernel(f, checked, parameter_values(f, {}), hw)
    [s] = [lp for lp in num.loops if lp.var == "s"]
    assert loop_values(KernelView(num, num, hw), s) == [128, 64, 32, 16, 8, 4, 2, 1]


_HIST = """\
    module h;

    import hopper;
    import lib.atomics;

    hopper void h(const int n = 1048576, global byte[n] data, global int[256] bins) {
      foreach (int b in n / 256 blocks) {
        shared int[256] lhist;
        foreach (int w in 8 warps) {
          foreach (int t in 32 threads) {
            int tid = w * 32 + t;
            lhist[tid] = 0;
            barrier(shared);
            INDEX
            barrier(shared);
            atomicAdd(bins[tid], lhist[tid]);
          }
        }
      }
    }
    """


def _hist(tmp_path, index: str) -> list:
    path = tmp_path / "h.mcpl"
    path.write_text(textwrap.dedent(_HIST).replace("INDEX", index))
    return mcl.feedback(mcl.check(path), only=["bank-conflicts", "time", "atomics"])


def test_words_the_data_choose_are_said_to_conflict_as_the_data_fall(tmp_path):
    # a shared histogram: the bank of lhist[data[i]] is the data's
    ds = _hist(tmp_path, "atomicAdd(lhist[data[b * 256 + tid]], 1);")
    (chosen,) = [d for d in ds if d.code == "feedback-bank-conflicts"
                 and "data" in d.message]
    assert chosen.message.startswith("lhist[data[b * 256 + tid]]: the lanes' words come "
                                     "from data that differ between them")
    assert "once where its lanes fall in different banks or at one word, up to 32 times" \
        in chosen.message
    assert "words drawn at random from the 256 the data choose among, about 3.1 times" \
        in chosen.message
    assert chosen.data["chosen_by"] == ["data[b * 256 + tid]"]
    (t,) = [d for d in ds if d.code == "feedback-time"]
    assert ("lhist[data[b * 256 + tid]], whose elements the data choose, is counted as if "
            "the data were drawn at random (lhist[data[b * 256 + tid]] takes the banks 3.1 "
            "times a warp; each element of lhist[data[b * 256 + tid]] takes an even share "
            "of the updates)") in t.message


def test_words_the_threads_choose_are_no_data_s(tmp_path):
    # the updates of the thread's own bin by its datum: no message of data, none in the
    # time, and the banks taken once a warp where the data's take them 3.15 times
    ds = _hist(tmp_path, "atomicAdd(lhist[tid], data[b * 256 + tid]);")
    assert not [d for d in ds if "the data choose" in d.message
                or "come from data" in d.message]
    (own,) = [d for d in ds if d.code == "feedback-time"]
    (chosen,) = [d for d in _hist(tmp_path, "atomicAdd(lhist[data[b * 256 + tid]], 1);")
                 if d.code == "feedback-time"]
    # the zeroing and merging of lhist (2 accesses a thread) take the banks once as well
    # (the barrier waits for the loads of data, which the part holds too, aside)
    def banks(d):
        return d.data["parts"]["shared memory"] - d.data["parts"].get("barrier waits", 0.0)
    assert banks(chosen) / banks(own) \
        == pytest.approx((2 + uniform_passes(256, 32, 32)) / 3, rel=0.01)


def test_words_drawn_at_random_meet_in_a_bank_more_often_the_more_there_are():
    # the most distinct words one bank holds for a warp of 32 lanes, on average: none
    # shared where the array has no more words than banks; 256 words (a histogram of
    # bytes) 3.15, which the H200 took 3.5 times for atomic updates beside the loads of
    # their bins (benchmarks/opencl/shared_atomic_probe.py)
    assert uniform_passes(16, 32, 32) == 1.0
    assert uniform_passes(32, 32, 32) == 1.0
    assert uniform_passes(64, 32, 32) == pytest.approx(2.0, abs=0.01)
    assert uniform_passes(256, 32, 32) == pytest.approx(3.15, abs=0.05)
    assert uniform_passes(256, 32, 32) < uniform_passes(4096, 32, 32) < 3.6


def test_the_words_of_an_array_sized_by_a_parameter_are_its_value(tmp_path):
    # lhist's size is nb's value (64 words: 2 drawn at random meet in a bank a warp),
    # and asking for it records no missing value
    path = tmp_path / "h.mcpl"
    path.write_text(textwrap.dedent(_HIST).replace(
        "const int n = 1048576, global byte[n] data, global int[256] bins",
        "const int n = 1048576, const int nb = 64, global byte[n] data, global int[nb] bins")
        .replace("shared int[256] lhist;", "shared int[nb] lhist;")
        .replace("lhist[tid] = 0;", "if (tid < nb) { lhist[tid] = 0; }")
        .replace("atomicAdd(bins[tid], lhist[tid]);",
                 "if (tid < nb) { atomicAdd(bins[tid], lhist[tid]); }")
        .replace("INDEX", "atomicAdd(lhist[data[b * 256 + tid] % nb], 1);"))
    ds = mcl.feedback(mcl.check(path), only=["bank-conflicts", "time", "atomics"])
    assert not [d for d in ds if d.code == "feedback-needs-value"]
    (chosen,) = [d for d in ds if d.code == "feedback-bank-conflicts" and "data" in d.message]
    assert "words drawn at random from the 64 the data choose among, about 2.0 times" \
        in chosen.message


def test_a_register_array_filled_from_memory_chooses_the_words_of_each_lane():
    # histogram hopper_v1 loads 4 values a thread into v, then updates l_hist[w, v[u]]:
    # each lane its own v, so the data choose its word among its warp's row of 256
    (chosen,) = [d for d in _conflicts(EXAMPLES / "histogram" / "hopper_v1.mcpl")
                 if "come from data" in d.message]
    assert chosen.message.startswith("l_hist[w, v[u]]: the lanes' words come from data "
                                     "that differ between them (v[u])")
    assert "from the 256 the data choose among, about 3.1 times" in chosen.message


def test_words_the_data_choose_in_a_bank_of_each_lane_never_conflict():
    # histogram hopper_v2: 32 copies of the buckets, copy c of bucket b at b * 32 + c,
    # lane t updating copy t: the data choose the row, the lane keeps its bank
    (chosen,) = [d for d in _conflicts(EXAMPLES / "histogram" / "hopper_v2.mcpl")
                 if "data choose" in d.message]
    assert chosen.message == ("l_hist[v[u], c]: the data choose the lanes' words (v[u]) but "
                              "not their banks: a warp's 32 lanes always fall in different "
                              "banks of on_chip, and its access takes them once whatever "
                              "the data")
    assert chosen.data["random_passes"] == 1.0


def test_the_help_names_the_copy_per_lane_that_takes_the_data_out_of_the_banks():
    # what histogram hopper_v2 did, with its cost: 32 copies of 256 ints, 32 kB
    (chosen,) = [d for d in _conflicts(EXAMPLES / "histogram" / "hopper_v1.mcpl")
                 if "come from data" in d.message]
    assert ("A copy of l_hist's 256 words per lane, interleaved so that lane t's copy lies "
            "in bank t (l_hist[word, lane]: 32 times the words, 32 kB), takes the banks once "
            "whatever the data, the copies summed at the end") in chosen.hint
