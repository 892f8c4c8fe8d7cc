"""What the device does per second, for the time model (mcl.analyses.timing): the
rates of its parts from the hardware description and the target file's measured
figures (block dispatch, load-store units, issue slots, the bandwidth a kernel
sustains, a launch's fixed time), and how latency and bandwidth make the memory part."""

from __future__ import annotations

import sympy

from mcl.analyses.target_settings import device_settings, positive_setting


def number(e) -> float | None:
    try:
        v = sympy.sympify(e)
        return float(v) if v.is_number and v.is_finite else None
    except (TypeError, ValueError, sympy.SympifyError):
        return None


def instances(hw, block) -> int | None:
    """How many instances of a device block the device has (None: not a number)."""
    pos = hw.position(block)
    n = pos.instances if pos is not None else None
    return n if isinstance(n, int) and n > 0 else None


def dispatch_rate(hw, threads: int) -> float | None:
    """Blocks per second the device starts, for blocks of ``threads`` executing units:
    the target file's ``block_dispatch_rate`` for the smallest size listed that holds
    ``threads`` (None without a table)."""
    table = device_settings(hw).get("block_dispatch_rate") or {}
    try:
        rates = sorted((int(size), float(rate)) for size, rate in table.items())
    except (TypeError, ValueError):
        return None
    return next((rate for size, rate in rates if threads <= size),
                rates[-1][1] if rates else None)


def load_line_cycles(hw) -> float | None:
    """Cycles per cache line that a warp's load request touching several lines takes on
    the load-store path where its lanes' words spread over the first-level cache's
    banks: the target file's ``load_line_cycles`` (0.5 on the H200: 32 lines in 15.7
    cycles beyond a coalesced request's, benchmarks/opencl/lane_rows_probe.py); None
    without one (a cycle a line)."""
    return positive_setting(hw, "load_line_cycles")


def cache_request_rate(hw) -> float | None:
    """Read requests a second the last-level cache serves, a request the sectors of one
    line that a warp's load misses in the first-level cache: the target file's
    ``cache_request_rate`` (158 G on the H200, where its link carries 10 TB/s: a
    request of one sector gets a third of the link, benchmarks/opencl/
    l2_request_probe.py); None without one."""
    return positive_setting(hw, "cache_request_rate")


def first_level_banks(hw, space: str):
    """The banked on-chip memory whose storage the first-level cache of ``space`` shares
    (an SM's L1 and shared memory: 32 banks of 4 B), whose banks a warp's load from the
    cache meets as an access of shared memory does; None where there is none."""
    from mcl.analyses.block_reuse import first_level_cache
    l1 = first_level_cache(hw, space)
    at = hw.position(l1) if l1 is not None else None
    if at is None:
        return None
    return next((m for m in hw.memories() if m.nr_banks and hw.position(m) is not None
                 and hw.position(m).ancestors == at.ancestors), None)


def store_line_cycles(hw, lines: float) -> float:
    """Cycles per cache line that a warp's store request touching ``lines`` lines takes
    on the load-store path: the target file's ``store_line_cycles`` (by lines per
    request, linear between the sizes listed, the last beyond them; 1 below the first
    and without a table). On the H200 a store of 32 lines takes 3.8 cycles a line,
    whatever bytes a lane writes into it (4, 8 or 16), where a load of as many takes
    about one (benchmarks/opencl/store_probe.py)."""
    table = device_settings(hw).get("store_line_cycles") or {}
    try:
        points = sorted((float(n), float(c)) for n, c in table.items())
    except (TypeError, ValueError):
        return 1.0
    if not points or lines <= points[0][0]:
        return 1.0
    for (n0, c0), (n1, c1) in zip(points, points[1:], strict=False):
        if lines <= n1:
            return c0 + (c1 - c0) * (lines - n0) / (n1 - n0)
    return points[-1][1]


def load_store_rate(hw) -> float | None:
    """Accesses per second the load-store units issue (one per unit and cycle)."""
    unit = hw.executing_unit()
    clock = hw.clock_frequency()
    if unit is None or not clock:
        return None
    total = 0
    for s in hw.slots(unit.name):
        if s.holder.kind in ("load_store_unit", "load_store_group") and \
                isinstance(s.total, int):
            total += s.total
    return total * clock if total else None


def issue_rate(hw, width: int) -> float | None:
    """Warp instructions per second the execution units issue: a group of ``width``
    lanes that runs a warp in lock-step takes one instruction of it per cycle. Only
    where the load-store units are fewer than the lanes (a GPU's multiprocessor): they
    are then a pipe beside the lanes, and a memory instruction takes an issue slot of
    its own; where every lane has one (a vector core), a load is an operand of the
    vector instruction (None)."""
    clock = hw.clock_frequency()
    lanes = sum(s.holders for s in hw.execution_lanes() if isinstance(s.holders, int))
    lsu = load_store_rate(hw)
    if not (lanes and clock and width and lsu) or lsu >= lanes * clock:
        return None
    return lanes * clock / width


def sustained_bandwidth(hw, space: str) -> float | None:
    """The bandwidth of ``space`` that the time model moves traffic at: what the
    target file measured a kernel to reach (``sustained_bandwidth``: on the H100
    2.88 TB/s of the description's 3.35, benchmarks/opencl/inflight_probe.py, round
    35), else the description's."""
    bw = hw.memory_bandwidth(space)
    sustained = device_settings(hw).get("sustained_bandwidth")
    if bw and isinstance(sustained, int | float) and 0 < sustained <= float(bw):
        return float(sustained)
    return bw


def launch_seconds(hw) -> float:
    """What a launch takes from its start to its end beside its work: the target file's
    ``launch_seconds``, measured (an empty kernel, benchmarks/opencl/launch_probe.py),
    where the memory part's bandwidth was fitted with it subtracted; 0 elsewhere (the
    H100's sustained bandwidth was fitted with it in the times)."""
    return positive_setting(hw, "launch_seconds") or 0.0


def queue_exponent(hw) -> float:
    """How the traffic's time at the bandwidth (T_b) and the time its latency takes
    with the bytes in flight (T_l) make the memory part: (T_b^q + T_l^q)^(1/q). q = 1,
    their sum, has every request wait for the latency and for all others ahead of it;
    the target file's ``memory_queue_exponent`` is what fits the device (the H100's
    reads against the warps that keep them in flight: 2, inflight_probe.py)."""
    q = device_settings(hw).get("memory_queue_exponent")
    return float(q) if isinstance(q, int | float) and q >= 1 else 1.0


def overlap_exponents(hw) -> dict[str, float]:
    """How each execution part overlaps the memory parts, by its name: the target file's
    ``overlap_exponent`` q of (T_e^q + T_m^q)^(1/q) (benchmarks/opencl/overlap_probe.py:
    on the H200 4.6 for multiply-adds, 2.8 for local memory, which shares the load-store
    path with the loads); empty without one (perfect overlap, the larger part alone)."""
    table = device_settings(hw).get("overlap_exponent") or {}
    out = {}
    for part, q in table.items():
        if isinstance(q, int | float) and q >= 1:
            out[str(part)] = float(q)
    return out


def issue_overlap_exponents(hw) -> dict[str, float]:
    """How the issue part overlaps the parts of the load-store path (shared memory), by
    their name: the target file's ``issue_overlap_exponent`` q of (T_i^q + T_s^q)^(1/q)
    (benchmarks/opencl/issue_overlap_probe.py: a warp whose next instruction waits on
    its read of local memory does not issue); empty without one (the larger alone)."""
    table = device_settings(hw).get("issue_overlap_exponent") or {}
    return {str(part): float(q) for part, q in table.items()
            if isinstance(q, int | float) and q >= 1}


def memory_time(at_bandwidth: float, for_latency: float, q: float) -> float:
    """The memory part from the traffic's time at the bandwidth and the time its
    latency takes with the bytes in flight: (T_b^q + T_l^q)^(1/q) (:func:`queue_exponent`;
    benchmarks/opencl/inflight_probe.py fits q with it)."""
    return (at_bandwidth ** q + for_latency ** q) ** (1 / q)


def cache_link(hw, cache):
    """The link from ``cache`` to the execution units with the highest bandwidth."""
    best, best_bw = None, 0.0
    for ic in hw.links_of(cache):
        others = [b for b in hw.connected(ic) if b is not cache]
        bw = number(ic.bandwidth) if ic.bandwidth is not None else None
        if bw and bw > best_bw and others and all(
                getattr(b, "kind", None) == "execution_unit" for b in others):
            best, best_bw = ic, bw
    return best


def cache_link_bandwidth(hw, cache) -> float | None:
    """Bytes per second of that link (None without one)."""
    link = cache_link(hw, cache)
    return number(link.bandwidth) if link is not None else None
