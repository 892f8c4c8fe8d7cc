"""The one refusal of numpy masked arrays that every Python API of the package shares
(a compiled kernel's arguments, a Lift program's inputs, mcl.skel's containers): a
kernel reads an array's data and has no mask, and numpy's conversions
(``np.asarray``, ``np.ascontiguousarray``, ``np.array``) drop the mask silently."""

from __future__ import annotations

import numpy as np

from mcl.diagnostics import McplError, error


def refuse_masked(value, code: str, subject: str, reader: str, name: str) -> None:
    """An McplError (``code``) where ``value`` is a numpy masked array or masked scalar
    (``np.ma.masked_array(4, mask=True)``, ``np.ma.masked``); nothing otherwise.
    Refused whether or not an element is masked: which data the caller means is theirs
    to say.

    ``subject`` names the value at the start of the message (``'a' of 'vector_add'``),
    ``reader`` what would read it (``the kernel``), ``name`` the value in the hint's
    code (``a.filled(value)``)."""
    if not isinstance(value, np.ma.MaskedArray):
        return
    if np.ndim(value) == 0:
        what, reads, plain = "scalar", "its value, masked or not,", "value"
    else:
        what, reads, plain = "array", "every element of its data, the masked-out ones too,", \
            "array"
    raise McplError(error(
        code, f"{subject} is a numpy masked {what}: {reader} reads {reads} and has no mask",
        hint=f"pass the data you mean as a plain {plain}: {name}.filled(value) (the masked "
             f"elements replaced by value) or np.asarray({name}.data) (the data as it is, "
             "masked elements included)"))
