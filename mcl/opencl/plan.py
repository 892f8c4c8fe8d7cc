"""The launch plan of a generated kernel: what a host needs besides the source.

Sizes are C expressions in the function's parameters (``(n + 127) / 128``),
so that the Python runtime and the generated C host code evaluate the same
text; :func:`evaluate` gives them C's integer semantics (``/`` truncates).
"""

from __future__ import annotations

import ast as pyast
import functools
import json
import math
from dataclasses import asdict, dataclass, field

import numpy as np

from mcl.diagnostics import McplError, error

#: MCPL element types -> (OpenCL C type, numpy dtype name)
DTYPES = {"float": "float32", "double": "float64", "int": "int32", "long": "int64",
          "bool": "uint8", "byte": "uint8"}


def record_dtype(fields: list[tuple[str, str]]) -> str:
    """The plan's dtype of a record (``type pt { float x; float y; }``): its fields
    and their dtypes (a record's own, nested), as JSON."""
    return json.dumps([[name, json.loads(dt) if dt.startswith("[") else dt]
                       for name, dt in fields], separators=(",", ":"))


@functools.lru_cache(maxsize=256)     # asked for every argument of every launch
def numpy_dtype(dtype: str, argument: str = "") -> np.dtype:
    """The numpy dtype of a plan's ``dtype``: a name (float32), or a record's fields
    (:func:`record_dtype`), laid out as OpenCL C lays out the struct (each field at a
    multiple of its size: numpy's ``align=True``)."""
    if dtype.startswith("["):
        def structured(fields) -> np.dtype:
            return np.dtype([(n, structured(t) if isinstance(t, list) else np.dtype(t))
                             for n, t in fields], align=True)
        return structured(json.loads(dtype))
    try:
        return np.dtype(dtype)
    except TypeError:
        raise McplError(error(
            "opencl-unsupported-element",
            f"'{argument}' holds elements of type '{dtype}', which the Python runtime cannot "
            "lay out (a record with an array field)",
            hint="run the generated OpenCL from your own host code (mcl gen --host c), "
                 "or give the record scalar fields")) from None


def fields_as_numbers(a: np.ndarray) -> np.ndarray:
    """An array of records as numbers to compare: each field (nested ones flattened) a
    position of a last axis; any other array as it is."""
    a = np.asarray(a)
    if not a.dtype.names:
        return a
    parts = [fields_as_numbers(a[name]) for name in a.dtype.names]
    return np.stack([p if p.ndim > a.ndim else p[..., None] for p in parts], axis=-1) \
        .reshape(*a.shape, -1).astype(np.float64)


@dataclass(frozen=True)
class Argument:
    """One kernel argument, in the order ``clSetKernelArg`` takes them.

    ``kind`` is "scalar" (passed by value), "value" (an array passed by value as a
    struct of its elements, mcl.opencl.by_value), "buffer" (an array; ``shape`` lists its
    sizes as expressions, outermost first, tile levels concatenated), "scratch" (per-group
    arrays in global memory, the kernel's own) or "fault" (the record of an index the data
    choose found outside its dimension as the kernel ran: mcl.opencl.index_checks)."""

    name: str
    kind: str
    type: str                   # MCPL element type: float, int, ...
    dtype: str                  # numpy dtype name
    shape: tuple[str, ...] = ()
    space: str | None = None
    qualifier: str | None = None
    read: bool = True
    written: bool = False


@dataclass(frozen=True)
class CompileTimeSize:
    """A parameter the kernel needs at build time (it sizes a local or private array):
    the host passes ``-D MCL_<name>=value``. The prefix matters: a macro named like a
    short parameter (``p``, ``n``) would also rewrite the OpenCL headers, which the
    compiler includes before the kernel source."""

    name: str
    type: str
    default: int | None = None

    @property
    def macro(self) -> str:
        return f"MCL_{self.name}"

    def option(self, value: int) -> str:
        return f"-D{self.macro}={value}"


@dataclass(frozen=True)
class ViewCheck:
    """A view of a kernel parameter whose elements equal the parameter's only at some
    sizes (``a as float[n, p / bk, bk] a3`` needs p a multiple of bk): checked at every
    call, so that other sizes are an error and not a silently wrong result."""

    view: str
    array: str
    line: int
    view_elements: str          # plan expressions of the sizes
    array_elements: str


@dataclass(frozen=True)
class LaunchPlan:
    kernel: str
    source: str                                  # file name of the .cl source
    target: str
    mcpl: str                                    # the MCPL file it came from
    arguments: tuple[Argument, ...]
    compile_time: tuple[CompileTimeSize, ...]
    num_groups: tuple[str, ...]                  # per dimension
    local_size: tuple[str, ...]
    global_size: tuple[str, ...]
    local_memory_bytes: str
    build_options: tuple[str, ...] = ()
    #: MCPL parameter names in declaration order (the Python call's keywords)
    parameters: tuple[str, ...] = ()
    #: the kernel relies on the lock-step execution of a par_group (warp-synchronous code)
    assumes_lockstep: bool = False
    #: extra build options for platforms whose name contains the key (vendor options)
    platform_options: tuple[tuple[str, tuple[str, ...]], ...] = ()
    #: views of parameters that cover them only at some sizes
    view_checks: tuple[ViewCheck, ...] = ()
    #: the array parameters of more than one dimension, whose element offsets the
    #: kernel computes as MCL_OFFSET: int, long where one holds 2^31 elements or more
    #: (:meth:`offset_option`)
    wide_offsets: tuple[str, ...] = ()
    #: generated line -> MCPL line (for build errors); not written to JSON
    line_map: dict[int, int] = field(default_factory=dict, compare=False, repr=False)
    #: the indices the kernel checks as it runs, by the site number its fault record
    #: gives (mcl.opencl.index_checks); not written to JSON
    index_sites: tuple = field(default=(), compare=False, repr=False)

    @property
    def dims(self) -> int:
        return len(self.global_size)

    def options_for(self, platform: str) -> tuple[str, ...]:
        """The build options for a device of ``platform`` (its name)."""
        extra = [o for key, opts in self.platform_options if key.lower() in platform.lower()
                 for o in opts]
        return (*self.build_options, *extra)

    def offset_option(self, env: dict) -> str | None:
        """``-DMCL_OFFSET=long`` where an array of :attr:`wide_offsets` holds 2^31
        elements or more at the sizes ``env`` (its offsets overflow an int), else None:
        the kernel computes them in 32 bits, as fast as before. Sizes ``env`` lacks
        count as small (a build for inspection; a launch has them all)."""
        for name in self.wide_offsets:
            a = self.argument(name)
            try:
                count = math.prod(evaluate(e, env) for e in a.shape) if a else 0
            except McplError:
                continue
            if count >= 2 ** 31:
                return "-DMCL_OFFSET=long"
        return None

    def argument(self, name: str) -> Argument | None:
        for a in self.arguments:
            if a.name == name:
                return a
        return None

    def to_json(self) -> str:
        d = asdict(self)
        d.pop("line_map")
        d.pop("index_sites")
        return json.dumps(d, indent=2) + "\n"

    @staticmethod
    def from_json(text: str) -> LaunchPlan:
        d = json.loads(text)
        d["arguments"] = tuple(Argument(**{**a, "shape": tuple(a["shape"])})
                               for a in d["arguments"])
        d["compile_time"] = tuple(CompileTimeSize(**c) for c in d["compile_time"])
        for k in ("num_groups", "local_size", "global_size", "build_options", "parameters",
                  "wide_offsets"):
            d[k] = tuple(d.get(k, ()))
        d["platform_options"] = tuple((k, tuple(v)) for k, v in d.get("platform_options", ()))
        d["view_checks"] = tuple(ViewCheck(**v) for v in d.get("view_checks", ()))
        return LaunchPlan(**d)


def _c_div(a: int, b: int) -> int:
    if b == 0:
        raise ZeroDivisionError
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


@functools.lru_cache(maxsize=1024)
def _parsed(expr: str) -> pyast.Expression:
    """Plan expressions are evaluated at every launch: parse each text once."""
    return pyast.parse(expr, mode="eval")


def evaluate(expr: str, env: dict[str, int | float]) -> int:
    """The value of a plan expression with C integer semantics; names from ``env``."""
    def ev(n: pyast.AST) -> int | float:
        if isinstance(n, pyast.Expression):
            return ev(n.body)
        if isinstance(n, pyast.Constant) and isinstance(n.value, int | float):
            return n.value
        if isinstance(n, pyast.Name):
            if n.id not in env:
                raise McplError(error("opencl-missing-size", f"the size '{n.id}' is needed "
                                      f"to compute '{expr}' but was not given",
                                      hint=f"pass {n.id}=... when calling the kernel"))
            return env[n.id]
        if isinstance(n, pyast.UnaryOp) and isinstance(n.op, pyast.USub):
            return -ev(n.operand)
        if isinstance(n, pyast.BinOp):
            a, b = ev(n.left), ev(n.right)
            if isinstance(n.op, pyast.Add):
                return a + b
            if isinstance(n.op, pyast.Sub):
                return a - b
            if isinstance(n.op, pyast.Mult):
                return a * b
            if isinstance(n.op, pyast.Div | pyast.FloorDiv):
                if isinstance(a, int) and isinstance(b, int):
                    return _c_div(a, b)
                return a / b
            if isinstance(n.op, pyast.Mod):
                return a - _c_div(a, b) * b
            if isinstance(n.op, pyast.LShift):
                return a << b
            if isinstance(n.op, pyast.RShift):
                return a >> b
        if isinstance(n, pyast.Call) and isinstance(n.func, pyast.Name) \
                and n.func.id in ("min", "max") and len(n.args) == 2:
            args = [ev(a) for a in n.args]
            return min(args) if n.func.id == "min" else max(args)
        raise McplError(error("opencl-bad-plan", f"cannot evaluate '{expr}'"))

    try:
        value = ev(_parsed(expr))
    except SyntaxError as e:
        raise McplError(error("opencl-bad-plan", f"cannot evaluate '{expr}'")) from e
    except ZeroDivisionError as e:
        raise McplError(error("opencl-bad-size", f"'{expr}' divides by zero with "
                              + ", ".join(f"{k}={v}" for k, v in env.items()))) from e
    return int(value)
