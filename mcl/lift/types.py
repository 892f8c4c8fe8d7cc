"""Types of Lift values: scalars, OpenCL vectors, tuples and arrays whose sizes are
sympy expressions (``split 4 : T[n] -> T[n/4][4]``)."""

from __future__ import annotations

from dataclasses import dataclass

import sympy

#: Scalar type names and their C spelling and numpy dtype. OpenCL has no bool in
#: buffers: a bool is an int (0 or 1) in kernels, and so in numpy, whose 1-byte bool
#: would give the kernel's 4-byte writes a buffer a quarter of their size.
SCALARS = {"float": ("float", "float32"), "int": ("int", "int32"),
           "double": ("double", "float64"), "bool": ("int", "int32")}


class Type:
    """Base of all Lift types."""

    def c_name(self) -> str:
        raise TypeError(f"type {self} has no C spelling")


@dataclass(frozen=True)
class ScalarType(Type):
    name: str

    def __str__(self) -> str:
        return self.name

    def c_name(self) -> str:
        return SCALARS[self.name][0]

    @property
    def dtype(self) -> str:
        return SCALARS[self.name][1]


@dataclass(frozen=True)
class VectorType(Type):
    scalar: ScalarType
    width: int

    def __str__(self) -> str:
        return f"{self.scalar}{self.width}"

    def c_name(self) -> str:
        return f"{self.scalar.c_name()}{self.width}"


@dataclass(frozen=True)
class TupleType(Type):
    elems: tuple[Type, ...]

    def __str__(self) -> str:
        return "(" + ", ".join(str(e) for e in self.elems) + ")"


@dataclass(frozen=True)
class ArrayType(Type):
    elem: Type
    size: sympy.Expr

    def __str__(self) -> str:
        dims, t = [], self
        while isinstance(t, ArrayType):
            dims.append(t.size)
            t = t.elem
        return str(t) + "".join(f"[{size_str(d)}]" for d in dims)


FLOAT = ScalarType("float")
INT = ScalarType("int")
DOUBLE = ScalarType("double")
BOOL = ScalarType("bool")


def size_str(e) -> str:
    """A size as the textual syntax writes it (``N/4``, ``2*N``)."""
    e = sympy.sympify(e)
    return str(e).replace(" ", "").replace("**", "^")


def array(elem: Type, *sizes) -> Type:
    """``array(FLOAT, n, m)`` is ``float[n][m]``: n arrays of m elements."""
    t = elem
    for s in reversed(sizes):
        t = ArrayType(t, sympy.sympify(s))
    return t


def scalar_of(t: Type) -> ScalarType:
    """The scalar at the bottom of a (possibly nested, vector or array) type."""
    while True:
        if isinstance(t, ScalarType):
            return t
        if isinstance(t, VectorType):
            return t.scalar
        if isinstance(t, ArrayType):
            t = t.elem
            continue
        raise TypeError(f"{t} has no single scalar type")


def subst(t: Type, values: dict) -> Type:
    """``t`` with the size symbols in ``values`` replaced by numbers."""
    if isinstance(t, ArrayType):
        return ArrayType(subst(t.elem, values), sympy.sympify(t.size).subs(values))
    if isinstance(t, TupleType):
        return TupleType(tuple(subst(e, values) for e in t.elems))
    return t


def free_sizes(t: Type) -> set:
    if isinstance(t, ArrayType):
        return set(sympy.sympify(t.size).free_symbols) | free_sizes(t.elem)
    if isinstance(t, TupleType):
        return set().union(*(free_sizes(e) for e in t.elems)) if t.elems else set()
    return set()


def elem_count(t: Type) -> sympy.Expr:
    """Number of scalars (vectors count as their width) in a value of type ``t``."""
    if isinstance(t, ArrayType):
        return t.size * elem_count(t.elem)
    if isinstance(t, VectorType):
        return sympy.Integer(t.width)
    if isinstance(t, ScalarType):
        return sympy.Integer(1)
    raise TypeError(f"a value of type {t} is not stored as one flat array")


def sizes_equal(a, b) -> bool:
    return sympy.simplify(sympy.sympify(a) - sympy.sympify(b)) == 0


def types_equal(a: Type, b: Type) -> bool:
    """Structural equality with sizes compared symbolically."""
    if isinstance(a, ArrayType) and isinstance(b, ArrayType):
        return sizes_equal(a.size, b.size) and types_equal(a.elem, b.elem)
    if isinstance(a, TupleType) and isinstance(b, TupleType):
        return len(a.elems) == len(b.elems) and all(
            types_equal(x, y) for x, y in zip(a.elems, b.elems, strict=True))
    return a == b


def size_symbol(name: str) -> sympy.Symbol:
    """Sizes are positive integers; sympy then simplifies ``N/4*4`` to ``N``."""
    return sympy.Symbol(name, positive=True, integer=True)
