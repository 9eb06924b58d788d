"""Two worker processes for work that splits into independent parts (the machines collsel runs
on have at least two cores): the model selection's fold costs, the report's figures. Forked,
so nothing is imported twice; a part's result is what one process computes, so outputs do not
depend on the pool.

A worker that dies (the kernel's out-of-memory killer, a signal) loses its task, and
multiprocessing.Pool then waits for it for ever: every wait here checks, while it waits, that the
workers it started are alive, and a dead one ends the command with one line."""
import contextlib
import multiprocessing
import os

from collsel.errors import CollselError

WORKERS = 2
# seconds between two checks that the workers live, while waiting for a result (a result that
# arrives ends the wait at once)
CHECK_S = 0.5


class WorkerDied(CollselError):
    """A worker process ended before finishing its task."""


class Workers:
    """A forked multiprocessing.Pool's map_async, starmap and imap, with waits that end when a
    worker dies (module docstring)."""

    def __init__(self, pool, pids):
        self._pool, self._pids = pool, pids

    def _check(self):
        alive = {p.pid for p in multiprocessing.active_children()}
        lost = sorted(self._pids - alive)
        if lost:
            self._pool.terminate()
            raise WorkerDied(
                f"worker process {lost[0]} died before finishing its task (killed by a "
                f"signal, e.g. the kernel's out-of-memory killer: see `dmesg`); nothing "
                f"written by this step")

    def _wait(self, result):
        while True:
            try:
                return result.get(timeout=CHECK_S)
            except multiprocessing.TimeoutError:
                self._check()

    def map_async(self, fn, iterable, chunksize=None):
        """Pool.map_async; the result's get() waits as _wait does."""
        return _Pending(self, self._pool.map_async(fn, iterable, chunksize))

    def starmap(self, fn, iterable, chunksize=None):
        return self._wait(self._pool.starmap_async(fn, iterable, chunksize))

    def imap(self, fn, iterable, chunksize=1):
        """Pool.imap (started now), its results waited for as _wait does."""
        return self._each(self._pool.imap(fn, iterable, chunksize))

    def _each(self, results):
        while True:
            try:
                yield results.next(timeout=CHECK_S)
            except StopIteration:
                return
            except multiprocessing.TimeoutError:
                self._check()


class _Pending:
    def __init__(self, workers, result):
        self._workers, self._result = workers, result

    def get(self):
        return self._workers._wait(self._result)


@contextlib.contextmanager
def pool(initializer=None):
    """Workers of WORKERS processes, or None on a machine with fewer cores (the caller then
    computes in this process)."""
    if _cores() < WORKERS:
        yield None
        return
    before = {p.pid for p in multiprocessing.active_children()}
    with multiprocessing.get_context("fork").Pool(WORKERS, initializer=initializer) as workers:
        pids = {p.pid for p in multiprocessing.active_children()} - before
        yield Workers(workers, pids)


def _cores():
    """The cores this process may run on (a batch job's allocation, not the machine's)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1
