"""Loading built programs from mcl.skel's disk cache against building them from
source (the SkelCL chapter measured loading at least 5x faster).

Runs the examples of examples/skel twice, each time in a fresh process: first with
an empty cache directory (every program is built from source and stored), then
with the filled one (every program is loaded). The driver's own kernel cache is
switched off (POCL_KERNEL_CACHE=0) so that "built" means compiled. Prints and
writes per-program times and the ratio.

    python benchmarks/skel/cache_bench.py [--out benchmarks/results/skel]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ["dot_product", "saxpy", "gaussian_blur", "heat", "matmul", "mandelbrot"]

CHILD = """
import importlib.util, json, sys
sys.path.insert(0, {examples!r})
import mcl.skel as sk
from mcl.skel import program
sk.init(num_devices=1)
for name in {names!r}:
    spec = importlib.util.spec_from_file_location(name, {examples!r} + "/" + name + ".py")
    mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
    mod.run(*mod.inputs(64))
print(json.dumps(program.timings))
"""


def run_child(cache: str) -> list:
    env = dict(os.environ, MCL_SKEL_CACHE=cache, POCL_KERNEL_CACHE="0",
               PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    code = CHILD.format(examples=str(ROOT / "examples" / "skel"), names=EXAMPLES)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=None, help="folder for cache_<device>.json")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as cache:
        built = run_child(cache)
        loaded = run_child(cache)
    b = [t for how, t in built if how == "built"]
    d = [t for how, t in loaded if how == "disk"]
    import pyopencl as cl

    from mcl.opencl.device import describe, select_device
    dev = describe(select_device())
    result = {"device": dev.spec, "programs": len(b),
              "build_ms": [round(t * 1e3, 2) for t in b],
              "load_ms": [round(t * 1e3, 2) for t in d],
              "median_build_ms": round(statistics.median(b) * 1e3, 2),
              "median_load_ms": round(statistics.median(d) * 1e3, 2),
              "total_build_ms": round(sum(b) * 1e3, 1), "total_load_ms": round(sum(d) * 1e3, 1),
              "ratio_total": round(sum(b) / sum(d), 1), "pyopencl": cl.VERSION_TEXT}
    print(f"{len(b)} programs on {dev.spec}: building {result['total_build_ms']} ms, loading "
          f"{result['total_load_ms']} ms ({result['ratio_total']}x faster); median per "
          f"program {result['median_build_ms']} ms against {result['median_load_ms']} ms")
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        tag = "".join(ch if ch.isalnum() else "_" for ch in dev.name)[:40]
        (out / f"cache_{tag}.json").write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
