"""Two worker processes for work that splits into independent parts (the machines collsel runs
on have at least two cores): the model selection's fold costs, the report's figures. Forked,
so nothing is imported twice; a part's result is what one process computes, so outputs do not
depend on the pool."""
import contextlib
import multiprocessing
import os

WORKERS = 2


@contextlib.contextmanager
def pool(initializer=None):
    """A pool of WORKERS processes, or None on a machine with fewer cores (the caller then
    computes in this process)."""
    if _cores() < WORKERS:
        yield None
        return
    with multiprocessing.get_context("fork").Pool(WORKERS, initializer=initializer) as workers:
        yield workers


def _cores():
    """The cores this process may run on (a batch job's allocation, not the machine's)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1
