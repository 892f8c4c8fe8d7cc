"""Running generated kernels from Python with pyopencl.

``compile(path_or_module, target=..., device=None)`` returns a :class:`Kernel`;
calling it with numpy arrays (or pyopencl arrays) and sizes as keywords
checks every argument against the signature, launches the kernel with its
launch plan and returns the written parameters. Programs are built once per
set of compile-time sizes and cached on the Kernel.
"""

from __future__ import annotations

import operator
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from mcl.diagnostics import McplError, article, error
from mcl.masked_arrays import refuse_masked
from mcl.mcpl import ast
from mcl.opencl import device as devices
from mcl.opencl.generate import GeneratedKernel, generate
from mcl.opencl.plan import DTYPES, LaunchPlan, evaluate, numpy_dtype
from mcl.opencl.target import Target

if TYPE_CHECKING:
    from mcl.mcpl.resolve import CheckedModule


def compile(path_or_module: str | os.PathLike[str] | ast.Module | CheckedModule,
            target: str | None = None,
            device: str | None = None, *, function: str | None = None,
            search_path: Sequence[str | Path] = (), context=None, queue=None,
            specialize: bool = False, max_registers: int | None = None,
            fast_math: bool = False, check_writes: bool = True) -> Kernel:
    """A callable kernel for the function of an MCPL file or module (the only kernel,
    or ``function``) at leaf ``target`` (default: the function's level), on the
    device ``device`` selects ("PLATFORM:DEVICE" substrings; MCL_DEVICE; else the
    best available) or on a given pyopencl ``context``/``queue``. ``specialize``: the
    sizes are compile-time constants (a program is built per size; see generate).
    ``max_registers``: at most that many registers per work-item where the driver
    allows a limit (NVIDIA's; :func:`mcl.opencl.device.takes_register_limit`), so that more
    work-groups are resident; the compiler spills what does not fit. ``fast_math``:
    relaxed math (mcl.opencl.generate.FAST_MATH). ``check_writes``: before the first
    launch at each sizes, the loads, stores and atomic updates that leave their arrays there,
    the barriers that not every unit of a work-group reaches and the loops that never
    end (mcl.analyses.validity, mcl.analyses.barriers) stop the call, and the indices the
    data choose are checked as the kernel runs (mcl.opencl.index_checks: one outside its
    dimension fails the call); False launches such a kernel anyway (where it is right in
    a way the analyses do not follow), without the checks."""
    from mcl.mcpl.resolve import require_search_path, require_source
    from mcl.opencl.vendor import REGISTER_LIMITS
    require_source(path_or_module, "compile", "path_or_module")
    require_search_path(search_path, "compile")
    for arg, value in (("target", target), ("device", device), ("function", function)):
        kinds = (str, Target) if arg == "target" else str
        if value is not None and not isinstance(value, kinds):
            raise TypeError(f"mcl.compile: {arg} is a name (a str) or None, not "
                            f"{type(value).__name__} {value!r}")
    if max_registers is not None and (isinstance(max_registers, bool) or not isinstance(
            max_registers, int | np.integer)):
        raise TypeError("mcl.compile: max_registers is a whole number of registers or None, "
                        f"not {type(max_registers).__name__} {max_registers!r}")
    if max_registers is not None and not \
            REGISTER_LIMITS[0] <= max_registers <= REGISTER_LIMITS[1]:
        raise McplError(error("opencl-register-limit",
                              f"max_registers={max_registers}: a limit of {max_registers} "
                              "registers per work-item is out of range",
                              hint="give {} to {} registers".format(*REGISTER_LIMITS)))
    kernels = generate(path_or_module, target, function=function, search_path=search_path,
                       specialize=specialize, fast_math=fast_math, one=True,
                       check_indices=check_writes)
    if context is None:
        rt = devices.runtime(device)
        context, queue = rt.context, rt.queue
    elif queue is None:
        import pyopencl as cl
        queue = cl.CommandQueue(context,
                                properties=cl.command_queue_properties.PROFILING_ENABLE)
    guard = _LaunchHazards(path_or_module, kernels[0].name, specialize, tuple(search_path)) \
        if check_writes else None
    return Kernel(kernels[0], context, queue, max_registers=max_registers,
                  writes_outside=guard)


class _LaunchHazards:
    """What makes a kernel not to be launched at given sizes (mcl.analyses.validity.
    unsafe: the stores and atomic updates that leave their arrays, the barriers not
    every unit of a work-group reaches, the loops that never end), the module checked
    once, on the first call."""

    def __init__(self, what, function: str, specialize: bool, search_path: tuple):
        self.what, self.function, self.specialize = what, function, specialize
        self.search_path = search_path
        self.checked = None

    def __call__(self, sizes: dict) -> list:
        from mcl.analyses import wrong_kernel
        from mcl.analyses.validity import unsafe
        from mcl.mcpl.resolve import CheckedModule, check
        if self.checked is None:
            self.checked = self.what if isinstance(self.what, CheckedModule) else \
                check(self.what, self.search_path)
        return unsafe(wrong_kernel(self.checked, sizes, self.function, self.specialize))


@dataclass
class Kernel:
    """A generated kernel bound to a context and queue. Call it with keywords."""

    generated: GeneratedKernel
    context: object
    queue: object
    #: at most this many registers per work-item (NVIDIA's driver; None: no limit)
    max_registers: int | None = None
    _programs: dict[tuple, object] = field(default_factory=dict, repr=False)
    _kernel_objects: dict[int, object] = field(default_factory=dict, repr=False)
    _scratch: dict[str, object] = field(default_factory=dict, repr=False)
    #: the profiling event of the last launch (None if nothing was launched)
    last_event: object = field(default=None, repr=False)
    #: ``writes_outside(sizes)``: what makes the kernel not to be launched at those sizes
    #: (:class:`_LaunchHazards`: stores outside its arrays, divergent barriers, endless
    #: loops; None: not checked); asked once per sizes, before a launch
    writes_outside: object = field(default=None, repr=False)
    _safe_sizes: set = field(default_factory=set, repr=False)
    #: the fault record of the last launch prepared, where the kernel checks the indices
    #: the data choose (mcl.opencl.index_checks; None where it checks none)
    _fault: object = field(default=None, repr=False)

    @property
    def plan(self) -> LaunchPlan:
        return self.generated.plan

    @property
    def source(self) -> str:
        return self.generated.source

    @property
    def device(self):
        return self.queue.device

    # ---- building

    def program(self, sizes: dict[str, int]):
        """The built program for the compile-time sizes among ``sizes``."""
        wide = self.plan.offset_option(sizes)
        key = (*(sizes[c.name] for c in self.plan.compile_time), wide)
        if key not in self._programs:
            options = [*self.plan.options_for(self.device.platform.name),
                       *(c.option(v) for c, v in zip(self.plan.compile_time, key[:-1],
                                                     strict=True)),
                       *([wide] if wide else [])]
            plan = self.plan

            def where(cl_line: int) -> str | None:
                line = plan.line_map.get(cl_line)
                if not line:
                    return None
                try:
                    text = Path(plan.mcpl).read_text().splitlines()[line - 1].strip()
                except (OSError, IndexError):
                    return f"{plan.mcpl}:{line}"
                return f"{plan.mcpl}:{line}: {text}"

            self._programs[key] = devices.build_program(
                self.context, self.source, options, origin=f"{plan.kernel} ({plan.mcpl})",
                line_map=where, max_registers=self.max_registers)
        return self._programs[key]

    def kernel_object(self, program):
        """The kernel of ``program``, created once: each creation costs a driver call."""
        key = id(program)
        if key not in self._kernel_objects:
            import pyopencl as cl
            self._kernel_objects[key] = cl.Kernel(program, self.plan.kernel)
        return self._kernel_objects[key]

    # ---- calling

    def sizes(self, kwargs: dict) -> dict[str, int]:
        """The scalar arguments: given ones, else inferred from array shapes, else the
        parameter's example value is *not* used (a missing size is an error)."""
        env: dict[str, int | float] = self.check_scalars(kwargs)
        # sizes that are a dimension of a given array, written as the bare name
        for a in self.plan.arguments:
            arr = kwargs.get(a.name)
            if a.kind not in ("buffer", "value") or arr is None:
                continue
            got = self.shape_of(a.name, arr)
            if len(a.shape) != len(got):
                continue
            for expr, n in zip(a.shape, got, strict=True):
                if re.fullmatch(r"[A-Za-z_]\w*", expr) and expr not in env:
                    env[expr] = int(n)
        wanted = [a.name for a in self.plan.arguments if a.kind == "scalar"]
        wanted += [c.name for c in self.plan.compile_time]
        missing = [n for n in wanted if n not in env]
        if missing:
            # riskFree of black_scholes is a scalar like n, but no size
            what = "size" if set(missing) <= self.size_names() else "argument"
            # an array that would have given a size, but has other dimensions
            blocked = [
                f"; '{a.name}' would give {', '.join(named)}, but has shape "
                f"{self.shape_of(a.name, kwargs[a.name])}, not the {len(a.shape)} "
                f"dimension{'s' * (len(a.shape) > 1)} of `{_declaration(self.plan, a.name)}`"
                for a in self.plan.arguments if a.kind in ("buffer", "value")
                and kwargs.get(a.name) is not None
                and (named := [e for e in a.shape if e in missing])]
            raise McplError(error("opencl-missing-size",
                                  f"'{self.plan.kernel}' needs the {what}"
                                  f"{'s' * (len(missing) > 1)} {', '.join(missing)}"
                                  + "".join(blocked[:1]),
                                  hint="pass " + ", ".join(f"{n}=..." for n in missing)))
        return env

    def sizes_text(self, name: str, env: dict, given: dict) -> str:
        """The sizes in the shape of parameter ``name`` with their values in ``env``, and
        where each came from: given, or read off the shape of an array."""
        a = self.plan.argument(name)
        used = dict.fromkeys(n for e in a.shape for n in _NAME_RE.findall(e) if n in env)
        parts = []
        for n in used:
            source = "given" if n in given else next(
                (f"from the shape of '{b.name}'" for b in self.plan.arguments
                 if b.kind in ("buffer", "value") and n in b.shape
                 and given.get(b.name) is not None
                 and len(self.shape_of(b.name, given[b.name])) == len(b.shape)),
                "its default")
            parts.append(f"{n}={env[n]} ({source})")
        return ", ".join(parts)

    def size_names(self) -> frozenset[str]:
        """The scalar parameters that size something: an array, the launch grid, local
        memory, or a compile-time array."""
        p = self.plan
        exprs = [e for a in p.arguments for e in a.shape]
        exprs += [*p.num_groups, *p.local_size, *p.global_size, p.local_memory_bytes]
        names = {n for e in exprs for n in _NAME_RE.findall(str(e))}
        return frozenset(names | {c.name for c in p.compile_time})

    def check_scalars(self, values: dict) -> dict[str, int | float]:
        """The scalar arguments among ``values``, checked: an integer parameter takes an
        integer, a floating-point one a number, and a size is not negative."""
        p = self.plan
        types = {a.name: a.type for a in p.arguments if a.kind == "scalar"}
        types.update({c.name: c.type for c in p.compile_time})
        sizes = self.size_names()
        env: dict[str, int | float] = {}
        for name, type_ in types.items():
            if name not in values:
                continue
            value = values[name]
            self.check_not_masked(name, value)     # operator.index reads a masked 4 as 4
            integral = type_ not in ("float", "double")
            if type_ == "bool":
                if isinstance(value, bool | np.bool_) or (
                        isinstance(value, int | np.integer) and value in (0, 1)):
                    env[name] = int(value)
                    continue
                raise McplError(error(
                    "opencl-bad-scalar",
                    f"'{name}' is a bool parameter of '{p.kernel}': it takes True or False "
                    f"(or 1 or 0), not {value!r}", hint=f"pass {name}=True or False (1 or 0)"))
            try:
                if isinstance(value, str | bytes | bool | np.bool_):
                    raise TypeError
                if integral and isinstance(value, float | np.floating):
                    if not value.is_integer():     # 512.0 is 512; 2.5 is no size
                        raise TypeError
                    value = int(value)
                value = operator.index(value) if integral else float(value)
            except (TypeError, ValueError):
                raise McplError(error(
                    "opencl-bad-scalar",
                    f"'{name}' is {article(type_)} parameter of '{p.kernel}': it takes "
                    f"{'an integer' if integral else 'a number'}, not {value!r}",
                    hint=f"pass {name}=<{'a whole number' if integral else 'a number'}>"
                )) from None
            except OverflowError:       # a whole number beyond any float
                raise McplError(error(
                    "opencl-scalar-range",
                    f"'{name}' is {article(type_)} parameter of '{p.kernel}': a whole "
                    f"number of {len(str(abs(value)))} digits does not fit it",
                    hint=f"pass a smaller {name}")) from None
            dtype = np.dtype(DTYPES[type_]) if type_ in DTYPES else None
            if dtype is None:
                low = high = None
            elif integral:
                low, high = np.iinfo(dtype).min, np.iinfo(dtype).max
            else:   # a finite value beyond the type would reach the kernel as inf
                high = float(np.finfo(dtype).max)
                low, high = (-high, high) \
                    if np.isfinite(value) else (None, None)
            if low is not None and not low <= value <= high:
                raise McplError(error(
                    "opencl-scalar-range",
                    f"'{name}' is {article(type_)} parameter of "
                    f"'{p.kernel}': {_number_text(value)} does not fit it ({low} .. {high})",
                    hint=f"pass a {'smaller' if value > high else 'larger'} {name}" + (
                        ", or declare it `long` in the kernel" if type_ == "int" else
                        ", or declare it `double` in the kernel" if type_ == "float" else "")))
            if name in sizes and value < 0:
                raise McplError(error(
                    "opencl-negative-size",
                    f"'{name}' is a size of '{p.kernel}': it cannot be negative, not {value}",
                    hint=f"pass {name}=0 or more"))
            env[name] = value
        return env

    def __call__(self, *args, **kwargs) -> dict[str, np.ndarray]:
        """Launch with keyword arguments (arrays and sizes); wait; return the written
        parameters by name (numpy arrays, or the given pyopencl arrays)."""
        import pyopencl as cl

        if args:
            named = ", ".join(f"{n}=..." for n in self.plan.parameters)
            raise TypeError(f"'{self.plan.kernel}' takes its arguments by name, not by "
                            f"position (got {len(args)}): call it as k({named})")

        launch, outputs, copies = self.prepared(**kwargs)
        self.last_event = launch()
        try:
            for out, buf in copies:
                if out.size:
                    cl.enqueue_copy(self.queue, out, buf)
            self.queue.finish()
        except cl.Error as e:
            raise self._failed(e) from e
        self.check_faults()
        return outputs

    def check_faults(self) -> None:
        """Raise where the last launches prepared reached an index the data choose
        outside its dimension (mcl.opencl.index_checks), the first of them named; the
        record is cleared."""
        import pyopencl as cl

        from mcl.opencl.index_checks import fault_error, fresh_record
        if self._fault is None:
            return
        record = fresh_record()
        cl.enqueue_copy(self.queue, record, self._fault)
        if not record[0]:
            return
        cl.enqueue_copy(self.queue, self._fault, fresh_record())
        self.queue.finish()
        found = fault_error(self.plan.kernel, self.plan.index_sites, record, self.plan.dims,
                            self.device.name.strip())
        if found is not None:
            raise found

    def check_writes(self, env: dict) -> None:
        """An error where the kernel would store, update or load an element outside its
        array at the sizes of ``env`` (mcl.analyses.validity, once per sizes): launched, it
        would modify memory it does not own (on a CPU device the process's own: PoCL
        aborts the process, its heap corrupted) or read it (far outside, on a CPU device,
        a segmentation fault); where a barrier is not reached by every
        unit of a work-group (PoCL dies of a segmentation fault, a GPU may hang); or where
        a loop never ends (the launch would hang)."""
        if self.writes_outside is None:
            return
        key = tuple(sorted(env.items()))
        if key in self._safe_sizes:
            return
        found = self.writes_outside(env)
        if found:
            # a store outside first: what it would do is the worse
            d = min(found, key=lambda d: not (d.code == "feedback-out-of-bounds"
                                              and d.data.get("modifies")))
            code, what = {
                "feedback-divergent-barrier": (
                    "opencl-divergent-barrier",
                    "a barrier not every unit of a work-group reaches: "),
                "feedback-endless-loop": (
                    "opencl-endless-loop", "at these sizes a loop never ends: "),
                "feedback-unwritten-output": (
                    "opencl-unwritten-output",
                    "at these sizes it leaves part of an output unwritten: "),
            }.get(d.code, ("opencl-out-of-bounds",
                           f"at these sizes it {'writes' if d.data.get('modifies') else 'reads'}"
                           " outside its arrays: "))
            raise McplError(error(
                code, f"'{self.plan.kernel}' not run: {what}{d.message}", d.span,
                f"{d.hint}; where the kernel is right in a way the analyses do not "
                "follow, compile(..., check_writes=False) launches it"))
        self._safe_sizes.add(key)

    def _failed(self, e: Exception) -> McplError:
        """The error of a launch that failed while it ran."""
        return McplError(error(
            "opencl-kernel-failed",
            f"'{self.plan.kernel}' failed on {self.device.name.strip()} while it ran: {e}",
            hint="an access outside an array stops a kernel (NVIDIA's driver reports "
            "it as OUT_OF_RESOURCES); `mcl feedback` and `mcl run` warn of the indices "
            "they can prove leave their dimension at these sizes"))

    def prepared(self, **kwargs):
        """The arguments checked, the program built and the buffers made: (``launch``,
        the written parameters by name, the copies back to the host), where
        ``launch()`` enqueues the kernel and returns its event without waiting (None
        where the sizes leave nothing to launch)."""
        import pyopencl as cl
        import pyopencl.array as cla

        from mcl.opencl.index_checks import fresh_record
        plan = self.plan
        self._fault = None
        unknown = set(kwargs) - set(plan.parameters)
        if unknown:
            close = {u: closest_name(u, set(plan.parameters) - set(kwargs)) for u in unknown}
            meant = "; ".join(f"did you mean '{c}' for '{u}'?" if len(unknown) > 1 else
                              f"did you mean '{c}'?" for u, c in sorted(close.items()) if c)
            raise McplError(error("opencl-unknown-argument",
                                  f"'{plan.kernel}' has no parameter "
                                  + ", ".join(f"'{u}'" for u in sorted(unknown)),
                                  hint=(meant + " " if meant else "") + "its parameters: "
                                  + ", ".join(plan.parameters)))
        env = self.sizes(kwargs)
        # Check every argument before anything is built or copied.
        values = {}
        for a in plan.arguments:
            if a.kind not in ("buffer", "value"):
                continue
            shape = tuple(evaluate(e, env) for e in a.shape)
            dt = numpy_dtype(a.dtype, a.name)
            value = kwargs.get(a.name)
            if value is None:
                if a.read:
                    raise McplError(error("opencl-missing-argument",
                                          f"'{plan.kernel}' reads '{a.name}' but it was not "
                                          "given", hint=f"pass {a.name}=<{a.dtype} array of "
                                          f"shape {shape}>"))
                value = np.zeros(shape, dt)
            self.check_array(a.name, value, shape, dt, env, kwargs)
            values[a.name] = value
        self.check_aliases(values)
        self.check_views(env)
        self.check_writes(env)
        glob, local = self.launch_sizes(env)  # checked before anything is built
        prog = self.program(env)
        kernel = self.kernel_object(prog)
        args, outputs, copies = [], {}, []
        for a in plan.arguments:
            if a.kind == "scalar":
                args.append(numpy_dtype(a.dtype, a.name).type(env[a.name]))
                continue
            if a.kind == "value":       # a struct of the elements, passed by value
                args.append(self.packed(a, values[a.name]))
                continue
            if a.kind == "fault":       # where an index the data choose left its dimension
                self._fault = cl.Buffer(self.context, cl.mem_flags.READ_WRITE
                                        | cl.mem_flags.COPY_HOST_PTR,
                                        hostbuf=fresh_record())
                args.append(self._fault)
                continue
            if a.kind == "scratch":     # per-group arrays in global memory: the kernel's own
                nbytes = int(np.prod([evaluate(e, env) for e in a.shape])) \
                    * numpy_dtype(a.dtype, a.name).itemsize
                args.append(self.scratch_buffer(a.name, max(nbytes, 1)))
                continue
            value = values[a.name]
            dt = numpy_dtype(a.dtype, a.name)
            if isinstance(value, cla.Array):
                args.append(value.data)
                if a.written:
                    outputs[a.name] = value
                continue
            host = np.ascontiguousarray(value, dt)     # a bool array: its bytes, 0 or 1
            flags = cl.mem_flags.READ_WRITE if a.written else cl.mem_flags.READ_ONLY
            buf = cl.Buffer(self.context, flags | cl.mem_flags.COPY_HOST_PTR,
                            hostbuf=host if host.size else np.zeros(1, dt))
            args.append(buf)
            if a.written:
                out = np.empty(host.shape, dt)
                outputs[a.name] = out
                copies.append((out, buf))

        def launch():
            if not all(g > 0 for g in glob):
                return None
            try:
                return kernel(self.queue, glob, local, *args)
            except cl.Error as e:
                raise McplError(error(
                    "opencl-launch-failed",
                    f"{self.device.name.strip()} refused to launch '{plan.kernel}' with "
                    f"work-groups of {' x '.join(map(str, local))} work-items: {e}",
                    hint="too many registers or too much local memory for a group this size; "
                    "use fewer units in the par_groups mapped to work-items")) from e
        return launch, outputs, copies

    def packed(self, a, value) -> np.ndarray:
        """An array passed by value (mcl.opencl.by_value) as the struct the kernel takes:
        its elements in row-major order, within the device's bytes of arguments."""
        import pyopencl.array as cla

        from mcl.opencl.by_value import packed
        host = value.get() if isinstance(value, cla.Array) else np.asarray(value)
        struct = packed(host, a.dtype)
        limit = self.device.max_parameter_size
        if struct.nbytes > limit:
            raise McplError(error(
                "opencl-argument-too-large",
                f"'{self.plan.kernel}' takes '{a.name}' by value ({struct.nbytes} bytes at "
                f"these sizes), more than {self.device.name.strip()} accepts as kernel "
                f"arguments ({limit} bytes)",
                hint="generate the kernel for these sizes (its parameter defaults), or "
                     "without --specialize: then the array is passed in memory"))
        return struct

    def scratch_buffer(self, name: str, nbytes: int):
        """A device buffer of at least ``nbytes`` for a per-group array, kept between
        launches (its contents are the kernel's business)."""
        import pyopencl as cl
        buf = self._scratch.get(name)
        if buf is None or buf.size < nbytes:
            buf = cl.Buffer(self.context, cl.mem_flags.READ_WRITE, nbytes)
            self._scratch[name] = buf
        return buf

    def shape_of(self, name: str, value) -> tuple[int, ...]:
        """The shape of an argument; an error where numpy cannot read it as an array."""
        try:
            return tuple(np.shape(value))
        except (TypeError, ValueError) as e:    # a ragged list, say
            raise McplError(error(
                "opencl-bad-argument", f"'{name}' of '{self.plan.kernel}' is no array: numpy "
                f"cannot read the {type(value).__name__} as one ({e})",
                hint=f"pass a numpy array of the shape {_shape_text(self.plan, name)}")
            ) from None

    def check_array(self, name: str, value, shape: tuple[int, ...], dt: np.dtype,
                    env: dict | None = None, given: dict | None = None) -> None:
        """``value`` has the dtype and ``shape`` of parameter ``name`` (``env``: the sizes,
        ``given``: the arguments of the call, to say where a size came from)."""
        self.check_not_masked(name, value)
        got_shape = self.shape_of(name, value)
        # Not getattr(value, "dtype", np.asarray(value).dtype): the default is evaluated
        # eagerly and would copy a device array to the host element by element.
        got_dtype = np.dtype(value.dtype if hasattr(value, "dtype") else np.asarray(value).dtype)
        if got_shape == () and shape != () and not dt.names:
            raise McplError(error(
                "opencl-bad-shape", f"'{name}' is a single value ({value!r}), but "
                f"'{self.plan.kernel}' takes an array of shape {shape} for its parameter "
                f"`{_declaration(self.plan, name)}`",
                hint=f"pass a numpy array: np.full({shape}, {value!r}, np.{dt})"))
        if got_dtype != dt and dt.names:
            raise McplError(error(
                "opencl-bad-dtype", f"'{name}' has dtype {_dtype_text(got_dtype)}, but "
                f"'{self.plan.kernel}' takes records of {_dtype_text(dt)}",
                hint="make it with the fields in this order, laid out as C lays out the "
                     f"struct: np.zeros(shape, np.dtype({_dtype_spec(dt)}, align=True))"))
        declared = self.plan.argument(name)
        if got_dtype == np.bool_ and declared is not None and declared.type == "bool":
            got_dtype = dt      # numpy's bools are bytes of 0 or 1, as the kernel's
        if got_dtype != dt:
            array = hasattr(value, "astype")
            kind = type(value).__name__
            read = "" if array else f" ({article(kind)}, as numpy reads it)"
            raise McplError(error("opencl-bad-dtype",
                                  f"'{name}' has dtype {got_dtype}{read}, but "
                                  f"'{self.plan.kernel}' takes {dt} for its parameter "
                                  f"`{_declaration(self.plan, name)}`",
                                  hint=f"convert it: {name}.astype(np.{dt})" if array else
                                  f"convert it: np.asarray({name}, np.{dt})"))
        if got_shape != shape:
            at = self.sizes_text(name, env, given or {}) if env is not None else ""
            raise McplError(error("opencl-bad-shape",
                                  f"'{name}' has shape {got_shape}, but '{self.plan.kernel}' "
                                  f"takes {shape} for its parameter "
                                  f"`{_declaration(self.plan, name)}`"
                                  + (f" at {at}" if at else " with these sizes"),
                                  hint="the shape follows the parameter's type: "
                                  + _shape_text(self.plan, name)))
        if type(value).__module__.startswith("pyopencl"):
            self.check_device_array(name, value)

    def check_not_masked(self, name: str, value) -> None:
        """An error for a numpy masked array or masked scalar: the kernel takes the
        data, every element, and would read the masked-out ones as values (numpy's
        conversions drop the mask silently)."""
        refuse_masked(value, "opencl-bad-argument", f"'{name}' of '{self.plan.kernel}'",
                      "the kernel", name)

    def check_device_array(self, name: str, value) -> None:
        """A pyopencl array is passed as its buffer: the kernel reads it from the buffer's
        start, row after row. A view that starts further on or skips elements, or a
        buffer of another context, would give it other elements than the array's."""
        kernel = self.plan.kernel
        if value.context.int_ptr != self.context.int_ptr:
            raise McplError(error(
                "opencl-bad-argument", f"'{name}' is a pyopencl array of another context "
                f"than '{kernel}' was compiled for",
                hint="make it on the kernel's queue: pyopencl.array.to_device(k.queue, ...), "
                     "or compile with context=...,queue=... of the array"))
        if value.offset or not (value.flags.c_contiguous or value.size == 0):
            how = "that starts at an offset" if value.offset else \
                "whose elements are not consecutive in C order"
            raise McplError(error(
                "opencl-bad-layout", f"'{name}' is a view of a pyopencl array ({how}), "
                f"but '{kernel}' reads it from the start of its buffer, row after row",
                hint=f"pass a copy: {name}.copy()" if value.offset else
                     f"pass a C-ordered copy: pyopencl.array.to_device(queue, {name}.get())"))

    def check_aliases(self, values: dict) -> None:
        """No pyopencl array given for two parameters of which one is written: the kernel
        takes its arrays as `restrict` pointers (a numpy array is copied to a buffer of
        its own for each parameter: no two share one)."""
        by_buffer: dict[int, list[str]] = {}
        for name, value in values.items():
            if type(value).__module__.startswith("pyopencl") and value.base_data is not None:
                by_buffer.setdefault(value.base_data.int_ptr, []).append(name)
        for names in by_buffer.values():
            written = [n for n in names if self.plan.argument(n).written]
            if len(names) > 1 and written:
                other = next(n for n in names if n != written[0])
                raise McplError(error(
                    "opencl-aliased-arguments",
                    f"'{written[0]}' and '{other}' of '{self.plan.kernel}' are the same "
                    f"pyopencl buffer, and '{self.plan.kernel}' writes '{written[0]}': it "
                    "assumes its arrays do not overlap, and would read elements it has "
                    "already overwritten",
                    hint=f"pass a copy for one of them: {other}={other}.copy()"))

    def check_views(self, env: dict) -> None:
        """Every view of a parameter covers the parameter at these sizes: a view whose
        extents do not divide them would index other elements than the kernel means."""
        for v in self.plan.view_checks:
            have, want = evaluate(v.view_elements, env), evaluate(v.array_elements, env)
            if have != want:
                sizes = ", ".join(f"{k}={env[k]}" for k in self.size_names() if k in env)
                raise McplError(error(
                    "opencl-view-size",
                    f"the view {v.view} of {v.array} ({Path(self.plan.mcpl).name}, line "
                    f"{v.line}) has {have} elements where {v.array} has {want} at these "
                    f"sizes ({sizes})",
                    hint="this version is written for sizes its view's extents divide "
                         "(its reference.py DIVISIBLE_BY names them); choose such sizes or "
                         "a version of the kernel that handles any size"))

    def launch_sizes(self, env: dict) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """Global and local sizes for ``env``, checked against the device's limits.

        The device's limits are the check; a kernel's own CL_KERNEL_WORK_GROUP_SIZE is
        not: NVIDIA's driver reports 256 for every kernel yet runs 1024-item groups. A
        group that a kernel really cannot run fails at launch, reported by ``__call__``."""
        plan = self.plan
        local = tuple(evaluate(e, env) for e in plan.local_size)
        glob = tuple(evaluate(e, env) for e in plan.global_size)
        dev = self.device
        wg = int(np.prod(local))
        if wg > dev.max_work_group_size:
            raise McplError(error(
                "opencl-work-group-too-large",
                f"'{plan.kernel}' needs work-groups of {wg} work-items "
                f"({' x '.join(map(str, local))}), but {dev.name.strip()} allows at most "
                f"{dev.max_work_group_size}", hint="use fewer units in the par_groups mapped to "
                "work-items (warps, threads, vectors)"))
        for d, (n, m) in enumerate(zip(local, dev.max_work_item_sizes, strict=False)):
            if n > m:
                raise McplError(error("opencl-work-group-too-large",
                                      f"'{plan.kernel}' needs {n} work-items in dimension {d}, "
                                      f"but {dev.name.strip()} allows at most {m}"))
        need = evaluate(plan.local_memory_bytes, env)
        if need > dev.local_mem_size:
            raise McplError(error(
                "opencl-local-memory",
                f"'{plan.kernel}' needs {need} bytes of local memory per work-group, but "
                f"{dev.name.strip()} has {dev.local_mem_size}",
                hint="use smaller arrays in the memory space mapped to __local"))
        return glob, local

    def time(self, repeat: int = 10, warmup: int = 2, progress=None, before=None,
             **kwargs) -> float:
        """The best kernel time in seconds over ``repeat`` launches (profiling events);
        infinite when the sizes leave nothing to launch. ``progress(done, total)`` is
        called after each launch, the ``warmup`` ones included; ``before()`` before each
        launch (to evict the caches, say: its work is not in the kernel's time).

        The arguments are those of a call: every array the kernel reads must be given
        (its time can depend on the data: a branch, an index, a loop bound read from
        it); one left out is an error that names it, as in a call. An array the kernel
        only writes may be left out: it is made on the device, zero-filled, and not
        returned."""
        import pyopencl as cl
        import pyopencl.array as cla

        for arg, value, least in (("repeat", repeat, 1), ("warmup", warmup, 0)):
            if isinstance(value, bool) or not isinstance(value, int | np.integer):
                raise TypeError(f"Kernel.time: {arg} is a number of launches, not "
                                f"{type(value).__name__} {value!r}")
            if value < least:
                raise ValueError(f"Kernel.time: {arg}={value}: time at least {least} "
                                 f"launch{'es' * (least != 1)}")
        # Keep the data on the device so that only the kernel is timed.
        dev_args = {}
        for k, v in kwargs.items():
            a = self.plan.argument(k)
            if a is not None and a.kind == "buffer" and isinstance(v, np.ndarray):
                self.check_not_masked(k, v)     # before the copy drops the mask
                dev_args[k] = cla.to_device(self.queue, np.ascontiguousarray(v))
            else:
                dev_args[k] = v
        # An output left out is made on the device. An array the kernel reads is not:
        # zeros would time another computation than the caller's data, silently;
        # ``prepared`` names it as missing, as a call does.
        for a in self.plan.arguments:
            if a.kind == "buffer" and not a.read and a.name not in dev_args:
                env = self.sizes(dev_args)
                shape = tuple(evaluate(e, env) for e in a.shape)
                dev_args[a.name] = cla.zeros(self.queue, shape, numpy_dtype(a.dtype, a.name))
        # prepared once, so that what ``before`` enqueues is still running when the
        # kernel is enqueued behind it
        launch, _, _ = self.prepared(**dev_args)
        best = float("inf")
        for i in range(warmup + repeat):
            if before is not None:
                before()
            self.last_event = ev = launch()
            if ev is not None:
                try:
                    ev.wait()
                except cl.Error as e:
                    raise self._failed(e) from e
                if i >= warmup:
                    best = min(best, (ev.get_profiling_info(cl.profiling_info.END)
                                      - ev.get_profiling_info(cl.profiling_info.START)) * 1e-9)
            if progress is not None:    # each launch is waited for
                progress(i + 1, warmup + repeat)
        self.check_faults()
        return best


_NAME_RE = re.compile(r"[A-Za-z_]\w*")


def closest_name(name: str, known) -> str | None:
    """The parameter a mistyped keyword means: the one that differs in case only, else
    the closest (difflib, for 'did you mean' hints); None where none is close."""
    from mcl.mcpl.check_common import closest
    known = sorted(known)
    same = [k for k in known if k.lower() == name.lower()]
    return same[0] if same else closest(name, known)


def _number_text(value) -> str:
    """A number as a message shows it: a whole number of more than 30 digits by its
    count of digits (a 10**400 is no line of a message)."""
    digits = len(str(abs(value))) if isinstance(value, int) else 0
    return f"a whole number of {digits} digits" if digits > 30 else str(value)


def random_arguments(plan: LaunchPlan, values: dict, rng: np.random.Generator) -> dict:
    """``values`` (the sizes) and random contents for every buffer the kernel reads:
    floats uniform in [-1, 1), integers in [0, 16) (valid as small indices), bools 0 or 1
    (a byte of another value is no bool the kernel can test)."""
    data = dict(values)
    for a in plan.arguments:
        if a.kind in ("buffer", "value") and a.read:
            shape = tuple(evaluate(e, values) for e in a.shape)
            data[a.name] = rng.integers(0, 2, shape).astype(np.uint8) if a.type == "bool" \
                else random_array(rng, shape, numpy_dtype(a.dtype, a.name))
    return data


def _dtype_text(dt: np.dtype) -> str:
    """A dtype in words: a record's fields with their types and byte offsets."""
    if not dt.names:
        return str(dt)
    fields = ", ".join(f"{n}: {_dtype_text(dt.fields[n][0])} at {dt.fields[n][1]}"
                       for n in dt.names)
    return f"{{{fields}; {dt.itemsize} bytes}}"


def _dtype_spec(dt: np.dtype) -> str:
    """The list of (name, type) numpy takes for a record's dtype."""
    return "[" + ", ".join(f"({n!r}, {_dtype_spec(dt.fields[n][0])})" if dt.fields[n][0].names
                           else f"({n!r}, {str(dt.fields[n][0])!r})" for n in dt.names) + "]"


def random_array(rng: np.random.Generator, shape: tuple, dt: np.dtype) -> np.ndarray:
    """Random contents of ``shape``: floats uniform in [-1, 1), integers in [0, 16);
    a record's fields each so."""
    if dt.names:
        out = np.zeros(shape, dt)
        for name in dt.names:
            out[name] = random_array(rng, shape, dt.fields[name][0])
        return out
    return (rng.uniform(-1, 1, shape).astype(dt) if dt.kind == "f"
            else rng.integers(0, 16, shape).astype(dt))


def _declaration(plan: LaunchPlan, name: str) -> str:
    """A parameter as the kernel declares it: ``float[n, p] a``."""
    a = plan.argument(name)
    return f"{a.type}[{', '.join(a.shape)}] {name}" if a is not None and a.shape else name


def _shape_text(plan: LaunchPlan, name: str) -> str:
    a = plan.argument(name)
    return f"{name}[{', '.join(a.shape)}]" if a is not None else name
