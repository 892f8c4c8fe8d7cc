"""The ``mcl translate`` command: a module translated down the hierarchy of hardware
descriptions, printed as MCPL or written to a file."""

from __future__ import annotations

import argparse
from pathlib import Path

from mcl.cli import (
    CannotWrite,
    add_hwd_path_option,
    add_output_options,
    hwd_search_path,
    output_file,
    output_path,
    print_diagnostics,
    print_output,
    write_output_file,
)
from mcl.diagnostics import McplError, SourceCache, error


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "translate", help="translate a kernel to a level below its own",
        description="Translate the functions of an MCPL module to a lower level of the "
                    "hierarchy of hardware descriptions (one edge at a time, paper section "
                    "6.1): par_groups are split into nested ones with dimension and "
                    "indexing statements, memory spaces renamed to their equivalents. "
                    "Functions of levels not above the target stay as they are; a module "
                    "with no function above it is an error. The levels and their "
                    "hierarchy: mcl hwd list.")
    p.add_argument("file", metavar="FILE", help="the MCPL module to translate")
    p.add_argument("--to", required=True, metavar="LEVEL",
                   help="the hardware description to translate to, e.g. gpu, fermi")
    p.add_argument("-o", "--output", metavar="OUT",
                   type=output_path("file", "to print the result"),
                   help="write the result here instead of printing it")
    p.add_argument("--assume-divisible", action="store_true",
                   help="assume that sizes divide the numbers of units: exact division, no "
                        "guards (a comment in the output says so); by default the result "
                        "is correct for every size")
    add_hwd_path_option(p)
    add_output_options(p)
    p.set_defaults(func=run_translate)


#: what ``mcl translate -o`` names (in the message of an output file that cannot be written)
_OUTPUT = "the translated module is written to"


def run_translate(args: argparse.Namespace) -> int:
    from mcl.hdl.commands import name_not_file
    from mcl.mcpl import check, print_module
    from mcl.translate import translate

    if Path(args.file).suffix == ".hdl":
        raise McplError(error(
            "translate-file", f"'{args.file}' is a hardware description; mcl translate "
            "takes an MCPL module (.mcpl) and the name of a description (--to)", None,
            f"check the description with 'mcl hwd check {args.file}'; translate a kernel "
            f"with 'mcl translate --to NAME --hwd-path {Path(args.file).parent} kernel.mcpl'"))
    name_not_file(args.to, "--to")
    if args.output:     # before the work: a mistyped path is said at once
        output_file(args.output, "mcl translate", "-o", _OUTPUT)
        _not_the_input(args.output, args.file, args.to)
    search_path = hwd_search_path(args, args.file)
    checked = check(args.file, search_path)
    if checked.has_errors:
        # Translating a wrong program would only move the errors somewhere else.
        return print_diagnostics(checked.diagnostics, args, SourceCache())
    try:
        _require_a_step(checked.module, args.to, search_path)
        result = translate(checked.module, args.to, search_path=search_path,
                           assume_divisible=args.assume_divisible)
    except McplError as e:
        return print_diagnostics(e.diagnostics, args, SourceCache())
    text = print_module(result)
    if args.output:
        write_output_file(args.output, text, "mcl translate", "-o", _OUTPUT)
    else:
        print_output(text)
    return 0


def _not_the_input(output: str, source: str, to: str) -> None:
    """``-o`` naming the kernel itself would replace the source by its translation."""
    out, src = Path(output), Path(source)
    try:
        same = out.exists() and src.exists() and out.samefile(src)
    except OSError:
        return
    if same:
        raise CannotWrite(
            f"mcl translate: error: cannot write to '{output}': it is the kernel being "
            f"translated, '{source}' (-o names the file {_OUTPUT}; the source is kept): "
            f"write the result beside it, e.g. -o {src.with_stem(f'{src.stem}_{to}')}")


def _require_a_step(module, to: str, search_path: list[str]) -> None:
    """A module whose functions are all written for ``to`` already, or whose other
    functions are not above it, would come back unchanged: on the command line that is
    a mistake worth saying (the API returns the module, for callers that translate
    many)."""
    from mcl.hdl import hardware_library

    lib = hardware_library(search_path)
    if to not in lib or not module.functions:
        return   # translate says what is wrong
    at = [f for f in module.functions if f.hardware == to]
    if not at or any(f.hardware in lib and lib.is_descendant(to, f.hardware)
                     for f in module.functions):
        return   # a function moves, or none can: translate says why
    below = lib.children(to)
    f = at[0]
    others = [g for g in module.functions if g.hardware != to]
    if others:
        listed = ", ".join(f"'{g.name}' ({g.hardware})" for g in others)
        message = (f"no function of module '{module.name}' moves to '{to}': "
                   f"{', '.join(repr(g.name) for g in at)} "
                   f"{'is' if len(at) == 1 else 'are'} written for '{to}' already and "
                   f"{listed} {'is' if len(others) == 1 else 'are'} not above it: there is "
                   "nothing to translate")
    else:
        message = (f"the functions of module '{module.name}' are written for '{to}' "
                   "already: there is nothing to translate")
    raise McplError(error(
        "translate-same-level", message, f.span,
        (f"translate to a level below '{to}': {', '.join(below)} (see `mcl hwd list`)"
         if below else f"'{to}' is a leaf of the hierarchy: no level lies below it; "
                       f"`mcl gen --target {to}` makes OpenCL of it")))
