"""coll/collsel (runtime/ompi-component, `make ompi-component`) loaded at run time into
Debian's unmodified Open MPI 4.1.4 (`--mca mca_base_component_path`, `coll_collsel_trees`).

The LD_PRELOAD probe collsel_coll_probe.c records the coll/base function each call ran
and the fixed decision's m; ompi_component_check.c checks the results. At P = 2, 3, 4 and five
sizes, for trees of bcast, reduce and allreduce built from bench-data/tune-vm:
- where the tree names an algorithm, the function that ran is that algorithm's (`collsel query`);
- where it defers (algorithm 0), the function is the one the same launch without the component
  runs (coll/tuned's fixed decision);
- the results are correct; without the component the comparison fails;
- a corrupt blob is reported on one line and the program runs Open MPI's own decisions.
The same holds for the other 11 collectives (collsel's benchmark under the probe) and for the
mpi4py program libcollsel is tested with (libcollsel_mpi4py.py: bcast, reduce, allreduce,
allgather, alltoall), at mpi4py's default thread level, MPI_THREAD_MULTIPLE.
1,000 communicators split, used and freed under coll/collsel run to their end (what that and
a call cost: `make bench-overhead`).
"""
import importlib.util
import os
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from collsel.sources.measure import coll_probe

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(REPO / "tests" / "forcing"))
# coll/tuned id -> coll/base function; the benchmark under the probe (one launch, its calls)
from test_forcing import FUNCTIONS, PER_LAUNCH, TWO_PROCS, _launch as bench_launch  # noqa: E402

MPIRUN = shutil.which("mpirun.openmpi")
DEBIAN = Path("/usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3")
pytestmark = pytest.mark.skipif(
    MPIRUN is None or not (DEBIAN / "mca_coll_tuned.so").is_file()
    or shutil.which("mpicc.openmpi") is None,
    reason="Debian's Open MPI 4.1 (mpirun.openmpi, mpicc.openmpi, its components) needed")

COLLECTIVES = ("bcast", "reduce", "allreduce")
# The other 11, run by collsel's benchmark (its first call of each size checked byte for byte,
# exit 5 when wrong) on its method-0:0 communicator (index 0; allgatherv, which paired mode
# refuses, on MPI_COMM_WORLD, index -1). m as the benchmark's --sizes: barrier 0 only;
# reduce_scatter m >= P. Where a tree names two_proc for P != 2 (P = 3 shares the P = 2 cell),
# coll/collsel defers: the call would fail (MPI_ERR_UNSUPPORTED_OPERATION).
BENCH_SIZES = {c: (1, 64, 4096, 65536) for c in FUNCTIONS if c not in COLLECTIVES}
BENCH_SIZES.update(barrier=(0,), reduce_scatter=(64, 4096, 65536))
SIZES = (1, 64, 4096, 65536, 1048576)
COMM_SIZES = (2, 3, 4)
MPI4PY_PROGRAM = HERE / "libcollsel_mpi4py.py"
MPI4PY_SIZES = {c: SIZES if c in COLLECTIVES else BENCH_SIZES[c]
                for c in ("bcast", "reduce", "allreduce", "allgather", "alltoall")}
COLLECTIVE_OF = {f: c for c, functions in FUNCTIONS.items() for f in functions.values()}
RUN = ["--allow-run-as-root", "--oversubscribe", "--mca", "mpi_yield_when_idle", "1",
       "--mca", "btl", "self,vader"]


def run(cmd, **kw):
    done = subprocess.run([str(a) for a in cmd], capture_output=True, text=True, timeout=300,
                          **kw)
    assert done.returncode == 0, f"{' '.join(map(str, cmd))}: {done.stderr[-2000:]}"
    return done


@pytest.fixture(scope="module")
def component():
    """build/ompi-component/components (mca_coll_collsel.so), by `make ompi-component`."""
    run(["make", "-s", "-C", REPO, "ompi-component"])
    out = REPO / "build" / "ompi-component" / "components"
    assert (out / "mca_coll_collsel.so").is_file()
    return out


@pytest.fixture(scope="module")
def programs(tmp_path_factory):
    """{"c": the check program, "fortran": its `use mpi` twin (None without gfortran),
    "python": the interpreter that runs MPI4PY_PROGRAM (None without mpi4py, a [test] extra),
    "probe": the probe library}."""
    where = tmp_path_factory.mktemp("programs")
    out = {"c": where / "ompi_component_check", "probe": where / "coll_probe.so",
           "fortran": None,
           "python": sys.executable if importlib.util.find_spec("mpi4py") else None}
    run(["mpicc.openmpi", "-O2", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pthread",
         HERE / "ompi_component_check.c", "-o", out["c"]])
    if shutil.which("mpif90.openmpi") and shutil.which("gfortran"):
        out["fortran"] = where / "ompi_component_check_f"
        run(["mpif90.openmpi", "-O2", "-Wall", "-Werror", HERE / "coll_check_fortran.F90",
             "-o", out["fortran"]])
    # the probe `collsel verify` builds: linked with the MPI, so mpi4py's python loads it too
    shutil.copy(coll_probe.library("mpicc.openmpi"), out["probe"])
    return out


@pytest.fixture(scope="module")
def trees(tmp_path_factory):
    """{"dir": the blobs' directory, collective: its tree.json}, from bench-data/tune-vm."""
    where = tmp_path_factory.mktemp("trees")
    out = {"dir": where / "blobs"}
    out["dir"].mkdir()
    for c in FUNCTIONS:
        run(["collsel", "build", REPO / "bench-data" / "tune-vm" / f"{c}.csv", "--collective", c,
             "--max-depth", "3", "--out", where / c])
        run(["collsel", "emit", "--target", "blob", where / c / "tree.json",
             "--out", out["dir"] / f"{c}.bin"])
        out[c] = where / c / "tree.json"
    return out


def query(tree_json, p, sizes):
    """{m: algorithm id} of `collsel query --ids` at (p, m)."""
    points = "".join(f"{p} {m}\n" for m in sizes)
    done = run(["collsel", "query", tree_json, "--ids", "--points", "-"], input=points)
    return {m: int(line.split()[0]) for m, line in zip(sizes, done.stdout.splitlines())}


def with_component(component, trees_spec):
    return ["--mca", "mca_base_component_path", f"{component}:{DEBIAN}",
            "--mca", "coll_collsel_trees", str(trees_spec)]


def launch(programs, np, argv, mca=(), probe_dir=None, language="c"):
    exe = programs[language]
    cmd = ["timeout", "120", MPIRUN, *RUN, *mca, "-np", np]
    if probe_dir is not None:
        probe_dir.mkdir(parents=True, exist_ok=True)
        cmd += ["-x", f"LD_PRELOAD={programs['probe']}", "-x", f"COLL_PROBE_DIR={probe_dir}"]
    return subprocess.run([str(a) for a in [*cmd, exe, *argv]], capture_output=True, text=True,
                          timeout=150)


def outermost_calls(probe_dir):
    """{(coll/base function, m)} of the outermost calls on MPI_COMM_WORLD over all ranks (the
    probe numbers the communicators a program dups; mpi4py's object collectives run on one)."""
    calls = set()
    for path in probe_dir.glob("probe.*"):
        for line in path.read_text().splitlines():
            comm, function, nested, nbytes, _ = line.split()
            if comm == "-1" and nested == "0":
                calls.add((function.removeprefix("ompi_coll_base_"), int(nbytes)))
    return calls


def traced(programs, collective, np, mca, probe_dir, language="c"):
    """({m: the set of outermost coll/base functions over ranks}, launch) of one checked run."""
    done = launch(programs, np, ["check", collective, *SIZES], mca, probe_dir, language)
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
    assert done.stdout.splitlines() == [f"check {collective} m={m} ok" for m in SIZES]
    ran = defaultdict(set)
    for function, m in outermost_calls(probe_dir):
        ran[m].add(function)
    return dict(ran), done


def mismatches(collective, tree_json, np, ran, plain, sizes=SIZES):
    """What differs from the tree: a forced point that ran another function, a deferred one
    that ran something else than coll/tuned's own decision (`plain`)."""
    want = query(tree_json, np, sizes)
    out = []
    for m, alg in want.items():
        if alg == TWO_PROCS.get(collective) and np != 2:
            want[m] = alg = 0   # coll/collsel defers: two_proc would fail the call
        expected = {FUNCTIONS[collective][alg]} if alg else plain[m]
        if ran.get(m) != expected:
            out.append(f"P={np} m={m}: tree {alg}, wanted {sorted(expected)}, "
                       f"ran {sorted(ran.get(m, ()))}")
    return out, sum(1 for alg in want.values() if alg == 0)


@pytest.mark.parametrize("language", ["c", "fortran"])
@pytest.mark.parametrize("collective", COLLECTIVES)
def test_component_decides_as_collsel_query(collective, language, component, programs, trees,
                                            tmp_path):
    """The C program and its Fortran `use mpi` twin (whose MPI_Bcast Open MPI's Fortran
    bindings hand to the C PMPI_ entry points, below any interposer, not below coll/collsel)."""
    if programs[language] is None:
        pytest.skip("gfortran / mpif90.openmpi missing")
    report = []
    for np in COMM_SIZES:
        plain, _ = traced(programs, collective, np, (), tmp_path / f"plain{np}", language)
        ran, done = traced(programs, collective, np, with_component(component, trees["dir"]),
                           tmp_path / f"collsel{np}", language)
        assert "coll/collsel" not in done.stderr, done.stderr   # every blob loaded
        wrong, deferred = mismatches(collective, trees[collective], np, ran, plain)
        assert wrong == []
        report.append(f"P={np}: {len(SIZES)} sizes as collsel query ({deferred} deferred, "
                      f"ran coll/tuned's choice)")
    print(f"{language} {collective}: " + "; ".join(report))


def mpi4py_traced(programs, np, mca, probe_dir):
    """({collective: {m: outermost functions}}, launch) of one run of MPI4PY_PROGRAM at
    mpi4py's default thread level (asserted: MPI_THREAD_MULTIPLE), every result checked."""
    argv = [MPI4PY_PROGRAM] + [a for c, ms in MPI4PY_SIZES.items() for m in ms for a in (c, m)]
    done = launch(programs, np, argv, mca, probe_dir, "python")
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
    assert done.stdout.splitlines() == ["provided=multiple"] + [
        f"check {c} m={m} mpi4py ok" for c, ms in MPI4PY_SIZES.items() for m in ms]
    ran = defaultdict(lambda: defaultdict(set))
    for function, m in outermost_calls(probe_dir):
        ran[COLLECTIVE_OF[function]][m].add(function)
    return ran, done


def test_mpi4py_decides_as_collsel_query(component, programs, trees, tmp_path):
    """The mpi4py program, unmodified, at its default MPI_THREAD_MULTIPLE: coll/collsel
    decides there too (Open MPI hands it every communicator whatever the thread level)."""
    if programs["python"] is None:
        pytest.skip("mpi4py is not installed in this venv (pip install -e '.[test]')")
    report, changed_total = [], 0
    for np in COMM_SIZES:
        plain, _ = mpi4py_traced(programs, np, (), tmp_path / f"plain{np}")
        ran, done = mpi4py_traced(programs, np, with_component(component, trees["dir"]),
                                  tmp_path / f"collsel{np}")
        assert "coll/collsel" not in done.stderr, done.stderr
        counts = []
        for c, sizes in MPI4PY_SIZES.items():
            wrong, deferred = mismatches(c, trees[c], np, ran[c], plain[c], sizes)
            assert wrong == [], c
            changed = sum(1 for m in sizes if ran[c][m] != plain[c][m])
            counts.append(f"{c} {len(sizes) - deferred}+{deferred} ({changed} changed)")
            changed_total += changed
        report.append(f"P={np}: " + ", ".join(counts))
    assert changed_total, "the trees' decisions equal Open MPI's own at every point"
    print("mpi4py, provided=multiple, forced+deferred sizes as collsel query (sizes where "
          "the function differs from a launch without coll/collsel): " + "; ".join(report))


def bench_traced(programs, collective, np, mca, where):
    """{m: outermost functions of the collective on the measured communicator} of one
    benchmark launch (it exits non-zero on a wrong result)."""
    probe = programs["probe"]
    sizes = ",".join(map(str, BENCH_SIZES[collective]))
    paired = collective not in PER_LAUNCH
    status, output, calls = bench_launch(probe, where, collective, mca,
                                         ["0:0"] if paired else None, sizes, np)
    assert status == 0, output[-2000:]
    assert "coll/collsel" not in output, output[-2000:]
    assert "#@unusable" not in output, output[-2000:]   # a call failed
    own = set(FUNCTIONS[collective].values())
    ran = defaultdict(set)
    for c in calls:
        if c.comm == (0 if paired else -1) and not c.nested and c.function in own:
            ran[c.bytes].add(c.function)
    return dict(ran)


@pytest.mark.parametrize("collective", sorted(BENCH_SIZES))
def test_the_other_collectives_decide_as_collsel_query(collective, component, programs, trees,
                                                       tmp_path):
    sizes = BENCH_SIZES[collective]
    mca = {"mca_base_component_path": f"{component}:{DEBIAN}",
           "coll_collsel_trees": trees["dir"]}
    report = []
    for np in COMM_SIZES:
        deferring = {0, TWO_PROCS.get(collective)} & set(query(trees[collective], np,
                                                                sizes).values())
        plain = bench_traced(programs, collective, np, {}, tmp_path / f"plain{np}") \
            if deferring else {}
        ran = bench_traced(programs, collective, np, mca, tmp_path / f"collsel{np}")
        wrong, deferred = mismatches(collective, trees[collective], np, ran, plain, sizes)
        assert wrong == []
        report.append(f"P={np}: {len(sizes)} sizes, {deferred} deferred")
    print(f"{collective}: as collsel query: " + "; ".join(report))


def test_without_the_component_the_check_fails(programs, trees, tmp_path):
    """The same comparison on a launch without coll/collsel finds the tree's decisions unmet."""
    plain, _ = traced(programs, "bcast", 4, (), tmp_path / "plain")
    wrong, _ = mismatches("bcast", trees["bcast"], 4, plain, plain)
    assert wrong, "coll/tuned alone happened to run every decision of the tree"
    print("\n".join(wrong))


def test_a_non_commutative_operation_defers(component, programs, trees, tmp_path):
    """MPI_Allreduce with a user operation created non-commutative: coll/tuned's own choice at
    every size (the tree's answers are for MPI_SUM), though the tree forces at P = 4."""
    assert 0 not in query(trees["allreduce"], 4, SIZES).values()
    plain, _ = traced(programs, "allreduce_nc", 4, (), tmp_path / "plain")
    ran, _ = traced(programs, "allreduce_nc", 4, with_component(component, trees["dir"]),
                    tmp_path / "collsel")
    assert ran == plain
    wrong, _ = mismatches("allreduce", trees["allreduce"], 4, ran, plain)
    assert wrong, "coll/tuned's choice for the non-commutative op equals the tree's everywhere"


@pytest.mark.parametrize("np", [2, 3])
def test_thread_multiple(np, component, programs, trees):
    """MPI_THREAD_MULTIPLE, 4 threads each on its own communicator, bcast, reduce and allreduce
    at once: results correct (no race detector run: the probe is not thread-safe, so which
    algorithms ran is not traced here)."""
    done = launch(programs, np, ["threads", 4], with_component(component, trees["dir"]))
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
    assert done.stdout.splitlines() == ["threads 4 ok provided=3"]
    assert "coll/collsel" not in done.stderr


def test_the_component_stays_out_without_trees(component, programs, tmp_path):
    """Loaded but coll_collsel_trees unset: coll/tuned decides (same functions as plain)."""
    plain, _ = traced(programs, "bcast", 2, (), tmp_path / "plain")
    loaded, _ = traced(programs, "bcast", 2, ["--mca", "mca_base_component_path",
                                              f"{component}:{DEBIAN}"], tmp_path / "loaded")
    assert loaded == plain


def test_a_corrupt_blob_is_reported_and_open_mpi_decides(component, programs, trees, tmp_path):
    bad = tmp_path / "bcast.bin"
    data = bytearray((trees["dir"] / "bcast.bin").read_bytes())
    data[40] ^= 0xFF
    bad.write_bytes(bytes(data))
    plain, _ = traced(programs, "bcast", 2, (), tmp_path / "plain")
    ran, done = traced(programs, "bcast", 2, with_component(component, bad), tmp_path / "bad")
    lines = [line for line in done.stderr.splitlines() if line.startswith("coll/collsel")]
    assert lines == [f"coll/collsel: error: {bad}: tree blob checksum mismatch (corrupted); "
                     "Open MPI decides every collective"] * 2
    assert ran == plain


def test_a_thousand_communicators_split_used_and_freed(component, programs, trees, tmp_path):
    """MPI_Comm_split + a 1-byte MPI_Bcast on the new communicator + MPI_Comm_free, 1,000 times
    at P = 2 under coll/collsel: with tests/defer_tree.py's bcast tree (it defers at (2, 1):
    the lookup and the hand-over to coll/tuned) and with the tune-vm trees (they force pipeline
    there); each launch runs to its end with every blob loaded. What this costs per call is
    `make bench-overhead`'s (speed/overhead/bench.sh), not a test's."""
    sys.path.insert(0, str(REPO / "tests"))
    import defer_tree   # tests/defer_tree.py
    defer_dir = tmp_path / "defer"
    defer_dir.mkdir()
    run(["collsel", "emit", "--target", "blob", defer_tree.write(tmp_path / "defer.json"),
         "--out", defer_dir / "bcast.bin"])
    assert query(tmp_path / "defer.json", 2, [1]) == {1: 0}
    assert query(trees["bcast"], 2, [1]) != {1: 0}
    for blobs in (defer_dir, trees["dir"]):
        done = launch(programs, 2, ["splitcall", 1000], with_component(component, blobs))
        assert done.returncode == 0, done.stderr[-2000:]
        assert "coll/collsel" not in done.stderr, done.stderr
        assert done.stdout.startswith("splitcall n=1000 ns="), done.stdout
