"""The blocks of a hardware description: immutable blocks with spans and the typed
view of each block kind (``ParGroup``, ``Memory``, ``Cache``, ``ExecutionUnit`` ...)
with the properties analyses, translation and code generation read from them.
:mod:`mcl.hdl.model` assembles them into a :class:`~mcl.hdl.model.HardwareDescription`.

Blocks compare by identity: the same block may be placed in several descriptions."""


from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

from mcl.diagnostics import Span
from mcl.hdl import language as L
from mcl.hdl.units import (
    UNLIMITED,
    Count,
    Symbolic,
    Value,
    count_product,
    is_number,
)

# --------------------------------------------------------------------------- statements


@dataclass(frozen=True)
class Property:
    """``name = value;`` with the value normalised (bytes, bytes/s, cycles, Hz)."""

    name: str
    value: Value
    dimension: str
    span: Span


@dataclass(frozen=True)
class Flag:
    name: str
    span: Span


@dataclass(frozen=True)
class Endpoint:
    """One side of ``connects(a, b)``: a path of block names, ``[*]`` = all units."""

    path: tuple[str, ...]
    all_units: bool
    span: Span

    @property
    def text(self) -> str:
        return ".".join(self.path) + ("[*]" if self.all_units else "")


@dataclass(frozen=True)
class Call:
    """An argument statement such as ``slots(thread, 4);``. Subclasses hold the
    arguments in a typed form."""

    name: str
    span: Span


@dataclass(frozen=True)
class SlotsCall(Call):
    par_unit: str
    count: Count
    par_unit_span: Span


@dataclass(frozen=True)
class ConnectsCall(Call):
    endpoints: tuple[Endpoint, ...]


@dataclass(frozen=True)
class SpaceCall(Call):
    space: str
    space_span: Span


@dataclass(frozen=True)
class OpCall(Call):
    """``op((+), 1)`` -> operation '+', 1 cycle; ``op("log", 4)`` -> 'log', 4 cycles."""

    operation: str
    cycles: int | float | Symbolic


@dataclass(frozen=True)
class FeedbackCall(Call):
    function: str


@dataclass(frozen=True, eq=False)
class Placement:
    """A child block as it is placed in its parent: literally (``reference`` is None)
    or by a reference statement such as ``on_chip;`` (``span`` is that statement)."""

    block: Block
    span: Span
    reference: tuple[str, ...] | None = None


# --------------------------------------------------------------------------- blocks


_B = TypeVar("_B", bound="Block")


@dataclass(frozen=True, eq=False)
class Block:
    """A block ``keyword name { ... }`` of a description. ``origin`` is the
    description whose text defines it."""

    kind: str
    name: str
    span: Span
    keyword_span: Span
    origin: str
    properties: tuple[Property, ...] = ()
    calls: tuple[Call, ...] = ()
    flags: tuple[Flag, ...] = ()
    placements: tuple[Placement, ...] = ()
    # properties and argument statements (``slots``) the text gives but the builder
    # rejected, having said why: they are not missing
    rejected: tuple[str, ...] = ()

    @property
    def children(self) -> tuple[Block, ...]:
        return tuple(p.block for p in self.placements)

    def child(self, name: str) -> Block | None:
        for p in self.placements:
            if p.block.name == name:
                return p.block
        return None

    def children_of_kind(self, *kinds: str) -> list[Block]:
        return [b for b in self.children if b.kind in kinds]

    def first_child(self, cls: type[_B]) -> _B | None:
        """The first child block of class ``cls`` (its typed block), or None."""
        return next((b for b in self.children if isinstance(b, cls)), None)

    def prop(self, name: str) -> Property | None:
        for p in self.properties:
            if p.name == name:
                return p
        return None

    def value(self, name: str) -> Value | None:
        p = self.prop(name)
        return p.value if p is not None else None

    def has_flag(self, name: str) -> bool:
        return any(f.name == name for f in self.flags)

    def calls_named(self, name: str) -> list[Call]:
        return [c for c in self.calls if c.name == name]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.kind} {self.name} of {self.origin})"


class Grouping(Block):
    """A ``*_group``: a number of units, exact (``nr_units``) or an upper bound."""

    @property
    def nr_units(self) -> Count | None:
        v = self.value("nr_units")
        return v if isinstance(v, int | Symbolic) and not isinstance(v, bool) else None

    @property
    def max_nr_units(self) -> Count | None:
        v = self.value("max_nr_units")
        return v if isinstance(v, int | Symbolic) and not isinstance(v, bool) else None

    @property
    def size(self) -> Count:
        """The number of units, exact or at most; unlimited if neither is given."""
        n = self.nr_units if self.nr_units is not None else self.max_nr_units
        return n if n is not None else UNLIMITED

    @property
    def exact(self) -> bool:
        return self.nr_units is not None


class _HasSpaces(Block):
    @property
    def memory_spaces(self) -> tuple[MemorySpace, ...]:
        return tuple(b for b in self.children if isinstance(b, MemorySpace))


class Parallelism(_HasSpaces):
    """The ``parallelism`` block (the paper's top-level ParGroup)."""

    @property
    def par_group(self) -> ParGroup | None:
        return self.first_child(ParGroup)


class ParGroup(Grouping, _HasSpaces):
    @property
    def unit(self) -> ParUnit | None:
        return self.first_child(ParUnit)


class ParUnit(_HasSpaces):
    @property
    def par_group(self) -> ParGroup | None:
        return self.first_child(ParGroup)


class MemorySpace(Block):
    @property
    def is_default(self) -> bool:
        return self.has_flag("default")

    @property
    def read_only(self) -> bool:
        return self.has_flag("read_only")

    @property
    def consistency(self) -> str | None:
        v = self.value("consistency")
        return v if isinstance(v, str) else None


class DeviceBlock(Block):
    """``device``, ``device_group``, ``device_unit`` and the base of all device kinds."""

    @property
    def clock_frequency(self) -> float | None:
        v = self.value("clock_frequency")
        return v if is_number(v) else None

    @property
    def feedback_functions(self) -> tuple[str, ...]:
        return tuple(c.function for c in self.calls if isinstance(c, FeedbackCall))


class DeviceGroup(DeviceBlock, Grouping):
    @property
    def unit(self) -> DeviceBlock | None:
        return next((b for b in self.children if b.kind == "device_unit"), None)


class Memory(DeviceBlock):
    @property
    def spaces(self) -> tuple[str, ...]:
        return tuple(c.space for c in self.calls if isinstance(c, SpaceCall))

    @property
    def capacity(self) -> int | float | Symbolic | None:
        v = self.value("capacity")
        return None if isinstance(v, bool | str) else v

    @property
    def nr_banks(self) -> int | None:
        v = self.value("nr_banks")
        return v if isinstance(v, int) and not isinstance(v, bool) else None

    @property
    def addressable(self) -> bool:
        v = self.value("addressable")
        return v is not False

    @property
    def latency(self) -> float | Symbolic | None:
        v = self.value("latency")
        return None if isinstance(v, bool | str) else v

    @property
    def bandwidth(self) -> float | Symbolic | None:
        v = self.value("bandwidth")
        return None if isinstance(v, bool | str) else v

    @property
    def allocation_unit(self) -> int:
        """Bytes in which the memory is handed out (1: byte by byte)."""
        v = self.value("allocation_unit")
        return int(v) if is_number(v) and v >= 1 else 1

    @property
    def reserved(self) -> int:
        """Bytes the system keeps for each resident unit that uses the memory."""
        v = self.value("reserved")
        return int(v) if is_number(v) and v > 0 else 0

    def allocated(self, nbytes: int) -> int:
        """What a request of ``nbytes`` takes: rounded up to the allocation unit."""
        unit = self.allocation_unit
        return -(-nbytes // unit) * unit


class Cache(Memory):
    @property
    def associativity(self) -> int | None:
        """Lines per set (ways); None: not given (the analyses take it as fully associative)."""
        v = self.value("associativity")
        return int(v) if is_number(v) else None

    @property
    def cache_line_size(self) -> int | None:
        v = self.value("cache_line_size")
        return int(v) if is_number(v) else None

    @property
    def sector_size(self) -> int | None:
        """The unit in which lines are fetched (None: whole lines)."""
        v = self.value("sector_size")
        return int(v) if is_number(v) else None


class Interconnect(DeviceBlock):
    @property
    def endpoints(self) -> tuple[Endpoint, ...]:
        return tuple(e for c in self.calls if isinstance(c, ConnectsCall) for e in c.endpoints)

    @property
    def latency(self) -> float | Symbolic | None:
        v = self.value("latency")
        return None if isinstance(v, bool | str) else v

    @property
    def bandwidth(self) -> float | Symbolic | None:
        v = self.value("bandwidth")
        return None if isinstance(v, bool | str) else v

    @property
    def width(self) -> float | None:
        v = self.value("width")
        return v if is_number(v) else None


class _Executing(DeviceBlock):
    @property
    def slots(self) -> tuple[SlotsCall, ...]:
        return tuple(c for c in self.calls if isinstance(c, SlotsCall))

    @property
    def lockstep(self) -> bool:
        """Units of a simd or load-store group execute in lock-step."""
        return self.kind in L.LOCKSTEP_KINDS


class ExecutionGroup(_Executing, Grouping):
    """``execution_group``, ``simd_group`` or ``load_store_group``."""

    @property
    def unit(self) -> ExecutionUnit | None:
        return self.first_child(ExecutionUnit)


class ExecutionUnit(_Executing):
    """``execution_unit``, ``simd_unit`` or ``load_store_unit``."""

    @property
    def instructions(self) -> Instructions | None:
        return self.first_child(Instructions)


class Instructions(DeviceBlock):
    @property
    def operations(self) -> tuple[OpCall, ...]:
        return tuple(c for c in self.calls if isinstance(c, OpCall))

    def cycles(self, operation: str) -> int | float | Symbolic | None:
        for op in self.operations:
            if op.operation == operation:
                return op.cycles
        return None


#: block keyword -> model class
BLOCK_CLASSES: dict[str, type[Block]] = {
    "parallelism": Parallelism, "memory_space": MemorySpace,
    "par_group": ParGroup, "par_unit": ParUnit,
    "device": DeviceBlock, "device_group": DeviceGroup, "device_unit": DeviceBlock,
    "memory": Memory, "cache": Cache, "interconnect": Interconnect,
    "execution_group": ExecutionGroup, "simd_group": ExecutionGroup,
    "load_store_group": ExecutionGroup,
    "execution_unit": ExecutionUnit, "simd_unit": ExecutionUnit, "load_store_unit": ExecutionUnit,
    "instructions": Instructions,
}


# --------------------------------------------------------------------------- query results


@dataclass(frozen=True)
class DevicePosition:
    """Where a block sits in the device tree: its ancestors (device first) and how
    many instances of it exist (the product of the enclosing groups' sizes)."""

    block: Block
    ancestors: tuple[Block, ...]
    instances: Count

    @property
    def path(self) -> tuple[str, ...]:
        return tuple(b.name for b in self.ancestors) + (self.block.name,)


@dataclass(frozen=True)
class Slots:
    """``slots(par_unit, per_holder)`` on ``holder``; there are ``holders`` instances
    of the holder, so ``total`` units can be resident in the whole device."""

    par_unit: str
    holder: Block
    per_holder: Count
    holders: Count
    span: Span

    @property
    def total(self) -> Count:
        return count_product([self.per_holder, self.holders])


@dataclass(frozen=True)
class MemorySpeed:
    """What the paper's heuristics (section 6.3) know about a memory: the best
    latency and bandwidth of the links to it, its distance in the device tree to the
    executing unit, and its capacity. None where the description says nothing."""

    memory: Memory
    latency: float | None
    bandwidth: float | None
    distance: int
    capacity: float | None
