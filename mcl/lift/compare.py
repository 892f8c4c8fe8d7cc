"""MCPL refinement against Lift exploration, side by side: every MCPL version of an
example folder, compiled for one leaf level with ``mcl.compile``, and the best
implementation Lift's exploration finds for the program derived from the perfect
version; each with its time, GFLOP/s, GB/s and the fraction of the roofline bound
that ``mcl.analyses`` computes for the leaf."""

from __future__ import annotations

import functools
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

import numpy as np

from mcl.diagnostics import McplError
from mcl.lift.from_mcpl import Derivation, derive, fresh, reference_module, reference_output
from mcl.opencl.sizing import divisibility_problems

#: Versions first by how far they are refined: the level alone, then v1, v2, ...
_LEVEL_ORDER = ("perfect", "accelerator")


@dataclass
class Row:
    """One line of the comparison."""

    version: str
    status: str                        # "ok", "wrong", "error", "skipped", "too slow"
    time_s: float | None = None
    note: str = ""
    source: str = ""                   # OpenCL of the kernel (Lift: of the best candidate)
    probes: list = field(default_factory=list)  # [(sizes, seconds)] of the size probes
    candidates: list = field(default_factory=list)  # Lift: the evaluations of the search


@dataclass
class Comparison:
    kernel: str
    leaf: str
    sizes: dict
    device: str
    rows: list[Row] = field(default_factory=list)
    flops: float | None = None          # the figures of merit's numerators
    bytes: float | None = None
    bound_s: float | None = None         # roofline: the least time the leaf allows
    bound_note: str = ""
    lift_expression: str = ""
    lift_candidates: list[dict] = field(default_factory=list)  # evaluations of the search
    other_branches: list[str] = field(default_factory=list)   # versions for other leaves

    def gflops(self, r: Row) -> float | None:
        return self.flops / r.time_s / 1e9 if self.flops and r.time_s else None

    def gbs(self, r: Row) -> float | None:
        return self.bytes / r.time_s / 1e9 if self.bytes and r.time_s else None

    def roofline_fraction(self, r: Row) -> float | None:
        return self.bound_s / r.time_s if self.bound_s and r.time_s else None


def versions(folder: Path) -> list[Path]:
    """The MCPL versions of an example folder in refinement order."""
    def order(p: Path):
        m = re.fullmatch(r"(.*?)(?:_v(\d+))?", p.stem)
        level, v = m.group(1), int(m.group(2) or 0)
        first = _LEVEL_ORDER.index(level) if level in _LEVEL_ORDER else len(_LEVEL_ORDER)
        return (first, level, v)
    return sorted(folder.glob("*.mcpl"), key=order)


def default_sizes(path: Path) -> dict[str, int]:
    """The example values of the integer parameters of the kernel (``const int n = ...``)."""
    from mcl.mcpl import ast, parse_file
    out = {}
    for f in parse_file(path).functions[:1]:
        for p in f.params:
            if p.type.name == "int" and not p.type.dims and isinstance(p.default, ast.Literal):
                out[p.name] = int(p.default.value)
    return out


def _divisible(ref: ModuleType, stem: str, sizes: dict) -> str | None:
    need = getattr(ref, "DIVISIBLE_BY", {}).get(stem, {})
    return ", ".join(divisibility_problems(need, sizes)) or None


def _roofline_level(leaf: str, device: str, search_path: tuple[str, ...] = ()) -> str:
    """The level whose roofline the times are held against: the one that describes the
    device (a target file's ``describes``: h200 for an NVIDIA H200) where it lies below
    ``leaf``, the level the versions are built for; else ``leaf``."""
    from mcl.hdl import hardware_library
    from mcl.opencl.target import described_by

    level = described_by(device, search_path)
    lib = hardware_library(search_path)
    if level is not None and level in lib and leaf in lib and lib.is_descendant(level, leaf):
        return level
    return leaf


def _roofline_bound(folder: Path, leaf: str, sizes: dict,
                    search_path: tuple[str, ...] = ()) -> tuple[float | None, str]:
    """(least time in seconds, how it was found): operations over the attainable rate
    with compulsory traffic (each array element crosses the memory interface once),
    from mcl.analyses.stats.roofline of the least refined version brought down to
    ``leaf`` (its operations are the algorithm's; refined versions may add some)."""
    from mcl.analyses.stats import roofline
    from mcl.mcpl import check
    from mcl.translate import translate

    why = f"no version of {folder.name} has one on {leaf}"
    for p in on_path(versions(folder), leaf, search_path):
        try:
            checked = check(translate(p, to=leaf, search_path=search_path), search_path)
            if checked.errors:
                continue
            f = checked.module.functions[0]
            r = roofline(f, checked, sizes)
        except McplError as e:
            why = e.diagnostics[0].message
            continue
        except (ValueError, TypeError, KeyError) as e:
            why = str(e)
            continue
        if r is not None and r.best_attainable > 0:
            return r.flops / r.best_attainable, (
                f"roofline of {leaf} ({r.best_bound} bound with compulsory traffic, "
                f"mcl.analyses on {p.name} translated to {leaf}): {r.flops:.3g} operations, "
                f"{r.compulsory_bytes:.3g} bytes")
    return None, f"roofline missing: {why}"


def on_path(paths: list[Path], leaf: str, search_path: tuple[str, ...] = ()) -> list[Path]:
    """The versions written for ``leaf`` or a level above it (those that can be
    translated to it); versions for other branches of the hierarchy are left out.
    ``search_path``: folders of the user's descriptions (``--hwd-path``)."""
    from mcl.hdl import hardware_library
    from mcl.mcpl import parse_file
    lib = hardware_library(search_path)
    out = []
    for p in paths:
        try:
            levels = {f.hardware for f in parse_file(p).functions}
        except McplError:
            out.append(p)      # reported as an error row
            continue
        if any(lv == leaf or (lv in lib and lib.is_descendant(leaf, lv)) for lv in levels):
            out.append(p)
    return out


@dataclass
class Inputs:
    """The inputs of the comparison at the measured size and, made on demand, at the
    smaller sizes of the ladder a slow version is probed on (see mcl.opencl.sizing)."""

    ref: ModuleType
    sizes: dict
    values: dict
    output: str
    seed: int = 0
    _smaller: dict = field(default_factory=dict)

    def at(self, sizes: dict) -> dict:
        if sizes == self.sizes:
            return self.values
        key = tuple(sorted(sizes.items()))
        if key not in self._smaller:
            self._smaller[key] = self.ref.inputs(
                np.random.default_rng(self.seed), **{k: v for k, v in sizes.items()
                                                     if k in _input_params(self.ref)})
        return self._smaller[key]

    def ladder(self, need: dict) -> list[dict]:
        from mcl.opencl.sizing import scaled_sizes, size_ladder
        keys = scaled_sizes(self.ref, {k: v for k, v in self.sizes.items()
                                       if k in _input_params(self.ref)})
        # from 1/65536 of the work: one run of the perfect reduction at 1/256 of 2^28
        # elements (2^20 float atomics on one address) already takes 40 s on an H100
        return size_ladder(self.sizes, keys, need, fraction=2.0 ** -16)

    def work(self, sizes: dict) -> float:
        from mcl.opencl.sizing import work_of
        metric = "GB/s" if hasattr(self.ref, "bytes_moved") else "GFLOP/s"
        return work_of(self.ref, dict(sizes), metric)


def _sizes_text(sizes: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in sizes.items())


def measure_mcpl(path: Path, leaf: str, inputs: Inputs, expected: np.ndarray,
                 tolerance: dict, device: str | None, repeat: int,
                 max_version_s: float | None = None, search_path: tuple[str, ...] = ()) -> Row:
    """Compile one MCPL version for ``leaf`` (with its sizes as compile-time constants
    where reference.py's SPECIALIZE names it), check it against ``expected``, time it.
    With ``max_version_s``, the version is first timed on smaller sizes (a ladder
    from 1/65536 of the work up) and not run at all where one run at the compared size
    is predicted to take longer: a running kernel cannot be interrupted. ``search_path``:
    folders of the user's descriptions (the kernel's levels, the leaf)."""
    import mcl
    from mcl.opencl.sizing import fit_size
    from mcl.versions.sizes import written_for_sizes
    try:
        kernel = mcl.compile(path, target=leaf, device=device, search_path=search_path,
                             specialize=written_for_sizes(path, vars(inputs.ref)))

        def args_at(sizes: dict) -> dict:
            return {k: v for k, v in inputs.at(sizes).items() if k in kernel.plan.parameters}

        one_run, probes = None, []
        if max_version_s is not None:
            need = getattr(inputs.ref, "DIVISIBLE_BY", {}).get(path.stem, {})
            rungs = inputs.ladder(need)
            fit = fit_size(lambda i: kernel.time(1, warmup=0, **args_at(rungs[i])),
                           lambda i: inputs.work(rungs[i]), len(rungs), max_version_s,
                           max_step=64.0)
            one_run = fit["predicted_s"]
            probes = [(rungs[i], t) for i, t in fit["probes"]]
            if fit["rung"] != len(rungs) - 1:
                small, t = probes[-1]
                return Row(path.stem, "too slow", note=(
                    f"one run predicted to take {one_run:.3g} s (limit {max_version_s:g} s), "
                    f"from {t * 1e3:.3g} ms at {_sizes_text(small)}: not run"),
                    source=kernel.source, probes=probes)
        args = args_at(inputs.sizes)
        got = np.asarray(kernel(**fresh(args))[inputs.output])
        if got.shape != expected.shape or not np.allclose(got, expected, **tolerance):
            err = float(np.max(np.abs(got - expected))) if got.shape == expected.shape else \
                float("inf")
            return Row(path.stem, "wrong", note=f"max |error| {err:.3g}", source=kernel.source)
        warmup = 2
        if one_run and max_version_s:   # slow versions are timed fewer times
            runs = max(1, int(max_version_s / max(one_run, 1e-9)))
            warmup, repeat = min(warmup, runs // 4), max(1, min(repeat, runs - runs // 4))
        return Row(path.stem, "ok", kernel.time(repeat, warmup=warmup, **args),
                   source=kernel.source, probes=probes)
    except McplError as e:
        return Row(path.stem, "error", note=e.diagnostics[0].message.splitlines()[0][:160])


def lift_best(d: Derivation, sizes: dict, ref: ModuleType, budget: int, strategy: str = "mcts",
              device: str | None = None, seed: int = 0, depth: int = 3,
              results: str | None = None, repeat: int = 10, progress=None,
              evaluator=None, limits=None) -> tuple[Row, str]:
    """Explore the derived program at ``sizes``; (row of the best candidate, with the
    evaluations of the search as its ``candidates``, and its expression).
    ``evaluator``/``limits`` replace the OpenCL device (as in mcl.lift.explore.explore)."""
    from mcl.lift.explore import explore, summary
    names = [i.name for i in d.inputs]

    def reference(*xs):
        return reference_output(ref, {**sizes, **dict(zip(names, xs, strict=True))}, d.output)

    res = explore(d.program, sizes, strategy, budget, device, results, seed, depth,
                  evaluator=evaluator, limits=limits, progress=progress, reference=reference,
                  repeat=repeat, seed_macros=True)
    candidates = res.candidates()
    outcomes = summary(candidates) if candidates else ""
    best = res.best()
    if best is None:
        return Row("Lift best", "error", note=f"no correct candidate ({outcomes})" if outcomes
                   else "the search reached no fully lowered program at these sizes",
                   candidates=candidates), ""
    return Row("Lift best", "ok", best["time_s"], note=outcomes,
               source=best.get("source", ""), candidates=candidates), best["expression"]


def compare(kernel: str | Path, leaf: str, sizes: dict | None = None, budget: int = 200,
            strategy: str = "mcts", device: str | None = None, seed: int = 0, depth: int = 3,
            results: str | None = None, repeat: int = 10, function: str | None = None,
            progress=None, measure=None, evaluator=None, limits=None,
            max_version_s: float | None = None,
            search_path: tuple[str, ...] = ()) -> Comparison:
    """The comparison for the example folder of ``kernel`` (an MCPL file; its folder
    holds the versions and reference.py) at ``sizes`` (default: the example values):
    the versions written for ``leaf`` or a level above it, then Lift's best.
    ``max_version_s`` leaves out versions predicted to run longer (see
    :func:`measure_mcpl`). ``measure`` (default :func:`measure_mcpl`) and
    ``evaluator`` replace the device. ``search_path``: folders of the user's hardware
    descriptions (the levels the versions import, ``leaf``; ``--hwd-path``)."""
    measure = measure or functools.partial(measure_mcpl, search_path=tuple(search_path))
    kernel = Path(kernel)
    folder = kernel.parent
    ref = reference_module(kernel)
    if ref is None:
        raise McplError([_err(f"no reference.py beside {kernel}: the comparison needs "
                              "inputs(), reference() and TOLERANCE")])
    sizes = {**default_sizes(kernel), **(sizes or {})}
    d = derive(kernel, function, constants=sizes, search_path=tuple(search_path))
    values = ref.inputs(np.random.default_rng(seed), **{k: v for k, v in sizes.items()
                                                         if k in _input_params(ref)})
    sizes = {**sizes, **{k: v for k, v in values.items() if isinstance(v, int)}}
    inputs = Inputs(ref, {k: v for k, v in sizes.items() if k in _input_params(ref)}, values,
                    d.output, seed)
    expected = reference_output(ref, values, d.output)
    tol = getattr(ref, "TOLERANCE", {"rtol": 1e-4, "atol": 1e-5})
    cmp = Comparison(ref.KERNEL if hasattr(ref, "KERNEL") else folder.name, leaf, sizes,
                     _device_name(device) if evaluator is None else "none (stand-ins)")
    cmp.flops = float(ref.flops(**sizes)) if hasattr(ref, "flops") else None
    cmp.bytes = float(ref.bytes_moved(**sizes)) if hasattr(ref, "bytes_moved") else None
    search_path = tuple(search_path)
    cmp.bound_s, cmp.bound_note = _roofline_bound(
        folder, _roofline_level(leaf, cmp.device, search_path), sizes, search_path)
    every = versions(folder)
    chosen = on_path(every, leaf, search_path)
    cmp.other_branches = [p.stem for p in every if p not in chosen]
    for p in chosen:
        why = _divisible(ref, p.stem, sizes)
        if why:
            cmp.rows.append(Row(p.stem, "skipped", note=f"needs {why}"))
            continue
        t0 = time.perf_counter()
        cmp.rows.append(measure(p, leaf, inputs, expected, tol, device, repeat, max_version_s))
        if progress:
            r = cmp.rows[-1]
            print(f"{p.stem}: {r.status}" + (f" {r.time_s * 1e3:.4f} ms" if r.time_s else "")
                  + f" ({time.perf_counter() - t0:.1f} s)", file=progress, flush=True)
    row, cmp.lift_expression = lift_best(d, sizes, ref, budget, strategy, device, seed, depth,
                                         results, repeat, progress, evaluator, limits)
    cmp.rows.append(row)
    cmp.lift_candidates = row.candidates
    return cmp


def _device_name(spec: str | None) -> str:
    try:
        from mcl.opencl.device import describe, runtime
        return describe(runtime(spec).device).spec
    except Exception:  # noqa: BLE001 - only a label; the runs report real failures
        return spec or os.environ.get("MCL_DEVICE", "default")


def _input_params(ref: ModuleType) -> set[str]:
    import inspect
    return set(inspect.signature(ref.inputs).parameters) - {"rng"}


def _err(message: str):
    from mcl.diagnostics import error
    return error("lift-compare", message)


def _num(x: float | None, fmt: str) -> str:
    return "—" if x is None else format(x, fmt)


def table(c: Comparison, markdown: bool = False) -> str:
    """The comparison as a text or markdown table, with the roofline note below it and
    why Lift candidates were dropped."""
    from mcl.lift.explore import reasons
    head = ["version", "time (ms)", "GFLOP/s", "GB/s", "of roofline", "note"]
    body = []
    for r in c.rows:
        frac = c.roofline_fraction(r)
        body.append([r.version if r.status == "ok" else f"{r.version} ({r.status})",
                     _num(r.time_s and r.time_s * 1e3, ".4f"), _num(c.gflops(r), ".1f"),
                     _num(c.gbs(r), ".1f"), "—" if frac is None else f"{100 * frac:.1f}%",
                     r.note])
    sizes = ", ".join(f"{k}={v}" for k, v in c.sizes.items())
    title = f"{c.kernel} on {c.leaf} ({sizes}; device {c.device})"
    if markdown:
        lines = [f"### {title}", "", "| " + " | ".join(head) + " |",
                 "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(x.replace("|", "\\|") for x in row) + " |" for row in body]
    else:
        widths = [max(len(h), *(len(row[i]) for row in body)) for i, h in enumerate(head[:-1])]
        fmt = "  ".join(f"{{:{'<' if i == 0 else '>'}{w}}}" for i, w in enumerate(widths))
        lines = [title, fmt.format(*head[:-1]) + "  note"]
        lines += [fmt.format(*row[:-1]) + "  " + row[-1] for row in body]
    lines += ["", c.bound_note + (f"; least time {c.bound_s * 1e3:.4f} ms" if c.bound_s else "")]
    if c.other_branches:
        lines += ["", f"Not for {c.leaf} (written for another branch of the hierarchy): "
                  + ", ".join(c.other_branches)]
    dropped = reasons(c.lift_candidates)
    if dropped:
        lines += ["", "Lift candidates not kept:"]
        lines += [f"  {n} {status}: {why}" for status, n, why in dropped]
    if c.lift_expression:
        lines += ["", f"Lift best: {c.lift_expression}"]
    return "\n".join(lines) + "\n"
