"""Lift's convolution candidates beside the MCPL versions, in one run on one GPU.

At the paper size (4096 x 4096 outputs, 9 x 9 filter) by default:

* every MCPL version of examples/convolution for the leaf (default hopper), compiled
  with mcl.compile, checked against reference.py and timed (mcl.lift.compare);
* Lift's candidates for the program derived from perfect.mcpl: the direct lowering,
  the first choice of stencil-2d-tiling (tiles in local memory) and the choices of
  stencil-2d-register-blocking (filter in constant memory, c x r outputs per work-item
  in registers, vector loads) and of stencil-2d-register-blocking-local (the same from a
  tile in local memory), the first ``--choices`` of each, then ``--budget`` more
  candidates of the Monte-Carlo tree search; each checked against reference.py before
  it is timed.

Times are medians of profiled runs (OpenCL events) after a warm-up. Writes
OUT/conv_candidates.json (every row, the OpenCL of the best Lift candidate),
OUT/conv_candidates.md and OUT/explore_convolution.json (the search's evaluations).
Exits 2 without an NVIDIA OpenCL device (``--any-device`` lifts that, for a run on PoCL
at small sizes).

    . benchmarks/gpu_setup.sh
    python3 benchmarks/lift/conv_candidates.py --out /tmp/conv
    python3 benchmarks/lift/conv_candidates.py --any-device --size h=64 --size w=128 --out /tmp/c
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT))

KERNEL = ROOT / "examples" / "convolution" / "perfect.mcpl"
RULES_BLOCKED = ("stencil-2d-register-blocking", "stencil-2d-register-blocking-local")


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def nvidia(device: str | None) -> str | None:
    """The device's description when it is an NVIDIA GPU, else None."""
    try:
        from mcl.opencl.device import runtime
        info = runtime(device).info
    except Exception as e:  # noqa: BLE001 - no OpenCL at all is the same answer
        log(f"no OpenCL device: {e}")
        return None
    return info.spec if "nvidia" in (info.platform + info.name).lower() else None


def lift_seeds(prog, limits, per_rule: int) -> tuple[list, dict]:
    """The candidates evaluated first (bound programs): the direct lowering, the first
    tiling in local memory, the first ``per_rule`` choices of each register blocking;
    and the (rule, choice) of each register-blocked one, by the key of its body."""
    from mcl.lift.explore import direct_lowering
    from mcl.lift.printer import key
    from mcl.lift.rules import RULES, apply_rule, rewrites
    seeds = []
    direct = direct_lowering(prog, limits)
    if direct is not None:
        seeds.append(direct)
    try:
        tiled = apply_rule(prog, "stencil-2d-tiling", limits=limits)
        seeds.append(direct_lowering(tiled, limits) or tiled)
    except Exception as e:  # noqa: BLE001 - the rule does not apply at every size
        log(f"stencil-2d-tiling: {e}")
    choices = {}
    for rule in RULES_BLOCKED:
        for rw in rewrites(prog, [RULES[rule]], limits)[:per_rule]:
            seeds.append(rw.result)
            choices[key(rw.result.body)] = (rule, rw.choice)
    return seeds, choices


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "lift_conv"))
    ap.add_argument("--leaf", default="hopper", help="leaf level of the MCPL versions")
    ap.add_argument("--device", default=None, help="PLATFORM:DEVICE (default: MCL_DEVICE)")
    ap.add_argument("--size", action="append", default=[], metavar="NAME=INT",
                    help="override a size of reference.PAPER_SIZES[0] (h, w, fh, fw)")
    ap.add_argument("--budget", type=int, default=2,
                    help="candidates of the tree search after the seeds (default 2)")
    ap.add_argument("--choices", type=int, default=6,
                    help="choices of each register-blocking rule evaluated first (default 6 "
                         "of at most 12; the search may find the others)")
    ap.add_argument("--repeat", type=int, default=10, help="timed runs per kernel")
    ap.add_argument("--max-version-s", type=float, default=10.0,
                    help="MCPL versions predicted to run longer than this are not run")
    ap.add_argument("--any-device", action="store_true",
                    help="run on whatever OpenCL device there is (PoCL: use small sizes)")
    args = ap.parse_args(argv)

    from mcl.lift import macros  # noqa: F401  (registers the macro rules)
    from mcl.lift.compare import (
        Inputs,
        _roofline_bound,
        measure_mcpl,
        on_path,
        versions,
    )
    from mcl.lift.explore import Evaluator, explore
    from mcl.lift.from_mcpl import derive, reference_module, reference_output
    from mcl.lift.ir import bind_sizes
    from mcl.lift.printer import key

    dev = nvidia(args.device)
    if dev is None and not args.any_device:
        log("conv_candidates.py times kernels on an NVIDIA GPU and found none (MCL_DEVICE="
            "NVIDIA: after `. benchmarks/gpu_setup.sh`); --any-device runs on another device")
        return 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    ref = reference_module(KERNEL)
    sizes = dict(ref.PAPER_SIZES[0])
    for s in args.size:
        k, _, v = s.partition("=")
        sizes[k] = int(v)
    t0 = time.time()

    # --- MCPL versions
    values = ref.inputs(np.random.default_rng(0), **sizes)
    expected = reference_output(ref, values, "output")
    inputs = Inputs(ref, sizes, values, "output", 0)
    mcpl = []
    for p in on_path(versions(KERNEL.parent), args.leaf):
        t = time.time()
        r = measure_mcpl(p, args.leaf, inputs, expected, ref.TOLERANCE, args.device, args.repeat,
                         args.max_version_s)
        mcpl.append({"version": r.version, "status": r.status, "time_s": r.time_s,
                     "note": r.note})
        log(f"{r.version}: {r.status}" + (f" {r.time_s * 1e3:.4f} ms" if r.time_s else "")
            + f" ({time.time() - t:.1f} s)")

    # --- Lift
    d = derive(KERNEL, None, constants=sizes)
    names = [i.name for i in d.inputs]

    def reference(*xs):
        return reference_output(ref, {**sizes, **dict(zip(names, xs, strict=True))}, d.output)

    bound = bind_sizes(d.program, sizes)
    ev = Evaluator(bound, sizes, args.device, repeat=args.repeat, reference=reference)
    limits = ev.limits()
    seeds, choices = lift_seeds(bound, limits, args.choices)
    from mcl.lift import stencil_blocking as S
    dims = (sizes["h"], sizes["w"], sizes["fh"], sizes["fw"])
    shape_choices = dict(zip(RULES_BLOCKED, (S.blocking_choices(*dims, limits),
                                             S.local_blocking_choices(*dims, limits)),
                             strict=True))
    log(f"Lift: {len(seeds)} seeds ({len(choices)} register-blocked), then {args.budget} more")
    explored = out / "explore_convolution.json"
    explored.unlink(missing_ok=True)
    res = explore(d.program, sizes, "mcts", len(seeds) + args.budget, args.device,
                  str(explored), seed=0, evaluator=ev, limits=limits, progress=sys.stderr,
                  repeat=args.repeat, seeds=tuple(seeds))
    lift = []
    seed_keys = {key(s.body): i for i, s in enumerate(seeds)}
    for k, e in res.evaluations.items():
        body_key = k.split(" @local=")[0]
        ch = choices.get(body_key)
        blocking = None
        if ch is not None:
            rule, i = ch
            blocking = dict(zip(("c", "r", "l1", "l0", "w"), shape_choices[rule][i],
                                strict=True))
            blocking["tile in local memory"] = rule != RULES_BLOCKED[0]
        lift.append({"status": e["status"], "time_s": e["time_s"], "message": e["message"][:300],
                     "seed": body_key in seed_keys, "blocking": blocking,
                     "expression": e["expression"]})

    ok_m = [r for r in mcpl if r["status"] == "ok"]
    ok_l = [r for r in lift if r["status"] == "ok"]
    best_m = min(ok_m, key=lambda r: r["time_s"]) if ok_m else None
    best_l = min(ok_l, key=lambda r: r["time_s"]) if ok_l else None
    ratio = best_l["time_s"] / best_m["time_s"] if best_m and best_l else None
    bound_s, bound_note = _roofline_bound(KERNEL.parent, args.leaf, sizes)
    flops = float(ref.flops(**sizes))
    best_eval = res.best()
    record = {"device": dev or ev._rt.info.spec, "leaf": args.leaf, "sizes": sizes,
              "mcpl": mcpl, "lift": sorted(lift, key=lambda r: (r["time_s"] is None,
                                                               r["time_s"] or 0)),
              "best_mcpl": best_m, "best_lift": best_l, "lift_over_mcpl": ratio,
              "roofline_bound_s": bound_s, "roofline_note": bound_note,
              "best_lift_source": best_eval.get("source", "") if best_eval else "",
              "wall_s": time.time() - t0}
    (out / "conv_candidates.json").write_text(json.dumps(record, indent=1))

    def ms(t):
        return f"{t * 1e3:.4f}" if t else "—"

    def frac(t):
        return f"{100 * bound_s / t:.1f}%" if t and bound_s else "—"

    lines = [f"# Convolution {sizes}: Lift's candidates and the MCPL versions", "",
             f"Device: {record['device']}; leaf {args.leaf}; {bound_note}", "",
             "| implementation | status | time (ms) | GFLOP/s | of roofline |",
             "|---|---|---|---|---|"]
    for r in mcpl:
        lines.append(f"| MCPL {r['version']} | {r['status']} | {ms(r['time_s'])} | "
                     f"{flops / r['time_s'] / 1e9:.0f} | {frac(r['time_s'])} |"
                     if r["time_s"] else f"| MCPL {r['version']} | {r['status']} | — | — | — |")
    for r in record["lift"]:
        b = r["blocking"]
        what = (f"Lift blocked c={b['c']} r={b['r']} group {b['l1']}x{b['l0']} w={b['w']}"
                + (" local tile" if b["tile in local memory"] else "")
                if b else "Lift " + r["expression"][:60].replace("|", "/") + "...")
        lines.append(f"| {what} | {r['status']} | {ms(r['time_s'])} | "
                     + (f"{flops / r['time_s'] / 1e9:.0f} | {frac(r['time_s'])} |"
                        if r["time_s"] else "— | — |"))
    lines += ["", f"Best MCPL: {best_m['version'] if best_m else '—'} "
                  f"{ms(best_m and best_m['time_s'])} ms; best Lift "
                  f"{ms(best_l and best_l['time_s'])} ms; Lift / MCPL time: "
                  + (f"{ratio:.2f}" if ratio else "—"),
              "", f"Best Lift expression: {best_l['expression'] if best_l else '—'}", ""]
    (out / "conv_candidates.md").write_text("\n".join(lines))
    print("\n".join(lines))
    return 0 if best_l else 1


if __name__ == "__main__":
    sys.exit(main())
