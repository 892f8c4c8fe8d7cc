"""mcl.skel across MPI ranks (mpi4py): each rank drives its own devices and the
distributions span ranks x devices. Every rank runs the same program (SPMD), so
every rank knows every part's place and validity; data moves between ranks with
point-to-point messages in the order all ranks compute alike.

A rank that stops with an exception its program does not catch would leave the others
waiting for its messages for ever: once the ranks are joined, such an exception is
printed (an mcl error as its message, naming the rank) and ends every rank
(MPI_Abort), unless every rank raised it alike (:func:`on_every_rank`), when they all
end with status 1 and rank 0 alone prints it."""

from __future__ import annotations

import os
import sys
import traceback
from pathlib import Path

import numpy as np

from mcl.diagnostics import McplError, render_text
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
    _end_every_rank_on_uncaught_exceptions(comm)
    counts = comm.allgather(len(devs.devices))
    if len(set(counts)) != 1:
        raise on_every_rank(skel_error(
            "mpi-devices", f"the MPI ranks have different numbers of devices ({counts})",
            hint="give every rank as many devices (num_devices=)"))
    devs.comm, devs.rank, devs.ranks = comm, comm.Get_rank(), comm.Get_size()


def on_every_rank(e: McplError) -> McplError:
    """``e``, marked as raised alike on every rank (decided from values all ranks
    gathered): uncaught, it ends the ranks without MPI_Abort, printed once."""
    e.every_rank = True
    return e


def same_on_every_rank(devs, kind: str, shape: tuple, dtype) -> None:
    """A usage error, on every rank, where the ranks made this container (their n-th)
    with different shapes or element types: its parts would be placed differently on
    each rank, and their messages would not match (a hang or a wrong result)."""
    if devs.ranks == 1:
        return
    mine = (tuple(int(s) for s in shape), np.dtype(dtype).str)
    every = devs.comm.allgather(mine)
    if all(v == mine for v in every):
        return
    seen = ", ".join(
        f"{v[0]} of {np.dtype(v[1])} on "
        + ranks_named([r for r, w in enumerate(every) if w == v])
        for v in dict.fromkeys(every))
    raise on_every_rank(skel_error(
        "mpi-mismatch", f"the {devs.ranks} MPI ranks made a {kind} of different shapes or "
        f"types: {seen}",
        hint=f"every rank runs the same program: give the {kind} the same shape and element "
             "type on every rank (each rank's data may differ)"))


def ranks_named(ranks: list[int], of: int | None = None) -> str:
    """"rank 1", "ranks 0, 2 and 3 of 4"."""
    total = "" if of is None else f" of {of}"
    if len(ranks) == 1:
        return f"rank {ranks[0]}{total}"
    return f"ranks {', '.join(map(str, ranks[:-1]))} and {ranks[-1]}{total}"


#: sys.excepthook before mcl.skel joined the ranks (None: not replaced)
_previous_hook = None


def _end_every_rank_on_uncaught_exceptions(comm) -> None:
    global _previous_hook
    if _previous_hook is not None:
        return
    _previous_hook = sys.excepthook

    def hook(kind, value, tb):
        rank, ranks = comm.Get_rank(), comm.Get_size()
        try:
            if isinstance(value, McplError):
                if getattr(value, "every_rank", False):
                    if rank == 0:
                        print(_message(value, tb, "every rank"), file=sys.stderr, flush=True)
                    return      # Python exits with status 1 on every rank
                print(_message(value, tb, ranks_named([rank], ranks)), file=sys.stderr,
                      flush=True)
            else:
                _previous_hook(kind, value, tb)
                print(f"mcl.skel: {ranks_named([rank], ranks)} stopped on {kind.__name__}"
                      "; ending every rank (MPI_Abort)", file=sys.stderr, flush=True)
        except BaseException:       # noqa: BLE001 - the ranks must end even then
            pass
        _abort(comm)

    sys.excepthook = hook


def _abort(comm) -> None:
    """MPI_Abort, once this rank's output is out: the launcher may end the job before it
    forwards what the rank wrote last (MPICH's did, one run in a few), so the rank closes
    its output and gives the launcher a moment to read it."""
    import time
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    for fd in (1, 2):
        try:
            os.close(fd)
        except OSError:
            pass
    time.sleep(0.2)
    comm.Abort(1)


def _message(e: McplError, tb, who: str) -> str:
    """An mcl error as the CLI prints it, with the program's line that raised it (the
    frame that called into mcl) and the ranks it was raised on."""
    root = str(Path(__file__).resolve().parents[1])
    where = None
    for frame in traceback.extract_tb(tb):
        if str(Path(frame.filename).resolve()).startswith(root):
            break
        where = frame
    text = render_text(e.diagnostics)
    at = f" at {where.filename}:{where.lineno}" if where is not None else ""
    return f"{text}\nmcl.skel: raised{at} on {who}"


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
