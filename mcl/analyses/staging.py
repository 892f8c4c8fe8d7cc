"""Register arrays that only carry device memory into on-chip memory: loaded from an
array in device memory, then stored unchanged into an array in an on-chip memory
(matmul hopper_v11's next k-tile of b)::

    for (int u = 0; u < 4; u++) { bNext[4 * h + u] = b3[k1 + bq + bRows * h, bj, 4 * bc + u]; }
    ... the multiply-adds on the current tile ...
    for (int u = 0; u < 4; u++) { l_b[1 - cur, bq + bRows * h, 4 * bc + u] = bNext[4 * h + u]; }

Where the target copies runs of 128 bits from global into local memory asynchronously
(its target file's ``[async_copy]``: the H100's cp.async, mcl.opencl.async_copy), the
copy written straight into the on-chip array where the registers are loaded takes no
registers, and the warps wait for it at the next barrier instead of at the stores
(matmul hopper_v12: 16 registers fewer than v11 and 2% faster at 4096^3, with one
block per SM). The pass names such arrays where both the loads and the stores are runs
of 4 adjacent elements (a direct copy would be 128-bit copies; one element at a time,
a's transposed tile in v11, was 20% slower on the H100: benchmarks/results/perf/round41)
and one block is resident per SM (with two, hopper_v10's, the same step was 4% slower:
the other block hides the loads already).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import sympy

from mcl.analyses.kernel import Access, Kernel
from mcl.analyses.occupancy import occupancy
from mcl.analyses.stats import main_space, register_spaces
from mcl.analyses.target_settings import async_copies
from mcl.analyses.warp_lanes import RUN
from mcl.diagnostics import Diagnostic, info
from mcl.mcpl import ast


@dataclass(frozen=True)
class Staging:
    """A register array that only carries ``source`` into ``target``."""

    name: str
    declaration: ast.Declaration
    source: str
    target: str
    registers: int | None


def staging_arrays(k: Kernel) -> list[Staging]:
    """The register arrays of ``k`` whose every element is loaded from device memory
    and only ever stored unchanged into an on-chip array, in runs of 4 both ways."""
    hw = k.hardware
    regs = register_spaces(hw)
    device = main_space(k)
    by_node = {id(a.node): a for a in k.accesses}
    # for each array element copied by `x[..] = y[..]`, the element on the other side
    other_side: dict[int, ast.Index] = {}
    for n in ast.walk(k.function):
        if isinstance(n, ast.Assign) and n.op == "=" and isinstance(n.target, ast.Index) \
                and isinstance(n.value, ast.Index):
            other_side[id(n.target)], other_side[id(n.value)] = n.value, n.target
    out = []
    for d in k.decls:
        if not d.node.type.is_array:
            continue
        name = d.node.name
        mine = [a for a in k.accesses if a.name == name]
        if not mine or any(a.space not in regs for a in mine):
            continue
        sources, targets = set(), set()
        for a in mine:
            other = by_node.get(id(other_side.get(id(a.node))))
            if other is None or not _run(other):
                break
            if a.write and other.space == device:
                sources.add(other.name)
            elif not a.write and other.space not in regs and other.space != device \
                    and other.space is not None:
                targets.add(other.name)
            else:
                break
        else:
            if len(sources) == 1 and len(targets) == 1:
                count = int(d.elements) if d.elements is not None and d.elements.is_Integer \
                    else None
                out.append(Staging(name, d.node, sources.pop(), targets.pop(), count))
    return out


def _run(a: Access) -> bool:
    """Whether ``a`` moves by one element per iteration of its innermost loop, whose
    trip count is a multiple of 4: a run the generator copies 128 bits at a time."""
    if not a.loops or a.offset is None:
        return False
    lp = a.loops[-1]
    if lp.kind != "for" or lp.var is None or lp.trips is None:
        return False
    trips = sympy.sympify(lp.trips)
    if not trips.is_Integer or int(trips) % RUN:
        return False
    var = next((s for s in sympy.sympify(a.offset).free_symbols if s.name == lp.var), None)
    return var is not None and sympy.expand(sympy.diff(a.offset, var)) == 1


def report(view: Any) -> list[Diagnostic]:
    """A message per staging array of the kernel of ``view`` (mcl.analyses.functions.
    KernelView), where its target copies asynchronously and one block is resident per
    holder (with more, the other blocks' warps run while a block's warps wait for its
    loads, and the copies gain nothing: hopper_v10 with b's tile copied so, two blocks
    per SM, 3.11 ms against 2.99: benchmarks/results/perf/round50)."""
    k, hw = view.num, view.hardware
    if hw is None or not async_copies(hw):
        return []
    found = staging_arrays(k)
    occ = occupancy(view) if found else None
    if occ is None or occ.resident != 1:
        return []
    out = []
    for s in found:
        regs = f" ({s.registers} registers per {k.hardware.executing_unit().name})" \
            if s.registers and k.hardware.executing_unit() is not None else ""
        d = info("feedback-staging",
                 f"'{s.name}' only carries {s.source} into {s.target}{regs}: copied straight "
                 f"into {s.target} where '{s.name}' is loaded, the runs of 4 become "
                 f"asynchronous copies on '{hw.name}', which take no registers and complete "
                 "by the next barrier: the warps then wait for the loads there, not at the "
                 "stores", s.declaration.span,
                 f"write `{s.target}[...] = {s.source}[...]` in place of the loads into "
                 f"'{s.name}' and drop the stores; nothing may read those elements of "
                 f"{s.target} before the next barrier (mcl.opencl.async_copy checks it, "
                 "else the copies stay plain)")
        d.data.update(array=s.name, source=s.source, target=s.target, registers=s.registers)
        out.append(d)
    return out
