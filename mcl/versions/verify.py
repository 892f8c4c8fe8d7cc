"""Cross-level verification: every version runs on one OpenCL device (translated down
to a leaf it can reach) on the same random inputs at several sizes, and its outputs
are compared with reference.py's, or with those of the highest-level version."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from mcl.diagnostics import Diagnostic, McplError, error, warning
from mcl.mcpl import ast
from mcl.opencl.plan import fields_as_numbers
from mcl.versions import sizes as S
from mcl.versions.discover import Version, VersionSet, highest


@dataclass
class Check:
    """One version at one size set."""

    status: str        # "ok", "differs", "error", "not-applicable", "skipped", "reference"
    detail: str = ""
    max_error: float | None = None
    first: dict | None = None   # output, index, value, expected, mismatches, elements

    def to_json(self) -> dict:
        out: dict = {"status": self.status, "detail": self.detail}
        if self.max_error is not None:
            out["max_abs_error"] = self.max_error
        if self.first:
            out["first_difference"] = self.first
        return out


@dataclass
class Verification:
    against: str
    device: str
    is_gpu: bool
    seed: int
    size_sets: list[S.SizeSet]
    targets: dict[str, str] = field(default_factory=dict)
    checks: dict[str, list[Check]] = field(default_factory=dict)   # version -> per size set
    kernels: dict[str, Any] = field(default_factory=dict, repr=False)
    problems: list[Diagnostic] = field(default_factory=list)

    def verdict(self, version: str) -> str:
        """"consistent", "INCONSISTENT", "failed", "unverified" or "left out"."""
        checks = self.checks.get(version)
        if not checks:
            return "left out"
        statuses = {c.status for c in checks}
        if "differs" in statuses:
            return "INCONSISTENT"
        if statuses <= {"error"}:
            return "failed"
        if "ok" in statuses or "reference" in statuses:
            return "consistent" + (" (some sizes failed)" if "error" in statuses else "")
        return "unverified"

    @property
    def inconsistent(self) -> list[str]:
        return [v for v in self.checks if self.verdict(v) == "INCONSISTENT"]

    def to_json(self) -> dict:
        return {"against": self.against, "device": self.device, "seed": self.seed,
                "sizes": [{"label": s.label, "values": s.values} for s in self.size_sets],
                "versions": {v: {"target": self.targets.get(v), "verdict": self.verdict(v),
                                 "checks": [c.to_json() for c in cs]}
                             for v, cs in self.checks.items()}}


def choose_targets(vs: VersionSet, lib: Any, forced: str | None = None) -> dict[str, str]:
    """A leaf per version: ``forced``, else the leaf below its level that most versions
    can reach (so that most versions run the same target's code)."""
    reach = {v.name: [leaf for leaf in lib.leaves()
                      if leaf == v.level or lib.is_descendant(leaf, v.level)]
             for v in vs.versions if v.usable and v.level in lib}
    popular = Counter(leaf for leaves in reach.values() for leaf in leaves)
    out = {}
    for name, leaves in reach.items():
        if forced:
            out[name] = forced
        elif leaves:
            out[name] = max(leaves, key=lambda leaf: (popular[leaf], -lib.leaves().index(leaf)))
    return out


def verify(vs: VersionSet, *, sizes: str = "small", seed: int = 0, device: str | None = None,
           target: str | None = None, search_path: tuple[str, ...] = (),
           progress: Any = None) -> Verification:
    from mcl.hdl import hardware_library
    from mcl.opencl import device as devices

    say = progress or (lambda _msg: None)
    lib = hardware_library(search_path)
    rt = devices.runtime(device)
    info = rt.info
    import pyopencl as cl
    is_gpu = bool(rt.queue.device.type & cl.device_type.GPU)
    top = highest(vs)
    folder = S.folder_of(vs.versions[0].file) if vs.versions else Path(".")
    ref = S.load_reference(folder)
    use_ref = ref is not None and "reference" in ref
    ref_file = folder / "reference.py"
    problems = [] if ref is None or callable(ref.get("reference")) else [error(
        "versions-reference", f"{ref_file} defines no function reference(): the versions "
        "are compared with the highest-level version instead",
        hint="define reference(**inputs) returning a dict of the outputs, or remove "
             "reference.py")]
    use_ref = use_ref and not problems
    against = "reference.py" if use_ref else (top.name if top else "nothing")
    if top is None:
        return Verification(against, info.spec, is_gpu, seed, [], problems=[error(
            "versions-nothing-to-run", f"{vs.source}: no version checks without errors",
            hint="fix the errors reported for the versions")])
    sets = S.size_sets(sizes, top.function_node, ref)
    out = Verification(against, info.spec, is_gpu, seed, sets,
                       choose_targets(vs, lib, target), problems=problems)
    usable = [v for v in vs.versions if v.usable]
    for v in usable:
        tgt = out.targets.get(v.name)
        if tgt is None:
            v.problems.append(error("versions-no-leaf", f"level '{v.level}' of {v.name} has no "
                                    "leaf below it to generate OpenCL for",
                                    v.function_node.span))
            continue
        say(f"compiling {v.name} for {tgt}")
        try:
            out.kernels[v.name] = _compile(v, tgt, rt, search_path)
        except McplError as e:
            v.problems += [_located(d, v) for d in e.diagnostics]
    for v in vs.versions:
        out.checks[v.name] = [] if v.name not in out.kernels else \
            [Check("skipped") for _ in sets]
    if not out.kernels:
        return out
    plan = (out.kernels.get(top.name) or next(iter(out.kernels.values()))).plan
    for i, s in enumerate(sets):
        say(f"size {s.label}: {s.text()}")
        rng = np.random.default_rng([seed, i])
        try:
            data = S.make_inputs(s, plan, ref, rng)
        except (Exception, SystemExit) as e:  # noqa: BLE001 - reference.py's, or a shape
            by = f"{ref_file}: inputs() failed" if ref and "inputs" in ref else \
                "the inputs could not be made"
            out.problems.append(error("versions-inputs", f"{by} at {s.text()}: "
                                      f"{_raised(e)}"))
            continue
        expected: dict[str, np.ndarray] | None = None
        if use_ref:
            try:
                expected = S.reference_outputs(ref, data)
            except (Exception, SystemExit) as e:  # noqa: BLE001 - the user's reference()
                out.problems.append(error("versions-reference", f"{ref_file}: reference() "
                                          f"failed at {s.text()}: {_raised(e)}"))
                continue
            unknown = [k for k in expected if k not in plan.parameters]
            if unknown:
                if not any(p.code == "versions-reference-outputs" for p in out.problems):
                    out.problems.append(error(
                        "versions-reference-outputs", f"{ref_file}: reference() returns "
                        f"{', '.join(map(repr, unknown))}, which the kernel has no parameter "
                        f"of: nothing is compared with {'it' if len(unknown) == 1 else 'them'}",
                        hint="name the outputs as the kernel's parameters: "
                             f"{', '.join(plan.parameters)}"))
                expected = {k: a for k, a in expected.items() if k not in unknown}
                if not expected:
                    continue
        else:                # the highest version's outputs are what the others must give
            expected = _top_outputs(out, top, s, i, data, ref, is_gpu)
        ops = 0.0 if expected is None else S.ops_per_element(
            top.function_node, top.checked, dict(s.values),
            sum(a.size for a in expected.values()), ref)
        for v in usable:
            if v.name not in out.kernels or (v is top and not use_ref):
                continue
            if expected is None:
                out.checks[v.name][i] = Check("skipped", f"nothing to compare with: {top.name} "
                                              "did not run at this size")
                continue
            out.checks[v.name][i], _ = _run(v, out.kernels[v.name], s, data, ref, is_gpu,
                                            expected, ops)
    return out


def _raised(e: BaseException) -> str:
    if isinstance(e, SystemExit):
        return f"it called sys.exit({e.code!r})"
    return f"{type(e).__name__}: {e}"


def _top_outputs(out: Verification, top: Version, s: S.SizeSet, i: int, data: dict,
                 ref: dict | None, is_gpu: bool) -> dict | None:
    """Run the highest version (the reference when there is no reference.py)."""
    kernel = out.kernels.get(top.name)
    if kernel is None:
        return None
    check, outputs = _run(top, kernel, s, data, ref, is_gpu, None, 0)
    if check.status == "ok":
        check = Check("reference", "the outputs the others are compared with")
    out.checks[top.name][i] = check
    return outputs if check.status == "reference" else None


def _compile(v: Version, target: str, rt: Any, search_path: tuple[str, ...]) -> Any:
    from mcl.opencl.runtime import compile as compile_kernel
    return compile_kernel(v.checked.module, target, function=v.function,
                          search_path=search_path, context=rt.context, queue=rt.queue)


def _run(v: Version, kernel: Any, s: S.SizeSet, data: dict, ref: dict | None, is_gpu: bool,
         expected: dict | None, ops: float) -> tuple[Check, dict]:
    why = S.divisibility_problem(v.name.split("@")[0], s, ref)
    if why:
        return Check("not-applicable", f"{why} (reference.py DIVISIBLE_BY)"), {}
    if kernel.plan.assumes_lockstep and not is_gpu:
        return Check("skipped", "relies on lock-step warps, which only a GPU provides"), {}
    args = {k: (x.copy() if hasattr(x, "copy") else x) for k, x in data.items()
            if k in kernel.plan.parameters}
    try:
        outputs = {k: np.asarray(x) for k, x in kernel(**args).items()}
    except McplError as e:
        d = _located(e.diagnostics[0], v, s)
        if not any(p.code == d.code for p in v.problems):
            v.problems.append(d)
        return Check("error", d.message), {}
    if expected is None:
        return Check("ok"), outputs
    worst = 0.0
    for name, want in expected.items():
        got = outputs.get(name)
        if got is None:
            continue
        if got.shape != want.shape:
            return Check("differs", f"{name} has shape {got.shape}, expected {want.shape}"), outputs
        rtol = S.tolerance(want.dtype, ops)
        got, want = fields_as_numbers(got), fields_as_numbers(want)     # records too
        if want.size == 0:
            continue
        worst = max(worst, float(np.max(np.abs(got.astype(np.float64) - want))))
        diff = S.first_difference(got, want, rtol)
        if diff is not None:
            count, idx, value, wanted = diff
            at = f"{name}[{', '.join(map(str, idx))}]"
            return Check("differs", f"{count} of {want.size} elements differ; first {at} = "
                         f"{value:.7g}, expected {wanted:.7g} (rtol {rtol:.2g})", worst,
                         {"output": name, "index": list(idx), "value": value,
                          "expected": wanted, "mismatches": count, "elements": int(want.size),
                          "rtol": rtol}), outputs
    return Check("ok", f"max abs error {worst:.3g}", worst), outputs


def _located(d: Diagnostic, v: Version, s: S.SizeSet | None = None) -> Diagnostic:
    """The diagnostic anchored in the version's file (a launch refused for local memory
    at the declaration of the local arrays) and naming the sizes."""
    span = d.span
    if span is None or span.file != v.file:
        f = v.function_node
        decl = _local_declaration(f) if d.code == "opencl-local-memory" and f else None
        span = decl.span if decl is not None else (f.span if f else None)
    msg = d.message + (f" (at {s.text()})" if s else "")
    make = warning if s is not None else error
    return make(d.code, msg, span, d.hint)


def _local_declaration(f: ast.Function) -> ast.Declaration | None:
    for n in ast.walk(f.body):
        if isinstance(n, ast.Declaration) and n.space in ("local", "shared"):
            return n
    return None
