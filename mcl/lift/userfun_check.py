"""What the OpenCL compiler would reject in a user function, found when the program is
read rather than as a build error of every candidate of a search: names C reserves,
builtins called with the wrong number or kind of arguments (OpenCL's ``sqrt`` of an
int, ``abs`` of a float and ``max(x, 0)`` of a float are ambiguous calls), ``%`` of
floats, ``._i`` of a value that is not a tuple, parameters and results no kernel can
pass."""

from __future__ import annotations

import re
from dataclasses import dataclass

from mcl.lift import cexpr as C
from mcl.lift.types import ArrayType, ScalarType, TupleType, Type, VectorType

#: Words of OpenCL C a function or parameter may not be named.
RESERVED = frozenset("""
    auto break case char const constant continue default do double else enum extern float
    for global goto half if image1d_t image2d_t image3d_t inline int kernel local long
    private read_only read_write register restrict return sampler_t short signed sizeof
    static struct switch typedef uchar uint ulong union unsigned ushort void volatile
    while write_only bool size_t ptrdiff_t intptr_t uintptr_t event_t true false
    __global __local __constant __private __kernel
    """.split())

#: Functions of OpenCL C (math, common, geometric, relational, integer, work-item,
#: synchronisation): a user function of that name conflicts with the builtin where
#: their signatures meet (``dot(float, float)``).
OPENCL_FUNCTIONS = frozenset("""
    acos acosh acospi asin asinh asinpi atan atan2 atanh atanpi atan2pi cbrt ceil copysign
    cos cosh cospi erfc erf exp exp2 exp10 expm1 fabs fdim floor fma fmax fmin fmod fract
    frexp hypot ilogb ldexp lgamma log log2 log10 log1p logb mad maxmag minmag modf nan
    nextafter pow pown powr remainder remquo rint rootn round rsqrt sin sincos sinh sinpi
    sqrt tan tanh tanpi tgamma trunc abs abs_diff add_sat hadd rhadd clamp clz mad_hi
    mad_sat max min mul_hi rotate sub_sat upsample popcount mad24 mul24 degrees mix
    radians step smoothstep sign cross dot distance length normalize fast_distance
    fast_length fast_normalize isequal isnotequal isgreater isgreaterequal isless
    islessequal islessgreater isfinite isinf isnan isnormal isordered isunordered signbit
    any all bitselect select get_work_dim get_global_size get_global_id get_local_size
    get_local_id get_num_groups get_group_id get_global_offset barrier mem_fence
    read_mem_fence write_mem_fence printf async_work_group_copy wait_group_events
    prefetch vload2 vload4 vload8 vload16 vstore2 vstore4 vstore8 vstore16
    """.split())

#: Names the generator gives kernels, buffers and variables (``kernel_0``, ``out``,
#: ``g_1``, ``tmp_3``): a user function of such a name would be hidden or redefined.
GENERATED_NAME = re.compile(r"out|[A-Za-z]+_\d+")

#: Arguments of the builtins a body may call: 'float' (OpenCL's math functions take
#: floats: with int arguments only, the call is ambiguous), 'int' (abs), 'same' (max,
#: min: the arguments of one kind).
BUILTIN_ARGS = {"fabs": (1, "float"), "sqrt": (1, "float"), "exp": (1, "float"),
                "log": (1, "float"), "sin": (1, "float"), "cos": (1, "float"),
                "tanh": (1, "float"), "floor": (1, "float"), "ceil": (1, "float"),
                "fmax": (2, "float"), "fmin": (2, "float"), "pow": (2, "float"),
                "fmod": (2, "float"), "mad": (3, "float"), "fma": (3, "float"),
                "abs": (1, "int"), "max": (2, "same"), "min": (2, "same")}


@dataclass(frozen=True)
class Problem:
    """One thing OpenCL would reject; ``anchor`` locates it in the parse tree: (textX
    class, attribute, value), e.g. ("CCallRef", "name", "sqrt"); None: the function."""

    message: str
    hint: str | None = None
    anchor: tuple[str, str, str] | None = None


class _Found(Exception):
    def __init__(self, problem: Problem):
        self.problem = problem


def _kind(t: Type) -> str | Type:
    """'float' or 'int' for a scalar or vector (bool is an int in C); a tuple as it is."""
    if isinstance(t, VectorType):
        t = t.scalar
    if isinstance(t, ScalarType):
        return "float" if t.name in ("float", "double") else "int"
    return t


def _name_of(e: C.CExpr) -> str:
    return C.to_source(e)


def check_userfun(name: str, params: tuple[tuple[str, Type], ...], ret: Type,
                  body: C.CExpr, patterns: set[str]) -> Problem | None:
    """The first problem of user function ``name``, or None. ``patterns``: the names of
    Lift's patterns, which a user function may not take."""
    fun = f"user function '{name}'"
    if name in RESERVED or name in OPENCL_FUNCTIONS or name in C.BUILTINS or name in patterns \
            or GENERATED_NAME.fullmatch(name):
        what = "a word of OpenCL C" if name in RESERVED else \
            "a function of OpenCL C" if name in OPENCL_FUNCTIONS | set(C.BUILTINS) else \
            "a Lift pattern" if name in patterns else \
            "a name the generator gives kernels, buffers or variables"
        return Problem(f"{fun}: '{name}' is {what}", hint=f"name it otherwise, e.g. my_{name}")
    seen: set[str] = set()
    for p, t in params:
        anchor = ("TypedParam", "name", p)
        if p in RESERVED:
            return Problem(f"{fun}: parameter '{p}' is a word of OpenCL C",
                           hint=f"name it otherwise, e.g. {p}_", anchor=anchor)
        if p in seen:
            return Problem(f"{fun}: two parameters are named '{p}'", anchor=anchor)
        seen.add(p)
        if isinstance(t, ArrayType):
            return Problem(f"{fun}: parameter '{p}' has type {t}; a user function takes "
                           "scalars, vectors and tuples of them",
                           hint="map or reduce over the array with patterns around the call",
                           anchor=anchor)
    if not isinstance(ret, ScalarType | VectorType):
        return Problem(f"{fun} returns {ret}; a user function returns a scalar or a vector",
                       hint="return each component from a function of its own, and zip "
                            "their results")
    try:
        _type(body, dict(params))
    except _Found as f:
        return f.problem
    return None


def _type(e: C.CExpr, env: dict[str, Type]) -> str | Type:
    """'float', 'int' or a tuple type: the kind of ``e``'s value."""
    if isinstance(e, C.CNum):
        return "float" if e.is_float else "int"
    if isinstance(e, C.CVar):
        return _kind(env[e.name])
    if isinstance(e, C.CField):
        base = _type(e.base, env)
        if not isinstance(base, TupleType):
            raise _Found(Problem(f"{_name_of(e)}: '{_name_of(e.base)}' is a {base}, not a "
                                 "tuple", anchor=_var_anchor(e.base)))
        if e.index >= len(base.elems):
            raise _Found(Problem(f"{_name_of(e)}: '{_name_of(e.base)}' has "
                                 f"{len(base.elems)} components (._0 to "
                                 f"._{len(base.elems) - 1})", anchor=_var_anchor(e.base)))
        return _kind(base.elems[e.index])
    kinds = [_type(x, env) for x in C.subexpressions(e)]
    for x, k in zip(C.subexpressions(e), kinds, strict=True):
        if isinstance(k, TupleType):
            raise _Found(Problem(f"'{_name_of(x)}' is a tuple {k}: take a component "
                                 f"({_name_of(x)}._0)", anchor=_var_anchor(x)))
    if isinstance(e, C.CUnary):
        return "int" if e.op == "!" else kinds[0]
    if isinstance(e, C.CBinary):
        if e.op == "%" and "float" in kinds:
            raise _Found(Problem("'%' takes integers in OpenCL C, not floats",
                                 hint=f"for floats: fmod({_name_of(e.left)}, "
                                      f"{_name_of(e.right)})", anchor=("CMulRest", "op", "%")))
        if e.op in ("+", "-", "*", "/", "%"):
            return "float" if "float" in kinds else "int"
        return "int"
    if isinstance(e, C.CTernary):
        return "float" if "float" in kinds[1:] else "int"
    if isinstance(e, C.CCall):
        return _call(e, kinds)
    raise TypeError(e)


def _call(e: C.CCall, kinds: list) -> str:
    count, takes = BUILTIN_ARGS[e.name]
    anchor = ("CCallRef", "name", e.name)
    if len(e.args) != count:
        raise _Found(Problem(f"{e.name} takes {count} argument(s), {len(e.args)} given",
                             anchor=anchor))
    if takes == "float" and "float" not in kinds:
        raise _Found(Problem(f"{e.name} of an int is ambiguous in OpenCL C: it takes floats",
                             hint=f"make an argument a float, e.g. {e.name}("
                                  + ", ".join(f"{_name_of(a)} * 1.0f" for a in e.args) + ")",
                             anchor=anchor))
    if takes == "int" and "float" in kinds:
        raise _Found(Problem("abs takes integers in OpenCL C, not floats",
                             hint=f"for floats: fabs({_name_of(e.args[0])})", anchor=anchor))
    if takes == "same" and len(set(kinds)) > 1:
        f = "fmax" if e.name == "max" else "fmin"
        raise _Found(Problem(f"{e.name} of a float and an int is ambiguous in OpenCL C",
                             hint=f"write the int as a float (0.0f for 0), or call {f}",
                             anchor=anchor))
    return "int" if takes == "int" else ("float" if "float" in kinds else "int")


def _var_anchor(e: C.CExpr):
    while isinstance(e, C.CField):
        e = e.base
    return ("CVarRef", "name", e.name) if isinstance(e, C.CVar) else None


def literal_problem(text: str) -> Problem | None:
    """What C would read otherwise than written in an integer literal: a leading 0 (an
    octal number in C) or a value beyond a 32-bit int."""
    digits = text.lstrip("-")
    if not C.CNum(digits).is_float and digits.isdigit():
        if len(digits) > 1 and digits.startswith("0"):
            return Problem(f"'{text}' is an octal number in C ({int(digits, 8)})"
                           if set(digits) <= set("01234567") else
                           f"'{text}' is not a number in C (a leading 0 makes it octal)",
                           hint=f"write {int(digits)}" + (
                               f" (or {int(digits, 8)}, its value in C)"
                               if set(digits) <= set("01234567") else ""))
        value = -int(digits) if text.startswith("-") else int(digits)
        if not -2**31 <= value < 2**31:
            return Problem(f"'{text}' does not fit in an int (32 bits, up to {2**31 - 1})",
                           hint="write it as a float (e.g. 1e10f)")
    return None
