"""What the OpenCL target file beside a hardware description (``hopper.target`` next to
``hopper.hdl``) says about the code its compiler makes, for the analyses: the
``[device]`` table (how a float atomicAdd is done, what a built-in function costs) and
whether it copies asynchronously (``[async_copy]``). Without a target file: an empty
table, no asynchronous copies."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any


@functools.lru_cache(maxsize=64)
def _target_table(target_file: str) -> dict[str, Any]:
    """The parsed target file; empty where there is none. One that is there but cannot
    be read (not TOML, not UTF-8, an unknown table) is an ``opencl-bad-target`` error,
    as ``mcl gen`` says it (mcl.opencl.target.read_target_file): the analyses took it
    for no file, and their figures for the level's compiler silently for none."""
    from mcl.opencl.target import read_target_file
    path = Path(target_file)
    return read_target_file(path) if path.is_file() else {}


def target_file(hw) -> Path | None:
    """The target file beside hardware description ``hw`` (None without a file)."""
    file = getattr(hw, "file", None)
    return Path(file).with_suffix(".target") if file else None


def device_settings(hw) -> dict[str, Any]:
    """The ``[device]`` table of the target file of hardware description ``hw``."""
    file = target_file(hw)
    return dict(_target_table(str(file)).get("device") or {}) if file else {}


def positive_setting(hw, name: str) -> float | None:
    """The ``[device]`` figure ``name`` of the target file of ``hw`` where it is a
    positive number (a measured rate, interval or size); None where it is missing or
    not one."""
    v = device_settings(hw).get(name)
    return float(v) if isinstance(v, int | float) and v > 0 else None


def share_range(hw, name: str) -> tuple[float, float] | None:
    """The ``[device]`` pair ``name`` of the target file of ``hw`` where it is two shares
    in [0, 1] (a measured range: the least and the most), sorted; None where it is
    missing or not one."""
    pair = device_settings(hw).get(name)
    if not isinstance(pair, list) or len(pair) != 2 or \
            not all(isinstance(x, int | float) and 0 <= x <= 1 for x in pair):
        return None
    low, high = sorted(float(x) for x in pair)
    return low, high


def async_copies(hw) -> bool:
    """Whether the target file of ``hw`` has an ``[async_copy]`` table: its code copies
    runs of 128 bits from global into local memory asynchronously (mcl.opencl.async_copy)."""
    file = target_file(hw)
    return bool(file) and isinstance(_target_table(str(file)).get("async_copy"), dict)


def lane_groups(hw) -> set[str]:
    """The par_groups that the target file of ``hw`` maps to a loop inside the work-item
    (``ids = "lanes"``: cpu.target's vectors), whose foreach runs however many units it
    has; empty without a target file."""
    file = target_file(hw)
    groups = _target_table(str(file)).get("par_groups") if file else None
    return {g for g, m in (groups or {}).items()
            if isinstance(m, dict) and m.get("ids") == "lanes"}


def builds_for_nvidia(level: str) -> bool:
    """Whether ``level``'s OpenCL target builds for NVIDIA's driver (its target file has
    options for that platform): what the loads of a ``__constant`` pointer
    (mcl.analyses.by_value_reads) and the spills of the time model
    (mcl.analyses.timing_counts.spill_traffic) were measured on. AMD's and the CPUs'
    compilers read such arrays otherwise."""
    from mcl.opencl.by_value import target_of
    target = target_of(level)
    return target is not None and any("NVIDIA" in name for name, _ in target.platform_options)
