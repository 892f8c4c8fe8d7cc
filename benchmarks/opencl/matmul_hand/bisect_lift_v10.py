"""Bisect Lift's fastest mm (lift_best_4096.cl, 0.97 of cuBLAS at 4096³ on the H100)
toward the OpenCL generated for examples/matmul/hopper_v10.mcpl (h_base of
v10_variants.py, 0.89-0.90), which has the same tiling (128 x 128 x 16, 8 x 8 per
work-item, double-buffered local tiles, prefetch into registers): a chain of kernels,
each one difference of h_base more than the one before, and a few single edits, written
into DIR as .cl files for matmul_variants.py, with the command line that times them.

    python benchmarks/opencl/matmul_hand/bisect_lift_v10.py DIR [--size N]

Lift's text is rebuilt here from its pattern (`lift()`, every difference a switch) so that
the sizes are a parameter (Lift's own file has 4096 baked into its literals); with no
switch on and N = 4096 it is lift_best_4096.cl line for line, its comment aside (checked
on every run).
The differences, in the chain's order (each switch keeps the ones before it):

  frag    fragments as scalars aFrag[8], bFrag[8] read from the float arrays, the
          multiply-adds on them (Lift: float4 p[2] read as float4, .s0-.s3 in the FMAs)
  next    the next k-tile held as scalars aNext[8], bNext[8] (float4 loads taken apart,
          b's put together again for its float4 store) (Lift: float4 ahead[2])
  sums    one accumulator, `sums[k] += x * y` (Lift: add(acc, mult(x, y)) on a copy of
          the accumulators made and written back every k-tile)
  loop    the buffer as `cur = l % 2` and `1 - cur`, `bool more` for the last k-tile, no
          empty `if` after the barrier (Lift: (i + 1) % 2, i + 1 < 256 written out)
  lindex  local-memory addresses as h_base writes them, in floats from ti, tj, ar, aq, bq,
          bc (work-item ids read once; Lift: float4 indices from get_local_id, read anew
          in each block)
  gindex  global addresses of a, b and c as h_base writes them (*(float4*)&a[...] of
          float offsets from i = bi * 128 + ar and k1; Lift: float4 indices of the args)
  prologue  k-tile 0 straight from global to local, a by 8 scalar loads (Lift: through
          the float4 registers, as the later tiles)
  pad4    a's tile rows padded to 132 floats (Lift: 128)
  wg32x8  a 32 x 8 work-group, tid = 32 w + t (Lift: 16 x 16; the same tid)

What is left between the last of the chain and h_base is how the text is written, not
what it does: h_base's `#pragma unroll` loops, `const int` tile constants and names.
h_unroll_all (v10_variants.py: h_base with every loop written out) is between them.
Single edits besides the chain (not tried before): Lift's kernel with a padded a tile
(s_lift_pad4), h_base with the next k-tile in float4 registers as Lift's (s_h_next4), and
h_base with both of Lift's register-count settings, 16 x 16 and unpadded (s_h_wg16x16_pad0).

Each file's work-group shape goes with it as `local=WxH` (matmul_variants.py), so one run
times all; the command is printed and written to DIR/README.txt with the list. It ends
with hopper_v10.mcpl itself (`specialize`: h_base as generated, on the plan's 1-D grid).
At a smaller --size the same kernels check on PoCL:
matmul_variants.py ... --platform Portable --options "" --repeats 1.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import v10_variants as v10  # noqa: E402

SWITCHES = ("frag", "next", "sums", "loop", "lindex", "gindex", "prologue", "pad4", "wg32x8")
S = ("s0", "s1", "s2", "s3")


def lift(size: int = 4096, on: frozenset[str] | set[str] = frozenset()) -> str:
    """Lift's kernel for ``size``³ with the differences of h_base named in ``on``."""
    on = frozenset(on)
    assert on <= set(SWITCHES), on - set(SWITCHES)
    assert "prologue" not in on or {"lindex", "gindex"} <= on, "prologue: h_base's form only"
    n4, nph, nb = size // 4, size // 16, size // 128   # float4 per row, k-tiles, blocks
    r = 132 if "pad4" in on else 128                  # a's tile row (floats)
    lx = 32 if "wg32x8" in on else 16
    g, li, nx = "gindex" in on, "lindex" in on, "next" in on
    acc = "sums" if "sums" in on else "acc_3"
    cur = "cur" if "loop" in on else "(i_16 % 2)"
    nxt = "(1 - cur)" if "loop" in on else "((i_16 + 1) % 2)"
    more = "more" if "loop" in on else f"i_16 + 1 < {nph}"
    if lx == 16:
        gy, gx = "get_local_id(1)", "get_local_id(0)"
    else:  # Lift's row and column ids from a 32 x 8 group (v10_variants.lift_wg32x8)
        tid = "(get_local_id(1) * 32 + get_local_id(0))"
        gy, gx = f"({tid} / 16)", f"({tid} % 16)"
    out: list[str] = []

    def emit(depth: int, *lines: str) -> None:
        out.extend(" " * (4 * depth) + ln for ln in lines)

    def section(depth: int, lift_form: bool, y: str, x: str, body) -> None:
        """Lift's block per group of statements, with its own reading of the ids
        (``body(depth, y, x)``); h_base's form uses the ids read once at the top."""
        if lift_form:
            emit(depth, "{", f"    int {y} = {gy};", "    {", f"        int {x} = {gx};")
            body(depth + 2, y, x)
            emit(depth, "    }", "}")
        else:
            body(depth, y, x)

    def plus(k: int) -> str:
        return f" + {k}" if k else ""

    def a_src(v: int, y: str, x: str, loop: bool) -> str:
        if g:
            return (f"*(__global const float4*)&A[(i * {nph} + {'i_16 + 1' if loop else '0'})"
                    f" * 16 + aq{plus(4 * v)}]")
        tile = " + 4*i_16" if loop else ""
        return (f"((global float4*)A)[((2*{x}) % 4) + {n4}*((2*{x}) / 4){tile} + {8 * n4}*{y}"
                f" + {128 * n4}*wg_1{plus(4 * loop + v)}]")

    def b_src(v: int, y: str, x: str, loop: bool) -> str:
        if g:
            return (f"*(__global const float4*)&B[(({'k1 + ' if loop else ''}bq{plus(8 * v)})"
                    f" * {nb} + wg_2) * 128 + 4 * bc]")
        tile = f" + {16 * n4}*i_16" if loop else ""
        return (f"((global float4*)B)[((16*{y} + {x}) % 32) + {n4}*((16*{y} + {x}) / 32){tile}"
                f" + 32*wg_2{plus(16 * n4 * loop + 8 * n4 * v)}]")

    def a_dst(v: int, c: int, y: str, x: str, loop: bool) -> str:
        if li:
            return f"l_10[({nxt if loop else '0'} * 16 + aq + {4 * v + c}) * {r} + ar]"
        buf = f" + {16 * r}*{nxt}" if loop else ""
        return (f"l_10[{4 * r}*((2*{x}) % 4) + ((2*{x}) / 4){buf} + 8*{y}"
                f"{plus(4 * r * v + r * c)}]")

    def b_dst(v: int, y: str, x: str, loop: bool) -> str:
        if li:
            return (f"*(__local float4*)&l_13[({nxt if loop else '0'} * 16 + bq{plus(8 * v)})"
                    f" * 128 + 4 * bc]")
        buf = f" + 512*{nxt}" if loop else ""
        return (f"((local float4*)l_13)[((16*{y} + {x}) % 32) + 32*((16*{y} + {x}) / 32){buf}"
                f"{plus(256 * v)}]")

    def a_store(regs: str, loop: bool, scalars: bool):
        def body(d: int, y: str, x: str) -> None:
            for v in range(2):
                if scalars:
                    emit(d, *(f"{a_dst(v, c, y, x, loop)} = {regs}[{4 * v + c}];"
                              for c in range(4)))
                else:
                    emit(d, f"{{ float4 v_ = {regs}[{v}]; " + " ".join(
                        f"{a_dst(v, c, y, x, loop)} = v_.{S[c]};" for c in range(4)) + " }")
        return body

    def b_store(regs: str, loop: bool, scalars: bool):
        def body(d: int, y: str, x: str) -> None:
            for v in range(2):
                val = (f"(float4)({', '.join(f'{regs}[{4 * v + c}]' for c in range(4))})"
                       if scalars else f"{regs}[{v}]")
                emit(d, f"{b_dst(v, y, x, loop)} = {val};")
        return body

    def loads(src, regs: str, loop: bool, scalars: bool):
        def body(d: int, y: str, x: str) -> None:
            for v in range(2):
                if scalars:
                    emit(d, f"{{ const float4 u_v0 = {src(v, y, x, loop)};", *(
                        f"  {regs}[{4 * v + c}] = u_v0.{S[c]};" for c in range(4)), "}")
                else:
                    emit(d, f"{regs}[{v}] = {src(v, y, x, loop)};")
        return body

    emit(0, "float mult(float x, float y) {", "    return (x * y);", "}",
         "float add(float x, float y) {", "    return (x + y);", "}", "",
         f"kernel __attribute__((reqd_work_group_size({lx}, {256 // lx}, 1)))",
         "void matmul(const int n, const int m, const int p, global float* restrict out, "
         "const global float* restrict A, const global float* restrict B) {")
    emit(1, f"local float l_10[{32 * r}] __attribute__((aligned(16)));",
         "local float l_13[4096] __attribute__((aligned(16)));",
         "{", "    int wg_1 = get_group_id(1);", "    {", "        int wg_2 = get_group_id(0);")
    d = 3
    if g or li:
        emit(d, "const int w = get_local_id(1);", "const int t = get_local_id(0);",
             f"int tid = w * {lx} + t;", "int ti = tid / 16;", "int tj = tid % 16;",
             "int ar = tid / 2;", "int aq = tid % 2 * 8;", "int bq = tid / 32;",
             "int bc = tid % 32;", "int i = wg_1 * 128 + ar;")
    emit(d, f"float {acc}[64];", *(f"{acc}[{k}] = 0.0f;" for k in range(64)))

    # k-tile 0
    if "prologue" in on:
        emit(d, *(f"l_10[(0 * 16 + aq + {u}) * {r} + ar] = A[(i * {nph} + 0) * 16 + aq{plus(u)}];"
                  for u in range(8)))
        emit(d, *(f"{b_dst(v, '', '', False)} = {b_src(v, '', '', False)};" for v in range(2)))
    else:
        emit(d, "float4 ahead_4[2];", "float4 ahead_5[2];")
        section(d, not g, "l_6", "l_7", loads(a_src, "ahead_4", False, False))
        section(d, not g, "l_8", "l_9", loads(b_src, "ahead_5", False, False))
        section(d, not li, "l_11", "l_12", a_store("ahead_4", False, False))
        section(d, not li, "l_14", "l_15", b_store("ahead_5", False, False))
    emit(d, "barrier(CLK_LOCAL_MEM_FENCE);", f"for (int i_16 = 0; i_16 < {nph}; i_16++) {{")

    # the k-tile loop
    d += 1
    if "loop" in on:
        emit(d, "int cur = i_16 % 2;", f"bool more = i_16 + 1 < {nph};")
    if g:
        emit(d, "int k1 = (i_16 + 1) * 16;")
    an, bn_ = ("aNext", "bNext") if nx else ("ahead_17", "ahead_18")
    emit(d, *((f"float {an}[8];", f"float {bn_}[8];") if nx
              else (f"float4 {an}[2];", f"float4 {bn_}[2];")))
    emit(d, f"if ({more}) {{")
    section(d + 1, not g, "l_19", "l_20", loads(a_src, an, True, nx))
    section(d + 1, not g, "l_21", "l_22", loads(b_src, bn_, True, nx))
    emit(d, "}")

    def compute(d: int, y: str, x: str) -> None:
        t = acc
        if "sums" not in on:
            t = "acc_25"
            emit(d, "float acc_25[64];", *(f"acc_25[{k}] = acc_3[{k}];" for k in range(64)))
        if "frag" in on:
            emit(d, "float aFrag[8];", "float bFrag[8];")
        for q in range(16):
            pa, pb = f"p_{26 + 2 * q}", f"p_{27 + 2 * q}"
            if "frag" in on:
                for e in range(8):
                    emit(d, f"aFrag[{e}] = l_10[({cur} * 16 + {q}) * {r}{plus(64 * (e // 4))}"
                            f" + 4 * ti{plus(e % 4)}];" if li else
                            f"aFrag[{e}] = l_10[{16 * r}*{cur} + 4*{y}"
                            f"{plus(r * q + 64 * (e // 4) + e % 4)}];")
                for e in range(8):
                    emit(d, f"bFrag[{e}] = l_13[({cur} * 16 + {q}) * 128{plus(64 * (e // 4))}"
                            f" + 4 * tj{plus(e % 4)}];" if li else
                            f"bFrag[{e}] = l_13[2048*{cur} + 4*{x}"
                            f"{plus(128 * q + 64 * (e // 4) + e % 4)}];")
                fa = [f"aFrag[{e}]" for e in range(8)]
                fb = [f"bFrag[{e}]" for e in range(8)]
            else:
                emit(d, f"float4 {pa}[2];")
                for v in range(2):
                    emit(d, f"{pa}[{v}] = *(__local float4*)&l_10[({cur} * 16 + {q}) * {r}"
                            f"{plus(64 * v)} + 4 * ti];" if li else
                            f"{pa}[{v}] = ((local float4*)l_10)[{4 * r}*{cur} + {y}"
                            f"{plus(r // 4 * q + 16 * v)}];")
                emit(d, f"float4 {pb}[2];")
                for v in range(2):
                    emit(d, f"{pb}[{v}] = *(__local float4*)&l_13[({cur} * 16 + {q}) * 128"
                            f"{plus(64 * v)} + 4 * tj];" if li else
                            f"{pb}[{v}] = ((local float4*)l_13)[512*{cur} + {x}"
                            f"{plus(32 * q + 16 * v)}];")
                fa = [f"{pa}[{e // 4}].{S[e % 4]}" for e in range(8)]
                fb = [f"{pb}[{e // 4}].{S[e % 4]}" for e in range(8)]
            for ei in range(8):
                for ej in range(8):
                    k = 8 * ei + ej
                    emit(d, f"{t}[{k}] += {fa[ei]} * {fb[ej]};" if "sums" in on else
                            f"{t}[{k}] = add({t}[{k}], mult({fa[ei]}, {fb[ej]}));")
        if "sums" not in on:
            emit(d, *(f"acc_3[{k}] = acc_25[{k}];" for k in range(64)))

    section(d, not li, "l_23", "l_24", compute)
    emit(d, f"if ({more}) {{")
    section(d + 1, not li, "l_58", "l_59", a_store(an, True, nx))
    section(d + 1, not li, "l_60", "l_61", b_store(bn_, True, nx))
    emit(d, "}", "barrier(CLK_LOCAL_MEM_FENCE);")
    if "loop" not in on:
        emit(d, f"if (i_16 + 1 < {nph}) {{", "}")
    d -= 1
    emit(d, "}")

    def c_store(d: int, y: str, x: str) -> None:
        for ei in range(8):
            if g:
                emit(d, f"{{ int ci = wg_1 * 128{plus(64 * (ei // 4))} + 4 * ti{plus(ei % 4)};")
            for eh in range(2):
                val = ", ".join(f"{acc}[{8 * ei + 4 * eh + c}]" for c in range(4))
                if g:
                    emit(d, f"  *(__global float4*)&out[(ci * {nb} + wg_2) * 128{plus(64 * eh)}"
                            f" + 4 * tj] = (float4)({val});")
                else:
                    off = (64 * (ei // 4) + ei % 4) * n4 + 16 * eh
                    emit(d, f"((global float4*)out)[{4 * n4}*{y} + {x} + {128 * n4}*wg_1 + "
                            f"32*wg_2{plus(off)}] = (float4)({val});")
            if g:
                emit(d, "}")

    section(d, not g, "l_62", "l_63", c_store)
    emit(1, "    }", "}")
    emit(0, "}")
    return "\n".join(out) + "\n"


CHAIN = (("lift", "Lift's kernel (lift_best_4096.cl)"),
         ("frag", "+ scalar fragments aFrag/bFrag, the FMAs on them"),
         ("next", "+ the next k-tile in scalars aNext/bNext"),
         ("sums", "+ one accumulator, sums[k] += x * y"),
         ("loop", "+ cur = l % 2, 1 - cur, bool more, no empty if"),
         ("lindex", "+ local addresses as h_base's (ids read once)"),
         ("gindex", "+ global addresses of a, b, c as h_base's"),
         ("prologue", "+ k-tile 0 straight to local memory, a by scalar loads"),
         ("pad4", "+ a's tile rows padded to 132"),
         ("wg32x8", "+ a 32 x 8 work-group: all of h_base's differences"))

H_NEXT4 = [  # h_base's next k-tile in float4 registers, as Lift's ahead[2]
    ("    float aNext[8];\n    float bNext[8];\n",
     "    float4 aNext4[2];\n    float4 bNext4[2];\n"),
    ("                const float4 u_v0 = *(__global const float4*)&a[(i * nrPhases + l + 1) * bk"
     " + aq + u];\n" + "".join(f"                aNext[u{f' + {c}' if c else ''}] = u_v0.s{c};\n"
                                for c in range(4)),
     "                aNext4[u / 4] = *(__global const float4*)&a[(i * nrPhases + l + 1) * bk"
     " + aq + u];\n"),
    ("                    const float4 u_v0 = *(__global const float4*)&b[((k1 + bq + 8 * h) *"
     " nrBlocksM + bj) * bn + 4 * bc + u];\n" + "".join(
         f"                    bNext[4 * h + {f'(u + {c})' if c else 'u'}] = u_v0.s{c};\n"
         for c in range(4)),
     "                    bNext4[h] = *(__global const float4*)&b[((k1 + bq + 8 * h) * nrBlocksM"
     " + bj) * bn + 4 * bc + u];\n"),
    ("            for (int u = 0; u < bk / 2; u++) {\n"
     "                l_a[((1 - cur) * bk + aq + u) * (bm + pad) + ar] = aNext[u];\n",
     "            for (int v = 0; v < 2; v++) {\n                const float4 x = aNext4[v];\n"
     + "".join(f"                l_a[((1 - cur) * bk + aq + 4 * v + {c}) * (bm + pad) + ar]"
               f" = x.s{c};\n" for c in range(4))),
    ("(float4)(bNext[4 * h + u], bNext[4 * h + (u + 1)], bNext[4 * h + (u + 2)],"
     " bNext[4 * h + (u + 3)])", "bNext4[h]"),
]


def h_base(size: int) -> str:
    """v10_variants' h_base with its sizes' defaults set to ``size``."""
    text = v10.base()
    for s in "nmp":
        text = v10._replace(text, f"#define MCL_{s} 4096", f"#define MCL_{s} {size}")
    return text


def variants(size: int) -> dict[str, tuple[str, str, str]]:
    """name: (kernel text, work-group shape, description), the chain first."""
    out, on = {}, set()
    for k, (sw, what) in enumerate(CHAIN):
        if sw != "lift":
            on.add(sw)
        out[f"b{k:02d}_{sw}"] = (lift(size, on), "32x8" if "wg32x8" in on else "16x16", what)
    h = h_base(size)
    out["b10_h_unroll_all"] = (
        v10.unrolled(v10.unrolled(v10.unrolled(v10.unrolled(v10.unrolled(
            h, "q", {"bk": 16}), "ei", {"tm": 8}), "ej", {"tn": 8}), "eh", {"tn / 4": 2}),
            "u", {"bk / 2": 8}),
        "32x8", "h_base with every loop written out (v10_variants' h_unroll_all)")
    out["b11_h_base"] = (h, "32x8", "h_base: the OpenCL MCL generates for hopper_v10")
    out["s_lift_pad4"] = (lift(size, {"pad4"}), "16x16", "Lift's kernel, a's tile rows of 132")
    nxt = h
    for old, new in H_NEXT4:
        nxt = v10._replace(nxt, old, new)
    out["s_h_next4"] = (nxt, "32x8", "h_base, the next k-tile in float4 aNext4[2], bNext4[2]")
    wg = v10._replace(v10._replace(h, "reqd_work_group_size(32, 8, 1)",
                                   "reqd_work_group_size(16, 16, 1)"),
                      "int tid = w * 32 + t;", "int tid = get_local_id(1) * 16 + get_local_id(0);")
    out["s_h_wg16x16_pad0"] = (v10.unpadded(wg), "16x16",
                               "h_base on a 16 x 16 work-group, a unpadded (Lift's two)")
    return out


def singles(size: int) -> dict[str, tuple[str, str, str]]:
    """Lift's kernel with one of h_base's differences (x_<switch>), and h_base's
    differences but some (x_all_but_<switches>): which difference costs alone, and which
    of h_base's forms keep Lift's float4 fragments within 128 registers."""
    out = {}
    for sw in ("frag", "next", "sums", "loop", "lindex", "gindex"):
        out[f"x_{sw}"] = (lift(size, {sw}), "16x16", f"Lift's kernel + {sw}")
    out["x_pad4_wg"] = (lift(size, {"pad4", "wg32x8"}), "32x8",
                        "Lift's kernel + pad4 + wg32x8")
    out["x_frag_next"] = (lift(size, {"frag", "next"}), "16x16", "Lift's kernel + frag + next")
    for but in (("frag",), ("frag", "next"), ("frag", "sums"), ("frag", "loop"),
                ("frag", "lindex", "prologue"), ("frag", "gindex", "prologue"),
                ("frag", "lindex", "gindex", "prologue"), ("frag", "pad4", "wg32x8"),
                ("frag", "loop", "lindex", "gindex", "prologue"),
                ("frag", "pad4", "wg32x8", "lindex", "gindex", "prologue")):
        out["x_all_but_" + "_".join(but)] = (
            lift(size, set(SWITCHES) - set(but)), "16x16" if "wg32x8" in but else "32x8",
            "every difference but " + " and ".join(but))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir", type=Path)
    ap.add_argument("--size", type=int, default=4096,
                    help="n = m = p the kernels are written for (a multiple of 128)")
    ap.add_argument("--singles", action="store_true",
                    help="Lift's kernel with single differences of h_base, and h_base's "
                         "differences but one or two, instead of the chain")
    args = ap.parse_args()
    assert args.size % 128 == 0, "the kernels have no bounds tests"
    lift_file = (HERE / "lift_best_4096.cl").read_text()
    lift_file = "".join(ln + "\n" for ln in lift_file.splitlines() if not ln.startswith("//"))
    assert lift(4096) == lift_file, "lift() no longer writes lift_best_4096.cl"
    args.dir.mkdir(parents=True, exist_ok=True)
    listing, files = [], []
    chosen = singles(args.size) if args.singles else variants(args.size)
    for name, (text, wg, what) in chosen.items():
        (args.dir / f"{name}.cl").write_text(f"// {name}: {what}\n" + text)
        listing.append(f"{name:18s} {wg:5s}  {what}")
        files.append(f'"{args.dir / name}.cl local={wg}"')
    # the generator's own output too, on its plan's 1-D grid (h_base has a 2-D one)
    if not args.singles:
        files.append('"examples/matmul/hopper_v10.mcpl specialize"')
    command = ("python3 benchmarks/opencl/matmul_variants.py " + " ".join(files)
               + f" --size {args.size} --out \"$OUT\"")
    (args.dir / "README.txt").write_text("\n".join(listing) + "\n\n" + command + "\n")
    print("\n".join(listing))
    print(command)
    return 0


if __name__ == "__main__":
    sys.exit(main())
