"""HDL, the hardware-description language: grammar (``hdl.tx``), parsing
(:mod:`.syntax`), building and reference resolution (:mod:`.build`), the typed
blocks (:mod:`.blocks`) and the model of a description (:mod:`.model`), validation
(:mod:`.validate`), the parent/child equivalence of paper section 6.1
(:mod:`.hierarchy`) and the library (:mod:`.library`).

Public API (other components code against these names):

* ``HardwareLibrary(search_path=(), files=(), texts=None)``: the bundled descriptions
  of ``mcl/hwdescs`` plus user directories. ``.get(name)`` (validated, raises
  McplError), ``.model(name)`` (built even if invalid), ``.names()``, ``.parent(n)``,
  ``.children(n)``, ``.ancestors(n)``, ``.path(from, to)`` (levels from..to, each
  consecutive pair one translation step), ``.is_descendant(n, ancestor)``,
  ``.leaves()``, ``.roots()``, ``.diagnostics(n)``, ``.all_diagnostics()``,
  ``.is_broken(n)`` (its file does not parse: the name stays in the hierarchy, ``get``
  and ``model`` raise with the syntax error).
* ``load_hardware(name, search_path=())`` and ``hardware_library(search_path=())``: cached
  (``forget_hardware_libraries()`` drops the cache)
  per process and search path.
* ``HardwareDescription`` (``.name``, ``.parent``, ``.file``, ``.span``,
  ``.parallelism``, ``.device``) with the queries ``par_groups()`` (outermost
  first), ``par_group(name)``, ``par_units()``, ``par_unit(name)``,
  ``group_of_unit(name)``, ``executing_unit()``, ``executing_group()``,
  ``memory_spaces()``, ``memory_space(name)``, ``owner_of(space)``,
  ``visible_memory_spaces(enclosing_par_groups)``,
  ``default_memory_space(enclosing_par_groups)``, ``read_only_spaces()``,
  ``memories()``, ``memories_holding(space)``, ``caches()``, ``caches_for(space)``,
  ``cache_line_size(cache)``, ``interconnects()``, ``slots(par_unit)`` -> [Slots],
  ``max_resident(par_unit)``, ``lockstep_par_groups(load_store_only=False)``,
  ``memory_speed(space)``, ``is_faster(a, b)``, ``spaces_by_speed()``,
  ``memory_bandwidth(space)``, ``memory_latency(space)``, ``peak_flops()``,
  ``execution_lanes()``, ``clock_frequency(block=None)``, ``feedback_functions()``,
  ``resolve_property(path)``, ``device_positions()``, ``find_device_block(path)``.
* Blocks: ``ParGroup`` (``size``, ``nr_units``, ``max_nr_units``, ``exact``,
  ``unit``, ``memory_spaces``), ``ParUnit``, ``MemorySpace`` (``is_default``,
  ``read_only``, ``consistency``), ``Memory``/``Cache`` (``spaces``, ``capacity``,
  ``nr_banks``, ``addressable``, ``cache_line_size``), ``Interconnect``,
  ``ExecutionGroup``/``ExecutionUnit`` (``slots``, ``lockstep``), ``Instructions``.
* Sizes: ``UNLIMITED``, ``COUNTABLE`` (``Symbolic``), ``count_key``, ``count_product``.
* Parent/child: ``equivalent_par_groups(parent, child)`` -> [GroupMapping],
  ``equivalent_memory_space(parent, child, space)``.
* ``parse_text(text, file)`` / ``parse_file(path)`` (syntax only) and
  ``check_text(text, file, search_path)`` -> (description or None, diagnostics).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from mcl.diagnostics import Diagnostic, McplError, error
from mcl.hdl import library as _library
from mcl.hdl.blocks import (
    Block,
    Cache,
    DeviceBlock,
    ExecutionGroup,
    ExecutionUnit,
    Instructions,
    Interconnect,
    Memory,
    MemorySpace,
    MemorySpeed,
    Parallelism,
    ParGroup,
    ParUnit,
    Slots,
)
from mcl.hdl.hierarchy import (
    GroupMapping,
    NotEquivalent,
    equivalent_memory_space,
    equivalent_par_groups,
)
from mcl.hdl.library import (
    HardwareLibrary,
    forget_hardware_libraries,
    hardware_library,
)
from mcl.hdl.model import HardwareDescription
from mcl.hdl.syntax import parse_file, parse_text
from mcl.hdl.units import COUNTABLE, UNLIMITED, Symbolic, count_key, count_product


def load_hardware(name: str, search_path: Sequence[str | Path] = ()) -> HardwareDescription:
    """A validated hardware description by name (bundled or from ``search_path``, a list
    of directories). Raises McplError with diagnostics if it is unknown or invalid, and
    TypeError for a name that is no str or a search path that is no list; a file is
    not a name: its directory goes on the search path."""
    _library.require_paths(search_path, "mcl.load_hardware")
    if isinstance(name, os.PathLike) or (isinstance(name, str) and (
            name.endswith(".hdl") or "/" in name or os.sep in name)):
        file = Path(name)
        folder, stem = (file, "NAME") if file.is_dir() else (file.parent, file.stem)
        raise McplError(error(
            "hdl-unknown-description", f"load_hardware takes the name of a hardware "
            f"description, not a {'folder' if file.is_dir() else 'file'}: '{name}'", None,
            f"name the description and put its folder on the search path: "
            f"load_hardware('{stem}', search_path=['{folder}'])"))
    if not isinstance(name, str):
        raise TypeError("mcl.load_hardware: name is the name of a hardware description "
                        f"(a str), not {type(name).__name__} {name!r}")
    return _library.load_hardware(name, search_path)


def check_text(text: str, file: str = "<string>",
               search_path: Sequence[str | Path] = ()) -> tuple[
                   HardwareDescription | None, list[Diagnostic]]:
    """Check the text of one description (an editor buffer) against the library:
    the built description (None after a syntax error) and all its diagnostics."""
    lib = HardwareLibrary(search_path, files=[file], texts={file: text})
    names = lib.descriptions_in(file)
    if not names:
        # once each (a buffer of a file the search path also reads is both), and only
        # this file's: another unreadable file of the folder is not this buffer's problem
        found = lib.broken_in(file) + [d for d in lib.load_diagnostics
                                       if d.span is not None and d.span.file == file]
        return None, list(dict.fromkeys(found))
    diags: list[Diagnostic] = []
    for n in names:
        diags += [d for d in lib.diagnostics(n) if d not in diags]
    return lib.model(names[0]), diags


__all__ = [
    "COUNTABLE", "UNLIMITED", "Block", "Cache", "DeviceBlock", "ExecutionGroup",
    "ExecutionUnit", "GroupMapping", "HardwareDescription", "HardwareLibrary", "Instructions",
    "Interconnect", "Memory", "MemorySpace", "MemorySpeed", "NotEquivalent", "ParGroup",
    "ParUnit", "Parallelism", "Slots", "Symbolic", "check_text", "count_key", "count_product",
    "equivalent_memory_space", "equivalent_par_groups", "forget_hardware_libraries",
    "hardware_library", "load_hardware",
    "parse_file", "parse_text",
]
