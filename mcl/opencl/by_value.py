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
are no loads of memory. Lift's code generator passes a small input it reads through
``toConstant`` the same way (its kernels are always generated for concrete sizes), and
:func:`packed` makes the struct both runtimes hand to the kernel.
"""

from __future__ import annotations

import functools

import numpy as np
import sympy

from mcl.mcpl import ast
from mcl.mcpl.symbolic import to_sympy

#: the bytes of arguments every OpenCL device accepts (CL_DEVICE_MAX_PARAMETER_SIZE
#: is at least 1024); arrays passed by value share them with the other arguments
PARAMETER_BYTES = 1024
#: bytes an argument that is not passed by value takes at most (a pointer, a long)
_OTHER_BYTES = 8
_ELEMENT_BYTES = {"float": 4, "int": 4, "double": 8, "long": 8, "bool": 1, "byte": 1}


def specialised_size(p: ast.Param) -> bool:
    """Whether a specialised build makes ``p`` a compile-time size."""
    return p.const and not p.type.is_array and p.type.name in ("int", "long")


def in_constant_memory(p: ast.Param, target, hardware) -> bool:
    """Whether array parameter ``p`` is a ``__constant`` kernel argument of ``target``
    (its space, or the default memory space of ``hardware``)."""
    space = p.space
    if space is None:
        ms = hardware.default_memory_space([])
        space = ms.name if ms is not None else None
    return space in target.spaces and target.qualifier(space) == "__constant"


def by_value_arrays(f: ast.Function, target, hardware, specialized: bool) -> set[str]:
    """The array parameters of ``f`` passed by value: in a specialised build, those in
    constant memory whose sizes the parameters' defaults give, that no function call
    takes, and that fit, with the other arguments, in :data:`PARAMETER_BYTES` (the
    smallest first)."""
    if not specialized:
        return set()
    defaults = {p.name: p.default for p in f.params
                if specialised_size(p) and p.default is not None}
    called = {a.id for n in ast.walk(f) if isinstance(n, ast.Call)
              for a in n.args if isinstance(a, ast.Name)}
    candidates = []
    for p in f.params:
        if not p.type.is_array or p.name in called or p.type.name not in _ELEMENT_BYTES \
                or not in_constant_memory(p, target, hardware):
            continue
        count = sympy.Integer(1)
        for e in p.type.sizes:
            size = to_sympy(e, lambda n: defaults.get(n.id))
            count = count * size if size is not None else sympy.Integer(0)
        if count.is_Integer and count > 0:
            candidates.append((int(count) * _ELEMENT_BYTES[p.type.name], p.name))
    chosen: set[str] = set()
    others = sum(not specialised_size(p) for p in f.params)     # the kernel's arguments
    taken = 0
    for nbytes, name in sorted(candidates):
        if fits_arguments(nbytes, others - 1, taken):
            chosen.add(name)
            taken += nbytes
            others -= 1
    return chosen


def fits_arguments(nbytes: int, others: int, taken: int = 0) -> bool:
    """Whether an array of ``nbytes`` passed by value fits the bytes of arguments every
    device accepts beside ``others`` arguments passed otherwise (a pointer or a scalar
    each) and the ``taken`` bytes of the arrays already passed by value."""
    return nbytes + _OTHER_BYTES * others + taken <= PARAMETER_BYTES


@functools.cache
def target_of(level: str):
    """The OpenCL target of ``level`` (None: the level has none)."""
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
    target = target_of(hardware.name)
    return by_value_arrays(f, target, hardware, True) if target is not None else set()


def packed(host, dtype) -> np.ndarray:
    """The elements of ``host`` (any shape, row-major) as the struct ``{ T v[n]; }`` a kernel
    takes by value: a zero-dimensional numpy record that pyopencl passes as its bytes."""
    host = np.asarray(host)
    dt = np.dtype(dtype)
    out = np.zeros((), np.dtype([("v", dt, (max(host.size, 1),))]))
    out["v"][:host.size] = host.ravel().astype(dt)
    return out
