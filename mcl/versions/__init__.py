"""Refinement history and cross-level verification of the versions of one kernel.

Public API::

    versions(path, sizes="small", seed=0, device=None, ...) -> Result
        the versions (a folder, a file's git history, or a list of files), the
        refinement tree, per step the feedback diff and code diff, the verification of
        every version against reference.py or the highest-level version on the OpenCL
        device, and the roofline (and, on a GPU, measured time) of each version
    write_report(result, folder) -> [paths]    index.html (self-contained) and report.md
    previous_version(file) -> (Version, Step) | None   for "compare with the previous version"
"""

from __future__ import annotations

from mcl.versions.api import Result, versions
from mcl.versions.report import write_report
from mcl.versions.steps import previous_version

__all__ = ["Result", "previous_version", "versions", "write_report"]
