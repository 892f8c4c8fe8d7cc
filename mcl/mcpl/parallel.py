"""Parses the items of a large MCPL module in worker processes as well as here.

The top-level items of a module (mcl.mcpl.chunks) are independent, so when a
module has many characters of items that are not in the builder's cache, they
are cut into batches that a pool of forked worker processes and this process
parse at the same time (this process takes batches from the end, the workers
from the front, so the work balances itself). Workers send back the built AST
nodes; the builder then takes them as it goes through the items in order,
exactly as if it had built them itself (``builder.build_item`` depends only on
its arguments). An item that does not parse in a worker is parsed again by the
builder, so that every diagnostic comes from one code path.

Processes are used only where that is safe and pays: on Linux, with the
``fork`` start method (workers inherit the loaded grammar), no other
thread is running when the pool is made (a forked child of a threaded process
can deadlock on a lock another thread held; the language server parses on a
thread and therefore parses here alone), the items to parse add up to at least
:data:`PARALLEL_MIN_CHARS`, and :func:`workers` is not 0 (``MCL_PARSE_WORKERS``
sets the number of worker processes; by default it is one less than the CPUs,
and none when other tasks keep every CPU busy). When the pool
cannot be made or a worker dies, the items are parsed here and no pool is
tried again in this process.
"""

from __future__ import annotations

import atexit
import gc
import os
import signal
import sys
import threading
from bisect import bisect_right
from typing import Any

from mcl.mcpl import builder, chunks

#: Modules with fewer characters of items to parse are parsed in this process
#: only (30 000 characters are about 1 000 lines, some 0.3 s of parsing; a batch
#: round trip to a worker costs about a millisecond).
PARALLEL_MIN_CHARS = 30_000

#: About this many characters of items go into one batch (the unit of work a
#: worker or this process takes at a time).
BATCH_CHARS = 6_000

#: Whether this process parses batches too while the workers do (tests turn it
#: off to send every batch to a worker).
PARSE_HERE_TOO = True

#: At most this many worker processes.
MAX_WORKERS = 8

#: Counts for tests and benchmarks: batches parsed by workers and here.
stats = {"worker_batches": 0, "local_batches": 0, "fallbacks": 0}

_executor: Any = None
_executor_pid: int | None = None
_unavailable = False


def workers() -> int:
    """The number of worker processes to use (0: parse in this process only):
    ``MCL_PARSE_WORKERS`` when set, else one less than the CPUs this process may
    use, and no more than the CPUs that other tasks running at the moment leave
    free: on a machine whose CPUs are all busy, workers only add the cost of
    sending results back (measured: 2 CPUs, two other tasks running, 3.2-3.6 s
    against 2.8 s in one process; one other task running, 1.8 s against 2.8 s)."""
    env = os.environ.get("MCL_PARSE_WORKERS", "").strip()
    if env:
        try:
            return max(0, min(int(env), MAX_WORKERS))
        except ValueError:
            pass
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cpus = os.cpu_count() or 1
    return max(0, min(cpus - 1, cpus - _others_running(), MAX_WORKERS))


def _others_running() -> int:
    """How many other tasks are running or ready to run now (0 where unknown)."""
    try:
        with open("/proc/loadavg") as f:
            running = f.read().split()[3].split("/")[0]
        return max(0, int(running) - 1)   # this process is running
    except (OSError, IndexError, ValueError):
        return 0


def shutdown() -> None:
    """Stop the worker processes (a later large parse starts them again)."""
    global _executor
    ex, _executor = _executor, None
    if ex is not None and _executor_pid == os.getpid():
        ex.shutdown(wait=True, cancel_futures=True)


def _pool() -> Any:
    """The process pool, made on first use; None where processes cannot or should
    not be used."""
    global _executor, _executor_pid
    n = workers()
    if n < 1:
        return None
    if _executor is not None and _executor_pid == os.getpid():
        return _executor
    _executor = None  # a pool inherited through fork belongs to the parent
    # fork only on Linux: macOS has it, but its system libraries are not safe to
    # use in a forked child (which is why Python spawns there by default).
    if _unavailable or threading.active_count() > 1 or not sys.platform.startswith("linux"):
        return None
    try:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        context = multiprocessing.get_context("fork")
        # Loaded before the fork, so that every worker inherits them.
        builder.item_metamodel()
        builder._item_rules()
        _executor = ProcessPoolExecutor(n, mp_context=context, initializer=_init_worker)
    except Exception:  # no fork here (ValueError), or no processes at all
        _give_up()
        return None
    _executor_pid = os.getpid()
    # Stopped while the interpreter is whole: an executor collected during its
    # teardown prints an ignored exception.
    atexit.unregister(shutdown)
    atexit.register(shutdown)
    return _executor


def _give_up() -> None:
    global _executor, _unavailable
    _unavailable = True
    stats["fallbacks"] += 1
    ex, _executor = _executor, None
    if ex is not None and _executor_pid == os.getpid():
        try:
            ex.shutdown(wait=False, cancel_futures=True)
        except Exception:
            pass


def _init_worker() -> None:
    # Ctrl-C is for the parent, which stops the workers.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # The inherited heap (the item cache, the grammar) is never garbage: keep the
    # collector from walking (and so copying) it.
    gc.freeze()


Job = tuple[str, int, int, int]   # (text, item length, line, column): see builder.build_item


def _build_batch(file: str, hardware_names: frozenset[str], jobs: list[Job]) -> list[Any]:
    """For each job, builder.build_item's result, or None where the item has errors
    (the builder parses it again to report them)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        out: list[Any] = []
        for text, item_len, line, column in jobs:
            try:
                built = builder.build_item(text, item_len, file, line, column, hardware_names)
            except Exception:  # a syntax error, or nested too deeply
                built = None
            out.append(built if built is not None and built[0] is not None else None)
        return out
    finally:
        if enabled:
            gc.enable()


def prefetch(source: str, file: str, index: Any, items: list[chunks.Item],
             comments: list[tuple[int, int, str]], hardware_names: frozenset[str]
             ) -> dict[Any, Any]:
    """Build the items of ``source`` that are not cached, in worker processes and
    here at the same time, when there are enough of them; returns the built
    items keyed by ``builder.built_key`` (empty when the module is small or
    processes are not available)."""
    if sum(item.end - item.start for item in items) < PARALLEL_MIN_CHARS or workers() < 1:
        return {}
    jobs = _jobs(source, file, index, items, comments, hardware_names)
    if sum(len(job[0]) for job in jobs) < PARALLEL_MIN_CHARS:
        return {}
    pool = _pool()
    if pool is None:
        return {}
    batches: list[list[Job]] = [[]]
    size = 0
    for job in jobs:
        if size >= BATCH_CHARS:
            batches.append([])
            size = 0
        batches[-1].append(job)
        size += len(job[0])
    try:
        futures = [pool.submit(_build_batch, file, hardware_names, b) for b in batches]
    except Exception:  # the processes could not be started
        _give_up()
        return {}
    built: dict[Any, Any] = {}

    def keep(batch: list[Job], results: list[Any]) -> None:
        for (text, item_len, line, column), result in zip(batch, results, strict=True):
            if result is not None:
                built[builder.built_key(text, item_len, line, column)] = result

    mine: set[int] = set()
    for i in range(len(futures) - 1, -1, -1):
        if not PARSE_HERE_TOO or not futures[i].cancel():   # a worker has it (and all before it)
            break
        mine.add(i)
        keep(batches[i], _build_batch(file, hardware_names, batches[i]))
        stats["local_batches"] += 1
    for i, future in enumerate(futures):
        if i in mine:
            continue
        try:
            keep(batches[i], future.result())
            stats["worker_batches"] += 1
        except Exception:
            # A worker died (the pool is then broken) or a result could not be
            # sent back (nested too deeply to pickle): the builder parses these
            # items itself.
            from concurrent.futures.process import BrokenProcessPool

            if isinstance(future.exception(), BrokenProcessPool):
                _give_up()
    return built


def _jobs(source: str, file: str, index: Any, items: list[chunks.Item],
          comments: list[tuple[int, int, str]], hardware_names: frozenset[str]) -> list[Job]:
    """The items to build: those not in the builder's cache, each with the comment
    after it on the line of its closing '}' (as the builder takes it)."""
    comment_ends = [c[1] for c in comments]
    jobs: list[Job] = []
    for item in items:
        ext_end = item.end
        # The first comment the builder has not yet given away when it reaches the item.
        i = bisect_right(comment_ends, item.start)
        if i < len(comments):
            c_start, c_end, _ = comments[i]
            if c_start >= item.end and "\n" not in source[item.end:c_start]:
                ext_end = c_end
        text = source[item.start:ext_end]
        line, column = index.position(item.start)
        if not builder.is_cached(file, text, column, hardware_names):
            jobs.append((text, item.end - item.start, line, column))
    return jobs
