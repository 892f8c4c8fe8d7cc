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

import numpy as np

from mcl.opencl.vendor import Loaded, check, driver

_ENVREG = re.compile(rb"%envreg(\d+)")


def for_cuda(ptx: bytes) -> bytes:
    """PTX of NVIDIA's OpenCL compiler made launchable by the CUDA driver.

    The OpenCL runtime passes the global work offset (and other launch state) in
    the ``%envreg`` special registers; a CUDA launch leaves them undefined. The
    generated kernels are launched without an offset, so they read as 0. Whether
    the launch then computes what the OpenCL launch does is checked against
    reference.py by the caller."""
    return _ENVREG.sub(b"0", ptx)


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
    """One launch; ``args``: (value, dtype) with dtype None for a device pointer and
    "bytes" for an argument passed by value as its bytes (a struct). Returns the time
    in seconds (CUDA events)."""
    cu = driver()
    g = tuple(grid) + (1,) * (3 - len(grid))
    b = tuple(block) + (1,) * (3 - len(block))
    # the kernel's parameters as the C API takes them: an array of pointers to each
    # (a device pointer as its 64-bit address, a struct as its bytes)
    storage = [ctypes.c_uint64(int(v)) if t is None
               else ctypes.create_string_buffer(bytes(v), len(bytes(v))) if t == "bytes"
               else _CTYPES[t](v) for v, t in args]
    pointers = (ctypes.c_void_p * len(storage))(*(ctypes.addressof(x) for x in storage))
    params = ctypes.addressof(pointers)
    start, stop = check(cu.cuEventCreate(0)), check(cu.cuEventCreate(0))
    check(cu.cuEventRecord(start, 0))
    check(cu.cuLaunchKernel(loaded.function, *g, *b, 0, 0, params, 0))
    check(cu.cuEventRecord(stop, 0))
    check(cu.cuEventSynchronize(stop))
    ms = check(cu.cuEventElapsedTime(start, stop))
    cu.cuEventDestroy(start)
    cu.cuEventDestroy(stop)
    return float(ms) * 1e-3
