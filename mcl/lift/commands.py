"""``mcl lift check|print|rewrite|gen|explore|from-mcpl``: the Lift commands."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from mcl.cli import (
    UsageError,
    add_hwd_path_option,
    add_output_options,
    hwd_search_path,
    output_file,
    output_folder,
    output_path,
    parse_assignments,
    print_diagnostics,
    print_output,
    write_output_file,
)
from mcl.diagnostics import SourceCache


def size_assignments(args, known: list[str] | None = None, owner: str = "") -> dict[str, int]:
    """The ``--size NAME=INT`` options; a size is a positive integer, and with ``known``
    (the sizes of ``owner``, a program or kernel) one of those names."""
    sizes = parse_assignments(args.size, "--size")
    for name, value in sizes.items():
        if known is not None and name not in known:
            raise UsageError(f"--size {name}: '{owner}' has no size '{name}' (its sizes: "
                             f"{', '.join(known) or 'none'})")
        if value < 1:
            raise UsageError(f"--size {name}: {value} is not a size (give a positive integer)")
    return sizes


def program_sizes(prog) -> list[str]:
    """The names of the size symbols of a Lift program, sorted (:func:`size_names`)."""
    from mcl.lift.ir import size_names
    return size_names(prog)


def kernel_sizes(path: str, function: str | None) -> tuple[str, list[str] | None]:
    """(function name, names of its integer scalar parameters) of an MCPL kernel: the
    sizes ``--size`` may set; None where the function is not found (derive reports it)."""
    from mcl.mcpl import parse_file
    functions = parse_file(Path(path)).functions
    f = next((f for f in functions if f.name == function), None) if function else \
        (functions[0] if functions else None)
    if f is None:
        return function or "", None
    return f.name, [p.name for p in f.params if p.type.name == "int" and not p.type.dims]


def check_results_option(args) -> None:
    """Refuse a ``--results`` file that cannot be written before exploring (which takes
    minutes), naming the path given."""
    if getattr(args, "results", None):
        from mcl.lift.explore import check_results_path
        check_results_path(args.results)


def _load(args, typed: bool = True):
    """The program of ``args.file``; ``typed``: type-checked at its symbolic sizes, so that
    rewriting, generating or exploring never starts from an ill-typed program (sizes
    bound later could hide the error: zip of float[N] and float[M] with N = M)."""
    from mcl.lift.parser import parse_file
    from mcl.lift.typecheck import check_program
    prog = parse_file(args.file, getattr(args, "program", None))
    if typed:
        check_program(prog)
        from mcl.lift.associativity import nonassociative_reductions
        warned = nonassociative_reductions(prog)
        if warned:
            print_diagnostics(warned, args, SourceCache(), stream=sys.stderr)
    return prog


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("lift", help="Lift: functional patterns, rewrite rules, exploration",
                       formatter_class=argparse.RawDescriptionHelpFormatter,
                       description=LIFT_DESCRIPTION)
    lsub = p.add_subparsers(dest="lift_command", metavar="COMMAND")

    def common(q, sizes=True, file_help="a Lift program (.lift)", optional=False):
        q.add_argument("file", help=file_help, **({"nargs": "?"} if optional else {}))
        q.add_argument("--program", help="the definition to use (default: main or the last)")
        if sizes:
            q.add_argument("--size", action="append", default=[], metavar="NAME=INT",
                           help="value of a size symbol (repeatable)")
        add_output_options(q)

    q = lsub.add_parser("check", help="parse and type-check a program",
                        description="Parse and type-check a Lift program; print its "
                                    "parameters and the type of its result, or the errors "
                                    "at their file:line:column.")
    common(q, sizes=False)
    q.set_defaults(func=cmd_check)

    q = lsub.add_parser("print", help="print a program back in the textual syntax")
    common(q, sizes=False)
    q.add_argument("--canonical", action="store_true", help="rename parameters p0, p1, ...")
    q.set_defaults(func=cmd_print)

    def rule_options(q):
        q.add_argument("--rule", action="append", default=[], help="apply this rule (repeatable, "
                       "in order)")
        q.add_argument("--at", help="position of the first rule, as --list prints it (e.g. "
                       "0.1.2, or root; default: the first match)")
        q.add_argument("--choice", type=int, default=0, help="parameter choice of the first rule")

    q = lsub.add_parser("rewrite", help="list or apply rewrite rules",
                        description="Without --rule (or with --list): list the rewrites "
                                    "that apply, one a line: the rule, its position (--at) "
                                    "and parameter choice (--choice), and the result. With "
                                    "--rule: print the program the rules derive, the first "
                                    "at --at with --choice, the others where they first "
                                    "apply. --rules lists every rule. Numeric sizes "
                                    "(--size) give the rules their choices (split(4), ...).")
    common(q, file_help="a Lift program (.lift); not needed with --rules", optional=True)
    q.add_argument("--list", action="store_true", help="list the rewrites that apply")
    q.add_argument("--rules", action="store_true", help="list every rule")
    rule_options(q)
    q.set_defaults(func=cmd_rewrite)

    q = lsub.add_parser("gen", help="generate OpenCL for a fully lowered program",
                        description="Generate OpenCL for a fully lowered program, or for the "
                                    "program the rules given with --rule derive (e.g. --rule "
                                    "mm-tiling-vectorised).")
    common(q)
    rule_options(q)
    q.add_argument("-o", "--output", type=output_path("folder", "to print the kernel and its "
                                                      "plan"),
                   help="directory for kernel.cl and plan.json")
    q.add_argument("--local-size", type=int, help="work-group size of mapGlb kernels")
    q.set_defaults(func=cmd_gen)

    q = lsub.add_parser("explore", help="search implementations on an OpenCL device",
                        description="Search implementations of a Lift program on an OpenCL "
                                    "device: derive lowered programs by rewriting, generate, "
                                    "verify and time each. A size not given with --size gets "
                                    "a default (each input array 2^16 elements: N=65536 for "
                                    "a vector, 256 x 256 for a matrix), stated in the output. "
                                    "An MCPL kernel (.mcpl) is compared with its versions.")
    common(q, file_help="a Lift program (.lift), or an MCPL kernel (.mcpl): its Lift "
                        "program is derived, explored and compared with the MCPL versions "
                        "beside it (see --target)")
    q.add_argument("--device", help="PLATFORM:DEVICE substrings (default: MCL_DEVICE or best)")
    q.add_argument("--budget", type=int, default=200, help="candidates to evaluate")
    q.add_argument("--strategy", choices=("mcts", "random", "exhaustive"), default="mcts",
                   help="how rewrites are chosen: Monte-Carlo tree search (default), random "
                        "walks, or every sequence up to --depth")
    q.add_argument("--depth", type=int, default=3, help="depth of the exhaustive strategy")
    q.add_argument("--results", type=output_path("file", "to keep no results file"),
                   help="JSON results file (resumed when it exists)")
    q.add_argument("--seed", type=int, default=0,
                   help="seed of the random choices and inputs (default: 0)")
    q.add_argument("--repeat", type=int, default=10, help="timed runs per candidate")
    q.add_argument("--verbose", "-v", action="store_true",
                   help="list every candidate: its outcome, time, and why it was dropped")
    q.set_defaults(func=cmd_explore)
    p.set_defaults(func=lambda a: (p.print_help(), 2)[1])
    _register_from_mcpl(lsub)   # MCPL kernels: from-mcpl, explore KERNEL.mcpl


LIFT_DESCRIPTION = """\
Lift programs (.lift): type-check, print, rewrite, generate OpenCL, explore
implementations.

A program is user functions (bodies in C) and a definition of the inputs:

  userfun add(x: float, y: float): float = x + y
  sum = fun(x: float[N]) => reduce(add, 0.0f) $ x

'f o g' composes, 'f $ x' applies, 'fun(x) => e' is a lambda, 'p._0' takes a
tuple's component; sizes are names (N) or numbers. Patterns: map, reduce, zip,
split(n), join, transpose, slide(size, step), pad(l, r), id, and the lowered
forms the rules derive (mapGlb, mapWrg, mapLcl, mapSeq, reduceSeq, toLocal, ...).
Examples: mcl/lift/programs/ (sum, dot, asum, scal, gemv, mm, stencil).

  mcl lift check mcl/lift/programs/sum.lift
  mcl lift rewrite mcl/lift/programs/sum.lift --size N=1024 --list
  mcl lift explore mcl/lift/programs/sum.lift --size N=1048576 --budget 50
"""


def cmd_check(args) -> int:
    from mcl.lift.typecheck import check_program
    prog = _load(args)
    t = check_program(prog)
    if args.json:
        print(json.dumps({"program": prog.name, "type": str(t),
                          "params": {p.name: str(p.type) for p in prog.params}}))
    else:
        params = ", ".join(f"{p.name}: {p.type}" for p in prog.params)
        print(f"{args.file}: {prog.name}({params}) : {t}")
    return 0


def cmd_print(args) -> int:
    from mcl.lift.printer import key, show_program
    prog = _load(args, typed=False)
    print(key(prog.body) if args.canonical else show_program(prog), end="" if not
          args.canonical else "\n")
    return 0


def cmd_rewrite(args) -> int:
    from mcl.lift import macros  # noqa: F401  (registers the macro rules)
    from mcl.lift.printer import show, show_program
    from mcl.lift.rules import RULES, rewrites
    if args.rules:
        for r in RULES.values():
            print(f"{r.name:28} {r.kind:15} {r.doc}")
        return 0
    if args.file is None:
        raise UsageError("give a Lift program (.lift) to rewrite; --rules alone lists every "
                         "rule")
    prog = _load(args)
    sizes = size_assignments(args, program_sizes(prog), prog.name)
    if sizes:
        prog = _at_sizes(prog, sizes)
    if args.list or not args.rule:
        for rw in rewrites(prog):
            print(f"{rw.rule:28} at {'.'.join(map(str, rw.path)) or 'root':10} "
                  f"choice {rw.choice:<3} {show(rw.result.body.body)[:110]}")
        return 0
    print(show_program(_apply_rules(prog, args)), end="")
    return 0


def _at_sizes(prog, sizes: dict[str, int]):
    """``prog`` with ``sizes`` bound, type-checked there: sizes a split does not divide
    are said at the split, rather than as no rewrite applying (an empty list) or as
    a pattern left unlowered."""
    from mcl.lift.ir import bind_sizes
    from mcl.lift.typecheck import check_program
    bound = bind_sizes(prog, sizes)
    check_program(bound)
    return bound


def _apply_rules(prog, args):
    """``prog`` rewritten by the rules of ``--rule``, in order."""
    from mcl.lift import macros  # noqa: F401  (registers the macro rules)
    from mcl.lift.rules import apply_rule
    path = rule_position(args.at) if args.at is not None else None
    for i, name in enumerate(args.rule):
        prog = apply_rule(prog, name, path if i == 0 else None, args.choice if i == 0 else 0)
    return prog


def rule_position(text: str) -> tuple[int, ...]:
    """The position of ``--at``: indices separated by dots (``0.1.2``), or ``root``/empty
    for the whole expression, as ``mcl lift rewrite --list`` prints them."""
    if text.strip() in ("", "root"):
        return ()
    parts = text.strip().split(".")
    if not all(p.isdigit() for p in parts):
        raise UsageError(f"--at {text}: a position is numbers separated by dots (e.g. 0.1.2) "
                         "or 'root'; `mcl lift rewrite FILE --list` shows where rules apply")
    return tuple(int(p) for p in parts)


#: what ``mcl lift gen -o`` names (in the message of an output folder that cannot be written)
_GEN_OUTPUT = "where kernel.cl and plan.json are written"


def cmd_gen(args) -> int:
    from mcl.lift.codegen import Options, generate
    prog = _load(args)
    sizes = size_assignments(args, program_sizes(prog), prog.name)
    if sizes:
        prog = _at_sizes(prog, sizes)
    if args.rule:
        # macro rules choose their parameters for numeric sizes
        prog = _apply_rules(prog, args)
    if args.output:
        output_folder(args.output, "mcl lift gen", "-o", _GEN_OUTPUT, create=False)
    gen = generate(prog, sizes, Options(local_size=args.local_size))
    if args.output:
        out = output_folder(args.output, "mcl lift gen", "-o", _GEN_OUTPUT)
        (out / "kernel.cl").write_text(gen.source)
        (out / "plan.json").write_text(json.dumps(gen.plan(), indent=2))
        print(f"wrote {out / 'kernel.cl'} and {out / 'plan.json'}")
    else:
        print(gen.source)
        print("// launch plan: " + json.dumps(gen.plan()))
    return 0


def cmd_explore(args) -> int:
    mcpl = args.file.endswith((".mcpl", ".mcl"))
    for option in ("target", "function", "markdown", "hwd_path", "module_path"):
        if getattr(args, option, None) and not mcpl:
            option = option.replace("_", "-")
            print(f"mcl: warning: --{option} is ignored: it applies to an MCPL kernel "
                  "(.mcpl); a Lift program is explored on the OpenCL device --device names",
                  file=sys.stderr)
    for option in ("budget", "depth", "repeat"):
        if getattr(args, option) < 1:
            raise UsageError(f"--{option}: {getattr(args, option)}; give 1 or more")
    if args.seed < 0:
        raise UsageError(f"--seed: {args.seed}; give 0 or more")
    if mcpl:
        return cmd_explore_mcpl(args)
    from mcl.lift.explore import ExploreInterrupted, default_sizes, explore, outcome_counts
    prog = _load(args)
    sizes = size_assignments(args, program_sizes(prog), prog.name)
    check_results_option(args)
    defaults = default_sizes(prog, sizes)
    sizes = {**sizes, **defaults}
    if defaults and not args.json:
        given = ", ".join(f"{k}={v}" for k, v in sizes.items() if k not in defaults)
        print("sizes: " + ", ".join(f"{k}={v}" for k, v in defaults.items())
              + " (not given: a default; choose with "
              + " ".join(f"--size {k}=..." for k in defaults) + ")"
              + (f"; {given}" if given else ""), flush=True)
    try:
        results = explore(prog, sizes, args.strategy, args.budget, args.device, args.results,
                          args.seed, args.depth, progress=sys.stderr, repeat=args.repeat)
    except ExploreInterrupted as stop:
        # Ctrl-C: what was found so far, where it is kept, and the exit status of an
        # interrupted command (128 + SIGINT)
        results = stop.results
        best = results.best()
        candidates = results.candidates()
        if args.json:
            print(json.dumps({"interrupted": True, "tried": stop.tried,
                              "budget": stop.budget, "results_file": _kept(stop, args),
                              **_explore_json(results, sizes, defaults)}, indent=2))
        elif candidates:
            print(f"interrupted after {stop.tried} of {stop.budget} candidates; "
                  "the best so far:")
            print_candidates(candidates, len(results.evaluations), args.verbose)
            _print_best(best)
        print(interrupted_text(stop, args.results), file=sys.stderr)
        return EXIT_INTERRUPTED
    best = results.best()
    candidates = results.candidates()
    counts = outcome_counts(candidates)
    if args.json:
        print(json.dumps(_explore_json(results, sizes, defaults), indent=2))
        return 0 if best else 1
    if not counts:
        powers = {k: 1 << max(0, int(v) - 1).bit_length() for k, v in sizes.items()}
        why = (": the rules split arrays into parts of powers of two; try "
               + ", ".join(f"{k}={v}" for k, v in powers.items()) if powers != sizes else
               f" within this search ({args.strategy}"
               + (f", depth {args.depth}" if args.strategy == "exhaustive" else "")
               + "); try a larger --budget or --depth, or another --strategy")
        print(f"no sequence of rewrites lowered '{prog.name}' at "
              + ", ".join(f"{k}={v}" for k, v in sizes.items()) + why)
        return 1
    print_candidates(candidates, len(results.evaluations), args.verbose)
    _print_best(best)
    return 0 if best else 1


#: The exit status of a command stopped by Ctrl-C (128 + SIGINT), as a shell gives it.
EXIT_INTERRUPTED = 130


def _explore_json(results, sizes: dict, defaults: dict) -> dict:
    """What ``mcl lift explore --json`` prints of a search's results."""
    from mcl.lift.explore import outcome_counts, reasons
    candidates = results.candidates()
    return {"best": results.best(), "counts": outcome_counts(candidates), "sizes": sizes,
            "default_sizes": sorted(defaults),
            "dropped": [{"status": st, "count": n, "reason": why}
                        for st, n, why in reasons(candidates)]}


def _print_best(best: dict | None) -> None:
    """The best candidate of a search: its time and launch, expression and OpenCL."""
    from mcl.lift.explore import launch_text
    if not best:
        print("no correct candidate was found")
        return
    launch = launch_text(best, label=True)
    print(f"best: {best['time_s'] * 1e3:.4f} ms" + (f" ({launch})" if launch else ""))
    print(f"expression: {best['expression']}")
    print("OpenCL:\n" + best["source"])


def _kept(stop, args) -> str | None:
    """The results file that holds the candidates of an interrupted search, if any."""
    return str(args.results) if args.results and stop.results.path is not None else None


def interrupted_text(stop, results_option: str | None) -> str:
    """What ``mcl lift explore`` says on stderr when Ctrl-C stopped its search: how far it
    got and where the candidates evaluated so far are kept (or that they are not)."""
    head = f"mcl: interrupted after {stop.tried} of {stop.budget} candidates"
    if not stop.tried:
        return head + " (before any was evaluated)"
    if results_option and stop.results.path is not None:
        return (head + f"; the results so far are in {results_option}: run the same command "
                "again to resume the search")
    return (head + "; their results were not kept: give --results FILE to keep a search's "
            "results and resume it")


def print_candidates(candidates: list[dict], stored: int, verbose: bool) -> None:
    """The outcomes of the candidates of a search (adding up to their number), why
    those not kept were dropped, and with ``verbose`` every candidate."""
    from mcl.lift.explore import listing, reasons, summary
    earlier = stored - len(candidates)
    print(summary(candidates)
          + (f" (the results file holds {earlier} more, of earlier searches)"
             if earlier > 0 else ""))
    for status, n, why in reasons(candidates):
        print(f"  {n} {status}: {why}")
    if verbose:
        print("every candidate (outcome, time, launch: global and work-group size, reason, "
              "expression):")
        for line in listing(candidates):
            print(line)


def _register_from_mcpl(lift_subparsers: argparse._SubParsersAction) -> None:
    """Add ``from-mcpl`` to ``mcl lift``, and to ``explore`` the options of an MCPL kernel."""
    p = lift_subparsers.add_parser(
        "from-mcpl", help="derive a Lift program from an MCPL kernel (perfect, accelerator)",
        description="Turn an MCPL kernel written at a level with one kind of parallel unit "
                    "into a Lift high-level program: foreach becomes map, accumulating loops "
                    "become reduce, element-wise combination zip, affine windows slide. "
                    "Explains, at the MCPL source, what Lift cannot express.")
    p.add_argument("file", metavar="FILE", help="MCPL module (.mcpl)")
    p.add_argument("--function", "-f", help="the function to derive (default: the first)")
    p.add_argument("--output", help="the array to compute when the kernel writes several")
    p.add_argument("--explain", action="store_true",
                   help="also say which MCPL construct became which Lift pattern")
    p.add_argument("--verify", action="store_true",
                   help="run the program with Lift's interpreter against reference.py "
                        "(beside the kernel) on random inputs of its test sizes")
    p.add_argument("-o", "--out", metavar="FILE", type=output_path("file", "to print the "
                                                                   "program"),
                   help="write the program to FILE (.lift)")
    add_output_options(p)
    add_hwd_path_option(p)
    p.set_defaults(func=run_from_mcpl)
    ex = lift_subparsers.choices.get("explore")
    if ex is not None:   # `mcl lift explore KERNEL.mcpl`: options of the comparison
        extra = [("--target", dict(metavar="LEAF", help="KERNEL.mcpl: the leaf level the MCPL "
                                   "versions are compiled for (default: MCL_TARGET)")),
                 ("--function", dict(help="KERNEL.mcpl: the function to derive")),
                 ("--markdown", dict(action="store_true",
                                     help="KERNEL.mcpl: print the table as markdown")),
                 ("--max-version-s", dict(type=float, default=20.0, metavar="S",
                                          help="KERNEL.mcpl: leave out MCPL versions whose "
                                          "one run is predicted (from runs at smaller sizes) "
                                          "to take longer than S seconds (default 20)"))]
        for flag, kw in extra:
            if flag not in ex._option_string_actions:
                ex.add_argument(flag, **kw)
        if "--hwd-path" not in ex._option_string_actions:
            add_hwd_path_option(ex)   # the kernel's levels, as for from-mcpl


#: what ``mcl lift from-mcpl -o`` names (in the message of an output file that cannot be
#: written)
_FROM_MCPL_OUTPUT = "the Lift program is written to"


def run_from_mcpl(args: argparse.Namespace) -> int:
    from mcl.cli import EXIT_ERRORS
    from mcl.lift.from_mcpl import derive, reference_module, verify
    if args.out:        # before the work: a mistyped path is said at once
        output_file(args.out, "mcl lift from-mcpl", "-o", _FROM_MCPL_OUTPUT)
    d = derive(args.file, args.function, args.output,
               search_path=tuple(hwd_search_path(args, args.file)))
    text = d.text()
    if args.out:
        write_output_file(args.out, text, "mcl lift from-mcpl", "-o", _FROM_MCPL_OUTPUT)
    else:
        print_output(text)
    if args.explain and d.notes:
        print_diagnostics(d.notes, args, SourceCache())
    if args.verify:
        ref = reference_module(args.file)
        if ref is None:
            print(f"no reference.py beside {args.file}: nothing to verify against")
            return EXIT_ERRORS
        bad = 0
        for sizes in ref.SIZES:
            c = verify(d, ref, sizes)
            bad += not c.ok
            print(f"verify {sizes}: {'ok' if c.ok else 'MISMATCH'} (max |error| {c.max_error:.3g})")
        return EXIT_ERRORS if bad else 0
    return 0


def cmd_explore_mcpl(args: argparse.Namespace) -> int:
    """``mcl lift explore KERNEL.mcpl``: derive, explore with Lift, compare with the MCPL
    versions beside the kernel (see :mod:`mcl.lift.compare`)."""
    import os

    from mcl.lift.compare import compare, table
    from mcl.opencl import available_targets
    from mcl.opencl.target import load_target
    leaf = getattr(args, "target", None) or os.environ.get("MCL_TARGET")
    # the levels of the user's (--hwd-path, MCL_HWD_PATH) and those beside the kernel
    search = tuple(hwd_search_path(args, args.file))
    if not leaf:
        raise UsageError("say which leaf level the MCPL versions are compiled for: --target "
                         "LEAF (one of " + ", ".join(available_targets(search)) + ")")
    function, known = kernel_sizes(args.file, getattr(args, "function", None))
    sizes = size_assignments(args, known, function)
    check_results_option(args)
    # as `mcl run` and `mcl gen`: an unknown description, or a level without a
    # code-generation target (not a leaf), is refused before anything is explored
    load_target(leaf, search)
    from mcl.lift.explore import ExploreInterrupted
    try:
        c = compare(args.file, leaf, sizes, args.budget, args.strategy, args.device,
                    args.seed, args.depth, args.results, args.repeat,
                    getattr(args, "function", None), progress=sys.stderr,
                    max_version_s=getattr(args, "max_version_s", None), search_path=search)
    except ExploreInterrupted as stop:
        # Ctrl-C in Lift's search (the MCPL versions' times are on stderr already)
        candidates = stop.results.candidates()
        if candidates:
            print(f"interrupted after {stop.tried} of {stop.budget} Lift candidates; "
                  "the best so far:")
            print_candidates(candidates, len(stop.results.evaluations),
                             getattr(args, "verbose", False))
            _print_best(stop.results.best())
        print(interrupted_text(stop, args.results), file=sys.stderr)
        return EXIT_INTERRUPTED
    print(table(c, markdown=getattr(args, "markdown", False)), end="")
    if getattr(args, "verbose", False) and c.lift_candidates:
        from mcl.lift.explore import listing
        print("\nLift candidates (outcome, time, launch: global and work-group size, reason, "
              "expression):")
        for line in listing(c.lift_candidates):
            print(line)
    return 0 if any(r.status == "ok" for r in c.rows) else 1


__all__ = ["register", "print_diagnostics", "SourceCache"]
