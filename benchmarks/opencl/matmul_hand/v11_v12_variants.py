# ruff: noqa: E501  (the generated OpenCL is matched line for line)
"""Hand edits of matmul hopper_v11's and hopper_v12's generated OpenCL around the
H100's asynchronous copies (PTX ``cp.async``, inline assembly, which NVIDIA's OpenCL
compiler accepts): does copying tiles from global into shared memory without registers,
as cuBLAS's SGEMM kernels do, buy time, and in which form? Exploration only: the
asynchronous forms use NVIDIA's PTX and give wrong results elsewhere.

    python benchmarks/opencl/matmul_hand/v11_v12_variants.py DIR

writes into DIR, and prints the matmul_variants.py command that times them all:

* v11_base.cl: v11 as generated (sizes 4096);
* v11_async_b.cl: its b tile by 16-byte asynchronous copies, a's through registers;
* v11_async_ab.cl: a's too, by 4-byte copies (its tile is stored transposed);
* a_rows_base.cl, a_rows_async.cl: matmul_mcpl/v11_a_rows.mcpl as generated and built
  with the generator's asynchronous copies (mcl.opencl.async_copy); round 42 ran them,
  by regular-expression edits before the generator made such copies, as v12_base and
  v12_async;
* h12_async.cl: hopper_v12 built with its asynchronous copies; h12_noclobber.cl the
  same with the copy's inline assembly free of the "memory" clobber;
* h12_frag4.cl: hopper_v12 with its fragments as float4 values whose components feed
  the multiply-adds;
* h12_q4.cl, h12_q8.cl: its k-step loop unrolled 4 and 8 times, not completely;
  h12_swap.cl: its multiply-adds with the columns outermost;
* h3_plain.cl, h3_async.cl: matmul_mcpl/v12_three_stages.mcpl as generated, and with
  b's copies in asynchronous groups that stay in flight across one barrier.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

ASYNC = r"""
// asynchronous copies from global to shared memory (PTX, sm_80 and later)
#define CP_ASYNC16(dst, src) __asm__ volatile( \
    "cp.async.cg.shared.global [%0], [%1], 16;" :: "r"((uint)(size_t)(dst)), "l"(src) : "memory")
#define CP_ASYNC4(dst, src) __asm__ volatile( \
    "cp.async.ca.shared.global [%0], [%1], 4;" :: "r"((uint)(size_t)(dst)), "l"(src) : "memory")
#define CP_WAIT_ALL() __asm__ volatile("cp.async.wait_all;" ::: "memory")
"""

B_LOAD = """                    const float4 u_v0 = *(__global const float4*)&b[((k1 + bq + bRows * h) * nrBlocksM + bj) * bn + 4 * bc + u];
                    bNext[4 * h + u] = u_v0.s0;
                    bNext[4 * h + (u + 1)] = u_v0.s1;
                    bNext[4 * h + (u + 2)] = u_v0.s2;
                    bNext[4 * h + (u + 3)] = u_v0.s3;
"""
B_ASYNC = """                    CP_ASYNC16(&l_b[((1 - cur) * bk + bq + bRows * h) * bn + 4 * bc + u], &b[((k1 + bq + bRows * h) * nrBlocksM + bj) * bn + 4 * bc + u]);
"""
B_STORE = """                    *(__local float4*)&l_b[((1 - cur) * bk + bq + bRows * h) * bn + 4 * bc + u] = (float4)(bNext[4 * h + u], bNext[4 * h + (u + 1)], bNext[4 * h + (u + 2)], bNext[4 * h + (u + 3)]);
"""
A_LOAD = """            #pragma unroll
            for (int u_run = 0; u_run < 8; u_run += 4) {   // loop u: runs of 4 iterations as vector accesses
                const int u = u_run;
                const float4 u_v0 = *(__global const float4*)&a[(i * nrPhases + l + 1) * bk + aq + u];
                aNext[u] = u_v0.s0;
                aNext[u + 1] = u_v0.s1;
                aNext[u + 2] = u_v0.s2;
                aNext[u + 3] = u_v0.s3;
            }
"""
A_ASYNC = """            #pragma unroll
            for (int u = 0; u < aPer; u++) {
                CP_ASYNC4(&l_a[((1 - cur) * bk + aq + u) * (bm + pad) + ar], &a[(i * nrPhases + l + 1) * bk + aq + u]);
            }
"""
A_STORE = """            #pragma unroll
            for (int u = 0; u < aPer; u++) {
                l_a[((1 - cur) * bk + aq + u) * (bm + pad) + ar] = aNext[u];
            }
"""
BARRIER = """        barrier(CLK_LOCAL_MEM_FENCE);
    }
"""


def replace_once(text: str, old: str, new: str) -> str:
    if text.count(old) != 1:
        raise SystemExit(f"v11_v12_variants: the generated code changed; expected once:\n{old}")
    return text.replace(old, new)


def async_all(source: str) -> str:
    """A generated kernel built with the asynchronous copies the generator made."""
    if "MCL_COPY128(" not in source:
        raise SystemExit("v11_v12_variants: the generator made no asynchronous copy")
    return "#define MCL_ASYNC_COPY\n" + source


def hand_form(source: str) -> str:
    """A generated kernel as matmul_variants.py launches a .cl file: with the sizes
    as (unused) arguments and a 2-D grid of work-groups numbered as the plan's 1-D one."""
    base = replace_once(source, "__kernel void matmul(",
                        "__kernel void matmul(const int n0, const int m0, const int p0, ")
    return replace_once(base, "const int bid = get_group_id(0);",
                        "const int bid = get_group_id(1) * get_num_groups(0) + get_group_id(0);")


FRAGMENTS = """            #pragma unroll
            for (int ei = 0; ei < tm; ei++) {
                aFrag[ei] = l_a[(cur * bk + q) * (bm + pad) + ei / 4 * aChunk + 4 * ti + ei % 4];
            }
            #pragma unroll
            for (int ej = 0; ej < tn; ej++) {
                bFrag[ej] = l_b[(cur * bk + q) * bn + ej / 4 * bChunk + 4 * tj + ej % 4];
            }
            #pragma unroll
            for (int ei = 0; ei < tm; ei++) {
                #pragma unroll
                for (int ej = 0; ej < tn; ej++) {
                    sums[ei * tn + ej] += aFrag[ei] * bFrag[ej];
                }
            }
"""


FMA_NEST = """            for (int ei = 0; ei < tm; ei++) {
                #pragma unroll
                for (int ej = 0; ej < tn; ej++) {
                    sums[ei * tn + ej] += aFrag[ei] * bFrag[ej];"""
FMA_SWAPPED = """            for (int ej = 0; ej < tn; ej++) {
                #pragma unroll
                for (int ei = 0; ei < tm; ei++) {
                    sums[ei * tn + ej] += aFrag[ei] * bFrag[ej];"""


def float4_fragments(source: str) -> str:
    """hopper_v12's k-step with its fragments as float4 values whose components feed
    the multiply-adds (as Lift's matmul kernels have them), written out."""
    lines = [f"            const float4 fa{h} = *(__local const float4*)&l_a[(cur * bk + q) * "
             f"(bm + pad) + {h} * aChunk + 4 * ti];" for h in range(2)]
    lines += [f"            const float4 fb{h} = *(__local const float4*)&l_b[(cur * bk + q) * bn "
              f"+ {h} * bChunk + 4 * tj];" for h in range(4)]
    lines += [f"            sums[{ei * 16 + ej}] += fa{ei // 4}.s{ei % 4} * fb{ej // 4}.s{ej % 4};"
              for ei in range(8) for ej in range(16)]
    return replace_once(source, FRAGMENTS, "\n".join(lines) + "\n")


PIPELINE = r"""
#define CP_COMMIT() __asm__ volatile("cp.async.commit_group;" ::: "memory")
#define CP_WAIT_BUT_ONE() __asm__ volatile("cp.async.wait_group 1;" ::: "memory")
"""


def three_stages(source: str) -> str:
    """matmul_mcpl/v12_three_stages.mcpl as generated (its copies plain: the generator
    does not prove (l + 2) % 3 apart from l % 3), with b's copies asynchronous in groups,
    one per phase, and each barrier waiting for all groups but the newest: the copies
    for the phase after next stay in flight across the barrier."""
    import re
    copy = re.compile(r"\*\(__local float4\*\)&(.+?) = \*\(__global const float4\*\)&(.+?);$",
                      re.M)
    out, count = copy.subn(r"CP_ASYNC16(&\1, &\2);", source)
    if count != 3:
        raise SystemExit(f"v11_v12_variants: expected b's 3 copies in the three-stage kernel, not {count}")
    out = replace_once(out, "__attribute__((reqd_work_group_size",
                       ASYNC + PIPELINE + "__attribute__((reqd_work_group_size")
    # the prologue: phase 0's group, phase 1's group; wait for phase 0's
    out = replace_once(out, "    if (nrPhases > 1) {\n", "    CP_COMMIT();\n    if (nrPhases > 1) {\n")
    out = replace_once(out, "    }\n    barrier(CLK_LOCAL_MEM_FENCE);\n    for (int l = 0;",
                       "    }\n    CP_COMMIT();\n    CP_WAIT_BUT_ONE();\n    barrier(CLK_LOCAL_MEM_FENCE);\n"
                       "    for (int l = 0;")
    # each phase: its group (empty near the end), then wait for the next phase's
    out = replace_once(out, "        #pragma unroll\n        for (int q = 0; q < bk; q++) {",
                       "        CP_COMMIT();\n        #pragma unroll\n        for (int q = 0; q < bk; q++) {")
    out = replace_once(out, "        barrier(CLK_LOCAL_MEM_FENCE);\n    }\n",
                       "        CP_WAIT_BUT_ONE();\n        barrier(CLK_LOCAL_MEM_FENCE);\n    }\n")
    return out


def main() -> int:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "async-out")
    out.mkdir(parents=True, exist_ok=True)
    from mcl.opencl import generate
    (kernel,) = generate(str(ROOT / "examples/matmul/hopper_v11.mcpl"), "hopper",
                         specialize=True)
    base = hand_form(kernel.source)
    (out / "v11_base.cl").write_text(base)
    asyncs = replace_once(base, "__attribute__((reqd_work_group_size", ASYNC +
                          "__attribute__((reqd_work_group_size")
    asyncs = replace_once(asyncs, B_LOAD, B_ASYNC)
    asyncs = replace_once(asyncs, B_STORE, "")
    asyncs = replace_once(asyncs, BARRIER, "        CP_WAIT_ALL();\n" + BARRIER)
    (out / "v11_async_b.cl").write_text(asyncs)
    both = replace_once(asyncs, A_LOAD, A_ASYNC)
    both = replace_once(both, A_STORE, "")
    (out / "v11_async_ab.cl").write_text(both)
    (v12,) = generate(str(ROOT / "benchmarks/opencl/matmul_mcpl/v11_a_rows.mcpl"),
                      "hopper", specialize=True)
    (out / "a_rows_base.cl").write_text(hand_form(v12.source))
    (out / "a_rows_async.cl").write_text(async_all(hand_form(v12.source)))
    # hopper_v12 as generated, built with the asynchronous copies, and with the copy's
    # inline assembly free to move across other memory accesses (no "memory" clobber;
    # the wait before each barrier keeps it)
    (h12,) = generate(str(ROOT / "examples/matmul/hopper_v12.mcpl"), "hopper",
                      specialize=True)
    v12 = async_all(hand_form(h12.source))
    (out / "h12_async.cl").write_text(v12)
    (out / "h12_noclobber.cl").write_text(replace_once(
        v12, '"l"(src) : "memory")', '"l"(src))'))
    (out / "h12_frag4.cl").write_text(float4_fragments(v12))
    # the k-step loop unrolled 4 or 8 times instead of completely, and the multiply-adds
    # with the columns outermost
    q_loop = "#pragma unroll\n        for (int q = 0; q < bk; q++) {"
    for by in (4, 8):
        (out / f"h12_q{by}.cl").write_text(replace_once(
            v12, q_loop, q_loop.replace("unroll", f"unroll {by}")))
    (out / "h12_swap.cl").write_text(replace_once(v12, FMA_NEST, FMA_SWAPPED))
    (h3,) = generate(str(ROOT / "benchmarks/opencl/matmul_mcpl/v12_three_stages.mcpl"),
                     "hopper", specialize=True)
    (out / "h3_plain.cl").write_text(hand_form(h3.source))
    (out / "h3_async.cl").write_text(three_stages(hand_form(h3.source)))
    files = " ".join(f'"{out}/{n}.cl local=32x8"' for n in
                     ("v11_base", "v11_async_b", "v11_async_ab", "a_rows_base", "a_rows_async",
                      "h12_async", "h12_noclobber", "h12_frag4", "h12_q4", "h12_q8",
                      "h12_swap", "h3_plain", "h3_async"))
    print(f"python3 benchmarks/opencl/matmul_variants.py {files} --size 4096 "
          "--tile 128x256 --repeats 20")
    return 0


if __name__ == "__main__":
    sys.exit(main())
