"""Errors a user of mcl.skel can cause, as McplError with a stable code."""

from __future__ import annotations

from mcl.diagnostics import McplError, error


def skel_error(code: str, message: str, hint: str | None = None) -> McplError:
    """An McplError with code ``skel-<code>``."""
    return McplError(error(f"skel-{code}", message, hint=hint))


def cl_failure(what: str, exc: Exception, device: str) -> McplError:
    """An OpenCL error while ``what`` on ``device``: running out of device memory is
    the one a user causes (containers too large); anything else is reported as is."""
    text = str(exc)
    if any(k in text for k in ("MEM_OBJECT_ALLOCATION_FAILURE", "OUT_OF_RESOURCES",
                               "OUT_OF_HOST_MEMORY", "INVALID_BUFFER_SIZE")):
        return skel_error("out-of-memory", f"{device} ran out of memory while {what} ({text})",
                          hint="use smaller containers or distribute them over more devices "
                               "(block distribution)")
    return skel_error("opencl-error", f"OpenCL failed while {what} on {device}: {text}")
