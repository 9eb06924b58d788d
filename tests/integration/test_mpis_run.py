"""The MPIs of `make setup-mpis` run here: per installation (build/mpis/{openmpi5,mpich5,intel}),
coll_check.c built with its mpicc and started on 4 ranks by its launcher in the environment
`collsel sweep --mpi-home` uses (sources/measure/mpi_home.py), MPI_Bcast correct at three sizes;
and the sweep's benchmark, built by that compiler in that environment, names the MPI it ran
under (MPI_Get_library_version, the table's `# mpi_library=`).
"""
import os
import pathlib
import subprocess

import pytest

from collsel.sources.measure import benchmark_program as bench, launchers, mpi_home

REPO = pathlib.Path(__file__).resolve().parents[2]
PROGRAM = pathlib.Path(__file__).with_name("coll_check.c")
HOMES = {"openmpi": "openmpi5", "mpich": "mpich5", "intel": "intel"}
LIBRARY = {"openmpi": "Open MPI v5.0.11", "mpich": "MPICH Version:      5.0.2",
           "intel": "Intel(R) MPI Library 2021.18.1"}
SIZES = ("1", "4096", "1048576")


@pytest.mark.parametrize("family", sorted(HOMES))
def test_a_4_rank_bcast_runs(family, tmp_path):
    home = REPO / "build" / "mpis" / HOMES[family]
    if not (home / "bin" / "mpicc").exists():
        pytest.skip(f"{home}: make setup-mpis")
    install = mpi_home.resolve(family, str(home))
    env = {**os.environ, **install.env}
    exe = tmp_path / "coll_check"
    built = subprocess.run([install.mpicc, "-O2", "-std=c99", PROGRAM, "-o", exe], env=env,
                           capture_output=True, text=True, timeout=120)
    assert built.returncode == 0, built.stderr
    launcher = launchers.make("local", install.mpirun, family=family, env=install.env)
    argv, extra = launcher.command(4, {}, [str(exe), "bcast", *SIZES])
    done = subprocess.run(["timeout", "120", *argv], env={**env, **extra}, capture_output=True,
                          text=True, timeout=150)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines() == [f"check bcast m={m} ok" for m in SIZES], done.stdout
    program = bench.locate(mpicc=install.mpicc, env=install.env)
    argv, extra = launcher.command(4, {}, [program, "--collective", "bcast", "--sizes", "8",
                                           "--max-reps", "5", "--time-cap", "0.01"])
    done = subprocess.run(["timeout", "120", *argv], env={**env, **extra}, capture_output=True,
                          text=True, timeout=150)
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"#@mpi_library={LIBRARY[family]}" in done.stdout, done.stdout[:2000]
