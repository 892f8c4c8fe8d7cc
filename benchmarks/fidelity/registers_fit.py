"""The register estimate (mcl.analyses.registers.register_demand, capped and grown by
mcl.analyses.occupancy.registers_per_unit) against the NVIDIA compiler's count for
every recorded fidelity case (tests/analyses/fidelity/vendor.json): per version,
estimate and compiler for each case, and the count within ±10% on the examples and
separately on the sweep (a check against fitting the examples); and the resident
blocks per SM with the estimate equal to CUDA's (the occupancy the feedback reports
without a GPU).

``--split`` also counts the two halves of a split check: the example versions,
each with its sweep variants, sorted by name and dealt alternately into two halves;
``--offset N`` sets the estimate's fitted offset (registers._OFFSET) to fit it on
one half and count the other.

    python benchmarks/fidelity/registers_fit.py [-j 2] [--kernel matmul] [--misses]
        [--split] [--offset N]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import fidelity_cases as C  # noqa: E402
import fidelity_predict as P  # noqa: E402


def _estimate(name: str) -> tuple[str, int | None, int | None]:
    """(name, registers estimated, resident blocks with them)."""
    case = _CASES[name]
    try:
        got = P.predict(case, only=("occupancy",))
        return name, got.get("registers"), got.get("resident_blocks")
    except Exception as e:  # noqa: BLE001 - a case that no longer builds is reported
        print(f"{name}: {e}", file=sys.stderr)
        return name, None, None


_CASES = {c.name: c for c in C.all_cases()}


def _set_offset(offset: int | None) -> None:
    if offset is not None:
        from mcl.analyses import registers
        registers._OFFSET = offset


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("-j", type=int, default=2)
    ap.add_argument("--kernel", action="append")
    ap.add_argument("--misses", action="store_true", help="print only the misses")
    ap.add_argument("--json", help="write {name: estimate} here")
    ap.add_argument("--split", action="store_true", help="count the two halves too")
    ap.add_argument("--offset", type=int, help="the estimate's offset (registers._OFFSET)")
    a = ap.parse_args()
    rec = {c["name"]: c for c in json.loads(C.RECORD.read_text())["cases"]}
    names = [n for n in rec if n in _CASES and _CASES[n].digest == rec[n]["digest"]
             and (not a.kernel or _CASES[n].kernel in a.kernel)]
    with ProcessPoolExecutor(a.j, initializer=_set_offset, initargs=(a.offset,)) as ex:
        results = list(ex.map(_estimate, names, chunksize=4))
    got = {n: r for n, r, _ in results}
    blocks = {n: b for n, _, b in results}
    groups: dict[str, list[str]] = defaultdict(list)
    for n in names:
        groups[n.split("[")[0]].append(n)
    tally = {False: [0, 0], True: [0, 0]}
    for version, members in groups.items():
        hit = 0
        lines = []
        for n in members:
            v, e = rec[n]["registers"], got[n]
            ok = e is not None and abs(e - v) <= 0.10 * v
            hit += ok
            tally[_CASES[n].sweep][0] += ok
            tally[_CASES[n].sweep][1] += 1
            if not (a.misses and ok):
                lines.append(f"  {'ok ' if ok else 'MISS'} {n:60s} est {e!s:>4} vendor {v:>4}"
                             f" cap {rec[n]['max_registers']:>4} threads {rec[n]['block_threads']}")
        print(f"{version}: {hit}/{len(members)}")
        print("\n".join(lines))
    (eh, en), (sh, sn) = tally[False], tally[True]
    print(f"examples within ±10%: {eh}/{en}; sweep: {sh}/{sn}; all: {eh + sh}/{en + sn}")
    same = {False: 0, True: 0}
    for n in names:
        same[_CASES[n].sweep] += blocks[n] == rec[n]["resident_blocks"]
    print(f"occupancy with the estimate (resident blocks as CUDA's): examples "
          f"{same[False]}/{en}; sweep: {same[True]}/{sn}")
    if a.split:
        versions = sorted(groups)
        for half in (0, 1):
            members = [n for i, v in enumerate(versions) if i % 2 == half for n in groups[v]]
            hit = sum(got[n] is not None and abs(got[n] - rec[n]["registers"])
                      <= 0.10 * rec[n]["registers"] for n in members)
            print(f"half {half + 1} ({len(versions[half::2])} versions): "
                  f"{hit}/{len(members)} within ±10%")
    if a.json:
        Path(a.json).write_text(json.dumps(got, indent=0, sort_keys=True))


if __name__ == "__main__":
    main()
