"""Code-generation targets: how a leaf level of the hierarchy maps to OpenCL.

A target is a TOML data file ``<leaf>.target`` beside the leaf's hardware
description: the OpenCL address space and barrier fence of each memory space,
whether each par_group's index is a work-group or a work-item id, and a few
device facts (float atomics, local-memory limit). The generator reads only
this and the description; it never tests a level's name.
"""

from __future__ import annotations

import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from mcl.diagnostics import McplError, error
from mcl.hdl.build import suggest

QUALIFIERS = ("__global", "__constant", "__local", "__private")
FENCES = ("CLK_LOCAL_MEM_FENCE", "CLK_GLOBAL_MEM_FENCE",
          "CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE")


@dataclass(frozen=True)
class SpaceMapping:
    qualifier: str
    fence: str


@dataclass(frozen=True)
class AsyncCopy:
    """How a device of one platform copies 128 bits from global to local memory
    without a register in between (``[async_copy]`` of a target file; used by
    :mod:`mcl.opencl.async_copy`): inline assembly taking the local destination's
    32-bit address as ``%0`` and the global source's address as ``%1``, the
    instruction that waits for the thread's copies, and a macro that the compilers
    able to build them define (elsewhere the copies stay plain even if asked for)."""

    platform: str
    copy: str
    wait: str
    compiler_macro: str


@dataclass(frozen=True)
class Target:
    """The OpenCL mapping of one leaf level (see the module docstring)."""

    name: str
    file: str
    spaces: dict[str, SpaceMapping]
    par_groups: dict[str, str]          # par_group -> "group" | "local" | "lanes"
    float_atomic_add: str = "cas"       # "cas" | "native"
    local_memory: int | None = None
    max_work_group_size: int | None = None
    build_options: tuple[str, ...] = ()
    #: platform-name substring -> build options; "{registers}" stands for the 32-bit
    #: registers a work-item may use so that its whole work-group fits on one unit
    platform_options: tuple[tuple[str, tuple[str, ...]], ...] = ()
    async_copy: AsyncCopy | None = None
    hardware: object = field(default=None, compare=False, repr=False)

    def qualifier(self, space: str) -> str:
        return self.spaces[space].qualifier

    def fence(self, space: str) -> str:
        return self.spaces[space].fence


def _bad(file: str, message: str, hint: str | None = None) -> McplError:
    return McplError(error("opencl-bad-target", f"{file}: {message}", hint=hint))


def _target_files(lib):
    """(name, path) of each description of ``lib`` (an mcl.hdl.HardwareLibrary) that has a
    ``.target`` file beside it: the levels code can be generated for."""
    for n in lib.names():
        try:
            file = Path(lib.file(n)).with_suffix(".target")
        except McplError:   # a description that does not load has no target
            continue
        if file.is_file():
            yield n, file


def with_targets(lib) -> str:
    """The levels of ``lib`` code can be generated for, as a list for a message."""
    return ", ".join(n for n, _ in _target_files(lib))


def described_by(device_name: str, search_path: Sequence[str | Path] = ()) -> str | None:
    """The level whose target file says it describes the OpenCL device ``device_name``
    (its ``describes`` list holds a part of the name: "NVIDIA H200"), None where none
    does."""
    from mcl.hdl import hardware_library

    for n, file in _target_files(hardware_library(search_path)):
        try:
            parts = tomllib.loads(file.read_text()).get("describes")
        except (OSError, tomllib.TOMLDecodeError):
            continue    # a target file that does not load describes nothing
        if isinstance(parts, list) and any(isinstance(p, str) and p.lower() in
                                           device_name.lower() for p in parts):
            return n
    return None


def load_target(name: str, search_path: Sequence[str | Path] = ()) -> Target:
    """The target of leaf ``name``: its ``.target`` file beside its description,
    checked against the description (every memory space and par_group mapped)."""
    from mcl.hdl import HardwareLibrary

    lib = HardwareLibrary(search_path)
    hw = lib.get(name)
    file = Path(hw.file).with_suffix(".target")
    if not file.is_file():
        raise McplError(error(
            "opencl-no-target", f"'{name}' has no code-generation target ({file.name} is "
            "missing)", hint=f"generate for a level with a target file ({with_targets(lib)}): "
            "--target LEVEL (from Python: mcl.compile(path, target=LEVEL)), or translate the "
            "kernel to one first: mcl translate --to LEVEL"))
    data = read_target_file(file)
    spaces: dict[str, SpaceMapping] = {}
    for space, m in _table(file, data, "spaces").items():
        m = _entry(file, "spaces", space, m, ("qualifier", "fence"),
                   '{ qualifier = "__global", fence = "CLK_GLOBAL_MEM_FENCE" }')
        if "qualifier" not in m:
            raise _bad(str(file), f"memory space '{space}' has no qualifier",
                       hint="give one of " + ", ".join(QUALIFIERS))
        q, f = m.get("qualifier"), m.get("fence", "CLK_LOCAL_MEM_FENCE")
        if q not in QUALIFIERS:
            raise _bad(str(file), f"memory space '{space}': qualifier {q!r} is not one of "
                       + ", ".join(QUALIFIERS))
        if f not in FENCES:
            raise _bad(str(file), f"memory space '{space}': fence {f!r} is not one of "
                       + ", ".join(FENCES))
        spaces[space] = SpaceMapping(q, f)
    groups: dict[str, str] = {}
    for g, m in _table(file, data, "par_groups").items():
        ids = _entry(file, "par_groups", g, m, ("ids",), '{ ids = "group" }').get("ids")
        if ids not in ("group", "local", "lanes"):
            raise _bad(str(file), f"par_group '{g}': ids must be \"group\", \"local\" or "
                       "\"lanes\" (a loop inside the work-item, see mcl.opencl.lanes)")
        groups[g] = ids
    for s in hw.memory_spaces():
        if s.name not in spaces:
            raise _bad(str(file), f"memory space '{s.name}' of {name}.hdl has no mapping",
                       hint=f'add `{s.name} = {{ qualifier = "__global", fence = '
                            '"CLK_GLOBAL_MEM_FENCE" }` under [spaces]')
    kinds = []
    for g in hw.par_groups():
        if g.name not in groups:
            raise _bad(str(file), f"par_group '{g.name}' of {name}.hdl has no mapping",
                       hint=f'add `{g.name} = {{ ids = "group" }}` under [par_groups]')
        kinds.append(groups[g.name])
    # Work-group ids must be outside work-item ids: OpenCL has one level of groups.
    if "local" in kinds and "group" in kinds[kinds.index("local"):]:
        raise _bad(str(file), "a par_group mapped to work-group ids lies inside one mapped "
                   "to work-item ids")
    if "lanes" in kinds and any(k != "lanes" for k in kinds[kinds.index("lanes"):]):
        raise _bad(str(file), "a par_group mapped to lanes must be the innermost: the lanes "
                   "are a loop inside one work-item")
    dev = _table(file, data, "device")
    fa = dev.get("float_atomic_add", "cas")
    if fa not in ("cas", "native"):
        raise _bad(str(file), "float_atomic_add must be \"cas\" or \"native\"")
    ac = data.get("async_copy")
    async_copy = None
    if ac is not None:
        keys = ("platform", "copy", "wait", "compiler_macro")
        if not isinstance(ac, dict) or not all(isinstance(ac.get(k), str) and ac.get(k)
                                               for k in keys):
            raise _bad(str(file), "[async_copy] needs the strings " + ", ".join(keys),
                       hint='e.g. platform = "NVIDIA", copy = "cp.async.cg.shared.global '
                            '[%0], [%1], 16;", wait = "cp.async.wait_all;", compiler_macro = '
                            '"__NVPTX__"')
        async_copy = AsyncCopy(*(ac[k] for k in keys))
    platforms = []
    for k, v in _table(file, data, "platform").items():
        v = _entry(file, "platform", k, v, ("build_options",),
                   '{ build_options = ["-cl-nv-maxrregcount={registers}"] }')
        platforms.append((k, _options(file, f"[platform.{k}] build_options", v)))
    return Target(name=name, file=str(file), spaces=spaces, par_groups=groups,
                  float_atomic_add=fa, local_memory=_count(file, dev, "local_memory"),
                  max_work_group_size=_count(file, dev, "max_work_group_size"),
                  build_options=_options(file, "[device] build_options", dev),
                  platform_options=tuple(platforms), async_copy=async_copy, hardware=hw)


#: the tables and keys a target file may have at its top level
_TOP = ("describes", "spaces", "par_groups", "device", "async_copy", "platform")

#: the keys of the [device] table: the generator's (limits, options, how a float
#: atomicAdd is done) and the analyses' (the compiler's costs and the device's measured
#: rates, mcl.analyses.target_settings); a key the code does not read (a misspelt
#: ``sustained_bandwith``) would leave the figure it meant silently unused
DEVICE_KEYS = (
    "local_memory", "max_work_group_size", "build_options", "float_atomic_add",
    "partial_unroll", "predicated_body", "independent_thread_scheduling",
    "store_line_cycles", "load_line_cycles", "cache_request_rate", "overlap_exponent",
    "issue_overlap_exponent", "issued_share_measured", "uneven_progress_measured",
    "function_costs", "function_costs_relaxed", "block_dispatch_rate",
    "atomic_update_interval", "atomic_unit_bytes", "block_end_spread", "cas_update_seconds",
    "cas_stream_seconds", "launch_seconds", "sustained_bandwidth", "memory_queue_exponent",
)


def read_target_file(file: Path) -> dict:
    """The target file as TOML, every failure to read it an error of the file."""
    try:
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise _bad(str(file), f"not valid TOML: {e}") from None
    except UnicodeDecodeError as e:
        raise _bad(str(file), f"byte 0x{e.object[e.start]:02x} is not UTF-8 text",
                   hint="save the file as UTF-8 (target files are TOML text)") from None
    except OSError as e:
        raise _bad(str(file), f"cannot be read: {e.strerror or e}") from None
    _known(file, data, _TOP, "unknown table or key", "a target file has")
    device = data.get("device")
    if isinstance(device, dict):
        _known(file, device, DEVICE_KEYS, "[device] has no key", "its keys are")
    return data


def _known(file: Path, table: dict, keys: tuple[str, ...], unknown: str, listing: str):
    """An error at the first key of ``table`` that is not one of ``keys`` (``unknown``
    'key'), with the key meant where one is close, else ``listing`` the keys."""
    for key in table:
        if key not in keys:
            close = suggest(key, keys)
            raise _bad(str(file), f"{unknown} '{key}'",
                       hint=f"did you mean '{close}'?" if close else
                       f"{listing} " + ", ".join(keys))


def _table(file: Path, data: dict, key: str) -> dict:
    """The table ``key`` of ``data`` (empty where it is missing)."""
    value = data.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _bad(str(file), f"'{key}' must be a table ([{key}]), not {_toml_kind(value)}")
    return value


def _entry(file: Path, table: str, name: str, value, keys: tuple[str, ...], example: str):
    """Entry ``name`` of ``[table]``: an inline table with no keys but ``keys``."""
    if not isinstance(value, dict):
        raise _bad(str(file), f"[{table}] {name} must be a table, not {_toml_kind(value)}",
                   hint=f"write {name} = {example}")
    _known(file, value, keys, f"[{table}] {name}: unknown key", "it takes")
    return value


def _count(file: Path, dev: dict, key: str) -> int | None:
    """``[device] key``: a positive whole number where it is given."""
    value = dev.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise _bad(str(file), f"[device] {key} must be a positive whole number, not "
                   f"{value!r}")
    return value


def _options(file: Path, what: str, table: dict) -> tuple[str, ...]:
    """``build_options`` of ``table``: a list of strings, each one option."""
    value = table.get("build_options", [])
    if not isinstance(value, list) or not all(isinstance(o, str) for o in value):
        raise _bad(str(file), f"{what} must be a list of strings, not {value!r}",
                   hint='e.g. build_options = ["-cl-mad-enable"]')
    return tuple(value)


def _toml_kind(value) -> str:
    return {bool: "a boolean", int: "a number", float: "a number", str: "a string",
            list: "a list"}.get(type(value), type(value).__name__)


def available_targets(search_path: Sequence[str | Path] = ()) -> list[str]:
    """Names of the descriptions that have a target file."""
    from mcl.hdl import HardwareLibrary

    lib = HardwareLibrary(search_path)
    out = []
    for n in lib.names():
        try:
            f = lib.model(n).file
        except McplError:
            continue
        if f and Path(f).with_suffix(".target").is_file():
            out.append(n)
    return out
