"""The tables of the HDL language reference (LANGUAGE.md section 1): block keywords,
which block may hold which, which properties and argument statements a block takes,
and the units each property is measured in. The builder and the validator read
these tables; nothing else in the package spells out the HDL vocabulary."""

from __future__ import annotations

from dataclasses import dataclass

from mcl.hdl.units import BYTES, BYTES_PER_S, CYCLES, HZ, NUMBER

PARALLELISM_KINDS = ("parallelism", "memory_space", "par_group", "par_unit")
DEVICE_KINDS = ("device", "device_group", "device_unit", "memory", "cache", "interconnect",
                "execution_group", "execution_unit", "simd_group", "simd_unit",
                "load_store_group", "load_store_unit", "instructions")
BLOCK_KEYWORDS = PARALLELISM_KINDS + DEVICE_KINDS

GROUP_KINDS = ("par_group", "device_group", "execution_group", "simd_group", "load_store_group")
UNIT_OF_GROUP = {g: g.replace("_group", "_unit") for g in GROUP_KINDS}
EXECUTION_GROUPS = ("execution_group", "simd_group", "load_store_group")
EXECUTION_UNITS = ("execution_unit", "simd_unit", "load_store_unit")
LOCKSTEP_KINDS = ("simd_group", "simd_unit", "load_store_group", "load_store_unit")
MEMORY_KINDS = ("memory", "cache")

FLAGS = ("default", "read_only")
CALLS = ("slots", "connects", "space", "op", "performance_feedback")
SYMBOLS = {"unlimited", "countable", "true", "false", "full", "barrier"}


@dataclass(frozen=True)
class PropertySpec:
    """What a property measures: the normalised dimensions it accepts, the unit a
    bare number means (None: a unit is required), and the kinds of value."""

    dimensions: tuple[str, ...]
    bare_unit: str | None
    symbolic: bool = False   # may be unlimited / countable
    boolean: bool = False
    words: tuple[str, ...] = ()


PROPERTIES: dict[str, PropertySpec] = {
    "nr_units": PropertySpec((NUMBER,), "", symbolic=True),
    "max_nr_units": PropertySpec((NUMBER,), "", symbolic=True),
    "capacity": PropertySpec((BYTES,), None, symbolic=True),
    # a time, never unlimited: the analyses would take an unlimited latency for none
    "latency": PropertySpec((CYCLES, "s"), "cycles"),
    "bandwidth": PropertySpec((BYTES_PER_S, "B/cycles"), None, symbolic=True),
    "nr_banks": PropertySpec((NUMBER,), ""),
    "clock_frequency": PropertySpec((HZ,), None),
    "addressable": PropertySpec((), None, boolean=True),
    "cache_line_size": PropertySpec((BYTES,), None),
    "width": PropertySpec((BYTES,), "bit"),
    "consistency": PropertySpec((), None, words=("full", "barrier")),
    # how a memory is handed out: in units of this size (registers per warp, shared
    # memory per block), and what the system keeps per resident unit of its owner
    "allocation_unit": PropertySpec((BYTES,), None),
    # a cache line is fetched in sectors of this size (the unit of a memory transaction)
    "sector_size": PropertySpec((BYTES,), None),
    # lines a set of the cache holds (ways); absent: fully associative
    "associativity": PropertySpec((NUMBER,), ""),
    "reserved": PropertySpec((BYTES,), None),
}

_GROUP_PROPS = {"nr_units", "max_nr_units"}
_MEMORY_PROPS = {"capacity", "nr_banks", "addressable", "latency", "bandwidth", "width",
                 "clock_frequency", "allocation_unit", "reserved"}
_LINK_PROPS = {"latency", "bandwidth", "width", "clock_frequency"}
_EXEC_PROPS = {"clock_frequency", "width"}

#: kind -> properties it may have
ALLOWED_PROPERTIES: dict[str, set[str]] = {
    "parallelism": {"consistency"},
    "memory_space": {"consistency"},
    "par_group": _GROUP_PROPS,
    "par_unit": set(),
    "device": {"clock_frequency"},
    "device_group": _GROUP_PROPS | {"clock_frequency"},
    "device_unit": {"clock_frequency"},
    "memory": _MEMORY_PROPS,
    "cache": _MEMORY_PROPS | {"cache_line_size", "sector_size", "associativity"},
    "interconnect": _LINK_PROPS,
    "execution_group": _GROUP_PROPS | _EXEC_PROPS,
    "simd_group": _GROUP_PROPS | _EXEC_PROPS,
    "load_store_group": _GROUP_PROPS | _EXEC_PROPS,
    "execution_unit": _EXEC_PROPS,
    "simd_unit": _EXEC_PROPS,
    "load_store_unit": _EXEC_PROPS,
    "instructions": set(),
}

#: the feedback functions mcl.analyses provides, by the names performance_feedback("name")
#: gives; a program adds names with mcl.analyses.feedback_function, a plug-in through the
#: entry point group FEEDBACK_ENTRY_POINTS (a test keeps this list equal to the registry)
FEEDBACK_FUNCTIONS = ("shMem", "coalescing", "bankConflicts")
FEEDBACK_ENTRY_POINTS = "mcl.feedback_functions"

_EXEC_CALLS = {"slots", "performance_feedback"}
#: kind -> argument statements it may have
ALLOWED_CALLS: dict[str, set[str]] = {
    "parallelism": set(), "memory_space": set(), "par_group": set(), "par_unit": set(),
    "device": {"performance_feedback"}, "device_group": {"performance_feedback"},
    "device_unit": {"performance_feedback"},
    "memory": {"space"}, "cache": {"space"},
    "interconnect": {"connects"},
    **{k: _EXEC_CALLS for k in EXECUTION_GROUPS + EXECUTION_UNITS},
    "instructions": {"op"},
}

#: kind -> flags it may have
ALLOWED_FLAGS: dict[str, set[str]] = {k: set() for k in BLOCK_KEYWORDS}
ALLOWED_FLAGS["memory_space"] = {"default", "read_only"}


@dataclass(frozen=True)
class Nesting:
    """One row of the nesting table: ``inner`` blocks in a block of kind ``outer``."""

    inner: tuple[str, ...]
    required: bool
    multiple: bool


_DEVICE_CHILDREN = ("memory", "cache", "interconnect", "execution_group", "device_group")
#: outer kind -> its rows (LANGUAGE.md, "Nesting rules")
NESTING: dict[str, tuple[Nesting, ...]] = {
    "parallelism": (Nesting(("par_group",), True, False),
                    Nesting(("memory_space",), True, True)),
    "par_group": (Nesting(("par_unit",), True, False), Nesting(("memory_space",), False, True)),
    "par_unit": (Nesting(("memory_space",), False, True), Nesting(("par_group",), False, False)),
    "memory_space": (),
    "device": (Nesting(_DEVICE_CHILDREN, False, True),),
    "device_unit": (Nesting(_DEVICE_CHILDREN, False, True),),
    "device_group": (Nesting(("device_unit",), True, False),),
    "execution_group": (Nesting(("execution_unit",), True, False),),
    "simd_group": (Nesting(("simd_unit",), True, False),),
    "load_store_group": (Nesting(("load_store_unit",), True, False),),
    "execution_unit": (Nesting(("memory", "cache", "execution_group", "load_store_group",
                                "simd_group"), False, True),
                       Nesting(("instructions",), False, False)),
    "simd_unit": (Nesting(("instructions",), True, False),),
    "load_store_unit": (Nesting(("instructions",), True, False),),
    "memory": (), "cache": (), "interconnect": (), "instructions": (),
}


def allowed_children(kind: str) -> set[str]:
    return {k for row in NESTING.get(kind, ()) for k in row.inner}


def parents_allowing(kind: str) -> list[str]:
    """The block kinds that may hold a block of ``kind`` (for hints)."""
    return [outer for outer, rows in NESTING.items()
            if any(kind in row.inner for row in rows)]


def kinds_with_property(name: str) -> list[str]:
    return [k for k, props in ALLOWED_PROPERTIES.items() if name in props]


def kinds_with_call(name: str) -> list[str]:
    return [k for k, calls in ALLOWED_CALLS.items() if name in calls]
