"""libcollsel under Open MPI starts MPI_T before the MPI (pmpi.c mpit_before_init): Open MPI
4.1's MPI_T_init_thread after MPI_Init slows every later collective of the launch (allreduce
1 B - 4 KiB at P = 8 on one node: 1.2-1.5x), before it costs nothing. Checked by the order of
the calls (tests/integration/mpit_order_probe.c), not by times; without COLLSEL_TREES the
library starts nothing before the MPI."""
import subprocess

import pytest

import defer_tree
from test_libcollsel import BIN, DYNAMIC_RULES, HERE, REPO, library, run  # noqa: F401

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def setup():
    BIN.mkdir(parents=True, exist_ok=True)
    probe, program, trees = BIN / "mpit_order_probe.so", BIN / "mpit_order_program", BIN / "mpit"
    include = run(["mpicc.openmpi", "--showme:compile"]).stdout.split()
    run(["cc", "-shared", "-fPIC", "-O1", "-Wall", "-Wextra", "-Werror", *include, "-o", probe,
         HERE / "mpit_order_probe.c", "-ldl"])
    run(["mpicc.openmpi", "-O2", "-std=c99", HERE / "libcollsel_overhead.c", "-o", program])
    trees.mkdir(exist_ok=True)
    defer_tree.write(trees / "tree.json", "allreduce")
    run(["collsel", "emit", "--target", "blob", trees / "tree.json", "--out",
         trees / "allreduce.bin"])
    return probe, program, trees


def test_mpi_t_starts_before_the_mpi(library, setup):
    probe, program, trees = setup
    for spec, first in ((trees / "allreduce.bin", "MPI_T_init_thread"), ("", "PMPI_Init")):
        env = {"LD_PRELOAD": f"{library['openmpi']}:{probe}", "COLLSEL_TREES": str(spec)}
        cmd = ["timeout", "120", "mpirun.openmpi", "--allow-run-as-root", "--oversubscribe",
               *DYNAMIC_RULES, *(a for k, v in env.items() for a in ("-x", f"{k}={v}")),
               "-np", "2", program, "1", "10", "1", "allreduce"]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=150)
        assert done.returncode == 0, done.stderr[-2000:]
        calls = [line.split()[1] for line in done.stderr.splitlines()
                 if line.startswith("mpit-order ")]
        assert calls[0] == first, (spec, calls)
        # each rank: once each (served), or the MPI alone (no trees: nothing to serve)
        assert calls.count("MPI_T_init_thread") == (2 if spec else 0), (spec, calls)
