"""Misuse of mcl.skel across two MPI ranks (mpiexec -n 2, one PoCL device a rank): a
read beyond a MapOverlap's or Stencil's reach through an offset taken from the data
(only the run-time flags see it; the rows read are on one rank), containers of
different sizes on different ranks, an exception on one rank. Each ends the program
with a clear message and a non-zero status, never with ranks waiting for each other
for ever (the runs have a short time limit); reads within the reach stay correct."""

from __future__ import annotations

from pathlib import Path

PROGRAM = Path(__file__).parent / "mpi_misuse_program.py"
#: seconds a run may take: one takes a few, a hang would take for ever
LIMIT = 120


def test_reads_within_the_reach_through_offsets_from_the_data_are_correct(mpi_ranks):
    run = mpi_ranks(PROGRAM, "within", timeout=LIMIT)
    assert run.returncode == 0, run.stdout + run.stderr
    for rank in (0, 1):
        assert f"rank {rank}: mapoverlap ok, stencil ok" in run.stdout, run.stdout + run.stderr


def test_a_read_beyond_the_reach_on_one_rank_is_an_error_on_every_rank(mpi_ranks):
    """Only rank 1's rows read 3 rows up (size 1): both ranks raise the same error,
    naming rank 1; left uncaught it ends every rank with status 1, printed once as a
    message (not a traceback) at the program's line."""
    run = mpi_ranks(PROGRAM, "beyond", timeout=LIMIT)
    assert run.returncode != 0, run.stdout + run.stderr
    for rank in (0, 1):
        assert (f"rank {rank} caught: 'follow' read a neighbour 3 row(s) up (through an "
                "offset computed at run time) on rank 1 of 2, beyond the MapOverlap's reach "
                "(size 1)") in run.stdout, run.stdout + run.stderr
    assert "went on" not in run.stdout and "no error" not in run.stdout
    err = run.stderr
    assert err.count("[skel-reads-beyond-reach]") == 1, err
    assert "beyond the Stencil's reach" in err and "on rank 1 of 2" in err
    assert "help: give the Stencil a shape (up, right, down, left) of at least (3, 1, 1, 1)" \
        in err
    assert f"raised at {PROGRAM}:" in err and "on every rank" in err
    assert "Traceback" not in err


def test_containers_of_different_sizes_on_the_ranks_are_an_error(mpi_ranks):
    run = mpi_ranks(PROGRAM, "sizes", timeout=LIMIT)
    assert run.returncode != 0, run.stdout + run.stderr
    err = run.stderr
    assert ("the 2 MPI ranks made a Vector of different shapes or types: (100,) of float32 "
            "on rank 0, (103,) of float32 on rank 1 [skel-mpi-mismatch]") in err, err
    assert "Traceback" not in err
    assert "rank 0:" not in run.stdout and "rank 1:" not in run.stdout


def test_an_exception_on_one_rank_ends_every_rank(mpi_ranks):
    """Rank 1 raises while rank 0 waits for its part: its traceback is printed and
    every rank ends (rank 0 waited for ever before)."""
    run = mpi_ranks(PROGRAM, "raise", timeout=LIMIT)
    assert run.returncode != 0, run.stdout + run.stderr
    assert "ValueError: a bug on rank 1 only" in run.stderr, run.stderr
    assert "mcl.skel: rank 1 of 2 stopped on ValueError; ending every rank" in run.stderr
    assert "rank 0:" not in run.stdout


def test_an_mcl_error_on_one_rank_ends_every_rank_with_its_message(mpi_ranks):
    run = mpi_ranks(PROGRAM, "local-mcl", timeout=LIMIT)
    assert run.returncode != 0, run.stdout + run.stderr
    err = run.stderr
    assert "there is no device 7" in err and "[skel-no-such-device]" in err, err
    assert f"raised at {PROGRAM}:" in err and "on rank 1 of 2" in err
    assert "Traceback" not in err


def test_a_scalar_argument_that_differs_between_ranks_is_an_error(mpi_ranks):
    """``Zip(f)(v, w, float(rank))``: each rank would compute its parts with its own
    value (a result mixing both); the ranks' scalars of each call are compared, and a
    difference is an error on every rank naming the argument and each rank's value."""
    run = mpi_ranks(PROGRAM, "scalar", timeout=LIMIT)
    assert run.returncode != 0, run.stdout + run.stderr
    for rank in (0, 1):
        assert f"rank {rank}: same 3000.0" in run.stdout, run.stdout + run.stderr
        assert (f"rank {rank} caught: the 2 MPI ranks called Zip 'f' with different values "
                "of argument 'c': 0.0 on rank 0, 1.0 on rank 1") in run.stdout, \
            run.stdout + run.stderr
    assert "no error" not in run.stdout and "went on" not in run.stdout
    err = run.stderr
    assert err.count("[skel-mpi-mismatch]") == 1, err
    assert ("the 2 MPI ranks called Reduce 'add' with different values of argument 's' "
            "of Map 'g': 1.0 on rank 0, 2.0 on rank 1") in err, err
    assert f"raised at {PROGRAM}:" in err and "on every rank" in err
    assert "Traceback" not in err


def test_distributions_that_differ_between_ranks_are_an_error(mpi_ranks):
    """``v.distribution = single(rank)``: each rank would place the Vector on another
    device (rank 0 expected its rows on device 0, rank 1 on device 1)."""
    run = mpi_ranks(PROGRAM, "distribution", timeout=LIMIT)
    assert run.returncode != 0, run.stdout + run.stderr
    err = run.stderr
    assert ("the 2 MPI ranks gave the Vector passed as the input of Map 'f' different "
            "distributions: single(0) on rank 0, single(1) on rank 1 [skel-mpi-mismatch]") \
        in err, err
    assert "Traceback" not in err
    assert "rank 0:" not in run.stdout and "rank 1:" not in run.stdout


def test_sys_exit_on_one_rank_ends_every_rank(mpi_ranks):
    """Rank 1 calls sys.exit() while rank 0 still needs its part: at its exit rank 1
    tells the others how far it got; rank 0, waiting for a collective rank 1 never
    made, ends every rank with a message (it waited for ever before)."""
    run = mpi_ranks(PROGRAM, "exit", timeout=LIMIT)
    assert run.returncode != 0, run.stdout + run.stderr
    assert ("mcl.skel: rank 1 of 2 ended (sys.exit(...) or the end of its program) while the "
            "other ranks still ran (rank 0 waited for it); ending every rank (MPI_Abort)") \
        in run.stderr, run.stdout + run.stderr
    assert "rank 0:" not in run.stdout


def test_ranks_that_end_at_different_times_end_normally(mpi_ranks):
    """Rank 0 ends seconds before rank 1 (which works on alone, without mcl.skel):
    both end normally, nothing aborted."""
    run = mpi_ranks(PROGRAM, "uneven-end", timeout=LIMIT)
    assert run.returncode == 0, run.stdout + run.stderr
    for rank in (0, 1):
        assert f"rank {rank}: 2000.0" in run.stdout, run.stdout + run.stderr
    assert "MPI_Abort" not in run.stderr and "ended" not in run.stderr, run.stderr
