"""`--mpi openmpi|mpich|intel` with `--mpi-home DIR` (sources/measure/mpi_home.py): the
installation's compiler, launcher and environment, found from a prefix, I_MPI_ROOT or PATH;
a prefix of another MPI (or of none) refused in one line before anything is built or written.
Stand-in prefixes (shell scripts named as each MPI names its programs); nothing runs MPI."""
import os
import subprocess
import sys

import pytest

from collsel.core.mpi import algorithms
from collsel.errors import InputError
from collsel.sources.measure import launchers, machine, mpi_home

from helpers import write_fake_bench

WAIT_S = 120


def prefix(root, family):
    """A stand-in installation of `family`: bin/mpicc, its launcher and its marker program."""
    bin_dir = root / "bin"
    bin_dir.mkdir(parents=True)
    for name in ("mpicc", mpi_home.LAUNCHER[family], mpi_home.MARKERS[family]):
        (bin_dir / name).write_text("#!/bin/sh\nexit 0\n")
        (bin_dir / name).chmod(0o755)
    return root


def collsel(args, env=None):
    return subprocess.run([sys.executable, "-m", "collsel.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=WAIT_S,
                          env={**os.environ, **(env or {})})


@pytest.mark.parametrize("family", mpi_home.MPI_NAMES)
def test_a_prefix_gives_its_compiler_launcher_and_environment(tmp_path, family):
    home = prefix(tmp_path / family, family)
    got = mpi_home.resolve(family, str(home), environ={"LD_LIBRARY_PATH": "/x"})
    assert (got.family, got.home) == (family, str(home))
    assert got.mpicc == str(home / "bin" / "mpicc")
    assert got.mpirun == str(home / "bin" / mpi_home.LAUNCHER[family])
    if family == "intel":
        assert got.env == {"I_MPI_ROOT": str(home), "I_MPI_FABRICS": "shm",
                           "LD_LIBRARY_PATH": f"{home}/lib:/x"}
    else:
        assert got.env == {}


def test_without_a_home_debians_programs_and_intel_from_its_root(tmp_path):
    assert mpi_home.resolve("openmpi", environ={}).mpicc == "mpicc"
    assert mpi_home.resolve("mpich", environ={}).mpicc == "mpicc.mpich"
    home = prefix(tmp_path / "oneapi", "intel")
    assert mpi_home.resolve("intel", environ={"I_MPI_ROOT": str(home)}).home == str(home)
    found = mpi_home.resolve("intel", environ={"PATH": str(home / "bin")})
    assert found.home == str(home) and found.env["I_MPI_ROOT"] == str(home)
    with pytest.raises(InputError, match="--mpi intel: no Intel MPI found"):
        mpi_home.resolve("intel", environ={"PATH": str(tmp_path)})


def test_the_intel_launcher_is_hydra_with_the_installations_environment():
    launcher = launchers.make("local", "/o/bin/mpiexec.hydra", family="intel",
                              env={"I_MPI_ROOT": "/o"})
    argv, env = launcher.command(2, {}, ["bench"])
    assert argv[:3] == ["/o/bin/mpiexec.hydra", "-n", "2"]
    assert env == launchers.intel_env("/o")     # the installation's; no MPICH cvar
    _, env = launchers.make("local", "mpiexec", family="mpich", env={"A": "1"}).command(
        2, {}, ["bench"])
    assert env == {"A": "1", **launchers.MPICH_ENV}
    with pytest.raises(InputError, match="--mpi intel supports --launcher local"):
        launchers.make("srun", family="intel")


@pytest.mark.parametrize("made,mpi,message", [
    ("mpich", "openmpi", "an installation of MPICH, not Open MPI; pass --mpi mpich"),
    ("openmpi", "intel", "an installation of Open MPI, not Intel MPI; pass --mpi openmpi"),
    (None, "mpich", "no bin/mpicc there: not an MPI installation"),
    ("missing", "openmpi", "no such directory"),
    ("bare", "openmpi", "no bin/ompi_info there: not an installation of Open MPI"),
])
def test_a_wrong_home_is_one_line_and_nothing_is_built_or_written(tmp_path, made, mpi,
                                                                  message):
    home = tmp_path / "home"
    if made in mpi_home.MPI_NAMES:
        prefix(home, made)
    elif made == "bare":
        prefix(home, "mpich")
        (home / "bin" / "mpichversion").unlink()
    elif made is None:
        home.mkdir()
    out, cache = tmp_path / "t.csv", tmp_path / "cache"
    r = collsel(["sweep", "--collective", "bcast", "--mpi", mpi, "--mpi-home", home,
                 "--out", out, "--comm-sizes", "2", "--msg-sizes", "1", "--launches", "1"],
                {"COLLSEL_CACHE": str(cache)})
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith(f"collsel: error: --mpi-home {home}: {message}")
    assert r.stderr.count("\n") == 1
    assert not out.exists() and not cache.exists()


def test_a_family_without_a_catalogue_is_refused_by_name(tmp_path):
    if "intel" in algorithms.FAMILIES:
        pytest.skip("collsel has Intel MPI's catalogue")
    home = prefix(tmp_path / "intel", "intel")
    r = collsel(["sweep", "--collective", "bcast", "--mpi", "intel", "--mpi-home", home,
                 "--out", tmp_path / "t.csv"])
    assert r.returncode == 2
    assert r.stderr == ("collsel: error: --mpi intel: collsel knows no Intel MPI algorithms yet "
                        "(core.mpi.algorithms has no catalogue of them)\n")


def test_the_dry_run_launches_the_homes_launcher_and_records_the_home(tmp_path):
    home = prefix(tmp_path / "ompi5", "openmpi")
    bench = write_fake_bench(tmp_path / "fake_bench.sh")
    r = collsel(["sweep", "--collective", "bcast", "--mpi-home", home, "--bench", bench,
                 "--out", tmp_path / "t.csv", "--comm-sizes", "2", "--msg-sizes", "1",
                 "--algorithms", "6", "--launches", "1", "--dry-run"])
    assert r.returncode == 0, r.stderr
    assert f"{home}/bin/mpirun " in r.stdout
    assert not (tmp_path / "t.csv").exists()


def test_tune_passes_the_home_to_every_sweep(tmp_path):
    home = prefix(tmp_path / "ompi5", "openmpi")
    bench = write_fake_bench(tmp_path / "fake_bench.sh")
    r = collsel(["tune", "--out", tmp_path / "tune", "--collectives", "bcast", "--mpi-home",
                 home, "--bench", bench, "--comm-sizes", "2", "--dry-run"])
    assert r.returncode == 0, r.stderr
    assert f"--mpi-home={home}" in r.stdout
    bad = collsel(["tune", "--out", tmp_path / "tune", "--collectives", "bcast", "--mpi",
                   "mpich", "--mpi-home", home, "--bench", bench, "--comm-sizes", "2"])
    assert bad.returncode == 2
    assert "an installation of Open MPI, not MPICH" in bad.stderr
    assert bad.stderr.count("\n") == 1 and not (tmp_path / "tune").exists()


def test_the_tables_open_mpi_version_is_the_homes(tmp_path):
    """`# ompi_version=` comes from the prefix's ompi_info, not the one on PATH."""
    home = prefix(tmp_path / "ompi5", "openmpi")
    (home / "bin" / "ompi_info").write_text("#!/bin/sh\necho 'Open MPI v5.0.11'\n")
    assert machine.machine_metadata(str(home))["ompi_version"] == "Open MPI v5.0.11"
