"""mcl.skel across two MPI ranks (mpiexec -n 2) on PoCL: every skeleton, the
redistributions between ranks, reduce/scan combined through MPI, halo exchange."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

HERE = Path(__file__).parent


@pytest.mark.parametrize("per_rank", [1, 2])
def test_two_ranks(per_rank, mpi_ranks):
    run = mpi_ranks(HERE / "mpi_program.py", per_rank, per_rank=per_rank)
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
