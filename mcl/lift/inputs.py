"""The inputs a caller of the Python API gives a Lift program (the interpreter, a
generated kernel): each converted to the dtype the program reads, or refused with a
message naming the input, when the conversion would change its values or its shape
does not fit."""

from __future__ import annotations

import numpy as np

from mcl.diagnostics import McplError, error


def _refuse(message: str, hint: str | None = None):
    raise McplError(error("lift-run", message, hint=hint))


def count_inputs(owner: str, names: list[str], inputs) -> None:
    """Refuse a number of inputs other than the program's (``names``)."""
    if len(inputs) != len(names):
        _refuse(f"'{owner}' takes {len(names)} input(s) ({', '.join(names)}), "
                f"{len(inputs)} given")


def checked_input(name: str, value, dtype, rank: int | None, what: str) -> np.ndarray:
    """``value`` as an array of ``dtype``; ``rank``: its number of axes (0 for a scalar,
    None: any); ``what`` says what the program expects (e.g. its type ``float[N]``).

    A conversion numpy calls 'same_kind' is made (float64 to float32, int to float);
    one that would lose the kind of the values (complex to float, float to int) or
    that numpy cannot make (text, None) is refused."""
    want = np.dtype(dtype)
    try:
        arr = np.asarray(value)
    except (ValueError, TypeError) as e:
        _refuse(f"input '{name}' is not an array of numbers ({e})")
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number)
                                   or arr.dtype == np.bool_):
        given = "None" if value is None else f"{type(value).__name__} of {arr.dtype}"
        _refuse(f"input '{name}' should be {what}, given {given}",
                hint="give a numpy array (or a Python number for a scalar)")
    if not np.can_cast(arr.dtype, want, casting="same_kind"):
        _refuse(f"input '{name}' holds {arr.dtype} values; the program reads {want} "
                f"({what}), and converting would change them",
                hint=f"convert it yourself if that is meant: x.astype(np.{want.name})")
    if rank is not None and arr.ndim != rank and not (rank == 0 and arr.size == 1):
        shape = "a scalar" if arr.ndim == 0 else f"an array of shape {arr.shape}"
        axes = "a scalar" if rank == 0 else f"{rank} ax{'is' if rank == 1 else 'es'}"
        _refuse(f"input '{name}' should be {what} ({axes}), given {shape}")
    return np.asarray(arr, dtype=want, order="C")     # (ascontiguousarray makes a scalar 1-d)


def checked_sizes(sizes: dict) -> dict:
    """``sizes`` (name -> value of a size symbol) with each value a positive int; a
    value that is not (a string, a float, 0) is refused, naming the size."""
    import numbers
    out = {}
    for name, value in sizes.items():
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
            raise McplError(error("lift-size", f"size {name} = {value!r}: a size is a "
                                               "positive integer"))
        out[name] = int(value)
    return out
