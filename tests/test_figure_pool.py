"""The report's worker pool (sinks/report/figure_pool.py): warm loads matplotlib in every
worker, one task each, so the figures start at once (issue "Lean")."""
import sys

import pytest

from collsel.core import parallel
from collsel.sinks.report import figure_pool


def _loaded(_):
    import os
    return os.getpid(), "matplotlib" in sys.modules


@pytest.mark.skipif(parallel._cores() < parallel.WORKERS, reason="the pool needs 2 cores")
def test_warm_loads_matplotlib_in_each_worker():
    with figure_pool.pool() as workers:
        before = workers.map(_loaded, range(4))
        pids = figure_pool.warm(workers).get(timeout=300)
        after = [workers.apply(_loaded, (0,)) for _ in range(8)]
    assert not any(loaded for _, loaded in before)      # the workers start without it
    assert len(set(pids)) == parallel.WORKERS            # one task in each worker
    assert all(loaded for _, loaded in after)
    assert {pid for pid, _ in after} <= set(pids)


def test_warm_without_workers_does_nothing():
    assert figure_pool.warm(None) is None
