"""The NVIDIA side of the fidelity harness: the PTX that NVIDIA's OpenCL compiler
made of a generated kernel, loaded with the CUDA driver (``cuda.bindings``), its
resources (registers, shared memory, spills), the CUDA occupancy calculator's
resident blocks, and launches of the same PTX (for ``ncu``, which does not see
OpenCL kernels).

Nothing here is imported without a GPU: the harness says so and exits first.
"""

from __future__ import annotations

import ctypes
import re
from dataclasses import dataclass

import numpy as np

_CTX = None


def driver():
    from cuda.bindings import driver as cu  # the GPU machine has cuda-python
    return cu


def check(result):
    """Unpack a cuda-python result tuple; raise with the driver's message on error."""
    cu = driver()
    err, *rest = result if isinstance(result, tuple) else (result,)
    if err != cu.CUresult.CUDA_SUCCESS:
        _, name = cu.cuGetErrorString(err)
        raise RuntimeError(f"{err.name}: {name.decode() if name else ''}".strip())
    if not rest:
        return None
    return rest[0] if len(rest) == 1 else tuple(rest)


def context():
    """The primary context of device 0, made current once."""
    global _CTX
    cu = driver()
    if _CTX is None:
        check(cu.cuInit(0))
        dev = check(cu.cuDeviceGet(0))
        _CTX = check(cu.cuDevicePrimaryCtxRetain(dev))
    check(cu.cuCtxSetCurrent(_CTX))
    return _CTX


def max_registers(options: list[str]) -> int | None:
    """The register limit the OpenCL build options give (-cl-nv-maxrregcount=N)."""
    for o in options:
        m = re.fullmatch(r"-cl-nv-maxrregcount=(\d+)", o)
        if m:
            return int(m.group(1))
    return None


@dataclass
class Loaded:
    module: object
    function: object
    registers: int
    shared_bytes: int        # static shared memory (OpenCL __local arrays)
    local_bytes: int         # per-thread local memory: spills and private arrays
    const_bytes: int
    max_threads: int


_ENVREG = re.compile(rb"%envreg(\d+)")


def for_cuda(ptx: bytes) -> bytes:
    """PTX of NVIDIA's OpenCL compiler made launchable by the CUDA driver.

    The OpenCL runtime passes the global work offset (and other launch state) in
    the ``%envreg`` special registers; a CUDA launch leaves them undefined. The
    generated kernels are launched without an offset, so they read as 0. Whether
    the launch then computes what the OpenCL launch does is checked against
    reference.py by the caller."""
    return _ENVREG.sub(b"0", ptx)


def load(ptx: bytes, kernel: str, maxrreg: int | None) -> Loaded:
    """Load PTX as the OpenCL driver would build it (same register limit)."""
    cu = driver()
    context()
    if not ptx.endswith(b"\0"):
        ptx = ptx + b"\0"
    opts, vals = [], []
    if maxrreg is not None:
        opts.append(cu.CUjit_option.CU_JIT_MAX_REGISTERS)
        vals.append(maxrreg)
    module = check(cu.cuModuleLoadDataEx(ptx, len(opts), opts, vals))
    fn = check(cu.cuModuleGetFunction(module, kernel.encode()))
    A = cu.CUfunction_attribute

    def attr(a):
        return int(check(cu.cuFuncGetAttribute(a, fn)))
    return Loaded(module, fn, attr(A.CU_FUNC_ATTRIBUTE_NUM_REGS),
                  attr(A.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES),
                  attr(A.CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES),
                  attr(A.CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES),
                  attr(A.CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK))


def occupancy(loaded: Loaded, block_threads: int) -> int:
    """Resident blocks per SM by the CUDA occupancy calculator."""
    cu = driver()
    context()
    return int(check(cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(
        loaded.function, block_threads, 0)))


def unload(loaded: Loaded) -> None:
    check(driver().cuModuleUnload(loaded.module))


_CTYPES = {"float32": ctypes.c_float, "float64": ctypes.c_double, "int32": ctypes.c_int,
           "int64": ctypes.c_longlong, "uint8": ctypes.c_ubyte}


class DeviceArrays:
    """Device buffers for one launch, freed together."""

    def __init__(self):
        self.ptrs = []

    def upload(self, host: np.ndarray):
        cu = driver()
        host = np.ascontiguousarray(host)
        ptr = check(cu.cuMemAlloc(max(host.nbytes, 4)))
        if host.nbytes:
            check(cu.cuMemcpyHtoD(ptr, host.ctypes.data, host.nbytes))
        self.ptrs.append(ptr)
        return ptr

    def zeros(self, nbytes: int):
        cu = driver()
        ptr = check(cu.cuMemAlloc(max(nbytes, 4)))
        check(cu.cuMemsetD8(ptr, 0, max(nbytes, 4)))
        self.ptrs.append(ptr)
        return ptr

    @staticmethod
    def download(ptr, like: np.ndarray) -> np.ndarray:
        out = np.empty_like(like)
        if out.nbytes:
            check(driver().cuMemcpyDtoH(out.ctypes.data, ptr, out.nbytes))
        return out

    def free(self):
        cu = driver()
        for p in self.ptrs:
            cu.cuMemFree(p)
        self.ptrs = []


def launch(loaded: Loaded, grid: tuple[int, ...], block: tuple[int, ...],
           args: list[tuple[object, str | None]]) -> float:
    """One launch; ``args``: (value, dtype) with dtype None for a device pointer.
    Returns the time in seconds (CUDA events)."""
    cu = driver()
    values = tuple(v for v, _ in args)
    types = tuple(None if t is None else _CTYPES[t] for _, t in args)
    g = tuple(grid) + (1,) * (3 - len(grid))
    b = tuple(block) + (1,) * (3 - len(block))
    start, stop = check(cu.cuEventCreate(0)), check(cu.cuEventCreate(0))
    check(cu.cuEventRecord(start, 0))
    check(cu.cuLaunchKernel(loaded.function, *g, *b, 0, 0, (values, types), 0))
    check(cu.cuEventRecord(stop, 0))
    check(cu.cuEventSynchronize(stop))
    ms = check(cu.cuEventElapsedTime(start, stop))
    cu.cuEventDestroy(start)
    cu.cuEventDestroy(stop)
    return float(ms) * 1e-3
