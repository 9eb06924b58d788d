"""core.evaluate.parallel: the workers' results are the tasks' own, and a worker that dies (as the
kernel's out-of-memory killer kills one) ends the wait with WorkerDied instead of waiting for
ever (multiprocessing.Pool alone never returns: the lost task is never done)."""
import os
import signal

import pytest

from collsel.core.evaluate import parallel

pytestmark = pytest.mark.skipif(parallel._cores() < parallel.WORKERS,
                                reason="the pool needs two cores")


def _square(x):
    return x * x


def _add(a, b):
    return a + b


def _die_on(x, victim=3):
    if x == victim:
        os.kill(os.getpid(), signal.SIGKILL)
    return x


@pytest.fixture
def alarm():
    """A test that would hang fails instead: SIGALRM after 60 s raises in the waiting thread."""
    def expired(*_):
        raise AssertionError("the wait did not end: a dead worker was not noticed")
    old = signal.signal(signal.SIGALRM, expired)
    signal.alarm(60)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


def test_results_are_the_tasks_own(alarm):
    with parallel.pool() as workers:
        assert workers.map_async(_square, range(5), chunksize=1).get() == [0, 1, 4, 9, 16]
        assert workers.starmap(_add, [(1, 2), (3, 4)]) == [3, 7]
        assert list(workers.imap(_square, iter(range(4)))) == [0, 1, 4, 9]


@pytest.mark.parametrize("how", ["map_async", "starmap", "imap"])
def test_a_dead_worker_ends_the_wait(alarm, how):
    with pytest.raises(parallel.WorkerDied, match=r"worker process \d+ died before finishing"):
        with parallel.pool() as workers:
            if how == "map_async":
                workers.map_async(_die_on, range(6), chunksize=1).get()
            elif how == "starmap":
                workers.starmap(_die_on, [(x,) for x in range(6)])
            else:
                list(workers.imap(_die_on, range(6)))
    assert not [p for p in __import__("multiprocessing").active_children()]
