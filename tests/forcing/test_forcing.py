"""Proof that paired-mode forcing takes under Open MPI, for every method of the 14 collectives
coll/tuned can force, observed from inside the library; that the benchmark's m is the quantity
coll/tuned's fixed decision computes; and that core.mpi.fallbacks predicts Open MPI's silent
fallbacks.

collsel_coll_probe.c (the probe `collsel verify` runs, package data beside the benchmark), preloaded into every rank, counts the calls of Open MPI's base
algorithm functions per communicator (named by --methods position), with the bytes the fixed
decision computes for the call and whether the call was nested in another probed function (a
fallback or a composite). `forcing_failures` is the one checker: the outermost function of
every communicator must be its forced algorithm's; with forcing silently disabled (coll/tuned
not selected) it reports failures, so it can fail. Every launch is `slow` (make integration):
-np 4, two sizes, --max-reps 3, one launch per collective."""
import os
import shutil
import subprocess
from collections import defaultdict, namedtuple
from pathlib import Path

import pytest

from collsel.core.mpi import algorithms, fallbacks
from collsel.sources.measure import benchmark_program as bench, coll_probe

pytestmark = pytest.mark.skipif(
    shutil.which("mpirun") is None or shutil.which("mpicc") is None or shutil.which("cc") is None
    or not bench.source_path().is_file(), reason="Open MPI (mpirun, mpicc) and cc needed")

# coll/tuned algorithm id -> the base function it calls (core.mpi.algorithms, which collsel verify
# reads the probe with).
FUNCTIONS = algorithms.OMPI_BASE_FUNCTIONS
# Methods proven at -np 4: every algorithm with its parameters, except two_procs, which refuses
# any P but 2 (core.mpi.fallbacks) and is proven at -np 2 by test_the_fallback_table_matches_the_library.
SEGMENTED = {"bcast": {2: "2:0:2", 3: "3:1024", 6: "6:1024"}, "reduce": {2: "2:1024:2", 3: "3:1024"},
             "allreduce": {5: "5:1024"}}
TWO_PROCS = {"allgather": 6, "allgatherv": 5, "alltoall": 5, "barrier": 5}
METHODS = {
    coll: ["0:0"] + [SEGMENTED.get(coll, {}).get(alg, f"{alg}:0") for alg in sorted(functions)
                     if alg != TWO_PROCS.get(coll)] + (["6:0"] if coll == "bcast" else [])
    for coll, functions in FUNCTIONS.items()
}
NPROCS = 4
# Two sizes m per collective, straddling a threshold of its fixed decision at P = 4
# (ompi/mca/coll/tuned/coll_tuned_decision_fixed.c of 4.1.4), and the algorithm it picks at
# each. The quantity compared is the decision's own (collsel_coll_probe.c names the lines).
DECIDED = {
    "allgather": ({64: 3, 8192: 3}, ":1120-1121 P < 32: recursive_doubling at every m"),
    "allgatherv": ({128: 1, 1024: 4}, ":1281-1285 per-rank < 256: default, < 4096: neighbor"),
    "allreduce": ({64: 3, 8192: 6}, ":137-143 m < 16: ring, < 8192: recursive_doubling, "
                                    "else rabenseifner"),
    "alltoall": ({64: 4, 8192: 1}, ":275-279 m < 8192: linear_sync, < 16384: linear"),
    "alltoallv": ({64: 1, 8192: 1}, ":438-439 4 <= P < 64: basic_linear, on P alone"),
    "barrier": ({0: 1}, ":484-485 4 <= P < 8: linear, on P alone"),
    "bcast": ({64: 6, 8192: 1}, ":561-571 64 <= m < 128: binomial, "
                                "8192 <= m < 1M: basic_linear"),
    "exscan": ({64: 1, 8192: 1}, "no fixed decision in 4.1.4: coll_tuned_exscan_decision.c:99-100 "
                                 "runs linear"),
    "gather": ({64: 2, 4096: 1}, ":1427-1431 m < 1024: binomial, < 8192: basic_linear"),
    "reduce": ({64: 4, 8192: 2}, ":742-745 m < 4096: binary, < 65536: chain"),
    "reduce_scatter": ({64: 2, 262144: 3}, ":864-870 total < 262144: recursive_halving, "
                                           "else ring"),
    "reduce_scatter_block": ({64: 4, 1024: 3}, ":1022-1030 m < 256: butterfly, < 8192: "
                                               "recursive_halving"),
    "scan": ({64: 1, 8192: 1}, "no fixed decision in 4.1.4: coll_tuned_scan_decision.c:99-100 "
                               "runs linear"),
    "scatter": ({64: 2, 2048: 1}, ":1510-1514 m < 2048: binomial, < 4096: basic_linear"),
}
COLLECTIVES = sorted(FUNCTIONS)
# 4.1.4 registers coll_tuned_allgatherv_algorithm with MCA_BASE_VAR_SCOPE_CONSTANT
# (coll_tuned_allgatherv_decision.c:84): MPI_T cannot set it, so the benchmark refuses paired
# mode (exit 6) and allgatherv's methods are forced one launch each with --mca.
PER_LAUNCH = {"allgatherv"}
RUN = ["--allow-run-as-root"] if os.geteuid() == 0 else []
RUN += ["--oversubscribe", "--mca", "mpi_yield_when_idle", "1", "--mca", "btl", "self,vader"]
FORCING_ON = {"coll_tuned_use_dynamic_rules": 1}
Call = namedtuple("Call", "comm function nested bytes calls")


@pytest.fixture(scope="module")
def probe(tmp_path_factory):
    out = tmp_path_factory.mktemp("probe") / "coll_probe.so"
    include = subprocess.run(["mpicc", "--showme:compile"], capture_output=True, text=True)
    cmd = ["cc", "-shared", "-fPIC", "-O1", "-Wall", "-Wextra", "-Werror",
           *include.stdout.split(), "-o", str(out),
           str(coll_probe.source_path()), "-ldl"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return out


def sizes_of(collective):
    return ",".join(str(m) for m in DECIDED[collective][0])


def run_probed(probe, tmp_path, collective, mca, methods, sizes, nprocs=NPROCS):
    """The benchmark under the probe; (exit status, stderr, [Call] summed over ranks). Paired
    (one launch, communicator i = methods[i]), but for PER_LAUNCH collectives one launch per
    method forced with --mca, its calls of the collective's functions on MPI_COMM_WORLD
    numbered as communicator i."""
    if collective in PER_LAUNCH:
        runs = [_launch(probe, tmp_path / f"m{i}", collective,
                        {**mca, f"coll_tuned_{collective}_algorithm": method.split(":")[0]},
                        None, sizes, nprocs) for i, method in enumerate(methods)]
        own = set(FUNCTIONS[collective].values())
        calls = [c._replace(comm=i) for i, (_, _, found) in enumerate(runs) for c in found
                 if c.comm == -1 and c.function in own]
        return max(r[0] for r in runs), "".join(r[1] for r in runs), calls
    return _launch(probe, tmp_path, collective, mca, methods, sizes, nprocs)


def _launch(probe, tmp_path, collective, mca, methods, sizes, nprocs):
    tmp_path.mkdir(exist_ok=True)
    cmd = ["mpirun", *RUN, "-np", str(nprocs)]
    for key, value in mca.items():
        cmd += ["--mca", key, str(value)]
    cmd += ["-x", f"LD_PRELOAD={probe}", "-x", f"COLL_PROBE_DIR={tmp_path}",
            bench.locate(), "--collective", collective, "--sizes", sizes,
            "--min-reps", "2", "--max-reps", "3", "--warmup", "1", "--time-cap", "0.01"]
    if methods is not None:
        cmd += ["--methods", ",".join(methods)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=90)
    return done.returncode, done.stderr + done.stdout, read_probe(tmp_path)


def read_probe(directory):
    """[Call] summed over the ranks' probe.<pid> files in `directory`."""
    summed = defaultdict(int)
    for path in Path(directory).glob("probe.*"):
        for line in path.read_text().splitlines():
            comm, function, nested, nbytes, count = line.split()
            key = (int(comm), function.removeprefix("ompi_coll_base_"), nested == "1", int(nbytes))
            summed[key] += int(count)
    return [Call(*key, n) for key, n in summed.items()]


def outermost(calls, comm, nbytes=None):
    """The functions communicator `comm` ran itself (not through another), at `nbytes` if given."""
    return {c.function for c in calls
            if c.comm == comm and not c.nested and nbytes in (None, c.bytes)}


def forcing_failures(collective, methods, calls):
    """One message per --methods entry whose communicator did not run exactly its algorithm
    (algorithm 0, the MPI's own choice, must run something)."""
    failures = []
    for index, method in enumerate(methods):
        alg = int(method.split(":")[0])
        ran = outermost(calls, index)
        if not ran:
            failures.append(f"{method}: ran no probed algorithm")
        elif alg and ran != {FUNCTIONS[collective][alg]}:
            failures.append(f"{method}: ran {sorted(ran)}, not {FUNCTIONS[collective][alg]}")
    return failures


_LAUNCHES = {}


@pytest.fixture
def forced(probe, tmp_path_factory):
    """One launch per collective with forcing on, shared by the forcing and the m tests."""
    def launch(collective):
        if collective not in _LAUNCHES:
            where = tmp_path_factory.mktemp(f"forced-{collective}")
            _LAUNCHES[collective] = run_probed(probe, where, collective, FORCING_ON,
                                               METHODS[collective], sizes_of(collective))
        return _LAUNCHES[collective]
    return launch


@pytest.mark.slow
@pytest.mark.parametrize("collective", COLLECTIVES)
def test_every_communicator_runs_its_forced_algorithm(forced, collective):
    status, stderr, calls = forced(collective)
    assert status == 0, stderr[-2000:]
    methods = METHODS[collective]
    assert forcing_failures(collective, methods, calls) == []
    # every method was called by every rank: checked first call + warm-up + reps, every size
    nsizes = len(sizes_of(collective).split(","))
    for index, method in enumerate(methods):
        ran = sum(c.calls for c in calls if c.comm == index and not c.nested)
        assert ran >= NPROCS * nsizes * 3, (method, ran)
    print(f"\n{collective}: {len(methods)} methods ran their forced function: "
          + ", ".join(f"{m}={'/'.join(sorted(outermost(calls, i)))}"
                      for i, m in enumerate(methods)))


@pytest.mark.slow
@pytest.mark.parametrize("collective", COLLECTIVES)
def test_m_is_what_the_fixed_decision_computes(forced, collective):
    """Method 0:0 (forcing off for that communicator: coll/tuned's fixed decision) at two sizes
    m across a threshold of the decision: the probe sees the decision's quantity equal to m and
    the algorithm the 4.1.4 source picks for it on each side."""
    status, stderr, calls = forced(collective)
    assert status == 0, stderr[-2000:]
    picks, source = DECIDED[collective]
    seen = {c.bytes for c in calls if c.comm == 0 and not c.nested}
    assert seen == set(picks), f"the decision saw {sorted(seen)} bytes, the benchmark's m " \
                               f"are {sorted(picks)}"
    for m, alg in picks.items():
        assert outermost(calls, 0, m) == {FUNCTIONS[collective][alg]}, (m, source)
    print(f"\n{collective}: 0:0 at P={NPROCS} " + ", ".join(
        f"m={m} -> {FUNCTIONS[collective][alg]}" for m, alg in picks.items()) + f" ({source})")


def fallback_points():
    """(collective, method, P, m, predicted entry or None) around every fallback condition:
    one point where the table predicts the fallback and one where it does not."""
    points = []
    for entry in fallbacks.FALLBACKS:
        coll, alg = entry.collective, entry.algorithm
        if coll == "reduce_scatter_block":
            continue   # P * m > INT_MAX: 2 GiB per launch, not a test
        if entry.runs is None:   # two_procs: refuses at P != 2, runs at 2
            m = 0 if coll == "barrier" else 64
            points += [(coll, f"{alg}:0", 2, m), (coll, f"{alg}:0", 4, m)]
            continue
        seg = {("allreduce", 5): 16, ("bcast", 4): 16}.get((coll, alg), 0)
        if "P" in entry.condition and "m" not in entry.condition:
            points += [(coll, f"{alg}:0", 3, 64), (coll, f"{alg}:0", 4, 64)]
        else:
            points += [(coll, f"{alg}:{seg}", 4, 1), (coll, f"{alg}:{seg}", 4, 256)]
    return [(c, meth, p, m, fallbacks.fallback(c, int(meth.split(":")[0]), p, m,
                                                int(meth.split(":")[1])))
            for c, meth, p, m in points]


# MPI_ERR_UNSUPPORTED_OPERATION in Debian's Open MPI 4.1 (mpi.h): MPI_ERRORS_ARE_FATAL aborts
# with the error class as the exit status
ABORTED_UNSUPPORTED = 52


@pytest.mark.slow
@pytest.mark.parametrize("collective, method, nprocs, m, entry", fallback_points(),
                         ids=lambda v: ("falls-back" if isinstance(v, fallbacks.Fallback) else
                                        "as-forced" if v is None else str(v)))
def test_the_fallback_table_matches_the_library(probe, tmp_path, collective, method, nprocs, m,
                                                entry):
    """The probe sees the method's communicator call the other algorithm's function exactly
    where core.mpi.fallbacks predicts it; where the table predicts a refusal the benchmark reports
    the method unusable at m (#@unusable.M)."""
    status, stderr, calls = run_probed(probe, tmp_path, collective, FORCING_ON, [method],
                                       str(m), nprocs)
    if collective in PER_LAUNCH and entry is not None and entry.runs is None:
        # forced per launch on MPI_COMM_WORLD, whose errors are fatal: the refusal aborts the
        # launch (before the probe writes its counts) with the error class as mpirun's exit
        # status. Its message travels through ORTE's show_help, which loses it under load
        # ("ORTE_ERROR_LOG: Data unpack would read past end of buffer ... show_help.c"), so the
        # status alone proves the refusal too.
        assert status == ABORTED_UNSUPPORTED or (
            status != 0 and "MPI_ERR_UNSUPPORTED_OPERATION" in stderr), (status, stderr[-2000:])
        return
    assert status == 0, stderr[-2000:]
    alg = int(method.split(":")[0])
    assert outermost(calls, 0) == {FUNCTIONS[collective][alg]}
    nested = {c.function for c in calls if c.comm == 0 and c.nested}
    refused = f"#@unusable.{m}={method}" in stderr
    assert refused == (entry is not None and entry.runs is None), stderr[-2000:]
    if entry is None:
        others = {f for f in nested if f.startswith(collective + "_")}
        assert others == set(), f"{method} at P={nprocs} m={m}: unpredicted {sorted(others)}"
    elif entry.runs is not None:
        assert FUNCTIONS[collective][entry.runs] in nested, \
            f"{method} at P={nprocs} m={m}: predicted {entry.condition} ({entry.source}), " \
            f"probe saw {sorted(nested)}"


@pytest.mark.slow
@pytest.mark.parametrize("collective", COLLECTIVES)
def test_the_checker_fails_when_forcing_is_silently_off(probe, tmp_path, collective):
    """coll_tuned_priority 0: the forcing variables exist and read back, but coll/tuned is not
    the component that runs, so no communicator runs its forced algorithm (coll/basic's own
    choice may coincide with one method's function, never with more)."""
    methods = METHODS[collective]
    status, stderr, calls = run_probed(probe, tmp_path, collective,
                                       {**FORCING_ON, "coll_tuned_priority": 0},
                                       methods, sizes_of(collective))
    assert status == 0, stderr[-2000:]
    failures = forcing_failures(collective, methods, calls)
    print(f"\n{collective} with coll/tuned off: {len(failures)} of {len(methods)} methods fail: "
          + "; ".join(failures))
    basic = outermost(calls, 0)   # what runs instead (coll/basic), seen on the 0:0 communicator
    coinciding = {m for m in methods[1:] if FUNCTIONS[collective][int(m.split(":")[0])] in basic}
    failing = {f.split(": ")[0] for f in failures}
    assert failing == set(methods) - coinciding - ({"0:0"} if basic else set())
    assert failing


@pytest.mark.slow
def test_the_benchmark_refuses_when_dynamic_rules_are_off(probe, tmp_path):
    """coll_tuned_use_dynamic_rules 0: coll/tuned would ignore every forced algorithm; the
    benchmark sees it and refuses (exit 6) instead of measuring the default under false names."""
    status, stderr, calls = run_probed(probe, tmp_path, "bcast",
                                       {"coll_tuned_use_dynamic_rules": 0}, METHODS["bcast"],
                                       sizes_of("bcast"))
    assert status == bench.EXIT_FORCING_FAILED
    assert "collsel_bench: forcing did not take: coll_tuned_use_dynamic_rules is off" in stderr
    assert all(c.comm < 0 for c in calls)   # nothing measured
