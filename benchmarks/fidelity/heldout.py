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

    python3 benchmarks/fidelity/heldout.py RESOURCES_JSON [-j 2] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import json
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
        "invalid": estimated.get("invalid") or with_vendor.get("invalid") or []}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("resources", type=Path, help="a measure.py resources.json")
    ap.add_argument("-j", type=int, default=2)
    ap.add_argument("--out", type=Path, help="write the figures per variant here")
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
            and (r.get("sweep") or r["kernel"] == "heldout")]
    with ProcessPoolExecutor(a.j) as ex:
        got = {n: v for n, v in ex.map(_predict, todo, chunksize=4) if v is not None}
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
