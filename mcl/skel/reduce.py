"""Reduce at memory bandwidth, and Map/Zip fused into it.

One kernel reduces a part of a container on its device: every work-item combines
many elements (a grid-stride loop over runs of ``VW`` adjacent elements, read as one
vector, so consecutive work-items read consecutive memory), then a tree in local
memory combines the work-group's values, and each group writes one partial result.
Enough groups are launched to fill the device (its compute units times
``GROUPS_PER_UNIT``); the last group to finish combines the groups' partial results
(seed 000's reduce6 then a second pass, here in the same launch, as CUDA's
threadFenceReduction: a second launch and its gap cost 9 us of a 190 us dot product on
an H100). No neutral element is needed: each work-item starts from its first element,
and only work-items that hold a value take part in the tree.

``Map(f).lazy(X)`` and ``Zip(f).lazy(X, Y)`` return a :class:`Deferred` call that
only ``Reduce`` accepts: ``Reduce(add)(Zip(mult).lazy(X, Y))`` is the dot product in
one pass over X and Y, without the temporary container ``Zip(mult)(X, Y)`` would
write (SkelCL's ``sum(mult(A, B))``). ``Deferred.compute()`` runs the call as usual."""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from mcl.skel.container import (
    Container,
    IndexVector,
    Part,
    Vector,
    check_zip_inputs,
    container_class,
)
from mcl.skel.context import Transfer
from mcl.skel.distribution import single
from mcl.skel.errors import cl_failure, skel_error
from mcl.skel.functions import ctype_of
from mcl.skel.kernel import (
    KeptLaunch,
    Skeleton,
    check_identity_number,
    cname,
    group_size,
    identity_value,
)
from mcl.skel.mpi import allgather_values

#: work-groups per compute unit of the first pass: enough resident work-items to keep
#: a GPU's memory system busy (2048 per SM on NVIDIA = 8 groups of 256)
GROUPS_PER_UNIT = 8
#: elements a work-item reads at once (one vector load) when its inputs are aligned
VECTOR = 4
#: the distribution of a Reduce's result (distributions are immutable)
_SINGLE = single(0)


class _Plan(NamedTuple):
    """What a Reduce call of one size, type and deferred function launches on a
    device, worked out once."""

    wg: int                 # work-items per group
    groups: int             # groups (more than one: the last combines the partials)
    launch: KeptLaunch
    sizes: tuple            # the kernel's n, skip and offset arguments
    fused: object           # the deferred Map or Zip skeleton (held: its id is a key)


@dataclass
class Deferred:
    """A Map or Zip call not yet computed (``Map(f).lazy(X)``, ``Zip(f).lazy(X, Y)``):
    Reduce computes it inside its own kernel. Anything else needs ``compute()``."""

    skeleton: Skeleton
    inputs: tuple
    args: tuple

    def __post_init__(self):
        sk = self.skeleton
        if sk.name == "Map":
            x = self.inputs[0]
            if not isinstance(x, Container):
                raise skel_error("bad-arguments", f"Map takes a Vector or Matrix, not "
                                 f"{type(x).__name__}")
        else:
            check_zip_inputs(*self.inputs)
        self.extras = sk.extras(self.args)
        sk.check_elements(*self.inputs)
        dt = sk.func.return_dtype
        if dt is None:
            raise skel_error("bad-function", f"the {sk.name} function '{sk.func.name}' "
                             f"returns '{sk.func.return_type}', which is not an element type",
                             hint="return float, double, int, ...")
        self.dtype = np.dtype(dt)

    @property
    def _devs(self):
        return self.inputs[0]._devs

    @property
    def shape(self):
        # Map and Zip make their output of their (first) input's shape
        return self.inputs[0].shape

    @property
    def kind(self):
        """The kind of the call's result, what compute() returns: Map and Zip, the only
        skeletons with a deferred form, make their output of their input's shape as
        container_class says (a Map over an IndexVector gives a Vector)."""
        return container_class(self.shape).__name__

    def compute(self, *args, **kwargs) -> Container:
        """The call's result as a container (what the skeleton returns when called)."""
        if args or kwargs:
            sk = self.skeleton
            given = f"{len(args)} argument{'s' * (len(args) != 1)}" + (
                f" and the keyword(s) {', '.join(kwargs)}" if kwargs else "")
            raise skel_error("bad-arguments", f"{sk.name}({sk.func.name}).lazy(...).compute() "
                             f"takes no arguments (the call's containers and additional "
                             f"arguments were given to lazy); called with {given}",
                             hint=f"call .compute(); for other arguments, make another "
                                  f"deferred call, {sk.name}({sk.func.name}).lazy(...), or "
                                  f"call {sk.name}({sk.func.name})(...)")
        return self.skeleton(*self.inputs, *self.args)

    # A deferred call read as a container (``Zip(f).lazy(X, Y).to_numpy()``) was an
    # AttributeError, ``np.asarray`` of it a 0-d array of objects: it has no elements
    # until Reduce or compute() computes them (no temporary container made unasked)
    def to_numpy(self, *args, **kwargs):
        raise self._not_computed("read with to_numpy()")

    def __array__(self, *args, **kwargs):
        raise self._not_computed("convert with np.asarray")

    def __getitem__(self, index):
        raise self._not_computed("index")

    def __len__(self):
        raise self._not_computed("count with len()")

    def __iter__(self):
        raise self._not_computed("iterate over")

    def __bool__(self):
        return True     # a deferred call is a value (not its elements, which __len__ counts)

    def _not_computed(self, use: str):
        sk = self.skeleton
        call = f"{sk.name}({sk.func.name}).lazy(...)"
        result = self.kind      # what compute() returns
        return skel_error("not-computed", f"{call} is a deferred call, not a {result}: it "
                          f"has no elements to {use} until it is computed; only Reduce takes "
                          "it as it is (and computes its elements inside its own kernel)",
                          hint=f"call .compute() on it for its result as a {result} (what "
                               f"{sk.name}({sk.func.name})(...) returns)")

    def _parts(self) -> list[list[Part]]:
        """The inputs' parts, in the distribution the skeleton would use."""
        if self.skeleton.name == "Map":
            parts = [self.inputs[0]._ensure()]          # block unless distributed
        else:
            a, b = self.inputs
            da, db = a._dist, b._dist
            if da is None or db is None or not da.same_layout(db):
                from mcl.skel.skeletons import _zip_distribution
                dist = _zip_distribution(a, b)
                for v in (a, b):
                    if v.distribution is None or not v.distribution.same_layout(dist):
                        v.distribution = dist
            parts = [a._ensure(), b._ensure()]
        if self.extras:
            self.skeleton.ensure_extras(self.extras)
        return parts


def _vector_type(t: str, width: int) -> str:
    return t if width == 1 else f"{t}{width}"


class Reduce(Skeleton):
    """``Reduce(f, identity=None)(X)``: the elements combined with the associative and
    commutative ``f``; a one-element Vector on a single device (``.to_numpy()[0]`` reads it).
    An empty input gives ``identity`` (required then). ``X`` may be a deferred Map or
    Zip (``Zip(g).lazy(A, B)``): its elements are computed inside the reduction."""

    name = "Reduce"
    inputs = 2
    waits_for_result = True

    def __init__(self, func, identity=None):
        super().__init__(func)
        if len(self.func.params) != 2:
            raise skel_error("bad-function", f"the Reduce function '{self.func.name}' must "
                             f"take exactly two elements (it takes {len(self.func.params)})")
        check_identity_number(identity, "Reduce")
        self.identity = identity
        self._scratch: dict = {}
        self._memo: dict = {}
        self._plans: dict = {}

    # ---- the call

    def _call(self, x) -> Vector:
        fused = isinstance(x, Deferred)
        if fused:
            inputs = x._parts()
            first = x.inputs[0]
            index = isinstance(first, IndexVector)
        else:
            if not isinstance(x, Container) or isinstance(x, IndexVector):
                raise skel_error("bad-arguments", "Reduce takes a Vector or Matrix (or a "
                                 "deferred Map or Zip: Zip(f).lazy(X, Y))")
            inputs = [x._ensure()]                      # block unless distributed
            index = False
            first = x
        devs = first._devs
        dtype = x.dtype
        self.check_elements(*(x, x) if not fused else (dtype, dtype), exact=True)
        if self.identity is not None:       # said at every call, not only an empty one's
            identity = identity_value(self.identity, dtype, "Reduce", self.func)
        parts = list(zip(*inputs, strict=True))
        if first._dist.kind == "copy":
            parts = parts[:1]
        row = math.prod(first.shape[1:])
        deferred = x if fused else None
        pending = []
        for ps in parts:
            s = ps[0].spec
            n = (s.own_hi - s.own_lo) * row
            if n and devs.is_local(s.device):
                pending.append(self._enqueue(
                    devs, s.device, () if index else [p.buffer for p in ps], n,
                    (s.own_lo - s.lo) * row, s.own_lo * row if index else 0, dtype, deferred))
        partials = self._read_all(devs, pending)
        if devs.ranks > 1:
            partials = allgather_values(devs, partials)
        if not partials:
            if self.identity is None:
                raise skel_error("empty-reduce", f"Reduce '{self.func.name}' of an empty "
                                 f"{first.kind} has no result",
                                 hint="give Reduce(..., identity=...)")
            value = identity
        elif len(partials) == 1:
            value = partials[0]
        else:
            value = self._combine(devs, np.array(partials, dtype=dtype))
        # the output made without the constructor's checks: a call ends here
        out = Vector._blank(devs, (1,), dtype)
        out._host = np.array([value], dtype=dtype)
        out._dist = _SINGLE
        return out

    def _combine(self, devs, arr: np.ndarray):
        """The partial results of the devices, combined in device order on this rank's
        first device (the function is OpenCL C: the host cannot run it)."""
        import pyopencl as cl
        g = devs.rank * devs.per_rank
        buf = cl.Buffer(devs.context, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR,
                        hostbuf=arr)
        devs.log.append(Transfer("upload", "host", devs.name(g), arr.nbytes,
                                 f"Reduce '{self.func.name}': partial results", None, g))
        return self._read_all(devs, [self._enqueue(devs, g, [buf], len(arr), 0, 0,
                                                   arr.dtype, None)])[0]

    def reduce_buffer(self, devs, g: int, buf, n: int, skip: int, dtype):
        """The reduction of ``n`` elements of ``buf`` (from ``skip``) on device ``g``,
        read back to the host."""
        return self._read_all(devs, [self._enqueue(devs, g, [buf], n, skip, 0,
                                                   np.dtype(dtype), None)])[0]

    # ---- kernels

    def _enqueue(self, devs, g, buffers, n, skip, offset, dtype, deferred):
        """Launch the reduction of one part on device ``g``; returns what :meth:`_read_all`
        reads the result from."""
        # what a call of this size, element type and deferred function launches,
        # worked out once (a repeated call only sets the buffers)
        # (a deferred call's skeleton by identity: the plan holds it, so that its id
        # cannot be another's while the plan is kept; a key of its function's text
        # would be hashed at every call)
        fused = None if deferred is None else deferred.skeleton
        plan_key = (devs.generation, g, n, skip, offset, dtype, id(fused),
                    None if deferred is None else
                    (isinstance(deferred.inputs[0], IndexVector),
                     *(v.dtype for v in deferred.inputs)))
        plan = self._plans.get(plan_key)
        if plan is None or plan.fused is not fused:
            dev = devs.device(g)
            wg = group_size(devs, g)
            width = VECTOR if skip % VECTOR == 0 else 1
            chunks = n // width
            have = max(chunks, n - chunks * width)
            groups = max(1, min(dev.max_compute_units * GROUPS_PER_UNIT, -(-have // wg)))
            t = ctype_of(dtype)
            k = self._kernel_for(devs, g, t, width, wg, deferred, groups > 1)
            if len(self._plans) > 64:
                self._plans.clear()
            # a launch whose arguments stay set: a repeated call only enqueues
            plan = self._plans[plan_key] = _Plan(
                wg, groups, KeptLaunch(k), (np.uint32(n), np.uint32(skip), np.int32(offset)),
                fused)
        import pyopencl as cl
        wg, groups = plan.wg, plan.groups
        scratch, done = self._scratch_buffers(devs, g, groups * dtype.itemsize)
        if deferred is not None:
            # an IndexVector has no buffer: its pointer parameter, never read, gets one
            args = [b if b is not None else scratch for b in buffers] or [scratch]
            args += deferred.skeleton.extra_values(deferred.extras, devs, g)
        else:
            args = list(buffers)
        try:
            plan.launch.enqueue(devs.queue(g), (groups * wg,), (wg,),
                                (*args, *plan.sizes, scratch, done) if groups > 1 else
                                (*args, *plan.sizes, scratch))
        except cl.Error as e:
            raise cl_failure(f"running Reduce '{self.func.name}'", e, devs.name(g)) from e
        return g, scratch, dtype

    def _kernel_for(self, devs, g, t, width, wg, deferred, combine):
        """The kernel, remembered by what its text depends on (composing the text on
        every call would cost more than a small reduction)."""
        key = (devs.generation, g, t, width, wg, combine)
        if deferred is not None:
            key += self._deferred_key(deferred)
        k = self._memo.get(key)
        if k is None:
            k = self._memo[key] = self.kernel(
                devs, g, "", self.body(t, width, wg, deferred, combine), "skel_reduce")
        return k

    @staticmethod
    def _deferred_key(deferred):
        """What the fused kernel's text takes from a deferred Map or Zip."""
        f = deferred.skeleton.func
        return (f.name, f.source, f.params, isinstance(deferred.inputs[0], IndexVector),
                tuple(v.ctype for v in deferred.inputs))

    def _read_all(self, devs, pending) -> list:
        """The results of launches ``pending`` (from :meth:`_enqueue`), read back: every
        device's work submitted first, the last result read blocking, the others without
        (a blocking read of 4 bytes cost 12 us on the H100, where a non-blocking one
        cost 17 us to enqueue and then a wait). What the host records of the reads is
        done before it waits: after the wait, only the values remain to take."""
        import pyopencl as cl
        if len(pending) > 1:        # every device's work submitted before the host waits
            for q in devs.queues:
                q.flush()
        results = [np.empty(1, dtype) for _, _, dtype in pending]
        for (g, _, _), result in zip(pending, results, strict=True):
            devs.log.append(Transfer("download", devs.name(g), "host", result.nbytes,
                                     f"Reduce '{self.func.name}': partial result", g, None))
        events = []
        for i, ((g, scratch, _), result) in enumerate(zip(pending, results, strict=True)):
            last = i == len(pending) - 1
            try:
                ev = cl._enqueue_read_buffer(devs.queue(g), scratch, result, 0, None, last)
            except cl.Error as e:
                raise cl_failure(f"reading the result of Reduce '{self.func.name}'", e,
                                 devs.name(g)) from e
            if not last:
                events.append(ev)
        for ev in events:
            ev.wait()
        return [r[0] for r in results]

    def _scratch_buffers(self, devs, g, nbytes):
        """Device ``g``'s buffer of the groups' partial results and its count of groups
        done (zero between calls: the last group resets it), kept between calls (the
        device's in-order queue finishes one call's use before the next starts)."""
        import pyopencl as cl
        key = (devs.generation, g)
        bufs = self._scratch.get(key)
        if bufs is None or bufs[0].size < nbytes:
            done = bufs[1] if bufs is not None else cl.Buffer(
                devs.context, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR,
                hostbuf=np.zeros(1, np.uint32))
            bufs = self._scratch[key] = (
                cl.Buffer(devs.context, cl.mem_flags.READ_WRITE, max(nbytes, 64)), done)
        return bufs

    def body(self, t: str, width: int, wg: int, deferred: Deferred | None,
             combine: bool = False) -> str:
        """The kernel: ``deferred`` None reduces a buffer of ``t``; else the elements
        are the deferred Map's or Zip's function of its inputs' elements (of an
        IndexVector: of the indices). Each group writes its partial result to
        ``out[group]``; with ``combine`` (more than one group) the last group to finish,
        told by an atomic count of the groups done, combines the partials into
        ``out[0]`` (as CUDA's threadFenceReduction: each group's partial is fenced
        before it counts, and the last group reads them through volatile loads, from
        the device-wide cache), so one launch gives the result."""
        f = cname(self.func)
        index = deferred is not None and isinstance(deferred.inputs[0], IndexVector)
        if deferred is None:
            names, types, extra_params, call = ["in0"], [t], "", None
            self.funcs = [self.func]
        else:
            sk = deferred.skeleton
            names = [f"in{i}" for i in range(len(deferred.inputs))]
            types = ["int" if index else v.ctype for v in deferred.inputs]
            extra_params, call = sk.extra_params(), (cname(sk.func), sk.extra_names())
            if sk.func.name == self.func.name and sk.func.source != self.func.source:
                raise skel_error("bad-function", f"the {sk.name} and Reduce functions are "
                                 f"both called '{sk.func.name}': rename one to fuse them")
            self.funcs = [self.func] + ([sk.func] if sk.func.name != self.func.name else [])
        params = [f"__global const {ty}* {nm}" for nm, ty in zip(names, types, strict=True)]

        def element(src: list[str]) -> str:
            return src[0] if call is None else f"{call[0]}({', '.join(src)}{call[1]})"

        def chunk(j: str, first: bool) -> list[str]:
            """Combine the ``width`` elements of run ``j`` into acc (start acc with the
            first when ``first``)."""
            out = []
            if index:
                srcs = [[f"(int)(offset + {j} * {width} + {c})"] for c in range(width)]
            elif width == 1:
                srcs = [[f"{nm}[skip + {j}]" for nm in names]]
            else:
                for i, (nm, ty) in enumerate(zip(names, types, strict=True)):
                    vt = _vector_type(ty, width)
                    out.append(f"    const {vt} v{i} = ((__global const {vt}*)({nm} + skip))"
                               f"[{j}];")
                srcs = [[f"v{i}.s{c}" for i in range(len(names))] for c in range(width)]
            for c, src in enumerate(srcs):
                e = element(src)
                out.append(f"    acc = {e};" if first and c == 0 else
                           f"    acc = {f}(acc, {e});")
            return out

        # the text names the functions it was made for (a cache of kernels keyed by
        # the text alone must not give one made for another function of the same name)
        made_for = "".join(f"{g.name}:{hashlib.sha1(g.source.encode()).hexdigest()[:12]} "
                           for g in self.funcs)
        done = ", __global uint* done" if combine else ""
        lines = [f"/* {made_for}*/",
                 f"__kernel void skel_reduce({', '.join(params)}{extra_params}, const uint n, "
                 f"const uint skip, const int offset, __global {t}* out{done})", "{",
                 f"  __local {t} acc_l[{wg}];",
                 "  const uint lid = get_local_id(0), gid = get_global_id(0);",
                 "  const uint G = get_global_size(0);",
                 f"  const uint chunks = n / {width}, rem = n - chunks * {width};",
                 f"  {t} acc = ({t})0;",
                 "  if (gid < chunks) {", *chunk("gid", True),
                 "    for (uint j = gid + G; j < chunks; j += G) {",
                 *["  " + s for s in chunk("j", False)], "    }", "  }"]
        if width > 1:       # the last n % width elements, one per work-item
            if index:
                tail = element([f"(int)(offset + chunks * {width} + gid)"])
            else:
                tail = element([f"{nm}[skip + chunks * {width} + gid]" for nm in names])
            lines += ["  if (gid < rem) {", f"    const {t} e = {tail};",
                      f"    acc = gid < chunks ? {f}(acc, e) : e;", "  }"]
        # the work-items that hold a value are a prefix: gid < max(chunks, rem)
        lines += ["  const uint have = max(chunks, rem);",
                  f"  const uint base = get_group_id(0) * {wg};",
                  f"  const uint active = have > base ? min(have - base, (uint){wg}) : 0u;",
                  *self._tree(f, wg, "active"),
                  "  if (lid == 0) out[get_group_id(0)] = acc_l[0];"]
        if combine:
            lines += ["  __local uint last;",
                      "  if (lid == 0) {",
                      "    mem_fence(CLK_GLOBAL_MEM_FENCE);   /* the partial, then the count */",
                      "    last = atomic_inc(done) == get_num_groups(0) - 1;",
                      "  }",
                      "  barrier(CLK_LOCAL_MEM_FENCE);",
                      "  if (last) {",
                      f"    volatile __global const {t}* part = out;",
                      "    const uint groups = get_num_groups(0);",
                      "    if (lid < groups) {",
                      "      acc = part[lid];",
                      f"      for (uint j = lid + {wg}; j < groups; j += {wg}) "
                      f"acc = {f}(acc, part[j]);",
                      "    }",
                      *["  " + x for x in self._tree(f, wg, f"min(groups, (uint){wg})")],
                      "    if (lid == 0) {",
                      "      out[0] = acc_l[0];",
                      "      *done = 0;",
                      "    }",
                      "  }"]
        return "\n".join([*lines, "}", ""])

    @staticmethod
    def _tree(f: str, wg: int, active: str) -> list[str]:
        """A work-group's values ``acc`` combined in local memory into ``acc_l[0]``;
        only the first ``active`` work-items hold one."""
        return ["  acc_l[lid] = acc;",
                "  barrier(CLK_LOCAL_MEM_FENCE);",
                f"  for (uint s = {wg // 2}; s > 0; s >>= 1) {{",
                f"    if (lid < s && lid + s < {active}) acc_l[lid] = {f}(acc_l[lid], "
                "acc_l[lid + s]);",
                "    barrier(CLK_LOCAL_MEM_FENCE);", "  }"]
