"""What NVIDIA's machine code (SASS) of a kernel says of its global loads: how many a
warp issues in a row, and how many bytes it keeps in flight for each time it waits on
the memory's latency.

NVIDIA's OpenCL program binary is PTX; ptxas makes SASS of it and cuobjdump -sass prints
that (both from the CUDA toolkit: :func:`sass_of` says what it could make). The time
model counts a warp's bytes in flight from the kernel (mcl.analyses.timing, Little's
law); where the vendor's compiler was asked (mcl.opencl.vendor), its code's figure,
``Resources.in_flight``, replaces that estimate.

* ``loads_together``: the most LDG between two stores or branches (a loop body's loads,
  whether or not the warp waits between them);
* ``rounds`` of the hot loop (the innermost loop with the most loads; the whole kernel
  where no loop loads): a warp waits one latency when an instruction reads or
  overwrites the register of a load issued since its last such wait (loads complete in
  order, so that wait covers the loads before); ``bytes_a_round``, a warp request of
  128 B per 32-bit load (512 for a 128-bit one) over the rounds, is what the warp keeps
  in flight. Registers reused for the next load, as ptxas does when it keeps the kernel
  at few registers, make more rounds of the same loads (gesummv nvidia_v1: 18 loads in
  3 rounds; benchmarks/results/perf/h200_2026-11-30/row_pieces_unroll/). Of an if-else
  the path with fewer loads counts: the 128-bit load beside its element-by-element
  fallback.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass

_INSN = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(@!?U?P\w+\s+)?([A-Z][\w.]*)\s*([^;]*);")
_PREDICATE = re.compile(r"^!?U?P[0-9T]$")
_REG = re.compile(r"\bR(\d+)(\.64|\.128)?\b")
#: bytes a warp's global load requests for each 32-bit register it loads (32 lanes)
_BYTES = 128


@dataclass(frozen=True)
class Rounds:
    """The hot loop's global loads, and the latencies a warp waits in one iteration."""

    loads: int
    rounds: int
    bytes_a_round: float


def _registers(operand: str) -> set[int]:
    """The general registers an operand names (a ``.64`` pair or ``.128`` quad whole)."""
    out = set()
    for m in _REG.finditer(operand):
        n = {".64": 2, ".128": 4}.get(m.group(2), 1)
        out.update(range(int(m.group(1)), int(m.group(1)) + n))
    return out


@dataclass(frozen=True)
class Insn:
    """An instruction of cuobjdump's text: its address, opcode and operands, and whether
    it is guarded by a predicate (``@P0``) or, a branch, takes one (``BRA !P0, 0x..``)."""

    address: int
    op: str
    args: list[str]
    conditional: bool

    def target(self) -> int | None:
        """A branch's target address."""
        if not self.op.startswith("BRA") or not self.args:
            return None
        m = re.search(r"0x([0-9a-f]+)", self.args[-1])
        return int(m.group(1), 16) if m else None


def instructions(sass: str) -> list[Insn]:
    """Each instruction of cuobjdump's text."""
    out = []
    for line in sass.splitlines():
        m = _INSN.search(line)
        if m:
            args = [a.strip() for a in m.group(4).split(",")] if m.group(4).strip() else []
            out.append(Insn(int(m.group(1), 16), m.group(3), args,
                            bool(m.group(2)) or any(_PREDICATE.match(a) for a in args)))
    return out


def _index(insns: list[Insn], address: int) -> int:
    """The index of the instruction at ``address`` (past the last: their number)."""
    return next((j for j, x in enumerate(insns) if x.address >= address), len(insns))


def hot_loop(insns: list[Insn]) -> tuple[int, int] | None:
    """(first, last) index of the innermost loop (a branch back) with the most LDG."""
    loops = []
    for i, insn in enumerate(insns):
        target = insn.target()
        if target is not None and target < insn.address:
            loops.append((_index(insns, target), i))
    inner = [lp for lp in loops
             if not any(o != lp and lp[0] <= o[0] and o[1] <= lp[1] for o in loops)]
    return max(inner, default=None, key=lambda lp: sum(
        x.op.startswith("LDG") for x in insns[lp[0]:lp[1] + 1]))


def _other_paths(insns: list[Insn], first: int, last: int) -> set[int]:
    """Indices in ``first``..``last`` that a warp skips: of the two paths of an if-else
    (a conditional branch forward over a path that ends in a branch forward over the
    other), the one with more loads, such as the element-by-element fallback beside a
    128-bit load."""
    skipped: set[int] = set()
    for i in range(first, last + 1):
        insn = insns[i]
        target = insn.target()
        if not insn.conditional or target is None or target <= insn.address:
            continue
        x = _index(insns, target)
        join = insns[x - 1]
        end = join.target()
        if x > last or join.conditional or end is None or end <= join.address:
            continue
        y = _index(insns, end)
        if y > last + 1:
            continue
        then, other = range(i + 1, x - 1), range(x, y)
        loads = [sum(insns[k].op.startswith("LDG") for k in r) for r in (then, other)]
        if loads[0] != loads[1]:
            skipped.update(then if loads[0] > loads[1] else other)
    return skipped


def rounds(sass: str) -> Rounds | None:
    """The hot loop's :class:`Rounds`; a kernel without a loop that loads, the whole
    kernel's (None where it loads nothing)."""
    insns = instructions(sass)
    loop = hot_loop(insns)
    if loop is None or not any(x.op.startswith("LDG") for x in insns[loop[0]:loop[1] + 1]):
        loop = (0, len(insns) - 1)
    skipped = _other_paths(insns, *loop)
    pending: list[tuple[set[int], int]] = []    # a load's registers, the round it left in
    waits = loads = 0
    moved = 0.0
    for k in range(loop[0], loop[1] + 1):
        if k in skipped:
            continue
        op, args = insns[k].op, insns[k].args
        touched = set().union(*(_registers(a) for a in args)) if args else set()
        waited = max((i for i, (regs, _) in enumerate(pending) if regs & touched), default=-1)
        if waited >= 0:
            if any(r == waits for _, r in pending[:waited + 1]):
                waits += 1
            del pending[:waited + 1]
        if op.startswith("LDG"):
            width = 4 if ".128" in op else 2 if ".64" in op else 1
            dest = _registers(args[0]) if args else set()
            first = min(dest) if dest else -1
            pending.append((set(range(first, first + width)), waits))
            loads += 1
            moved += _BYTES * width
    if any(r == waits for _, r in pending):    # waited for at the next iteration
        waits += 1
    return Rounds(loads, waits, moved / waits) if loads else None


def loads_together(sass: str) -> tuple[int, int]:
    """(most LDG between two stores or branches, branches)."""
    most = run = branches = 0
    for line in sass.splitlines():
        if "LDG" in line:
            run += 1
            most = max(most, run)
        elif "STG" in line or re.search(r"\bBRA\b", line):
            run = 0
            branches += bool(re.search(r"\bBRA\b", line))
    return most, branches


def sass_of(ptx: bytes, maxrreg: int | None = None) -> tuple[str, str | None] | None:
    """(ptxas -v's report, cuobjdump -sass's text) of PTX as NVIDIA's OpenCL driver
    builds it (its ``.target``, the register limit ``maxrreg``): None without ptxas or
    where it fails; the SASS None without cuobjdump or where that fails (the report,
    its registers, stands)."""
    ptxas, cuobjdump = shutil.which("ptxas"), shutil.which("cuobjdump")
    if ptxas is None:
        return None
    m = re.search(rb"\.target\s+(sm_\d+)", ptx)
    with tempfile.TemporaryDirectory() as d:
        src, cubin = os.path.join(d, "k.ptx"), os.path.join(d, "k.cubin")
        with open(src, "wb") as f:
            f.write(ptx.rstrip(b"\0"))
        cmd = [ptxas, "-v", "-arch", m.group(1).decode() if m else "sm_90", src, "-o", cubin]
        if maxrreg is not None:
            cmd += ["-maxrregcount", str(maxrreg)]
        try:
            built = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        except (OSError, subprocess.SubprocessError):
            return None
        if built.returncode != 0:
            return None
        sass = None
        if cuobjdump is not None:
            try:
                dumped = subprocess.run([cuobjdump, "-sass", cubin], capture_output=True,
                                        text=True, timeout=120)
                sass = dumped.stdout if dumped.returncode == 0 else None
            except (OSError, subprocess.SubprocessError):
                sass = None
    return built.stdout + built.stderr, sass


def warp_bytes_in_flight(made: tuple[str, str | None] | None) -> float | None:
    """The bytes a warp keeps in flight a round (:func:`rounds`) in the SASS of
    :func:`sass_of`'s ``made``; None without that SASS or where it loads nothing."""
    hot = rounds(made[1]) if made is not None and made[1] is not None else None
    return hot.bytes_a_round if hot is not None else None
