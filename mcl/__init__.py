"""Many-Core Levels: a compiler for stepwise refinement of many-core kernels.

The public Python API is re-exported here lazily so that ``import mcl`` stays cheap:

* ``mcl.load_hardware(name)``   a hardware description of the library or a search path
* ``mcl.parse(path)`` / ``mcl.check(path)``   an MCPL module, resolved and checked
* ``mcl.feedback(module, ...)`` performance feedback as diagnostics
* ``mcl.translate(module, to=...)``   the module one or more levels down
* ``mcl.compile(path, target=...)``   a callable OpenCL kernel
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

#: public name -> "module:attribute"; components add their entry when they land.
_API = {
    "load_hardware": "mcl.hdl:load_hardware",
    "HardwareLibrary": "mcl.hdl:HardwareLibrary",
    "parse": "mcl.mcpl:parse",
    "check": "mcl.mcpl:check",
    "feedback": "mcl.analyses:feedback",
    "translate": "mcl.translate:translate",
    "compile": "mcl.opencl:compile",
}


def __getattr__(name: str):
    target = _API.get(name)
    if target is None:
        raise AttributeError(f"module 'mcl' has no attribute {name!r}")
    module, attr = target.split(":")
    return getattr(importlib.import_module(module), attr)


def __dir__():
    return sorted(list(globals()) + list(_API))
