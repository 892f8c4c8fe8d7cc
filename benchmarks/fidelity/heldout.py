"""The analyses against kernels they were not calibrated on: the sweep variants of a
``measure.py resources`` run (the NVIDIA compiler's registers, CUDA's resident blocks)
that the record (tests/analyses/fidelity/vendor.json) does not hold, or the kernels of
heldout_kernels/ (``measure.py resources --heldout``), written as a new user would. For each: the
register estimate against the compiler's count, the resident blocks the feedback
reports with the compiler's registers and with the estimate against CUDA's, and
whether the feedback finds the variant wrong whatever its speed (mcl.analyses.validity:
the sizes the version is not written for; counted apart). Variants the record holds
are compared with it (the same build on another machine of the chip should give the
same counts).

For the held-out kernels, where the run's folder also holds their cold times
(``measure.py time --heldout --cold``: times.json) and ncu's counters of their launches
(``measure.py launch --heldout`` under ncu: ncu.csv with launch.log), the predicted time,
DRAM bytes and global-load sectors per request against those, as a Markdown table
(``--md``); with the bytes a warp keeps in flight in each kernel's machine code (a
resources.json whose rows have ``in_flight``, ``--in-flight``: what mcl feedback uses
beside the GPU with ptxas and cuobjdump), the predicted time with those too.

    python3 benchmarks/fidelity/heldout.py RESOURCES_JSON [-j 2] [--out FILE.json]
                                           [--md FILE.md] [--in-flight RESOURCES_JSON]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1]))

import fidelity_cases as C  # noqa: E402
import fidelity_predict as P  # noqa: E402

_CASES = {c.name: c for c in C.all_cases() + C.heldout_cases()}


def _within(estimate: int | None, vendor: int) -> bool:
    return estimate is not None and abs(estimate - vendor) <= 0.10 * vendor


def _predict(row: dict) -> tuple[str, dict | None]:
    """The feedback's figures for a measured row; None where the case is no longer the
    one measured (its digest changed)."""
    case = _CASES.get(row["name"])
    if case is None or case.digest != row["digest"]:
        return row["name"], None
    estimated = P.predict(case, only=("occupancy",))
    with_vendor = P.predict(case, registers=row["registers"], only=("occupancy",))
    return row["name"], {
        "registers": row["registers"], "cuda_blocks": row["resident_blocks"],
        "estimate": estimated.get("registers"),
        "blocks_estimated": estimated.get("resident_blocks"),
        "blocks_with_registers": with_vendor.get("resident_blocks"),
        "in_flight": row.get("in_flight"),
        "invalid": estimated.get("invalid") or with_vendor.get("invalid") or []}


def _measured_against(item: tuple[str, int, float | None]) -> tuple[str, dict]:
    """The predicted time and traffic of a held-out kernel with the compiler's
    registers, and the time with its machine code's bytes in flight where given."""
    name, registers, in_flight = item
    case = _CASES[name]
    out = dict(P.memory_figures(case, registers=registers))
    out.update({f"time_{k}": v for k, v in P.predicted_time(case, registers).items()})
    if in_flight:
        out["time_compiled_seconds"] = P.predicted_time(
            case, registers, in_flight=in_flight).get("seconds")
    return name, out


def _pct(pred: float | None, meas: float | None) -> str:
    return f"{100 * (pred - meas) / meas:+.0f}%" if pred is not None and meas else "–"


def _ncu_rows(raw: Path) -> dict[str, dict]:
    """ncu's counters by case: ncu.csv's kernels in the order of launches.json, each
    launch that ran its kernel (also one whose result the reference rejected), the
    kernel's name checked against the case's function."""
    import report
    if not (raw / "ncu.csv").exists() or not (raw / "launches.json").exists():
        return {}
    launched = [r["name"] for r in json.loads((raw / "launches.json").read_text())["rows"]
                if r["status"] == "ok" or r["status"].startswith("wrong result")]
    out = {}
    for name, r in zip(launched, report.ncu_kernels(raw / "ncu.csv"), strict=False):
        function = re.search(r"\bvoid\s+(\w+)\s*\(", _CASES[name].source).group(1)
        if r["Kernel Name"] != function:
            raise SystemExit(f"ncu.csv: row {r['ID']} is {r['Kernel Name']}, expected "
                             f"{function} of {name}")
        out[name] = report.counters(r, report.NCU)
    return out


def heldout_table(raw: Path, got: dict, jobs: int) -> list[str]:
    """Markdown rows: the held-out kernels' registers, blocks, time and traffic, predicted
    (with the compiler's registers) against measured."""
    times = {}
    if (raw / "times.json").exists():
        times = {r["name"]: r for r in json.loads((raw / "times.json").read_text())["rows"]
                 if r.get("status") == "ok"}
    ncu = _ncu_rows(raw)
    names = sorted(n for n in got if n.startswith("heldout/"))
    with ProcessPoolExecutor(jobs) as ex:
        pred = dict(ex.map(_measured_against, [(n, got[n]["registers"], got[n]["in_flight"])
                                               for n in names]))
    compiled = any(p.get("time_compiled_seconds") for p in pred.values())
    lines = ["| kernel | registers (estimate) | blocks: feedback / CUDA | time µs: "
             "predicted / measured (limiter) | DRAM MB: predicted / measured | ld "
             "sectors per request: predicted / measured |"
             + (" time µs with the machine code's bytes in flight |" if compiled else ""),
             "| --- | --- | --- | --- | --- | --- |" + (" --- |" if compiled else "")]
    for n in names:
        v, p, t, c = got[n], pred[n], times.get(n, {}), ncu.get(n, {})
        dram = (c.get("dram_read", 0) + c.get("dram_write", 0)) if c else None
        spr = c["ld_sectors"] / c["ld_requests"] if c.get("ld_requests") else None
        tp, tm = p.get("time_seconds"), t.get("time_s")
        tc = p.get("time_compiled_seconds")
        with_code = (f" {tc * 1e6:.1f} ({_pct(tc, tm)}; {v['in_flight']:.0f} B a warp) |"
                     if tc and tm else " – |") if compiled else ""
        lines.append(
            f"| {n.removeprefix('heldout/')} | {v['registers']} ({v['estimate']}) | "
            f"{v['blocks_with_registers']} / {v['cuda_blocks']} | "
            + (f"{tp * 1e6:.1f} / {tm * 1e6:.1f} ({_pct(tp, tm)}; "
               f"{p.get('time_limiter')})" if tp and tm else "–") + " | "
            + (f"{p['dram_bytes'] / 1e6:.1f} / {dram / 1e6:.1f} "
               f"({_pct(p['dram_bytes'], dram)})" if dram and p.get("dram_bytes") else "–")
            + " | "
            + (f"{p['sectors_per_request']:.2f} / {spr:.2f}"
               if spr and p.get("sectors_per_request") else "–") + " |" + with_code)
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("resources", type=Path, help="a measure.py resources.json")
    ap.add_argument("-j", type=int, default=2)
    ap.add_argument("--out", type=Path, help="write the figures per variant here")
    ap.add_argument("--md", type=Path, help="held-out kernels: write their table here")
    ap.add_argument("--in-flight", type=Path, metavar="RESOURCES_JSON",
                    help="a measure.py resources.json whose rows have in_flight: the bytes a "
                         "warp keeps in flight in each kernel's machine code, for the table")
    a = ap.parse_args()
    rows = [r for r in json.loads(a.resources.read_text())["rows"] if r.get("status") == "ok"]
    record = {c["name"]: c for c in json.loads(C.RECORD.read_text())["cases"]}
    known = [r for r in rows if r["name"] in record]
    same = [r for r in known if r["digest"] == record[r["name"]]["digest"]
            and (r["registers"], r["resident_blocks"]) ==
            (record[r["name"]]["registers"], record[r["name"]]["resident_blocks"])]
    print(f"in the record: {len(known)}, registers and resident blocks as recorded: "
          f"{len(same)}")
    todo = [r for r in rows if r["name"] not in record
            and (r.get("sweep") or r["name"].startswith("heldout/"))]
    with ProcessPoolExecutor(a.j) as ex:
        got = {n: v for n, v in ex.map(_predict, todo, chunksize=4) if v is not None}
    if a.in_flight:
        flights = {r["name"]: r.get("in_flight")
                   for r in json.loads(a.in_flight.read_text())["rows"]}
        for n, v in got.items():
            v["in_flight"] = flights.get(n, v["in_flight"])
    valid = {n: v for n, v in got.items() if not v["invalid"]}
    print(f"held out: {len(got)} kernels, {len(got) - len(valid)} of them wrong whatever "
          f"their speed (validity), {len(valid)} counted")
    for label, group in (("counted", valid), ("all", got)):
        n = len(group)
        regs = sum(_within(v["estimate"], v["registers"]) for v in group.values())
        occ = sum(v["blocks_with_registers"] == v["cuda_blocks"] for v in group.values())
        est = sum(v["blocks_estimated"] == v["cuda_blocks"] for v in group.values())
        print(f"{label}: registers within ±10% {regs}/{n}; resident blocks as CUDA's with "
              f"the compiler's registers {occ}/{n}, with the estimate {est}/{n}")
    per: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for n, v in valid.items():
        version = per[n.split("[")[0]]
        version[0] += _within(v["estimate"], v["registers"])
        version[1] += 1
    print("registers within ±10% per version (counted): " + ", ".join(
        f"{k} {h}/{t}" for k, (h, t) in sorted(per.items())))
    for n, v in sorted(valid.items()):
        if not _within(v["estimate"], v["registers"]):
            print(f"  MISS {n:58s} est {v['estimate']:4} vendor {v['registers']:4}")
        if v["blocks_with_registers"] != v["cuda_blocks"]:
            print(f"  OCCUPANCY {n:53s} feedback {v['blocks_with_registers']} blocks "
                  f"with the compiler's registers, CUDA {v['cuda_blocks']}")
    if a.out:
        a.out.write_text(json.dumps(got, indent=1) + "\n")
    if a.md and any(n.startswith("heldout/") for n in got):
        a.md.write_text("\n".join(heldout_table(a.resources.parent, got, a.j)) + "\n")
        print(f"wrote {a.md}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
