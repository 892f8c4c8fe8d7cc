"""The ``mcl lsp`` command: the language server on stdio (what editors start) or on a
TCP port (to attach a client while debugging the server)."""

from __future__ import annotations

import argparse
import logging

from mcl.cli import UsageError, output_path


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "lsp", help="run the language server (for editors)",
        description="Run the MCL language server. Editors start it on stdio; "
                    "--tcp HOST:PORT listens on a port instead (for debugging).")
    p.add_argument("--stdio", action="store_true", help="talk on stdin/stdout (the default)")
    p.add_argument("--tcp", metavar="HOST:PORT", help="listen on a TCP port instead of stdio")
    p.add_argument("--log-file", metavar="FILE",
                   type=output_path("file", "to log to standard error"),
                   help="write the server's log to FILE")
    p.add_argument("--log-level", default="WARNING",
                   choices=("DEBUG", "INFO", "WARNING", "ERROR"), help="default: WARNING")
    p.set_defaults(func=run_lsp)


def parse_address(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``:PORT`` means localhost) as a (host, port) pair."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 < int(port) < 65536:
        raise UsageError(f"--tcp expects HOST:PORT, e.g. 127.0.0.1:2087, not {text!r}")
    return host or "127.0.0.1", int(port)


def run_lsp(args: argparse.Namespace) -> int:
    from mcl.lsp.server import create_server

    address = parse_address(args.tcp) if args.tcp else None
    # stdout carries the protocol: the log goes to a file or to stderr.
    handler: logging.Handler = (logging.FileHandler(args.log_file) if args.log_file
                                else logging.StreamHandler())
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(getattr(logging, args.log_level))
    server = create_server()
    if address is not None:
        server.start_tcp(*address)
    else:
        server.start_io()
    return 0
