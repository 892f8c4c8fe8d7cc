"""The inputs a caller of the Python API gives a Lift program (the interpreter, a
generated kernel): each converted to the dtype the program reads, or refused with a
message naming the input, when the conversion would change its values or its shape
is not the one the program declares."""

from __future__ import annotations

import numpy as np

from mcl.diagnostics import McplError, error
from mcl.masked_arrays import refuse_masked


def _refuse(message: str, hint: str | None = None):
    raise McplError(error("lift-run", message, hint=hint))


def count_inputs(owner: str, names: list[str], inputs) -> None:
    """Refuse a number of inputs other than the program's (``names``)."""
    if len(inputs) != len(names):
        _refuse(f"'{owner}' takes {len(names)} input(s) ({', '.join(names)}), "
                f"{len(inputs)} given")


def checked_input(name: str, value, dtype, rank: int | None, what: str,
                  shape: tuple[int, ...] | None = None) -> np.ndarray:
    """``value`` as an array of ``dtype``; ``rank``: its number of axes (0 for a scalar,
    None: any); ``shape``: its shape, where known (a generated kernel's, at its sizes);
    ``what`` says what the program expects (e.g. its type ``float[N]``).

    A conversion numpy calls 'same_kind' is made (float64 to float32, int to float);
    one that would lose the kind of the values (complex to float, float to int) or
    that numpy cannot make (text, None) is refused, and so is one that would change
    values beyond rounding (an int outside the range of the program's, a finite
    float64 that is infinite as a float32). A scalar is a number or an array of no
    axes; an array of the right number of elements in another shape (8 elements as
    4 x 2 for a float[8]) is refused, not read in its memory order. A numpy masked
    array (or scalar) is refused: the program has no mask."""
    want = np.dtype(dtype)
    # before np.asarray, which drops the mask: the program would read masked-out elements
    refuse_masked(value, "lift-run", f"input '{name}'", "the program", name)
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
    if rank is not None and arr.ndim != rank:
        given = "a scalar" if arr.ndim == 0 else f"an array of shape {arr.shape}"
        axes = "a scalar" if rank == 0 else f"{rank} ax{'is' if rank == 1 else 'es'}"
        _refuse(f"input '{name}' should be {what} ({axes}), given {given}",
                hint="give a Python number or an array of no axes (x.reshape(()) of an "
                     "array of one element)" if rank == 0 else None)
    if shape is not None and arr.shape != tuple(shape):
        given = "a scalar" if arr.ndim == 0 else f"an array of shape {arr.shape}"
        same = arr.size == int(np.prod(shape, dtype=np.int64))
        _refuse(f"input '{name}' should be an array of shape {tuple(shape)} ({what}), "
                f"given {given}" + (f" (the same {arr.size} elements in another shape)"
                                    if same and arr.ndim else ""),
                hint=f"reshape it yourself if its elements are in the order the program "
                     f"reads them: x.reshape({tuple(shape)})" if same and arr.ndim else None)
    _refuse_changed_values(name, arr, want, what)
    return np.asarray(arr, dtype=want, order="C")     # (ascontiguousarray makes a scalar 1-d)


def _refuse_changed_values(name: str, arr: np.ndarray, want: np.dtype, what: str) -> None:
    """Refuse a 'same_kind' conversion that changes values beyond rounding."""
    if not arr.size or arr.dtype == want:
        return
    if want.kind in "iu" and arr.dtype.kind in "iu":
        info = np.iinfo(want)
        low, high = arr.min(), arr.max()
        if low < info.min or high > info.max:
            bad = low if low < info.min else high
            _refuse(f"input '{name}' holds {bad}, outside the range of {want} that the "
                    f"program reads ({what}: {info.min} to {info.max}); converting would "
                    "change it", hint="give values the program's type holds")
    elif want.kind == "f" and arr.dtype.kind == "f" and arr.dtype.itemsize > want.itemsize:
        with np.errstate(over="ignore"):
            overflows = np.isinf(arr.astype(want)) & np.isfinite(arr)
        if overflows.any():
            bad = arr[overflows].flat[0]
            _refuse(f"input '{name}' holds {bad}, which is infinite as the {want} the "
                    f"program reads ({what}); converting would change it",
                    hint=f"give values within the range of {want} (±{np.finfo(want).max:.3g})")


