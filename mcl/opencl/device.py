"""Choosing an OpenCL device and building programs on it, shared by the MCPL
code generator and Lift.

A device is chosen by a specification ``"PLATFORM:DEVICE"`` of case-insensitive
substrings (either part may be empty), from ``--device`` or ``MCL_DEVICE``.
Without one, a GPU is preferred, then any device; PoCL's CPU device is what a
machine without a GPU has."""

from __future__ import annotations

import os
import re
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from mcl.diagnostics import McplError, error

#: Where the NVIDIA driver's OpenCL library usually lies when it is installed.
NVIDIA_LIBRARIES = ("/usr/lib/libnvidia-opencl.so.1",
                    "/usr/lib/x86_64-linux-gnu/libnvidia-opencl.so.1",
                    "/usr/lib64/libnvidia-opencl.so.1")


def _cl():
    try:
        import pyopencl
    except ImportError as e:  # pragma: no cover - a dependency of the package
        raise McplError(error("opencl-missing",
                              f"pyopencl cannot be imported ({e})",
                              hint="install the package again: pip install manycore-levels")) from e
    return pyopencl


@dataclass(frozen=True)
class DeviceInfo:
    platform: str
    name: str
    kind: str            # "GPU", "CPU", "ACCELERATOR"
    compute_units: int
    local_memory: int    # bytes per work-group
    max_work_group_size: int
    global_memory: int
    version: str

    @property
    def spec(self) -> str:
        return f"{self.platform}:{self.name}"


def _kind(dev) -> str:
    cl = _cl()
    t = dev.type
    if t & cl.device_type.GPU:
        return "GPU"
    if t & cl.device_type.ACCELERATOR:
        return "ACCELERATOR"
    return "CPU"


def describe(dev) -> DeviceInfo:
    return DeviceInfo(platform=dev.platform.name.strip(), name=dev.name.strip(), kind=_kind(dev),
                      compute_units=dev.max_compute_units, local_memory=dev.local_mem_size,
                      max_work_group_size=dev.max_work_group_size,
                      global_memory=dev.global_mem_size, version=dev.version.strip())


def all_devices() -> list:
    """Every OpenCL device of every platform (an empty list when there is none)."""
    cl = _cl()
    try:
        platforms = cl.get_platforms()
    except cl.Error:
        return []
    devices = []
    for p in platforms:
        try:
            devices.extend(p.get_devices())
        except cl.Error:
            continue
    return devices


def unregistered_nvidia_library() -> str | None:
    """The path of an NVIDIA OpenCL library that the ICD loader does not list, if any."""
    vendors = Path("/etc/OpenCL/vendors")
    registered = ""
    if vendors.is_dir():
        registered = " ".join(p.read_text(errors="replace") for p in vendors.glob("*.icd"))
    for lib in NVIDIA_LIBRARIES:
        if Path(lib).exists() and "nvidia" not in registered.lower():
            return lib
    return None


def registration_hint() -> str | None:
    lib = unregistered_nvidia_library()
    if lib is None:
        return None
    return (f"the NVIDIA OpenCL driver is installed ({lib}) but not registered; register it with:\n"
            f"  echo {lib} > /etc/OpenCL/vendors/nvidia.icd")


#: what ``mcl devices`` says of a device whose compiler :func:`miscompiles_tiled_kernels`
TILED_DEFECT = ("its compiler (PoCL 5) miscompiles mcl.skel's register-blocked AllPairs "
                "kernel: AllPairs runs a plain kernel there (an element a work-item); "
                "verify MCPL kernels on it (mcl run checks against numpy, mcl versions "
                "against reference.py)")


def miscompiles_tiled_kernels(dev) -> bool:
    """Whether ``dev``'s compiler is known to build mcl.skel's register-blocked AllPairs
    kernel wrong: PoCL 5 (5.0 with LLVM 16, Ubuntu 24.04's, on the GPU machine's host).
    There the kernel gave wrong elements for some tilings and sizes, with its loops marked
    ``#pragma unroll`` (9 of 128 cases of benchmarks/skel/allpairs_check.py, in every
    run, on one thread too) and without them (every element of a 70 x 45 product, from
    the same text that is right in another process: what the kernel computes there
    depends on the process's history), where PoCL 3.1 and NVIDIA's driver build the same
    text right (benchmarks/results/skel/pocl5_allpairs.md). MCPL's generated kernels
    passed the test suite on it (benchmarks/results/gpu_suite/2026-12-01b/)."""
    version = getattr(getattr(dev, "platform", None), "version", "") or ""
    return "PoCL 5." in version


_PROBE_SOURCE = "__kernel void mcl_probe(__global float *a) { a[get_global_id(0)] += 1.0f; }"
_probe_results: dict[int, str | None] = {}


def build_problem(dev) -> str | None:
    """Why ``dev`` cannot build OpenCL programs (None when it can).

    Some driver builds enumerate a device whose compiler does not work on the
    host (a PoCL built for another CPU fails with "unknown target CPU"); a tiny
    build tells, once per process."""
    key = dev.int_ptr
    if key not in _probe_results:
        cl = _cl()
        try:
            quiet_build(cl.Program(cl.Context([dev]), _PROBE_SOURCE))
            _probe_results[key] = None
        except cl.Error as e:
            lines = [ln.strip() for ln in str(e).splitlines() if "error" in ln.lower()]
            _probe_results[key] = (lines[-1] if lines else str(e).splitlines()[0])[:200]
    return _probe_results[key]


def select_device(spec: str | None = None):
    """The device named by ``spec`` (or ``MCL_DEVICE``), else the best available
    that can build programs: a GPU, then an accelerator, then a CPU."""
    from_environment = spec is None and bool(os.environ.get("MCL_DEVICE"))
    spec = spec if spec is not None else os.environ.get("MCL_DEVICE") or None
    devices = all_devices()
    if not devices:
        hint = registration_hint() or ("install an OpenCL driver; on Debian or Ubuntu "
                                       "`apt-get install pocl-opencl-icd` gives a CPU device")
        raise McplError(error("opencl-no-device", "no OpenCL device found", hint=hint))
    if spec:
        plat, _, name = spec.partition(":")
        chosen = [d for d in devices
                  if plat.lower() in d.platform.name.lower() and name.lower() in d.name.lower()]
        if not chosen:
            listing = ", ".join(f"'{describe(d).spec}'" for d in devices)
            hint = f"available devices: {listing}"
            extra = registration_hint()
            if extra:
                hint += "; " + extra
            given = f"'{spec}'"
            if from_environment:   # not on the command line: say where it comes from
                given = f"MCL_DEVICE={given}"
                hint += "; change or unset MCL_DEVICE, or give --device PLATFORM:DEVICE"
            raise McplError(error("opencl-unknown-device",
                                  f"no OpenCL device matches {given}", hint=hint))
        working = [d for d in chosen if build_problem(d) is None]
        return (working or chosen)[0]
    order = {"GPU": 0, "ACCELERATOR": 1, "CPU": 2}
    for dev in sorted(devices, key=lambda d: order[_kind(d)]):
        if build_problem(dev) is None:
            return dev
    problems = "; ".join(f"{describe(d).spec}: {build_problem(d)}" for d in devices)
    raise McplError(error(
        "opencl-no-working-device", f"no OpenCL device can build programs ({problems})",
        hint="on Debian or Ubuntu `apt-get install pocl-opencl-icd` gives a working CPU device"))


@dataclass
class Runtime:
    """A context and a profiling queue on one device."""

    device: object
    context: object
    queue: object

    @property
    def info(self) -> DeviceInfo:
        return describe(self.device)


_runtimes: dict[str, Runtime] = {}


def runtime(spec: str | None = None) -> Runtime:
    """A (cached) context and profiling queue for the device ``spec`` selects."""
    cl = _cl()
    dev = select_device(spec)
    key = describe(dev).spec
    if key not in _runtimes:
        ctx = cl.Context([dev])
        queue = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
        _runtimes[key] = Runtime(dev, ctx, queue)
    return _runtimes[key]


def takes_register_limit(context) -> bool:
    """Whether a register limit applies to programs of ``context``: NVIDIA's driver,
    whose program binaries are PTX."""
    return all("NVIDIA" in d.platform.name for d in context.devices)


def quiet_build(program, **kwargs):
    """``program.build(**kwargs)`` without pyopencl's CompilerWarning for a build whose
    log is not empty (the vendor compiler's remarks on generated code, which are no
    news to the user: a failed build raises with its log all the same), and without the
    tally ("1 error generated.") that PoCL's compiler writes to the process's own
    standard error beside the log."""
    import warnings
    cl = _cl()
    with warnings.catch_warnings(), _without_compiler_tally():
        warnings.simplefilter("ignore", cl.CompilerWarning)
        return program.build(**kwargs)


#: what a compiler writes to standard error at the end of a build, whose log says it all
_TALLY = re.compile(rb"^\d+ (?:errors?|warnings?)(?: and \d+ (?:errors?|warnings?))? generated\.$")


@contextmanager
def _without_compiler_tally():
    """Standard error (the file descriptor: the compiler is a library of the process)
    sent to a temporary file meanwhile, and what it took, less the compilers' tallies,
    written back to it afterwards."""
    import sys
    import tempfile
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError):     # no standard error to take
        yield
        return
    with tempfile.TemporaryFile() as taken:
        os.dup2(taken.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            taken.seek(0)
            kept = [line for line in taken.read().splitlines(keepends=True)
                    if not _TALLY.match(line.strip())]
            if kept:
                os.write(2, b"".join(kept))


def build_program(context, source: str, options: list[str] | None = None,
                  origin: str = "<generated>", line_map=None, max_registers: int | None = None):
    """Build OpenCL ``source``; a build failure becomes a diagnostic with the
    compiler's log. ``line_map(cl_line) -> str | None`` may name the source
    location (e.g. the MCPL line) that an OpenCL line came from. ``max_registers``:
    at most that many registers per work-item on NVIDIA's driver (written into the
    PTX, :func:`mcl.opencl.vendor.rebuild_capped`); other drivers have no such limit."""
    cl = _cl()
    try:
        program = quiet_build(cl.Program(context, source), options=options or [])
        if max_registers is not None and takes_register_limit(context):
            from mcl.opencl import vendor
            program = vendor.rebuild_capped(program, context, max_registers, options or [])
        return program
    except cl.RuntimeError as e:
        log = str(e)
        where = ""
        if line_map is not None:
            # NVIDIA and clang: "<file>:27:24: error: ..."; PoCL: "error: <file>:27:24: ..."
            m = re.search(r":(\d+):\d+: error|error: \S+?:(\d+):\d+:", log)
            if m:
                loc = line_map(int(m.group(1) or m.group(2)))
                if loc:
                    where = f" (from {loc})"
        raise McplError(error("opencl-build-failed",
                              f"the OpenCL compiler rejected the kernel of {origin}{where}:\n{log}",
                              hint="this is usually a bug in the code generator; "
                                   "please report it with the kernel")) from e
