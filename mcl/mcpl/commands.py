"""The `mcl check` command: parse and check MCPL modules, print their diagnostics."""

from __future__ import annotations

import argparse
import sys

from mcl.cli import add_hwd_path_option, add_output_options, hwd_search_path, print_diagnostics
from mcl.diagnostics import SourceCache, check_summary


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "check", help="check MCPL modules for syntax and semantic errors",
        description="Parse and check MCPL modules (.mcpl, legacy .mcl) against the hardware "
                    "descriptions they import. Exits 0 only when there is no error.")
    p.add_argument("files", nargs="+", metavar="FILE", help="MCPL modules to check")
    add_hwd_path_option(p)
    add_output_options(p)
    p.set_defaults(func=run_check)


def run_check(args: argparse.Namespace) -> int:
    from mcl.mcpl.resolve import check

    hwd_search_path(args)   # a directory that does not exist, before any file
    diagnostics = []
    for f in args.files:
        diagnostics += check(f, hwd_search_path(args, f)).diagnostics
    code = print_diagnostics(diagnostics, args, SourceCache())
    if not args.json:   # a summary, also when there is nothing to report
        print(check_summary(diagnostics, len(args.files)), file=sys.stderr)
    return code


