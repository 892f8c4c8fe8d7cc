"""The sizes at which versions are compared, the random inputs at each size and the
tolerance of each comparison (from the dtype and the operations per output element)."""

from __future__ import annotations

import functools
import inspect
import math
import runpy
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from mcl.diagnostics import McplError, error
from mcl.mcpl import ast
from mcl.opencl.sizing import divisibility_problems

#: Distinct small primes for the size parameters, in parameter order.
PRIMES = (37, 19, 41, 23, 29, 31, 43, 17)
#: Sizes that divide none of the usual tile sizes (4, 8, 16, 32, 64, ...).
NON_DIVISIBLE = (100, 130, 70, 90, 110, 50, 60, 140)
MEDIUM_PRIMES = (257, 131, 263, 139, 269, 149, 271, 151)
MEDIUM_NON_DIVISIBLE = (1000, 300, 1030, 330, 1070, 370, 1090, 390)
#: The power of two a "divisible" size set uses where reference.py asks for nothing.
ROUND = 64
SCHEMES = ("small", "medium", "reference")


@dataclass
class SizeSet:
    label: str                  # "ones", "primes", "non-divisible", "divisible", "given"
    values: dict[str, int | float]

    def text(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.values.items())


def load_reference(folder: Path) -> dict | None:
    """The namespace of ``reference.py`` beside the versions (None when absent)."""
    ref = folder / "reference.py"
    if not ref.is_file():
        return None
    try:
        return runpy.run_path(str(ref))
    except SystemExit as e:   # sys.exit() at the top level of the user's file
        raise McplError(error("versions-reference", f"{ref}: could not be run: it called "
                              f"sys.exit({e.code!r})",
                              hint="reference.py is imported by mcl: define inputs() and "
                                   "reference(), and exit nowhere")) from None
    except Exception as e:  # noqa: BLE001 - the user's file: any failure is their error
        raise McplError(error("versions-reference", f"{ref}: could not be run: "
                              f"{type(e).__name__}: {e}",
                              hint="reference.py must define inputs() and reference()")) from None


def written_for_sizes(file: Path, ref: dict | None) -> bool:
    """Whether ``reference.py`` says the version in ``file`` is written for sizes known
    at build time (its ``SPECIALIZE`` names the file's stem): ``mcl run`` builds it
    specialised, and ``mcl feedback`` asks NVIDIA's compiler about that build."""
    return file.stem in (ref or {}).get("SPECIALIZE", ())


def built_specialised(file: str | Path) -> bool:
    """Whether ``mcl run`` builds the version in ``file`` with its sizes as compile-time
    constants: the reference.py beside it names it in SPECIALIZE. A reference.py that
    fails to run names none (the analyses do not need it); its names are read again
    only when the file changes."""
    path = Path(file)
    ref = path.resolve().parent / "reference.py"
    if not ref.is_file():
        return False
    return path.stem in _specialize_names(str(ref), ref.stat().st_mtime_ns)


@functools.lru_cache(maxsize=64)
def _specialize_names(ref: str, mtime_ns: int) -> frozenset[str]:
    try:
        ns = load_reference(Path(ref).parent)
    except McplError:
        return frozenset()
    return frozenset((ns or {}).get("SPECIALIZE", ()))


def size_parameters(f: ast.Function) -> list[str]:
    """The integer scalar parameters of the kernel: the sizes."""
    return [p.name for p in f.params if not p.type.is_array and p.type.name in ("int", "long")]


def size_sets(spec: str, f: ast.Function, ref: dict | None) -> list[SizeSet]:
    """``small`` (1, primes, sizes that divide no tile, multiples of every divisor the
    versions need), ``medium`` (the same, larger), ``reference`` (reference.py's SIZES),
    or explicit sets ``n=37,m=100;n=1,m=1``."""
    names = size_parameters(f)
    if spec in ("small", "medium"):
        primes, odd = (PRIMES, NON_DIVISIBLE) if spec == "small" else \
            (MEDIUM_PRIMES, MEDIUM_NON_DIVISIBLE)
        need: dict[str, int] = {}
        for demands in ((ref or {}).get("DIVISIBLE_BY") or {}).values():
            for k, d in demands.items():
                need[k] = math.lcm(need.get(k, 1), int(d))
        scale = 1 if spec == "small" else 4
        return [
            SizeSet("ones", dict.fromkeys(names, 1)),
            SizeSet("primes", {n: primes[i % len(primes)] for i, n in enumerate(names)}),
            SizeSet("non-divisible", {n: odd[i % len(odd)] for i, n in enumerate(names)}),
            SizeSet("divisible", _divisible({n: need.get(n, ROUND) * scale for n in names},
                                            need, ref)),
        ]
    if spec == "reference":
        sets = (ref or {}).get("SIZES")
        if not sets:
            raise McplError(error("versions-no-reference-sizes", "--sizes reference needs a "
                                  "reference.py with SIZES beside the versions",
                                  hint="use --sizes small, or give sizes: --sizes 'n=37;n=100'"))
        return [SizeSet("reference", dict(s)) for s in sets]
    out = []
    for part in spec.split(";"):
        values: dict[str, int | float] = {}
        for item in filter(None, (x.strip() for x in part.split(","))):
            name, sep, text = item.partition("=")
            if sep and name.strip() in values:     # the last would silently win
                raise McplError(error("versions-bad-sizes", f"--sizes '{part}' gives "
                                      f"{name.strip()} twice", hint="give each size once a "
                                      "set; sets are separated by ';'"))
            try:
                values[name.strip()] = int(text, 0)
            except ValueError:
                try:
                    values[name.strip()] = float(text)
                except ValueError:
                    values = {}
            if not sep or not values:
                raise McplError(error("versions-bad-sizes", f"--sizes: '{item}' is not NAME=NUMBER",
                                      hint=f"one of {', '.join(SCHEMES)}, or sets like "
                                           "'n=37,m=100;n=1,m=1'"))
        missing = [n for n in names if n not in values]
        if missing:
            raise McplError(error("versions-bad-sizes", f"--sizes '{part}' gives no value for "
                                  f"{', '.join(missing)}",
                                  hint=f"the kernel's sizes: {', '.join(names)}"))
        for n in names:
            _check_size(n, values[n], _size_type(f, n), part)
        out.append(SizeSet("given", values))
    return out


#: The largest value of each integer type of a size parameter.
_LARGEST = {"int": 2 ** 31 - 1, "long": 2 ** 63 - 1}


def _size_type(f: ast.Function, name: str) -> str:
    return next(p.type.name for p in f.params if p.name == name)


def check_set(values: dict[str, int | float], functions: list[ast.Function]) -> None:
    """``--set NAME=VALUE``: NAME a parameter of some version's kernel, a size a whole
    number of 0 or more that its type holds (else the timing at them was silently left
    out)."""
    params = list(dict.fromkeys(p.name for f in functions for p in f.params))
    for name, value in values.items():
        if name not in params:
            raise McplError(error("versions-bad-sizes", f"--set {name}={value}: the kernel "
                                  f"'{functions[0].name}' has no parameter {name}",
                                  hint=f"its parameters: {', '.join(params)}"))
        f = next(f for f in functions if name in [p.name for p in f.params])
        if name in size_parameters(f):
            _check_size(name, value, _size_type(f, name), f"{name}={value}", "--set")


def _check_size(name: str, value: int | float, type_name: str, part: str,
                option: str = "--sizes") -> None:
    """A size of the kernel given with --sizes is a whole number of 0 or more that its
    type holds: refused here, not as inputs that could not be made at every size."""
    why = None
    if not isinstance(value, int):
        why = f"{name} is a size of the kernel ({type_name}): give a whole number, not {value}"
    elif value < 0:
        why = f"{name} is a size of the kernel: it cannot be negative"
    elif value > _LARGEST.get(type_name, value):
        why = f"{name} = {value} is more than its type {type_name} holds " \
              f"({_LARGEST[type_name]})"
    if why:
        example = f"--sizes '{name}=37;{name}=100'" if option == "--sizes" else \
            f"--set {name}=1024"
        raise McplError(error("versions-bad-sizes", f"{option} '{part.strip()}': {why}",
                              hint=f"sizes are whole numbers of 0 or more, e.g. {example}"))


def make_inputs(sizes: SizeSet, plan: Any, ref: dict | None, rng: np.random.Generator
                ) -> dict[str, Any]:
    """Sizes and random arrays for every parameter of ``plan`` (reference.py's
    ``inputs`` when there is one: it knows what valid data is, e.g. a CSR matrix)."""

    if ref is not None and "inputs" in ref:
        wanted = inspect.signature(ref["inputs"]).parameters
        kwargs = {k: v for k, v in sizes.values.items() if k in wanted}
        for k, p in wanted.items():   # other knobs: the largest value SIZES gives them
            if k not in kwargs and k != "rng" and p.default is not inspect.Parameter.empty:
                given = [s[k] for s in ref.get("SIZES", []) if k in s]
                if given:
                    kwargs[k] = max(given)
        data = ref["inputs"](rng, **kwargs)
        if not isinstance(data, dict):
            raise TypeError(f"it returned {type(data).__name__}, not a dict of the arguments "
                            "by name")
        return {**sizes.values, **data}
    data: dict[str, Any] = dict(sizes.values)
    for p in plan.arguments:
        if p.kind == "scalar" and p.name not in data and np.dtype(p.dtype).kind == "f":
            data[p.name] = np.dtype(p.dtype).type(rng.uniform(0.5, 1.5))
    from mcl.opencl.runtime import random_arguments
    return random_arguments(plan, data, rng)


def tolerance(dtype: np.dtype, ops_per_element: float) -> float:
    """Relative tolerance of a float result: rounding errors of random data grow with
    the square root of the operations that feed an element (16 ulp of margin);
    integer results are exact."""
    dtype = np.dtype(dtype)
    if dtype.names:     # a record: its least precise floating-point field's
        return max(tolerance(dtype.fields[n][0], ops_per_element) for n in dtype.names)
    if dtype.kind != "f":
        return 0.0
    return 16 * float(np.finfo(dtype).eps) * math.sqrt(max(ops_per_element, 1.0))


def first_difference(got: np.ndarray, want: np.ndarray, rtol: float
                     ) -> tuple[int, tuple[int, ...], float, float] | None:
    """(mismatches, first differing index, value, expected) or None when they agree.
    An element differs when |got - want| > rtol (|want| + mean |want|): the mean keeps
    results near zero after cancellation from failing on rounding alone."""
    g = np.asarray(got, dtype=np.float64)
    w = np.asarray(want, dtype=np.float64)
    scale = float(np.mean(np.abs(w))) if w.size else 0.0
    bad = ~(np.abs(g - w) <= rtol * (np.abs(w) + scale))
    if not bad.any():
        return None
    idx = tuple(int(i) for i in np.argwhere(bad)[0])
    return int(bad.sum()), idx, float(g[idx]), float(w[idx])


def _divisible(sizes: dict[str, int], need: dict, ref: dict | None) -> dict[str, int]:
    """``sizes`` with each size no demand names by itself moved up by the least (at
    most 7) that leaves the fewest demands of a sum of sizes unmet (``w + fw - 1`` a
    multiple of 4: fw = 65 rather than 64 beside w = 128)."""
    demands = list(((ref or {}).get("DIVISIBLE_BY") or {}).values())

    def unmet(s: dict[str, int]) -> int:
        return sum(len(divisibility_problems(d, s)) for d in demands)
    out = dict(sizes)
    for name in sizes:
        if name not in need:
            out[name] = min((sizes[name] + k for k in range(8)),
                            key=lambda v, name=name: (unmet({**out, name: v}), v))
    return out


def divisibility_problem(version: str, sizes: SizeSet, ref: dict | None) -> str | None:
    """Why reference.py's DIVISIBLE_BY says the version does not apply at these sizes."""
    demands = ((ref or {}).get("DIVISIBLE_BY") or {}).get(version, {})
    wrong = divisibility_problems(demands, sizes.values)
    return "needs " + " and ".join(wrong) if wrong else None


def reference_outputs(ref: dict, data: dict) -> dict[str, np.ndarray]:
    inputs = {k: v.copy() if hasattr(v, "copy") else v for k, v in data.items()}
    out = ref["reference"](**inputs)
    if not isinstance(out, dict):
        raise TypeError(f"it returned {type(out).__name__}, not a dict of the outputs by "
                        "name")
    return {k: np.asarray(v) for k, v in out.items()}


def ops_per_element(f: ast.Function, checked: Any, sizes: dict, outputs: int,
                    ref: dict | None) -> float:
    """Floating-point operations per output element, from the analyses' counts
    (else reference.py's ``flops``, else the largest size)."""
    flops = None
    try:
        from mcl.analyses import operation_counts
        flops = float(operation_counts(f, checked, sizes).flops)
    except Exception:  # noqa: BLE001 - the analyses may not count every kernel
        if ref and "flops" in ref:
            flops = float(ref["flops"](**sizes))
    if flops is None:
        ints = [v for v in sizes.values() if isinstance(v, int)]
        return float(max(ints, default=1))
    return flops / max(outputs, 1)


def folder_of(file: str) -> Path:
    return Path(file.split("@")[0]).resolve().parent
