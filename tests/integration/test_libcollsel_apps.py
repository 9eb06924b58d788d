"""libcollsel in every application (issue 32 items 1 and 2): unmodified Fortran programs, a
threaded C program and mpi4py, under Open MPI 4.1 and MPICH 4.0.

  - Fortran (libcollsel_fortran.F90 as `use mpi` and as `use mpi_f08`), P = 3: bcast, reduce,
    allreduce (also MPI_IN_PLACE), allgather, alltoall at m on both sides of the trees' rule
    boundaries: every rank's traced decision equals `collsel query`, results correct; under Open
    MPI the coll/base function that ran (tests/forcing/coll_probe.c) is the decided one's. Open
    MPI's bindings call PMPI_* themselves: runtime/libcollsel/fortran.c interposes them.
"""
import shutil

import pytest

from collsel.core import fallbacks
from test_libcollsel import BIN, DYNAMIC_RULES, HERE, launch, library, run, trees  # noqa: F401
from test_libcollsel_all import (FUNCTIONS, all_trees, boundary_sizes, checks_ok,  # noqa: F401
                                 decided_as_query, mpich_trees, probe, probed, refused, traced)

FORTRAN_COLLECTIVES = ("bcast", "reduce", "allreduce", "allgather", "alltoall")
P = 3


@pytest.fixture(scope="module")
def fortran():
    """{(family, binding): program}: libcollsel_fortran.F90 by mpif90.<family>; MPICH's `use
    mpi` has no ignore-TKR interfaces, so gfortran needs -fallow-argument-mismatch there."""
    if not shutil.which("gfortran"):
        pytest.skip("gfortran missing (make setup installs it)")
    BIN.mkdir(parents=True, exist_ok=True)
    out = {}
    for family in ("openmpi", "mpich"):
        for binding in ("mpi", "mpi_f08"):
            exe = out[family, binding] = BIN / f"libcollsel_fortran-{family}-{binding}"
            flags = ["-DF08"] if binding == "mpi_f08" else []
            flags += (["-fallow-argument-mismatch", "-w"] if (family, binding) == ("mpich", "mpi")
                      else ["-Wall", "-Werror"])
            run([f"mpif90.{family}", "-O2", *flags, HERE / "libcollsel_fortran.F90", "-o", exe])
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
    checks_ok(done.stdout, calls)
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
            entry = fallbacks.fallback(c, alg, p, m)
            function = FUNCTIONS[c][entry.runs if entry else alg]
            assert ran.get((function, m), 0) >= P, (c, p, m, function)
            forced += 1
        assert forced >= 3, forced
    print(f"{family} `use {binding}` P={P}: {calls} calls x {P} ranks decided as collsel query "
          f"({len(seen)} distinct points, {forced} forced and seen by the probe), "
          f"passed {dict(passes)}, results correct")
