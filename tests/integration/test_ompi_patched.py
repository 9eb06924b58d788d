"""(b) Open MPI 4.1 built with collsel's dec_fixed functions (`make ompi-patched`).

An MPI program (coll_check.c, compiled with the patched build's mpicc) runs MPI_Bcast (MPI_BYTE)
and MPI_Reduce (MPI_INT, MPI_SUM) under the patched build's own mpirun, with
coll_tuned_use_dynamic_rules 0 so the fixed decision runs, and COLLSEL_TRACE set so the
generated function prints each decision. For P = 2..8 and 20 message sizes per collective (one
launch per P and collective), every rank's traced decision (algorithm, segsize, faninout) must
equal `collsel query` on the tree spliced into the build, and the results must be correct.
The 20 sizes straddle 10 of the tree's message-size cuts (one byte / one int below and at the
cut), so an off-by-one in the emitted comparisons would show.
"""
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

from coll_trace import FUNCTIONS
from coll_trace import build as build_trace, run as run_traced

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))
import defer_tree  # noqa: E402  (tests/defer_tree.py)
PATCHED = REPO / "build" / "ompi-patched"
PREFIX = PATCHED / "install"
PROGRAM = pathlib.Path(__file__).with_name("coll_check.c")
TRACE = re.compile(r"^collsel-trace (\w+) rank=(\d+) comm_size=(\d+) msg_size=(\d+) alg=(-?\d+) "
                   r"segsize=(-?\d+) faninout=(-?\d+)$")
COMM_SIZES = range(2, 9)
N_SIZES = 20


@pytest.fixture(scope="module")
def build():
    if not (PATCHED / ".installed").exists():
        pytest.fail("build/ompi-patched is not built: run `make ompi-patched` "
                    "(make integration does)")
    spliced = (PATCHED / "src/ompi/mca/coll/tuned/coll_tuned_decision_fixed.c").read_text()
    for c in ("bcast", "reduce"):
        generated = (PATCHED / f"ompi_{c}_intra_dec_fixed.c").read_text().rstrip("\n")
        assert generated in spliced, f"the build does not hold the current {c} function"
    env = dict(os.environ, PATH=f"{PREFIX / 'bin'}:{os.environ['PATH']}",
               LD_LIBRARY_PATH=str(PREFIX / "lib"), OPAL_PREFIX=str(PREFIX))
    return env


@pytest.fixture(scope="module")
def program(build, tmp_path_factory):
    exe = tmp_path_factory.mktemp("ompi_patched") / "coll_check"
    r = subprocess.run([str(PREFIX / "bin" / "mpicc"), "-O2", "-std=c99", "-Wall", "-Wextra",
                        "-Werror", "-o", str(exe), str(PROGRAM)],
                       env=build, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    linked = subprocess.run(["ldd", str(exe)], env=build, capture_output=True, text=True).stdout
    assert str(PREFIX / "lib" / "libmpi.so") in linked, linked
    return exe


def tree(collective):
    return PATCHED / "trees" / collective / "tree.json"


def sizes(collective):
    """20 sizes around 10 message-size cuts of the tree, multiples of the element size."""
    import json
    unit = 1 if collective == "bcast" else 4
    cuts = [c for c in json.loads(tree(collective).read_text())["axes"][1]["cuts"]
            if c > unit]                          # distinct after rounding to the unit
    picks = [cuts[round(i * (len(cuts) - 1) / 9)] for i in range(10)]
    out = []
    for cut in picks:
        at = -(-cut // unit) * unit           # first multiple of unit >= cut
        out += [at - unit, at] if at - unit > 0 else [at, at + unit]
    assert len(set(out)) == N_SIZES, out
    return out


def query(collective, points):
    text = "".join(f"{p} {m}\n" for p, m in points)
    r = subprocess.run(["collsel", "query", str(tree(collective)), "--ids", "--points", "-"],
                       input=text, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.split("\n")[:len(points)]
    return {pm: tuple(int(x) for x in line.split()[:3]) for pm, line in zip(points, lines)}


@pytest.mark.parametrize("collective", ["bcast", "reduce"])
def test_traced_decisions_equal_query_and_results_correct(collective, build, program):
    ms = sizes(collective)
    expected = query(collective, [(p, m) for p in COMM_SIZES for m in ms])
    # The points must tell methods apart, or agreement would prove little.
    assert len({alg for alg, _, _ in expected.values()}) >= 3, expected
    checked = 0
    for p in COMM_SIZES:
        cmd = ["timeout", "120", str(PREFIX / "bin" / "mpirun"), "--allow-run-as-root",
               "--oversubscribe", "--mca", "mpi_yield_when_idle", "1",
               "--mca", "coll_tuned_use_dynamic_rules", "0", "-x", "COLLSEL_TRACE=1",
               "-np", str(p), str(program), collective, *map(str, ms)]
        r = subprocess.run(cmd, env=build, capture_output=True, text=True, timeout=150)
        assert r.returncode == 0, f"P={p}: exit {r.returncode}\n{r.stdout}\n{r.stderr[-2000:]}"
        results = [line for line in r.stdout.splitlines() if line.startswith("check ")]
        assert results == [f"check {collective} m={m} ok" for m in ms], r.stdout
        traced = {}
        for line in r.stderr.splitlines():
            t = TRACE.match(line)
            if t and t.group(1) == collective:
                rank, size, m = int(t.group(2)), int(t.group(3)), int(t.group(4))
                traced.setdefault((size, m), []).append((rank, tuple(map(int, t.groups()[4:]))))
        # One traced decision per rank and call, for exactly the calls the program made.
        assert sorted(traced) == sorted((p, m) for m in ms), sorted(traced)
        for m in ms:
            ranks = sorted(rank for rank, _ in traced[(p, m)])
            assert ranks == list(range(p)), (p, m, ranks)
            decisions = {d for _, d in traced[(p, m)]}
            assert decisions == {expected[(p, m)]}, (p, m, decisions, expected[(p, m)])
            checked += 1
    print(f"{collective}: {checked} (P, m) decisions traced equal collsel query; "
          f"P={COMM_SIZES.start}..{COMM_SIZES.stop - 1}, sizes {ms}")
    assert checked == len(COMM_SIZES) * N_SIZES


# --- Defer to the MPI (issue 17 item 4): the generated dec_fixed calls Open MPI's original ------

DEFER_COMM_SIZES = (2, 3, 4, 6, 8)
DEFER_SIZES = {"bcast": (1, 100, 300, 1000, 4096, 100000),
               "reduce": (4, 100, 1000, 4096, 100000)}


def defer_component(directory):
    """A private mca_coll_tuned.so in directory/components: the build's objects, with
    coll_tuned_decision_fixed.c spliced from the hand-made trees of tests/defer_tree.py (both
    collectives) and compiled and linked by the build's own logged commands
    (mpi-builds/ompi-patched/component.py)."""
    args = []
    for c in ("bcast", "reduce"):
        tree = defer_tree.write(directory / f"{c}.json", c)
        r = subprocess.run(["collsel", "emit", "--target", "ompi-dec-fixed", str(tree), "--out",
                            str(directory / f"{c}.c")], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        args.append(f"ompi_coll_tuned_{c}_intra_dec_fixed={directory / f'{c}.c'}")
    r = subprocess.run(["python3", str(REPO / "mpi-builds/ompi-patched/component.py"),
                        str(PATCHED), str(directory), *args],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    text = (directory / "coll_tuned_decision_fixed.c").read_text()
    assert "int collsel_ompi_original_bcast_intra_dec_fixed(void *buff" in text
    return directory / "components"


@pytest.mark.parametrize("collective", ["bcast", "reduce"])
def test_defer_region_runs_open_mpis_own_fixed_decision(collective, build, tmp_path):
    """The generated dec_fixed of a tree with two deferring blocks, built into a private
    mca_coll_tuned.so that the patched build loads first (mca_base_component_path). At every
    point the COLLSEL_TRACE line must show the tree's decision (alg=0 where it defers: so the
    private component ran), and the coll/base algorithm that ran (LD_PRELOAD trace) must be,
    where it defers, the one Debian's unpatched Open MPI 4.1.4 runs with its fixed decision, and
    elsewhere the tree's algorithm."""
    if shutil.which("mpicc") is None or shutil.which("mpirun") is None:
        pytest.skip("Debian's Open MPI (mpicc, mpirun) is the reference and is not installed")
    components = defer_component(tmp_path)
    (tmp_path / "patched").mkdir()
    (tmp_path / "debian").mkdir()
    patched_lib, patched_exe = build_trace(PREFIX / "bin" / "mpicc", tmp_path / "patched",
                                           env=build)
    debian_lib, debian_exe = build_trace("mpicc", tmp_path / "debian")
    mca = ("--mca", "coll_tuned_use_dynamic_rules", "0",
           "--mca", "mca_base_component_path", f"{components}:{PREFIX / 'lib' / 'openmpi'}",
           "-x", "COLLSEL_TRACE=1")
    sizes = DEFER_SIZES[collective]
    deferred, algorithms_seen = 0, set()
    for p in DEFER_COMM_SIZES:
        patched, stderr = run_traced(PREFIX / "bin" / "mpirun", patched_lib, patched_exe,
                                     collective, p, sizes, mca, env=build)
        debian, _ = run_traced("mpirun", debian_lib, debian_exe, collective, p, sizes,
                               ("--mca", "coll_tuned_use_dynamic_rules", "0"))
        traced = {}
        for line in stderr.splitlines():
            t = TRACE.match(line)
            if t and t.group(1) == collective:
                traced.setdefault(int(t.group(4)), set()).add(tuple(map(int, t.groups()[4:])))
        # the private component decided: its trace is the defer tree's, one decision per size
        assert traced == {m: {defer_tree.expected(collective, p, m)} for m in sizes}, traced
        for m in sizes:
            alg = defer_tree.expected(collective, p, m)[0]
            want = debian[m] if alg == 0 else FUNCTIONS[collective][alg]
            assert patched[m] == want, (p, m, alg, patched[m], debian[m])
            if alg == 0:
                deferred += 1
                algorithms_seen.add(debian[m])
        print(f"{collective} P={p}: patched build with the defer tree {patched}, "
              f"Debian Open MPI fixed {debian}")
    assert deferred >= 10 and len(algorithms_seen) >= 3, (deferred, algorithms_seen)
