"""The memory-traffic section of the fidelity report (report.py): DRAM bytes, global
loads' requests and sectors, the L2 read bytes the time model counts against the L1s'
misses and the L2's own lookups, and bank conflicts, predicted against ncu."""

from __future__ import annotations

import json

import fidelity_cases as C

#: the L1 misses of the examples (benchmarks/fidelity/record_l1_misses.py)
L1_RECORD = C.ROOT / "tests" / "analyses" / "fidelity" / "l1_misses.json"


def pct(a: float, b: float) -> float:
    return 100.0 * (a - b) / b if b else float("inf")


def within(pts, tolerance: float = 20) -> int:
    return sum(abs(pct(p, m)) <= tolerance for p, m, _ in pts)


def beyond(pts, tolerance: float = 20) -> str:
    """The points off by more than ``tolerance`` percent, as '; off: name +x%, ...'."""
    off = [f"{name} {pct(p, m):+.0f}%" for p, m, name in pts if abs(pct(p, m)) > tolerance]
    return f" (off: {', '.join(off)})" if off else ""


#: a share of a kernel's shared-memory wavefronts that ncu counts as bank conflicts
#: where the analyses see none: below it, traffic that shares the banks (L1 fills)
FREE_SHARE = 0.02


def bank_section(ex: list, ncu: dict, preds: dict) -> list[str]:
    """The extra wavefronts the feedback's bank-conflict messages count (mcl.analyses.
    banks) against ncu's bank conflicts, reads and writes apart, for the examples that
    have either."""
    md = ["", "### Bank conflicts", "",
          "Predicted: the extra wavefronts of mcl.analyses.banks (what `feedback-bank-"
          "conflicts` prints): each warp access to shared memory judged at the iterations "
          "of the loops around it (a doubling loop's values as written, the warps of a "
          "block), a 128-bit run in groups of 8 lanes, reads of 4 adjacent elements in a "
          "completely unrolled loop as the 128-bit read the compiler makes of them. "
          "Measured: ncu's `l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld/st` "
          "beside the wavefronts (`l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld/st`). "
          f"A claim of no conflict holds where ncu counts fewer than {FREE_SHARE:.0%} of "
          "the wavefronts as conflicts.", "",
          "| version | ld conflicts measured | predicted | ld wavefronts | st conflicts "
          "measured | predicted | st wavefronts | agrees |",
          "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    flagged = flagged_ok = 0
    free = {"ld": [0, 0], "st": [0, 0]}    # kind -> [claims of none, holding]
    misses, store_shares = [], []
    for r, *_ in ex:
        n = ncu.get(r["name"])
        pred = preds.get(r["name"], {}).get("memory", {}).get("bank_conflicts")
        if not n or not (n.get("shared_ld_wavefronts") or n.get("shared_st_wavefronts")):
            continue
        cells, verdicts = [], []
        for kind in ("ld", "st"):
            meas = n.get(f"shared_{kind}_conflicts", 0.0)
            waves = n.get(f"shared_{kind}_wavefronts", 0.0)
            p = pred.get(kind) if pred else None
            cells += [f"{meas:,.0f}", "—" if p is None else f"{p:,.0f}", f"{waves:,.0f}"]
            if p is None or not waves:
                continue
            if p > 0:
                flagged += 1
                ok = abs(p - meas) <= 0.2 * meas
                flagged_ok += ok
            else:
                ok = meas < FREE_SHARE * waves
                free[kind][0] += 1
                free[kind][1] += ok
                if kind == "st":
                    store_shares.append((meas / waves, r["name"]))
            if kind == "st" and p == 0:
                continue    # the store counter: see below
            verdicts.append(ok)
            if not ok:
                misses.append(f"{r['name']} ({kind}: {meas:,.0f} measured, "
                              f"{meas / waves:.1%} of the wavefronts, {p:,.0f} predicted)")
        agree = "—" if not verdicts else "yes" if all(verdicts) else "no"
        md.append(f"| {r['name']} | " + " | ".join(cells) + f" | {agree} |")
    md += ["", f"Conflicts the feedback reports, within 20% of ncu: {flagged_ok}/{flagged}. "
           f"Reads it calls conflict-free, with fewer than {FREE_SHARE:.0%} of their "
           f"wavefronts counted as conflicts: {free['ld'][1]}/{free['ld'][0]}. Writes it "
           f"calls conflict-free: {free['st'][1]}/{free['st'][0]}."]
    if misses:
        md.append("Reads not agreeing: " + "; ".join(misses) + ".")
    if store_shares:
        lo, hi = min(store_shares), max(store_shares)
        md.append(f"Of the writes the analyses call conflict-free, ncu counts {lo[0]:.0%} "
                  f"({lo[1]}) to {hi[0]:.0%} ({hi[1]}) of the store wavefronts as "
                  f"conflicts, also where each lane writes its own bank (a reduction's "
                  f"`l_data[tid] = sum`), which no arrangement of the warp's addresses "
                  f"explains; the `agrees` column leaves those writes out.")
    return md




def memory_section(ex: list, ncu: dict, preds: dict):
    """The section's lines and its (predicted, measured, name) points by quantity:
    DRAM bytes, sectors per request, L2 read bytes against the L2's lookups and
    against the L1s' misses."""
    l1 = json.loads(L1_RECORD.read_text())
    l1_misses = l1["cases"]
    md = ["", "## Memory traffic of the examples (ncu, fidelity sizes of fidelity_cases.py)", "",
           "Predicted DRAM bytes: the compulsory traffic (each element of the parameters' "
           "arrays once) less the written lines the L2 still holds at kernel end "
           "(mcl.analyses.traffic: all of them up to half the L2 where one wave of blocks "
           "writes after its loops, their share of the traffic where reads stream, none "
           "where later waves reuse the reads). Global loads: the warp requests and 32 B "
           "sectors of mcl.analyses.sectors (what `feedback-requests` prints): each load's "
           "lanes at sample points of its loops, constant memory included, 128-bit runs "
           "where the generator vectorises, a read-only element loaded once per "
           "iteration; loads whose addresses or trip counts depend on data an estimate "
           "(mcl.analyses.datadep): a sector per active lane where the address is read "
           "from memory, a random alignment where a warp's run starts at a value read "
           "from memory, and a trip count that data bound the average that reads each "
           "element of the arrays the loop walks once in all (the declared sizes: nnz "
           "of spmv_csr), a warp running as long as its slowest lane (the lanes' ranges "
           "Poisson counts of that average; a for loop unrolled by 4 at run time, its "
           "remainder first). L2 read bytes: the sectors the loads of a block fetch "
           "together through the SM's L1 (mcl.analyses.block_reuse): per iteration of "
           "the outermost sequential loop inside the block, the union of what its threads "
           "and inner loops read (the loads of one array in the same loops one set); a "
           "later iteration only the sectors the previous one did not touch, all of a "
           "block's iterations together where their lines fit in its room in the L1 "
           "(256 kB less the resident blocks' shared memory), and data that every block "
           "reads the same once per SM; the rest per warp request.", "",
           "| version | DRAM MB measured | predicted | error | ld requests measured | "
           "predicted | ld sectors/request measured | predicted | L1 misses MB measured (H200) | "
           "L2 read MB measured | predicted | bank conflicts (ld+st) |",
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    dram_pts, sec_pts, l2_pts, miss_pts = [], [], [], []
    for r, *_ in ex:
        n = ncu.get(r["name"])
        mem = preds.get(r["name"], {}).get("memory", {})
        if not n:
            md.append(f"| {r['name']} | not measured | | | | | | | | | | |")
            continue
        dram = n.get("dram_read", 0) + n.get("dram_write", 0)
        pd = mem.get("dram_bytes")
        spr = n["ld_sectors"] / n["ld_requests"] if n.get("ld_requests") else None
        ps = mem.get("sectors_per_request")
        if pd:
            dram_pts.append((pd, dram, r["name"]))
        if spr and ps:
            sec_pts.append((ps, spr, r["name"]))
        conf = n.get("shared_ld_conflicts", 0) + n.get("shared_st_conflicts", 0)
        l2 = n.get("l2_read_sectors", 0) * 32
        pl2 = mem.get("l2_read_bytes")
        if l2 and pl2 is not None:
            l2_pts.append((pl2, l2, r["name"]))
        miss = l1_misses.get(r["name"], {}).get("l1_miss_sectors")
        miss = miss * 32 if miss else None
        if miss and pl2 is not None:
            miss_pts.append((pl2, miss, r["name"]))
        md.append(f"| {r['name']} | {dram / 1e6:,.1f} | "
                  f"{pd / 1e6 if pd else float('nan'):,.1f} | "
                  f"{pct(pd, dram) if pd else float('nan'):+.0f}% | "
                  f"{n.get('ld_requests', float('nan')):.3g} | "
                  f"{mem.get('ld_requests', float('nan')):.3g} | "
                  f"{spr if spr else float('nan'):.2f} | {ps if ps else float('nan'):.2f} | "
                  f"{miss / 1e6 if miss else float('nan'):,.1f} | {l2 / 1e6:,.1f} | "
                  f"{pl2 / 1e6 if pl2 is not None else float('nan'):,.1f} | "
                  f"{conf:,.0f} |")
    within20 = sum(abs(pct(p, m)) <= 20 for p, m, _ in dram_pts)
    md += ["", f"DRAM bytes within 20%: {within20}/{len(dram_pts)}; sectors per request "
           f"within 20%: {sum(abs(pct(p, m)) <= 20 for p, m, _ in sec_pts)}/{len(sec_pts)}; "
           f"L2 read bytes (the sectors the time model's `l2 bandwidth` part counts, "
           f"mcl.analyses.timing_counts.cache_bytes: what a block's loads miss in its SM's L1) "
           f"against the L1's misses (ncu's global-load sectors less its L1 hits, "
           f"measured on the {l1['device']}, whose SMs and L1 are the H100's) "
           f"within 20%: {within(miss_pts)}/{len(miss_pts)}{beyond(miss_pts)}; "
           f"against the L2's own read lookups (`lts__t_sectors_srcunit_tex_op_read`, the "
           f"H100 record) within 20%: {within(l2_pts)}/{len(l2_pts)}{beyond(l2_pts)}.", "",
           "The L2 looks up fewer sectors than the L1s miss where SMs near each other read "
           "the same sectors at the same time: the L2's request coalescer merges their "
           "requests. `benchmarks/opencl/coalescer_probe.py` (one work-group per SM "
           "streaming a region that s of them share; raw/h200_2026-11-29/l1_fill/) finds "
           "them merged completely for 2 and 4 groups of neighbouring ids, at most about "
           "4 to 1 (12 to 132 sharers: 3.5-3.9), not at all for sharers 33 or 66 ids apart "
           "or reading the same data at other times, and in part for sharers 11 ids apart "
           "(1.5). Matmul's tiled versions, whose blocks read the same tiles in the same "
           "phase, see 52% (hopper_v11) to 96% (hopper_v1) of their misses at the L2; how "
           "closely the blocks keep pace decides it, which the analyses do not predict: the "
           "feedback's figure is what the L1s fetch, an upper bound on the L2's lookups."]
    # the misses, reads and writes apart, beside the DRAM writes of the kernels whose
    # only output is a scalar (reduction: 4 bytes), which ncu counts all the same
    missed = [name for p, m, name in dram_pts if abs(pct(p, m)) > 20]
    scalar = sorted((n["ncu_time_ns"], n["dram_write"]) for name, n in ncu.items()
                    if name.startswith("reduction/") and "[" not in name
                    and n.get("dram_write") and n.get("ncu_time_ns"))
    for name in missed:
        n, mem = ncu[name], preds[name]["memory"]
        t = n.get("ncu_time_ns")
        md.append(f"- DRAM miss {name}: read {n.get('dram_read', 0) / 1e6:.2f} MB and written "
                  f"{n.get('dram_write', 0) / 1e6:.2f} MB in {t / 1e6 if t else float('nan'):.3g}"
                  f" ms (ncu), predicted {mem['dram_bytes'] / 1e6:.2f} MB in all.")
    if missed and scalar:
        md.append("- The reduction versions write 4 bytes of result, and ncu counts "
                  + ", ".join(f"{w / 1e6:.1f} MB in {t / 1e6:.3g} ms" for t, w in scalar)
                  + " of DRAM writes: about 2 MB in any launch and more the longer it runs, "
                    "traffic that is not the kernel's.")
    md += bank_section(ex, ncu, preds)
    return md, {"dram": dram_pts, "sectors": sec_pts, "l2": l2_pts, "l1_misses": miss_pts}
