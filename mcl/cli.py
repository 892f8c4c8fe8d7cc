"""The ``mcl`` command. Thin: each component contributes its sub-commands from
``mcl/<component>/commands.py`` (a ``register(subparsers)`` function); this module
only parses arguments, prints diagnostics and maps outcomes to exit codes.

Exit codes: 0 success, 1 errors in the user's input (diagnostics printed),
2 usage errors, 3 an internal error (a bug in mcl)."""

from __future__ import annotations

import argparse
import importlib
import math
import os
import sys
import traceback
from collections.abc import Iterable, Sequence
from pathlib import Path

from mcl import __version__
from mcl.diagnostics import (
    Diagnostic,
    McplError,
    SourceCache,
    article,
    error,
    render_json,
    render_text,
)

#: Components in the order their commands appear in ``mcl --help``.
COMPONENTS = ("hdl", "mcpl", "analyses", "translate", "opencl", "lift", "lsp", "versions",
              "skel")

#: Which component registers each top-level command, so that ``mcl feedback`` imports
#: the commands of ``mcl.analyses`` only (importing every component costs numpy,
#: pyopencl, pygls, Lift, ... at start-up). A command missing here still works: the
#: parser is then built from every component.
COMMAND_COMPONENTS = {
    "hwd": "hdl", "check": "mcpl", "feedback": "analyses", "translate": "translate",
    "devices": "opencl", "gen": "opencl", "run": "opencl", "lift": "lift", "lsp": "lsp",
    "versions": "versions", "skel": "skel",
}

EXIT_OK, EXIT_ERRORS, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3

DESCRIPTION = """\
Many-Core Levels: write a kernel for an idealised machine, then refine it step by
step toward real hardware with the compiler's performance feedback at every level.

typical session:
  mcl hwd list                              the hierarchy of hardware descriptions
  mcl check kernel.mcpl                     syntax and semantic errors
  mcl feedback kernel.mcpl                  what limits performance at the kernel's level
  mcl translate --to gpu kernel.mcpl        the same kernel one or more levels down
  mcl gen --target hopper kernel.mcpl -o out/   OpenCL kernel and launch plan
  mcl run --target hopper kernel.mcpl --set n=2048   run, verify and time it
  mcl lift explore sum.lift                 search implementations with Lift
  mcl versions examples/matmul --report out/   refinement history, verified across levels
  mcl skel explain app.py                   what a skeleton program moves and computes per GPU
"""


class UsageError(Exception):
    """A wrong command line that argparse could not catch (exit status 2)."""


class CannotWrite(UsageError):
    """An output folder of a command that cannot be written (:func:`output_folder`);
    its message names the command (``mcl gen: error: ...``)."""


def output_path(what: str, otherwise: str):
    """The ``type`` of an option that names where a command writes (``-o``, ``--report``,
    ``--results``, ``--log-file``): an empty path is a usage error that names the option
    (``mcl translate: error: argument -o/--output: an empty path ...``), not the option
    left out: ``-o ''`` (an unset shell variable, say) would print the result, or write
    into the current folder, where the user asked for a file. ``what``: what the path
    names; ``otherwise``: what the command does without the option."""

    def path(text: str) -> str:
        if text == "":
            raise argparse.ArgumentTypeError(
                f"an empty path names no {what}: give one, or leave the option out "
                f"{otherwise}")
        return text
    return path


def output_folder(given: str | os.PathLike[str], command: str, option: str, what: str,
                  *, create: bool = True) -> Path:
    """The folder that ``option`` of ``command`` names for its output (``mcl gen -o``,
    ``mcl lift gen -o``, ``mcl versions --report``), created with its parents; with
    ``create`` False only checked, before the work, so that a mistyped path does not
    cost a long run and a failed run leaves no empty folder. A file in the way, a folder
    that cannot be created or is not writable is a usage error in one wording for every
    command: ``mcl gen: error: cannot write to 'x': it is a file (-o names the folder
    WHAT)``. OSError names only the component that failed (``/a`` of ``-o /a/b``), which
    reads as if an input were missing: the message says which part is in the way."""
    out = Path(given)

    def refuse(reason: str) -> CannotWrite:
        return _cannot_write(command, given, reason, option, f"the folder {what}")

    if out.exists() and not out.is_dir():
        raise refuse("it is a file" if out.is_file() else "it is not a folder")
    # the nearest part of the path that exists: the folder itself, or where it is made
    existing = next((p for p in [out, *out.parents] if p.exists()), None)
    if existing is not None and not existing.is_dir():
        raise refuse(f"'{existing}' is a file, not a folder")
    if existing is not None and not os.access(existing, os.W_OK | os.X_OK):
        raise refuse("the folder is not writable" if existing == out else
                     f"no folder can be made in '{existing}' (it is not writable)")
    if create:
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            why = (e.strerror or str(e)).lower()
            raise refuse(f"the folder cannot be made ({why})") from None
    return out


def output_file(given: str | os.PathLike[str], command: str, option: str,
                what: str) -> Path:
    """The file that ``option`` of ``command`` names for its output (``mcl translate
    -o``, ``mcl lift from-mcpl -o``), checked before the work in the wording of
    :func:`output_folder`: a folder in its place, a folder above it that is missing, a
    file or not writable. Its folder is not made: a mistyped folder is said, not
    created. Writing it is :func:`write_output_file`'s."""
    out = Path(given)

    def refuse(reason: str) -> CannotWrite:
        return _cannot_write(command, given, reason, option, f"the file {what}")

    if out.is_dir():
        raise refuse("it is a folder")
    if out.exists() and not os.access(out, os.W_OK):
        raise refuse("the file is not writable")
    folder = out.parent
    if not folder.exists():
        existing = next((p for p in folder.parents if p.exists()), None)
        if existing is not None and not existing.is_dir():
            raise refuse(f"'{existing}' is a file, not a folder")
        raise refuse(f"the folder '{folder}' does not exist")
    if not folder.is_dir():
        raise refuse(f"'{folder}' is a file, not a folder")
    if not out.exists() and not os.access(folder, os.W_OK | os.X_OK):
        raise refuse(f"the folder '{folder}' is not writable")
    return out


def write_output_file(given: str | os.PathLike[str], text: str, command: str, option: str,
                      what: str, *, in_folder: bool = False) -> None:
    """``text`` written to the file :func:`output_file` checked, exactly as it is (no
    newline translation: a translated CRLF kernel keeps "\r\n", not "\r\r\n" on
    Windows, and an LF result stays LF); what the system still refuses (a full disk, a
    read-only file system) said in the same wording. With ``in_folder`` the file is one
    of those written into the folder :func:`output_folder` checked (``mcl gen -o``): the
    message names the file and says that ``option`` names the folder ``what``."""
    try:
        Path(given).write_text(text, encoding="utf-8", newline="")
    except OSError as e:
        why = (e.strerror or str(e)).lower()
        names = f"the folder {what}" if in_folder else f"the file {what}"
        raise _cannot_write(command, given, why, option, names) from None


def print_output(text: str) -> None:
    """A command's result (``text``, ending with its newline) on standard output. A
    result with "\r\n" line ends (a translated CRLF kernel) goes to the bytes of the
    stream, as it is: the text layer of a Windows console or redirection would write
    "\n" as "\r\n", each line then ending in "\r\r\n". Any other result is printed:
    a stream without bytes beneath (a StringIO) takes the text as it is."""
    out = sys.stdout
    raw = getattr(out, "buffer", None) if "\r\n" in text else None
    if raw is None:
        print(text, end="")
        return
    out.flush()
    raw.write(text.encode(out.encoding or "utf-8", out.errors or "strict"))
    raw.flush()


def _cannot_write(command: str, given, reason: str, option: str, names: str) -> CannotWrite:
    """The one wording of an output that cannot be written: ``mcl gen: error: cannot
    write to 'x': it is a file (-o names the folder ...)``."""
    return CannotWrite(f"{command}: error: cannot write to '{given}': {reason} "
                       f"({option} names {names})")


def add_hwd_path_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--hwd-path", action="append", default=[], metavar="DIR",
        help="extra directory of hardware descriptions (.hdl), or one .hdl file; may be "
             "repeated; "
             "also read from MCL_HWD_PATH (separated by ':'). A description beside the "
             "kernel (NAME.hdl for `import NAME;`) is found without it, unless the library "
             "or these directories have a level of that name: a description in DIR "
             "replaces the library's")
    parser.add_argument(
        "--module-path", action="append", default=[], metavar="DIR",
        help="extra directory of MCPL modules (.mcpl/.mcl), a root of packages: "
             "`import a.b.c;` reads DIR/a/b/c.mcl; may be repeated; also read from MCL_PATH")


def hwd_search_path(args: argparse.Namespace, *kernels: str | os.PathLike[str]) -> list[str]:
    """Directories given with --hwd-path, then those of MCL_HWD_PATH (each must exist),
    then --module-path; with ``kernels`` (the MCPL files or folders of versions a command
    reads), then the descriptions beside them that none of those nor the library has
    (mcl.hdl.library.with_descriptions_beside: ``import mylevel;`` finds ``mylevel.hdl``
    beside the kernel, and never in place of a description found otherwise)."""
    paths = list(getattr(args, "hwd_path", []) or [])
    env = os.environ.get("MCL_HWD_PATH", "")
    paths += [p for p in env.split(os.pathsep) if p]
    for p in paths:
        if os.path.isfile(p) and p.endswith(".hdl"):
            continue        # one description, read as a folder's would be
        if not os.path.isdir(p):
            what = "is a file, not a folder" if os.path.exists(p) else "does not exist"
            raise McplError(error("hdl-path", f"hardware-description directory '{p}' {what}",
                                  None, "check --hwd-path and MCL_HWD_PATH"))
    # Modules and descriptions share the search path of the checks (module_search_path).
    for d in getattr(args, "module_path", []) or []:
        if not os.path.isdir(d):
            raise UsageError(f"--module-path: directory '{d}' does not exist")
        paths.append(d)
    if kernels:
        from mcl.hdl.library import with_descriptions_beside
        return with_descriptions_beside(paths, kernels)
    return paths


def parse_assignments(items: Iterable[str] | None, option: str,
                      allow_float: bool = False) -> dict[str, int | float]:
    """``NAME=VALUE`` options (``--set n=2048``, ``--size N=1024``) as a dict; integers
    (also ``0x..``, and a whole number in a decimal form, ``1e3``, as every command takes
    it), and decimals where ``allow_float``. A malformed item, or one beyond any float
    (``1e400``, ``inf``, ``nan``), is a usage error that quotes it."""
    out: dict[str, int | float] = {}
    for item in items or []:
        name, sep, text = item.partition("=")
        name = name.strip()
        if not sep or not name.isidentifier():
            raise UsageError(f"{option} expects NAME=VALUE, got '{item}'")
        try:
            value: int | float = int(text, 0)
        except ValueError:
            try:
                value = float(text)
            except ValueError:
                kind = "a number" if allow_float else "an integer"
                raise UsageError(f"{option} {name}: '{text}' is not {kind}") from None
            if not math.isfinite(value):
                raise UsageError(f"{option} {name}: '{text}' is not a finite number") from None
            if not allow_float:
                if not value.is_integer():
                    raise UsageError(f"{option} {name}: '{text}' is not an integer") from None
                value = int(value)
        if name in out and out[name] != value:
            raise UsageError(f"{option} gives {name} twice ({name}={out[name]} and "
                             f"{name}={value}): give it once")
        out[name] = value
    return out


def check_parameter_values(functions: Iterable, values: dict[str, int | float],
                           option: str) -> None:
    """A usage error where ``values`` (``--set``) give a scalar parameter of one of
    ``functions`` a number its type cannot hold: ``n=99999999999`` for an ``int n``
    (32 bits, as in C and OpenCL), a fraction for an integer."""
    from mcl.mcpl.check_common import value_range
    for f in functions:
        for p in f.params:
            value = values.get(p.name)
            kind = p.type.name
            held = value_range(kind)
            if value is None or p.type.dims or isinstance(value, bool) or held is None:
                continue
            lo, hi, shown = held
            given = int(value) if isinstance(value, float) and value.is_integer() else value
            if kind != "float" and isinstance(value, float) and not value.is_integer():
                raise UsageError(f"{option} {p.name}={given}: '{p.name}' is "
                                 f"{article(kind)} parameter of '{f.name}' and takes whole "
                                 f"numbers ({shown})")
            if not lo <= value <= hi:
                raise UsageError(f"{option} {p.name}={given}: '{p.name}' is "
                                 f"{article(kind)} parameter of '{f.name}', whose values are "
                                 f"{shown}: give a value in that range")


def add_output_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true",
                        help="print diagnostics as JSON (for tools)")
    parser.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                        help="colour the severity labels (default: auto)")


def is_terminal(stream) -> bool:
    """Whether ``stream`` is a terminal (progress redrawn in place, colours), not a log,
    a pipe or a closed stream."""
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:   # a closed stream
        return False


def print_diagnostics(diagnostics: Iterable[Diagnostic], args: argparse.Namespace | None = None,
                      sources: SourceCache | None = None, stream=None) -> int:
    """Print diagnostics as text or JSON; return 1 if any is an error, else 0."""
    diagnostics = list(diagnostics)
    stream = stream or sys.stdout
    if args is not None and getattr(args, "json", False):
        print(render_json(diagnostics), file=stream)
    elif diagnostics:
        mode = getattr(args, "color", "auto") if args is not None else "auto"
        color = mode == "always" or (mode == "auto" and is_terminal(stream)
                                     and "NO_COLOR" not in os.environ)
        print(render_text(diagnostics, sources, color=color), file=stream)
    return EXIT_ERRORS if any(d.is_error for d in diagnostics) else EXIT_OK


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``mcl`` parser; with ``command`` (a top-level command name), only the
    component that registers it contributes its commands."""
    parser = argparse.ArgumentParser(
        prog="mcl", description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"mcl {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    only = COMMAND_COMPONENTS.get(command) if command else None
    for component in (only,) if only else COMPONENTS:
        importlib.import_module(f"mcl.{component}.commands").register(sub)
    return parser


def _command_of(argv: Sequence[str]) -> str | None:
    """The top-level command in ``argv`` (its first word that is not an option)."""
    return next((a for a in argv if not a.startswith("-")), None)


#: the recursion limit of the commands: expressions nested a few thousand deep
DEEPEST = 20_000


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(_command_of(argv))
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # argparse: --help (0) or usage error (2)
        return int(e.code or 0)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_USAGE
    # The checks and analyses walk expressions recursively: a sum of a few hundred
    # terms nests deeper than Python's default limit of 1000 frames allows.
    sys.setrecursionlimit(max(sys.getrecursionlimit(), DEEPEST))
    try:
        return int(args.func(args) or 0)
    except RecursionError:
        print("mcl: error: the input nests too deeply to be processed (an expression of "
              "thousands of operators, say): split it with intermediate variables",
              file=sys.stderr)
        return EXIT_ERRORS
    except McplError as e:
        print_diagnostics(e.diagnostics, args, stream=sys.stderr)
        return EXIT_ERRORS
    except CannotWrite as e:
        print(e, file=sys.stderr)
        return EXIT_USAGE
    except UsageError as e:
        print(f"mcl: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("mcl: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except OSError as e:
        if e.filename is None:
            return _internal_error()
        # a path of the command line that cannot be written or read (-o, --results, ...)
        print(f"mcl: error: {e.filename}: {e.strerror}", file=sys.stderr)
        return EXIT_ERRORS
    except Exception:  # a bug in mcl, not in the user's input
        return _internal_error()


def _internal_error() -> int:
    print("mcl: internal error: this is a bug in mcl, not in your input.\n"
          "Please report it with the command line and the files involved.\n",
          file=sys.stderr)
    traceback.print_exc()
    return EXIT_INTERNAL


if __name__ == "__main__":
    # `python -m mcl.cli` runs this file as __main__, a module apart from mcl.cli:
    # the commands raise mcl.cli's UsageError, which only mcl.cli's main catches.
    from mcl.cli import main as cli_main

    sys.exit(cli_main())
