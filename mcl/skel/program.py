"""Built OpenCL programs, cached in memory and on disk.

Building a kernel from source takes a driver tens to hundreds of milliseconds;
loading the binary of an earlier build is much faster (the SkelCL chapter measured
at least five times). Binaries are kept in platformdirs' user cache directory
(``MCL_SKEL_CACHE`` overrides it), one file per source, build options and device
(name, driver and platform version)."""

from __future__ import annotations

import hashlib
import os
import re
import time
from collections.abc import Callable
from pathlib import Path

from mcl.diagnostics import McplError

#: (context id, device id, key) -> program
_memory: dict[tuple, object] = {}
#: how the programs of this process were obtained: "memory", "disk", "built"
stats = {"memory": 0, "disk": 0, "built": 0}
#: (how, seconds) of each program obtained from the disk cache or built from source
timings: list[tuple[str, float]] = []


def cache_dir() -> Path:
    env = os.environ.get("MCL_SKEL_CACHE")
    if env:
        return Path(env)
    try:
        import platformdirs
    except ImportError:     # a dependency; without it, the XDG default
        base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
        return Path(base) / "mcl" / "skel"
    return Path(platformdirs.user_cache_dir("mcl")) / "skel"


def cache_key(source: str, options: list[str], dev) -> str:
    ident = "\n".join([source, " ".join(options), dev.name, dev.driver_version,
                       dev.platform.version, dev.version])
    return hashlib.sha256(ident.encode()).hexdigest()


def build(context, dev, source: str, options: list[str],
          on_error: Callable[[str], McplError], use_disk: bool = True):
    """The program of ``source`` built for ``dev``: from memory, from the disk cache,
    or from source (then stored). A failing build becomes ``on_error(log)``."""
    import pyopencl as cl

    from mcl.opencl.device import quiet_build

    key = cache_key(source, options, dev)
    mem_key = (context.int_ptr, dev.int_ptr, key)
    if mem_key in _memory:
        stats["memory"] += 1
        return _memory[mem_key]
    path = cache_dir() / f"{key}.bin"
    program = None
    start = time.perf_counter()
    if use_disk and path.is_file():
        try:
            program = quiet_build(cl.Program(context, [dev], [path.read_bytes()]),
                                      options=options)
            stats["disk"] += 1
            timings.append(("disk", time.perf_counter() - start))
        except (cl.Error, OSError):
            program = None     # a stale or damaged binary: build from source
    if program is None:
        start = time.perf_counter()
        try:
            program = quiet_build(cl.Program(context, source), options=options,
                                  devices=[dev])
        except cl.RuntimeError as e:
            raise on_error(str(e)) from e
        stats["built"] += 1
        timings.append(("built", time.perf_counter() - start))
        if use_disk:
            _store(path, program)
    _memory[mem_key] = program
    return program


def _store(path: Path, program) -> None:
    import pyopencl as cl
    try:
        binary = program.get_info(cl.program_info.BINARIES)[0]
        if not binary:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_bytes(binary)
        os.replace(tmp, path)       # atomic: concurrent processes never read half a file
    except (cl.Error, OSError):
        pass                        # a cache that cannot be written only costs time


def error_lines(log: str) -> list[tuple[int, int, str]]:
    """(line, column, message) of each error in a compiler log (clang, PoCL, NVIDIA)."""
    out = []
    for m in re.finditer(r"(?:^|\s)(?:error: )?\S*?:(\d+):(\d+): (?:error: )?(.*)", log):
        msg = m.group(3).strip()
        if "error" in m.group(0):
            out.append((int(m.group(1)), int(m.group(2)), msg))
    return out
