"""Index arithmetic for generated kernels: affine forms over loop variables with
known ranges, plus floor division and modulo by constants, simplified with
those ranges. Views (split, join, reorderStride, ...) compose index functions;
this module turns ``((l*c + j) / c)`` back into ``l`` so that the OpenCL the
generator prints indexes memory the way a programmer would."""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Var:
    """A loop or id variable with values in [0, extent)."""

    name: str
    extent: int

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class DivAtom:
    num: Idx
    den: int

    def __str__(self) -> str:
        return f"({_operand(self.num)} / {self.den})"


@dataclass(frozen=True)
class ModAtom:
    num: Idx
    den: int

    def __str__(self) -> str:
        return f"({_operand(self.num)} % {self.den})"


Atom = Var | DivAtom | ModAtom


@dataclass(frozen=True)
class Idx:
    """``const + sum(coeff * atom)`` with integer coefficients."""

    terms: tuple[tuple[Atom, int], ...] = ()
    const: int = 0

    # --------------------------------------------------------------- construction
    @staticmethod
    def of(x) -> Idx:
        if isinstance(x, Idx):
            return x
        if isinstance(x, int):
            return Idx((), x)
        if isinstance(x, Var | DivAtom | ModAtom):
            return Idx(((x, 1),), 0)
        return Idx((), int(x))

    def _norm(self, terms: dict, const: int) -> Idx:
        terms, const = _fold_div_mod(terms, const)
        items = tuple(sorted(((a, c) for a, c in terms.items() if c != 0), key=lambda t: str(t[0])))
        return Idx(items, const)

    def __add__(self, other) -> Idx:
        o = Idx.of(other)
        d = dict(self.terms)
        for a, c in o.terms:
            d[a] = d.get(a, 0) + c
        return self._norm(d, self.const + o.const)

    __radd__ = __add__

    def __mul__(self, k) -> Idx:
        if isinstance(k, Idx):
            if k.terms and self.terms:
                raise ValueError("index expressions must stay affine")
            if not k.terms:
                k = k.const
            else:
                return k * self.const
        k = int(k)
        return self._norm({a: c * k for a, c in self.terms}, self.const * k)

    __rmul__ = __mul__

    # --------------------------------------------------------------- ranges
    def bounds(self) -> tuple[int, int]:
        lo = hi = self.const
        for a, c in self.terms:
            alo, ahi = _atom_bounds(a)
            if c >= 0:
                lo, hi = lo + c * alo, hi + c * ahi
            else:
                lo, hi = lo + c * ahi, hi + c * alo
        return lo, hi

    @property
    def is_const(self) -> bool:
        return not self.terms

    def factor(self) -> int:
        """A number every value of the index is a multiple of (0 for the index 0)."""
        g = self.const
        for a, c in self.terms:
            g = math.gcd(g, c * _atom_factor(a))
        return g

    def multiple_of(self, k: int) -> bool:
        return self.factor() % k == 0

    def _small_const(self, k: int) -> Idx | None:
        """``x`` when ``self = x + c`` with x >= 0 a multiple of some g dividing k and
        0 < c < g: then ``self / k = x / k`` and ``self % k = x % k + c`` (the lanes
        of a vector whose first lane is at x stay in x's block of k)."""
        x = Idx(self.terms, 0)
        if not self.terms or x.bounds()[0] < 0:
            return None
        return x if 0 < self.const < math.gcd(x.factor(), k) else None

    # --------------------------------------------------------------- div / mod
    def __floordiv__(self, k: int) -> Idx:
        k = int(k)
        if k == 1:
            return self
        lo, hi = self.bounds()
        if lo >= 0 and hi < k:
            return Idx.of(0)
        whole: dict = {}
        rest: dict = {}
        for a, c in self.terms:
            if c % k == 0:
                whole[a] = c // k
            else:
                rest[a] = c
        q, r = divmod(self.const, k)
        rest_idx = self._norm(rest, r)
        rlo, rhi = rest_idx.bounds()
        out = self._norm(whole, q)
        if rlo >= 0 and rhi < k:
            return out
        x = rest_idx._small_const(k)
        if x is not None:
            return out + x // k
        if rlo >= 0 and rest_idx.terms and len(rest_idx.terms) == 1 and rest_idx.const == 0:
            atom, c = rest_idx.terms[0]
            if isinstance(atom, DivAtom) and c == 1:
                return out + Idx.of(DivAtom(atom.num, atom.den * k))
        return out + Idx.of(DivAtom(rest_idx, k))

    def __mod__(self, k: int) -> Idx:
        k = int(k)
        if k == 1:
            return Idx.of(0)
        rest = {a: c % k for a, c in self.terms if c % k != 0}
        # keep the coefficients as they were where they were not multiples of k
        rest = {a: c for a, c in self.terms if c % k != 0}
        r = self._norm(rest, self.const % k)
        lo, hi = r.bounds()
        if lo >= 0 and hi < k:
            return r
        x = r._small_const(k)
        if x is not None:
            return x % k + r.const
        if len(r.terms) == 1 and r.const == 0 and r.terms[0][1] == 1:
            atom = r.terms[0][0]
            if isinstance(atom, ModAtom) and atom.den % k == 0:
                return Idx.of(atom.num) % k
        return Idx.of(ModAtom(r, k))

    # --------------------------------------------------------------- printing
    def c(self) -> str:
        parts = []
        for a, c in self.terms:
            s = str(a)
            parts.append(s if c == 1 else f"{c}*{s}")
        if self.const or not parts:
            parts.append(str(self.const))
        return " + ".join(parts).replace("+ -", "- ")

    def __str__(self) -> str:
        return self.c()


def _fold_div_mod(terms: dict, const: int) -> tuple[dict, int]:
    """``c*(x % k) + c*k*(x / k)`` is ``c*x`` for x >= 0: an index that a view split
    and joined again (a vector's position in a row of vectors and the row) is printed
    as the one sum it is."""
    for a, c in list(terms.items()):
        if not (isinstance(a, ModAtom) and c and a in terms):
            continue
        d = DivAtom(a.num, a.den)
        if terms.get(d, 0) != c * a.den or a.num.bounds()[0] < 0:
            continue
        terms = dict(terms)
        del terms[a], terms[d]
        for b, cb in a.num.terms:
            terms[b] = terms.get(b, 0) + c * cb
        const += c * a.num.const
    return terms, const


def _operand(i: Idx) -> str:
    """``i`` as the left operand of ``/`` or ``%``: a sum needs parentheses in C
    (``a + b % k`` is ``a + (b % k)``)."""
    s = i.c()
    return f"({s})" if len(i.terms) + (1 if i.const else 0) > 1 or (
        len(i.terms) == 1 and i.terms[0][1] != 1) else s


def _atom_factor(a: Atom) -> int:
    """A number every value of the atom is a multiple of: ``(4*i) % 8`` is one of 4."""
    return math.gcd(a.num.factor(), a.den) if isinstance(a, ModAtom) else 1


def _atom_bounds(a: Atom) -> tuple[int, int]:
    if isinstance(a, Var):
        return 0, a.extent - 1
    lo, hi = a.num.bounds()
    if isinstance(a, DivAtom):
        return lo // a.den, hi // a.den
    if lo >= 0 and hi < a.den:
        return lo, hi
    return 0, a.den - 1


def var(name: str, extent: int) -> Idx:
    return Idx.of(Var(name, int(extent)))


def const(k: int) -> Idx:
    return Idx.of(int(k))
