"""Small constant arrays passed by value.

A kernel built with its sizes as compile-time constants (``generate(specialize=True)``,
as ``mcl run`` builds a version written for its sizes) knows how large each of its
array parameters is. One in constant memory that is small (a 9 x 9 filter) is passed
by value, as a struct of its elements: the arguments of a kernel live in a bank of
constant memory that the arithmetic reads as an operand, so an unrolled loop over the
filter needs no load instruction at all, where a ``__constant`` pointer costs one
load per element and work-item (convolution hopper_v4 on the H100: 81 loads fewer
per work-item, 58% -> 60% of the roofline bound; benchmarks/opencl/conv_param_filter.py).

The analyses ask the same question (:func:`passed_by_value`): such an array's reads
are no loads of memory.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping

from mcl.mcpl import ast

#: the bytes of arguments every OpenCL device accepts (CL_DEVICE_MAX_PARAMETER_SIZE
#: is at least 1024); arrays passed by value share them with the other arguments
PARAMETER_BYTES = 1024
#: bytes an argument that is not passed by value takes at most (a pointer, a long)
_OTHER_BYTES = 8
_ELEMENT_BYTES = {"float": 4, "int": 4, "double": 8, "long": 8, "bool": 1, "byte": 1}


def built_in_sizes(f: ast.Function) -> dict[str, int]:
    """The const integer parameters of ``f`` with a literal default: the sizes a
    specialised build takes as compile-time constants, at their defaults."""
    out = {}
    for p in f.params:
        if p.const and not p.type.is_array and p.type.name in ("int", "long") \
                and isinstance(p.default, ast.Literal) and isinstance(p.default.value, int):
            out[p.name] = p.default.value
    return out


def _value(e: ast.Expr, sizes: Mapping[str, int]) -> int | None:
    if isinstance(e, ast.Literal):
        return e.value if isinstance(e.value, int) and not isinstance(e.value, bool) else None
    if isinstance(e, ast.Name):
        return sizes.get(e.id)
    if isinstance(e, ast.Binary) and e.op in ("+", "-", "*", "/"):
        a, b = _value(e.left, sizes), _value(e.right, sizes)
        if a is None or b is None or (e.op == "/" and b == 0):
            return None
        return {"+": a + b, "-": a - b, "*": a * b, "/": int(a / b)}[e.op]
    return None


def _passed_to_calls(f: ast.Function) -> set[str]:
    return {a.id for n in ast.walk(f) if isinstance(n, ast.Call)
            for a in n.args if isinstance(a, ast.Name)}


def by_value_arrays(f: ast.Function, is_constant: Callable[[ast.Param], bool],
                    specialized: bool) -> dict[str, int]:
    """The array parameters of ``f`` passed by value, with their element counts: in a
    specialised build, those ``is_constant`` says are in constant memory, whose sizes
    are known, that no function call takes, and that fit, with the other arguments,
    in :data:`PARAMETER_BYTES` (the smallest first)."""
    if not specialized:
        return {}
    sizes = built_in_sizes(f)
    called = _passed_to_calls(f)
    candidates = []
    for p in f.params:
        if not p.type.is_array or p.name in called or not is_constant(p) \
                or p.type.name not in _ELEMENT_BYTES:
            continue
        n = 1
        for e in p.type.sizes:
            v = _value(e, sizes)
            n = n * v if v is not None and v > 0 else 0
        if n:
            candidates.append((n * _ELEMENT_BYTES[p.type.name], p.name, n))
    chosen: dict[str, int] = {}
    others = len([p for p in f.params if p.name not in sizes])   # the kernel's arguments
    room = PARAMETER_BYTES
    for nbytes, name, n in sorted(candidates):
        if nbytes + _OTHER_BYTES * (others - 1) <= room:
            chosen[name] = n
            room -= nbytes
            others -= 1
    return chosen


@functools.cache
def _target(level: str):
    from mcl.diagnostics import McplError
    from mcl.opencl.target import load_target
    try:
        return load_target(level)
    except McplError:       # a level without an OpenCL target: nothing is generated
        return None


def passed_by_value(f: ast.Function, hardware, specialized: bool) -> set[str]:
    """The array parameters of ``f`` that the generator for ``hardware`` (a leaf with
    an OpenCL target) passes by value in a build that is ``specialized``: their reads
    are operands, not loads of memory (what the analyses need)."""
    if not specialized or hardware is None:
        return set()
    target = _target(hardware.name)
    if target is None:
        return set()

    def is_constant(p: ast.Param) -> bool:
        space = p.space
        if space is None:
            ms = hardware.default_memory_space([])
            space = ms.name if ms is not None else None
        return space in target.spaces and target.qualifier(space) == "__constant"
    return set(by_value_arrays(f, is_constant, True))
