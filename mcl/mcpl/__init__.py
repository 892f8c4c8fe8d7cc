"""MCPL, the kernel language: parse text into an AST, print it back, resolve and check it
against its hardware descriptions.

Public API::

    parse(source, file="<string>") -> Module       raises McplError on syntax errors
    parse_file(path) -> Module
    print_module(module) -> str, print_function(f) -> str, print_expr(e) -> str
    check(path_or_module, search_path=()) -> CheckedModule
"""

from __future__ import annotations

from mcl.mcpl.builder import parse
from mcl.mcpl.printer import print_expr, print_function, print_module, print_statement, print_type
from mcl.mcpl.resolve import CheckedModule, FunctionInfo, Symbol, check, load_module
from mcl.mcpl.source import parse_file, read_source

__all__ = [
    "check", "load_module", "CheckedModule", "FunctionInfo", "Symbol",
    "parse", "parse_file", "read_source",
    "print_module", "print_function", "print_statement", "print_expr", "print_type",
]
