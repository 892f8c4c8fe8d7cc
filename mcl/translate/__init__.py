"""Translation between levels (paper 004, section 6.1 and appendix A): a kernel
written for one hardware description is rewritten for a description below it, one
edge of the hierarchy at a time, as a starting point for further refinement.

Public API::

    translate(module_or_path, to, *, library=None, search_path=(),
              assume_divisible=False) -> Module
    translate_function(function, to, *, library=None, search_path=(),
                       assume_divisible=False) -> Function

Both return new trees (inputs are never modified) and raise
:class:`mcl.diagnostics.McplError` for bad input. Sizes need not divide the numbers
of units: by default the outermost new loop is rounded up and the body guarded;
``assume_divisible=True`` divides exactly and says so in a comment.
"""

from __future__ import annotations

from mcl.translate.api import translate, translate_function
from mcl.translate.step import translate_step

__all__ = ["translate", "translate_function", "translate_step"]
