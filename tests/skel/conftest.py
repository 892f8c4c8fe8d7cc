"""mcl.skel tests run on 1, 2 and 3 PoCL CPU devices.

PoCL reads POCL_DEVICES when the OpenCL platform is first initialised, so three
pthread devices are asked for here, at collection, before any test touches OpenCL;
the other tests use the first device as before."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("POCL_DEVICES", "pthread pthread pthread")


def _pocl_count() -> int:
    from mcl.opencl import device as cldevice
    counts = {}
    for d in cldevice.all_devices():
        if "portable" in d.platform.name.lower() and cldevice.build_problem(d) is None:
            counts[d.platform.int_ptr] = counts.get(d.platform.int_ptr, 0) + 1
    return max(counts.values(), default=0)


@pytest.fixture(scope="session", autouse=True)
def skel_cache(tmp_path_factory):
    os.environ["MCL_SKEL_CACHE"] = str(tmp_path_factory.mktemp("skel-cache"))
    yield


@pytest.fixture(params=[1, 2, 3], ids=lambda n: f"{n}dev")
def ndev(request):
    """mcl.skel initialised on n PoCL devices."""
    import mcl.skel as sk
    n = request.param
    have = _pocl_count()
    if have < n:
        pytest.skip(f"PoCL offers {have} device(s) in this process (POCL_DEVICES was set "
                    "after OpenCL started); run tests/skel on its own")
    sk.init(num_devices=n, platform="Portable Computing Language")
    return n
