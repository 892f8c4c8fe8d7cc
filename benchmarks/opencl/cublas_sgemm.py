"""Run cuBLAS SGEMM (torch, TF32 off) at n = m = p = SIZE a few times, so that Nsight
Compute can profile the kernel cuBLAS picks for the size: its name (tile, stages,
warps), launch shape, registers and where its warps stall, beside an MCPL version
launched by ncu_matmul.py.

    ncu --set full -k regex:gemm --launch-skip 2 --launch-count 1 \\
        python benchmarks/opencl/cublas_sgemm.py --size 4096
"""

from __future__ import annotations

import argparse
import sys


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    try:
        import torch
    except ImportError:
        print("cublas_sgemm: torch is not installed", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("cublas_sgemm: no CUDA device", file=sys.stderr)
        return 2
    torch.backends.cuda.matmul.allow_tf32 = False
    n = args.size
    a = torch.randn(n, n, device="cuda")
    b = torch.randn(n, n, device="cuda")
    for _ in range(args.repeats):
        a @ b
    torch.cuda.synchronize()
    return 0


if __name__ == "__main__":
    sys.exit(main())
