"""SkelCL in mcl: algorithmic skeletons over containers distributed on several
OpenCL devices (and MPI ranks), customised by OpenCL C or MCPL functions.

``Vector``/``Matrix`` hold data on the host and/or the devices and move it lazily;
``single``/``copy``/``block``/``overlap`` say where; ``Map``, ``Zip``, ``Reduce``,
``Scan``, ``MapOverlap``, ``Stencil`` and ``AllPairs`` compute; ``explain`` says what
a call moves over which link and what it computes per device."""

from mcl.skel.allpairs import AllPairs
from mcl.skel.container import IndexVector, Matrix, Vector
from mcl.skel.context import current, init
from mcl.skel.distribution import block, copy, overlap, single
from mcl.skel.explanation import explain, load_node
from mcl.skel.functions import mcpl_function
from mcl.skel.reduce import Deferred, Reduce
from mcl.skel.skeletons import Map, Scan, Zip
from mcl.skel.stencil import NEAREST, NEUTRAL, MapOverlap, Stencil

__all__ = ["init", "current", "Vector", "Matrix", "IndexVector", "single", "copy", "block",
           "overlap", "Map", "Zip", "Reduce", "Deferred", "Scan", "MapOverlap", "Stencil",
           "AllPairs", "NEUTRAL", "NEAREST", "mcpl_function", "explain", "load_node"]
