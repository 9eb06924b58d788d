"""Proof on real Open MPI, Debian's 4.1.4 and 5.0.11 (make setup-mpis: build/mpis/openmpi5)
when installed, that one `collsel emit --target ompi-rules` file for all 14 collectives takes
effect, per collective.

Per collective, a table in which method LOW is fastest below 1024 bytes and HIGH from 2048 (at
P = 2, 4, 8), its exact tree, and one classic rules file for all 14. At P = 4 and 3 the
benchmark, built with the MPI's mpicc, runs m = 512 and 2048 on MPI_COMM_WORLD under the file
(one launch per collective, P and MPI), and the LD_PRELOAD probe (collsel_coll_probe.c built against the MPI's mpi.h,
as test_forcing.py) sees the function the file's rule names (`collsel check-rules --query`,
Open MPI's reading of the file) on both sides of the cut. 4.1 loads coll/tuned as
mca_coll_tuned.so; 5.0 builds it into libmpi.so.40, whose calls of the ompi_coll_base_*
functions go through the PLT (R_X86_64_JUMP_SLOT relocations): the probe interposes both. LOW
and HIGH are chosen away from what the fixed decision runs there (FIXED, the same in 4.1.4 and
5.0.11 at these points), so the fixed decision cannot pass for the file; no method falls back at
P = 3 or 4 (core.mpi.fallbacks)."""
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from collsel.core.mpi import fallbacks, rules_size
from collsel.sinks.emit.ompi_rules_reader import COLLECTIVE_IDS
from collsel.sources.measure import benchmark_program as bench, coll_probe
from helpers import switching_table
from test_forcing import FUNCTIONS, outermost, read_probe

PROBE_SOURCE = coll_probe.source_path()

OMPI5 = Path(os.environ.get("COLLSEL_OMPI5_HOME",
                            Path(__file__).resolve().parents[2] / "build" / "mpis" / "openmpi5"))
DEBIAN = Path("/usr")
# name -> (installation prefix, extra mpirun arguments)
MPIS = {"openmpi-4.1.4": (DEBIAN, ["--mca", "btl", "self,vader"]), "openmpi-5.0.11": (OMPI5, [])}
pytestmark = pytest.mark.skipif(shutil.which("cc") is None, reason="cc needed")


def installed(name):
    home = MPIS[name][0]
    return (home / "bin" / "mpicc").exists() and (home / "bin" / "mpirun").exists()


NPROCS, SIZES = (3, 4), (512, 2048)
# collective -> (LOW below 1024 bytes, HIGH from 2048); barrier has no size: LOW only.
SWITCH = {"allgather": (4, 2), "allgatherv": (3, 2), "allreduce": (2, 4), "alltoall": (2, 3),
          "alltoallv": (2, 1), "barrier": (3, 6), "bcast": (2, 8), "exscan": (2, 1),
          "gather": (1, 2), "reduce": (5, 1), "reduce_scatter": (3, 4),
          "reduce_scatter_block": (2, 4), "scan": (2, 1), "scatter": (3, 1)}
# What the fixed decision runs at P = 4, m = 512 / 2048: 5.0.11's seen by the probe without a
# file (2026-11-26); 4.1.4's the same (coll_tuned_decision_fixed.c: allgather :87-88, allgatherv
# :1281-1285, allreduce :137-141, alltoall :275-277, alltoallv :438-439, barrier :484-485, bcast
# :561-569, gather :1427-1431, reduce :742-743, reduce_scatter :864-866, reduce_scatter_block
# :1022-1030, scatter :1510-1514; scan, exscan: linear), checked by the control test.
FIXED = {"allgather": (3, 3), "allgatherv": (4, 4), "allreduce": (3, 3), "alltoall": (4, 4),
           "alltoallv": (1, 1), "barrier": (1, 1), "bcast": (5, 6), "exscan": (1, 1),
           "gather": (2, 1), "reduce": (4, 4), "reduce_scatter": (2, 2),
           "reduce_scatter_block": (3, 3), "scan": (1, 1), "scatter": (2, 1)}
RUN = ["--allow-run-as-root"] if os.geteuid() == 0 else []
RUN += ["--oversubscribe", "--mca", "mpi_yield_when_idle", "1"]


def _collsel(*args):
    done = subprocess.run(["collsel", *map(str, args)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def sizes_of(collective):
    return (0,) if collective == "barrier" else SIZES


@pytest.fixture(scope="module", params=[
    pytest.param(name, marks=pytest.mark.skipif(not installed(name), reason=f"{name} in "
                                                f"{MPIS[name][0]} needed (make setup-mpis)"))
    for name in MPIS])
def tools(request, tmp_path_factory):
    """(the MPI's name, the probe built against its mpi.h, the benchmark built with its mpicc)."""
    home = MPIS[request.param][0]
    d = tmp_path_factory.mktemp(request.param)
    include = subprocess.run([home / "bin" / "mpicc", "--showme:compile"], capture_output=True,
                             text=True, timeout=60).stdout.split()
    probe = d / "coll_probe.so"
    done = subprocess.run(["cc", "-shared", "-fPIC", "-O1", "-Wall", "-Wextra", "-Werror",
                           *include, "-o", probe, PROBE_SOURCE,
                           "-ldl"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return request.param, probe, bench.locate(mpicc=str(home / "bin" / "mpicc"))


@pytest.fixture(scope="module")
def rules_file(tmp_path_factory):
    """(the rules file of all 14 trees, {(collective, P): its rule per size}, {collective:
    tree.json})."""
    d = tmp_path_factory.mktemp("rules5")
    trees = {}
    for coll, (low, high) in SWITCH.items():
        table = switching_table(d / f"{coll}.csv", coll, low, high,
                                msg_sizes=(0,) if coll == "barrier" else (256, 512, 2048, 4096))
        _collsel("build", table, "--out", d / coll)
        trees[coll] = d / coll / "tree.json"
    _collsel("emit", "--target", "ompi-rules", *trees.values(), "--out", d / "rules.conf")
    rules = {(c, p): {m: int(_collsel("check-rules", d / "rules.conf", "--collective", c,
                                      "--query", p, m, "--ids").split()[0]) for m in sizes_of(c)}
             for c in SWITCH for p in NPROCS}
    return d / "rules.conf", rules, trees


def launch(tools, where, collective, mca, nprocs=4):
    name, probe, program = tools
    home, extra = MPIS[name]
    where.mkdir()
    cmd = [home / "bin" / "mpirun", *RUN, *extra, "-np", str(nprocs)]
    for key, value in mca.items():
        cmd += ["--mca", key, str(value)]
    cmd += ["-x", f"LD_PRELOAD={probe}", "-x", f"COLL_PROBE_DIR={where}", program,
            "--collective", collective, "--sizes", ",".join(map(str, sizes_of(collective))),
            "--min-reps", "2", "--max-reps", "3", "--warmup", "1", "--time-cap", "0.01"]
    done = subprocess.run(list(map(str, cmd)), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    calls = read_probe(where)
    return {m: outermost(calls, -1, m) & {FUNCTIONS[collective][a] for a in FUNCTIONS[collective]}
            for m in sizes_of(collective)}


def test_the_methods_do_not_fall_back_here():
    for coll, pair in SWITCH.items():
        for alg in pair:
            for m in sizes_of(coll):
                for p in NPROCS:
                    assert fallbacks.fallback(coll, alg, p, m) is None, (coll, alg, p, m)


@pytest.mark.slow    # the fixture's 42 collsel runs take ~40 s
def test_check_rules_evaluates_every_collective_against_its_tree(rules_file):
    """`check-rules FILE --tree ...`: a line per collective; the file decides as the tree on every
    grid point but where Open MPI's rule ignores the count (one rule per block: LOW, the tree's
    HIGH at m >= 2048 lost)."""
    path, _, trees = rules_file
    said = _collsel("check-rules", path, *(a for t in trees.values() for a in ("--tree", t)))
    print("\n" + said)
    lines = said.splitlines()[1:]    # after the summary line; in collective id order
    order = sorted(SWITCH, key=COLLECTIVE_IDS.get)
    assert [line.split(": ")[1].split()[0] for line in lines] == order
    for coll, line in zip(order, lines):
        grid = 3 if coll == "barrier" else 12
        agree = 6 if rules_size.relation(coll) == rules_size.IGNORED else grid
        assert f"the file decides as the tree on {agree} of {grid} grid points" in line, line


@pytest.mark.slow
@pytest.mark.parametrize("nprocs", NPROCS)
@pytest.mark.parametrize("collective", sorted(SWITCH))
def test_the_rules_file_takes_effect(tools, rules_file, tmp_path, collective, nprocs):
    path, rules, _ = rules_file
    want = rules[collective, nprocs]
    low, high = SWITCH[collective]
    assert want[sizes_of(collective)[0]] == low
    ran = launch(tools, tmp_path / "file", collective,
                 {"coll_tuned_use_dynamic_rules": 1, "coll_tuned_dynamic_rules_filename": path},
                 nprocs)
    print(f"\n{collective} at P={nprocs} under {tools[0]} and {path.name}: " + ", ".join(
        f"m={m} -> {'/'.join(sorted(ran[m]))} (rule {want[m]})" for m in ran))
    for m, alg in want.items():
        assert ran[m] == {FUNCTIONS[collective][alg]}, (m, ran[m])
    if nprocs == 4:
        fixed = dict(zip(sizes_of(collective), FIXED[collective]))
        assert any(want[m] != fixed[m] for m in want), "the file picks what Open MPI picks anyway"


@pytest.mark.slow
def test_without_the_file_open_mpi_runs_its_fixed_decision(tools, tmp_path):
    """The control: FIXED is what runs without the file (so the file changed something)."""
    for collective in ("bcast", "gather", "reduce"):
        ran = launch(tools, tmp_path / collective, collective, {})
        assert ran == {m: {FUNCTIONS[collective][a]}
                       for m, a in zip(sizes_of(collective), FIXED[collective])}, collective
