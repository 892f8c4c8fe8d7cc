"""Code shape ``l`` of the zip-reduce AllPairs kernel: the structure of Lift's fastest
matrix multiplication (``benchmarks/results/lift_mm/best.cl``, rule
mm-tiling-double-buffered, 128 x 128 x 8 tiles, 8 x 8 per work-item, a 16 x 16
work-group: 0.936 of cuBLAS SGEMM at 4096^3 on an H100, 123 registers, 2 work-groups
per SM) for any zip and reduce function, element type and size.

What best.cl does, and how it compares with shape ``r`` (:mod:`mcl.skel.allpairs`):

* Local memory. ``l_10[2112]`` holds A's tile transposed and padded: two buffers of
  BK x (BM + 4) = 8 x 132 floats, element (row r, k) at ``buf * 1056 + k * 132 + r``;
  ``l_13[2048]`` holds B's tile as it is, two buffers of BK x BN = 8 x 128, element
  (k, column c) at ``buf * 1024 + k * 128 + c``. This is the layout of ``r``
  (``l_a[2][BK][BM + PAD]``, ``l_b[2][BK][BN]``, PAD = 4) as flat arrays.
* The work-item's fragment. ``get_local_id(0)`` (tx) picks columns, ``get_local_id(1)``
  (ty) rows: the work-item owns rows ``4 ty + {0..3}`` and ``64 + 4 ty + {0..3}`` and
  columns ``4 tx + {0..3}`` and ``64 + 4 tx + {0..3}`` of the block: runs of 4
  contiguous rows/columns, the two runs BM/2 (BN/2) apart. ``r`` assigns the same
  rows and columns (RA = RB = 4), but from a linear id, so its work-group shape is
  free (32 x 8 by default); Lift's is the fragment grid, (BN/TN) x (BM/TM) = 16 x 16
  (the NVIDIA compiler gave Lift's kernel 157 registers on a 32 x 8 work-group,
  examples/matmul/NOTES.md).
* Fragment reads. Per k, two float4 reads of A's tile (``((local float4*)l_10)
  [264 buf + 33 k + ty]`` and ``+ 16``) and two of B's (``[256 buf + 32 k + tx]``,
  ``+ 16``): 128-bit loads written as such; ``r`` reads scalars and leaves their
  merging to the compiler. The multiply-adds use the float4 components directly
  (``add(acc[8 i + j], mult(a[i / 4].s(i % 4), b[j / 4].s(j % 4)))``, i over A's 8
  values, j over B's 8, i outer).
* Double buffering. One barrier per k-tile. Before the k-steps the next k-tile is
  read from global memory into registers (``ahead``: one float4 of A and one of B
  per work-item at BK = 8, 8 registers held across the 8 k-steps); after them it is
  stored into the other buffer (A's float4 as 4 scalar stores, transposed; B's as
  one float4 store); then the barrier. The same scheme as ``r`` (``i`` and ``d``
  differ), but ``r`` holds ``an[A_PER][4]``/``bn[B_PER][4]`` scalars.
* Global reads. Every index is computed in full from the group ids, the local ids and
  the k-tile counter (``A[(tx % 2) + 1024 (tx / 2) + 8192 ty + 131072 wg_1 + 2 i + 2]``
  as float4), like shape ``i``; ``r`` advances the pointers once per k-tile. A's
  runs: at BK = 8 run ``tid`` (row tid / 2, k 4 (tid % 2)); at BK = 16 (Lift's
  lift_best_4096.cl) a work-item's two runs are adjacent in one row (run
  ``tid * A_PER + s``). B's runs are ``tid + s * NT`` (row tid / 32 + 8 s).
* The k loop: ``for (i = 0; i < 512; i++)`` over k-tiles, the buffer ``i % 2``, the
  next k-tile's loads and stores behind ``if (i + 1 < 512)``, the 8 k-steps fully
  unrolled in the source (``r`` writes ``#pragma unroll`` loops), 64 accumulators in
  a flat array.
* The grid is two-dimensional, ``get_group_id(1)`` the block row and
  ``get_group_id(0)`` the block column in best.cl (consecutive work-groups share a
  panel of A); here, as in ``r``, the blocks are numbered GROUP block rows together
  (``-DMCL_ALLPAIRS_GROUP=1`` in the build options restores best.cl's order).
* C is stored after the k loop as 16 float4 stores per work-item, row
  ``4 ty + i % 4 + 64 (i / 4)``, float4 column ``tx`` and ``tx + 16``: as ``r``.

This shape reproduces that text for the tile parameters of the :class:`Tiling`
(fully unrolled, vector widths min(TM, 4) and min(TN, 4)); it keeps what the skeleton
needs beyond best.cl: the user's ZIP and REDUCE, the reduction started by the first k
where there is no identity (the first k-tile peeled), the element types TA, TB, TO,
guards and clamped reads where the sizes do not divide the tiles (EXACT 0), the
offset of A's part (a_off) and C's (c_off) on several devices, and a last k-tile of
KREM < BK columns. The sizes (D, M, COUNT) stay compile-time constants (macros).

Where it departs from best.cl: the sizes are macros, not literals; A and C are offset
by a_off and c_off once (``A += a_off``); B's and C's float4 indices use the block
ids as ``bj * BN / 4`` (Lift: ``32 * wg_2``). Without an identity, k-step 0 of k-tile
0 is a uniform branch between ``acc = ZIP(a, b)`` and ``acc = REDUCE(acc, ZIP(a, b))``.
A's tile is padded only where the padding spares bank conflicts (:func:`lift_pad`):
at BK = 8, as best.cl; at BK = 16 not, as Lift's 16-deep kernel
(``benchmarks/opencl/matmul_hand/lift_best_4096.cl``), which is the default tiling.

Measured on an H100 (NVIDIA's OpenCL, 4096^3, identity 0;
``benchmarks/skel/allpairs_bisect.py``, benchmarks/results/skel/allpairs_bisect/):
128x128x16/8x8 takes 127 registers and its kernel runs in the time of Lift's own
16-deep text in the skeleton's place (2.77 ms, 0.963-0.968 of cuBLAS); padded it took
157 registers and 0.928. 128x128x8/8x8: 127 registers, 0.943-0.945.

Registers, estimated without the NVIDIA OpenCL compiler (clang 15 OpenCL C ->
nvptx64 PTX -> ptxas -arch=sm_90, benchmarks/skel/ptx_registers.py; the NVIDIA figures
where known in brackets): best.cl 123 (123), Lift's 16-deep kernel 130 (127); shape
``l`` with an identity, 4096^3: 128x128x8/8x8 124 (127), 128x128x16/8x8 unpadded 155
(127), with the same PTX instruction mix as best.cl (per k-tile 512 fma, 32
ld.shared.v4, 2 ld.global.v4, 4 st.shared.f32 and 1 st.shared.v4; 16 st.global.v4 at
the end); without an identity 143 and 147 (8 and 16 deep, padded). Shape ``r`` in the
same estimate: 128x128x16/8x8,32x8 163 (157), 128x128x8/8x8,32x8 128 (123).
The estimate is not the NVIDIA compiler: only a GPU run decides."""

from __future__ import annotations

import functools

_LANES = "0123456789abcdef"


def _comp(var: str, width: int, u: int) -> str:
    """Component ``u`` of a vector of ``width`` (a scalar when 1)."""
    return var if width == 1 else f"{var}.s{_LANES[u]}"


def _vtype(base: str, width: int) -> str:
    return base if width == 1 else f"{base}{width}"


class _Shape:
    """The tile parameters and the derived counts of one kernel."""

    def __init__(self, bm, bn, bk, tm, tn, pad):
        self.bm, self.bn, self.bk, self.tm, self.tn, self.pad = bm, bn, bk, tm, tn, pad
        self.lx, self.ly = bn // tn, bm // tm
        self.nt = self.lx * self.ly
        self.ra, self.rb = min(tm, 4), min(tn, 4)
        self.a_runs, self.b_runs = bm * bk // 4, bk * bn // 4
        self.a_per = -(-self.a_runs // self.nt)
        self.b_per = -(-self.b_runs // self.nt)
        self.sa = bm + pad                   # a row (one k) of A's transposed tile

    def a_run(self, s: int) -> tuple[str, int, str, int, str]:
        """A's run ``s`` of this work-item (run ``tid * A_PER + s``: a work-item's runs
        adjacent, as Lift's): its row ``r + rc`` and k / 4 ``c + cc`` within the tile
        (``rc``, ``cc`` constants, added last), and the condition that it exists (""
        when every work-item has it)."""
        per, q = self.a_per, self.bk // 4
        e = f"(tid * {per} + {s})" if per > 1 else "tid"
        ok = "" if per * self.nt == self.a_runs else f"{e} < {self.a_runs}"
        if q % per:                 # the runs of a work-item span rows
            return f"({e} / {q})", 0, f"({e} % {q})", 0, ok
        x = f"(tx * {per})" if per > 1 else "tx"
        if (self.lx * per) % q == 0:     # as Lift writes it: ty's rows apart
            return f"({x} / {q} + {self.lx * per // q} * ty)", 0, f"({x} % {q})", s, ok
        x = f"(tid * {per})" if per > 1 else "tid"
        return f"({x} / {q})", 0, f"({x} % {q})", s, ok

    def b_run(self, s: int) -> tuple[str, int, str, int, str]:
        """B's run ``s`` (run ``tid + s NT``), as :meth:`a_run`."""
        q = self.bn // 4
        e = f"(tid + {s * self.nt})" if s else "tid"
        ok = "" if self.b_per * self.nt == self.b_runs else f"{e} < {self.b_runs}"
        if self.nt % q:
            return f"({e} / {q})", 0, f"({e} % {q})", 0, ok
        return f"(tid / {q})", s * self.nt // q, f"(tid % {q})", 0, ok


def _store_wavefronts(p: _Shape) -> int:
    """The local-memory wavefronts of one warp's stores of A's transposed tile (32 banks
    of 4-byte words, 4-byte elements): per store instruction, the most distinct words
    one bank is asked for. The stores are the only accesses the padding changes (the
    fragment reads are float4 rows, conflict-free in either layout)."""
    waves = 0
    lanes = [(tid % p.lx, tid // p.lx, tid) for tid in range(min(32, p.nt))]
    for s in range(p.a_per):
        r, rc, c, cc, ok = p.a_run(s)
        for u in range(4):
            words: dict[int, set[int]] = {}
            for tx, ty, tid in lanes:
                env = {"tx": tx, "ty": ty, "tid": tid}

                def ev(e, env=env):     # the index expressions of a_run, in Python
                    return eval(e.replace(" / ", " // "), {}, env)
                if ok and not ev(ok):
                    continue
                w = (ev(c) + cc) * 4 * p.sa + ev(r) + rc + u * p.sa
                words.setdefault(w % 32, set()).add(w)
            waves += max(map(len, words.values()), default=0)
    return waves


@functools.cache
def lift_pad(bm: int, bn: int, bk: int, tm: int, tn: int, pad: int) -> int:
    """The padding of A's transposed tile rows for these tiles: ``pad`` where it takes
    fewer wavefronts to store the tile, else none (at BK = 16 the two float4 runs of a
    work-item are 8 rows of the tile apart, which no multiple of 4 moves to other
    banks: padded, the rows only cost registers, 157 against 127 from NVIDIA's
    compiler on an H100 at 128x128x16/8x8)."""
    if pad == 0:
        return 0
    padded = _store_wavefronts(_Shape(bm, bn, bk, tm, tn, pad))
    return pad if padded < _store_wavefronts(_Shape(bm, bn, bk, tm, tn, 0)) else 0


def _guard(ok: str, body: str) -> str:
    """``body`` in its own block, behind ``if (ok)`` where ``ok`` is not empty."""
    return f"{'if (' + ok + ') ' if ok else ''}{{\n{body}\n}}"


def _exact_or(ok: str, exact: str, general: str) -> list[str]:
    """``exact`` where the sizes divide the tiles (EXACT), else ``general``, each behind
    ``ok``."""
    return ["#if EXACT", _guard(ok, exact), "#else", _guard(ok, general), "#endif"]


def _load(p: _Shape, kvar: str, koff: int, into: str) -> list[str]:
    """The k-tile ``kvar + koff`` (``kvar`` a variable or "") into the registers
    ``{into}_a``/``{into}_b``. Where the sizes divide the tiles, each index is a sum
    with its constant last, as Lift writes them (the compiler folds the constant into
    the address)."""
    kt = f"{kvar} + {koff}" if kvar else str(koff)

    def kterm(scale: str) -> str:
        return f" + {kvar} * {scale}" if kvar else ""
    out = []
    for s in range(p.a_per):
        r, rc, c, cc, ok = p.a_run(s)
        row, col = f"{r} + {rc}", f"{c} + {cc}"
        exact = (f"{into}_a[{s}] = ((__global const TA4*)A)[{c} + {r} * (D / 4)"
                 f"{kterm(str(p.bk // 4))} + bi * ({p.bm} * (D / 4)) + "
                 f"({cc} + {rc} * (D / 4) + {koff * p.bk // 4})];")
        ks = [f"min(4 * ({col}) + {u}, D - 1 - ({kt}) * {p.bk})" for u in range(4)]
        out += _exact_or(ok, exact,
                         f"const int r = min(row0 + {row}, COUNT - 1) * D + ({kt}) * {p.bk};"
                         "\n#if A_VEC\n#if KREM == BK\n"
                         f"  const int k = 4 * ({col});\n#else\n"
                         f"  const int k = min(4 * ({col}), D - 4 - ({kt}) * {p.bk});\n#endif\n"
                         f"  {into}_a[{s}] = *(__global const TA4*)&A[r + k];\n#else\n"
                         f"  {into}_a[{s}] = (TA4)(" + ", ".join(f"A[r + {k}]" for k in ks)
                         + ");\n#endif\n")
    for s in range(p.b_per):
        r, rc, c, cc, ok = p.b_run(s)
        row, col = f"{r} + {rc}", f"{c} + {cc}"
        exact = (f"{into}_b[{s}] = ((__global const TB4*)B)[{c} + {r} * (M / 4)"
                 f"{kterm(f'({p.bk} * (M / 4))')} + bj * {p.bn // 4} + "
                 f"({cc} + {rc + koff * p.bk} * (M / 4))];")
        cs = [f"B[k + min(col0 + 4 * ({col}) + {u}, M - 1)]" for u in range(4)]
        out += _exact_or(ok, exact,
                         "\n#if KREM == BK\n"
                         f"  const int k = (({kt}) * {p.bk} + {row}) * M;\n#else\n"
                         f"  const int k = (({kt}) * {p.bk} + min({row}, D - 1 - ({kt}) * "
                         f"{p.bk})) * M;\n#endif\n#if B_VEC\n"
                         f"  {into}_b[{s}] = *(__global const TB4*)&B[k + min(col0 + 4 * ({col}), "
                         "M - 4)];\n#else\n"
                         f"  {into}_b[{s}] = (TB4)(" + ", ".join(cs) + ");\n#endif\n")
    return out


def _store(p: _Shape, buf: str, into: str) -> list[str]:
    """The registers ``{into}_a``/``{into}_b`` into local buffer ``buf``: A transposed,
    one scalar store per element; B one vector store per run."""
    out = []
    for s in range(p.a_per):
        r, rc, c, cc, ok = p.a_run(s)
        base = f"{p.bk * p.sa} * ({buf}) + {c} * {4 * p.sa} + {r}"
        out.append(_guard(ok, " ".join(
            f"l_a[{base} + {cc * 4 * p.sa + rc + u * p.sa}] = {into}_a[{s}].s{u};"
            for u in range(4))))
    for s in range(p.b_per):
        r, rc, c, cc, ok = p.b_run(s)
        out.append(_guard(ok, f"((__local TB4*)l_b)[{p.bk * p.bn // 4} * ({buf}) + {r} * "
                              f"{p.bn // 4} + {c} + {rc * p.bn // 4 + cc}] = {into}_b[{s}];"))
    return out


def _step(p: _Shape, buf: str, q: int, first: bool) -> list[str]:
    """k-step ``q`` of the k-tile in local buffer ``buf``: A's and B's fragments as
    vectors, then TM x TN ``acc = REDUCE(acc, ZIP(a, b))`` on their components
    (``first``: the k that starts the reduction)."""
    va, vb = _vtype("TA", p.ra), _vtype("TB", p.rb)
    na, nb = p.tm // p.ra, p.tn // p.rb
    out = [f"{va} fa{q}[{na}];"]
    for h in range(na):
        out.append(f"fa{q}[{h}] = ((__local {va}*)l_a)[{p.bk * p.sa // p.ra} * ({buf}) + ty + "
                   f"{q * p.sa // p.ra + h * p.ly}];")
    out.append(f"{vb} fb{q}[{nb}];")
    for h in range(nb):
        out.append(f"fb{q}[{h}] = ((__local {vb}*)l_b)[{p.bk * p.bn // p.rb} * ({buf}) + tx + "
                   f"{q * p.bn // p.rb + h * p.lx}];")
    for i in range(p.tm):
        a = _comp(f"fa{q}[{i // p.ra}]", p.ra, i % p.ra)
        for j in range(p.tn):
            b = _comp(f"fb{q}[{j // p.rb}]", p.rb, j % p.rb)
            v = f"(TO)ZIP({a}, {b})"
            n = i * p.tn + j
            out.append(f"acc[{n}] = " + (f"START({v});" if first
                                         else f"REDUCE(acc[{n}], {v});"))
    return out


def _phase(p: _Shape, buf: str, first: bool) -> list[str]:
    """The body of k-tile ``l``: the next one's loads, the k-steps of this one (those
    at or past KREM only where this is not the last), the next one's stores
    (``first``: there is no identity, the first k of k-tile 0 starts the reduction:
    a uniform branch between two versions of k-step 0. Peeling k-tile 0 instead, as
    shape ``r`` does, took 153 registers in the clang + ptxas estimate, this 143,
    against 124 with an identity)."""
    out = [f"TA4 ahead_a[{p.a_per}];", f"TB4 ahead_b[{p.b_per}];",
           "if (l + 1 < PHASES) {", *_load(p, "l", 1, "ahead"), "}"]
    for q in range(p.bk):
        step = ["{", *_step(p, buf, q, False), "}"]
        if q == 0:
            out += (["if (l == 0) {", *_step(p, buf, q, True), "} else", *step] if first
                    else step)
        else:    # q < KREM: every k-tile has it; else only those before the last
            out += [f"#if KREM > {q}", *step, "#else", "if (l + 1 < PHASES)", *step,
                    "#endif"]
    out += ["if (l + 1 < PHASES) {", *_store(p, "(l + 1) % 2", "ahead"), "}",
            "barrier(CLK_LOCAL_MEM_FENCE);"]
    return out


def _c_stores(p: _Shape) -> list[str]:
    """C's TM x TN values of the work-item: rows ``RA ty + ro``, columns ``RB tx + co``
    (vector stores where TN >= 4 and VEC_STORE: the index a sum with its constant
    last, as Lift writes it)."""
    out = []
    for i in range(p.tm):
        ro = (i // p.ra) * (p.bm * p.ra // p.tm) + i % p.ra
        out += ["{", f"const int r = row0 + {p.ra} * ty + {ro};"]
        for h in range(p.tn // p.rb):
            co = h * (p.bn * p.rb // p.tn)
            c = f"col0 + {p.rb} * tx + {co}"
            vec = ""
            if p.rb == 4:
                vals = ", ".join(f"acc[{i * p.tn + h * 4 + u}]" for u in range(4))
                index = (f"{p.ra} * ty * (M / 4) + tx + bi * ({p.bm} * (M / 4)) + "
                         f"bj * {p.bn // 4} + ({ro} * (M / 4) + {co // 4})")
                vec = (f"if (EXACT || (r < COUNT && {c} < M)) ((__global TO4*)C)[{index}] = "
                       f"(TO4)({vals});\n")
            scal = "\n".join(f"if (EXACT || (r < COUNT && {c} + {u} < M)) "
                             f"C[r * M + {c} + {u}] = acc[{i * p.tn + h * p.rb + u}];"
                             for u in range(p.rb))
            out.append(f"#if VEC_STORE\n{vec}#else\n{scal}\n#endif" if vec else scal)
        out.append("}")
    return out


def _indent(lines: list[str]) -> str:
    text, depth = [], 1
    for block in lines:
        for line in block.split("\n"):
            s = line.strip()
            if not s:
                continue
            if s.startswith("}"):
                depth -= 1
            text.append(s if s.startswith("#") else "  " * depth + s)
            if s.endswith("{"):
                depth += 1
    return "\n".join(text) + "\n"


@functools.cache
def lift_source(bm: int, bn: int, bk: int, tm: int, tn: int, pad: int,
                has_identity: bool) -> str:
    """The kernel ``skel_allpairs_zr`` of code shape ``l`` for the tiles (launched on a
    (BN/TN) x (BM/TM) work-group, group (column block, row block)); the sizes and
    types come as macros (see :meth:`AllPairs.zip_reduce_launch`)."""
    p = _Shape(bm, bn, bk, tm, tn, pad)
    body = [f"__local TA l_a[{2 * bk * p.sa}] __attribute__((aligned(32)));",
            f"__local TB l_b[{2 * bk * bn}] __attribute__((aligned(32)));",
            "const int tx = get_local_id(0), ty = get_local_id(1);",
            f"const int tid = ty * {p.lx} + tx;",
            # GROUP block rows numbered together, as shape r (the blocks resident at
            # once share panels of A and B in the L2; on an H100 at 4096 no faster
            # than the grid's own order beyond a run's drift); the build option
            # -DMCL_ALLPAIRS_GROUP=N overrides GROUP (1: the grid's own order)
            "#ifdef MCL_ALLPAIRS_GROUP",
            "#define LGROUP MCL_ALLPAIRS_GROUP",
            "#else",
            "#define LGROUP GROUP",
            "#endif",
            "#if LGROUP > 1",
            f"const int nbn = (M + {bn - 1}) / {bn}, nbm = (COUNT + {bm - 1}) / {bm};",
            "const int bid = get_group_id(1) * nbn + get_group_id(0);",
            "const int per_group = LGROUP * nbn, first_row = (bid / per_group) * LGROUP;",
            "const int rows = min(nbm - first_row, LGROUP);",
            "const int bi = first_row + (bid % per_group) % rows, bj = (bid % per_group) / rows;",
            "#else",
            "const int bi = get_group_id(1), bj = get_group_id(0);",
            "#endif",
            f"const int row0 = bi * {bm}, col0 = bj * {bn};",
            "A += a_off;", "C += c_off;", f"TO acc[{tm * tn}];",
            "#if D == 0 || HAS_ID",
            *(f"acc[{n}] = IDENTITY;" for n in range(tm * tn)), "#endif", "#if D > 0",
            "{", f"TA4 ahead_a[{p.a_per}];", f"TB4 ahead_b[{p.b_per}];",
            *_load(p, "", 0, "ahead"),
            *_store(p, "0", "ahead"), "}", "barrier(CLK_LOCAL_MEM_FENCE);"]
    if has_identity:
        body += ["for (int l = 0; l < PHASES; l++) {", *_phase(p, "l % 2", False), "}"]
    else:   # the first k of k-tile 0 starts the reduction
        body += ["for (int l = 0; l < PHASES; l++) {", *_phase(p, "l % 2", True), "}"]
    body += ["#endif", *_c_stores(p)]
    return (f"#define PHASES ((D + {bk} - 1) / {bk})\n"
            f"#define KREM (D - (PHASES - 1) * {bk})\n"
            "#if !defined(REQD) || REQD\n"
            f"__attribute__((reqd_work_group_size({p.lx}, {p.ly}, 1)))\n#endif\n"
            "__kernel void skel_allpairs_zr(__global const TA* restrict A,\n"
            "                               __global const TB* restrict B,\n"
            "                               __global TO* restrict C, const int a_off,\n"
            "                               const int c_off, const int count_arg)\n{\n"
            + _indent(body) + "}\n")
