"""The benchmark's m is what Open MPI 4.1.4's fixed decision computes for the same call, per
collective: tests/c/m_probe.c, preloaded, sees every collective call the benchmark makes and
computes that quantity from the call's own arguments (coll_tuned_decision_fixed.c, as the shim's
comments cite it); it must equal the --sizes value of the call (scan / exscan: each rank's
vector; alltoallv and barrier: the decision reads P only)."""
import os
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from collsel.sources.measure import benchmark_program as bench
from test_bench_paired import ROOT

pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    shutil.which("mpirun") is None or shutil.which("mpicc") is None,
    reason="Open MPI (mpirun, mpicc) not installed")]

SHIM = Path(__file__).parents[3] / "c" / "m_probe.c"
FUNCTIONS = {"bcast": "MPI_Bcast", "reduce": "MPI_Reduce", "allreduce": "MPI_Allreduce",
             "allgather": "MPI_Allgather", "allgatherv": "MPI_Allgatherv",
             "alltoall": "MPI_Alltoall", "alltoallv": "MPI_Alltoallv", "barrier": None,
             "exscan": "MPI_Exscan", "gather": "MPI_Gather", "reduce_scatter": "MPI_Reduce_scatter",
             "reduce_scatter_block": "MPI_Reduce_scatter_block", "scan": "MPI_Scan",
             "scatter": "MPI_Scatter"}
SIZES = (3, 7, 100)      # 7: not a multiple of P = 3 (reduce_scatter's counts 3, 2, 2)


@pytest.fixture(scope="module")
def shim(tmp_path_factory):
    out = tmp_path_factory.mktemp("m_probe") / "m_probe.so"
    subprocess.run(["mpicc", "-shared", "-fPIC", "-O1", "-Wall", "-Werror", "-o", str(out),
                    str(SHIM)], check=True, timeout=120)
    return out


def test_every_collective_of_the_benchmark_is_covered():
    assert set(FUNCTIONS) == set(bench.capabilities().collectives)


@pytest.mark.parametrize("collective", sorted(FUNCTIONS))
def test_m_is_what_the_fixed_decision_computes(collective, shim, tmp_path):
    log = tmp_path / "calls"
    sizes = (0,) if collective == "barrier" else SIZES
    r = subprocess.run(["mpirun", *ROOT, "--oversubscribe", "--mca", "mpi_yield_when_idle", "1",
                        "-x", f"LD_PRELOAD={shim}", "-x", "M_PROBE_OUT", "-np", "3",
                        bench.locate(), "--collective", collective,
                        "--sizes", ",".join(map(str, sizes)), "--min-reps", "2",
                        "--max-reps", "2", "--warmup", "1"],
                       capture_output=True, text=True, timeout=120,
                       env={**os.environ, "M_PROBE_OUT": str(log)})
    assert r.returncode == 0, r.stderr
    measured = [line.split()[0] for line in r.stdout.splitlines() if line[:1].isdigit()]
    assert measured == [str(m) for m in sizes]
    function = FUNCTIONS[collective]
    if function is None:                     # barrier: no message, nothing to compare
        assert not log.exists()
        return
    calls = Counter(tuple(line.split()) for line in log.read_text().splitlines())
    expected = -1 if collective == "alltoallv" else None
    assert {name for name, _ in calls} == {function}
    # every call of a size (first, warm-up, timed) shows the size itself
    assert sorted({int(m) for _, m in calls}) == sorted(
        {expected} if expected is not None else set(sizes))
