"""``mcl skel explain PROGRAM.py``: run a skeleton program and say, for a node
described in HDL, what each skeleton call moves over which link and computes on
each device."""

from __future__ import annotations

import argparse
import os
import runpy
import sys
import traceback
from pathlib import Path

from mcl.cli import UsageError, add_hwd_path_option, hwd_search_path
from mcl.diagnostics import McplError, Span, error


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("skel", help="SkelCL skeletons over several devices (mcl.skel)",
                       description="Programs written with mcl.skel (Vector, Matrix, Map, Zip, "
                                   "Reduce, Scan, MapOverlap, Stencil, AllPairs).")
    ssub = p.add_subparsers(dest="skel_command", metavar="COMMAND")
    q = ssub.add_parser(
        "explain", help="what each skeleton call moves over which link, per device",
        description="Run a Python program that uses mcl.skel and report, for each skeleton "
                    "call, the transfers it caused (timed on the node's links: PCIe to the "
                    "host, NVLink between devices) and the roofline of its work on each "
                    "device. The devices of the run stand for the node's devices in order: "
                    "give --devices as many as the node has (PoCL offers several with "
                    "POCL_DEVICES=\"pthread pthread\").",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    q.add_argument("program", help="a Python file using mcl.skel")
    # arguments after PROGRAM are the program's (none is fine; argparse would call them
    # required, since a REMAINDER positional is)
    q.add_argument("args", nargs=argparse.REMAINDER, help="arguments for the program "
                   "(after PROGRAM: options of mcl skel explain go before it)").required = False
    q.add_argument("--node", default="h200x2", help="node description (default h200x2; "
                   "bundled ones are in mcl/skel/nodes, more with --hwd-path)")
    q.add_argument("--devices", type=int, default=None,
                   help="devices to run on (default: as many as the node has, if available)")
    q.add_argument("--peer-copies", action="store_true",
                   help="copy between devices peer to peer (over the node's device link, "
                        "e.g. NVLink) instead of through host memory, mcl.skel's default "
                        "for GPUs")
    add_hwd_path_option(q)
    q.set_defaults(func=cmd_explain)
    p.set_defaults(func=lambda args: p.print_help() or 2)


def cmd_explain(args) -> int:
    import mcl.skel as sk
    from mcl.skel.explanation import explaining, load_node
    path = Path(args.program)
    if path.is_dir():
        raise McplError(error("skel-no-program", f"{args.program}: a folder, not a program",
                              hint="give the path of a Python file that uses mcl.skel"))
    if args.devices is not None and args.devices < 1:
        raise UsageError(f"--devices: {args.devices} devices; give 1 or more")
    if not path.is_file():
        raise McplError(error("skel-no-program", f"no such program: {args.program}",
                              hint="give the path of a Python file that uses mcl.skel"))
    _check_syntax(path)
    search = hwd_search_path(args)
    node = load_node(args.node, search)
    if args.devices is not None and args.devices > node.devices:
        raise UsageError(f"--devices: {args.devices} devices, but node '{args.node}' has "
                         f"{node.devices}; give at most {node.devices} (the devices of the "
                         "run stand for the node's)")
    want = args.devices or node.devices
    peer = "1" if args.peer_copies else "0"     # the node's devices are GPUs
    try:
        sk.init(num_devices=want, peer_copies=args.peer_copies)
    except McplError:
        if args.devices:
            raise
        sk.init(peer_copies=args.peer_copies)
    saved = sys.argv
    saved_env = {k: os.environ.get(k) for k in ("MCL_SKEL_DEVICES", "MCL_SKEL_PEER_COPIES")}
    # the program's own mcl.skel.init() then picks as many devices, copying alike
    os.environ["MCL_SKEL_DEVICES"] = str(sk.current().per_rank)
    os.environ["MCL_SKEL_PEER_COPIES"] = peer
    sys.argv = [str(path), *args.args]
    sys.path.insert(0, str(path.parent.resolve()))
    try:
        with explaining(args.node, search) as ex:
            runpy.run_path(str(path), run_name="__main__")
    except SystemExit as e:
        if e.code not in (0, None):
            _report_program_exit(e.code, path)
            return 1
    except (McplError, KeyboardInterrupt):
        raise
    except Exception as e:  # noqa: BLE001 - the program's own error is reported as such
        if _raised_in_mcl(e):
            raise                   # a bug in mcl: the CLI says so
        _report_program_error(e, path)
        return 1
    finally:
        sys.argv = saved
        for k, v in saved_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        sys.path.remove(str(path.parent.resolve()))
    if not ex.calls and not ex.other:
        # the header and its note on the devices the data went to would say nothing true
        print(f"mcl: the program {path} made no skeleton call and moved no data through "
              "mcl.skel; nothing to explain", file=sys.stderr)
        return 1
    print(ex)
    return 0


def _check_syntax(path: Path) -> None:
    """A syntax error in the program is the user's, said at its line (before anything
    runs; runpy would raise it from inside mcl)."""
    try:
        source = path.read_bytes()
    except OSError as e:
        raise McplError(error("skel-no-program", f"cannot read {path}: {e.strerror}",
                              hint="give the path of a Python file that uses mcl.skel")
                        ) from None
    try:
        compile(source, str(path), "exec")
    except SyntaxError as e:
        where = Span.point(str(path), e.lineno or 1, e.offset or 1)
        raise McplError(error("skel-program-syntax", f"the program does not parse: {e.msg}",
                              where, hint="fix the Python syntax error; mcl skel explain "
                                          "runs the program")) from None
    except ValueError as e:         # source bytes with a NUL
        raise McplError(error("skel-program-syntax", f"{path} is not a Python program ({e})",
                              hint="give the path of a Python file that uses mcl.skel")
                        ) from None


def _report_program_exit(code: object, path: Path) -> None:
    """The program's ``sys.exit(code)``: a message it exits with is printed as Python
    prints it (status 1), and mcl says which program exited with which status."""
    if not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    print(f"mcl: the program {path} exited with status {code}; nothing to explain",
          file=sys.stderr)


def _raised_in_mcl(e: BaseException) -> bool:
    """Whether ``e`` was raised by mcl's own code (a bug in mcl), not by the program or
    a library it called."""
    import mcl
    root = str(Path(mcl.__file__).resolve().parent)
    frames = traceback.extract_tb(e.__traceback__)
    return bool(frames) and str(Path(frames[-1].filename).resolve()).startswith(root)


def _report_program_error(e: BaseException, path: Path) -> None:
    """The program's exception as Python prints it, from the program's first frame on
    (the frames of ``mcl skel explain`` and runpy around it are not the program's)."""
    tb = e.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != str(path):
        tb = tb.tb_next
    tb = tb or e.__traceback__
    text = "".join(traceback.format_exception(type(e), e, tb))
    print(text.rstrip(), file=sys.stderr)
    print(f"mcl: the program {path} raised {type(e).__name__}; nothing to explain",
          file=sys.stderr)
