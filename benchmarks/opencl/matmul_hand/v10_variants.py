"""Hand edits of the OpenCL generated for examples/matmul/hopper_v10.mcpl (sizes
specialised at 4096, a 2-D grid, matmul_variants.py's signature) and of Lift's
fastest mm: the exploration behind hopper_v10's notes (examples/matmul/NOTES.md),
written into DIR as .cl files for matmul_variants.py / ncu_matmul.py.

    python benchmarks/opencl/matmul_hand/v10_variants.py DIR

h_base        the generated kernel
h_frag4       fragments read as explicit float4, copied into the scalar fragments
h_frag4_pad0  the same, a tile unpadded
h_pad0        a tile unpadded
h_and         the buffer as l & 1
h_wg16x16     a 16 x 16 work-group (run with --local 16x16)
h_vecfrag     float4 fragments used as components in the multiply-adds (as Lift's)
h_unroll_q    the k-step loop written out 16 times ({ const int q = K; ... }), as Lift's
              text is, instead of `#pragma unroll`
h_unroll_all  every loop with a constant trip count written out
h_ptr         the k-tile loop's global loads through pointers set before the loop
              (a's and b's runs of this work-item as float4 pointers, advanced by the
              tile index), as the NVIDIA compiler keeps Lift's: h_base reloads the
              kernel arguments from the constant bank every k-tile
lift_wg32x8   Lift's kernel on a 32 x 8 work-group
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(ROOT))

COMPUTE = '''            #pragma unroll
            for (int ei = 0; ei < tm; ei++) {
                aFrag[ei] = l_a[(cur * bk + q) * (bm + pad) + ei / 4 * (bm / 2) + 4 * ti + ei % 4];
            }
            #pragma unroll
            for (int ej = 0; ej < tn; ej++) {
                bFrag[ej] = l_b[(cur * bk + q) * bn + ej / 4 * (bn / 2) + 4 * tj + ej % 4];
            }'''
FRAG4 = '''            float4 a0 = *(__local float4*)&l_a[(cur * bk + q) * (bm + pad) + 4 * ti];
            float4 a1 = *(__local float4*)&l_a[(cur * bk + q) * (bm + pad) + bm / 2 + 4 * ti];
            float4 b0 = *(__local float4*)&l_b[(cur * bk + q) * bn + 4 * tj];
            float4 b1 = *(__local float4*)&l_b[(cur * bk + q) * bn + bn / 2 + 4 * tj];
            aFrag[0] = a0.s0; aFrag[1] = a0.s1; aFrag[2] = a0.s2; aFrag[3] = a0.s3;
            aFrag[4] = a1.s0; aFrag[5] = a1.s1; aFrag[6] = a1.s2; aFrag[7] = a1.s3;
            bFrag[0] = b0.s0; bFrag[1] = b0.s1; bFrag[2] = b0.s2; bFrag[3] = b0.s3;
            bFrag[4] = b1.s0; bFrag[5] = b1.s1; bFrag[6] = b1.s2; bFrag[7] = b1.s3;'''


def _replace(text: str, old: str, new: str) -> str:
    assert old in text, old[:80]
    return text.replace(old, new)


def base() -> str:
    from mcl.opencl import generate
    (k,) = generate(ROOT / "examples" / "matmul" / "hopper_v10.mcpl", "hopper",
                    specialize=True)
    src = _replace(k.source, "__kernel void matmul(__global float* restrict c,",
                   "__kernel void matmul(const int n0, const int m0, const int p0, "
                   "__global float* restrict c,")
    start = src.index("    const int bid = get_group_id(0);")
    end = src.index("\n", src.index("    int bj = bid"))
    return src[:start] + "    int bi = get_group_id(1);\n    int bj = get_group_id(0);" + src[end:]


def unpadded(text: str) -> str:
    return _replace(_replace(text, "const int pad = 4;", "const int pad = 0;"),
                    "l_a[4224]", "l_a[4096]")


def vecfrag(text: str) -> str:
    start = text.index("        #pragma unroll\n        for (int q = 0; q < bk; q++) {")
    end = text.index("        if (more) {", start)
    comps = ["s0", "s1", "s2", "s3"]
    a = [f"a{i // 4}.{comps[i % 4]}" for i in range(8)]
    b = [f"b{j // 4}.{comps[j % 4]}" for j in range(8)]
    lines = ["        #pragma unroll", "        for (int q = 0; q < bk; q++) {"]
    lines += ["        " + ln.replace("float4 ", "const float4 ").replace("(__local float4*)",
                                                                      "(__local const float4*)")
              for ln in FRAG4.splitlines()[:4]]
    lines += [f"            sums[{ei * 8 + ej}] += {a[ei]} * {b[ej]};"
              for ei in range(8) for ej in range(8)]
    return text[:start] + "\n".join(lines) + "\n        }\n" + text[end:]


def unrolled(text: str, var: str, trips: dict[str, int]) -> str:
    """Every ``#pragma unroll`` loop over ``var`` (``for (int var = 0; var < BOUND;
    var++)``, BOUND a name of ``trips``) written out: one block per iteration that
    declares ``const int var = K``."""
    import re
    head = re.compile(r"( *)#pragma unroll\n *for \(int " + var + r" = 0; " + var
                      + r" < (\w+); " + var + r"\+\+\) \{\n")
    while (m := head.search(text)) is not None:
        depth, i = 1, m.end()
        while depth:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        body = text[m.end():i - 1]
        pad = m.group(1)
        copies = "".join(f"{pad}{{\n{pad}    const int {var} = {k};\n{body}{pad}}}\n"
                         for k in range(trips[m.group(2)]))
        end = text.index("\n", i) + 1
        text = text[:m.start()] + copies + text[end:]
    return text


def hoisted_pointers(text: str) -> str:
    """The global loads of the k-tile loop through float4 pointers to this
    work-item's runs, set once before the loop."""
    text = _replace(text, "    for (int l = 0; l < nrPhases; l++) {",
                    "    __global const float4* pa = (__global const float4*)&a[i * p + aq];\n"
                    "    __global const float4* pb = (__global const float4*)&b[bq * m + bj * bn"
                    " + 4 * bc];\n"
                    "    for (int l = 0; l < nrPhases; l++) {")
    text = _replace(text, "*(__global const float4*)&a[(i * nrPhases + l + 1) * bk + aq + u]",
                    "pa[(l + 1) * (bk / 4) + u / 4]")
    return _replace(text, "*(__global const float4*)&b[((k1 + bq + 8 * h) * nrBlocksM + bj) * bn"
                          " + 4 * bc + u]", "pb[(k1 + 8 * h) * (m / 4)]")


def lift_wg32x8() -> str:
    s = (HERE / "lift_best_4096.cl").read_text()
    s = s.replace("get_local_id(1)", "@Y@").replace("get_local_id(0)", "@X@")
    tid = "(get_local_id(1) * 32 + get_local_id(0))"
    s = s.replace("@Y@", f"({tid} / 16)").replace("@X@", f"({tid} % 16)")
    return _replace(s, "reqd_work_group_size(16, 16, 1)", "reqd_work_group_size(32, 8, 1)")


def main() -> int:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    h = base()
    frag4 = _replace(h, COMPUTE, FRAG4)
    variants = {
        "h_base": h, "h_frag4": frag4, "h_frag4_pad0": unpadded(frag4), "h_pad0": unpadded(h),
        "h_and": _replace(h, "int cur = l % 2;", "int cur = l & 1;"),
        "h_wg16x16": _replace(_replace(h, "reqd_work_group_size(32, 8, 1)",
                                       "reqd_work_group_size(16, 16, 1)"),
                              "int tid = w * 32 + t;",
                              "int tid = get_local_id(1) * 16 + get_local_id(0);"),
        "h_vecfrag": vecfrag(h), "lift_wg32x8": lift_wg32x8(),
        "h_unroll_q": unrolled(h, "q", {"bk": 16}), "h_ptr": hoisted_pointers(h),
        "h_unroll_all": unrolled(unrolled(unrolled(unrolled(unrolled(
            h, "q", {"bk": 16}), "ei", {"tm": 8}), "ej", {"tn": 8}), "eh", {"tn / 4": 2}),
            "u", {"bk / 2": 8}),
    }
    for name, text in variants.items():
        (out / f"{name}.cl").write_text(text)
    print(f"wrote {len(variants)} kernels to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
