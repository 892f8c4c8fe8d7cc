"""Runs fidelity sweep variants with ``mcl run`` and records whether each matches its
example's reference: those that ``mcl feedback`` names wrong kernels whatever their
speed (mcl.analyses.validity: report.py leaves them out of the record) and, as
controls, variants it does not name. Each variant is written beside its example (for
its reference.py), run at small sizes (matmul 512³, convolution 512²: every tile of
the sweep fits) and removed.

    python3 benchmarks/fidelity/wrong_variants.py --out DIR [--per-version 3]
        [--controls 20] [--device NVIDIA:] [--jobs N]

Writes DIR/wrong_variants.json: per variant, whether the feedback names it (and
with which code), and what ``mcl run`` said (matches, differs, or its error)."""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))

import fidelity_cases as C  # noqa: E402
import fidelity_predict as P  # noqa: E402

#: sizes of the runs: small enough to run in seconds, large enough for every tile
SIZES = {"matmul": {"n": 512, "m": 512, "p": 512}, "convolution": {"h": 512, "w": 512}}
def named(case: C.Case) -> list[str]:
    """The codes of the feedback's wrong-kernel warnings of ``case`` at its sizes."""
    from mcl.analyses.validity import CODES
    return sorted({d.code for d in P.hopper_feedback(case, only=("occupancy",))
                   if d.code in CODES})


def run(case: C.Case, device: str | None) -> dict:
    """``mcl run`` of the variant beside its example, at :data:`SIZES`."""
    path = ROOT / "examples" / case.kernel / f"_variant_{os.getpid()}.mcpl"
    path.write_text(case.source)
    args = [sys.executable, "-c", "import sys; from mcl.cli import main; sys.exit(main())",
            "run", str(path), "--repeat", "1"]
    for k, v in SIZES.get(case.kernel, {}).items():
        args += ["--set", f"{k}={v}"]
    if case.specialize:
        args.append("--specialize")
    if device:
        args += ["--device", device]
    t0 = time.time()
    try:
        r = subprocess.run(args, capture_output=True, text=True, timeout=300, cwd=ROOT)
        text = r.stdout + r.stderr
        if "DIFFERS" in text:
            verdict = "differs"
        elif r.returncode == 0 and "matches the reference" in text:
            verdict = "matches"
        elif "OUT_OF_RESOURCES" in text or "opencl-kernel-failed" in text:
            verdict = "failed on the device"    # NVIDIA: an access outside an array
        else:
            verdict = "error: " + (text.strip().splitlines() or ["?"])[-1][:200]
    except subprocess.TimeoutExpired:
        verdict = "timeout"
    finally:
        path.unlink(missing_ok=True)
    return {"run": verdict, "seconds": round(time.time() - t0, 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--per-version", type=int, default=3,
                    help="named variants run per example version (default 3)")
    ap.add_argument("--controls", type=int, default=20,
                    help="variants the feedback does not name, run as controls")
    ap.add_argument("--kernels", nargs="*", default=["matmul", "convolution"])
    ap.add_argument("--device", default=None, help="PLATFORM:DEVICE for mcl run")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                    help="processes that check the variants (default: every core)")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    sweep = [c for c in C.all_cases(kernels=args.kernels) if c.sweep]
    print(f"checking {len(sweep)} sweep variants with the feedback", flush=True)
    with ProcessPoolExecutor(args.jobs) as pool:
        codes = dict(zip((c.name for c in sweep), pool.map(named, sweep, chunksize=8),
                         strict=True))
    by_version: dict[str, list[C.Case]] = {}
    for c in sweep:
        if codes[c.name]:
            by_version.setdefault(f"{c.kernel}/{c.version}", []).append(c)
    picked = [c for cs in by_version.values()
              for c in rng.sample(cs, min(args.per_version, len(cs)))]
    clean = [c for c in sweep if not codes[c.name]]
    picked += rng.sample(clean, min(args.controls, len(clean)))
    rows = []
    for i, c in enumerate(picked):
        row = {"name": c.name, "named": codes[c.name], **run(c, args.device)}
        rows.append(row)
        print(f"{i + 1}/{len(picked)} {c.name}: {row['named'] or 'not named'}; {row['run']}",
              flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    summary = {"sweep": len(sweep), "named": sum(bool(v) for v in codes.values()),
               "sizes": SIZES, "rows": rows}
    (args.out / "wrong_variants.json").write_text(json.dumps(summary, indent=1) + "\n")
    named_rows = [r for r in rows if r["named"]]
    ran = [r for r in named_rows if not r["run"].startswith("error")]
    controls = [r for r in rows if not r["named"] and not r["run"].startswith("error")]
    print(f"named: {sum(r['run'] == 'differs' for r in ran)} differ from the reference and "
          f"{sum(r['run'] == 'failed on the device' for r in ran)} fail on the device, of "
          f"{len(ran)} that ran ({len(named_rows) - len(ran)} could not run); not named: "
          f"{sum(r['run'] == 'matches' for r in controls)}/{len(controls)} that ran match")


if __name__ == "__main__":
    main()
