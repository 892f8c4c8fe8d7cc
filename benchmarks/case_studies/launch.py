"""A minimal host for kernels of ``mcl.opencl.generate``, used by the case studies
while ``mcl.compile`` (the runtime of the OpenCL component) is not there: it
builds a generated kernel with its launch plan's options and compile-time sizes
and enqueues it with the plan's sizes, so that every launch gives an OpenCL
profiling event. Once ``mcl.compile`` exists, run.py prefers it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np


class PlanKernel:
    """A generated kernel on one OpenCL runtime: ``k(**numpy args) -> {written: array}``
    and ``k.enqueue(**device args) -> cl.Event`` (arrays already on the device)."""

    def __init__(self, generated, rt):
        self.generated, self.plan, self.source = generated, generated.plan, generated.source
        self.runtime = rt
        self.parameters = tuple(a.name for a in self.plan.arguments) + tuple(
            c.name for c in self.plan.compile_time) + tuple(self.plan.parameters)
        self._programs: dict[tuple, Any] = {}

    def _kernel(self, args: dict):
        from mcl.opencl.device import build_program

        key = tuple(int(args[c.name]) if c.name in args else c.default
                    for c in self.plan.compile_time)
        if key not in self._programs:
            options = list(self.plan.build_options) + [
                f"-D{c.name}={v}" for c, v in zip(self.plan.compile_time, key, strict=True)]
            program = build_program(self.runtime.context, self.source, options,
                                    origin=self.plan.mcpl)
            self._programs[key] = getattr(program, self.plan.kernel)
        return self._programs[key]

    def _sizes(self, args: dict) -> tuple[tuple[int, ...], tuple[int, ...] | None]:
        from mcl.opencl.plan import evaluate

        env = {k: v for k, v in args.items() if np.isscalar(v) or np.ndim(v) == 0}
        env.update({c.name: c.default for c in self.plan.compile_time
                    if c.name not in env and c.default is not None})
        gsize = tuple(evaluate(e, env) for e in self.plan.global_size)
        lsize = tuple(evaluate(e, env) for e in self.plan.local_size) or None
        return gsize, lsize

    def enqueue(self, **args):
        """Launch on device-resident buffers (pyopencl arrays); returns the event."""
        values = []
        for a in self.plan.arguments:
            v = args[a.name]
            values.append(v.data if a.kind == "buffer" else np.dtype(a.dtype).type(v))
        gsize, lsize = self._sizes(args)
        return self._kernel(args)(self.runtime.queue, gsize, lsize, *values)

    def __call__(self, **args) -> dict[str, np.ndarray]:
        import pyopencl.array as cla

        q = self.runtime.queue
        device = dict(args)
        for a in self.plan.arguments:
            if a.kind == "buffer":
                host = np.ascontiguousarray(np.asarray(args[a.name], dtype=a.dtype))
                device[a.name] = cla.to_device(q, host.reshape(-1) if host.ndim else
                                               host.reshape(1))
        self.enqueue(**device).wait()
        return {a.name: device[a.name].get().reshape(np.shape(args[a.name]))
                for a in self.plan.arguments if a.kind == "buffer" and a.written}


def generated_kernel(path: Path, target: str, device: str | None) -> PlanKernel:
    """The (single) kernel of an MCPL file, generated for ``target``."""
    from mcl.opencl.device import runtime
    from mcl.opencl.generate import generate

    kernels = generate(str(path), target)
    if len(kernels) != 1:
        raise ValueError(f"{path} has {len(kernels)} kernels; the case studies expect one")
    return PlanKernel(kernels[0], runtime(device))
