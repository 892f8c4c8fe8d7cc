"""The case studies of issue 10: for each kernel of examples/, the problem sizes
of the paper, the quick sizes used to test the benchmark itself, the figure of
merit, and the references of the field (torch / cuBLAS / cuDNN) that are timed
in the same run.

A torch reference is a function ``(torch, args) -> callable`` that moves the
inputs to the GPU once and returns a closure running the reference operation;
the driver times the closure with CUDA events.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

TorchRef = Callable[[Any, dict], Callable[[], Any]]


@dataclass(frozen=True)
class Case:
    """One kernel of the evaluation."""

    kernel: str                         # folder under examples/
    sizes: list[dict]                   # paper sizes (issue 10)
    quick_sizes: list[dict]             # sizes for --quick (PoCL, seconds)
    metric: str                         # "GFLOP/s" or "GB/s": the paper's figure of merit
    torch_refs: dict[str, TorchRef] = field(default_factory=dict)
    #: the torch reference the targets of issue 10 are stated against (None: the copy ceiling)
    primary_ref: str | None = None
    #: an accumulating output must be zero again before the verified run
    accumulates: bool = False


def _cuda(torch, a):
    return torch.from_numpy(a).cuda()


def _matmul(torch, args):
    # The issue measures against cuBLAS without TF32 (exact fp32 products).
    torch.backends.cuda.matmul.allow_tf32 = False
    a, b = _cuda(torch, args["a"]), _cuda(torch, args["b"])
    return lambda: torch.matmul(a, b)


def _conv2d(torch, args):
    import torch.nn.functional as F  # noqa: N812

    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = True  # let cuDNN pick its fastest algorithm
    x = _cuda(torch, args["input"])[None, None]
    w = _cuda(torch, args["filter"])[None, None] / (args["fh"] * args["fw"])
    return lambda: F.conv2d(x, w)


def _bincount(torch, args):
    x = _cuda(torch, args["input"])
    n = int(args["nrBuckets"])
    return lambda: torch.bincount(x, minlength=n)


def _histc(torch, args):
    # histc needs floating-point values; the conversion is not timed.
    x = _cuda(torch, args["input"]).float()
    n = int(args["nrBuckets"])
    return lambda: torch.histc(x, bins=n, min=0, max=n)


def _gesummv(torch, args):
    a, b, x = (_cuda(torch, args[k]) for k in ("A", "B", "x"))
    alpha, beta = float(args["alpha"]), float(args["beta"])
    return lambda: alpha * torch.mv(a, x) + beta * torch.mv(b, x)


def _sgemv(torch, args):
    """One of gesummv's two SGEMV parts (half its traffic)."""
    a, x = _cuda(torch, args["A"]), _cuda(torch, args["x"])
    return lambda: torch.mv(a, x)


def _black_scholes(torch, args):
    s, x, t = (_cuda(torch, args[k]) for k in ("stockPrice", "optionStrike", "optionYears"))
    r, v = float(args["riskFree"]), float(args["volatility"])

    def cnd(d):
        k = 1.0 / (1.0 + 0.2316419 * d.abs())
        c = 0.3989422804 * torch.exp(-0.5 * d * d) * (
            k * (0.31938153 + k * (-0.356563782 + k * (1.781477937
                 + k * (-1.821255978 + k * 1.330274429)))))
        return torch.where(d > 0, 1.0 - c, c)

    def run():
        sq = torch.sqrt(t)
        d1 = (torch.log(s / x) + (r + 0.5 * v * v) * t) / (v * sq)
        d2 = d1 - v * sq
        c1, c2 = cnd(d1), cnd(d2)
        e = torch.exp(-r * t)
        return s * c1 - x * e * c2, x * e * (1.0 - c2) - s * (1.0 - c1)

    return run


def _spmv(torch, args):
    m = torch.sparse_csr_tensor(_cuda(torch, args["rowPtr"]), _cuda(torch, args["colIdx"]),
                                _cuda(torch, args["values"]),
                                size=(int(args["nrRows"]), int(args["nrCols"])))
    x = _cuda(torch, args["x"])
    return lambda: torch.mv(m, x)


def _sum(torch, args):
    x = _cuda(torch, args["input"])
    return lambda: torch.sum(x)


def _add(torch, args):
    a, b = _cuda(torch, args["a"]), _cuda(torch, args["b"])
    return lambda: a + b


CASES: dict[str, Case] = {c.kernel: c for c in [
    Case("matmul",
         sizes=[{"n": 4096, "m": 4096, "p": 4096}, {"n": 2048, "m": 2048, "p": 2048}],
         quick_sizes=[{"n": 64, "m": 64, "p": 256}],
         metric="GFLOP/s", torch_refs={"cuBLAS SGEMM (torch.matmul, no TF32)": _matmul},
         primary_ref="cuBLAS SGEMM (torch.matmul, no TF32)"),
    Case("convolution",
         sizes=[{"h": 4096, "w": 4096, "fh": 9, "fw": 9}],
         quick_sizes=[{"h": 64, "w": 64, "fh": 9, "fw": 9}],
         metric="GFLOP/s", torch_refs={"cuDNN conv2d (torch, no TF32)": _conv2d},
         primary_ref="cuDNN conv2d (torch, no TF32)"),
    Case("histogram",
         sizes=[{"n": 16384 * 16384, "nrBuckets": 256}],
         quick_sizes=[{"n": 10_000, "nrBuckets": 256}],
         metric="GB/s",
         torch_refs={"torch.bincount": _bincount, "torch.histc": _histc},
         primary_ref="torch.bincount", accumulates=True),
    Case("gesummv",
         sizes=[{"n": 4096}],
         quick_sizes=[{"n": 128}],
         metric="GFLOP/s",
         torch_refs={"cuBLAS 2 x SGEMV + axpby (torch.mv)": _gesummv,
                     "cuBLAS 1 x SGEMV (torch.mv, half the work)": _sgemv},
         primary_ref="cuBLAS 2 x SGEMV + axpby (torch.mv)"),
    Case("black_scholes",
         sizes=[{"n": 4_000_000}],
         quick_sizes=[{"n": 10_000}],
         metric="GFLOP/s",
         torch_refs={"torch eager elementwise (information only)": _black_scholes},
         primary_ref=None),
    Case("spmv_csr",
         sizes=[{"nrRows": 65536, "nrCols": 131072, "density": 0.001}],
         quick_sizes=[{"nrRows": 256, "nrCols": 512, "density": 0.02}],
         metric="GFLOP/s", torch_refs={"cuSPARSE CSR matvec (torch.mv)": _spmv},
         primary_ref="cuSPARSE CSR matvec (torch.mv)"),
    Case("reduction",
         sizes=[{"n": 2 ** 28}],
         quick_sizes=[{"n": 100_000}],
         metric="GB/s", torch_refs={"torch.sum": _sum}, primary_ref="torch.sum",
         accumulates=True),
    # Not part of issue 10's list; run it with --kernels vector_add.
    Case("vector_add",
         sizes=[{"n": 2 ** 26}],
         quick_sizes=[{"n": 10_000}],
         metric="GB/s", torch_refs={"torch add": _add}, primary_ref="torch add"),
]}

#: The kernels of issue 10, in the order of the report.
DEFAULT_KERNELS = ["matmul", "convolution", "histogram", "gesummv", "black_scholes",
                   "spmv_csr", "reduction"]
