"""`collsel profile` on real MPI launches (issue 41 item 1): a C program (profile_app.c), a
Fortran one (coll_check_fortran.F90, `use mpi_f08` under Open MPI, `use mpi` under MPICH) and an
mpi4py one (libcollsel_mpi4py.py), under Debian's Open MPI 4.1 and MPICH 4.0, and the C program
under Open MPI 5 and MPICH 5 of make setup-mpis where they are installed; P = 3, local, under
`timeout`. Each profile is read back through its schema (core/io/profile.read) and holds exactly
the points the program calls (the mpi4py program: at least them; mpi4py adds its own object
calls), with the calls per rank it makes, every rank and m as libcollsel computes it; no
"libcollsel:" line (census without trees says nothing). Timings are not asserted."""
import os
import shutil
import subprocess
import sys

import pytest

from collsel.core.io import profile
from test_libcollsel import BIN, HERE, OMPI_FLAGS, REPO, TIMEOUT_S, run

P = 3
ROUNDS = 50
MPIS = REPO / "build" / "mpis"
# MPI name -> (launcher, its compiler); the names are libcollsel's builds (build/libcollsel/NAME)
LAUNCHERS = {"openmpi": ("mpirun.openmpi", "mpicc.openmpi"), "mpich": ("mpirun.mpich",
                                                                        "mpicc.mpich"),
             "openmpi5": (MPIS / "openmpi5/bin/mpirun", MPIS / "openmpi5/bin/mpicc"),
             "mpich5": (MPIS / "mpich5/bin/mpiexec", MPIS / "mpich5/bin/mpicc")}
FORTRAN_ARGS = ("bcast", "100", "1000", "allreduce", "64", "alltoall", "8")
MPI4PY_ARGS = ("bcast", "100", "bcast", "1000", "allreduce", "64", "alltoall", "8")   # COLL M pairs
FORTRAN_POINTS = {("bcast", P, 100, P), ("bcast", P, 1000, P), ("allreduce", P, 64, P),
                  ("alltoall", P, 8, P)}


def app_points(rounds):
    """profile_app.c's calls: {(collective, P, m, ppn): (ranks, calls per rank)}."""
    return {("allreduce", P, 8, P): (P, rounds), ("allreduce", P, 8192, P): (P, rounds),
            ("bcast", P, 65536, P): (P, -(-rounds // 10)),
            ("barrier", P, 0, P): (P, -(-rounds // 10) + 2),          # + the two timing ones
            ("allgather", 2, 64, 2): (2, 1),                          # the even half
            ("allgather", 1, 64, 1): (1, 1),                          # the odd one
            ("allreduce", P, 4, P): (P, 1)}                           # the final check


@pytest.fixture(scope="module")
def libraries():
    run(["make", "-s", "-C", REPO, "libcollsel"])
    return REPO / "build" / "libcollsel"


def available(name):
    launcher, cc = LAUNCHERS[name]
    if not (shutil.which(str(launcher)) and shutil.which(str(cc))):
        pytest.skip(f"{name}: {launcher} or {cc} missing (make setup, make setup-mpis)")
    if name.endswith("5"):
        run(["make", "-s", "-C", REPO, f"build/libcollsel/{name}/libcollsel.so"])


def profile_launch(tmp_path, name, argv, env=None):
    """`collsel profile` of argv launched by the MPI `name` on P ranks: (the profile, the
    command's stdout, its stderr)."""
    launcher = LAUNCHERS[name][0]
    flags = [*OMPI_FLAGS] if name.startswith("openmpi") else []
    out = tmp_path / f"{name}.json"
    # --libcollsel given: the installed package (make integration) has no checkout beside it
    cmd = ["timeout", str(TIMEOUT_S), sys.executable, "-m", "collsel.cli", "profile", "--out",
           out, "--libcollsel", REPO / "build" / "libcollsel" / name / "libcollsel.so", "--",
           launcher, *flags, "-n", str(P), *argv]
    base = {k: v for k, v in os.environ.items()
            if not k.startswith("COLLSEL_") and k != "LD_PRELOAD"}
    done = subprocess.run([str(c) for c in cmd], capture_output=True, text=True,
                          env={**base, **(env or {})}, timeout=TIMEOUT_S + 30)
    assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-3000:])
    assert not [line for line in done.stderr.splitlines() if line.startswith("libcollsel")], \
        done.stderr
    assert f"points -> {out}" in done.stdout, done.stdout
    assert "s wall, launcher start to exit, under census mode" in done.stdout, done.stdout
    return profile.read(out), done.stdout


def points(doc):
    return {profile.point_of(e): (e["ranks"], e["calls_per_rank"]) for e in doc["entries"]}


def checked(doc, name):
    assert doc["ranks"] == P and doc["hosts"] == 1
    assert ("Open MPI" if name.startswith("openmpi") else "MPICH") in doc["library"]
    assert 0 < sum(e["share"] for e in doc["entries"]) <= 1
    # the ranks run inside the launch collsel profile timed (1 ms: launch_s's rounding)
    assert doc["launch_s"] + 0.001 >= doc["wall_time_s"]["max"] > 0
    for e in doc["entries"]:
        assert e["calls"] == e["ranks"] * e["calls_per_rank"]   # every rank calls alike here
        assert e["median_us"] > 0 and e["time_s"] > 0
    return doc


@pytest.mark.parametrize("name", sorted(LAUNCHERS))
def test_c_program(name, libraries, tmp_path):
    available(name)
    exe = tmp_path / "profile_app"
    run([LAUNCHERS[name][1], "-O2", "-std=c99", "-Wall", "-Wextra", "-Werror",
         HERE / "profile_app.c", "-o", exe])
    doc, stdout = profile_launch(tmp_path, name, [exe, ROUNDS])
    assert f"profile_app ok {ROUNDS}" in stdout
    assert points(checked(doc, name)) == app_points(ROUNDS)
    print(f"{name}: " + stdout.split("\n", 1)[1])


@pytest.mark.parametrize("name", ("openmpi", "mpich"))
def test_fortran_program(name, libraries, tmp_path):
    if not shutil.which("gfortran"):
        pytest.skip("gfortran missing (make setup installs it)")
    exe = tmp_path / "coll_check_fortran"
    flags = ["-DF08", "-Wall", "-Werror"] if name == "openmpi" else \
        ["-fallow-argument-mismatch", "-w"]     # MPICH's `use mpi` has no ignore-TKR interfaces
    run([f"mpif90.{name}", "-O2", *flags, HERE / "coll_check_fortran.F90", "-o", exe])
    doc, stdout = profile_launch(tmp_path, name, [exe, *FORTRAN_ARGS])
    assert stdout.count(" ok\n") == 4 and "FAIL" not in stdout, stdout
    assert points(checked(doc, name)) == {p: (P, 1) for p in FORTRAN_POINTS}
    print(f"{name} Fortran: " + stdout.split("collsel profile:", 1)[1])


@pytest.mark.parametrize("name", ("openmpi", "mpich"))
def test_mpi4py_program(name, libraries, tmp_path):
    found = subprocess.run([sys.executable, "-c", "import mpi4py"], capture_output=True)
    if found.returncode != 0:
        pytest.skip("mpi4py is not installed in this venv (make setup installs it)")
    env = {}
    if name == "mpich":   # the wheel's MPICH build wants libmpi.so.12: Debian's libmpich.so.12
        libdir = BIN / "mpi4py-mpich"
        libdir.mkdir(parents=True, exist_ok=True)
        if not (libdir / "libmpi.so.12").exists():
            os.symlink("/usr/lib/x86_64-linux-gnu/libmpich.so.12", libdir / "libmpi.so.12")
        env = {"LD_LIBRARY_PATH": str(libdir), "MPI4PY_MPIABI": "mpich"}
    doc, stdout = profile_launch(tmp_path, name, [sys.executable, HERE / "libcollsel_mpi4py.py",
                                                  *MPI4PY_ARGS], env)
    assert stdout.count("mpi4py ok") == 4 and "FAIL" not in stdout, stdout
    found = points(checked(doc, name))
    assert {p: found.get(p) for p in FORTRAN_POINTS} == {p: (P, 1) for p in FORTRAN_POINTS}
    print(f"{name} mpi4py: " + stdout.split("collsel profile:", 1)[1])


def test_a_program_that_fails_writes_no_profile(libraries, tmp_path):
    out = tmp_path / "p.json"
    done = subprocess.run(["timeout", str(TIMEOUT_S), sys.executable, "-m", "collsel.cli",
                           "profile", "--out", str(out), "--libcollsel",
                           str(libraries / "openmpi" / "libcollsel.so"), "--", "mpirun.openmpi",
                           *OMPI_FLAGS,
                           "-n", "2", "false"], capture_output=True, text=True,
                          timeout=TIMEOUT_S + 30)
    assert done.returncode == 1 and not out.exists(), done.stderr
    assert done.stderr.splitlines()[-1].startswith("collsel: error: the launch exited with "
                                                   "status ")

