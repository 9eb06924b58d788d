"""What `collsel sweep` settles before (or at) its first launch, with stand-in launchers and the
fake benchmark (tests/helpers.py): refusals of what the benchmark cannot run (its collectives and
limits, as the program reports them), a first launch failing at start-up stopping the sweep, the
dry run's estimate, the oversubscription warning, srun's MPI plugin and the grouped --help.

Every subprocess has a timeout; nothing here runs MPI.
"""
import json
import os
import subprocess
import sys

import pytest

from collsel.commands import sweep as sweep_command
from collsel.core.mpi.algorithms import Method
from collsel.errors import InputError
from collsel.sources.measure import benchmark_program as bench, launchers
from collsel.sources.sweep import estimate, journal as sweep_journal, plan

from helpers import write_fake_bench
from test_sweep import one_error_line
from test_sweep_cluster import FAKE_LAUNCHER, fake_cluster, script

WAIT_S = 120

# A launcher whose ranks abort before MPI_Init completes, as srun --mpi=none makes Open MPI's
# (its messages as they were seen on the emulated cluster); from call FAKE_FAIL_FROM on (default
# 1), earlier calls start the program normally.
STARTUP_FAILS = r"""#!/bin/sh
echo "$*" >> "$FAKE_LAUNCH_LOG"
calls=$(wc -l < "$FAKE_LAUNCH_LOG")
if [ "$calls" -lt "${FAKE_FAIL_FROM:-1}" ]; then
  while [ $# -gt 0 ]; do case "$1" in -np|--ntasks) shift 2;; --mca) shift 3;;
    --map-by|--bind-to) shift 2;; -*) shift;; *) break;; esac; done
  exec "$@"
fi
echo "--------------------------------------------------------------------------" >&2
echo "*** An error occurred in MPI_Init" >&2
echo "*** on a NULL communicator" >&2
echo "[n1:27600] Local abort before MPI_INIT completed completed successfully, but am not able to aggregate error messages" >&2
echo "srun: error: n1: tasks 0-1: Exited with exit code 1" >&2
exit 1
"""


@pytest.fixture
def tools(tmp_path):
    bench_path = write_fake_bench(tmp_path / "fake_bench.sh")
    return {"bench": bench_path, "log": tmp_path / "launches.log",
            "ok": script(tmp_path / "fake_launcher.sh", FAKE_LAUNCHER),
            "fails": script(tmp_path / "startup_fails.sh", STARTUP_FAILS),
            "cache": tmp_path / "cache",
            "env": {"FAKE_LAUNCH_LOG": str(tmp_path / "launches.log"),
                    "COLLSEL_CACHE": str(tmp_path / "cache")}}


def collsel(args, env=None):
    return subprocess.run([sys.executable, "-m", "collsel.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=WAIT_S,
                          env={**os.environ, **(env or {})})


def sweep_args(tools, out, launcher="ok", *extra):
    return ["sweep", "--collective", "bcast", "--out", out, "--bench", tools["bench"],
            "--mpirun", tools[launcher], "--comm-sizes", "2", "--algorithms", "linear,binomial:0",
            "--msg-sizes", "1,4", "--launches", "2", "--timeout", "60",
            "--progress-interval", "1000", *extra]


def launches(tools):
    return tools["log"].read_text().splitlines() if tools["log"].exists() else []


# --- refused up front: one line, exit 2, nothing launched, built or written --------------------

@pytest.mark.parametrize("change,message", [
    # (the benchmark runs every collective collsel has Open MPI algorithms for: the list goes on)
    ({"--collective": "allgathr"}, "--collective: unknown collective 'allgathr' (did you mean "
     "'allgather'?) (the sweep's benchmark, collsel_bench, measures bcast, reduce, allreduce, "),
    ({"--collective": "allreduce", "--mpi": "mpich"}, "--algorithms: unknown MPICH allreduce "
     "algorithm 'linear' (known: auto, nb, smp, recursive_doubling, reduce_scatter_allgather, "
     "recursive_multiplying, tree, recexch, ring, k_reduce_scatter_allgather, ccl)"),
    ({"--algorithms": "12"}, "--algorithms: bcast has no algorithm 12 (ids 0-9)"),
    ({"--mode": "per-method", "--algorithms": "hier:2:linear:linear"},
     "--algorithms: hierarchical method hier:2:1:1 needs --mode paired"),
    ({"--algorithms": None, "--segsizes": ",".join(map(str, range(1, 51)))},
     "--algorithms/--segsizes: 304 methods (baseline included); the benchmark measures at "
     "most 256 in one paired launch"),
    ({"--algorithms": None, "--max-reps": "10000000"},
     "--max-reps 10000000 x 34 methods exceeds the benchmark's 100000000 repetitions"),
    ({"--time-cap": "600000"}, "--time-cap 600000 x 3 methods (a paired launch's cap per size) "
     "exceeds the benchmark's 1e+06 s"),
    ({"--msg-sizes": ",".join(map(str, range(1, 4100)))},
     "--msg-sizes: 4099 sizes; the benchmark takes at most 4096 in one launch"),
    ({"--srun-mpi": "pmix"}, "--srun-mpi pmix is for --launcher srun (or --emit-sbatch), not "
     "--launcher local"),
])
def test_refused_before_anything_is_launched_or_built(tmp_path, tools, change, message):
    args = sweep_args(tools, tmp_path / "t.csv")
    del args[args.index("--bench"):args.index("--bench") + 2]   # would be built: is not
    for flag, value in change.items():
        if flag in args:
            at = args.index(flag)
            del args[at:at + 2]
        if value is not None:
            args += [flag, value]
    r = collsel(args, tools["env"])
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith(f"collsel: error: {message}")
    assert len(r.stderr.splitlines()) == 1
    assert launches(tools) == [] and not tools["cache"].exists()
    assert not (tmp_path / "t.csv").exists()
    assert not os.path.exists(sweep_journal.journal_path(str(tmp_path / "t.csv")))


def test_benchmark_capabilities_come_from_the_program(tmp_path, monkeypatch):
    """The collectives and limits are what the program reports of itself (its --capabilities
    output, shipped beside its sources: test_benchmark_program checks the file against the
    program): changed there, changed here; a broken file is one line."""
    can = bench.capabilities()
    assert can.collectives[:3] == ("bcast", "reduce", "allreduce") and can.max_methods == 256
    assert len(can.collectives) == 14 and "alltoall" in can.collectives
    assert bench.REPS[1] == can.max_reps
    shipped = json.loads((bench.source_dir() / bench.CAPABILITIES_FILE).read_text())
    fewer = {**shipped, "collectives": ["bcast"], "sizeless": [], "max_methods": 4}
    (tmp_path / bench.CAPABILITIES_FILE).write_text(json.dumps(fewer))
    monkeypatch.setattr(bench, "source_dir", lambda: tmp_path)
    bench.capabilities.cache_clear()
    try:
        with pytest.raises(InputError, match="measures bcast only"):
            sweep_command.check_collective("reduce", "openmpi")
        with pytest.raises(InputError, match="5 methods .* at most 4 in one paired launch"):
            plan.check_benchmark_can("paired", [Method(a, 0) for a in range(5)], [1], 10, 0.01)
        for broken in ({**shipped, "max_reps": "many"}, {**shipped, "sizeless": ["nope"]},
                       [], {"collectives": []}):
            (tmp_path / bench.CAPABILITIES_FILE).write_text(json.dumps(broken))
            bench.capabilities.cache_clear()
            with pytest.raises(InputError, match="not the benchmark's capabilities"):
                bench.capabilities()
        (tmp_path / bench.CAPABILITIES_FILE).write_text("{")
        bench.capabilities.cache_clear()
        with pytest.raises(InputError, match="capabilities.json:1: not JSON"):
            bench.capabilities()
    finally:
        bench.capabilities.cache_clear()


# --- a first launch failing at start-up stops the sweep ---------------------------------------

@pytest.mark.parametrize("mode,launcher", [("paired", "srun"), ("per-method", "local")])
def test_a_first_launch_failing_at_startup_stops_the_sweep(tmp_path, tools, mode, launcher):
    out = tmp_path / "t.csv"
    env = {**tools["env"], "SLURM_JOB_ID": "7", "SLURM_JOB_NUM_NODES": "1"}
    r = collsel(sweep_args(tools, out, "fails", "--mode", mode, "--launcher", launcher), env)
    assert r.returncode == 1, r.stderr
    assert len(launches(tools)) == 1                 # not the 2 or 6 the plan has
    err = r.stderr.splitlines()
    assert err[-1].startswith("collsel: error: the first launch failed at start-up (it exited "
                              "with status 1), so the sweep stopped there instead of "
                              f"running the {5 if mode == 'per-method' else 1} other launch")
    # the launcher's own last lines, whole, then what to try
    assert "    [n1:27600] Local abort before MPI_INIT completed completed successfully, but am " \
           "not able to aggregate error messages" in err
    assert "    srun: error: n1: tasks 0-1: Exited with exit code 1" in err
    assert not any(line.strip("- ") == "" for line in err)          # no box rules
    hint = [line for line in err if line.startswith("  hint: ")]
    assert len(hint) == 1 and ("--srun-mpi PLUGIN" in hint[0]) == (launcher == "srun")
    # nothing was measured: nothing is left, the same command can run again
    assert sorted(os.listdir(tmp_path)) == sorted(["fake_bench.sh", "fake_launcher.sh",
                                                   "startup_fails.sh", "launches.log"])


def test_a_later_startup_failure_is_recorded_and_the_sweep_goes_on(tmp_path, tools):
    out = tmp_path / "t.csv"
    r = collsel(sweep_args(tools, out, "fails", "--comm-sizes", "2,3"),
                {**tools["env"], "FAKE_FAIL_FROM": "2"})
    assert r.returncode == 1, r.stderr
    assert len(launches(tools)) == 4                 # 2 P x 2 launches: all tried
    assert "launch failed, going on" in r.stderr and "first launch" not in r.stderr
    text = out.read_text()
    assert "# failed.3=" in text and "Local abort before MPI_INIT completed" in text


def test_a_resumed_sweep_keeps_its_table_when_its_first_launch_fails(tmp_path, tools):
    out = tmp_path / "t.csv"
    r = collsel(sweep_args(tools, out), tools["env"])
    assert r.returncode == 0, r.stderr
    before = out.read_text()
    r = collsel(sweep_args(tools, out, "fails", "--msg-sizes", "1,4,8", "--resume"),
                tools["env"])
    assert r.returncode == 1 and "the first launch failed at start-up" in r.stderr
    assert out.read_text().startswith(before)        # rows kept, the run's lines added


# --- the dry run's estimate -------------------------------------------------------------------

def test_estimate_is_launches_times_startup_plus_points_times_their_cost(monkeypatch):
    monkeypatch.setitem(estimate.STARTUP_S, "local", 0.5)
    line = estimate.estimate([("2", 10), ("4", 10)], "local", 0.03)
    assert line.startswith("estimate: about 2 s of wall time = 2 launches x 0.5 s start-up "
                           "(local) + 20 (size, method) points x 30 ms (a point costs its "
                           "--time-cap")
    # calibrated: P=2 launches spent (2.5 - 0.5) s on 10 points, P=4 (8.5 - 0.5) s; P=8 has none
    # and takes the rate over all (10 s / 20 points): 2.5 + 8.5 + 5.5 s
    observed = [("2", 10, 2.5), ("4", 10, 8.5)]
    line = estimate.estimate([("2", 10), ("4", 10), ("8", 10)], "local", 0.03, observed,
                             "t.csv.launches")
    assert line == ("estimate: about 16 s of wall time = 3 launches x 0.5 s start-up (local) + "
                    "30 (size, method) points x 200-800 ms (calibrated on the 2 launches in "
                    "t.csv.launches, per shape where it has them)")
    assert estimate.duration(5400) == "1 h 30 min" and estimate.duration(600) == "10 min"


def test_dry_run_prints_the_plan_and_an_estimate_calibrated_on_the_journal(tmp_path, tools):
    out = tmp_path / "t.csv"
    r = collsel(sweep_args(tools, out, "ok", "--dry-run"), tools["env"])
    assert r.returncode == 0, r.stderr
    last = r.stdout.splitlines()[-2:]
    assert last[0] == ("# 2 paired launches, 12 of 12 (size, method, launch) points to "
                       "measure (2 launches per P)")
    startup_s = estimate.STARTUP_S["local"]
    assert last[1].startswith(f"# estimate: about {2 * startup_s + 12 * 0.03:.0f} s of wall time "
                              f"= 2 launches x {startup_s:g} s start-up (local) + 12 (size, "
                              "method) points x 30 ms (a point costs its --time-cap")
    assert launches(tools) == [] and not out.exists()
    r = collsel(sweep_args(tools, out), tools["env"])
    assert r.returncode == 0, r.stderr
    r = collsel(sweep_args(tools, out, "ok", "--msg-sizes", "1,4,8", "--resume", "--dry-run"),
                tools["env"])
    assert r.returncode == 0, r.stderr
    assert " + 6 (size, method) points x " in r.stdout
    assert "(calibrated on the 2 launches in t.csv.launches, per shape where it has them)" \
        in r.stdout.splitlines()[-1]


# --- warnings at the start --------------------------------------------------------------------

def test_oversubscription_is_a_warning_line_at_the_start(tmp_path, tools):
    cores = launchers.cores()
    r = collsel(sweep_args(tools, tmp_path / "t.csv", "ok", "--comm-sizes",
                           f"2,{cores + 1},{cores + 3}", "--dry-run"), tools["env"])
    assert r.returncode == 0, r.stderr
    assert r.stderr.splitlines()[0] == (
        f"warning: P={cores + 1}, P={cores + 3} on {cores} cores: oversubscribed; times include "
        "time-sharing of the cores between ranks, not what dedicated cores would give")
    r = collsel(sweep_args(tools, tmp_path / "t.csv", "ok", "--comm-sizes", "1", "--dry-run"),
                tools["env"])
    assert r.returncode == 0 and "oversubscribed" not in r.stderr
    # A sweep refused (here: its table exists) says only why: the warning waits for a start.
    (tmp_path / "t.csv").write_text("x\n")
    r = collsel(sweep_args(tools, tmp_path / "t.csv", "ok", "--comm-sizes", f"{cores + 1}"),
                tools["env"])
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1 and "exists" in r.stderr
    (tmp_path / "t.csv").unlink()
    # srun: the ranks of a node against the CPUs the allocation gives each node
    env = {**tools["env"], "SLURM_JOB_ID": "7", "SLURM_JOB_NUM_NODES": "2",
           "SLURM_JOB_CPUS_PER_NODE": "2(x2)", "SLURM_JOB_NODELIST": "a,b"}
    r = collsel(sweep_args(tools, tmp_path / "t.csv", "ok", "--launcher", "srun",
                           "--comm-sizes", "4,6", "--dry-run", "--srun-mpi", "pmix"), env)
    assert r.returncode == 0, r.stderr
    assert r.stderr.startswith("warning: P=6 on 2 cores per node: oversubscribed;")
    args = sweep_args(tools, tmp_path / "t.csv", "ok", "--launcher", "srun", "--nodes", "2",
                      "--ppn", "2,3", "--dry-run", "--srun-mpi", "pmix")
    del args[args.index("--comm-sizes"):args.index("--comm-sizes") + 2]
    r = collsel(args, env)
    assert r.returncode == 0, r.stderr
    assert r.stderr.startswith("warning: P=6 (2x3) on 2 cores per node: oversubscribed;")


def test_srun_on_the_emulated_cluster_without_cluster_gets_a_note(tmp_path, tools):
    state = fake_cluster(tmp_path / "state", tmp_path / "hostfile")
    env = {**tools["env"], "SLURM_JOB_ID": "7", "SLURM_JOB_NUM_NODES": "3",
           "COLLSEL_CLUSTER_DIR": str(state), "SLURM_CONF": str(state / "slurm.conf")}
    args = sweep_args(tools, tmp_path / "t.csv", "ok", "--launcher", "srun", "--dry-run",
                      "--srun-mpi", "pmix")
    r = collsel(args, env)
    assert r.returncode == 0, r.stderr
    assert f"note: this allocation is on the emulated cluster ({state}); --cluster would add " \
           "its settings" in r.stderr
    r = collsel(args, {**env, "SLURM_CONF": "/etc/slurm/slurm.conf"})
    assert r.returncode == 0 and "note:" not in r.stderr


# --- --help --------------------------------------------------------------------------------------

def test_help_is_grouped_short_and_keeps_every_option():
    r = collsel(["sweep", "--help"])
    assert r.returncode == 0
    lines = r.stdout.splitlines()
    assert len(lines) <= 170
    groups = [line for line in lines if line in ("what to measure:", "statistics:",
                                                 "where to run:", "output:")]
    assert groups == ["what to measure:", "statistics:", "where to run:", "output:"]
    for flag in ("--collective", "--mpi", "--mode", "--algorithms", "--segsizes",
                 "--no-baseline", "--comm-sizes", "--msg-sizes", "--nodes", "--ppn", "--probe",
                 "--load-levels", "--load", "--launches", "--time-cap", "--rel-ci", "--min-reps",
                 "--max-reps", "--warmup", "--seed", "--refine", "--confidence", "--equivalence",
                 "--launcher", "--srun-mpi", "--cluster", "--hostfile", "--map-by", "--mpirun",
                 "--launcher-args", "--bench", "--mpicc", "--timeout", "--emit-sbatch",
                 "--sbatch-time", "--sbatch-nodes", "--sbatch-args", "--out", "--raw",
                 "--resume", "--force", "--dry-run", "--progress-interval"):
        assert any(line.lstrip().startswith(flag + " ") or line.strip() == flag
                   or line.lstrip().startswith(flag + ",") for line in lines), flag
    assert "bcast or reduce or allreduce or " in r.stdout     # the benchmark's, read from it
    assert "MpiDefault" in r.stdout


def test_a_resume_may_change_the_srun_plugin():
    """A plugin that failed at start-up may be replaced when the sweep is resumed."""
    from collsel.sources.sweep import resume
    recorded = resume.parse_options("collsel sweep --collective bcast --launcher srun "
                                    "--srun-mpi pmi2 --launches 3")
    wanted = resume.parse_options("collsel sweep --collective bcast --launcher srun "
                                  "--srun-mpi pmix --launches 3")
    assert resume.differences(recorded, wanted) == []


def test_allgatherv_is_measured_per_method_or_refused_up_front(tmp_path, tools):
    """Open MPI cannot force allgatherv per communicator (MPI_T read-only): the paired launch
    failed with 'forcing did not take'. The sweep takes --mode per-method for it, leaves out
    the method Open MPI refuses somewhere on the grid (two_proc at P != 2) as tune does, and
    refuses --mode paired (or a paired-only flag) before anything runs."""
    base = ["sweep", "--collective", "allgatherv", "--bench", tools["bench"], "--mpirun",
            tools["ok"], "--comm-sizes", "2,3", "--msg-sizes", "1,4", "--timeout", "60",
            "--progress-interval", "1000"]
    out = tmp_path / "ag.csv"
    r = collsel([*base, "--out", out], tools["env"])
    assert r.returncode == 0, r.stderr
    assert ("note: allgatherv is measured --mode per-method: Open MPI exposes "
            "coll_tuned_allgatherv_algorithm read-only through MPI_T") in r.stderr
    assert "note: left out 5:two_proc refused where P != 2" in r.stderr
    text = out.read_text()
    assert "--mode per-method" in text and "--algorithms 1:0,2:0,3:0,4:0 " in text
    forced = {line.split("coll_tuned_allgatherv_algorithm ")[1].split()[0]
              for line in launches(tools)}
    assert forced == {"0", "1", "2", "3", "4"}, forced        # one launch per method, no 5
    for extra, message in ((["--mode", "paired"], "--collective allgatherv --mode paired: "
                                                  "Open MPI exposes"),
                           (["--refine", "10"], "--refine: --collective allgatherv is measured "
                                                "--mode per-method")):
        line = one_error_line(collsel([*base, "--out", tmp_path / "p.csv", *extra],
                                      tools["env"]))
        assert message in line, line
        assert not (tmp_path / "p.csv").exists()
    # under MPICH it is an ordinary paired collective
    assert plan.mode_of("allgatherv", "mpich") == "paired"
