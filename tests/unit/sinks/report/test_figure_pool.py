"""The report's worker pool (sinks/report/figure_pool.py): warm loads matplotlib in every
worker, one task each, so the figures start at once (issue "Lean")."""
import subprocess
import sys

import pytest

from collsel.core.evaluate import parallel
from collsel.sinks.report import figure_pool

# In a fresh interpreter (this one may have loaded matplotlib, which forked workers inherit):
# which workers have matplotlib before warm, the pids warm's tasks ran in, and after.
PROBE = """\
import os, sys
from collsel.sinks.report import figure_pool

def loaded(_):
    return os.getpid(), "matplotlib" in sys.modules

with figure_pool.pool() as workers:
    before = workers.map_async(loaded, range(4), chunksize=1).get()
    pids = figure_pool.warm(workers).get()
    after = [workers.map_async(loaded, [0]).get()[0] for _ in range(8)]
print(repr((before, pids, after)))
"""


@pytest.mark.skipif(parallel._cores() < parallel.WORKERS, reason="the pool needs 2 cores")
def test_warm_loads_matplotlib_in_each_worker():
    r = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    before, pids, after = eval(r.stdout.strip().splitlines()[-1])
    assert not any(loaded for _, loaded in before)      # the workers start without it
    assert len(set(pids)) == parallel.WORKERS            # one task in each worker
    assert all(loaded for _, loaded in after)
    assert {pid for pid, _ in after} <= set(pids)


def test_warm_without_workers_does_nothing():
    assert figure_pool.warm(None) is None
