"""From MCPL to Lift: derive a Lift high-level program from an MCPL kernel written at
a level with one kind of parallel unit (``perfect``, ``accelerator``), or explain, at
the MCPL spans, what Lift cannot express (data-dependent indices, atomics on
computed elements, early exits, loop-carried dependences).

The derivation evaluates the innermost body of the foreach nest symbolically: every
written element becomes a term over array reads (with affine indices), scalar
parameters and reductions (sequential loops that accumulate with an associative
operator). The term is then turned into Lift, one index variable at a time:
the reads that vary with the variable are viewed so that it runs over their outer
dimension (``transpose`` for a column, ``slide`` for a window ``i + y``, ``split``
for a block ``s*i + x``), zipped, and mapped over (foreach) or mapped and reduced
(loops). Scalar arithmetic becomes user functions.

The evaluation is :mod:`mcl.lift.from_mcpl_eval`, the building of the Lift program
:mod:`mcl.lift.from_mcpl_build`, the terms between them :mod:`mcl.lift.from_mcpl_terms`;
this module derives (``derive``), holds the result (``Derivation``) and verifies it
against a kernel's ``reference.py``. The ``mcl lift from-mcpl`` command is in
:mod:`mcl.lift.commands`."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

import numpy as np

from mcl.diagnostics import Diagnostic, McplError, error
from mcl.lift import ir
from mcl.lift.from_mcpl_build import _LiftBuilder
from mcl.lift.from_mcpl_eval import _Evaluator
from mcl.lift.types import SCALARS
from mcl.masked_arrays import refuse_masked
from mcl.mcpl import ast

# ----------------------------------------------------------------------------- result

@dataclass(frozen=True)
class LiftInput:
    """A parameter of the derived program and where its value comes from."""

    name: str                  # the MCPL parameter (arrays, scalars, sizes used as values)
    kind: str                  # "array" | "scalar"


@dataclass
class Derivation:
    """A Lift program that computes ``output`` of the MCPL ``function``."""

    program: ir.Program
    function: str
    output: str
    inputs: tuple[LiftInput, ...]
    sizes: tuple[str, ...]                     # MCPL size parameters (symbols of the types)
    source: Path | None = None
    notes: list[Diagnostic] = field(default_factory=list)

    def text(self) -> str:
        from mcl.lift.printer import show_program
        return show_program(self.program)

    def arguments(self, values: dict) -> list:
        """Positional arguments of the program from MCPL parameter values (by name)."""
        out = []
        for p, inp in zip(self.program.params, self.inputs, strict=True):
            if inp.name not in values:
                raise McplError(error("from-mcpl-run", f"no value for '{inp.name}'"))
            # np.asarray drops a mask: the program would read the masked-out elements
            refuse_masked(values[inp.name], "from-mcpl-run", f"'{inp.name}'",
                          "Lift's interpreter", inp.name)
            out.append(np.asarray(values[inp.name], dtype=SCALARS[_scalar_name(p.type)][1]))
        return out

    def run(self, values: dict) -> np.ndarray:
        """The output computed by Lift's interpreter from MCPL parameter values by name
        (sizes included: they bind the size symbols of the program's types)."""
        from mcl.lift.interp import run
        for s in self.sizes:
            refuse_masked(values.get(s), "from-mcpl-run", f"'{s}'", "Lift's interpreter", s)
        sizes = {s: int(values[s]) for s in self.sizes if s in values}
        prog = ir.bind_sizes(self.program, sizes)
        return np.asarray(run(prog, *self.arguments(values)))


def _scalar_name(t) -> str:
    from mcl.lift.types import scalar_of
    return scalar_of(t).name


# ----------------------------------------------------------------------------- derivation

def derive(what: str | Path | ast.Module, function: str | None = None,
           output: str | None = None, constants: dict[str, int] | None = None,
           search_path: tuple[str, ...] = ()) -> Derivation:
    """The Lift program of ``function`` (default: the module's first function)
    computing ``output`` (needed when it writes several arrays). Integer parameters
    used as values (``sum / (fh * fw)``) become program parameters, or the numbers in
    ``constants`` where given (exploration binds all sizes). ``search_path``: folders
    of hardware descriptions the kernel imports (those beside it are found anyway).
    Raises McplError with one diagnostic per construct Lift cannot express."""
    from mcl.mcpl import check
    if isinstance(what, ast.Module):
        path = Path(what.file) if what.file != "<string>" else None
    else:
        path = Path(what)
        if path.suffix == ".lift":
            raise McplError(error(
                "from-mcpl-file", f"{path} is a Lift program already; from-mcpl reads an "
                "MCPL kernel (.mcpl)", hint=f"`mcl lift check {path}` type-checks it, "
                f"`mcl lift explore {path}` searches its implementations"))
    # Only programs the front end accepts are derived: its errors come first, and the
    # derivation can rely on the checks (nesting, sizes, names) having passed.
    checked = check(what if isinstance(what, ast.Module) else str(path), search_path)
    errors = [d for d in checked.diagnostics if d.is_error]
    if errors:
        raise McplError(errors)
    module = checked.module
    fns = [f for f in module.functions]
    if not fns:
        raise McplError(error("from-mcpl-function", f"module '{module.name}' has no function",
                              module.span))
    if function is None:
        fn = fns[0]
    else:
        match = [f for f in fns if f.name == function]
        if not match:
            raise McplError(error("from-mcpl-function",
                                  f"module '{module.name}' has no function '{function}'",
                                  module.span, hint="functions: " + ", ".join(f.name for f in fns)))
        fn = match[0]
    d = _Deriver(fn, constants or {}).derive(output)
    d.source = path
    return d


class _Deriver(_Evaluator, _LiftBuilder):
    """One derivation: the body evaluated to terms, then the output's term built into
    a Lift program."""

    def derive(self, output: str | None) -> Derivation:
        foreach_vars = self.evaluate()
        prog, output, used = self.build(output, foreach_vars)
        inputs = tuple(LiftInput(n, "array" if self.params[n].type.dims else "scalar")
                       for n in used)
        return Derivation(prog, self.fn.name, output, inputs, tuple(sorted(self.sizes)),
                          notes=self.notes)


# ----------------------------------------------------------------------------- verification

def reference_module(mcpl: str | Path) -> ModuleType | None:
    """The ``reference.py`` beside an example kernel, or None."""
    ref = Path(mcpl).with_name("reference.py")
    if not ref.exists():
        return None
    spec = importlib.util.spec_from_file_location(f"_mcl_ref_{ref.parent.name}", ref)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@dataclass
class Check:
    """The outcome of running a derived program against a reference on one input."""

    sizes: dict
    max_error: float
    ok: bool
    against: str


def fresh(values: dict) -> dict:
    """A copy of the arrays among ``values`` (a kernel or reference may write them)."""
    return {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in values.items()}


def reference_output(ref: ModuleType, values: dict, output: str) -> np.ndarray:
    """``output`` as reference.py computes it from (copies of) ``values``."""
    return np.asarray(ref.reference(**fresh(values))[output])


def verify(d: Derivation, ref: ModuleType, sizes: dict, seed: int = 0) -> Check:
    """Run the derived program with Lift's interpreter on the reference's random
    inputs of ``sizes`` and compare with ``ref.reference`` within ``ref.TOLERANCE``."""
    rng = np.random.default_rng(seed)
    values = ref.inputs(rng, **sizes)
    expected = reference_output(ref, values, d.output)
    got = d.run(values)
    tol = getattr(ref, "TOLERANCE", {"rtol": 1e-5, "atol": 1e-6})
    ok = got.shape == expected.shape and bool(np.allclose(got, expected, **tol))
    err = float(np.max(np.abs(got.astype(np.float64) - expected))) if got.shape == \
        expected.shape and got.size else (0.0 if got.shape == expected.shape else float("inf"))
    return Check(dict(sizes), err, ok, "reference.py")

