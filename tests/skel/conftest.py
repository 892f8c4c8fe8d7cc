"""mcl.skel tests run on 1, 2 and 3 PoCL CPU devices.

PoCL reads POCL_DEVICES when the OpenCL platform is first initialised; tests/conftest.py
asks for three pthread devices before anything touches OpenCL (the other tests use
the first device as before)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]


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
def one_pocl_device():
    """mcl.skel on one PoCL device (``pytestmark = pytest.mark.usefixtures(...)``)."""
    import mcl.skel as sk
    sk.init(num_devices=1, platform="Portable Computing Language")


@pytest.fixture
def on_devices():
    """``on_devices(n)``: mcl.skel on n PoCL devices, for tests that are not run on all."""
    return use_devices


def _mpiexec() -> str | None:
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return None
    local = Path(sys.executable).parent / "mpiexec"
    return str(local) if local.exists() else shutil.which("mpiexec")


@pytest.fixture
def mpi_ranks(tmp_path_factory):
    """``mpi_ranks(program, *args, per_rank=1, timeout=300)``: the finished
    ``mpiexec -n 2 python program args`` (PoCL, ``per_rank`` devices a rank); skips
    where mpi4py or mpiexec is missing. A run past ``timeout`` (ranks waiting for each
    other for ever) fails the test."""
    mpiexec = _mpiexec()
    if mpiexec is None:
        pytest.skip("mpi4py or mpiexec is not installed (pip install mpi4py mpich)")
    cache = tmp_path_factory.getbasetemp() / "skel-mpi-cache"

    def run(program, *args, per_rank: int = 1, timeout: float = 300):
        env = dict(os.environ, POCL_DEVICES=" ".join(["pthread"] * per_rank),
                   PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
                   MCL_SKEL_CACHE=str(cache))
        env.pop("MCL_SKEL_DEVICES", None)
        if os.geteuid() == 0:
            # Open MPI's mpiexec refuses to start as root unless told (containers run
            # as root: the GPU machine); MPICH's ignores these
            env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        cmd = [mpiexec, "-n", "2", sys.executable, str(program), *map(str, args)]
        # a new session: a run past its time is ended with every rank it started
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, start_new_session=True)
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            out, err = proc.communicate()
            pytest.fail(f"mpiexec -n 2 {Path(program).name} {' '.join(map(str, args))} "
                        f"still ran after {timeout} s (ranks waiting for each other?)\n"
                        f"{out}{err}")
        return subprocess.CompletedProcess(cmd, proc.returncode, out, err)
    return run
