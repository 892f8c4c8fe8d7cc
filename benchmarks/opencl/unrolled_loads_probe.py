"""Which iterations' loads of a loop the generator unrolls completely does NVIDIA's
compiler issue together? MCPL kernels shaped as vector_add nvidia_v1 (a grid-stride
loop, inside it ``for (u = 0; u < 4; u++)`` over elements 256 apart), whose body loads
``a[k]``, computes M dependent multiply-adds on it (with ``sqrt`` or a division first,
where asked) and stores ``c[k]``; the body behind ``if (k < n)`` or not, or staged
(every copy's element loaded into a register array first, then the work). Each is
generated for hopper by mcl, built by NVIDIA's OpenCL driver, its PTX through ptxas
-arch=sm_90 and cuobjdump -sass (its loads, stores and branches in sass_lines.txt):
the most loads between two stores or branches (4 and more where the copies' loads come
first, 1 where each copy loads after the previous one's store) and the branches. Also
each kernel's cold time for n = 2^25 (256 MB moved), and its result checked.

black_scholes' SASS on the H100 (raw/sass_2026-11-27/loads_in_flight.txt) has each of
its unrolled options behind a branch, loading after the previous one's stores;
vector_add's and gesummv's copies are predicated, their loads first. The time model's
loads in flight (mcl.analyses.timing_overlap.filled_together) want the rule between.

    python benchmarks/opencl/unrolled_loads_probe.py --out DIR [--device cpu]

Exits 2 without an NVIDIA OpenCL device (``--device cpu``: six of the kernels generated
and run on PoCL, the results checked, no SASS).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from probe_sass import sass_figures  # noqa: E402
from probe_timing import median_time, probe_setup, save  # noqa: E402

TEMPLATE = """module unrolled_loads;

import nvidia;

nvidia void body(const int n = 33554432, global float[n] c, global float[n] a) {{
  const int nrThreads = 256;
  const int unroll = 4;
  const int chunk = unroll * nrThreads;
  const int nrBlocks = min(132 * 8, (n + chunk - 1) / chunk);
  const int stride = chunk * nrBlocks;

  foreach (int bi in nrBlocks blocks) {{
    foreach (int ti in nrThreads threads) {{
      for (int i = bi * chunk + ti; i < n; i += stride) {{
{inner}
      }}
    }}
  }}
}}
"""

#: (multiply-adds, call, guarded)
SHAPES = [(m, None, True) for m in (0, 1, 2, 4, 8, 16, 24, 32, 48, 64)] \
    + [(m, None, False) for m in (0, 8, 32, 64)] \
    + [(m, "sqrt", True) for m in (0, 8)] + [(m, "/", True) for m in (0, 8)] \
    + [(m, "exp", True) for m in (0, 8)]
#: (multiply-adds, call) of the guarded bodies also written staged: every copy's
#: element loaded into a register array first, then the copies' work (what the feedback
#: advises where the copies load one at a time)
STAGED = [(24, None), (32, None), (64, None), (8, "exp")]
#: the shapes the CPU twin checks: one of each kind
CPU_SHAPES = [(0, None, True), (24, None, True), (8, None, False), (8, "sqrt", True),
              (8, "/", True), (8, "exp", True)]
N = 1 << 25


def source(m: int, call: str | None, guarded: bool, staged: bool = False) -> str:
    first = "float v = s[u];" if staged else "float v = a[k];"
    lines = [first]
    if call == "/":
        lines.append("v = 1.0 / (v + 2.0);")
    elif call:
        lines.append(f"v = {call}(v);")
    lines += ["v = v * 0.999 + 0.5;"] * m
    lines.append("c[k] = v;")
    pad = " " * (12 if guarded else 10)
    body = "\n".join(pad + x for x in lines)
    if guarded:
        body = f"          if (k < n) {{\n{body}\n          }}"
    loop = ("        for (int u = 0; u < unroll; u++) {{\n"
            "          int k = i + u * nrThreads;\n{}\n        }}")
    inner = loop.format(body)
    if staged:
        fill = ("          if (k < n) {\n            s[u] = a[k];\n          } else {\n"
                "            s[u] = 0.0;\n          }")
        inner = "        reg float[unroll] s;\n" + loop.format(fill) + "\n" + inner
    return TEMPLATE.format(inner=inner)


def expected(a: np.ndarray, m: int, call: str | None) -> np.ndarray:
    v = a.astype(np.float32)
    if call == "/":
        v = np.float32(1.0) / (v + np.float32(2.0))
    elif call == "sqrt":
        v = np.sqrt(v)
    elif call == "exp":
        v = np.exp(v)
    for _ in range(m):
        v = v * np.float32(0.999) + np.float32(0.5)
    return v


def main() -> int:
    found = probe_setup(__doc__, "unrolled_loads_probe", 10, cpu_twin=True)
    if found is None:
        return 2
    args, dev, ctx, q = found
    cpu = args.device == "cpu"
    n = 1 << 16 if cpu else N
    import pyopencl as cl

    from mcl.opencl.conditions import cache_flush
    from mcl.opencl.generate import generate
    from mcl.opencl.plan import evaluate
    rng = np.random.default_rng(1)
    host = rng.random(n, dtype=np.float32)
    a = cl.Buffer(ctx, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR, hostbuf=host)
    c = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 * n)
    cold = None if cpu else cache_flush(ctx, q)
    work = Path(tempfile.mkdtemp(prefix="unrolled_loads_")) if args.out is None else args.out
    work.mkdir(parents=True, exist_ok=True)
    (work / "sass_lines.txt").unlink(missing_ok=True)   # each run lists its own kernels
    rows = []
    shapes = [(*x, False) for x in (CPU_SHAPES if cpu else SHAPES)] + \
        [(m, call, True, True) for m, call in (STAGED[:1] if cpu else STAGED)]
    for m, call, guarded, staged in shapes:
        stem = f"m{m}_{'staged' if staged else 'guarded' if guarded else 'plain'}" + \
            ("" if call is None else "_" + {"/": "div"}.get(call, call))
        path = work / f"{stem}.mcpl"
        path.write_text(source(m, call, guarded, staged))
        kernel = generate(str(path), "hopper")[0]
        path.unlink()
        plan = kernel.plan
        env = {"n": n}
        local = tuple(evaluate(e, env) for e in plan.local_size)
        groups = tuple(evaluate(e, env) for e in plan.num_groups)
        gsize = tuple(g * loc for g, loc in zip(groups, local, strict=True))
        prog = cl.Program(ctx, kernel.source).build(options=list(plan.options_for(
            dev.platform.name)))
        knl = prog.body
        argv = (np.int32(n), c, a)
        knl(q, gsize, local, *argv).wait()
        got = np.empty(n, np.float32)
        cl.enqueue_copy(q, got, c).wait()
        ok = bool(np.allclose(got, expected(host, m, call), rtol=1e-5, atol=1e-6))
        row = {"multiply_adds": m, "call": call, "guarded": guarded, "staged": staged,
               "correct": ok}
        if not cpu:
            row.update(sass_figures(bytes(prog.get_info(cl.program_info.BINARIES)[0]),
                                    work, stem))
        row["seconds"] = median_time(q, knl, gsize, local, argv, args.repeats, before=cold)
        rows.append(row)
        print(f"{stem:22s} loads together {row.get('loads_together', '-')!s:>3} "
              f"branches {row.get('branches', '-')!s:>3} registers "
              f"{row.get('registers', '-')!s:>3}  {row['seconds'] * 1e6:8.1f} us  "
              f"correct {ok}", flush=True)
    save(args.out, "unrolled_loads_probe.json", {"device": dev.name, "n": n, "rows": rows})
    return 0 if all(r["correct"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
