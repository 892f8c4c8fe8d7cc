"""Running generated Lift kernels with pyopencl: buffers from the launch plan,
kernels in order, results read back, times from profiling events. Devices and
program building come from ``mcl.opencl.device``."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mcl.diagnostics import McplError, error
from mcl.lift.codegen import Generated
from mcl.lift.inputs import checked_input, count_inputs
from mcl.opencl.by_value import packed
from mcl.opencl.device import Runtime, build_program


@dataclass
class Compiled:
    generated: Generated
    program: object
    runtime: Runtime


def compile_generated(gen: Generated, rt: Runtime, origin: str = "<lift>") -> Compiled:
    """Build the kernels; a compiler rejection raises McplError (opencl-build-failed)."""
    prog = build_program(rt.context, gen.source, [], origin)
    return Compiled(gen, prog, rt)


class Bound:
    """Device buffers of one compiled program for one set of inputs."""

    def __init__(self, c: Compiled, inputs: list[np.ndarray]):
        import pyopencl as cl
        self.c = c
        g = c.generated
        ctx = c.runtime.context
        mf = cl.mem_flags
        self.bufs: dict[str, object] = {}
        self.scalars: dict[str, np.generic] = {}
        count_inputs("the generated program", g.inputs, inputs)
        for name, x in zip(g.inputs, inputs, strict=True):
            b = g.buffers[name]
            scalar = b.role == "scalar"
            # the declared shape, not only the count: 8 elements as 4 x 2 for a float[8]
            # (or 4 x 2 as 8 for a float[4][2]) would be read in memory order, silently
            arr = checked_input(name, x, b.dtype, 0 if scalar else None,
                                b.dtype if scalar else f"{b.count} {b.dtype} elements",
                                None if scalar else b.shape)
            if scalar:
                self.scalars[name] = arr.reshape(()).astype(b.dtype)[()]
                continue
            if arr.size != b.count:     # (a plan without shapes)
                raise McplError(error("lift-run", f"input '{name}' has {arr.size} elements, "
                                                  f"the kernel expects {b.count}"))
            if b.by_value:              # a struct of its elements (mcl.opencl.by_value)
                self.scalars[name] = packed(arr, b.dtype)
                continue
            self.bufs[name] = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=arr)
        for name, b in g.buffers.items():
            if b.role in ("output", "temp"):
                nbytes = max(4, b.count * np.dtype(b.dtype).itemsize)
                self.bufs[name] = cl.Buffer(ctx, mf.READ_WRITE, size=nbytes)
        self.kernels = []
        for k in g.kernels:
            kern = getattr(c.program, k.name)
            args = [self.scalars[a] if a in self.scalars else self.bufs[a] for a in k.args]
            kern.set_args(*args)
            self.kernels.append((kern, k))

    def run(self) -> list:
        """Enqueue every kernel once; returns their events."""
        import pyopencl as cl
        q = self.c.runtime.queue
        return [cl.enqueue_nd_range_kernel(q, kern, k.global_size, k.local_size)
                for kern, k in self.kernels]

    def result(self) -> np.ndarray:
        import pyopencl as cl
        g = self.c.generated
        b = g.buffers[g.output]
        out = np.empty(b.count, dtype=b.dtype)
        cl.enqueue_copy(self.c.runtime.queue, out, self.bufs[g.output])
        self.c.runtime.queue.finish()
        return out.reshape(g.output_shape)

    def time(self, repeat: int = 10, warmup: int = 2) -> list[float]:
        """Seconds per run (all kernels), from profiling events."""
        for _ in range(warmup):
            self.run()
        self.c.runtime.queue.finish()
        times = []
        for _ in range(repeat):
            evs = self.run()
            evs[-1].wait()
            times.append((evs[-1].profile.end - evs[0].profile.start) * 1e-9)
        return times


def run_generated(gen: Generated, rt: Runtime, inputs: list[np.ndarray]) -> np.ndarray:
    """Compile, run once and return the result."""
    b = Bound(compile_generated(gen, rt), inputs)
    b.run()
    return b.result()
