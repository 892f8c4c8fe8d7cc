"""Estimate the registers of AllPairs zip-reduce kernels without a GPU: the OpenCL C
source MCL builds for a tiling (or a .cl file) compiled by clang to nvptx64 PTX, then
by ptxas for sm_90 (``ptxas -v``). Not NVIDIA's OpenCL compiler: on Lift's best.cl
both give 123 registers, on shape r at 128x128x16/8x8,32x8 clang gives 163 where
NVIDIA's gives 157. Needs clang (15) with the NVPTX target and ptxas on PATH.

    python3 benchmarks/skel/ptx_registers.py 128x128x8/8x8,16x16@l 128x128x16/8x8,32x8
    python3 benchmarks/skel/ptx_registers.py --size 4096 --no-identity 128x128x8/8x8@l
    python3 benchmarks/skel/ptx_registers.py benchmarks/results/lift_mm/best.cl
"""

from __future__ import annotations

import argparse
import collections
import re
import shutil
import subprocess
import sys
import tempfile
import types
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

# what clang's OpenCL C for nvptx64 lacks without libclc: the work-item functions,
# barrier, the vector types and min
HEADER = """typedef float float2 __attribute__((ext_vector_type(2)));
typedef float float4 __attribute__((ext_vector_type(4)));
typedef int int2 __attribute__((ext_vector_type(2)));
typedef int int4 __attribute__((ext_vector_type(4)));
#define get_local_id(n) ((n) == 0 ? __nvvm_read_ptx_sreg_tid_x() : (n) == 1 ? \\
  __nvvm_read_ptx_sreg_tid_y() : __nvvm_read_ptx_sreg_tid_z())
#define get_group_id(n) ((n) == 0 ? __nvvm_read_ptx_sreg_ctaid_x() : (n) == 1 ? \\
  __nvvm_read_ptx_sreg_ctaid_y() : __nvvm_read_ptx_sreg_ctaid_z())
#define barrier(x) __nvvm_bar_sync(0)
#define CLK_LOCAL_MEM_FENCE 1
static inline int min(int a, int b) { return a < b ? a : b; }
"""


def allpairs_source(tile: str, n: int, identity: bool) -> str:
    """The source AllPairs(zip=*, reduce=+) builds for an n x n x n float matmul on one
    device (its ``kernel`` call intercepted)."""
    import mcl.skel as sk
    from mcl.skel.kernel import cname
    mm = sk.AllPairs(zip="float mul(float x, float y) { return x * y; }",
                     reduce="float add(float x, float y) { return x + y; }", tile=tile,
                     identity=0.0 if identity else None)
    got = {}

    def kernel(devs, g, prelude, body, entry, options=()):
        got["source"] = prelude + "".join(
            f"#define {f.name} {cname(f)}\n{f.source}\n#undef {f.name}\n"
            for f in mm.funcs) + body
        raise StopIteration
    mm.kernel = kernel
    ns = types.SimpleNamespace
    devs = ns(device=lambda g: ns(max_work_group_size=1024, local_mem_size=48 * 1024))
    a = ns(ctype="float", dtype=np.dtype(np.float32))
    try:
        mm.zip_reduce_launch(devs, 0, ns(own_lo=0, lo=0), ns(lo=0), a, a,
                             np.dtype(np.float32), n, n, n)
    except StopIteration:
        pass
    return got["source"]


def estimate(source: str, clang: str) -> tuple[str, collections.Counter]:
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        (d / "h.h").write_text(HEADER)
        (d / "k.cl").write_text(source)
        subprocess.run([clang, "-x", "cl", "-cl-std=CL1.2", "-target", "nvptx64-nvidia-cuda",
                        "-O3", "-S", "-include", str(d / "h.h"), "-Xclang",
                        "-fdeclare-opencl-builtins", "-ffp-contract=fast", "-o",
                        str(d / "k.ptx"), str(d / "k.cl")], check=True, capture_output=True)
        ptx = re.sub(r"^\.version .*$", ".version 8.0", (d / "k.ptx").read_text(), flags=re.M)
        (d / "k.ptx").write_text(ptx)
        r = subprocess.run(["ptxas", "-arch=sm_90", "-v", str(d / "k.ptx"), "-o",
                            str(d / "k.cubin")], capture_output=True, text=True, check=True)
    used = re.search(r"Used (\d+) registers", r.stderr + r.stdout)
    mix = collections.Counter(re.findall(r"^\s+([a-z]+(?:\.[a-z0-9]+)*)", ptx, flags=re.M))
    return (used.group(1) if used else "?"), mix


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("what", nargs="+", help="tile strings (as tile=) or .cl files")
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--no-identity", action="store_true")
    ap.add_argument("--mix", action="store_true", help="also the PTX instruction counts")
    args = ap.parse_args()
    clang = next((c for c in ("clang", "clang-15", "clang-16", "clang-17", "clang-18")
                  if shutil.which(c)), None)
    if clang is None or shutil.which("ptxas") is None:
        print("needs clang (NVPTX target) and ptxas on PATH", file=sys.stderr)
        return 2
    for w in args.what:
        src = Path(w).read_text() if w.endswith(".cl") else \
            allpairs_source(w, args.size, not args.no_identity)
        regs, mix = estimate(src, clang)
        print(f"{w}: {regs} registers")
        if args.mix:
            print("   ", " ".join(f"{k}:{v}" for k, v in mix.most_common(16)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
