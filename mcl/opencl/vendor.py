"""The vendor compiler's figures for a generated kernel: on a machine with an NVIDIA
GPU, the kernel is built by NVIDIA's OpenCL driver, whose program binary is PTX;
the CUDA driver (``cuda.bindings``) loads that PTX with the register limit of the
build options and says how many registers, how much shared memory and how much
local memory (spills) the function uses. Without ``cuda.bindings``, ``ptxas -v``
(from the CUDA toolkit) is asked instead. Where ptxas and cuobjdump are at hand, the
SASS says how many bytes a warp keeps in flight (mcl.opencl.sass), which the time
model's latency part then uses. Without an NVIDIA device: None, and the analyses use
their estimate (and say "estimated").

    resources_of(path_or_module, values, level=None) -> {function: Resources}

NVIDIA's OpenCL driver ignores a register limit given as a build option
(``-cl-nv-maxrregcount``: the same registers at 96, 128 and 255,
benchmarks/results/perf/matmul_maxrregcount_4096.json) but builds a program from its
PTX: :func:`cap_registers` writes the limit into the PTX as ``.maxnreg`` and
:func:`rebuild_capped` builds that (``mcl run --max-registers``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from mcl.analyses.resources import Resources
from mcl.opencl.device import quiet_build

SOURCE = "NVIDIA compiler"
_CTX = None


def nvidia_device() -> Any | None:
    """The first NVIDIA OpenCL device, or None (no pyopencl, no platform, no GPU)."""
    try:
        import pyopencl as cl
        for p in cl.get_platforms():
            if "NVIDIA" in p.name:
                devs = p.get_devices()
                if devs:
                    return devs[0]
    except Exception:  # no ICD loader or no platform: no vendor figures
        return None
    return None


# ------------------------------------------------------------------ the CUDA driver

def driver():
    from cuda.bindings import driver as cu
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
    """The primary context of CUDA device 0, made current."""
    global _CTX
    cu = driver()
    if _CTX is None:
        check(cu.cuInit(0))
        _CTX = check(cu.cuDevicePrimaryCtxRetain(check(cu.cuDeviceGet(0))))
    check(cu.cuCtxSetCurrent(_CTX))
    return _CTX


def max_registers(options: list[str] | tuple[str, ...]) -> int | None:
    """The register limit the OpenCL build options give (-cl-nv-maxrregcount=N)."""
    for o in options:
        m = re.fullmatch(r"-cl-nv-maxrregcount=(\d+)", o)
        if m:
            return int(m.group(1))
    return None


class Loaded:
    """A PTX module loaded by the CUDA driver and the figures of one function."""

    def __init__(self, module, function):
        cu = driver()
        self.module, self.function = module, function
        A = cu.CUfunction_attribute  # noqa: N806

        def attr(a):
            return int(check(cu.cuFuncGetAttribute(a, function)))
        self.registers = attr(A.CU_FUNC_ATTRIBUTE_NUM_REGS)
        self.shared_bytes = attr(A.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)
        self.local_bytes = attr(A.CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)
        self.const_bytes = attr(A.CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES)
        self.max_threads = attr(A.CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)

    def occupancy(self, block_threads: int) -> int:
        """Resident blocks per SM by the CUDA occupancy calculator."""
        context()
        return int(check(driver().cuOccupancyMaxActiveBlocksPerMultiprocessor(
            self.function, block_threads, 0)))

    def unload(self) -> None:
        check(driver().cuModuleUnload(self.module))


def load(ptx: bytes, kernel: str, maxrreg: int | None) -> Loaded:
    """Load PTX as the OpenCL driver builds it (the same register limit)."""
    cu = driver()
    context()
    if not ptx.endswith(b"\0"):
        ptx = ptx + b"\0"
    opts, vals = [], []
    if maxrreg is not None:
        opts.append(cu.CUjit_option.CU_JIT_MAX_REGISTERS)
        vals.append(maxrreg)
    module = check(cu.cuModuleLoadDataEx(ptx, len(opts), opts, vals))
    return Loaded(module, check(cu.cuModuleGetFunction(module, kernel.encode())))


# ------------------------------------------------------------------ a register limit

_ENTRY = re.compile(r"(\.entry\s+[A-Za-z_$][\w$]*\s*\([^)]*\))((?:\s*\.(?:maxnreg|reqntid|maxntid|"
                    r"minnctapersm)\b[^\n{]*)*)")


#: the register limits per work-item a kernel may be given (ptxas's range)
REGISTER_LIMITS = (16, 255)


def cap_registers(ptx: str, limit: int) -> str:
    """``ptx`` with ``.maxnreg limit`` on every kernel entry (after its parameters; a
    ``.maxnreg`` already there is replaced), as CUDA's -maxrregcount would do."""
    def one(m: re.Match) -> str:
        kept = re.sub(r"\s*\.maxnreg\s+\d+", "", m.group(2))
        return f"{m.group(1)}\n.maxnreg {limit}{kept}"
    out, n = _ENTRY.subn(one, ptx)
    if n == 0:
        raise ValueError("no kernel entry (.entry) in the PTX")
    return out


def rebuild_capped(program: Any, context: Any, limit: int, options: list[str]) -> Any:
    """The OpenCL ``program`` (built by NVIDIA's driver: its binary is PTX) built again
    from its PTX with at most ``limit`` registers per work-item."""
    import pyopencl as cl
    devices = program.get_info(cl.program_info.DEVICES)
    binaries = [cap_registers(bytes(b).rstrip(b"\0").decode(), limit).encode()
                for b in program.get_info(cl.program_info.BINARIES)]
    return quiet_build(cl.Program(context, devices, binaries), options=options)


# ------------------------------------------------------------------ ptxas

def _ptxas(made: tuple[str, str | None] | None) -> Resources | None:
    """The figures ptxas -v reports of ``made`` (mcl.opencl.sass.sass_of), with the
    bytes in flight its SASS shows."""
    from mcl.opencl.sass import warp_bytes_in_flight
    if made is None:
        return None
    text, _ = made
    regs = re.search(r"Used (\d+) registers", text)
    if regs is None:
        return None
    smem = re.search(r"(\d+) bytes smem", text)
    spill = re.search(r"(\d+) bytes spill stores", text)
    return Resources(int(regs.group(1)), SOURCE, int(smem.group(1)) if smem else None,
                     int(spill.group(1)) if spill else None, warp_bytes_in_flight(made))


# ------------------------------------------------------------------ the entry point

def ptx_of(device: Any, source: str, options: list[str]) -> bytes:
    import pyopencl as cl
    ctx = cl.Context([device])
    prog = quiet_build(cl.Program(ctx, source), options=options, devices=[device])
    return bytes(prog.get_info(cl.program_info.BINARIES)[0])


def resources_of(path_or_module: Any, values: Mapping[str, int] | None = None,
                 level: str | None = None, device: Any = None,
                 specialize: bool = False) -> dict[str, Resources]:
    """The NVIDIA compiler's figures per kernel function of a module at ``level`` (its
    leaf; default each function's own level; ``specialize``: built with the sizes as
    compile-time constants, ``values`` or the parameters' defaults). Empty when there
    is no NVIDIA device, the level has no OpenCL target, or the compiler could not be
    asked."""
    device = device if device is not None else nvidia_device()
    if device is None:
        return {}
    from mcl.opencl.generate import generate
    try:
        kernels = generate(path_or_module, level, specialize=specialize)
    except Exception:  # no target for the level, or a kernel the generator refuses
        return {}
    out: dict[str, Resources] = {}
    platform = device.platform.name
    for k in kernels:
        plan = k.plan
        env = dict(values or {})
        options = [*plan.options_for(platform)]
        for c in plan.compile_time:
            v = env.get(c.name, c.default)
            if v is None:
                break
            options.append(c.option(int(v)))
        else:
            try:
                ptx = ptx_of(device, k.source, options)
            except Exception:  # a build the driver refuses: the estimate stays
                continue
            res = _vendor_figures(ptx, plan.kernel, max_registers(options))
            if res is not None:
                out[k.name] = res
    return out


def _vendor_figures(ptx: bytes, kernel: str, maxrreg: int | None) -> Resources | None:
    """Registers, shared and local memory from the CUDA driver (from ptxas -v without
    it), and the bytes in flight from the SASS where ptxas and cuobjdump are at hand."""
    from mcl.opencl.sass import sass_of, warp_bytes_in_flight
    made = sass_of(ptx, maxrreg)
    try:
        loaded = load(ptx, kernel, maxrreg)
    except Exception:  # no cuda.bindings, or the driver refuses: try ptxas
        return _ptxas(made)
    try:
        return Resources(loaded.registers, SOURCE, loaded.shared_bytes, loaded.local_bytes,
                         warp_bytes_in_flight(made))
    finally:
        loaded.unload()
