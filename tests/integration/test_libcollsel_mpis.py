"""libcollsel under the MPIs of `make setup-mpis` (issue 31): Open MPI 5.0.11 and MPICH 5.0.2,
one build per MPI (`make libcollsel-mpis`: build/libcollsel/{openmpi5,mpich5}), and the MPI-5
ABI experiment: a build by MPICH 5's `mpicc_abi` (build/libcollsel/mpich5-abi, linked to
libmpi_abi.so.1) with coll_check.c built the same way, run under MPICH 5's ABI library.

The trees, the launch and the checks are test_libcollsel.py's (bench-data/paired/{bcast,
reduce}-{openmpi,mpich}.csv at --max-depth 3): at P = 3, sizes on both sides of every
rule boundary, every rank's COLLSEL_TRACE decision equals `collsel query`, the rules it
resolves are the tree's, every result is correct; under Open MPI 5 also the coll/base function
that ran (coll_algorithm_trace.c built against 5.0, LD_PRELOAD) is the decision's. MPICH 5's
wheel has no static libmpich.a, so the algorithm MPICH ran is not traced (4.0's -Wl,--wrap test).
"""
import pathlib

import pytest

from coll_trace import FUNCTIONS, build as build_trace
from test_libcollsel import (BIN, COLLECTIVES, DYNAMIC_RULES, algorithms_of,
                             check_run, expected_rules, launch, run, straddling_sizes,
                             trees)  # noqa: F401 (trees: fixture)

REPO = pathlib.Path(__file__).resolve().parents[2]
MPIS = REPO / "build" / "mpis"
# One P that is no power of two: test_libcollsel.py covers P = 2, 3, 4 under Debian's MPIs with
# the same code; here each newer MPI's build is shown to decide and compute right (CI time).
COMM_SIZES = (3,)
# build name -> (tree family, prefix, compiler, launcher)
BUILDS = {"openmpi5": ("openmpi", MPIS / "openmpi5", "mpicc", "mpirun"),
          "mpich5": ("mpich", MPIS / "mpich5", "mpicc", "mpiexec"),
          "mpich5-abi": ("mpich", MPIS / "mpich5", "mpicc_abi", "mpiexec")}

pytestmark = pytest.mark.skipif(not all((home / "bin" / cc).exists()
                                        for _, home, cc, _ in BUILDS.values()),
                                reason="the MPIs of make setup-mpis")


@pytest.fixture(scope="module")
def libraries():
    run(["make", "-s", "-C", REPO, "libcollsel-mpis"])
    return {b: REPO / "build" / "libcollsel" / b / "libcollsel.so" for b in BUILDS}


@pytest.fixture(scope="module")
def programs():
    """Per build: (algorithm trace library or None, coll_check) by that build's compiler."""
    out = {}
    for name, (family, home, cc, _) in BUILDS.items():
        where = BIN / name
        where.mkdir(parents=True, exist_ok=True)
        if family == "openmpi":
            out[name] = build_trace(home / "bin" / cc, where)
        else:
            exe = where / "coll_check"
            run([home / "bin" / cc, "-O2", "-std=c99", "-Wall", "-Wextra", "-Werror",
                 pathlib.Path(__file__).with_name("coll_check.c"), "-o", exe])
            out[name] = (None, exe)
    return out


def test_the_abi_build_links_the_standard_abi_library(libraries):
    needed = run(["readelf", "-dW", libraries["mpich5-abi"]]).stdout
    assert "[libmpi_abi.so.1]" in needed and "[libmpi.so.12]" not in needed, needed


@pytest.mark.parametrize("collective", COLLECTIVES)
@pytest.mark.parametrize("build", sorted(BUILDS))
def test_libcollsel_decides_under_the_mpi(build, collective, libraries, programs, trees):
    family, home, _, launcher = BUILDS[build]
    tree = trees[family][collective]
    trace, exe = programs[build]
    env = {"COLLSEL_TREES": trees[family]["dir"], "COLLSEL_TRACE": "1"}
    extra = DYNAMIC_RULES if family == "openmpi" else ()
    for p in COMM_SIZES:
        sizes = straddling_sizes(expected_rules(tree, p), collective)
        preload = (libraries[build], trace) if trace else (libraries[build],)
        done = launch(family, p, [exe, collective, *sizes], env, preload, extra,
                      mpirun=home / "bin" / launcher)
        want = check_run(done, collective, p, sizes, tree)
        if trace is None:
            print(f"{build} {collective} P={p}: {len(sizes)} sizes decided as collsel query")
            continue
        alone = launch(family, p, [exe, collective, *sizes], {}, (trace,), extra,
                       mpirun=home / "bin" / launcher)
        ran, ran_alone = (algorithms_of(done.stderr, collective),
                          algorithms_of(alone.stderr, collective))
        for m in sizes:
            alg = want[m][0]
            assert ran[m] == ({FUNCTIONS[collective][alg]} if alg else ran_alone[m]), \
                (p, m, want[m], ran[m], ran_alone[m])
        print(f"{build} {collective} P={p}: {len(sizes)} sizes, ran "
              f"{ {m: sorted(ran[m]) for m in sizes} }")
