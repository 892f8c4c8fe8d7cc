"""mcl.skel across MPI ranks (mpi4py): each rank drives its own devices and the
distributions span ranks x devices. Every rank runs the same program (SPMD), so
every rank knows every part's place and validity; data moves between ranks with
point-to-point messages in the order all ranks compute alike.

A rank that stops with an exception its program does not catch would leave the others
waiting for its messages for ever: once the ranks are joined, such an exception is
printed (an mcl error as its message, naming the rank) and ends every rank
(MPI_Abort), unless every rank raised it alike (:func:`on_every_rank`), when they all
end with status 1 and rank 0 alone prints it. A rank whose interpreter exits
(sys.exit() or its program's end) tells the others how far it got and waits for them at
exit; a rank that then waits for a message or collective it never made ends every rank
with a message. Each skeleton call's scalars and distributions are compared across the
ranks (:func:`same_call_on_every_rank`)."""

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
    _end_every_rank_when_one_ends_early(comm)
    counts = _allgather(comm, len(devs.devices))
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
    every = _allgather(devs.comm, mine)
    if all(v == mine for v in every):
        return
    seen = _by_value([("", "", v) for v in every],
                     lambda c: f"{c[2][0]} of {np.dtype(c[2][1])}")
    raise on_every_rank(skel_error(
        "mpi-mismatch", f"the {devs.ranks} MPI ranks made a {kind} of different shapes or "
        f"types: {seen}",
        hint=f"every rank runs the same program: give the {kind} the same shape and element "
             "type on every rank (each rank's data may differ)"))


def same_call_on_every_rank(devs, skeleton, args: tuple, kwargs: dict) -> None:
    """A usage error, on every rank, where the ranks called this skeleton (their n-th
    call) differently: another skeleton, scalar arguments of different values (each
    rank would compute its parts with its own value: a result mixing them), or
    containers of different distributions (their parts would be placed differently on
    each rank: a hang or a wrong result). One allgather of the call's scalars and
    distributions, together."""
    if devs.ranks == 1:
        return
    what = _called(skeleton)
    mine = [("call", "", what)]
    _describe(skeleton, args, kwargs, "", mine)
    every = _allgather(devs.comm, mine)
    if all(len(v) == len(mine) and all(_same(a, b) for a, b in zip(v, mine, strict=True))
           for v in every):
        return
    calls = [v[0][2] for v in every]
    if len(set(calls)) > 1 or len({len(v) for v in every}) > 1:
        seen = _by_value([(c,) for c in calls], lambda v: v[0])
        raise on_every_rank(skel_error(
            "mpi-mismatch", f"the {devs.ranks} MPI ranks made different skeleton calls: {seen}",
            hint="every rank runs the same program: make the same skeleton calls, in the same "
                 "order, on every rank"))
    for i, (kind, label, _v) in enumerate(mine):
        column = [v[i] for v in every]
        if all(_same(c, column[0]) for c in column):
            continue
        if kind == "dist":
            seen = _by_value(column, lambda c: c[2][0])
            raise on_every_rank(skel_error(
                "mpi-mismatch", f"the {devs.ranks} MPI ranks gave {label} of {what} different "
                f"distributions: {seen}",
                hint="every rank runs the same program: set the same distribution on every "
                     "rank (devices are numbered across the ranks: single(d) names one "
                     "device of one rank)"))
        seen = _by_value(column, lambda c: repr(c[2]))
        raise on_every_rank(skel_error(
            "mpi-mismatch", f"the {devs.ranks} MPI ranks called {what} with different values "
            f"of {label}: {seen}",
            hint="every rank runs the same program: pass the same arguments on every rank "
                 "(each rank's data may differ; values that differ by rank belong in a "
                 "container)"))


def _called(skeleton) -> str:
    func = getattr(skeleton, "func", None)
    return f"{skeleton.name} '{func.name}'" if func is not None else skeleton.name


def _describe(skeleton, args: tuple, kwargs: dict, of: str, out: list) -> None:
    """(kind, label, value) of each argument of a call that every rank must pass alike:
    a container's distribution ("dist", its layout and its text), a scalar's value."""
    from mcl.skel.container import Container
    from mcl.skel.reduce import Deferred
    func = getattr(skeleton, "func", None)
    params = func.params if func is not None else []
    for i, a in enumerate(args):
        if i < skeleton.inputs:
            label = f"input {i + 1}{of}" if skeleton.inputs > 1 else f"the input{of}"
        elif i < len(params):
            label = f"argument '{params[i].name}'{of}"
        else:
            label = f"argument {i + 1}{of}"
        if isinstance(a, Deferred):
            _describe(a.skeleton, a.inputs + tuple(a.args), {},
                      f" of {_called(a.skeleton)}", out)
        elif isinstance(a, Container):
            d = a.distribution
            merge = getattr(getattr(d, "merge", None), "name", None)
            out.append(("dist", f"the {a.kind} passed as {label}",
                        ("none set" if d is None else str(d),
                         None if d is None else d.layout(), merge)))
        else:
            out.append(("value", label, _plain(a)))
    for k, a in kwargs.items():
        out.append(("value", f"{k}={of}", _plain(a)))


def _plain(a):
    """A scalar argument as a plain Python value (compared by value across ranks)."""
    if isinstance(a, np.ndarray) and a.ndim == 0:
        a = a[()]
    if isinstance(a, np.generic):
        return a.item()
    if a is None or isinstance(a, bool | int | float | complex | str):
        return a
    return f"<{type(a).__name__}>"


def _same(a: tuple, b: tuple) -> bool:
    if a[:2] != b[:2]:
        return False
    x, y = a[2], b[2]
    if isinstance(x, float) and isinstance(y, float) and x != x and y != y:
        return True             # NaN on both
    return type(x) is type(y) and x == y or (
        isinstance(x, int | float) and isinstance(y, int | float) and x == y)


def _by_value(column: list, text) -> str:
    """"0.0 on rank 0, 1.0 on rank 1": each value with the ranks that have it."""
    groups: dict = {}
    for r, c in enumerate(column):
        for key in groups:
            if _same(("", "", key[1]), ("", "", c[-1])):
                groups[key].append(r)
                break
        else:
            groups[(text(c), c[-1])] = [r]
    return ", ".join(f"{t} on {ranks_named(rs)}" for (t, _v), rs in groups.items())


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
    _sent[to] = n = _sent.get(to, 0) + 1
    _wait(devs.comm.Isend(data, dest=to, tag=17),
          lambda r, done: r == to and done[2] < n)


def recv(devs, data: np.ndarray, source: int) -> None:
    _received[source] = n = _received.get(source, 0) + 1
    _wait(devs.comm.Irecv(data, source=source, tag=17),
          lambda r, done: r == source and done[1] < n)


def bcast_rows(devs, view: np.ndarray, root: int) -> None:
    buf = np.ascontiguousarray(view)
    n = _collective()
    _wait(devs.comm.Ibcast(buf.view(np.uint8).reshape(-1), root=root),
          lambda r, done: done[0] < n)
    view[...] = buf


def _allgather(comm, value) -> list:
    """comm.allgather(value), entered once every rank has entered it (a non-blocking
    barrier first, waited for as :func:`_wait` does): a rank that ended before it is
    said instead of waited for."""
    n = _collective()
    _wait(comm.Ibarrier(), lambda r, done: done[0] < n)
    return comm.allgather(value)


def allgather_values(devs, values: list) -> list:
    """Every rank's list of values, concatenated in rank order."""
    if devs.ranks == 1:
        return values
    out = []
    for part in _allgather(devs.comm, values):
        out.extend(part)
    return out


# ---- a rank that ends while the others still need it

#: mcl.skel's messages and collectives so far: collectives, messages sent to / received
#: from each rank. A rank that ends tells every other rank its counts; a rank waiting for
#: a message or collective that the ended rank never made then knows it never comes.
_collectives = 0
_sent: dict = {}
_received: dict = {}
#: the ranks that ended: rank -> (collectives, messages sent to this rank, received)
_ended: dict = {}
#: the communicator of the notices and the final agreement (a copy of the ranks': its
#: barrier cannot match one of mcl.skel's), None before the ranks are joined
_exit_comm = None
_EXIT_TAG = 23


def _collective() -> int:
    global _collectives
    _collectives += 1
    return _collectives


def _end_every_rank_when_one_ends_early(comm) -> None:
    """At the interpreter's exit (the program's end, or sys.exit() on this rank), tell
    every other rank how far this rank got, then wait (as MPI_Finalize would) until every
    rank has ended. A rank still running that waits in mcl.skel for a message or
    collective this rank never made ends every rank with a message (MPI_Abort) instead
    of waiting for ever; ranks that all reach their end finish normally, however far
    apart in time."""
    global _exit_comm
    if _exit_comm is not None:
        return
    import atexit
    _exit_comm = comm.Dup()
    atexit.register(_at_exit, comm)


def _at_exit(comm) -> None:
    from mpi4py import MPI
    if MPI.Is_finalized():
        return
    me, ranks = comm.Get_rank(), comm.Get_size()
    notices = []
    for r in range(ranks):
        if r != me:
            counts = np.array([_collectives, _sent.get(r, 0), _received.get(r, 0)], np.int64)
            notices.append((counts, _exit_comm.Isend(counts, dest=r, tag=_EXIT_TAG)))
    _wait(_exit_comm.Ibarrier(), None)
    for r in range(ranks):
        if r != me and r not in _ended:
            _take_notice(r)
    MPI.Request.Waitall([req for _c, req in notices])


def _take_notice(source: int) -> None:
    counts = np.zeros(3, np.int64)
    _exit_comm.Recv(counts, source=source, tag=_EXIT_TAG)
    _ended[source] = tuple(int(c) for c in counts)


def _wait(req, never) -> None:
    """Wait for ``req``, reading the notices of ranks that ended meanwhile: where
    ``never(rank, its counts)`` says that an ended rank never made what ``req`` waits
    for, the wait would last for ever: every rank is ended with a message."""
    import time
    if req.Test():
        return
    from mpi4py import MPI
    status = MPI.Status()
    spins = 0
    while True:
        for r, done in list(_ended.items()):
            if never is not None and never(r, done):
                _ended_early(r)
        if req.Test():
            return
        if _exit_comm.Iprobe(source=MPI.ANY_SOURCE, tag=_EXIT_TAG, status=status):
            _take_notice(status.Get_source())
            continue
        spins += 1
        if spins > 2000:
            time.sleep(0.0005)


def _ended_early(rank: int) -> None:
    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    me, ranks = comm.Get_rank(), comm.Get_size()
    print(f"mcl.skel: {ranks_named([rank], ranks)} ended (sys.exit(...) or the end of its "
          f"program) while the other ranks still ran ({ranks_named([me])} waited for it); "
          "ending every rank (MPI_Abort)", file=sys.stderr, flush=True)
    _abort(comm)
