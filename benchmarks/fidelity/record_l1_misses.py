"""Record the sectors the examples' global loads miss in the L1 (what the L1s request
from the L2), from an ncu run of benchmarks/runs/l1_fill_h200.sh, into
tests/analyses/fidelity/l1_misses.json, which the CPU tests hold the time model's
L2 read bytes (mcl.analyses.timing_counts.cache_bytes) against.

Per example: ncu's global-load sectors less those that hit in the L1
(`l1tex__t_sectors_pipe_lsu_mem_global_op_ld` - `..._lookup_hit`), beside the L2's
read lookups (`lts__t_sectors_srcunit_tex_op_read`), which the L2's request
coalescer makes fewer where SMs near each other read the same sectors at the same
time (benchmarks/opencl/coalescer_probe.py), and the sectors the crossbar delivered
to the L1s (`l1tex__m_xbar2l1tex_read_sectors`, atomics' replies included).

    python benchmarks/fidelity/record_l1_misses.py RAW_DIR [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import fidelity_cases as C  # noqa: E402
from report import ncu_rows  # noqa: E402

OUT = C.ROOT / "tests" / "analyses" / "fidelity" / "l1_misses.json"
COLUMNS = {"ld_sectors": "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
           "ld_hit_sectors": "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum",
           "l2_read_sectors": "lts__t_sectors_srcunit_tex_op_read.sum",
           "l2_read_requests": "lts__t_requests_srcunit_tex_op_read.sum",
           "xbar_read_sectors": "l1tex__m_xbar2l1tex_read_sectors.sum"}


def read_run(raw: Path) -> dict[str, dict[str, float]]:
    """Counters per case of the run in ``raw`` (report.ncu_rows: ncu_fill*.csv, each
    case's kernel in the order its launch_fill*.log lists the cases), with the L1's
    misses."""
    out = {}
    for name, vals in ncu_rows(raw, COLUMNS).items():
        if "ld_sectors" in vals and "ld_hit_sectors" in vals:
            vals["l1_miss_sectors"] = vals["ld_sectors"] - vals["ld_hit_sectors"]
            out[name] = vals
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("raw", type=Path)
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--device", default="NVIDIA H200")
    a = ap.parse_args()
    counters = read_run(a.raw)
    digests = {c.name: c.digest for c in C.example_cases()}
    missing = sorted(set(digests) - set(counters))
    if missing:
        print(f"record_l1_misses: no counters for {', '.join(missing)}", file=sys.stderr)
    cases = {n: {"digest": digests[n], **counters[n]} for n in digests if n in counters}
    a.out.write_text(json.dumps({
        "device": a.device,
        "how": "benchmarks/runs/l1_fill_h200.sh on the GPU machine; "
               f"benchmarks/fidelity/record_l1_misses.py {a.raw.resolve().relative_to(C.ROOT)}",
        "cases": cases}, indent=1) + "\n")
    print(f"wrote {a.out}: {len(cases)} examples")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
