"""Proof that paired-mode forcing takes under Open MPI: every per-method communicator runs its
forced coll/tuned algorithm, observed from inside the library.

tests/forcing/coll_probe.c, preloaded into every rank, counts the calls of Open MPI's base
algorithm functions per communicator (named by --methods position). `forcing_failures` is the
one checker; with forcing silently disabled (coll/tuned not selected) it must report failures,
so it can fail. Sizes avoid Open MPI's own silent fallbacks (split_bintree runs chain at 1 byte;
scatter_allgather(_ring) and redscat_gather run basic_linear when count < P)."""
import os
import shutil
import subprocess
from collections import defaultdict
from pathlib import Path

import pytest

from collsel.sources.measure import benchmark_program as bench

pytestmark = pytest.mark.skipif(
    shutil.which("mpirun") is None or shutil.which("mpicc") is None or shutil.which("cc") is None
    or not bench.source_path().is_file(), reason="Open MPI (mpirun, mpicc) and cc needed")

# coll/tuned algorithm id -> the base function it calls (ompi_coll_tuned_*_intra_do_this, 4.1).
FUNCTIONS = {
    "bcast": {1: "basic_linear", 2: "chain", 3: "pipeline", 4: "split_bintree", 5: "bintree",
              6: "binomial", 7: "knomial", 8: "scatter_allgather", 9: "scatter_allgather_ring"},
    "reduce": {1: "basic_linear", 2: "chain", 3: "pipeline", 4: "binary", 5: "binomial",
               6: "in_order_binary", 7: "redscat_gather"},
}
METHODS = {
    "bcast": ["0:0", "1:0", "2:0:2", "3:1024", "4:0", "5:0", "6:0", "6:1024", "7:0", "8:0", "9:0"],
    "reduce": ["0:0", "1:0", "2:1024:2", "3:1024", "4:0", "5:0", "6:0", "7:0"],
}
SIZES = "64,8192"
NPROCS = 4
RUN = ["--allow-run-as-root"] if os.geteuid() == 0 else []
RUN += ["--oversubscribe", "--mca", "mpi_yield_when_idle", "1", "--mca", "btl", "self,vader"]


@pytest.fixture(scope="module")
def probe(tmp_path_factory):
    out = tmp_path_factory.mktemp("probe") / "coll_probe.so"
    include = subprocess.run(["mpicc", "--showme:compile"], capture_output=True, text=True)
    cmd = ["cc", "-shared", "-fPIC", "-O1", "-Wall", "-Wextra", "-Werror",
           *include.stdout.split(), "-o", str(out),
           str(Path(__file__).with_name("coll_probe.c")), "-ldl"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return out


def run_probed(probe, tmp_path, collective, mca):
    """The paired benchmark under the probe; (exit status, stderr, {comm index: {function:
    calls}} summed over ranks)."""
    cmd = ["mpirun", *RUN, "-np", str(NPROCS)]
    for key, value in mca.items():
        cmd += ["--mca", key, str(value)]
    cmd += ["-x", f"LD_PRELOAD={probe}", "-x", f"COLL_PROBE_DIR={tmp_path}",
            bench.locate(), "--collective", collective, "--sizes", SIZES,
            "--methods", ",".join(METHODS[collective]), "--min-reps", "2", "--max-reps", "3",
            "--warmup", "1", "--time-cap", "0.01"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    calls = defaultdict(lambda: defaultdict(int))
    for path in tmp_path.glob("probe.*"):
        for line in path.read_text().splitlines():
            comm, function, count = line.split()
            calls[int(comm)][function] += int(count)
    return done.returncode, done.stderr, calls


def forcing_failures(collective, calls):
    """One message per --methods entry whose communicator did not run exactly its algorithm
    (algorithm 0, the MPI's own choice, must run something)."""
    prefix = f"ompi_coll_base_{collective}_intra_"
    failures = []
    for index, method in enumerate(METHODS[collective]):
        alg = int(method.split(":")[0])
        ran = {f.removeprefix(prefix) for f in calls.get(index, {})}
        if not ran:
            failures.append(f"{method}: ran no probed algorithm")
        elif alg and ran != {FUNCTIONS[collective][alg]}:
            failures.append(f"{method}: ran {sorted(ran)}, not {FUNCTIONS[collective][alg]}")
    return failures


@pytest.mark.parametrize("collective", ["bcast", "reduce"])
def test_every_communicator_runs_its_forced_algorithm(probe, tmp_path, collective):
    status, stderr, calls = run_probed(probe, tmp_path, collective,
                                       {"coll_tuned_use_dynamic_rules": 1})
    assert status == 0, stderr[-2000:]
    assert forcing_failures(collective, calls) == []
    # every method was called by every rank: checked first call + warm-up + reps, 2 sizes
    for index in range(len(METHODS[collective])):
        assert sum(calls[index].values()) >= NPROCS * 2 * 3


def test_the_checker_fails_when_forcing_is_silently_off(probe, tmp_path):
    """coll_tuned_priority 0: the forcing variables exist and read back, but coll/tuned is not
    the component that runs, so no communicator runs its forced algorithm."""
    status, stderr, calls = run_probed(probe, tmp_path, "bcast",
                                       {"coll_tuned_use_dynamic_rules": 1,
                                        "coll_tuned_priority": 0})
    assert status == 0, stderr[-2000:]
    failures = forcing_failures("bcast", calls)
    # basic_linear is what coll/basic runs: only method 1:0 can agree by coincidence
    assert len(failures) >= len(METHODS["bcast"]) - 2, failures


def test_the_benchmark_refuses_when_dynamic_rules_are_off(probe, tmp_path):
    """coll_tuned_use_dynamic_rules 0: coll/tuned would ignore every forced algorithm; the
    benchmark sees it and refuses (exit 6) instead of measuring the default under false names."""
    status, stderr, calls = run_probed(probe, tmp_path, "bcast",
                                       {"coll_tuned_use_dynamic_rules": 0})
    assert status == bench.EXIT_FORCING_FAILED
    assert "collsel_bench: forcing did not take: coll_tuned_use_dynamic_rules is off" in stderr
    assert all(index < 0 for index in calls)   # nothing measured
