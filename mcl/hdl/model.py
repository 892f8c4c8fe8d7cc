"""The model of a hardware description: :class:`HardwareDescription` (its blocks are
in :mod:`mcl.hdl.blocks`) with the queries that analyses, translation and code
generation ask of a level ("which memories hold this space?", "how many slots for
warps?"). References are resolved: a block placed by ``perfect.hierarchy.threads;``
is the very block of ``perfect``.

Blocks compare by identity: the same block may be placed in several descriptions."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from mcl.diagnostics import McplError, Span, error
from mcl.hdl import language as L
from mcl.hdl.blocks import (
    Block,
    Cache,
    DeviceBlock,
    DevicePosition,
    ExecutionUnit,
    FeedbackCall,
    Grouping,
    Instructions,
    Interconnect,
    Memory,
    MemorySpace,
    MemorySpeed,
    Parallelism,
    ParGroup,
    ParUnit,
    Slots,
    SlotsCall,
)
from mcl.hdl.units import UNLIMITED, Count, Value, count_key, count_product, is_number


def _num(v) -> float | None:
    if v is UNLIMITED:
        return float("inf")
    return float(v) if is_number(v) else None


# --------------------------------------------------------------------------- the description


@dataclass(frozen=True, eq=False)
class HardwareDescription:
    """A resolved hardware description: its parallelism hierarchy (the programming
    abstractions) and its device tree (the physical machine)."""

    name: str
    parent: str | None
    file: str
    span: Span
    parallelism: Parallelism | None
    device: DeviceBlock | None
    blocks: tuple[Block, ...] = ()     # top-level blocks as written, in order
    parent_span: Span | None = None
    name_span: Span | None = None
    _cache: dict = field(default_factory=dict, repr=False)

    def __repr__(self) -> str:
        return f"HardwareDescription({self.name!r}, parent={self.parent!r}, file={self.file!r})"

    # ----------------------------------------------------------- blocks

    def top_block(self, name: str) -> Block | None:
        return next((b for b in self.blocks if b.name == name), None)

    # ----------------------------------------------------------- parallelism hierarchy

    def par_groups(self) -> list[ParGroup]:
        """The par_groups from the outermost to the innermost."""
        out: list[ParGroup] = []
        g = self.parallelism.par_group if self.parallelism else None
        while g is not None and g not in out:
            out.append(g)
            g = g.unit.par_group if g.unit is not None else None
        return out

    def par_group_path(self, group: ParGroup) -> tuple[str, ...]:
        """The path MCPL names par_group ``group`` by: ``fermi.hierarchy.blocks.block.warps``
        (a property of it follows: ``….warps.max_nr_units``)."""
        assert self.parallelism is not None
        path = [self.name, self.parallelism.name]
        for g in self.par_groups():
            path.append(g.name)
            if g is group:
                break
            if g.unit is not None:
                path.append(g.unit.name)
        return tuple(path)

    def par_units(self) -> list[ParUnit]:
        return [g.unit for g in self.par_groups() if g.unit is not None]

    def par_group(self, name: str) -> ParGroup:
        for g in self.par_groups():
            if g.name == name:
                return g
        raise self._unknown("par_group", name, [g.name for g in self.par_groups()])

    def par_unit(self, name: str) -> ParUnit:
        for u in self.par_units():
            if u.name == name:
                return u
        raise self._unknown("par_unit", name, [u.name for u in self.par_units()])

    def has_par_group(self, name: str) -> bool:
        return any(g.name == name for g in self.par_groups())

    def group_of_unit(self, unit_name: str) -> ParGroup | None:
        return next((g for g in self.par_groups() if g.unit and g.unit.name == unit_name), None)

    def executing_unit(self) -> ParUnit | None:
        """The innermost par_unit: the unit that executes statements."""
        units = self.par_units()
        return units[-1] if units else None

    def executing_group(self) -> ParGroup | None:
        groups = self.par_groups()
        return groups[-1] if groups else None

    def scopes(self) -> list[Parallelism | ParGroup | ParUnit]:
        """parallelism, then each par_group and its par_unit, outermost first."""
        out: list[Parallelism | ParGroup | ParUnit] = []
        if self.parallelism is not None:
            out.append(self.parallelism)
        for g in self.par_groups():
            out.append(g)
            if g.unit is not None:
                out.append(g.unit)
        return out

    def memory_spaces(self) -> list[MemorySpace]:
        """All memory spaces, outermost scope first."""
        return [ms for scope in self.scopes() for ms in scope.memory_spaces]

    def has_memory_space(self, name: str) -> bool:
        return any(ms.name == name for ms in self.memory_spaces())

    def memory_space(self, name: str) -> MemorySpace:
        for ms in self.memory_spaces():
            if ms.name == name:
                return ms
        raise self._unknown("memory_space", name, [m.name for m in self.memory_spaces()])

    def owner_of(self, space_name: str) -> ParGroup | ParUnit | None:
        """The par_group or par_unit that declares a memory space; None for the top
        level (the parallelism block). Raises McplError for an unknown space."""
        for scope in self.scopes():
            if any(ms.name == space_name for ms in scope.memory_spaces):
                return None if isinstance(scope, Parallelism) else scope
        raise self._unknown("memory_space", space_name, [m.name for m in self.memory_spaces()])

    def visible_memory_spaces(self, enclosing: Sequence[str] = ()) -> list[MemorySpace]:
        """The memory spaces usable by code nested in foreach loops over the par_groups
        ``enclosing`` (outermost first; only the innermost matters). At the top of a
        function (no foreach) these are the top-level spaces and those of the
        outermost par_group; inside a foreach over group g, also those of g's
        par_unit and of the par_group nested in it."""
        groups = self.par_groups()
        depth = -1
        for name in enclosing:
            for i, g in enumerate(groups):
                if g.name == name:
                    depth = max(depth, i)
        out: list[MemorySpace] = list(self.parallelism.memory_spaces) if self.parallelism else []
        if groups:
            out += groups[0].memory_spaces
        for i in range(depth + 1):
            unit = groups[i].unit
            if unit is not None:
                out += unit.memory_spaces
            if i + 1 < len(groups):
                out += groups[i + 1].memory_spaces
        return out

    def default_memory_space(self, enclosing: Sequence[str] = ()) -> MemorySpace | None:
        """The innermost visible memory space marked ``default`` (None if there is none)."""
        defaults = [ms for ms in self.visible_memory_spaces(enclosing) if ms.is_default]
        return defaults[-1] if defaults else None

    def read_only_spaces(self) -> list[MemorySpace]:
        return [ms for ms in self.memory_spaces() if ms.read_only]

    # ----------------------------------------------------------- device tree

    def device_positions(self) -> list[DevicePosition]:
        """Every block of the device tree with its ancestors and number of instances,
        in depth-first order. A block placed twice appears twice."""
        if "positions" in self._cache:
            return self._cache["positions"]
        out: list[DevicePosition] = []

        def walk(b: Block, ancestors: tuple[Block, ...], instances: Count) -> None:
            if b in ancestors:  # a reference cycle; reported by validation
                return
            out.append(DevicePosition(b, ancestors, instances))
            inner = instances
            if isinstance(b, Grouping):
                inner = count_product([instances, b.size])
            for c in b.children:
                walk(c, ancestors + (b,), inner)

        if self.device is not None:
            walk(self.device, (), 1)
        self._cache["positions"] = out
        return out

    def device_blocks(self, *kinds: str) -> list[Block]:
        """Distinct blocks of the device tree, of the given kinds (all if none)."""
        seen: list[Block] = []
        for pos in self.device_positions():
            if (not kinds or pos.block.kind in kinds) and pos.block not in seen:
                seen.append(pos.block)
        return seen

    def position(self, block: Block) -> DevicePosition | None:
        return next((p for p in self.device_positions() if p.block is block), None)

    def instances_within(self, block: Block, holder: Block) -> int | None:
        """How many instances of ``block`` one ``holder`` contains (1 for the holder
        itself; None if ``block`` is not inside it or a size is not a number)."""
        pos = self.position(block)
        if pos is None:
            return None
        if block is holder:
            return 1
        chain = pos.ancestors
        if not any(a is holder for a in chain):
            return None
        n = 1
        for a in chain[[i for i, a in enumerate(chain) if a is holder][0] + 1:]:
            if isinstance(a, Grouping):
                size = a.size
                if not isinstance(size, int) or isinstance(size, bool):
                    return None
                n *= size
        return n

    def find_device_block(self, path: Sequence[str]) -> Block | None:
        """A device block by a path of names: from a top-level block of this
        description, else from the first block of the device tree with the first name.
        A leading description name (``accelerator.mem``) is skipped."""
        path = list(path)
        if not path:
            return None
        if len(path) > 1 and path[0] == self.name and self.top_block(path[0]) is None:
            path = path[1:]
        starts: list[Block] = []
        top = self.top_block(path[0])
        if top is not None:
            starts.append(top)
        starts += [p.block for p in self.device_positions() if p.block.name == path[0]]
        for start in starts:
            b: Block | None = start
            for name in path[1:]:
                b = b.child(name) if b is not None else None
            if b is not None:
                return b
        return None

    def memories(self) -> list[Memory]:
        """Memories and caches of the device tree."""
        return [b for b in self.device_blocks() if isinstance(b, Memory)]

    def memories_holding(self, space: str) -> list[Memory]:
        """Memories and caches whose ``space(...)`` names the memory space."""
        return [m for m in self.memories() if space in m.spaces]

    def caches_for(self, space: str) -> list[Cache]:
        return [m for m in self.memories_holding(space) if isinstance(m, Cache)]

    def caches(self) -> list[Cache]:
        return [m for m in self.memories() if isinstance(m, Cache)]

    def cache_line_size(self, cache: Cache | str) -> int | None:
        if isinstance(cache, str):
            found = next((c for c in self.caches() if c.name == cache), None)
            if found is None:
                raise self._unknown("cache", cache, [c.name for c in self.caches()])
            cache = found
        return cache.cache_line_size

    def interconnects(self) -> list[Interconnect]:
        return [b for b in self.device_blocks() if isinstance(b, Interconnect)]

    def connected(self, link: Interconnect) -> list[Block]:
        """The blocks an interconnect connects (unresolvable endpoints left out)."""
        out = []
        for e in link.endpoints:
            b = self.find_device_block(e.path)
            if b is not None:
                out.append(b)
        return out

    def links_of(self, block: Block) -> list[Interconnect]:
        return [ic for ic in self.interconnects() if any(b is block for b in self.connected(ic))]

    def slots(self, par_unit: str) -> list[Slots]:
        """Every ``slots(par_unit, k)`` in the device tree, outermost holder first, with
        how many instances of the holder exist (so ``total`` is device-wide)."""
        out = []
        for pos in self.device_positions():
            for c in pos.block.calls:
                if isinstance(c, SlotsCall) and c.par_unit == par_unit:
                    # slots on a group hold units for the whole group
                    out.append(Slots(par_unit, pos.block, c.count, pos.instances, c.span))
        return out

    def max_resident(self, par_unit: str) -> Count | None:
        """How many units of ``par_unit`` the device holds at once: the device-wide
        total of the outermost holder of slots (inner holders, such as ALUs, say how
        many execute in the same cycle). None if nothing has slots for it."""
        slots = self.slots(par_unit)
        return slots[0].total if slots else None

    def lockstep_par_groups(self, load_store_only: bool = False) -> list[ParGroup]:
        """par_groups whose units execute in lock-step: their par_unit has slots in a
        simd group/unit (or a load-store one; only those if ``load_store_only``)."""
        kinds = ("load_store_group", "load_store_unit") if load_store_only else L.LOCKSTEP_KINDS
        names = set()
        for pos in self.device_positions():
            if pos.block.kind not in kinds:
                continue
            # lock-step needs company: a group of more than one unit
            group = pos.block if isinstance(pos.block, Grouping) else \
                (pos.ancestors[-1] if pos.ancestors else None)
            if not isinstance(group, Grouping) or count_key(group.size) <= (0, 1.0):
                continue
            names |= {c.par_unit for c in pos.block.calls if isinstance(c, SlotsCall)}
        return [g for g in self.par_groups() if g.unit is not None and g.unit.name in names]

    def feedback_functions(self) -> list[str]:
        """Names given in ``performance_feedback("name")``, each once, in tree order."""
        out: list[str] = []
        for pos in self.device_positions():
            for c in pos.block.calls:
                if isinstance(c, FeedbackCall) and c.function not in out:
                    out.append(c.function)
        return out

    def clock_frequency(self, block: Block | None = None) -> float | None:
        """The clock of a block: its own ``clock_frequency`` or the nearest enclosing
        one; without a block, the first one in the device tree."""
        if block is None:
            for pos in self.device_positions():
                f = pos.block.value("clock_frequency")
                if is_number(f) and pos.block.kind != "interconnect":
                    return float(f)
            return None
        pos = self.position(block)
        chain = ((pos.ancestors if pos else ()) + (block,))[::-1]
        for b in chain:
            f = b.value("clock_frequency")
            if is_number(f):
                return float(f)
        return None

    def execution_lanes(self) -> list[Slots]:
        """The innermost holders of slots for the executing par_unit: the lanes that
        run it (ALUs, SIMD lanes, cores)."""
        unit = self.executing_unit()
        if unit is None:
            return []
        slots = [s for s in self.slots(unit.name)
                 if s.holder.kind not in ("load_store_group", "load_store_unit")]
        holders = [s for s in slots if isinstance(s.holder, ExecutionUnit)] or slots
        if not holders:
            return []
        depth = {id(p.block): len(p.ancestors) for p in self.device_positions()}
        deepest = max(depth.get(id(s.holder), 0) for s in holders)
        return [s for s in holders if depth.get(id(s.holder), 0) == deepest]

    def peak_flops(self) -> float | None:
        """Peak arithmetic throughput in operations per second: lanes × clock × flops
        per lane and cycle (2 where the lane has a 1-cycle ``fma``/``mad``, else 1 over
        the cycles of ``(+)``). None where lanes or clock are unlimited or unknown."""
        total = 0.0
        for s in self.execution_lanes():
            lanes = s.holders
            if not isinstance(lanes, int):
                return None
            clock = self.clock_frequency(s.holder)
            if clock is None:
                return None
            total += lanes * clock * self._flops_per_cycle(s.holder)
        return total or None

    def _flops_per_cycle(self, lane: Block) -> float:
        instr = self._instructions_near(lane)
        if instr is None:
            return 1.0
        for name in ("fma", "mad"):
            c = instr.cycles(name)
            if is_number(c) and c > 0:
                return 2.0 / float(c)
        c = instr.cycles("+")
        return 1.0 / float(c) if is_number(c) and c > 0 else 1.0

    def _instructions_near(self, block: Block) -> Instructions | None:
        if isinstance(block, ExecutionUnit) and block.instructions is not None:
            return block.instructions
        pos = self.position(block)
        for b in reversed(pos.ancestors if pos else ()):
            if isinstance(b, ExecutionUnit) and b.instructions is not None:
                return b.instructions
        return None

    # ----------------------------------------------------------- speed of memory spaces

    def memory_speed(self, space: str) -> MemorySpeed | None:
        """The best-placed memory holding ``space`` (None if no memory holds it)."""
        holding = self.memories_holding(space)
        # a cache only speeds up the memory behind it: judge the space by that memory
        backing = [m for m in holding if not isinstance(m, Cache)] or holding
        speeds = [self._speed(m) for m in backing]
        if not speeds:
            return None
        return min(speeds, key=lambda s: (s.distance, s.latency or 0.0))

    def _speed(self, m: Memory) -> MemorySpeed:
        latencies = [_num(m.latency)] if m.latency is not None else []
        bandwidths = [_num(m.bandwidth)] if m.bandwidth is not None else []
        for ic in self.links_of(m):
            others = [b for b in self.connected(ic) if b is not m]
            if others and all(b.kind in ("device_group", "device_unit", "device")
                              for b in others):
                continue  # a link to the host (PCIe) says nothing about kernel accesses
            if ic.latency is not None:
                latencies.append(_num(ic.latency))
            if ic.bandwidth is not None:
                bandwidths.append(_num(ic.bandwidth))
        latencies = [x for x in latencies if x is not None]
        bandwidths = [x for x in bandwidths if x is not None]
        return MemorySpeed(m, min(latencies) if latencies else None,
                           max(bandwidths) if bandwidths else None,
                           self._distance_to_executing(m), _num(m.capacity))

    def _distance_to_executing(self, m: Memory) -> int:
        """Tree distance from a memory to the nearest holder of slots for the
        executing par_unit; a memory that is not addressable (registers) counts as
        inside the unit."""
        mpos = self.position(m)
        if mpos is None:
            return 1 << 20
        if not m.addressable:
            return 0
        best = 1 << 20
        for s in self.execution_lanes() or []:
            hpos = self.position(s.holder)
            if hpos is None:
                continue
            a = mpos.ancestors + (m,)
            h = hpos.ancestors + (s.holder,)
            common = 0
            while common < min(len(a), len(h)) and a[common] is h[common]:
                common += 1
            best = min(best, len(a) + len(h) - 2 * common)
        return best

    def is_faster(self, space_a: str, space_b: str) -> bool:
        """Whether memory space ``a`` is faster than ``b`` by the heuristics of paper
        section 6.3: latency, then bandwidth of the links (where both are known), then
        proximity to the executing unit, then capacity (smaller is faster)."""
        return self._compare_spaces(space_a, space_b) < 0

    def _compare_spaces(self, a: str, b: str) -> int:
        sa, sb = self.memory_speed(a), self.memory_speed(b)
        if sa is None or sb is None:
            return 0
        if sa.latency is not None and sb.latency is not None and sa.latency != sb.latency:
            return -1 if sa.latency < sb.latency else 1
        if sa.bandwidth is not None and sb.bandwidth is not None and sa.bandwidth != sb.bandwidth:
            return -1 if sa.bandwidth > sb.bandwidth else 1
        if sa.distance != sb.distance:
            return -1 if sa.distance < sb.distance else 1
        if sa.capacity is not None and sb.capacity is not None and sa.capacity != sb.capacity:
            return -1 if sa.capacity < sb.capacity else 1
        return 0

    def spaces_by_speed(self) -> list[str]:
        """Memory spaces held by some memory, fastest first (ties keep hierarchy order)."""
        import functools

        names = [ms.name for ms in self.memory_spaces() if self.memories_holding(ms.name)]
        return sorted(names, key=functools.cmp_to_key(self._compare_spaces))

    def memory_bandwidth(self, space: str) -> float | None:
        """Bytes per second to the memory holding ``space`` (its own bandwidth or the
        best link to it); None where unlimited or unknown."""
        s = self.memory_speed(space)
        if s is None or s.bandwidth is None or s.bandwidth == float("inf"):
            return None
        return s.bandwidth

    def memory_latency(self, space: str) -> float | None:
        s = self.memory_speed(space)
        if s is None or s.latency is None or s.latency == float("inf"):
            return None
        return s.latency

    # ----------------------------------------------------------- properties by path

    def resolve_property(self, path: str | Sequence[str]) -> Value:
        """The value of a property named by a qualified name as MCPL writes it,
        ``gpu.hierarchy.blocks.block.threads.max_nr_units`` (the description name may
        be left out). Raises McplError if the path does not lead to a property."""
        parts = path.split(".") if isinstance(path, str) else list(path)
        text = ".".join(parts)
        candidates = [parts]
        if parts and parts[0] == self.name:
            candidates.insert(0, parts[1:])
        for cand in candidates:
            if len(cand) < 2:
                continue
            block = self.top_block(cand[0])
            for name in cand[1:-1]:
                block = block.child(name) if block is not None else None
            if block is None:
                continue
            if block.prop(cand[-1]) is not None:
                return block.prop(cand[-1]).value
        raise McplError(error(
            "hdl-unknown-property-path",
            f"'{text}' is not a property of hardware description '{self.name}'",
            None, "write the path of blocks from the description to the property, e.g. "
                  f"{self.name}.hierarchy.<par_group>.max_nr_units"))

    # ----------------------------------------------------------- helpers

    def _unknown(self, what: str, name: str, known: list[str]) -> McplError:
        hint = f"known: {', '.join(known)}" if known else f"this description has no {what}"
        return McplError(error(f"hdl-unknown-{what.replace('_', '-')}",
                               f"hardware description '{self.name}' has no {what} '{name}'",
                               None, hint))

    def walk(self) -> Iterator[Block]:
        """All distinct blocks reachable from the top-level blocks."""
        seen: set[int] = set()
        stack = list(self.blocks)[::-1]
        while stack:
            b = stack.pop()
            if id(b) in seen:
                continue
            seen.add(id(b))
            yield b
            stack.extend(reversed(b.children))
