"""A predicted time per kernel: the roofline bound refined by what the other analyses
found. Each part is the time one resource needs at its full rate; the prediction is
the largest, and its name says what limits the kernel:

* ``memory``: the compulsory traffic (each element of the parameters' arrays once)
  at the bandwidth a kernel reaches from device memory (the target file's
  ``sustained_bandwidth``, measured; else the description's), combined with the
  ``latency`` part below as (T_b^q + T_l^q)^(1/q): a request waits for the memory's
  latency and for its turn on the interface (the target file's
  ``memory_queue_exponent`` q, 2 on the H100 where its reads were timed against the
  warps keeping them in flight; 1, the sum of the two, without one);
* ``arithmetic``: the floating-point operations at the peak rate, a call of a built-in
  function or a float division at what it costs in multiply-adds with the target's
  compiler (its target file's ``function_costs``: with NVIDIA's precise math on the
  H100 a log 26, an exp 10, a division 9; mcl.analyses.timing_counts.function_extra);
* ``memory instructions``: the accesses to addressable memory at the load-store
  units' rate (a warp's request a cycle; to cached memory a cycle per cache line
  its lanes touch; a load of several lines, where the target file has
  ``load_line_cycles``, the most words one bank of the L1's storage serves for it,
  that many cycles a line or two, whichever is most: on the H200 half a cycle a line
  where the lanes' words spread over the banks, a cycle where they share one; a store
  of many lines more, the target file's ``store_line_cycles``: on the H200 3.8 cycles
  a line for a warp's store to 32 lines, so that transpose_naive's column writes take
  4 times what its loads do);
* ``<cache> bandwidth`` (``l2 bandwidth``): the sectors the global loads take from
  the last-level cache at the bandwidth of its link to the execution units: per
  block, the union of the sectors its warps touch in an iteration of the outermost
  sequential loop inside it, and in later iterations only those the previous one
  did not touch, or each sector once where the block's lines fit in its share of
  the first-level cache (mcl.analyses.block_reuse; within 20% of the sectors ncu
  counts as missing in the L1 for 56 of the 58 examples). The L2 itself may look up
  fewer: its request coalescer merges the requests of SMs near each other for the
  same sector at the same time (benchmarks/opencl/coalescer_probe.py: up to about 4
  to 1), which depends on how closely the blocks keep pace and is not predicted, so
  this counts at most what the L2 serves (its lookups within 20% for 47 of 58;
  matmul's tiled versions 52-96% of their misses); a load that model cannot evaluate, per
  warp request the sectors its lanes touch, and in the iterations of the innermost
  sequential loop around it after the first only those it did not touch before; a
  gather (addresses data choose) a sector per lane, less the share of its array the
  first-level caches hold. The requests the cache serves beyond the compulsory bytes
  wait its link's latency (the description's, 200 cycles on hopper) with the resident
  warps' bytes in flight, combined with that time as the memory part is (matmul gpu_v2,
  one block of 1024 threads an SM: -21% -> -18% on the H100);
* ``<cache> requests`` (``l2 requests``): the read requests the last-level cache serves
  for them at the rate the target file's ``cache_request_rate`` gives (a request the
  sectors of one line a warp's load misses in the L1, a gather's a sector each, the
  other loads' bytes a line a request): where the lanes' addresses scatter, what limits
  the cache before its link does (on the H200 158 G requests a second, a third of the
  link's 10 TB/s for requests of one sector: spmv_csr's gathers of x). A part of the
  device as a whole, on the memory's side of the overlap below;
* ``gathers``: where the warps gather (a load whose lanes read at addresses the data
  choose: spmv_csr's ``x[colIdx[k]]``), the compulsory traffic at the sustained
  bandwidth and then the requests of the ``<cache> requests`` part: those do not hide
  under the traffic. Measured on the H200 (benchmarks/opencl/gather_chain_probe.py), a
  CSR walk's gathers from a table the L2 holds add 34-46 us to the 28.5 us its other
  loads take, whether or not they wait for their indices, where the L2's request rate
  gives them 35-54 us. Why the two add (the L2's slices serve the stream's fills and
  the gathers alike) is not modelled further; spmv_csr gpu_v1, nvidia_v1 and hopper_v1:
  -30% -> -5..-7% on the H200, -46% -> -15..-17% on the H100's record;
* ``shared memory``: accesses to banked on-chip memory, one word per bank and cycle
  on every holder: a warp's access takes the banks once per word one bank serves in
  turn (lanes reading the same word share it); a 128-bit access half a warp at a
  time; reads that the vendor compiler merges into 128-bit ones across a completely
  unrolled loop count as such;
* ``issue``: on a GPU, the arithmetic's instructions and the memory instructions
  share the schedulers' issue slots (one warp instruction per lock-step group of
  lanes and cycle);
* ``barrier waits``: a sequential loop whose iterations load device memory into an
  on-chip tile and wait at a barrier (or a tile filled once before a barrier, or loads
  a warp has in flight together that only feed registers before one, softmax_rows'
  passes over its row: a phase each; timing_overlap.barrier_phases) exposes the
  memory latency once per phase and round of resident blocks (they run in step), and
  the tiles' reads cross the memory interface while the warps wait: at least the
  arrays they read, once, at the memory's bandwidth (no calibration: the
  description's latency and bandwidth). The execution units idle
  meanwhile, so the wait adds to ``arithmetic``, ``issue``, ``memory instructions``
  and ``shared memory`` (on the H100, convolution hopper_v2's shared tile against
  hopper_v3's loads through the L1: 0.107 against 0.089 ms measured);
* ``latency``: the device-memory traffic that the resident warps can keep in flight
  (Little's law: warps x bytes each has outstanding / the memory's latency), with
  the residency of the occupancy analysis: few resident warps cannot cover latency.
  The bytes a warp has outstanding are counted from the kernel (:func:`bytes_in_flight`)
  or, where the vendor's compiler was asked and its machine code read
  (Resources.in_flight, mcl.opencl.sass), taken from that code.
  Where the grid takes more than one round of resident blocks, a block holds its
  warp slots until its last warp has its data: the memory serves a holder's
  requests about in the order its blocks issued them, so the warps of a block get
  the data of their last pass over their loads (of P, the iterations of the
  sequential loops around them) over 1/(R P) of the block's life with R resident
  blocks, and the slots of its finished warps idle meanwhile, half of them on
  average: the warps in flight are fewer by 1/(2 R P) (no calibration; ncu on the
  H100, vector_add: achieved occupancy 68% with R = 2 blocks of 1024 threads
  making one pass, 76% with R = 8 of 256, 82% where a grid-stride loop keeps
  every block resident). A warp that waits for its loads once (no loop the generated
  code keeps rolled around them, timing_overlap.round_trips) has no more bytes in
  flight than its share of the arrays it reads: a stencil's loads of its neighbours,
  which other warps read too, add none (held-out jacobi2d and stencil1d on the H200:
  60.4 and 54.3 µs measured, 42.4 predicted with a line in flight a load, 57.6 now,
  as a copy of one float a work-item). A load that only fills a register array in a
  loop the generated code unrolls completely (``v[u] = input[i + u * T]``, used after
  the loop) has all the loop's iterations in flight at once; a loop the compiler unrolls
  of its own accord (by the target's ``partial_unroll``, 4 on the H100 and H200), with
  no store to device memory, atomic or barrier inside, has as many of its iterations'
  loads in flight as the factor and the registers beyond the kernel's need let it
  (held-out rowsum and transpose_padded on the H200: 18.9 and 36.3 µs measured, 46.5
  and 56.0 predicted with one iteration in flight, 22.7 and 37.6 now). Where a grid-stride loop
  takes its threads round unequally often (n / stride = 15.5: 15 or 16 times), all
  warps make the full rounds together and a part of them the last one, in which each
  still waits its round trip: the memory part is the sum over the rounds (on the
  H100 vector_add's 1056 blocks of 256 threads over 2^24 elements measure 0.5%
  slower than 1024 blocks that go round 16 times each, though more warps are in
  flight);
* ``atomics``: the serialised updates of the most contended atomic element
  (mcl.analyses.atomics.queued_seconds: integer ones back to back in the L2, float
  compare-and-swap loops at the target's measured time per update with that many
  pending: reduction's versions within 12% on the H100 but hopper_v3, whose 132
  updates follow its reads, -27% while they overlapped them). The updates the blocks
  make at their end (histogram's merges into hist, a reduction's one update a block)
  arrive as the blocks end their streams, which the blocks of a round do within the
  target file's ``block_end_spread`` of the rest's time of each other: what they take
  beyond that follows the rest (:func:`_end_updates`);
* ``block dispatch``: the blocks at the rate the device starts them (the target
  file's ``block_dispatch_rate``, measured: on the H100 about 1.65 blocks per ns up to
  640 threads a block, 0.88 at 1024), which bounds a grid of many blocks that each do
  little (vector_add with one element per thread in blocks of 64 threads: 262144
  blocks, 165 µs measured where its traffic takes 60 µs).

The predicted time is the largest part plus what any launch takes from its start to
its end (the target file's ``launch_seconds``, measured with an empty kernel; the H200:
2.7 µs, with cold reads of 4 to 512 MB on 4.3 µs + bytes / 4.54 TB/s).

Where an execution part (arithmetic, issue, memory instructions, shared memory) and a
memory part (memory, a cache link) take about as long, they overlap only in part: the
warps that wait on their loads do not issue, and local memory shares the load-store
path with the loads. The two take (T_e^q + T_m^q)^(1/q), with the target file's
``overlap_exponent`` for the execution part, where that is longer than the largest part
(:func:`overlapped`; benchmarks/opencl/overlap_probe.py on the H200: at equal parts
1.13 times the longer with multiply-adds, q = 4.6, and 1.26 with local memory, q = 2.8;
convolution hopper_v4 on the H100, memory 46.7 µs and issue 42.4 µs, measured 62.6 µs).
The issue slots and the shared memory's banks overlap only in part the same way, with
the target file's ``issue_overlap_exponent``: a warp whose next instruction waits on its
read of local memory does not issue (benchmarks/opencl/issue_overlap_probe.py on the
H200: a tiled matmul's inner loop of 4 128-bit reads and 64 multiply-adds takes 1.06-1.08
times its issue slots' time, with the reads' 0.43 of it, q = 2.2; matmul hopper_v4 .. v12,
issue bound, -10..-20% -> -7..+4% of their measured times on the H200, -7..+5% on the
H100's record; median error of the H200's record 9.1% -> 6.4%, of the H100's 9.7% ->
7.3%). The barrier waits, in which both idle, are added once to what the two take
together.

A grid of fewer blocks than holders (SMs) leaves the other holders idle: the parts
that each holder contributes to (arithmetic, issue, memory instructions, shared memory,
the cache link) take longer by the ratio; the memory interface and the atomics' units
are the device's, and the latency part counts the warps there are (nbody's 64 blocks
on the H200's 132 SMs: issue bound at 481 µs, 211 µs before the arithmetic was
scaled too). More generally, B equal blocks on H holders give the busiest ceil(B / H) of
them where an even spread gives B / H: where an execution part bounds the time, the
execution parts take that much longer (:func:`busiest_share`; benchmarks/opencl/
grid_rounds_probe.py on the H200, compute-bound kernels whose one block keeps an SM
busy: 66 to 2113 blocks of 1024, two an SM, take ceil(G / 132) blocks' time to 1-4%,
2113 blocks 6.1% over 2112; in blocks of 256, eight an SM, 1057 blocks as long as 1188,
2112 4% over the rule and 2113 1.3% under it; the share itself fades as the grid grows.
matmul hopper_v2 .. v10 at 2048^3, 256 blocks of 2 an SM on 132 SMs: 2 against 1.94,
their predictions -15..-22% -> -13..-20% of the measured times, matmul's Spearman 0.954
-> 0.981); where the memory bounds it, the holders with fewer blocks leave their share
of the memory interface to the others, and nothing is added.

Loads whose address or trip count depends on data count as mcl.analyses.sectors
estimates them (mcl.analyses.datadep); the prediction names them.

An estimate, stated as such; benchmarks/fidelity compares it with measured times.

This module assembles the parts; mcl.analyses.timing_counts counts what the warps ask
of each, mcl.analyses.timing_overlap how their loads overlap and wait, and
mcl.analyses.timing_rates what the device does per second.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mcl.analyses.timing_counts import (
    Spills,
    banked_accesses,
    cache_traffic,
    estimated_loads,
    function_extra,
    has_banked,
    memory_instructions,
    spill_traffic,
)
from mcl.analyses.timing_overlap import (
    barrier_phases,
    filled_together,
    load_passes,
    round_trips,
    uneven_trips,
)
from mcl.analyses.timing_rates import (
    cache_link,
    cache_link_bandwidth,
    cache_request_rate,
    dispatch_rate,
    instances,
    issue_overlap_exponents,
    issue_rate,
    launch_seconds,
    load_store_rate,
    memory_time,
    number,
    overlap_exponents,
    queue_exponent,
    sustained_bandwidth,
)

if TYPE_CHECKING:
    from mcl.analyses.functions import KernelView
    from mcl.analyses.timing_overlap import UnrolledCopies

#: the parts the barrier waits add to: the execution units idle while the warps wait
WAITED = ("arithmetic", "issue", "memory instructions", "shared memory")
#: the parts of the device as a whole, which a grid of fewer blocks than holders does not
#: slow (its memory interface, the latency its warps wait, its atomics' units, its block
#: dispatcher) or that count the grid's rounds already (the barrier waits); also the
#: requests its last-level cache serves, named by the cache (:func:`device_part`)
DEVICE_PARTS = ("memory", "latency", "atomics", "block dispatch", "barrier waits", "gathers")

#: bytes a warp has outstanding per global load site at once (a 128 B request; a run
#: of 4 elements per lane is one 512 B request) and the most load sites counted
_REQUEST = 128
_MAX_SITES = 8
#: how much longer than the largest part two parts' partial overlap must take to count
#: (a part far below the other changes the time by less than its rounding)
_OVERLAP_MIN_GAIN = 0.01


def busiest_share(blocks, holders) -> float:
    """How much longer than an even spread the holders' parts take where ``blocks``
    equal blocks fall on ``holders`` holders: the busiest holder runs ceil(B / H) of
    them where the parts spread B / H (fewer blocks than holders: H / B, the others
    idle; 512 blocks on 132 SMs: 4 against 3.88, the last round keeping 116 busy);
    1.0 without the counts."""
    if not blocks or not holders:
        return 1.0
    return -(-int(blocks) // int(holders)) * int(holders) / int(blocks)


def device_part(name: str) -> bool:
    """Whether the part ``name`` is the device's as a whole: one of :data:`DEVICE_PARTS`,
    or ``<cache> requests`` (``l2 requests``: the last-level cache serves every SM)."""
    return name in DEVICE_PARTS or name.endswith(" requests")


@dataclass
class PredictedTime:
    seconds: float
    limiter: str
    parts: dict[str, float] = field(default_factory=dict)
    #: loads whose address or trip count depends on data, counted as estimated
    estimated: list[str] = field(default_factory=list)
    #: seconds of the arithmetic part that built-in functions (and float divisions)
    #: take beyond one operation each, by name (the target file's function_costs)
    functions: dict[str, float] = field(default_factory=dict)
    #: the same with relaxed math (the target file's function_costs_relaxed)
    functions_relaxed: dict[str, float] = field(default_factory=dict)
    #: seconds of ``seconds`` that any launch takes from its start to its end (the
    #: target file's launch_seconds)
    launch: float = 0.0
    #: what the description gives no figure for, so that a part is missing: the
    #: memory's bandwidth (mic's ring), the bandwidth of the link from a cache to the
    #: execution units (fermi's and xeon_phi's caches)
    missing: list[str] = field(default_factory=list)
    #: (blocks, holders) where the grid has fewer blocks than holders, else None
    idle: tuple[int, int] | None = None
    #: the parts not counted because a count is not a number at these sizes (a loop
    #: whose trip count the counts do not follow: ``offset *= 2``)
    uncounted: list[str] = field(default_factory=list)
    #: (execution part, memory part, seconds of the two together) where their partial
    #: overlap (:func:`overlapped`) takes longer than any part alone, else None; ("issue",
    #: a part of the load-store path, seconds) where that of those two does
    overlap: tuple[str, str, float] | None = None
    #: what a warp keeps in flight (:class:`InFlight`), where the latency part counts it
    in_flight: InFlight | None = None
    #: the seconds of the time that loading together the copies of unrolled loops that
    #: load one at a time (``in_flight.serial``) would save, else None
    serial_saved: float | None = None
    #: (seconds they add after the rest, seconds they take, the spread of the blocks'
    #: ends) of the atomic updates the blocks make at their end, where they add any
    end_updates: tuple[float, float, float] | None = None
    #: the spills' stores to local memory, which the memory part counts, where there are
    spills: Spills | None = None
    #: (blocks, holders, share) where the execution parts bound the time and the grid's
    #: blocks fall unevenly on the holders, so that those parts are the busiest holder's,
    #: ``share`` times what an even spread would take (:func:`busiest_share`), else None
    uneven: tuple[int, int, float] | None = None


def predicted_time(view: KernelView, occupancy=None, atomics_s: float | None = None,
                   end_atomics_s: float | None = None) -> PredictedTime | None:
    """The predicted time of the numeric kernel of ``view`` (None without numbers);
    ``atomics_s``: what the atomic updates take (mcl.analyses.atomics.queued_seconds),
    ``end_atomics_s``: those of them the blocks make at their end (``end_seconds``)."""
    from mcl.analyses.stats import compulsory_bytes, counts_of_kernel, main_space
    from mcl.analyses.traffic import grid_units
    from mcl.analyses.warp_lanes import lockstep_loop

    k, hw = view.num, view.hardware
    if hw is None:
        return None
    space = main_space(k)
    peak = hw.peak_flops()
    bw = sustained_bandwidth(hw, space) if space else None
    parts: dict[str, float] = {}
    c = counts_of_kernel(k)
    cb = number(compulsory_bytes(k, space)) if space and bw else None
    spills = spill_traffic(view, occupancy, space) if space and bw else None
    if cb is not None and bw:
        # the spills' stores cross to device memory beside the compulsory traffic
        parts["memory"] = (cb + (spills.bytes if spills is not None else 0.0)) / bw
    flops = number(c.flops)
    functions: dict[str, float] = {}
    relaxed: dict[str, float] = {}
    if flops is not None and peak:
        # a multiply-add is two operations of the peak rate
        functions, relaxed = ({name: 2 * n / peak for name, n in extra.items()}
                              for extra in function_extra(view))
        parts["arithmetic"] = flops / peak + sum(functions.values())
    lsu = load_store_rate(hw)
    estimated = estimated_loads(view)
    accesses = memory_instructions(view, c.register_spaces, estimated)
    # a spilled word is stored and loaded once a pass: two accesses of each lane
    spilled = 2 * spills.bytes / 4 if spills is not None else 0.0
    if accesses is not None:
        accesses += spilled
    if lsu and accesses is not None:
        parts["memory instructions"] = accesses / lsu
    missing: list[str] = []
    linked = None       # (the cache link's part, the lines its requests ask, its latency)
    through, rate = None, None      # the loads' traffic from the cache, its request rate
    if space and not bw:
        missing.append(f"the bandwidth of '{space}'")
    if space:
        from mcl.analyses.traffic import write_back_cache
        cache = write_back_cache(hw, space)
        cbw = cache_link_bandwidth(hw, cache) if cache is not None else None
        if cache is not None and not cbw:
            missing.append(f"the bandwidth of {cache.name}'s link to the execution units")
        through = cache_traffic(view, space, estimated, occupancy) if cbw else None
        if through is not None and through.bytes:
            parts[f"{cache.name} bandwidth"] = through.bytes / cbw
            link = cache_link(hw, cache)
            cycles = number(link.latency) if link is not None and link.latency is not None \
                else None
            asked = _requested_lines(view) if cycles else None
            if asked:
                linked = (f"{cache.name} bandwidth", asked, cycles)
            rate = cache_request_rate(hw)
            if rate and through.requests:
                parts[f"{cache.name} requests"] = through.requests / rate
    clock = hw.clock_frequency()
    shared = banked_accesses(view)
    if shared is not None and clock:
        words, mem = shared
        copies = instances(hw, mem)
        if copies:
            parts["shared memory"] = words / (mem.nr_banks * copies * clock)
    if through is not None and through.gathered and rate and "memory" in parts:
        # where the warps gather, the L2's requests follow the compulsory traffic (at the
        # bandwidth: the latency part below overlaps both)
        parts["gathers"] = parts["memory"] + through.requests / rate
    flight, serial_memory, serial_latency = None, None, None
    if occupancy is not None and occupancy.resident and cb is not None and clock:
        flight, serial_memory, serial_latency = _latency(view, occupancy, space, cb, parts,
                                                         linked)

    found = lockstep_loop(view)
    issue = issue_rate(hw, found[1]) if found else None
    instructions = memory_instructions(view, c.register_spaces, estimated, lines=False) \
        if issue else None
    if instructions is not None:
        instructions += spilled
    if instructions is not None and "arithmetic" in parts:
        # the arithmetic's instructions and the memory instructions share the issue slots
        # (the arithmetic part counts a multiply-add as one instruction of two operations)
        parts["issue"] = parts["arithmetic"] + instructions / (issue * found[1])
    if atomics_s:
        parts["atomics"] = atomics_s
    # blocks that do not fall evenly on the holders (fewer than holders: the others idle)
    blocks = grid_units(view, occupancy.unit) if occupancy is not None else None
    holders = instances(hw, occupancy.holder) if occupancy is not None else None
    share = busiest_share(blocks, holders)
    uneven = None
    if blocks and holders and blocks < holders:
        # what runs on the holders (their arithmetic, issue slots, load-store units,
        # banks and cache links) runs on the busy ones only; the memory interface and
        # the atomics' units are the device's, and the latency part counts the warps
        scaled = [key for key in parts if not device_part(key)]
    elif share > 1 and parts and max(parts, key=parts.get) in WAITED:
        # where the execution units bound the time, it is the busiest holder's: its
        # blocks' execution parts take that much longer (memory-bound, the holders with
        # fewer blocks leave their share of the memory to the others)
        scaled = [key for key in parts if key in WAITED]
        uneven = (int(blocks), int(holders), share)
    else:
        scaled = []
    for key in scaled:
        parts[key] *= share
    if scaled:
        for extra in (functions, relaxed):
            for name in extra:
                extra[name] *= share
    # the device starts blocks at a rate of its own
    starts = dispatch_rate(hw, occupancy.threads) if blocks and occupancy.threads else None
    if starts:
        parts["block dispatch"] = blocks / starts
    latency = hw.memory_latency(space) if space else None
    if found and latency and clock and blocks and holders and occupancy.resident:
        phases, tiled = barrier_phases(view, space, found[0])
        if phases:
            # the resident blocks start together and run at the same pace, so they wait
            # at their barriers at the same time: each phase exposes the memory latency
            # once per round of resident blocks, and the tiles' reads cross the memory
            # interface (at least the arrays they read once, at its bandwidth) while the
            # execution units idle
            rounds = -(-blocks // (occupancy.resident * holders))
            waits = rounds * phases * float(latency) / clock
            fill = number(compulsory_bytes(k, space, tiled)) if bw else None
            if fill:
                waits += fill / bw
            parts["barrier waits"] = waits
            for key in WAITED:
                if key in parts:
                    parts[key] += waits
    if not parts:
        return None
    limiter = max(parts, key=parts.get)
    overlap = overlapped(hw, parts, parts.get("barrier waits", 0.0))
    longest = overlap[2] if overlap is not None else parts[limiter]
    end = _end_updates(hw, parts, end_atomics_s, blocks, holders, occupancy)
    if end is not None and end[1] > longest:
        longest = end[1]
    elif end is not None and end[1] < longest:
        end = None      # hidden under a longer part
    launch = launch_seconds(hw)
    idle = (int(blocks), int(holders)) if blocks and holders and blocks < holders else None
    uncounted = [name for name, known in (
        ("arithmetic", flops is not None or not peak),
        ("issue", issue is None or "issue" in parts),
        ("memory instructions", accesses is not None or not lsu),
        ("shared memory", shared is not None or not has_banked(view))) if not known]
    saved = None
    if serial_memory is not None:
        # the time with the copies' loads together: the parts again, memory the less
        alt = dict(parts, memory=serial_memory, latency=serial_latency)
        alt_overlap = overlapped(hw, alt, alt.get("barrier waits", 0.0))
        saved = longest - (alt_overlap[2] if alt_overlap is not None else max(alt.values()))
    return PredictedTime(longest + launch, limiter, parts,
                         sorted({ld.access.text for ld in estimated.values()}), functions,
                         relaxed, launch, missing, idle, uncounted, overlap, flight, saved,
                         end[0] if end is not None else None, spills, uneven)


def _end_updates(hw, parts: dict[str, float], seconds: float | None, blocks, holders,
                 occupancy) -> tuple[tuple[float, float, float], float] | None:
    """((seconds added, ``seconds``, spread), the kernel's time with them) for atomic
    updates of ``seconds`` in all that the blocks make at their end (histogram's merges
    into hist): a block's arrive when its stream ends, and the blocks of a round end
    within the target file's ``block_end_spread`` of the rest's time of each other
    (T_r, the time of the other parts), so the updates beyond that spread come after
    the rest: T_r + max(0, A - s T_r) / R with R rounds of resident blocks, the last
    round's (benchmarks/opencl/block_end_probe.py on the H200: the merges of 1056
    work-groups after a 256 MB stream, exposed as a queue of them in the order the
    work-groups' stamps end predicts, within 1-5 us). None where there are none, or
    the target file has no spread."""
    from mcl.analyses.target_settings import positive_setting
    spread = positive_setting(hw, "block_end_spread")
    rest = {k: v for k, v in parts.items() if k != "atomics"}
    if not (seconds and spread and rest and blocks and holders and occupancy is not None
            and occupancy.resident):
        return None
    overlap = overlapped(hw, rest, rest.get("barrier waits", 0.0))
    rest_s = overlap[2] if overlap is not None else max(rest.values())
    rounds = -(-blocks // (occupancy.resident * holders))
    added = max(0.0, seconds - spread * rest_s) / rounds
    return (added, seconds, spread * rest_s), rest_s + added


def _bytes_in_flight(view: KernelView, space: str, lane, width: int,
                     counts: dict[int, int], updated: set[int]) -> float:
    """Bytes of ``space`` a warp keeps in flight: a request a load (a run of 4 elements
    a lane one larger request), times the iterations the loads of ``counts`` have in
    flight together, at most :data:`_MAX_SITES` sites. An atomic update whose result
    nothing uses is none (mcl.analyses.atomics.unreturned_updates): histogram gpu_v1's
    merge into hist, whose SASS keeps one load in flight, of the input, where the two
    were counted (on the H200 -27% -> -4%): ``updated``, their nodes."""
    from mcl.analyses.warp_lanes import RUN, run_offsets
    total = 0
    for sacc, nacc in view.accesses():
        if nacc.write or sacc.space != space or lane not in nacc.loops \
                or id(nacc.node) in updated:
            continue
        run = run_offsets(view, nacc, lane, width)
        total += _REQUEST * (RUN if run is not None else 1) * counts.get(id(nacc.node), 1)
    return min(total, _REQUEST * RUN * _MAX_SITES) or _REQUEST


def _waited(tb: float, tl: float, q: float, mean: float | None) -> float:
    """The memory part from its time at the bandwidth and its latency part
    (:func:`memory_time`), over the rounds of a grid-stride loop that its threads go
    round ``mean`` times on average where they go round unequally often (else None)."""
    if mean is not None:
        # all warps make the first floor(mean) rounds together, a part of them the last
        # one, in which each still waits its round trip
        full, last = divmod(mean, 1.0)
        return (full * memory_time(tb, tl, q) + memory_time(last * tb, tl, q)) / mean
    # a request waits for the latency and for its turn on the interface
    return memory_time(tb, tl, q)


@dataclass(frozen=True)
class InFlight:
    """Bytes of device memory a warp keeps in flight (Little's law's numerator, a warp's
    share): ``bytes`` with the copies of unrolled loops that load one at a time
    (``serial``) so counted, ``together`` were they loaded together; ``source``: who
    read them from the compiled code (Resources.in_flight: "NVIDIA compiler"), None
    where the time model counted them from the kernel."""

    bytes: float
    together: float
    serial: list[UnrolledCopies]
    source: str | None = None


def bytes_in_flight(view: KernelView, occupancy, space: str) -> InFlight | None:
    """What a warp of ``view``'s kernel keeps in flight from ``space`` (None without a
    loop over a warp's lanes): a request a load, times the copies of a loop whose loads
    are in flight together (timing_overlap.filled_together), or what the compiler's
    code keeps in flight where it was read (``view.resources.in_flight``, which the
    time model's count is about 0.25 to 2.7 times of: benchmarks/results/perf/
    h200_2026-11-30/row_pieces_unroll/COUNTS.md); at most its share of the arrays it
    reads where it waits for its loads once."""
    from mcl.analyses.atomics import unreturned_updates
    from mcl.analyses.traffic import grid_units
    from mcl.analyses.warp_lanes import lockstep_loop
    found = lockstep_loop(view)
    if not found:
        return None
    lane, width = found
    together, serial = filled_together(view, lane, occupancy.registers)
    updated = unreturned_updates(view.num)
    inflight = _bytes_in_flight(view, space, lane, width, together, updated)
    # copies of an unrolled loop that load one at a time: the bytes in flight if they
    # loaded together
    inflight_together = _bytes_in_flight(
        view, space, lane, width, {**together, **{id(u.load.node): u.trips for u in serial}},
        updated)
    res, source = view.resources, None
    if res is not None and res.in_flight:
        # the compiled code's figure; its copies loaded together in the model's ratio
        inflight_together *= res.in_flight / inflight
        inflight, source = res.in_flight, res.source
    # a warp that waits for its loads once has no more device-memory bytes in flight
    # than its share of the arrays it reads: its loads that the caches serve (a
    # stencil's neighbours, which other warps read too) add none
    if round_trips(view, space, lane, together) == 1 and occupancy.threads:
        fresh = _fresh_bytes(view, space, grid_units(view, occupancy.unit),
                             occupancy.threads // width if width else 0)
        if fresh:
            inflight = min(inflight, fresh)
            inflight_together = min(inflight_together, fresh)
    return InFlight(inflight, inflight_together, serial, source)


def _requested_lines(view: KernelView) -> float | None:
    """Bytes the warps' global load requests stand for in the bytes a warp keeps in
    flight (:func:`bytes_in_flight`: a line a request, four a 128-bit run's): what the
    requests in flight bring across the cache link per latency, whatever sectors each
    touches (a request whose lanes read their own rows brings a sector a lane at once).
    None without a count."""
    from mcl.analyses.sectors import global_loads
    loads = global_loads(view)
    if loads is None or not loads.loads:
        return None
    from mcl.analyses.warp_lanes import RUN
    return sum(ld.requests * _REQUEST * (RUN if ld.vector else 1) for ld in loads.loads)


def _latency(view: KernelView, occupancy, space: str, cb: float, parts: dict[str, float],
             linked: tuple[str, float, float] | None = None):
    """The ``latency`` part (Little's law: the compulsory bytes ``cb`` over what the
    resident warps keep in flight in the memory's latency), and the ``memory`` part
    with the latency waited, into ``parts``; ``linked`` (part, bytes the requests stand
    for, latency in cycles): the cache link's part with its requests' latency waited
    the same way. Returns the bytes in flight (None where not counted) with the memory
    and latency parts were the copies of unrolled loops that load one at a time loaded
    together (None, None where there are none or no parts)."""
    from mcl.analyses.traffic import grid_units
    from mcl.analyses.warp_lanes import lockstep_loop
    hw = view.hardware
    clock = hw.clock_frequency()
    latency = hw.memory_latency(space)
    found = lockstep_loop(view)
    holders = instances(hw, occupancy.holder)
    threads = occupancy.threads
    if not (latency and holders and threads and found):
        return None, None, None
    lane, width = found
    blocks = grid_units(view, occupancy.unit)
    warps = min(occupancy.resident * holders, blocks or holders * occupancy.resident) \
        * max(1, threads // width)
    flight = bytes_in_flight(view, occupancy, space)
    passes = load_passes(view, space, lane)
    if blocks and blocks > occupancy.resident * holders and passes:
        warps *= 1 - 1 / (2 * occupancy.resident * passes)

    def latency_time(nbytes: float, cycles: float) -> float:
        """Seconds ``nbytes`` take with the warps' bytes in flight, a latency each
        (Little's law)."""
        return nbytes / (warps * flight.bytes / (float(cycles) / clock))

    parts["latency"] = latency_time(cb, latency)
    q = queue_exponent(hw)
    if linked is not None and linked[0] in parts:
        # the cache link's requests wait its latency with as many of them in flight
        # (those of them that device memory serves wait its latency above already)
        key, asked, cycles = linked
        parts[key] = memory_time(parts[key], latency_time(max(0.0, asked - cb), cycles), q)
    if "memory" not in parts:
        return flight, None, None
    mean = uneven_trips(view, space, lane)
    tb = parts["memory"]
    parts["memory"] = _waited(tb, parts["latency"], q, mean)
    if not flight.serial:
        return flight, None, None
    serial_latency = parts["latency"] * flight.bytes / flight.together
    return flight, _waited(tb, serial_latency, q, mean), serial_latency


def _fresh_bytes(view: KernelView, space: str, blocks: int | None,
                 warps_a_block: int) -> float | None:
    """Bytes of the arrays the kernel reads from ``space`` (each once) per warp of the
    grid: what a warp that waits for its loads once (:func:`timing_overlap.round_trips`)
    brings from device memory on average; None where a figure is missing. (Where a warp
    waits many times, the caches serve some waits whole, matmul's tiles, and the share
    says nothing of one wait.)"""
    from mcl.analyses.stats import compulsory_bytes, read_and_written
    if not blocks or not warps_a_block:
        return None
    reads = number(compulsory_bytes(view.num, space, read_and_written(view.num)[0],
                                    once=True))
    return reads / (blocks * warps_a_block) if reads else None


def overlapped(hw, parts: dict[str, float], waits: float = 0.0) -> tuple[str, str, float] | None:
    """The two parts whose partial overlap takes the longest, and how long: an execution
    part and the memory part, (T_e^q + T_m^q)^(1/q) with the target file's exponent for
    the execution part (mcl.analyses.timing_rates.overlap_exponents: warps that wait on
    their loads do not issue, and local memory shares the load-store path with them) and
    T_m the largest of the memory part, a cache link's and the cache's requests'; the
    execution parts without the barrier ``waits`` added to them (those are the memory's
    latency and traffic, which the memory part has already); or the issue part and a
    part of the load-store path, ("issue", part, seconds), with the target file's
    issue_overlap_exponent (timing_rates.issue_overlap_exponents), the waits added once.
    None where that is less than 1% longer than the largest part alone (a part far
    larger than the other hides it) or the target file gives no exponent."""
    memory = [k for k in parts if k in ("memory", "gathers")
              or k.endswith((" bandwidth", " requests"))]
    best = None
    if memory:
        m = max(memory, key=parts.get)
        for part, q in overlap_exponents(hw).items():
            own = parts.get(part, 0.0) - (waits if part in WAITED else 0.0)
            if own > 0 and parts[m] > 0:
                together = (own ** q + parts[m] ** q) ** (1 / q)
                if best is None or together > best[2]:
                    best = (part, m, together)
    # the issue slots and the load-store path: the barrier waits, in which both idle,
    # are added once to what the two take together
    issue = parts.get("issue", 0.0) - waits
    for part, q in issue_overlap_exponents(hw).items():
        own = parts.get(part, 0.0) - waits
        if issue > 0 and own > 0:
            together = (issue ** q + own ** q) ** (1 / q) + waits
            if best is None or together > best[2]:
                best = ("issue", part, together)
    return best if best is not None and best[2] > max(parts.values()) * (1 + _OVERLAP_MIN_GAIN) \
        else None


