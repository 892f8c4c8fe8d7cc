"""The ``mcl hwd`` commands: ``list`` (the hierarchy as a tree), ``show NAME`` (the
parallelism hierarchy and the key device figures) and ``check FILE...`` (validate
user descriptions)."""

from __future__ import annotations

import argparse
import json
import shlex
from pathlib import Path

from mcl.cli import UsageError, add_hwd_path_option, add_output_options, hwd_search_path
from mcl.diagnostics import Diagnostic, McplError, check_summary, error
from mcl.hdl import blocks as B
from mcl.hdl import model as M
from mcl.hdl.library import HardwareLibrary
from mcl.hdl.syntax import parse_file
from mcl.hdl.units import BYTES, BYTES_PER_S, CYCLES, HZ, Symbolic, format_quantity


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("hwd", help="hardware descriptions: list, show, check",
                       description="The hardware descriptions (HDL) mcl knows: the bundled "
                                   "library and directories given with --hwd-path or "
                                   "MCL_HWD_PATH.")
    hsub = p.add_subparsers(dest="hwd_command", metavar="SUBCOMMAND")
    p.set_defaults(func=lambda args: _usage(p))

    pl = hsub.add_parser("list", help="the hierarchy of hardware descriptions as a tree",
                         description="The hardware descriptions mcl knows, as the tree "
                                     "that 'specializes' makes: a kernel for a level can be "
                                     "translated to any level below it. Leaves have "
                                     "targets for code generation; a user's description "
                                     "shows its file, and INVALID with the command that "
                                     "says why.")
    add_hwd_path_option(pl)
    pl.add_argument("--json", action="store_true", help="print the hierarchy as JSON")
    pl.set_defaults(func=cmd_list)

    ps = hsub.add_parser("show", help="the parallelism hierarchy and key figures of one level",
                         description="One hardware description by name (see mcl hwd "
                                     "list): its par_groups and memory spaces, and the "
                                     "device's slots, memories, links, clock, peak and "
                                     "bandwidth, as the analyses use them. A description "
                                     "of your own: give its directory with --hwd-path.")
    ps.add_argument("name", metavar="NAME", help="a hardware description, e.g. fermi")
    add_hwd_path_option(ps)
    ps.add_argument("--json", action="store_true", help="print the figures as JSON")
    ps.set_defaults(func=cmd_show)

    pc = hsub.add_parser("check", help="validate hardware-description files",
                         description="Check .hdl files: syntax, references to blocks, "
                                     "the rules of the language reference and those of a "
                                     "child for translation. A file may specialise a "
                                     "library description or one in a --hwd-path "
                                     "directory. Exit status 1 if any has errors.")
    pc.add_argument("files", nargs="+", metavar="FILE", help=".hdl files to check")
    add_hwd_path_option(pc)
    add_output_options(pc)
    pc.set_defaults(func=cmd_check)


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


def _library(args: argparse.Namespace, files=()) -> HardwareLibrary:
    lib = HardwareLibrary(hwd_search_path(args), files=files)
    if lib.load_diagnostics and not files:
        raise McplError(lib.load_diagnostics)
    return lib


# --------------------------------------------------------------------------- list


def cmd_list(args: argparse.Namespace) -> int:
    lib = _library(args)
    if args.json:
        print(json.dumps([{"name": n, "parent": lib.parent(n), "file": lib.file(n),
                           "bundled": lib.is_bundled(n), "leaf": not lib.children(n)}
                          for n in lib.names()], indent=2))
        return 0
    lines: list[str] = []
    seen: set[str] = set()
    check = _check_command(args)

    def visit(name: str, prefix: str, last: bool, root: bool) -> None:
        seen.add(name)
        label = name + _tags(lib, name, check)
        if root:
            lines.append(label)
            child_prefix = ""
        else:
            lines.append(prefix + ("└── " if last else "├── ") + label)
            child_prefix = prefix + ("    " if last else "│   ")
        kids = [c for c in lib.children(name) if c not in seen]
        for i, c in enumerate(kids):
            visit(c, child_prefix, i == len(kids) - 1, False)

    for root in lib.roots():
        visit(root, "", True, True)
    # Members of a cycle of 'specializes' are below no root; they are shown all the same.
    for name in lib.names():
        if name not in seen:
            visit(name, "", True, True)
    print("\n".join(lines))
    return 0


def _check_command(args: argparse.Namespace) -> str:
    """``mcl hwd check`` with the directories this command was given, so that it sees
    the descriptions that this one saw (two definitions of a name, a user parent)."""
    words = ["mcl", "hwd", "check"]
    for option in ("hwd_path", "module_path"):
        for d in getattr(args, option, None) or []:
            words += ["--" + option.replace("_", "-"), str(d)]
    return " ".join(shlex.quote(w) for w in words)


def _tags(lib: HardwareLibrary, name: str, check: str = "mcl hwd check") -> str:
    tags = []
    if not lib.children(name):
        tags.append("leaf")
    if not lib.is_bundled(name):
        tags.append(lib.file(name))
    errors = [d for d in lib.diagnostics(name) if d.is_error]
    if errors and all(d.code == "hdl-broken-dependency" for d in errors):
        parent = lib.parent(name)
        tags.append("INVALID: depends on " + (f"'{parent}', which does not parse"
                                              if parent and lib.is_broken(parent) else
                                              "a description that does not parse"))
    elif any(d.code == "hdl-specializes-cycle" for d in errors):
        tags.append(f"INVALID: in a cycle of 'specializes': {check} {shlex.quote(lib.file(name))}")
    elif errors:
        tags.append(f"INVALID: {check} {shlex.quote(lib.file(name))}")
    return f"  ({', '.join(tags)})" if tags else ""


# --------------------------------------------------------------------------- show


def _count(c) -> str:
    return str(c) if isinstance(c, Symbolic) else f"{c:,}".replace(",", " ")


def _q(value, dimension: str) -> str:
    return format_quantity(value, dimension)


def name_not_file(value: str, option: str) -> None:
    """Raises a diagnostic where the path of a description's file is given in place of
    its name (``mcl hwd show proj/mygpu.hdl``, ``--to mygpu.hdl``): the hint gives
    the name and the directory to add. ``option``: how the name is written in the
    command (``mcl hwd show`` or ``--to``)."""
    path = Path(value)
    if path.suffix != ".hdl" and "/" not in value:
        return
    name = path.stem
    if path.is_file():
        try:
            name = parse_file(path).name
        except McplError:
            pass   # the check of the directory will say what is wrong with it
    directory = str(path.parent)
    raise McplError(error(
        "hdl-name-expected",
        f"'{value}' {'is' if path.is_file() else 'looks like'} the path of a file; {option} "
        "takes the name of a hardware description",
        None, f"write {option} {name} --hwd-path {shlex.quote(directory)} (the directory "
              "of the file: its descriptions are known by their names)"))


def cmd_show(args: argparse.Namespace) -> int:
    name_not_file(args.name, "mcl hwd show")
    lib = _library(args)
    hwd = lib.get(args.name)
    if args.json:
        print(json.dumps(_figures(hwd, lib), indent=2, default=str))
        return 0
    out: list[str] = []
    parents = " > ".join(list(reversed(lib.ancestors(hwd.name))) + [hwd.name])
    out.append(f"{hwd.name}  ({parents}; {hwd.file})")
    out.append("")
    out.append("parallelism")
    out += _hierarchy_lines(hwd)
    unit = hwd.executing_unit()
    out.append(f"  executing unit: {unit.name if unit else '-'}")
    lock = hwd.lockstep_par_groups()
    if lock:
        out.append("  lock-step: " + ", ".join(g.name for g in lock))
    out.append("")
    out.append("device")
    for pu in hwd.par_units():
        for s in hwd.slots(pu.name):
            out.append(f"  slots for {pu.name}: {_count(s.per_holder)} per {s.holder.name}"
                       f" x {_count(s.holders)} = {_count(s.total)}")
    for m in hwd.memories():
        what = "cache " if isinstance(m, B.Cache) else "memory"
        facts = [f"holds {', '.join(m.spaces)}", _q(m.capacity, BYTES)]
        pos = hwd.position(m)
        if pos is not None and pos.instances != 1:
            facts[-1] += f" x {_count(pos.instances)}"
        if isinstance(m, B.Cache) and m.cache_line_size:
            facts.append(f"lines of {m.cache_line_size} B"
                         + (f" in sectors of {m.sector_size} B" if m.sector_size else ""))
        if m.nr_banks:
            facts.append(f"{m.nr_banks} banks")
        if not m.addressable:
            facts.append("not addressable")
        if m.latency is not None:
            facts.append(_q(m.latency, CYCLES))
        out.append(f"  {what} {m.name}: " + ", ".join(facts))
    for ic in hwd.interconnects():
        facts = [" <-> ".join(e.text for e in ic.endpoints)]
        if ic.latency is not None:
            facts.append(_q(ic.latency, CYCLES))
        if ic.bandwidth is not None:
            facts.append(_q(ic.bandwidth, BYTES_PER_S))
        out.append(f"  link {ic.name}: " + ", ".join(facts))
    clock = hwd.clock_frequency()
    if clock:
        out.append(f"  clock: {_q(clock, HZ)}")
    lanes = hwd.execution_lanes()
    if lanes:
        out.append("  lanes for " + (unit.name if unit else "-") + ": "
                   + ", ".join(f"{_count(s.holders)} x {s.holder.name}" for s in lanes))
    peak = hwd.peak_flops()
    out.append(f"  peak: {_q(peak, 'flop/s') if peak else 'unlimited or unknown'}")
    default = hwd.default_memory_space()
    if default is not None:
        bw = hwd.memory_bandwidth(default.name)
        out.append(f"  bandwidth of {default.name}: "
                   f"{_q(bw, BYTES_PER_S) if bw else 'unlimited or unknown'}")
    speed = hwd.spaces_by_speed()
    if speed:
        out.append("  memory spaces, fastest first: " + " > ".join(speed))
    fb = hwd.feedback_functions()
    if fb:
        out.append("  performance feedback: " + ", ".join(fb))
    print("\n".join(out))
    return 0


def _hierarchy_lines(hwd: M.HardwareDescription) -> list[str]:
    out: list[str] = []

    def spaces(scope, indent: str) -> None:
        for ms in scope.memory_spaces:
            flags = [f for f in ("default", "read_only") if ms.has_flag(f)]
            holders = [m.name for m in hwd.memories_holding(ms.name)]
            out.append(f"{indent}memory_space {ms.name}"
                       + (f" ({', '.join(flags)})" if flags else "")
                       + (f"  in {', '.join(holders)}" if holders else ""))

    if hwd.parallelism is not None:
        spaces(hwd.parallelism, "  ")
    indent = "  "
    for g in hwd.par_groups():
        n = f"{'exactly' if g.exact else 'up to'} {_count(g.size)}"
        out.append(f"{indent}par_group {g.name}: {n} units")
        spaces(g, indent + "  ")
        if g.unit is not None:
            out.append(f"{indent}  par_unit {g.unit.name}")
            spaces(g.unit, indent + "    ")
        indent += "    "
    return out


def _figures(hwd: M.HardwareDescription, lib: HardwareLibrary) -> dict:
    def val(v):
        return str(v) if isinstance(v, Symbolic) else v

    return {
        "name": hwd.name, "parent": hwd.parent, "file": hwd.file,
        "ancestors": lib.ancestors(hwd.name),
        "par_groups": [{"name": g.name, "size": val(g.size), "exact": g.exact,
                        "unit": g.unit.name if g.unit else None,
                        "memory_spaces": [m.name for m in g.memory_spaces],
                        "unit_memory_spaces": [m.name for m in g.unit.memory_spaces]
                        if g.unit else []} for g in hwd.par_groups()],
        "executing_unit": hwd.executing_unit().name if hwd.executing_unit() else None,
        "memory_spaces": [{"name": m.name, "default": m.is_default, "read_only": m.read_only,
                           "memories": [x.name for x in hwd.memories_holding(m.name)]}
                          for m in hwd.memory_spaces()],
        "memories": [{"name": m.name, "cache": isinstance(m, B.Cache), "spaces": list(m.spaces),
                      "capacity": val(m.capacity), "nr_banks": m.nr_banks,
                      "cache_line_size": m.cache_line_size if isinstance(m, B.Cache) else None}
                     for m in hwd.memories()],
        "slots": {u.name: [{"holder": s.holder.name, "per_holder": val(s.per_holder),
                            "total": val(s.total)} for s in hwd.slots(u.name)]
                  for u in hwd.par_units()},
        "lockstep_par_groups": [g.name for g in hwd.lockstep_par_groups()],
        "clock_frequency": hwd.clock_frequency(),
        "peak_flops": hwd.peak_flops(),
        "spaces_by_speed": hwd.spaces_by_speed(),
        "feedback_functions": hwd.feedback_functions(),
    }


# --------------------------------------------------------------------------- check


def cmd_check(args: argparse.Namespace) -> int:
    # a file named twice (a.hdl ./a.hdl) is checked and counted once
    named: dict[Path, Path] = {}
    for f in args.files:
        named.setdefault(Path(f).resolve(), Path(f))
    files = list(named.values())
    diags: list[Diagnostic] = []
    for f in files:
        if f.suffix not in (".hdl",) and f.is_file():
            raise UsageError(f"'{f}' is not a hardware description (.hdl file)")
        if f.is_dir():
            found = sorted(f.glob("*.hdl"))
            diags.append(error(
                "hdl-file", f"'{f}' is a directory; 'mcl hwd check' takes .hdl files", None,
                f"check its descriptions with 'mcl hwd check {f / '*.hdl'}'; to use them "
                f"from kernels, give the directory with --hwd-path {f}" if found else
                "it holds no .hdl files; give the path of a .hdl file"))
        elif not f.is_file():
            diags.append(error("hdl-file", f"cannot read hardware description '{f}': "
                                           + ("not a regular file" if f.exists() else
                                              "no such file"), None,
                               "check the path; descriptions are .hdl files"))
    existing = [f for f in files if f.is_file()]
    lib = HardwareLibrary(hwd_search_path(args), files=existing)
    diags += lib.load_diagnostics
    for f in existing:
        diags += [d for d in lib.broken_in(f) if d not in diags]
        for name in lib.descriptions_in(f):
            diags += [d for d in lib.diagnostics(name) if d not in diags]
    from mcl.cli import print_diagnostics

    code = print_diagnostics(diags, args)
    if not args.json:
        print(check_summary(diags, len(existing)))
    return code
