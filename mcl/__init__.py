"""Many-Core Levels: a compiler for stepwise refinement of many-core kernels.

The public Python API is re-exported here lazily so that ``import mcl`` stays cheap:

* ``mcl.load_hardware(name)``   a hardware description of the library or a search path
* ``mcl.parse(text)`` / ``mcl.check(path)``   an MCPL module, parsed / resolved and checked
* ``mcl.feedback(module, ...)`` performance feedback as diagnostics
* ``mcl.translate(module, to=...)``   the module one or more levels down
* ``mcl.compile(path, target=...)``   a callable OpenCL kernel
* ``mcl.McplError``   what they raise for bad input (its ``diagnostics`` say where and why)
"""

from __future__ import annotations

import importlib
import sys
import types

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
    "McplError": "mcl.diagnostics:McplError",
}

__all__ = list(_API)


def __getattr__(name: str):
    target = _API.get(name)
    if target is None:
        raise AttributeError(f"module 'mcl' has no attribute {name!r}")
    module, attr = target.split(":")
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value
    return value


def __dir__():
    return sorted(list(globals()) + list(_API))


class _Package(types.ModuleType):
    """The ``mcl`` module. Importing a submodule binds it as an attribute of its
    package; the subpackage ``mcl.translate`` would thereby replace the function
    ``mcl.translate``. An API name is never rebound to a module: the submodule
    stays reachable through the import system (``import mcl.translate``,
    ``from mcl.translate import ...``), the name stays the API's."""

    def __setattr__(self, name: str, value) -> None:
        if name in _API and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
