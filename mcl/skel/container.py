"""Containers: ``Vector`` and ``Matrix`` whose data lives on the host and/or the
devices, moved lazily. Each copy (the host's, each device part's own rows, its halo
rows) has a validity flag; a skeleton states the distribution it needs and the
container makes it so, moving only what is not valid where it is needed."""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np

from mcl.diagnostics import article
from mcl.masked_arrays import refuse_masked
from mcl.skel import transfer
from mcl.skel.context import Devices, current
from mcl.skel.distribution import Distribution, PartSpec, block
from mcl.skel.errors import skel_error
from mcl.skel.functions import ctype_of
from mcl.skel.mpi import same_on_every_rank


@dataclass
class Part:
    spec: PartSpec
    buffer: object          # a pyopencl Buffer on this rank, None elsewhere or when empty
    valid: bool = False     # own rows
    halo_valid: bool = False

    @property
    def device(self) -> int:
        return self.spec.device


#: the most elements a container holds: the skeletons' kernels index with 32-bit integers
MAX_ELEMENTS = 2 ** 31 - 1


def _size(kind: str, s) -> int:
    """A size of a container made without data: a whole number (2.0 is 2; 5.5 rows
    are none)."""
    whole = isinstance(s, numbers.Integral) or (isinstance(s, numbers.Real) and
                                                 float(s).is_integer())
    if isinstance(s, bool) or not whole:
        raise skel_error("bad-container", f"{article(kind)}'s size must be a whole number, not "
                         f"{s!r:.40}", hint="give an int (or numpy integer)")
    return int(s)


def _dtype(dtype) -> np.dtype:
    """``dtype`` as a numpy type: a usage error for what numpy does not read as one."""
    try:
        return np.dtype(dtype)
    except TypeError as e:
        raise skel_error("unsupported-type", f"{dtype!r:.40} is not an element type",
                         hint="use float32, float64, int8..int64 or uint8..uint64") from e


def _array(kind: str, data, dtype) -> np.ndarray:
    """A C-ordered copy of ``data`` in native byte order (a big-endian float32 array
    holds float32 numbers): a usage error for what numpy cannot make an array of numbers
    of (nested lists of different lengths, strings for a numeric ``dtype``)."""
    dt = None if dtype is None else _dtype(dtype)
    # np.array drops a mask: the container would hold the masked-out elements as values
    refuse_masked(data, "skel-bad-container", f"the data of a {kind}", f"the {kind}", "data")
    try:
        arr = np.array(data, dtype=dt, copy=True, order="C")
    except (ValueError, TypeError) as e:
        raise skel_error("bad-container", f"a {kind} of {data!r:.60}: not an array of "
                         f"numbers ({e})", hint="give a numpy array, or nested lists of "
                         "numbers whose rows have the same length") from e
    if not arr.dtype.isnative:
        arr = arr.astype(arr.dtype.newbyteorder("="))
    return arr


def _check_count(kind: str, shape: tuple) -> None:
    """A usage error for a container of a negative size, or of more than
    :data:`MAX_ELEMENTS` elements (an AllPairs of 60000 rows and 60000 columns, 3.6e9
    results), which the kernels' 32-bit indices would wrap round on."""
    if any(int(s) < 0 for s in shape):
        raise skel_error("negative-size", f"{article(kind)} of shape {tuple(shape)}: a size "
                         "cannot be negative", hint="give sizes of 0 or more")
    count = math.prod(int(s) for s in shape)
    if count > MAX_ELEMENTS:
        raise skel_error("too-large", f"{article(kind)} of shape {tuple(shape)} holds {count:,} "
                         f"elements; mcl.skel's kernels index with 32-bit integers, up to "
                         f"{MAX_ELEMENTS:,}", hint="split the data into containers of fewer "
                         "elements (their parts on several devices still count as one)")


class Container:
    """Common to Vector and Matrix: rows of ``row_size`` elements."""

    kind = "container"

    def __init__(self, data=None, shape=None, dtype=None, distribution=None):
        self._devs: Devices = current()
        if data is not None:
            arr = _array(self.kind, data, dtype)
            self._check_shape(arr.shape)
            self._host = arr
            self.shape = arr.shape
            self.dtype = arr.dtype
        else:
            if shape is None:
                raise skel_error("bad-container", f"a {self.kind} needs data (a numpy array) "
                                 "or a size")
            if isinstance(shape, str) or not isinstance(shape, tuple | list):
                raise skel_error("bad-container", f"a {self.kind}'s shape is a tuple of "
                                 f"sizes, not {shape!r:.40}", hint="e.g. shape=(rows, cols)")
            self.shape = self._check_shape(tuple(_size(self.kind, s) for s in shape))
            self.dtype = _dtype(dtype or np.float32)
            self._host = None        # zeros until written: allocated when first needed
        ctype_of(self.dtype)
        _check_count(self.kind, self.shape)
        same_on_every_rank(self._devs, self.kind, self.shape, self.dtype)
        self._host_valid = True
        self._dist: Distribution | None = None
        self._parts: list[Part] = []
        self._placed: Distribution | None = None    # the distribution the parts follow
        self._merge_from = None
        if distribution is not None:
            self.distribution = distribution

    @classmethod
    def _blank(cls, devs: Devices, shape: tuple, dtype) -> Container:
        """A container of ``shape`` on ``devs`` with no data anywhere yet and no
        distribution, made without the constructor's checks (a skeleton's output, whose
        shape and type are those of valid containers)."""
        _check_count(cls.kind, shape)
        out = cls.__new__(cls)
        out._devs = devs
        out.shape = shape
        out.dtype = np.dtype(dtype)
        out._host = None
        out._host_valid = True
        out._dist = out._placed = None
        out._parts = []
        out._merge_from = None
        return out

    # ---- shape

    def _check_shape(self, shape):
        return shape

    @property
    def rows(self) -> int:
        return self.shape[0]

    @property
    def row_size(self) -> int:
        return int(math.prod(self.shape[1:]))

    @property
    def size(self) -> int:
        return int(math.prod(self.shape))

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    def __len__(self) -> int:
        return self.rows

    @property
    def ctype(self) -> str:
        return ctype_of(self.dtype)

    # ---- distribution

    @property
    def distribution(self) -> Distribution | None:
        return self._dist

    @distribution.setter
    def distribution(self, d: Distribution) -> None:
        if not isinstance(d, Distribution):
            raise skel_error("bad-distribution", f"{d!r} is not a distribution",
                             hint="use mcl.skel.single(), copy(), block() or overlap(n)")
        if d.kind == "single":
            self._devs.check_index(d.device)
        if d.kind == "overlap":
            if self.kind != "Matrix":
                raise skel_error("needs-matrix", "the overlap distribution is for matrices "
                                 "(block rows plus halo rows)", hint="use block() for a Vector")
            per = self.rows // self._devs.count
            if self._devs.count > 1 and max(d.top, d.bottom) > per:
                raise skel_error("overlap-too-large", f"an overlap of {max(d.top, d.bottom)} "
                                 f"rows is larger than a block of {per} rows ({self.rows} rows "
                                 f"over {self._devs.count} devices)",
                                 hint="use fewer devices or a smaller overlap")
        old = self._dist
        if old is not None and old.kind == "copy" and not d.same_layout(old):
            self._merge_from = old.merge
        self._dist = d      # data moves when a skeleton or the host needs it

    def _same_devices(self, devs: Devices) -> None:
        if self._devs is not devs:
            raise skel_error("stale-container", "this container was made before "
                             "mcl.skel.init() chose other devices", hint="make it again")

    # ---- host side

    def _host_array(self) -> np.ndarray:
        if self._host is None:
            self._host = np.zeros(self.shape, self.dtype)
        return self._host

    def to_numpy(self) -> np.ndarray:
        """A copy of the data on the host (downloads what the host lacks)."""
        return self._fetch().copy()

    def __array__(self, dtype=None, copy=None):
        a = self._fetch()
        if dtype is not None and np.dtype(dtype) != a.dtype:
            return a.astype(dtype)
        view = a.view()
        view.flags.writeable = False
        return view

    def __getitem__(self, index):
        return self._fetch()[index]

    def __setitem__(self, index, value) -> None:
        # numpy's assignment copies a masked array's data, the masked-out elements too
        refuse_masked(value, "skel-bad-container", f"the value written into a {self.kind}",
                      f"the {self.kind}", "value")
        a = self._fetch()
        a[index] = value
        for p in self._parts:
            p.valid = p.halo_valid = False

    def _fetch(self) -> np.ndarray:
        if not self._host_valid:
            if self._dist is not None and self._dist.kind == "copy":
                self._merge_from = self._dist.merge
            transfer.download(self)
            self._host_valid = True
        return self._host_array()

    def __del__(self):
        parts = getattr(self, "_parts", None)
        if parts:
            try:
                transfer.release(self._devs, parts, self.row_size * self.dtype.itemsize)
            except Exception:  # noqa: BLE001 - never raise from a finaliser at exit
                pass

    def __repr__(self) -> str:
        return f"{self.kind}(shape={self.shape}, dtype={self.dtype}, distribution={self._dist})"

    # ---- device side, used by skeletons

    def _ensure(self, default: Distribution | None = None, halo: bool = False) -> list[Part]:
        """Make the parts of the distribution (``default`` if none is set) valid on
        the devices (halo rows too when ``halo``) and return them."""
        if self._dist is None:
            self._dist = default or block()
        transfer.materialize(self, halo)
        return self._parts

    def _written(self, parts: list[Part]) -> None:
        """Parts a skeleton just wrote (own rows): the host and halos are stale."""
        self._host_valid = False
        for p in parts:
            p.valid = True
            p.halo_valid = p.spec.lo == p.spec.own_lo and p.spec.hi == p.spec.own_hi


def _scalar(data) -> bool:
    """Whether ``data`` has no dimension (nested lists of different lengths have some:
    the constructor says what is wrong with them)."""
    try:
        return np.ndim(data) == 0
    except ValueError:
        return False


class Vector(Container):
    """A one-dimensional container: ``Vector(array)`` or ``Vector(size, dtype)``."""

    kind = "Vector"

    def __init__(self, data=None, dtype=None, distribution=None, *, size=None):
        if data is not None and _scalar(data) and size is None:
            if isinstance(data, np.ndarray) or not isinstance(data, int | np.integer) \
                    or isinstance(data, bool):
                raise skel_error("needs-vector", f"a Vector of {data!r:.40}: a Vector holds "
                                 "a one-dimensional array, or is made with a size (an "
                                 "integer)", hint="Vector(np.atleast_1d(a)) holds one "
                                 "element; Vector(size=n) holds n zeros")
            size, data = int(data), None
        super().__init__(data, None if size is None else (size,), dtype, distribution)

    def _check_shape(self, shape):
        if len(shape) != 1:
            raise skel_error("needs-vector", f"a Vector is one-dimensional; got shape {shape}",
                             hint="use mcl.skel.Matrix for two dimensions")
        return shape


class Matrix(Container):
    """A two-dimensional, row-major container: ``Matrix(array)`` or
    ``Matrix((rows, cols), dtype)``."""

    kind = "Matrix"

    def __init__(self, data=None, dtype=None, distribution=None, *, shape=None):
        if data is not None and isinstance(data, tuple) and shape is None \
                and all(isinstance(x, int) for x in data):
            shape, data = data, None
        super().__init__(data, shape, dtype, distribution)

    def _check_shape(self, shape):
        if len(shape) != 2:
            raise skel_error("needs-matrix", f"a Matrix is two-dimensional; got shape {shape}",
                             hint="use mcl.skel.Vector for one dimension")
        return shape

    @property
    def cols(self) -> int:
        return self.shape[1]


class IndexVector(Vector):
    """The indices 0 .. n-1 without storage: a Map over it computes from the index
    (SkelCL's ``Vector<Index>``). Parts hold no buffer; the kernel adds the offset."""

    kind = "IndexVector"

    def __init__(self, n: int, distribution=None):
        self._devs = current()
        self.shape = (_size(self.kind, n),)
        _check_count(self.kind, self.shape)
        self.dtype = np.dtype(np.int32)
        same_on_every_rank(self._devs, self.kind, self.shape, self.dtype)
        self._host = None
        self._host_valid = True
        self._dist = None
        self._parts = []
        self._placed = None
        self._merge_from = None
        if distribution is not None:
            self.distribution = distribution

    def _host_array(self):
        if self._host is None:
            self._host = np.arange(self.rows, dtype=self.dtype)
        return self._host

    def __setitem__(self, index, value):
        raise skel_error("read-only", "an IndexVector cannot be written")

    def _ensure(self, default=None, halo=False):
        if self._dist is None:
            self._dist = default or block()
        if not self._parts or not self._dist.same_layout(self._placed):
            specs = self._dist.parts(self.rows, self._devs.count)
            self._parts = [Part(s, None, True, True) for s in specs]
            self._placed = self._dist
        return self._parts


def container_class(shape: tuple) -> type[Container]:
    """The container a skeleton's output of ``shape`` is: a Matrix of two dimensions,
    else a Vector (a Map over an IndexVector gives a Vector)."""
    return Matrix if len(shape) == 2 else Vector


def check_zip_inputs(a, b) -> None:
    """Zip's inputs: two Vectors or two Matrices of one shape on the same devices."""
    for i, v in enumerate((a, b)):
        if not isinstance(v, Container) or isinstance(v, IndexVector):
            what = type(v).__name__
            raise skel_error("bad-arguments", f"Zip takes two Vectors or two Matrices; its "
                             f"{('first', 'second')[i]} input is "
                             f"{'an' if what[0] in 'AEIOU' else 'a'} {what}",
                             hint="make a container of an array first: mcl.skel.Vector(array)"
                             if isinstance(v, np.ndarray) else None)
    if a.kind != b.kind or a.shape != b.shape:
        raise skel_error("size-mismatch", f"Zip needs inputs of the same shape; got "
                         f"{a.kind} {a.shape} and {b.kind} {b.shape}")
    b._same_devices(a._devs)
