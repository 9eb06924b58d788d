"""Proof on Open MPI 5.0.11 (make setup-mpis: build/mpis/openmpi5) that one `collsel emit
--target ompi-rules` file for all 14 collectives takes effect, per collective.

Per collective, a table in which method LOW is fastest below 1024 bytes and HIGH from 2048 (at
P = 2, 4, 8), its exact tree, and one classic rules file for all 14. At P = 4 the benchmark,
built with 5.0's mpicc, runs m = 512 and 2048 on MPI_COMM_WORLD under the file, and the
LD_PRELOAD probe (coll_probe.c built against 5.0's mpi.h, as test_forcing.py) sees the function
the file's rule names (`collsel check-rules --query`, Open MPI's reading of the file). 5.0 builds
coll/tuned into libmpi.so.40, whose calls of the ompi_coll_base_* functions go through the PLT
(R_X86_64_JUMP_SLOT relocations), so the probe interposes them as it does 4.1's
mca_coll_tuned.so calls. LOW and HIGH are chosen away from what 5.0's fixed decision runs
there (FIXED_5, seen by the probe without a file), so the fixed decision cannot pass for the
file; no method falls back at P = 4 (core.fallbacks)."""
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from collsel.core import fallbacks
from collsel.sources.measure import benchmark_program as bench
from helpers import switching_table
from test_forcing import FUNCTIONS, outermost, read_probe

HOME = Path(os.environ.get("COLLSEL_OMPI5_HOME",
                           Path(__file__).resolve().parents[2] / "build" / "mpis" / "openmpi5"))
pytestmark = pytest.mark.skipif(not (HOME / "bin" / "mpicc").exists() or shutil.which("cc") is None,
                                reason=f"Open MPI 5 in {HOME} (make setup-mpis) and cc needed")

NPROCS, SIZES = 4, (512, 2048)
# collective -> (LOW below 1024 bytes, HIGH from 2048); barrier has no size: LOW only.
SWITCH = {"allgather": (4, 2), "allgatherv": (3, 2), "allreduce": (2, 4), "alltoall": (2, 3),
          "alltoallv": (2, 1), "barrier": (3, 6), "bcast": (2, 8), "exscan": (2, 1),
          "gather": (1, 2), "reduce": (5, 1), "reduce_scatter": (3, 4),
          "reduce_scatter_block": (2, 4), "scan": (2, 1), "scatter": (3, 1)}
# What 5.0.11's fixed decision ran at P = 4, m = 512 / 2048 (the probe, no file; 2026-11-26).
FIXED_5 = {"allgather": (3, 3), "allgatherv": (4, 4), "allreduce": (3, 3), "alltoall": (4, 4),
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


@pytest.fixture(scope="module")
def tools(tmp_path_factory):
    """(the probe built against 5.0, the benchmark built with 5.0's mpicc)."""
    d = tmp_path_factory.mktemp("ompi5")
    include = subprocess.run([HOME / "bin" / "mpicc", "--showme:compile"], capture_output=True,
                             text=True, timeout=60).stdout.split()
    probe = d / "coll_probe.so"
    done = subprocess.run(["cc", "-shared", "-fPIC", "-O1", "-Wall", "-Wextra", "-Werror",
                           *include, "-o", probe, Path(__file__).with_name("coll_probe.c"),
                           "-ldl"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return probe, bench.locate(mpicc=str(HOME / "bin" / "mpicc"))


@pytest.fixture(scope="module")
def rules_file(tmp_path_factory):
    """(the rules file of all 14 trees, {collective: its rule at P = 4 per size})."""
    d = tmp_path_factory.mktemp("rules5")
    trees = []
    for coll, (low, high) in SWITCH.items():
        table = switching_table(d / f"{coll}.csv", coll, low, high,
                                msg_sizes=(0,) if coll == "barrier" else (256, 512, 2048, 4096))
        _collsel("build", table, "--out", d / coll)
        trees.append(d / coll / "tree.json")
    _collsel("emit", "--target", "ompi-rules", *trees, "--out", d / "rules.conf")
    rules = {c: {m: int(_collsel("check-rules", d / "rules.conf", "--collective", c, "--query",
                                 NPROCS, m, "--ids").split()[0]) for m in sizes_of(c)}
             for c in SWITCH}
    return d / "rules.conf", rules


def launch(tools, where, collective, mca):
    probe, program = tools
    where.mkdir()
    cmd = [HOME / "bin" / "mpirun", *RUN, "-np", str(NPROCS)]
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
                assert fallbacks.fallback(coll, alg, NPROCS, m) is None, (coll, alg, m)


@pytest.mark.slow
@pytest.mark.parametrize("collective", sorted(SWITCH))
def test_the_rules_file_takes_effect_under_open_mpi_5(tools, rules_file, tmp_path, collective):
    path, rules = rules_file
    want = rules[collective]
    low, high = SWITCH[collective]
    assert want[sizes_of(collective)[0]] == low
    ran = launch(tools, tmp_path / "file", collective,
                 {"coll_tuned_use_dynamic_rules": 1, "coll_tuned_dynamic_rules_filename": path})
    print(f"\n{collective} at P={NPROCS} under Open MPI 5 and {path.name}: " + ", ".join(
        f"m={m} -> {'/'.join(sorted(ran[m]))} (rule {want[m]})" for m in ran))
    for m, alg in want.items():
        assert ran[m] == {FUNCTIONS[collective][alg]}, (m, ran[m])
    fixed = dict(zip(sizes_of(collective), FIXED_5[collective]))
    assert any(want[m] != fixed[m] for m in want), "the file picks what 5.0 picks anyway"


@pytest.mark.slow
def test_without_the_file_5_0_runs_its_fixed_decision(tools, tmp_path):
    """The control: FIXED_5 is what runs without the file (so the file changed something)."""
    for collective in ("bcast", "gather", "reduce"):
        ran = launch(tools, tmp_path / collective, collective, {})
        assert ran == {m: {FUNCTIONS[collective][a]}
                       for m, a in zip(sizes_of(collective), FIXED_5[collective])}, collective
