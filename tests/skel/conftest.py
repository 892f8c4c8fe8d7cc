"""mcl.skel tests run on 1, 2 and 3 PoCL CPU devices.

PoCL reads POCL_DEVICES when the OpenCL platform is first initialised; tests/conftest.py
asks for three pthread devices before anything touches OpenCL (the other tests use
the first device as before)."""

from __future__ import annotations

import os

import pytest


def _pocl_count() -> int:
    from mcl.opencl import device as cldevice
    counts = {}
    for d in cldevice.all_devices():
        if "portable" in d.platform.name.lower() and cldevice.build_problem(d) is None:
            counts[d.platform.int_ptr] = counts.get(d.platform.int_ptr, 0) + 1
    return max(counts.values(), default=0)


@pytest.fixture(autouse=True)
def pocl_by_default(monkeypatch):
    """What a program chooses with the defaults (``sk.init()``, ``mcl skel explain``) is
    PoCL too, where a GPU would be preferred (the GPU machine, where MCL_DEVICE names
    NVIDIA's driver): these tests count PoCL's devices."""
    monkeypatch.setenv("MCL_DEVICE", "Portable Computing Language:")


@pytest.fixture(scope="session", autouse=True)
def skel_cache(tmp_path_factory):
    os.environ["MCL_SKEL_CACHE"] = str(tmp_path_factory.mktemp("skel-cache"))
    yield


@pytest.fixture(params=[1, 2, 3], ids=lambda n: f"{n}dev")
def ndev(request):
    """mcl.skel initialised on n PoCL devices."""
    return use_devices(request.param)


def use_devices(n: int) -> int:
    """Initialise mcl.skel on n PoCL devices (skip when PoCL offers fewer)."""
    import mcl.skel as sk
    have = _pocl_count()
    if have < n:
        pytest.skip(f"PoCL offers {have} device(s) in this process (POCL_DEVICES was set "
                    "after OpenCL started)")
    sk.init(num_devices=n, platform="Portable Computing Language")
    return n


@pytest.fixture
def on_devices():
    """``on_devices(n)``: mcl.skel on n PoCL devices, for tests that are not run on all."""
    return use_devices
