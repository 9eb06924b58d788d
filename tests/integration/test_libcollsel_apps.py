"""libcollsel in every application (issue 32 items 1 and 2): unmodified Fortran programs, a
threaded C program and mpi4py, under Open MPI 4.1 and MPICH 4.0.

  - Fortran (coll_check_fortran.F90 as `use mpi` and as `use mpi_f08`), P = 3: bcast, reduce,
    allreduce (also MPI_IN_PLACE), allgather, alltoall at m on both sides of the trees' rule
    boundaries: every rank's traced decision equals `collsel query`, results correct; under Open
    MPI the coll/base function that ran (collsel_coll_probe.c) is the decided one's. Open
    MPI's bindings call PMPI_* themselves: runtime/libcollsel/fortran.c interposes them.
  - MPI_THREAD_MULTIPLE under Open MPI (libcollsel_threads.c: 3 threads per rank, each on its
    own communicator, bcast, reduce and allreduce at once), P = 3: every decision equals
    `collsel query`, the probe saw the decided coll/base functions, results correct.
  - mpi4py (the PyPI wheel in the test venv, which carries an Open MPI and an MPICH build and
    picks by the libmpi it finds; libcollsel_mpi4py.py), its default thread level
    (MPI_THREAD_MULTIPLE), P = 3: under Open MPI every decision equals `collsel query`; under
    MPICH, with COLLSEL_SERIAL_COLLECTIVES=1 (no two threads in collectives at once: the
    algorithm variable is process-global) every decision equals `collsel query`, without it
    every call passes ("off") and rank 0 prints one line saying so. Results correct
    throughout.
"""
import os
import re
import shutil
import subprocess
import sys
from collections import Counter

import pytest

from test_libcollsel import BIN, DYNAMIC_RULES, HERE, launch, library, run, trees  # noqa: F401
from test_libcollsel_all import (FUNCTIONS, all_trees, boundary_sizes, checks_ok,  # noqa: F401
                                 decided_as_query, mpich_trees, probe, probed, refused, traced)

FORTRAN_COLLECTIVES = ("bcast", "reduce", "allreduce", "allgather", "alltoall")
P = 3


@pytest.fixture(scope="module")
def fortran():
    """{(family, binding): program}: coll_check_fortran.F90 by mpif90.<family>; MPICH's `use
    mpi` has no ignore-TKR interfaces, so gfortran needs -fallow-argument-mismatch there."""
    if not shutil.which("gfortran"):
        pytest.skip("gfortran missing (make setup installs it)")
    BIN.mkdir(parents=True, exist_ok=True)
    out = {}
    for family in ("openmpi", "mpich"):
        for binding in ("mpi", "mpi_f08"):
            exe = out[family, binding] = BIN / f"coll_check_fortran-{family}-{binding}"
            flags = ["-DF08"] if binding == "mpi_f08" else []
            flags += (["-fallow-argument-mismatch", "-w"] if (family, binding) == ("mpich", "mpi")
                      else ["-Wall", "-Werror"])
            run([f"mpif90.{family}", "-O2", *flags, HERE / "coll_check_fortran.F90", "-o", exe])
    return out


@pytest.mark.parametrize("binding", ("mpi", "mpi_f08"))
@pytest.mark.parametrize("family", ("openmpi", "mpich"))
def test_fortran_decides_as_query(family, binding, library, all_trees, mpich_trees, fortran,
                                  probe, tmp_path):
    tree_of = all_trees if family == "openmpi" else mpich_trees
    sizes = {c: boundary_sizes(tree_of[c], P, c) for c in FORTRAN_COLLECTIVES}
    argv = [fortran[family, binding]]
    for c, ms in sizes.items():
        argv += [a for m in ms for a in (c, m)]
    argv += ["allreduce_in_place", sizes["allreduce"][-1]]
    env = {"COLLSEL_TREES": tree_of["dir"], "COLLSEL_TRACE": "1"}
    preload, extra = (library[family],), ()
    if family == "openmpi":
        env["COLL_PROBE_DIR"] = tmp_path
        preload, extra = (library[family], probe), DYNAMIC_RULES
    done = launch(family, P, argv, env, preload, extra)
    calls = sum(len(ms) for ms in sizes.values()) + 1
    found = re.findall(r"^check (\w+) m=(\d+) (ok|FAIL)$", done.stdout, re.M)
    assert len(found) == calls and all(r == "ok" for *_, r in found), done.stdout
    trace = traced(done.stderr)
    assert len(trace) == P * calls, (len(trace), P * calls, done.stderr[-2000:])
    seen = set()
    passes = decided_as_query(family, trace, tree_of, seen)
    assert {c for c, *_, choice, why in trace if choice} == set(FORTRAN_COLLECTIVES)
    forced = 0
    if family == "openmpi":
        ran = probed(tmp_path)
        for c, p, m, (alg, _, _) in seen:
            if alg == 0 or refused(family, c, p, m, (alg, 0, 0)):
                continue
            # the outermost call is the forced algorithm's coll/base function even where it
            # falls back (core/mpi/fallbacks.py: the fallback runs inside it, a nested call)
            function = FUNCTIONS[c][alg]
            assert ran.get((function, m), 0) >= P, (c, p, m, function)
            forced += 1
        assert forced >= 3, forced
    print(f"{family} `use {binding}` P={P}: {calls} calls x {P} ranks decided as collsel query "
          f"({len(seen)} distinct points, {forced} forced and seen by the probe), "
          f"passed {dict(passes)}, results correct")


@pytest.fixture(scope="module")
def threaded():
    BIN.mkdir(parents=True, exist_ok=True)
    exe = BIN / "libcollsel_threads-apps"
    run(["mpicc.openmpi", "-O2", "-std=c99", "-Wall", "-Wextra", "-Werror",
         HERE / "libcollsel_threads.c", "-o", exe, "-lpthread"])
    return exe


def test_thread_multiple_open_mpi(library, all_trees, threaded, probe, tmp_path):
    env = {"COLLSEL_TREES": all_trees["dir"], "COLLSEL_TRACE": "1", "COLL_PROBE_DIR": tmp_path}
    done = launch("openmpi", P, [threaded], env, (library["openmpi"], probe), DYNAMIC_RULES)
    assert "provided=multiple" in done.stdout, done.stdout
    assert "case threads ok" in done.stdout, done.stdout
    assert not [line for line in done.stderr.splitlines() if line.startswith("libcollsel:")]
    trace = traced(done.stderr)
    seen = set()
    passes = decided_as_query("openmpi", trace, all_trees, seen)
    decisions = Counter((c, m, choice[0]) for c, _, _, m, choice, _ in trace if choice)
    assert {c for c, _, _ in decisions} == {"bcast", "reduce", "allreduce"}
    ran = probed(tmp_path)
    forced = 0
    for (c, m, alg), calls in decisions.items():
        if alg == 0 or refused("openmpi", c, P, m, (alg, 0, 0)):
            continue
        function = FUNCTIONS[c][alg]       # the outermost call, as above
        assert ran.get((function, m), 0) >= calls, (c, m, function, calls)
        forced += calls
    assert forced > len(trace) // 2, (forced, len(trace))
    print(f"openmpi MPI_THREAD_MULTIPLE P={P}, 3 threads per rank: {len(trace)} calls decided "
          f"as collsel query, {forced} forced calls seen run by the probe, passed "
          f"{dict(passes)}, results correct")


@pytest.fixture(scope="module")
def mpi4py():
    """The test venv's python with mpi4py (`make setup`), and MPICH's library path: the wheel's
    MPICH build needs libmpi.so.12, which Debian names libmpich.so.12."""
    found = subprocess.run([sys.executable, "-c", "import mpi4py"], capture_output=True)
    if found.returncode != 0:
        pytest.skip("mpi4py is not installed in this venv (make setup installs it)")
    libdir = BIN / "mpi4py-mpich"
    libdir.mkdir(parents=True, exist_ok=True)
    link = libdir / "libmpi.so.12"
    if not link.exists():
        os.symlink("/usr/lib/x86_64-linux-gnu/libmpich.so.12", link)
    return {"python": sys.executable, "mpich_env": {"LD_LIBRARY_PATH": libdir,
                                                     "MPI4PY_MPIABI": "mpich"}}


def run_mpi4py(family, tree_of, library, mpi4py, env=()):
    sizes = {c: boundary_sizes(tree_of[c], P, c) for c in FORTRAN_COLLECTIVES}
    argv = [mpi4py["python"], HERE / "libcollsel_mpi4py.py"]
    for c, ms in sizes.items():
        argv += [a for m in ms for a in (c, m)]
    env = {"COLLSEL_TREES": tree_of["dir"], "COLLSEL_TRACE": "1", **dict(env)}
    if family == "mpich":
        env.update(mpi4py["mpich_env"])
    done = launch(family, P, argv, env, (library[family],),
                  DYNAMIC_RULES if family == "openmpi" else ())
    calls = sum(len(ms) for ms in sizes.values())
    checks_ok(done.stdout, calls)
    return done, calls


def test_mpi4py_open_mpi_default_thread_level(library, all_trees, mpi4py):
    done, calls = run_mpi4py("openmpi", all_trees, library, mpi4py)
    assert "provided=multiple" in done.stdout, done.stdout
    trace = traced(done.stderr)
    seen = set()
    passes = decided_as_query("openmpi", trace, all_trees, seen)
    assert {c for c, *_, choice, why in trace if choice} >= set(FORTRAN_COLLECTIVES)
    print(f"mpi4py, Open MPI, provided=multiple, P={P}: {len(trace)} calls ({calls} checked, "
          f"the rest mpi4py's own for its object allreduce) decided as collsel query, passed "
          f"{dict(passes)}, results correct")


SERIAL_REFUSAL = ("libcollsel: MPICH at MPI_THREAD_MULTIPLE: every collective passes through to "
                  "MPICH's own choice; set COLLSEL_SERIAL_COLLECTIVES=1 if no two threads run "
                  "collectives at once")


def test_mpi4py_mpich_default_thread_level(library, mpich_trees, mpi4py):
    """MPI_THREAD_MULTIPLE (mpi4py's default) under MPICH: with COLLSEL_SERIAL_COLLECTIVES=1
    (the program calls MPI from one thread) every call decides as `collsel query`; without it
    every call passes ("off") and rank 0 says why in one line."""
    done, calls = run_mpi4py("mpich", mpich_trees, library, mpi4py,
                             {"COLLSEL_SERIAL_COLLECTIVES": "1"})
    assert "provided=multiple" in done.stdout, done.stdout
    assert not [line for line in done.stderr.splitlines() if line.startswith("libcollsel:")]
    trace = traced(done.stderr)
    passes = decided_as_query("mpich", trace, mpich_trees, set())
    assert {c for c, *_, choice, why in trace if choice} >= set(FORTRAN_COLLECTIVES)
    plain, _ = run_mpi4py("mpich", mpich_trees, library, mpi4py)
    assert "provided=multiple" in plain.stdout, plain.stdout
    said = [line for line in plain.stderr.splitlines() if line.startswith("libcollsel:")]
    assert said == [SERIAL_REFUSAL], said
    passed = traced(plain.stderr)
    assert len(passed) == len(trace) and {why for *_, why in passed} == {"off"}, passed[:5]
    print(f"mpi4py, MPICH, provided=multiple, P={P}: COLLSEL_SERIAL_COLLECTIVES=1: {len(trace)} "
          f"traced calls over the ranks ({calls} checked, the rest mpi4py's own for its object "
          f"allreduce) decided as collsel query, passed {dict(passes)}, results correct; "
          f"without it: {len(passed)} traced calls pass=off, results correct, and once: "
          f"{said[0]}")
