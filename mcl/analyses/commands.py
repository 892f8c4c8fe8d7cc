"""The `mcl feedback` command: performance feedback for MCPL kernels."""

from __future__ import annotations

import argparse
import functools

from mcl.analyses import PASSES
from mcl.cli import (
    UsageError,
    add_hwd_path_option,
    add_output_options,
    check_parameter_values,
    hwd_search_path,
    parse_assignments,
    print_diagnostics,
)
from mcl.diagnostics import SourceCache


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "feedback", help="performance feedback for MCPL kernels",
        description="Combine a kernel with the hardware description of its level and say "
                    "what limits performance: operation counts, transfers, data reuse, "
                    "faster memories, work per thread, caches, the description's feedback "
                    "functions (occupancy, coalescing, bank conflicts) and a roofline.")
    p.add_argument("files", nargs="+", metavar="FILE", help="MCPL modules")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                   help="a value for a parameter (over its default); may be repeated")
    p.add_argument("--only", metavar="PASSES",
                   help="comma-separated passes: " + ", ".join(PASSES))
    p.add_argument("--level", metavar="LEVEL",
                   help="translate to this hardware description first and give the feedback "
                        "of the translated version")
    p.add_argument("--registers", choices=("auto", "estimate"), default="auto",
                   help="auto (default): where an NVIDIA OpenCL device is present, build the "
                        "kernel with NVIDIA's compiler and use its register count ('127 "
                        "registers (NVIDIA compiler)'), and where ptxas and cuobjdump (the "
                        "CUDA toolkit) are on the PATH too, the bytes a warp keeps in flight "
                        "in its machine code for the predicted time's latency part; "
                        "estimate: always use the analyses' estimate (said as 'estimated')")
    p.add_argument("--specialize", action="store_true",
                   help="analyse the kernel built with its sizes as compile-time constants, "
                        "as `mcl run --specialize` builds it: loops over sizes unrolled, and "
                        "NVIDIA's compiler asked about that build (the default for a version "
                        "that the reference.py beside it names in SPECIALIZE)")
    p.add_argument("--no-previous", dest="previous", action="store_false",
                   help="do not compare with the version the file refines (by default, a "
                        "version predicted slower than its predecessor among the versions in "
                        "its folder is flagged, as `mcl versions` orders them)")
    add_hwd_path_option(p)
    add_output_options(p)
    p.set_defaults(func=run_feedback)


def _specialized(args: argparse.Namespace, file: str) -> bool:
    """Whether the kernel is built as `mcl run` builds it with its sizes as compile-time
    constants: where asked, or where reference.py says the version is written for its
    sizes (mcl.versions.sizes.built_specialised)."""
    from mcl.versions.sizes import built_specialised
    return args.specialize or built_specialised(file)


def _vendor_resources(args: argparse.Namespace, checked, level: str | None, values,
                      specialize: bool) -> dict:
    """The NVIDIA compiler's registers per function, when asked for and possible: of the
    kernel built as `mcl run` builds it (``specialize``: :func:`_specialized`)."""
    if args.registers != "auto":
        return {}
    from mcl.opencl.vendor import nvidia_device, resources_of
    device = nvidia_device()
    if device is None:
        return {}
    from mcl.opencl.target import available_targets
    targets = set(available_targets())
    levels = {level} if level else {f.hardware for f in checked.module.functions}
    if not levels <= targets:   # no OpenCL target: nothing to build, the estimate stays
        return {}
    return resources_of(checked.module, values, level, device, specialize=specialize)


def _only_passes(given: str | None) -> set[str] | None:
    """The passes of ``--only`` (None: all); a usage error for an empty list or an
    unknown name, with the closest known name."""
    if given is None:
        return None
    only = {s.strip() for s in given.split(",") if s.strip()}
    if not only:
        raise UsageError(f"--only '{given}' names no pass; choose from {', '.join(PASSES)} "
                         "(or leave --only out for all of them)")
    unknown = sorted(only - set(PASSES))
    if unknown:
        from mcl.mcpl.check_common import closest
        close = [c for c in (closest(u.lower(), PASSES) for u in unknown) if c]
        raise UsageError(f"--only: unknown pass(es) {', '.join(unknown)}"
                         + (f" (did you mean {', '.join(close)}?)" if close else "")
                         + f"; choose from {', '.join(PASSES)}")
    return only


def _check_level(args: argparse.Namespace) -> None:
    """A usage error where ``--level`` names no hardware description of the library, of
    --hwd-path and MCL_HWD_PATH or beside a file, with the closest name."""
    from mcl.hdl.library import hardware_library
    from mcl.mcpl.check_common import closest
    known: dict[str, None] = {}
    for f in args.files:
        library = hardware_library(hwd_search_path(args, f))
        if args.level in library:   # also one whose file has errors: the feedback says so
            return
        known.update(dict.fromkeys(library.names()))
    lower = {name.lower(): name for name in known}
    close = lower.get(args.level.lower()) or closest(args.level.lower(), known)
    raise UsageError(f"--level: unknown hardware description '{args.level}'"
                     + (f" (did you mean '{close}'?)" if close else "")
                     + f"; known: {', '.join(known)} (`mcl hwd list` shows the hierarchy; "
                     "add descriptions of your own with --hwd-path or MCL_HWD_PATH)")


def run_feedback(args: argparse.Namespace) -> int:
    from mcl.analyses import check_values, feedback
    from mcl.analyses.kernel import scalar_parameters, values_of
    from mcl.mcpl.resolve import check

    all_values = parse_assignments(args.set, "--set")
    only = _only_passes(args.only)
    hwd_search_path(args)   # a directory that does not exist, before any file
    if args.level is not None:
        _check_level(args)
    diagnostics = []
    sources = SourceCache()
    params: dict[str, None] = {}     # the scalar parameters of the files, in order
    arrays: dict[str, None] = {}     # and their array parameters
    broken = False                   # a file with errors
    for f in args.files:
        search = hwd_search_path(args, f)   # with the descriptions beside the file
        checked = check(f, search)
        if checked.has_errors:
            diagnostics += checked.errors
            broken = True   # its parameters are unknown: --set may name one of them
            continue
        params.update((name, None) for name in scalar_parameters(checked.module))
        arrays.update((p.name, None) for fn in checked.module.functions
                      for p in fn.params if p.type.is_array)
        # the --set values of this file's parameters (the others may be another file's)
        values = values_of(checked.module, all_values)
        check_parameter_values(checked.module.functions, values, "--set")
        check_values(checked.module, values)
        specialize = _specialized(args, f)
        if args.level:
            from mcl.analyses.level import feedback_at_level

            at = feedback_at_level(checked, args.level, values=values, only=only,
                                   search_path=search, specialize=specialize,
                                   resources=_vendor_resources(args, checked, args.level,
                                                               values, specialize))
            sources.add(at.file, at.text)  # carets under the translated text's lines
            diagnostics += at.diagnostics
            continue
        resources = _vendor_resources(args, checked, None, values, specialize)
        found = feedback(checked, values=values, only=only, resources=resources,
                         specialize=specialize)
        diagnostics += found
        if args.previous and (only is None or "time" in only):
            from mcl.analyses.previous import against_previous
            diagnostics += against_previous(
                checked, values, search, resources, specialize, computed=found,
                vendor=functools.partial(_vendor_resources, args))
    unknown = [name for name in all_values if name not in params]
    if unknown and params and not broken:
        name = unknown[0]
        if name in arrays:
            raise UsageError(f"--set {name}: '{name}' is an array parameter; --set gives "
                             f"scalar parameters a value (parameters: {', '.join(params)})")
        from mcl.mcpl.check_common import closest
        close = closest(name, params)
        raise UsageError(f"--set {name}: no function of {', '.join(args.files)} has a "
                         f"parameter '{name}'"
                         + (f" (did you mean '{close}'?)" if close else "")
                         + f" (parameters: {', '.join(params)})")
    return print_diagnostics(diagnostics, args, sources)

