"""What every skeleton shares: composing the kernel source around the customising
function, building it (through the program cache) and launching it on a device,
and passing the additional arguments that follow a skeleton's inputs."""

from __future__ import annotations

import inspect
import numbers
import re
from dataclasses import dataclass

import numpy as np

from mcl.diagnostics import article
from mcl.masked_arrays import refuse_masked
from mcl.skel import explanation as _explanation
from mcl.skel import program as programs
from mcl.skel.context import Devices
from mcl.skel.errors import cl_failure, skel_error
from mcl.skel.functions import UserFunction, ctype_of, dtype_of, from_source


def matrix_type(ctype: str, fields: str = "") -> str:
    """The struct a customising function receives for a matrix (MapOverlap, Stencil,
    AllPairs): its data, size, the current element and the first stored row, then the
    skeleton's own ``fields`` (C declarations)."""
    return (f"typedef struct {{ __global const {ctype}* data; int rows; int cols; int row; "
            f"int col; int lo; int len;{fields} }} {ctype}_matrix_t;\n")


#: (lowest, highest) value of each scalar type an additional argument may have
_LIMITS: dict = {}


def _limits(dt: np.dtype) -> tuple:
    known = _LIMITS.get(dt)
    if known is None:
        info = np.iinfo(dt) if dt.kind in "iu" else np.finfo(dt)
        known = _LIMITS[dt] = (int(info.min), int(info.max)) if dt.kind in "iu" \
            else (-float(info.max), float(info.max))
    return known


def scalar_argument(a, dt: np.dtype, param, func: str):
    """``a`` as the scalar parameter ``param`` (of numpy type ``dt``) of ``func``: a
    usage error where the value is not a number or the type cannot hold it (C would
    turn None into NaN, 2.7 into 2 for an int, 1e40 into inf for a float, True into 1).
    Asked at every call: the common cases (a Python int or float) cost a few
    comparisons."""
    lo, hi = _limits(dt)
    integer = dt.kind in "iu"
    t = type(a)
    hint = None
    if t is bool or isinstance(a, np.bool_) or (
            isinstance(a, np.ndarray) and a.ndim == 0 and a.dtype.kind == "b"):
        # a Python bool is an int to isinstance: True was passed as 1
        why = " (a bool, not a number)"
        hint = "pass a number; int(flag) is 1 or 0, where that is what the function means"
    elif t is float or t is int or isinstance(a, numbers.Real) or (
            isinstance(a, np.ndarray) and a.ndim == 0 and a.dtype.kind in "iuf"):
        if isinstance(a, np.ndarray):
            # a masked 3 read as 3, np.ma.masked as 0.0 for a float, silently
            refuse_masked(a, "skel-bad-arguments", f"the value given for parameter "
                          f"'{param.name}' of '{func}'", "the kernel", param.name)
            a = a[()]
        if integer:
            if t is int or isinstance(a, numbers.Integral):
                if lo <= a <= hi:
                    return dt.type(a)
                why = f" ({article(param.base)} holds {lo} to {hi})"
            elif a == a and abs(a) != float("inf") and a == int(a) and lo <= a <= hi:
                return dt.type(int(a))
            else:
                why = " (not a whole number)"
        elif hi < abs(a) < float("inf"):         # NaN and infinities are floats
            why = f" (larger than {article(param.base)} holds)"
        else:
            return dt.type(a)
    else:
        why = ""
    raise skel_error("bad-arguments", f"parameter '{param.name}' of '{func}' is "
                     f"{article(param.base)}; {a!r:.40} was given{why}",
                     hint=hint or f"pass a number {article(param.base)} holds")


_ADDRESS_SPACE = re.compile(r"\b(?:__)?(local|private)\b")


def check_parameters(func: UserFunction, skeleton: str, inputs: int) -> None:
    """A usage error where the first ``inputs`` parameters of ``func``, which receive
    elements, are pointers (the kernel passes an element: the OpenCL compiler's log said
    'incompatible type' inside the skeleton's kernel), or where an additional pointer
    parameter is in local or private memory, where no container can be passed (an
    OpenCL error when the kernel was launched or built)."""
    for i, p in enumerate(func.params):
        if i < inputs and p.pointer:
            raise skel_error("bad-function", f"parameter '{p.name}' of the {skeleton} function "
                             f"'{func.name}' is a pointer ({p.base}*); a {skeleton} passes it "
                             f"an element", hint=f"declare it as an element: {p.base} {p.name}")
        space = _ADDRESS_SPACE.search(p.ctype) if i >= inputs and p.pointer else None
        if space is not None:
            raise skel_error("bad-function", f"parameter '{p.name}' of the {skeleton} function "
                             f"'{func.name}' points to {space.group(1)} memory ({p.ctype}); "
                             "an additional container is passed in global memory",
                             hint=f"declare it as __global const {p.base}* {p.name} (or "
                                  f"__constant), and pass a Vector or Matrix")


def _same_devices(skeleton: str, args: tuple, devs: Devices) -> None:
    """A usage error where the containers of a call (inputs, additional arguments, a
    deferred call's) were made under different ``init()`` calls: their buffers belong
    to different OpenCL contexts (PoCL ran such a kernel; a GPU driver fails or reads
    another context's memory)."""
    from mcl.skel.context import current
    from mcl.skel.reduce import Deferred
    found = []
    for i, a in enumerate(args):
        if isinstance(a, Deferred):
            found += [(f"argument {j + 1} of the deferred {a.skeleton.name}", c)
                      for j, c in enumerate((*a.inputs, *a.args)) if hasattr(c, "_devs")]
        elif hasattr(a, "_devs"):
            found.append((f"argument {i + 1} of this {skeleton} call", a))
    if all(c._devs is devs for _, c in found):
        return
    now = current()
    where, stale = next(((w, c) for w, c in found if c._devs is not now), found[-1])
    raise skel_error("stale-container", f"{where}, {article(stale.kind)}, was made before "
                     "mcl.skel.init() chose other devices, "
                     "unlike the other containers of the call (their data is in another "
                     "OpenCL context)", hint="make it again after init(), e.g. "
                     "Vector(old.to_numpy())")


def identity_value(v, dt: np.dtype, skeleton: str, func) -> np.generic:
    """The ``identity=`` ``v`` of ``skeleton``'s function ``func`` as a value of the
    element type ``dt``: a usage error where the type cannot hold it (1.5 or 2**40 for
    int elements would be 1 or an OverflowError; 1e40 for float ones infinity)."""
    lo, hi = _limits(dt)
    inf = float("inf")
    if dt.kind in "iu":
        ok = v == v and abs(v) != inf and v == int(v) and lo <= v <= hi
        holds = f"a whole number from {lo} to {hi}"
    else:
        ok = not hi < abs(v) < inf          # NaN and infinities are floats
        holds = f"a number of magnitude up to {hi:g} (or inf, nan)"
    if ok:
        return dt.type(int(v) if dt.kind in "iu" else v)
    ctype = ctype_of(dt)
    raise skel_error("type-mismatch", f"the identity {v!r:.40} of {skeleton} '{func.name}' "
                     f"is not {article(ctype)} (the elements "
                     f"are {dt})", hint=f"give identity= {holds}")


def check_identity_number(v, skeleton: str) -> None:
    """A usage error where an ``identity=`` is given but is no number."""
    if v is not None and (isinstance(v, bool | np.bool_) or not isinstance(v, numbers.Real)):
        raise skel_error("bad-arguments", f"{skeleton} identity= must be a number (the "
                         f"reduction's identity), not {v!r:.40}",
                         hint="e.g. identity=0 for a sum, 1 for a product")


class PartLaunch:
    """One part's kernel launch in a plan: part ``index`` on global device ``device``.
    Its arguments (the part's buffers, then ``scalars``, then the additional
    arguments) stay set on the kernel object between calls: a call sets them again
    only if one changed or another launch used the object since, then enqueues
    (pyopencl's Kernel.__call__ sets every argument at every call: 7-9 us a launch on
    an H100, where an enqueue of a kernel whose arguments are set costs less). Until
    its next call, the launch holds the buffers it set (as a Stencil's kept state
    does; a skeleton in a loop gets them back from the pool anyway)."""

    def __init__(self, index: int, device: int, queue, kernel: _LaunchKernel,
                 global_size: tuple, local_size: tuple, scalars: tuple):
        import pyopencl as cl
        self.index, self.device, self.queue, self.kernel = index, device, queue, kernel
        self.global_size, self.local_size, self.scalars = global_size, local_size, scalars
        # the buffers and additional arguments this launch set last (the scalars are
        # the plan's own: they never change)
        self.buffers = self.extra_values = None
        self.cl = cl

    def enqueue(self, buffers: tuple, extra_values) -> None:
        k = self.kernel
        if k.set_by is not self or buffers != self.buffers or \
                extra_values != self.extra_values:
            # through the typed setter (see typed)
            k.kernel.set_args(*buffers, *self.scalars, *extra_values)
            k.set_by, self.buffers, self.extra_values = self, buffers, extra_values
        # the module's function looked up at each call: tests count launches with it,
        # benchmarks/skel/timeline.py records the commands through it
        self.cl.enqueue_nd_range_kernel(self.queue, k.kernel, self.global_size,
                                        self.local_size)


class _LaunchKernel:
    """A kernel object that only part launches use (one per program and entry: pyopencl
    makes each at a cost, 0.3 ms on PoCL), and the launch that set its arguments."""

    def __init__(self, base):
        import pyopencl as cl
        self.base = base
        self.kernel = cl.Kernel(base.get_info(cl.kernel_info.PROGRAM),
                                base.get_info(cl.kernel_info.FUNCTION_NAME))
        self.set_by: PartLaunch | None = None


class KeptLaunch:
    """A launch of a kernel object of its own whose arguments stay set between calls:
    :meth:`enqueue` sets them only when they differ from the last call's (for launches
    outside a plan of part launches, e.g. Reduce's; see PartLaunch)."""

    def __init__(self, base):
        self.kernel = _LaunchKernel(base).kernel
        self.args: tuple | None = None

    def enqueue(self, queue, global_size, local_size, args: tuple):
        import pyopencl as cl
        if args != self.args:       # (buffers and numpy scalars: compared by value)
            typed(self.kernel, args)
            self.kernel.set_args(*args)
            self.args = args
        return cl.enqueue_nd_range_kernel(queue, self.kernel, global_size, local_size)


#: id of a skeleton's kernel object -> the part launches' object made alike
_LAUNCH_KERNELS: dict[int, _LaunchKernel] = {}


def _launch_kernel(base) -> _LaunchKernel:
    k = _LAUNCH_KERNELS.get(id(base))
    if k is None or k.base is not base:
        k = _LAUNCH_KERNELS[id(base)] = _LaunchKernel(base)
    return k


#: launch plans a skeleton keeps (beyond, it forgets them all: sizes keep changing)
PLANS_KEPT = 64


@dataclass
class Extra:
    """One additional argument: a scalar or a container."""

    param: object
    value: object

    @property
    def is_container(self) -> bool:
        return self.param.pointer


class Skeleton:
    """A skeleton customised by a function; subclasses say how many inputs it has."""

    name = "skeleton"
    inputs = 1
    #: the call submits its work and waits for its result itself (Reduce): nothing is
    #: left to flush when it returns
    waits_for_result = False

    def __init__(self, func):
        self.func: UserFunction = from_source(func, self.name)
        if len(self.func.params) < self.inputs:
            raise skel_error("bad-function", f"the {self.name} function '{self.func.name}' "
                             f"takes {len(self.func.params)} parameter(s); a {self.name} "
                             f"passes {self.inputs} element(s) to it",
                             hint="its first parameters receive the inputs' elements, further "
                                  "ones the additional arguments")
        check_parameters(self.func, self.name, self.inputs)
        self.funcs: list[UserFunction] = [self.func]
        self._kernels: dict = {}

    def __call__(self, *args, **kwargs):
        devs = next((a._devs for a in args if hasattr(a, "_devs")), None)
        start = len(devs.log) if devs is not None else 0
        if devs is not None and (len(args) > 1 or hasattr(args[0], "skeleton")):
            _same_devices(self.name, args, devs)
        if devs is not None and devs.ranks > 1:
            from mcl.skel.mpi import same_call_on_every_rank
            same_call_on_every_rank(devs, self, args, kwargs)
        try:
            out = self._call(*args, **kwargs)
        except TypeError:
            self._check_call(args, kwargs)      # a call of the wrong form: said so
            raise
        if devs is not None:
            # every device's work is enqueued: submit it, so that no device waits for
            # another's queue to be finished (a driver may hold commands until a flush)
            if not self.waits_for_result:
                devs.flush()
            if _explanation.recording():
                _explanation.record(self, args, kwargs, out, devs.log[start:])
        return out

    def _check_call(self, args: tuple, kwargs: dict) -> None:
        """A usage error, in the skeleton's terms, where the call does not match what
        the skeleton takes (its containers, the function's additional arguments, its
        keywords); asked only when the call raised a TypeError, so that a call of the
        right form pays nothing for it."""
        sig = inspect.signature(self._call)
        try:
            sig.bind(*args, **kwargs)
            return
        except TypeError:
            pass
        takes, given = self._call_form(sig, args, kwargs)
        raise skel_error("bad-arguments",
                         f"{article(self.name)} takes {takes}; called with {given}",
                         hint=f"call it as {self.name}(...)({', '.join(_call_names(sig))})")

    def _call_form(self, sig, args: tuple, kwargs: dict) -> tuple[str, str]:
        """What a call of the skeleton (``sig``: its ``_call``) takes, and what
        ``args`` and ``kwargs`` give, in words."""
        params = sig.parameters.values()
        inputs = sum(p.kind is p.POSITIONAL_OR_KEYWORD for p in params)
        takes = f"{inputs} container{'s' if inputs != 1 else ''}"
        func = getattr(self, "func", None)
        if any(p.kind is p.VAR_POSITIONAL for p in params) and func is not None:
            extra = self._extra_params() if len(func.params) > self.inputs else []
            takes += (f" and the additional argument(s) of its function '{func.name}' "
                      f"({', '.join(p.name for p, _ in extra)})" if extra else "")
        keywords = [p.name for p in params if p.kind is p.KEYWORD_ONLY]
        if keywords:
            takes += f" (keywords: {', '.join(keywords)})"
        given = f"{len(args)} argument{'s' if len(args) != 1 else ''}"
        if kwargs:
            given += f" and the keyword(s) {', '.join(kwargs)}"
        return takes, given

    # ---- the deferred form (Map and Zip)

    def lazy(self, *args, **kwargs):
        """Only a Map or Zip call has a deferred form (they override this): a Reduce
        computes it inside its own kernel. Any other skeleton says so."""
        sig = inspect.signature(self._call)
        funcs = getattr(self, "funcs", [])      # AllPairs has two: zip= and reduce=
        named = f"{self.name}({funcs[0].name if len(funcs) == 1 else '...'})"
        instead = f"call it: {named}({', '.join(_call_names(sig))})"
        if self.name == "Reduce":
            instead += (f"; to reduce a Map or Zip without a temporary container, give "
                        f"it the deferred call: {named}(Map(f).lazy(X))")
        raise skel_error("no-lazy-form", f"{named}.lazy(...): {article(self.name)} has no "
                         "deferred form; only a Map or Zip call is deferred, for a Reduce to "
                         "compute its elements inside its own kernel", hint=instead)

    def _check_lazy(self, args: tuple, kwargs: dict) -> None:
        """A usage error, in the skeleton's terms, where ``.lazy(*args, **kwargs)``
        does not give the inputs and the additional arguments by position (what
        ``compute()`` passes to the call later)."""
        if not kwargs and len(args) >= self.inputs:
            return
        sig = inspect.signature(self._call)
        takes, given = self._call_form(sig, args, kwargs)
        names = [n for n in _call_names(sig) if "=" not in n]
        raise skel_error("bad-arguments", f"{self.name}({self.func.name}).lazy takes {takes}, "
                         f"by position; called with {given}",
                         hint=f"call it as {self.name}(...).lazy({', '.join(names)})")

    # ---- additional arguments

    def extras(self, args: tuple) -> list[Extra]:
        if not args and len(self.func.params) == self.inputs:
            return []
        params = self._extra_params()
        if len(args) != len(params):
            names = ", ".join(p.name for p, _ in params) or "none"
            raise skel_error("bad-arguments", f"the {self.name} function '{self.func.name}' "
                             f"takes {len(params)} additional argument(s) ({names}); "
                             f"{len(args)} given")
        from mcl.skel.container import Container
        out = []
        for (p, dt), a in zip(params, args, strict=True):
            if dt is not None:                  # a scalar of a type Python can pass
                if isinstance(a, Container):
                    raise skel_error("bad-arguments", f"parameter '{p.name}' is a scalar; "
                                     "a container was given")
                out.append(Extra(p, scalar_argument(a, dt, p, self.func.name)))
            elif p.pointer:
                if not isinstance(a, Container):
                    raise skel_error("bad-arguments", f"parameter '{p.name}' of "
                                     f"'{self.func.name}' is a pointer: pass a Vector or Matrix")
                want = dtype_of(p.base)
                if want is not None and want != a.dtype:
                    raise skel_error("type-mismatch", f"parameter '{p.name}' of "
                                     f"'{self.func.name}' points to {p.base}; the {a.kind} "
                                     f"passed holds {a.dtype}",
                                     hint=f"pass a {a.kind} of {want} (e.g. made from "
                                          f"array.astype(np.{want})) or declare the parameter "
                                          f"as {a.ctype}*")
                if a.distribution is None:
                    raise skel_error("needs-distribution", f"the container passed as "
                                     f"'{p.name}' needs an explicit distribution",
                                     hint="set it first, e.g. v.distribution = "
                                          "mcl.skel.copy(); the skeleton cannot know which "
                                          "elements the function reads")
                out.append(Extra(p, a))
            else:
                raise skel_error("bad-arguments", f"parameter '{p.name}' of "
                                 f"'{self.func.name}' has type '{p.ctype}', which "
                                 "cannot be passed from Python",
                                 hint="use a scalar type (int, float, ...) or a pointer")
        return out

    def _extra_params(self) -> list:
        """The additional parameters with the numpy type of each scalar one (None for
        pointers and types Python cannot pass), worked out once: asked at every call."""
        key = ("extra params", id(self.func))
        known = self._kernels.get(key)
        if known is None:
            known = self._kernels[key] = [
                (p, None if p.pointer else dtype_of(p.base))
                for p in self.func.params[self.inputs:]]
        return known

    def extra_params(self) -> str:
        key = ("params", id(self.func))     # asked for at every call: kept
        known = self._kernels.get(key)
        if known is None:
            known = self._kernels[key] = "".join(
                f", {p.ctype} skel_arg{i}" for i, p in enumerate(self.func.params[self.inputs:]))
        return known

    def extra_names(self) -> str:
        return "".join(f", skel_arg{i}" for i in range(len(self.func.params) - self.inputs))

    def check_elements(self, *inputs, func: UserFunction | None = None,
                       exact: bool = False) -> None:
        """A usage error where the elements of ``inputs`` (containers, or numpy types)
        would reach the function's first parameters converted with loss (floats into
        an integer parameter: C rounds them towards zero), or, when ``exact`` (a
        Reduce's or Scan's operator, whose results are elements again), where a
        parameter or the result is not the element type. Checked once per types."""
        func = func or self.func
        dtypes = tuple(np.dtype(getattr(x, "dtype", x)) for x in inputs)
        key = (id(func), dtypes, exact)
        checked = self.__dict__.setdefault("_checked_elements", set())
        if key in checked:
            return
        kinds = [getattr(x, "kind", "input") for x in inputs]
        for p, dt, kind in zip(func.params, dtypes, kinds, strict=False):
            want = dtype_of(p.base)
            if want is None or (want == dt if exact else np.can_cast(dt, want, "same_kind")):
                continue
            ctype = ctype_of(dt)
            raise skel_error(
                "type-mismatch", f"parameter '{p.name}' of the {self.name} function "
                f"'{func.name}' is {article(p.base)}, but the "
                f"{kind} holds {dt}"
                + ("" if exact else f" (C would round each element to {article(p.base)})"),
                hint=f"write the function for {ctype} elements, or convert the data "
                     f"first (e.g. {kind if kind != 'input' else 'Vector'}(array.astype("
                     f"np.{want})))")
        if exact and dtypes and func.return_dtype != dtypes[0]:
            raise skel_error(
                "type-mismatch", f"the {self.name} function '{func.name}' returns "
                f"{func.return_type}, but its results are combined again as elements of "
                f"{dtypes[0]}", hint=f"make it return {ctype_of(dtypes[0])}")
        checked.add(key)

    @staticmethod
    def ensure_extras(extras: list[Extra]) -> None:
        for e in extras:
            if e.is_container:
                e.value._ensure()

    @staticmethod
    def extra_values(extras: list[Extra], devs: Devices, g: int) -> list:
        vals = []
        for e in extras:
            if not e.is_container:
                vals.append(e.value)
                continue
            parts = [p for p in e.value._parts if p.device == g]
            if not parts:
                raise skel_error("needs-distribution", f"the container passed as "
                                 f"'{e.param.name}' has no data on {devs.name(g)} (its "
                                 f"distribution is {e.value.distribution})",
                                 hint="use copy() for data every device reads")
            vals.append(parts[0].buffer or empty_buffer(devs, g))
        return vals

    # ---- building and launching

    def kernel(self, devs: Devices, g: int, prelude: str, body: str, entry: str,
               options: tuple = ()):
        """Kernel ``entry`` of ``prelude + functions + body`` built for device ``g``. Each
        customising function is renamed ``skel_fn_<name>`` (by a macro around its text)
        so that its name cannot clash with the skeleton's identifiers."""
        key = (devs.generation, g, prelude, body, options, entry)
        known = self._kernels.get(key)
        if known is not None:
            return known
        if "double" in prelude + body + "".join(f.source for f in self.funcs):
            prelude = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" + prelude
        source, offsets = prelude, []
        for f in self.funcs:
            offsets.append((f, source.count("\n") + 1))
            source += f"#define {f.name} {cname(f)}\n{f.source}\n#undef {f.name}\n"
        source += body
        import pyopencl as cl
        prog = programs.build(devs.context, devs.device(g), source, list(options),
                              lambda log: build_error(log, self.name, offsets))
        # one kernel object per program and entry, shared by skeletons made alike
        # (pyopencl makes each object at a cost)
        obj = _OBJECTS.get((id(prog), entry))
        if obj is None or obj[0] is not prog:
            obj = _OBJECTS[(id(prog), entry)] = (prog, cl.Kernel(prog, entry))
        self._kernels[key] = obj[1]
        return obj[1]

    def plan(self, key, build):
        """The launch plan of ``key`` (made by ``build()`` the first time): what a call
        enqueues per part, computed once per (devices, types, sizes, distribution)
        instead of at every call. A plan is a list of :class:`PartLaunch`."""
        plans = self.__dict__.setdefault("_plans", {})
        plan = plans.get(key)
        if plan is None:
            if len(plans) >= PLANS_KEPT:
                plans.clear()
            plan = plans[key] = build()
        return plan

    def run_plan(self, devs: Devices, plan, buffers, extras, what: str) -> None:
        """Enqueue ``plan``: part launch ``i`` gets ``buffers(i)`` (its buffers), its own
        scalars, then the additional arguments on its device."""
        import pyopencl as cl
        # additional arguments that are all scalars are the same on every device
        same = [e.value for e in extras] if not any(e.is_container for e in extras) else None
        lp = None
        try:
            for lp in plan:
                lp.enqueue(buffers(lp.index), same if same is not None
                           else self.extra_values(extras, devs, lp.device))
        except cl.Error as e:
            raise cl_failure(what, e, devs.name(lp.device)) from e

    def part_launch(self, devs: Devices, i: int, g: int, kernel, global_size, local_size,
                    sample_buffers, scalars, extras) -> PartLaunch:
        """A part's launch of ``kernel`` (through the object that only part launches
        use), the object given the argument types of a first call."""
        own = _launch_kernel(kernel)
        typed(own.kernel, [*sample_buffers, *scalars, *self.extra_values(extras, devs, g)])
        return PartLaunch(i, g, devs.queue(g), own, tuple(global_size), tuple(local_size),
                          tuple(scalars))

    @staticmethod
    def launch(devs: Devices, g: int, kernel, global_size, local_size, args, what: str):
        import pyopencl as cl
        try:
            typed(kernel, args)
            return kernel(devs.queue(g), global_size, local_size, *args)
        except cl.Error as e:
            raise cl_failure(what, e, devs.name(g)) from e


def typed(kernel, args) -> None:
    """Give ``kernel`` the argument types of ``args`` (numpy scalars; None for buffers
    and local memory), once: pyopencl then packs the scalars itself. Without them it
    sets each scalar argument through its generic path, which cost 9 us per scalar on
    PoCL (a Map launch 36 us instead of 2)."""
    types = tuple(a.dtype if isinstance(a, np.generic) else None for a in args)
    if getattr(kernel, "_mcl_arg_types", None) != types:
        kernel.set_arg_types(types)
        kernel._mcl_arg_types = types


def cname(f: UserFunction) -> str:
    """The name a customising function has inside a skeleton's kernel."""
    return f"skel_fn_{f.name}"


def _call_names(sig) -> list[str]:
    """The parameters of a skeleton's ``_call`` as a call shows them."""
    out = []
    for p in sig.parameters.values():
        if p.kind is p.VAR_POSITIONAL:
            out.append("*additional")
        elif p.kind is p.KEYWORD_ONLY:
            out.append(f"{p.name}={p.default!r}")
        else:
            out.append(p.name)
    return out


def build_error(log: str, skeleton: str, offsets):
    """The compiler's log as diagnostics at the lines of the customising functions
    (``offsets``: each function and the kernel line before its first line)."""
    from mcl.diagnostics import McplError
    diags = []
    for f, offset in offsets:
        diags += f.diagnostics(log, skeleton, offset)
    return McplError(diags) if diags else offsets[0][0].build_error(log, skeleton, 0)


def group_size(devs: Devices, g: int, limit: int = 256) -> int:
    """The largest power of two work-group size up to ``limit`` the device allows."""
    m = min(limit, devs.limit(g)[2])
    p = 1
    while p * 2 <= m:
        p *= 2
    return p


def round_up(n: int, k: int) -> int:
    return max(k, (n + k - 1) // k * k)


#: (id of a program, entry) -> (program, kernel object)
_OBJECTS: dict[tuple[int, str], tuple] = {}


def empty_buffer(devs: Devices, g: int):
    """A small buffer of device ``g`` to pass where a kernel has a pointer but no data
    (an IndexVector, an empty part). One per device: a buffer that kernels on two
    devices use may make a GPU driver move it between them and run the kernels one
    after the other (the likely reason why Mandelbrot, a Map over an IndexVector, was
    slower on two H100s than on one)."""
    buf = devs.empty.get(g)
    if buf is None:
        import pyopencl as cl
        buf = devs.empty[g] = cl.Buffer(devs.context, cl.mem_flags.READ_WRITE, 16)
    return buf
