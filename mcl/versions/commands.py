"""``mcl versions``: the refinement history of a kernel, verified across levels."""

from __future__ import annotations

import argparse
import json
import sys

DESCRIPTION = """\
The versions of one kernel and how they refine each other, verified against each other.

PATH is a folder of versions (like examples/matmul/), one MCPL file (its versions in
its git history, oldest first, plus the working copy when it differs), or several
files. Which version refines which follows the levels of the hierarchy and the
file names (gpu.mcpl, gpu_v1.mcpl, gpu_v2.mcpl, ...) or a `// refines: gpu_v1.mcpl`
comment in the file. For every step the feedback that disappeared and appeared and
the code diff are shown.

Every version is compiled for a leaf below its level, run on the OpenCL device on
the same random inputs at several sizes (1, primes, sizes that divide no tile,
multiples of what the versions need), and compared with reference.py beside the
versions when there is one, else with the highest-level version. Tolerances follow
the dtype and the operations per output element; a version that differs is
reported with its first differing element. On a GPU each version is also timed
(best of --repeat launches, profiling events) beside the roofline bound and the
predicted time of its level.

With --json, each entry of "versions" has its name, file, level, parent and
why_parent ("refines comment", "level order", "git history", or "" for a root),
commit, usable, why_unusable and other_kernel. A version that is not usable is not
run (verdict "left out"); why_unusable says why ("" when usable): "another kernel"
(it holds the kernel other_kernel, not the set's: no node of the tree), "unreadable"
(not UTF-8 text, or not readable), "errors" (it does not check), "no kernel" (no
function with foreach loops), "no leaf" (no leaf below its level to generate OpenCL
for) or "compile error" (its OpenCL could not be generated or built); the errors
themselves are in "problems", at the version's file. A *.mcpl entry of a folder that
is no file is no version: only a problem (versions-not-a-file) says it is left out.

Exit status: 0 all versions consistent, 1 a version differs or the input has errors.
"""


def register(sub: argparse._SubParsersAction) -> None:
    from mcl.cli import add_hwd_path_option, output_path

    p = sub.add_parser("versions", help="refinement tree, feedback and code diffs, and "
                       "cross-level verification of a kernel's versions",
                       description=DESCRIPTION,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("paths", nargs="+", metavar="PATH",
                   help="a folder of versions, an MCPL file in git, or several files")
    p.add_argument("--sizes", default="small", metavar="SIZES",
                   help="small (default), medium, reference (reference.py's SIZES), or "
                        "sets such as 'n=37,m=100,p=19;n=1,m=1,p=1'")
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")
    p.add_argument("--device", help="PLATFORM:DEVICE substrings (default: MCL_DEVICE, else a "
                                    "GPU, else any device)")
    p.add_argument("--target", help="the leaf to run every version as (default: per version, "
                                    "the leaf below its level that most versions reach)")
    p.add_argument("--no-git", action="store_true",
                   help="for a single file: use its folder, not its git history")
    p.add_argument("--time", dest="time_it", action=argparse.BooleanOptionalAction,
                   default=None, help="time the versions (default: only on a GPU)")
    p.add_argument("--repeat", type=int, default=10, help="timed launches (best of; default 10)")
    launches = p.add_mutually_exclusive_group()
    launches.add_argument("--cold", dest="cold", action="store_true", default=True,
                          help="flush the device's caches before each timed launch: the "
                               "launch the feedback's predicted time is for (the default)")
    launches.add_argument("--warm", dest="cold", action="store_false",
                          help="time each launch as the previous one left the caches (the "
                               "steady state of repeated launches; the inputs may be in the "
                               "L2 already, faster than predicted)")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                   help="a size for the timing and the roofline (default: the parameter "
                        "defaults of the highest-level version); may be repeated")
    p.add_argument("--report", metavar="DIR", type=output_path("folder", "to write no report"),
                   help="write index.html and report.md into DIR")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")
    add_hwd_path_option(p)
    p.set_defaults(func=cmd_versions)


#: what ``--report`` names (in the message of an output folder that cannot be written)
_REPORT = "index.html and report.md are written to"


def cmd_versions(args: argparse.Namespace) -> int:
    from mcl.cli import hwd_search_path, output_folder, parse_assignments, print_diagnostics
    from mcl.versions import versions, write_report

    def progress(msg: str) -> None:
        if not args.quiet:
            print(f"  {msg}", file=sys.stderr, flush=True)

    from mcl.cli import UsageError
    if args.repeat < 1:     # refused before the versions are run, not by the timing
        raise UsageError(f"--repeat {args.repeat}: time at least 1 launch")
    if args.seed < 0:
        raise UsageError(f"--seed {args.seed}: a seed is an integer of 0 or more")
    if args.report:   # refused before the versions are run, not after
        output_folder(args.report, "mcl versions", "--report", _REPORT, create=False)
    path = args.paths if len(args.paths) > 1 else args.paths[0]
    search_path = tuple(hwd_search_path(args, *args.paths))
    if args.target:     # a mistyped leaf is said once, before any version is run
        from mcl.hdl.commands import name_not_file
        from mcl.opencl.target import load_target
        name_not_file(args.target, "--target")
        load_target(args.target, search_path)
    result = versions(path, sizes=args.sizes, seed=args.seed, device=args.device,
                      target=args.target, git=False if args.no_git else None,
                      time_it=args.time_it, repeat=args.repeat, cold=args.cold,
                      timing_values=parse_assignments(args.set, "--set"),
                      search_path=search_path, progress=progress)
    if args.report:
        written = write_report(result, output_folder(args.report, "mcl versions",
                                                     "--report", _REPORT))
        size = sum(p.stat().st_size for p in written)
        progress(f"report: {', '.join(str(p) for p in written[:2])} ({size / 1024:.0f} kB)")
    if args.json:
        print(json.dumps(result.to_json(), indent=1, default=str))
    else:
        _print_text(result)
        print_diagnostics(result.problems, args, stream=sys.stderr)
    return 1 if result.failed else 0


def _print_text(result) -> None:
    from mcl.versions.report import _seconds, _summary, _tree_lines, at_text, elsewhere

    print(_summary(result))
    ver = result.verification
    for depth, name, text in _tree_lines(result):
        print(f"{'  ' * depth}{name}: {text}")
        if ver is None:
            continue
        for s, c in zip(ver.size_sets, ver.checks.get(name) or [], strict=False):
            if c.status in ("differs", "error"):
                print(f"{'  ' * depth}    {s.text()}: {c.status}: {c.detail}")
    timed = [t for t in result.timings.values() if t.measured_s or t.bound_s]
    if timed:
        print("time at " + ", ".join(f"{k}={v}" for k, v in result.timing_sizes.items())
              + f" ({at_text(result)}: roofline bound / predicted by mcl feedback for a "
              f"cold launch / measured, best of the {result.launches} "
              "launches):")
        dev = result.device_level
        for t in timed:
            print(f"  {t.version}: {_seconds(t.bound_s)} / {_seconds(t.predicted_s)} / "
                  f"{_seconds(t.measured_s)}{elsewhere(t, dev)}")
    for s in result.steps:
        print(f"{s.parent} -> {s.child}: feedback -{len(s.disappeared)} +{len(s.appeared)} "
              f"~{len(s.changed)}, code +{s.added_lines} -{s.removed_lines}")
