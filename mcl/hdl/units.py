"""Quantities of hardware descriptions: numbers with units, normalised to bytes,
bytes/s, cycles, Hz or seconds, and the symbolic sizes ``unlimited`` and ``countable``.

Prefixes are powers of 1024 for a size in bytes or bits (``48 kB`` = 49152 B) and
powers of 1000 otherwise, rates included (``177 GB/s`` = 177e9 B/s, as vendors
count bandwidth)."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Symbolic(enum.Enum):
    """A size that is not a number: ``unlimited`` (no bound at all) or ``countable``
    (finite, but not known when the description is written)."""

    UNLIMITED = "unlimited"
    COUNTABLE = "countable"

    def __str__(self) -> str:
        return self.value


UNLIMITED = Symbolic.UNLIMITED
COUNTABLE = Symbolic.COUNTABLE

#: A count of units or slots: an int or a symbolic size.
Count = int | Symbolic
#: The value of a property after normalisation.
Value = int | float | bool | str | Symbolic


def count_key(c: Count) -> tuple[int, float]:
    """Order counts: every number < countable < unlimited (paper, appendix A.2)."""
    if c is UNLIMITED:
        return (2, 0.0)
    if c is COUNTABLE:
        return (1, 0.0)
    return (0, float(c))


def count_product(counts) -> Count:
    """The product of counts; unlimited absorbs, then countable."""
    result: Count = 1
    for c in counts:
        if c is UNLIMITED or result is UNLIMITED:
            result = UNLIMITED
        elif c is COUNTABLE or result is COUNTABLE:
            result = COUNTABLE
        else:
            result = result * c
    return result


def is_number(v: object) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


#: dimension names of normalised quantities
BYTES, BYTES_PER_S, CYCLES, HZ, SECONDS, NUMBER = "B", "B/s", "cycles", "Hz", "s", ""

_BASES = {"B": ("B", 1), "bit": ("B", 1 / 8), "bits": ("B", 1 / 8),
          "cycle": ("cycles", 1), "cycles": ("cycles", 1), "s": ("s", 1), "Hz": ("Hz", 1)}
_PREFIXES = {"k": 1, "M": 2, "G": 3, "T": 4}

KNOWN_UNITS = ("B", "kB", "MB", "GB", "TB", "bit", "bits", "kbit", "Mbit", "Gbit",
               "cycle", "cycles", "s", "Hz", "kHz", "MHz", "GHz",
               "B/s", "kB/s", "MB/s", "GB/s", "TB/s", "bit/s", "Gbit/s", "B/cycle")


@dataclass(frozen=True)
class Unit:
    """A parsed unit: ``dimension`` of the normalised value and the factor to get there."""

    dimension: str
    factor: float
    per: str | None  # the denominator dimension, e.g. "s" for bandwidth


def _base(text: str, rate: bool) -> tuple[str, float] | None:
    if text in _BASES:
        return _BASES[text]
    if len(text) > 1 and text[0] in _PREFIXES and text[1:] in _BASES:
        dim, f = _BASES[text[1:]]
        power = _PREFIXES[text[0]]
        scale = 1024 ** power if (dim == "B" and not rate) else 1000 ** power
        return dim, f * scale
    return None


def parse_unit(text: str) -> Unit | None:
    """``'kB'`` -> Unit('B', 1024, None); ``'GB/s'`` -> Unit('B', 1e9, 's'); None if unknown."""
    text = text.replace(" ", "")
    num, _, den = text.partition("/")
    if not num:
        return None
    rate = bool(den)
    n = _base(num, rate)
    if n is None:
        return None
    if not den:
        return Unit(n[0], n[1], None)
    d = _base(den, True)
    if d is None or d[0] == n[0]:
        return None
    return Unit(n[0], n[1] / d[1], d[0])


def dimension_of(unit: Unit | None) -> str:
    if unit is None:
        return NUMBER
    return unit.dimension if unit.per is None else f"{unit.dimension}/{unit.per}"


def normalise(value: float, unit: Unit | None) -> int | float:
    """Apply the unit's factor; keep ints where the result is integral."""
    if unit is None:
        return value
    result = value * unit.factor
    if isinstance(result, float) and result.is_integer() and abs(result) < 2 ** 62:
        return int(result)
    return result


def format_quantity(value: Value | None, dimension: str) -> str:
    """A readable rendering for ``mcl hwd show``: 49152 B -> '48 kB', 1.4e9 Hz -> '1.4 GHz'."""
    if value is None:
        return "-"
    if isinstance(value, Symbolic | bool | str):
        return str(value).lower() if isinstance(value, bool) else str(value)
    if dimension == BYTES:
        return _scaled(value, 1024, ("B", "kB", "MB", "GB", "TB"))
    if dimension == BYTES_PER_S:
        return _scaled(value, 1000, ("B/s", "kB/s", "MB/s", "GB/s", "TB/s"))
    if dimension == HZ:
        return _scaled(value, 1000, ("Hz", "kHz", "MHz", "GHz", "THz"))
    if dimension == CYCLES:
        return f"{_num(value)} cycle" + ("" if value == 1 else "s")
    if dimension == "flop/s":
        return _scaled(value, 1000, ("flop/s", "kflop/s", "Mflop/s", "GFLOP/s", "TFLOP/s"))
    return _num(value) + (f" {dimension}" if dimension else "")


def _scaled(value: float, base: int, names: tuple[str, ...]) -> str:
    i = 0
    v = float(value)
    while abs(v) >= base and i < len(names) - 1:
        v /= base
        i += 1
    return f"{_num(v)} {names[i]}"


def _num(v: float) -> str:
    if float(v).is_integer():
        return str(int(v))
    return f"{v:.3g}" if abs(v) < 100 else f"{v:.1f}"
