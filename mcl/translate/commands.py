"""The ``mcl translate`` command: a module translated down the hierarchy of hardware
descriptions, printed as MCPL or written to a file."""

from __future__ import annotations

import argparse
from pathlib import Path

from mcl.cli import add_hwd_path_option, add_output_options, hwd_search_path, print_diagnostics
from mcl.diagnostics import McplError, SourceCache


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "translate", help="translate a kernel to a level below its own",
        description="Translate the functions of an MCPL module to a lower level of the "
                    "hierarchy of hardware descriptions (one edge at a time, paper section "
                    "6.1): par_groups are split into nested ones with dimension and "
                    "indexing statements, memory spaces renamed to their equivalents. "
                    "Functions of levels not above the target stay as they are.")
    p.add_argument("file", metavar="FILE", help="the MCPL module to translate")
    p.add_argument("--to", required=True, metavar="LEVEL",
                   help="the hardware description to translate to, e.g. gpu, fermi")
    p.add_argument("-o", "--output", metavar="OUT", help="write the result here instead of "
                   "printing it")
    p.add_argument("--assume-divisible", action="store_true",
                   help="assume that sizes divide the numbers of units: exact division, no "
                        "guards (a comment in the output says so); by default the result "
                        "is correct for every size")
    add_hwd_path_option(p)
    add_output_options(p)
    p.set_defaults(func=run_translate)


def run_translate(args: argparse.Namespace) -> int:
    from mcl.mcpl import check, print_module
    from mcl.translate import translate

    search_path = hwd_search_path(args)
    checked = check(args.file, search_path)
    if checked.has_errors:
        # Translating a wrong program would only move the errors somewhere else.
        return print_diagnostics(checked.diagnostics, args, SourceCache())
    try:
        result = translate(checked.module, args.to, search_path=search_path,
                           assume_divisible=args.assume_divisible)
    except McplError as e:
        return print_diagnostics(e.diagnostics, args, SourceCache())
    text = print_module(result)
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        print(text, end="")
    return 0
