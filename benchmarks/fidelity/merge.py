"""Merge the output of one example's fidelity run (benchmarks/runs/fidelity_example.sh)
into the record in benchmarks/results/fidelity/raw/: the resources' rows replace those
of the same name, the time rows replace the whole kernel's (its versions were timed
together), and the ncu counters and launch log are copied. Then run
``report.py --reuse``.

    python benchmarks/fidelity/merge.py DIR
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

RAW = Path(__file__).resolve().parents[1] / "results" / "fidelity" / "raw"
#: the run's time files and the record's file each goes into
TIMES = {"times": "times.json", "rerun_times": "rerun_times.json",
         "warm_times": "warm_times.json"}


def _replace(record: Path, rows: list[dict], names: set[str]) -> int:
    data = json.loads(record.read_text())
    data["rows"] = [r for r in data["rows"] if r["name"] not in names] + rows
    record.write_text(json.dumps(data, indent=1))
    return len(rows)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir", type=Path, help="the run's output folder ($OUT)")
    ap.add_argument("--raw", type=Path, default=RAW, help="the record's folder")
    a = ap.parse_args()
    if not (a.dir / "resources.json").is_file():
        print(f"merge: {a.dir} has no resources.json: not the output of "
              "fidelity_example.sh", file=sys.stderr)
        return 2
    rows = json.loads((a.dir / "resources.json").read_text())["rows"]
    print(f"resources: {_replace(a.raw / 'resources.json', rows, {r['name'] for r in rows})}"
          " rows")
    for sub, record in TIMES.items():
        f = a.dir / sub / "times.json"
        if f.is_file():
            rows = json.loads(f.read_text())["rows"]
            print(f"{record}: {_replace(a.raw / record, rows, {r['name'] for r in rows})} rows")
    for f in [*a.dir.glob("ncu*.csv"), *a.dir.glob("launch*.log")]:
        shutil.copy(f, a.raw / f.name)
        print(f"copied {f.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
