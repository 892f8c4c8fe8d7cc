"""The OpenCL back end: code generation for leaf levels (:mod:`.generate`, with the
targets of :mod:`.target` and the launch plans of :mod:`.plan`; unrolled loops and
128-bit accesses from :mod:`.vectorize`, asynchronous copies from
:mod:`.async_copy`), C host code
(:mod:`.host_c`), device choice (:mod:`.device`), the pyopencl runtime
(:mod:`.runtime`): ``mcl.compile(path, target=...)`` gives a callable kernel, what a
timed launch is enqueued behind (:mod:`.conditions`: awake, or cold after a cache
flush), and the choice of sizes to time a slow kernel at (:mod:`.sizing`)."""

import mcl.sympy_integers  # noqa: F401 (sympy's floor of an even size by 6, corrected)
from mcl.opencl.generate import GeneratedKernel, generate
from mcl.opencl.plan import LaunchPlan
from mcl.opencl.runtime import Kernel, compile  # noqa: A004 - mcl.compile is the API name
from mcl.opencl.target import Target, available_targets, load_target

__all__ = ["GeneratedKernel", "Kernel", "LaunchPlan", "Target", "available_targets", "compile",
           "generate", "load_target"]
