"""Sub-commands of the OpenCL back end: ``mcl devices``, ``mcl gen`` (kernel source,
launch plan and optionally C host code) and ``mcl run`` (random inputs, run,
verify against the example's reference, time)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import NamedTuple

from mcl.diagnostics import McplError, error
from mcl.opencl import device
from mcl.opencl.plan import fields_as_numbers
from mcl.opencl.sizing import divisibility_problems, size_expression
from mcl.versions.sizes import load_reference, written_for_sizes

_FAST_MATH_HELP = ("relaxed math (-cl-fast-relaxed-math): built-in functions and divisions "
                   "to the precision of the device's fast instructions (with NVIDIA's "
                   "compiler on the H100 a log takes a quarter of its precise cost, an exp "
                   "or a division three quarters; the time feedback says what they take "
                   "either way)")
_MAX_REGISTERS_HELP = ("at most N registers per work-item (16 to 255), so that more "
                       "work-groups are resident where the feedback says occupancy is limited "
                       "by registers; the compiler spills what does not fit. NVIDIA's driver "
                       "only (written into the PTX as .maxnreg, as it ignores "
                       "-cl-nv-maxrregcount)")


TARGET_HELP = ("the level to generate for: a description with a code-generation target (a "
               ".target file beside it: hopper, h200, fermi, ...; default: the function's level)")


def register(sub: argparse._SubParsersAction) -> None:
    from mcl.cli import add_hwd_path_option, output_path

    p = sub.add_parser("devices", help="list the OpenCL devices mcl can run on",
                       description="List OpenCL platforms and devices. The commands that "
                                   "run kernels (mcl run, mcl versions, mcl lift explore) "
                                   "choose one with their --device PLATFORM:DEVICE, or all "
                                   "of them with the environment variable MCL_DEVICE "
                                   "(substrings of the names listed here).")
    p.set_defaults(func=cmd_devices)

    p = sub.add_parser("gen", help="generate OpenCL for a kernel at a leaf level",
                       description="Write, per kernel, FUNCTION.cl and the launch plan "
                                   "FUNCTION.json (and with --host c, FUNCTION_host.h/.c).")
    p.add_argument("file", help="MCPL file")
    p.add_argument("--target", "-t", help=TARGET_HELP)
    p.add_argument("--function", help="only this function")
    p.add_argument("-o", "--output", default=".",
                   type=output_path("folder", "to write into the current folder"),
                   help="output directory (default: .)")
    p.add_argument("--host", choices=("c",), help="also write host code in this language")
    p.add_argument("--specialize", action="store_true",
                   help="make every const integer parameter (the sizes) a compile-time "
                        "constant: the OpenCL compiler folds the index arithmetic; a "
                        "program is built per size")
    p.add_argument("--max-registers", type=int, metavar="N",
                   help=_MAX_REGISTERS_HELP + ". With --host c only: the C host's create "
                        "function applies it on NVIDIA's platform and says whether it did "
                        "(its out-parameter registers_limited; see FUNCTION_host.h); the "
                        ".cl source and the launch plan carry no limit, so without --host c "
                        "the option is refused")
    p.add_argument("--fast-math", action="store_true", help=_FAST_MATH_HELP)
    add_hwd_path_option(p)
    p.set_defaults(func=cmd_gen)

    p = sub.add_parser("run", help="run a kernel on random inputs, verify and time it",
                       description="Fill the inputs with random data (the example's "
                                   "reference.py `inputs` when there is one), run, compare "
                                   "with its `reference` (else with the perfect.mcpl beside "
                                   "the file, run at the same target), and print time, "
                                   "GFLOP/s and GB/s. Before it runs, it warns of what makes "
                                   "the kernel wrong at these sizes whatever its speed (a "
                                   "loop that never runs, a grid of no blocks, an index "
                                   "beyond its dimension, a read of an element nothing "
                                   "writes), as `mcl feedback` does; a kernel that would "
                                   "store to an element outside its array, whose barrier not "
                                   "every unit of a work-group reaches, or whose loop never "
                                   "ends, is not launched (--unchecked launches it). An "
                                   "index the data choose (x[colIdx[k]]) is checked as the "
                                   "kernel runs: one outside its dimension is an error that "
                                   "names the access.")
    p.add_argument("file", help="MCPL file")
    p.add_argument("--target", "-t", help=TARGET_HELP)
    p.add_argument("--function", help="the kernel to run when the file has several")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                   help="a size (default: the parameter's example value); may be repeated")
    p.add_argument("--device", help="PLATFORM:DEVICE substrings (default: MCL_DEVICE, "
                                    "else a GPU, else any device)")
    p.add_argument("--repeat", type=int, default=10, help="timed runs (default: 10)")
    p.add_argument("--cold", action="store_true",
                   help="flush the device's caches before each timed run (a write and a "
                        "read of 256 MB): a cold launch, as the feedback's predicted time "
                        "assumes; by default each run finds the caches as the previous "
                        "one left them (its dirty lines to write back: 5-10%% slower for "
                        "vector_add on an H200)")
    p.add_argument("--seed", type=int, default=0,
                   help="seed of the random inputs (default: 0)")
    p.add_argument("--specialize", action="store_true",
                   help="make every const integer parameter (the sizes) a compile-time "
                        "constant: the OpenCL compiler folds the index arithmetic; a "
                        "program is built per size")
    p.add_argument("--max-registers", type=int, metavar="N", help=_MAX_REGISTERS_HELP)
    p.add_argument("--fast-math", action="store_true", help=_FAST_MATH_HELP)
    p.add_argument("--unchecked", "--unchecked-writes", dest="unchecked_writes",
                   action="store_true",
                   help="launch the kernel even where the analyses find a load, store or "
                        "atomic update outside its array at these sizes, a barrier that "
                        "not every unit of a work-group reaches, or a loop that never ends "
                        "(for a kernel right in a way they do not follow), and without "
                        "checking the indices the data choose as it runs: such a kernel "
                        "reads or modifies memory it does not own (on a CPU device the "
                        "process may die of it), or hangs")
    add_hwd_path_option(p)
    p.set_defaults(func=cmd_run)


def cmd_devices(args: argparse.Namespace) -> int:
    devices = device.all_devices()
    if not devices:
        print("no OpenCL device found")
    for d in devices:
        i = device.describe(d)
        print(f"{i.platform}:{i.name}\n    {i.kind}, {i.compute_units} compute units, "
              f"{i.local_memory // 1024} kB local memory, work-groups up to "
              f"{i.max_work_group_size}, {i.global_memory / 2**30:.1f} GiB, {i.version}")
        problem = device.build_problem(d)
        if problem:
            print(f"    cannot build programs: {problem}")
        elif device.miscompiles_tiled_kernels(d):
            print(f"    note: {device.TILED_DEFECT}")
    hint = device.registration_hint()
    if hint:
        print(f"note: {hint}")
    if devices:
        print(f"default: {device.describe(device.select_device()).spec}")
    return 0 if devices else 1


def _check_register_limit(args: argparse.Namespace) -> None:
    """A usage error where ``--max-registers`` lies outside the limits ptxas takes."""
    from mcl.cli import UsageError
    from mcl.opencl.vendor import REGISTER_LIMITS
    if args.max_registers is not None and \
            not REGISTER_LIMITS[0] <= args.max_registers <= REGISTER_LIMITS[1]:
        raise UsageError(f"--max-registers: {args.max_registers}; give "
                         "{} to {} registers per work-item".format(*REGISTER_LIMITS))


#: what ``mcl gen -o`` names (in the message of an output folder that cannot be written)
_GEN_OUTPUT = "the .cl source and the launch plan are written to"


def cmd_gen(args: argparse.Namespace) -> int:
    from mcl.cli import UsageError, hwd_search_path, output_folder, write_output_file
    from mcl.opencl.generate import generate
    from mcl.opencl.host_c import host_code

    _check_register_limit(args)
    if args.max_registers is not None and args.host != "c":
        raise UsageError("--max-registers applies to the C host code: give --host c as well "
                         "(the .cl source and the launch plan carry no register limit; "
                         "mcl run --max-registers and mcl.compile(max_registers=N) apply "
                         "one in Python)")
    output_folder(args.output, "mcl gen", "-o", _GEN_OUTPUT, create=False)
    kernels = generate(args.file, args.target, function=args.function,
                       search_path=hwd_search_path(args, args.file),
                       specialize=args.specialize,
                       fast_math=args.fast_math)
    out = output_folder(args.output, "mcl gen", "-o", _GEN_OUTPUT)

    def write(name: str, text: str) -> None:
        # exactly as generated (utf-8, no newline translation); a file that cannot be
        # written (a folder in its place, a full disk) is a usage error naming it
        write_output_file(out / name, text, "mcl gen", "-o", _GEN_OUTPUT, in_folder=True)

    for k in kernels:
        write(f"{k.name}.cl", k.source)
        write(f"{k.name}.json", k.plan.to_json())
        written = [f"{k.name}.cl", f"{k.name}.json"]
        if args.host == "c":
            header, source = host_code(k, args.max_registers)
            write(f"{k.name}_host.h", header)
            write(f"{k.name}_host.c", source)
            written += [f"{k.name}_host.h", f"{k.name}_host.c"]
        print(f"{k.name}: " + ", ".join(str(out / w) for w in written))
    return 0


def _one_kernel(checked, file: Path) -> None:
    """Without --function, refuse a file of several kernels here, naming the option,
    from the checked module alone, before reference.py is run (the runtime's message
    speaks of mcl.compile's ``function=``)."""
    from mcl.opencl.generate import _is_kernel
    if any(d.is_error for d in checked.diagnostics):
        return   # the build reports the errors
    kernels = [f for f in checked.module.functions if _is_kernel(f)]
    if len(kernels) > 1:
        names = [f.name for f in kernels]
        raise McplError(error(
            "opencl-several-kernels",
            f"{file.name} has several kernels ({', '.join(names)}); mcl run runs one",
            kernels[1].span,
            hint=f"choose one with --function {names[0]} "
                 f"(or {', '.join('--function ' + n for n in names[1:])})"))


def cmd_run(args: argparse.Namespace) -> int:
    import numpy as np

    from mcl.cli import UsageError, hwd_search_path
    from mcl.mcpl import check, parse_file
    from mcl.opencl.runtime import compile as compile_kernel

    if args.repeat < 1:
        raise UsageError(f"--repeat: {args.repeat} timed runs; give 1 or more")
    if args.seed < 0:
        raise UsageError(f"--seed: {args.seed}; give 0 or more")
    _check_register_limit(args)
    file = Path(args.file)
    if file.is_dir():
        raise McplError(error("opencl-no-file", f"{args.file}: a folder, not an MCPL file",
                              hint="give the path of a .mcpl kernel (mcl versions runs "
                                   "every version in a folder)"))
    if not file.is_file():
        raise McplError(error("opencl-no-file", f"{args.file}: no such MCPL file",
                              hint="give the path of a .mcpl kernel"))
    search = hwd_search_path(args, file)   # with the descriptions beside the kernel
    # checked once, for the build, the warnings and the operation counts
    checked = check(parse_file(args.file), search)
    module = checked.module
    if args.function is None:   # before reference.py is run and any OpenCL generated
        _one_kernel(checked, file)
    ref = load_reference(file.resolve().parent)
    # a version written for sizes known at build time says so in its reference.py
    specialize = args.specialize or written_for_sizes(file, ref)
    kernel = compile_kernel(checked, args.target, args.device, function=args.function,
                            search_path=search, specialize=specialize,
                            max_registers=args.max_registers, fast_math=args.fast_math,
                            check_writes=not args.unchecked_writes)
    plan = kernel.plan
    f = module.function(args.function) if args.function else next(
        g for g in module.functions if g.name == kernel.generated.name)
    sizes, examples = _run_sizes(args, f)
    sizes.update(kernel.check_scalars(sizes))     # 1e3 given for an integer is 1000
    # the sizes the version says it needs first: what the analyses would find wrong at
    # other sizes (an access beyond a tile) follows from them
    divisible = (ref or {}).get("DIVISIBLE_BY", {}).get(file.stem, {})
    for name, d in divisible.items():
        if divisibility_problems({name: d}, sizes):
            now = size_expression(name, sizes)
            fix = f"choose --set {name}={(now // d + 1) * d}" if name in sizes else \
                f"choose sizes that make {name} a multiple of {d}"
            raise McplError(error("opencl-size-not-divisible",
                                  f"{file.name} requires {name} to be a multiple of {d}, "
                                  f"not {now}",
                                  hint=fix + ", or a version of the kernel that handles any "
                                             "size"))
    _warn_if_wrong(checked, f.name, sizes, specialize, args)
    rng = np.random.default_rng(args.seed)
    if ref is not None and "inputs" in ref:
        import inspect
        wanted = inspect.signature(ref["inputs"]).parameters
        data = ref["inputs"](rng, **{k: v for k, v in sizes.items() if k in wanted})
        data = {**{k: v for k, v in sizes.items() if k in plan.parameters}, **data}
    else:
        from mcl.opencl.runtime import random_arguments
        data = random_arguments(plan, sizes, rng)
    info = device.describe(kernel.device)
    given = [f"{k}={v}" for k, v in sizes.items() if k not in examples]
    if examples:
        given.append(", ".join(f"{k}={sizes[k]}" for k in examples)
                     + " (example values of the kernel; others with --set NAME=VALUE)")
    if plan.compile_time:
        given.append("built for these sizes (" + ", ".join(c.name for c in plan.compile_time)
                     + " compile-time constants)")
    if args.fast_math:
        given.append("relaxed math (-cl-fast-relaxed-math)")
    if args.max_registers is not None:
        given.append(f"at most {args.max_registers} registers per work-item"
                     if device.takes_register_limit(kernel.context) else
                     "--max-registers not applied (only NVIDIA's driver takes a register "
                     "limit)")
    print(f"{plan.kernel} at {plan.target} on {info.spec}; " + ", ".join(given), flush=True)
    inputs = {k: v.copy() if hasattr(v, "copy") else v for k, v in data.items()}
    result = kernel(**data)
    expected, tol, against = None, None, None
    if ref is not None and "reference" in ref:
        expected = ref["reference"](**data)
        tol = ref.get("TOLERANCE", {"rtol": 1e-5, "atol": 1e-6})
        against = "the reference"
    else:
        perfect = _perfect_version(file, f, search)
        if perfect is not None:
            other = compile_kernel(perfect, plan.target, args.device, function=f.name,
                                   search_path=search)
            expected = other(**{k: v.copy() if hasattr(v, "copy") else v
                                for k, v in inputs.items() if k in other.plan.parameters})
            tol = {"rtol": 1e-4, "atol": 1e-5}
            against = f"{perfect.name} (the perfect version, translated to {plan.target})"
    status = 0
    if expected is not None:
        for name, want in expected.items():
            got = result.get(name)
            if got is None:
                continue
            got, want = fields_as_numbers(got), fields_as_numbers(want)   # records too
            ok = np.allclose(got, want, **tol)
            err = float(np.max(np.abs(got.astype(np.float64) - want))) if want.size else 0.0
            print(f"  {name}: {'matches' if ok else 'DIFFERS FROM'} {against} "
                  f"(max abs error {err:.3g}; rtol {tol.get('rtol')}, atol {tol.get('atol')})")
            status = status or (0 if ok else 1)
    else:
        print("  UNVERIFIED: no reference.py beside the kernel and no perfect.mcpl with a "
              f"function '{f.name}' to compare with")
    from mcl.opencl.conditions import cache_flush, keep_awake
    # each timed run queued behind the flush or a short kernel: a launch on an idle
    # device is profiled with the device's waking (mcl.opencl.conditions)
    before = (cache_flush if args.cold else keep_awake)(kernel.context, kernel.queue)
    seconds = kernel.time(repeat=args.repeat, progress=_Progress(), before=before, **inputs)
    if seconds == float("inf"):
        print("  time: nothing to launch at these sizes")
    else:
        how = "cold: the caches flushed before each" if args.cold else \
            "warm: the caches as the previous run left them"
        from mcl.analyses.values import time_text
        line = f"  time {time_text(seconds)} (best of {args.repeat}, {how})"
        c = _counts(checked, f, plan, ref, data, search)
        if c.flops:
            line += f", {'at most ' if c.upper_bound else ''}{_rate(c.flops / seconds)} GFLOP/s"
        if c.accessed:
            line += f", {_rate(c.accessed / seconds)} GB/s of global accesses"
        if c.compulsory:
            line += (f", {_rate(c.compulsory / seconds)} GB/s of compulsory traffic "
                     "(each element once)")
        print(line)
    if args.max_registers is not None and device.takes_register_limit(kernel.context):
        taken = _registers_taken(kernel, sizes)
        if taken:
            print(f"  registers: {taken}")
    if status:
        raise McplError(error("opencl-wrong-result", f"'{plan.kernel}' does not match "
                              f"{against}"))
    return status


def _registers_taken(kernel, sizes: dict) -> str | None:
    """What NVIDIA's compiler made of a kernel built with a register limit: its
    registers and spills per work-item, as the CUDA driver reports them for the PTX
    (None without ``cuda.bindings``)."""
    from mcl.opencl import vendor
    try:
        import pyopencl as cl
        program = kernel.program(sizes)
        ptx = bytes(program.get_info(cl.program_info.BINARIES)[0]).rstrip(b"\0")
        loaded = vendor.load(ptx, kernel.plan.kernel, None)
    except Exception:  # no CUDA driver bindings: the limit was applied all the same
        return None
    spilled = f", {loaded.local_bytes} bytes of local memory (spills)" \
        if loaded.local_bytes else ", no spills"
    return f"{loaded.registers} per work-item (NVIDIA compiler){spilled}"


def _run_sizes(args: argparse.Namespace, f) -> tuple[dict, list[str]]:
    """The scalar arguments of ``mcl run``: the ``--set`` values, else the parameters'
    example values (their names are the second result)."""
    from mcl.cli import UsageError, check_parameter_values, parse_assignments
    from mcl.mcpl import print_expr
    from mcl.opencl.plan import evaluate

    sizes = parse_assignments(args.set, "--set", allow_float=True)
    scalars = [p.name for p in f.params if not p.type.is_array]
    unknown = [k for k in sizes if k not in scalars]
    if unknown:
        from mcl.opencl.runtime import closest_name
        name = unknown[0]
        if any(p.name == name for p in f.params):     # an array: mcl run fills it
            raise UsageError(f"--set {name}: '{name}' is an array parameter of '{f.name}', "
                             "which mcl run fills with random data; --set gives sizes "
                             f"(its sizes: {', '.join(scalars) or 'none'})")
        close = closest_name(name, [s for s in scalars if s not in sizes])
        raise UsageError(f"--set {name}: '{f.name}' has no size parameter "
                         f"'{name}' ({f'did you mean {close!r}? ' if close else ''}"
                         f"its sizes: {', '.join(scalars) or 'none'})")
    check_parameter_values([f], sizes, "--set")
    examples = []
    for p in f.params:   # the example values of the parameters not set
        if p.type.is_array or p.name in sizes:
            continue
        if p.default is None:
            raise UsageError(f"'{f.name}' needs a value for {p.name} (it has no example "
                             f"value): give one with --set {p.name}=...")
        text = print_expr(p.default)
        try:   # a float parameter keeps its fraction (plan expressions are integers)
            sizes[p.name] = float(text.rstrip("f")) if p.type.name in ("float", "double") \
                else evaluate(text, {})
        except (McplError, ValueError):
            raise UsageError(f"the example value of '{p.name}' ({text}) is not a number: "
                             f"give one with --set {p.name}=...") from None
        examples.append(p.name)
    return sizes, examples


#: Timing shows its progress once it has taken this long (seconds).
PROGRESS_AFTER_S = 2.0


class _Progress:
    """Progress of the timed launches on stderr, once they take a while: a line updated
    in place on a terminal, else (a log) a line at each quarter of the launches."""

    def __init__(self, stream=None):
        import sys
        import time
        self.stream = stream or sys.stderr
        self.start = time.perf_counter()
        self.shown = False
        self.quarter = 0

    def __call__(self, done: int, total: int) -> None:
        import time

        from mcl.cli import is_terminal
        if not self.shown and time.perf_counter() - self.start < PROGRESS_AFTER_S:
            return
        self.shown = True
        text = f"  timing: launch {done} of {total}"
        if is_terminal(self.stream):
            print("\r" + text, end="\n" if done == total else "", file=self.stream,
                  flush=True)
            return
        quarter = 4 * done // max(total, 1)
        if quarter > self.quarter or done == total:
            self.quarter = quarter
            print(text, file=self.stream, flush=True)


def _warn_if_wrong(checked, function: str, sizes: dict, specialize: bool,
                   args: argparse.Namespace) -> None:
    """Print on stderr what makes the kernel wrong whatever its speed at these sizes
    (a loop that never runs, a grid of no blocks, an index beyond its dimension, a read of
    an element nothing writes: mcl.analyses.wrong_kernel),
    before it runs: a result checked against nothing would not show it. An access beyond
    its dimension, a barrier not every unit reaches, or a loop that never ends, stops
    the run (unless --unchecked): launched, the kernel would modify or read memory it
    does not own (on a CPU device a read far outside kills the process), or hang."""
    import sys

    from mcl.analyses import wrong_kernel
    from mcl.analyses.validity import modifying, unsafe
    from mcl.cli import print_diagnostics
    found = wrong_kernel(checked, sizes, function, specialize)
    if found:
        print_diagnostics(found, args, stream=sys.stderr)
    outside = [d for d in found if d.code == "feedback-out-of-bounds"]
    stores = modifying(outside)
    endless = [d for d in found if d.code == "feedback-endless-loop"]
    if endless and not args.unchecked_writes:
        raise McplError(error(
            "opencl-endless-loop",
            f"not run: at these sizes {len(endless)} loop{'s' if len(endless) != 1 else ''} "
            f"never end{'s' if len(endless) == 1 else ''} (warned of above); launched, the "
            "kernel would hang", endless[0].span,
            hint="choose sizes the kernel is written for; where the loop ends in a way the "
                 "analyses do not follow, --unchecked launches it"))
    # (an output left unwritten in part runs: the comparison with the reference shows it)
    divergent = [d for d in unsafe(found) if d not in outside and d not in endless
                 and d.code != "feedback-unwritten-output"]
    if divergent and not args.unchecked_writes:
        # PoCL dies of a segmentation fault; a GPU may hang or go on with part of a block
        raise McplError(error(
            "opencl-divergent-barrier",
            f"not run: {len(divergent)} barrier{'s' if len(divergent) != 1 else ''} that "
            "not every unit of a work-group reaches (warned of above); launched, the "
            "kernel may hang or crash the process", divergent[0].span,
            hint="let every unit reach the barrier; where the condition is the same for "
                 "every unit in a way the analyses do not follow, --unchecked launches it"))
    if outside and not args.unchecked_writes:
        # a store or atomic update outside its array modifies memory the kernel does not
        # own: on a CPU device the process's own (PoCL: its heap corrupted, the process
        # aborted); a load there reads it, and one far outside kills the process with a
        # segmentation fault (a GPU's driver reports an illegal address)
        first = (stores or outside)[0]
        raise McplError(error(
            "opencl-out-of-bounds",
            f"not run: at these sizes the kernel {'writes' if stores else 'reads'} outside "
            f"its arrays ({len(outside)} access{'es' if len(outside) != 1 else ''}, warned "
            "of above); launched, it would "
            + ("modify memory it does not own" if stores else
               "read memory it does not own: a wrong result, or the process killed"),
            first.span, hint="choose sizes the kernel is written for, or guard the "
                             "accesses (mcl feedback --set ... says which); where the "
                             "kernel keeps them inside in a way the analyses do not "
                             "follow, --unchecked launches it"))


def _perfect_version(file: Path, f, search_path: list[str]):
    """``perfect.mcpl`` (or the legacy ``perfect.mcl``) beside ``file`` when it has a
    function of the same name and ``f`` is written for a level below perfect (else None)."""
    from mcl.hdl import HardwareLibrary
    from mcl.mcpl import parse_file

    others = [file.resolve().parent / f"perfect{ext}" for ext in (".mcpl", ".mcl")]
    other = next((o for o in others if o.is_file()), others[0])
    if not other.is_file() or other == file.resolve():
        return None
    try:
        lib = HardwareLibrary(search_path)
        if "perfect" not in lib.ancestors(f.hardware):
            return None
        module = parse_file(str(other))
    except McplError:
        return None
    g = module.function(f.name)
    return module if g is not None and g.hardware == "perfect" else None


def _rate(per_second: float) -> str:
    """A rate in units of 10^9 a second: a decimal from 10 on, 3 digits below."""
    g = per_second / 1e9
    return f"{g:.1f}" if g >= 10 else f"{g:.3g}"


class _Counts(NamedTuple):
    """What ``mcl run`` divides by the kernel's time (:func:`_counts`)."""

    flops: float | None
    upper_bound: bool           # the operations counted where conditions may stop them
    accessed: float | None      # bytes of the kernel's accesses to global memory
    compulsory: float | None    # bytes of its main memory each launch moves at least


def _counts(checked, f, plan, ref: dict | None, data: dict, search_path=()) -> _Counts:
    """Floating-point operations, whether their count is an upper bound, the bytes of
    the kernel's accesses to global memory and its compulsory bytes (each element of
    its main memory once: mcl.analyses.stats.compulsory_bytes), from one model of the
    kernel as written. The operations: the example's reference.py's where it gives
    them (the problem's, the same for every version), else the analyses' count, an
    upper bound where conditions may stop operations (a tree's ``if (t < s)`` steps
    counted for every lane). The accesses: the analyses' count, else reference.py's
    bytes."""
    sizes = {k: v for k, v in data.items() if not hasattr(v, "shape")}
    flops = ref["flops"](**sizes) if ref and "flops" in ref else None
    most, moved, compulsory = False, None, None
    try:
        from mcl.analyses.kernel_build import build_kernel
        from mcl.analyses.stats import compulsory_bytes, counts_of_kernel, main_space
        from mcl.opencl.target import load_target

        target = load_target(plan.target, search_path)
        # counted on the kernel as written (a translation's guards make upper bounds)
        k = build_kernel(f, checked, sizes)
        counts = counts_of_kernel(k)
        space_at_target = {space: space for space in counts.bytes}
        if f.hardware != plan.target:   # its memory spaces: those of the translated arrays
            from mcl.translate import translate
            lowered = translate(checked.module, to=plan.target, search_path=search_path)
            space_at_target = {p.space: q.space for p, q in
                               zip(f.params, lowered.function(f.name).params, strict=True)
                               if p.space}
        if flops is None:
            flops, most = float(counts.flops) or None, bool(counts.upper_bound)
        moved = float(sum(v for space, v in counts.bytes.items()
                          if space_at_target.get(space) in target.spaces
                          and target.qualifier(space_at_target[space])
                          in ("__global", "__constant"))) or None
        main = main_space(k)
        compulsory = float(compulsory_bytes(k, main)) if main else None
    except Exception:  # noqa: BLE001 - the analyses may not handle every kernel
        pass
    if moved is None and ref and "bytes_moved" in ref:
        moved = ref["bytes_moved"](**sizes)
    return _Counts(flops, most, moved, compulsory or None)
