"""mcl.skel across two MPI ranks (mpiexec -n 2) on PoCL: every skeleton, the
redistributions between ranks, reduce/scan combined through MPI, halo exchange."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
ROOT = HERE.parents[1]


def _mpiexec() -> str | None:
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return None
    local = Path(sys.executable).parent / "mpiexec"
    return str(local) if local.exists() else shutil.which("mpiexec")


@pytest.mark.parametrize("per_rank", [1, 2])
def test_two_ranks(per_rank, tmp_path):
    mpiexec = _mpiexec()
    if mpiexec is None:
        pytest.skip("mpi4py or mpiexec is not installed (pip install mpi4py mpich)")
    env = dict(os.environ, POCL_DEVICES=" ".join(["pthread"] * per_rank),
               PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               MCL_SKEL_CACHE=str(tmp_path))
    env.pop("MCL_SKEL_DEVICES", None)
    if os.geteuid() == 0:
        # Open MPI's mpiexec refuses to start as root unless told (containers run as
        # root: the GPU machine); MPICH's ignores these
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    run = subprocess.run([mpiexec, "-n", "2", sys.executable, str(HERE / "mpi_program.py"),
                          str(per_rank)], env=env, capture_output=True, text=True, timeout=300)
    out = run.stdout
    assert run.returncode == 0, out + run.stderr
    # the ranks share stdout: a line's newline may come after the other rank's text
    found = sorted(re.findall(r"rank (\d) of 2, (\d+) devices: (ok|FAILED[^;]*); sent (\d+) "
                              r"bytes", out))
    assert [f[0] for f in found] == ["0", "1"], out + run.stderr
    assert all(f[2] == "ok" for f in found), out + run.stderr
    assert all(int(f[1]) == 2 * per_rank for f in found)
    # the ranks really exchanged data (redistributions, halos)
    assert all(int(f[3]) > 0 for f in found)
