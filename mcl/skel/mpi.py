"""mcl.skel across MPI ranks (mpi4py): each rank drives its own devices and the
distributions span ranks x devices. Every rank runs the same program (SPMD), so
every rank knows every part's place and validity; data moves between ranks with
point-to-point messages in the order all ranks compute alike."""

from __future__ import annotations

import os

import numpy as np

from mcl.skel.errors import skel_error


def launched_by_mpiexec() -> bool:
    return any(k in os.environ for k in ("PMI_SIZE", "PMI_RANK", "OMPI_COMM_WORLD_SIZE",
                                         "PMIX_RANK", "MPI_LOCALNRANKS"))


def attach(devs, use_mpi: bool | None) -> None:
    """Join the MPI ranks when asked (or when started by mpiexec with several ranks)."""
    if use_mpi is False or (use_mpi is None and not launched_by_mpiexec()):
        return
    try:
        from mpi4py import MPI
    except ImportError as e:
        if use_mpi:
            raise skel_error("no-mpi", f"mpi4py cannot be imported ({e})",
                             hint="pip install mpi4py mpich") from e
        return
    comm = MPI.COMM_WORLD
    if comm.Get_size() == 1:
        return
    counts = comm.allgather(len(devs.devices))
    if len(set(counts)) != 1:
        raise skel_error("mpi-devices", f"the MPI ranks have different numbers of devices "
                         f"({counts})", hint="give every rank as many devices (num_devices=)")
    devs.comm, devs.rank, devs.ranks = comm, comm.Get_rank(), comm.Get_size()


def send(devs, data: np.ndarray, to: int) -> None:
    devs.comm.Send(data, dest=to, tag=17)


def recv(devs, data: np.ndarray, source: int) -> None:
    devs.comm.Recv(data, source=source, tag=17)


def bcast_rows(devs, view: np.ndarray, root: int) -> None:
    buf = np.ascontiguousarray(view)
    devs.comm.Bcast(buf.view(np.uint8).reshape(-1), root=root)
    view[...] = buf


def allgather_values(devs, values: list) -> list:
    """Every rank's list of values, concatenated in rank order."""
    if devs.ranks == 1:
        return values
    out = []
    for part in devs.comm.allgather(values):
        out.extend(part)
    return out
