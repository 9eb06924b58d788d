"""`collsel tune`: the plan (budget, coarse grid fitted by the sweep's estimate), refusals that
leave --out alone, --dry-run, and (slow: the fake benchmark under real mpirun) kill -9 in the
middle then --resume giving byte for byte the trees, blobs and rules file of an uninterrupted run;
one short real run of collsel_bench.

Every wait is bounded; every subprocess has a timeout.
"""
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from collsel.core.io import sizes
from collsel.core.mpi import algorithms
from collsel.errors import InputError
from collsel.sinks.emit.ompi_rules_reader import COLLECTIVE_IDS
from collsel.pipeline.tune import layout, plan

from helpers import collsel, write_fake_bench
from test_sweep import needs_mpirun, one_error_line

WAIT_S = 300
GRID = ["--comm-sizes", "2,3", "--msg-sizes", "1,2,4,8", "--timeout", "60",
        "--progress-interval", "1000"]


def snapshot(directory):
    """{relative path: bytes} of every file under `directory` ({} when it is absent)."""
    found = {}
    for root, _, files in os.walk(directory):
        for name in files:
            path = os.path.join(root, name)
            found[os.path.relpath(path, directory)] = open(path, "rb").read()
    return found


# --- the plan ---------------------------------------------------------------------------------

@pytest.mark.parametrize("text, seconds", [("30m", 1800), ("90s", 90), ("2h", 7200),
                                           ("1h30m", 5400), ("1.5m", 90), ("10min", 600)])
def test_budget_durations(text, seconds):
    assert plan.parse_budget(text) == seconds


@pytest.mark.parametrize("text", ["30", "soon", "0m", "-5m", "8d", "30m 2h", "2h30x"])
def test_bad_budgets_are_refused(text):
    with pytest.raises(InputError, match="--budget"):
        plan.parse_budget(text)


def test_thinning_keeps_both_ends_and_widens():
    sizes = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32)
    assert plan.thinned(sizes, 0) == sizes
    assert plan.thinned(sizes, 1) == (1, 2, 4, 8, 16, 32)
    assert plan.thinned(sizes, 2) == (1, 4, 16, 32)


def every_collective_plan(budget_s, comm_sizes=(2, 3, 4, 6, 8, 12, 16), shape_count=None):
    from collsel.commands import sweep
    from collsel.core.io import sizes
    from collsel.sources.sweep import plan as sweep_plan
    collectives = sweep.collectives("openmpi")
    methods = {c: len(sweep_plan.plan_methods(c)) for c in collectives}
    return plan.plan(collectives, methods, comm_sizes, shape_count or len(comm_sizes),
                     sizes.default_msg_sizes(), budget_s, plan.coarse_launches("coarse-refine"),
                     "local", 0.03, f"{budget_s}s")


def test_30_minutes_tune_every_collective_on_one_thinned_grid():
    grids = {g.collective: g for g in every_collective_plan(1800)}
    assert len(grids) == 14
    coarse = sum(g.coarse_s for g in grids.values())
    assert coarse <= plan.COARSE_SHARE * 1800
    # P thinned too, the ends and interior P kept (leave-one-P-out); m 4x apart, ends kept
    assert grids["bcast"].comm_sizes == (2, 4, 8, 16)
    assert grids["bcast"].msg_sizes[:3] == (1, 4, 16) and grids["bcast"].msg_sizes[-1] == 4 << 20
    assert grids["barrier"].msg_sizes == (0,) and grids["barrier"].comm_sizes == (2, 4, 8, 16)
    # the budget split by need: bcast's 34 methods cost more than scan's 3
    assert grids["bcast"].coarse_s > 5 * grids["scan"].coarse_s
    assert grids["bcast"].refine_s > 5 * grids["scan"].refine_s
    # allgatherv per method (MPI_T cannot force it per communicator), never refined
    assert grids["allgatherv"].mode == "per-method" and grids["allgatherv"].refine_s == 0
    assert {g.mode for c, g in grids.items() if c != "allgatherv"} == {"paired"}
    assert coarse + sum(g.refine_s for g in grids.values()) == pytest.approx(1800, abs=1)


def test_a_larger_budget_gives_a_finer_grid_and_p_never_drops_below_three():
    wide = every_collective_plan(4 * 3600)[0]
    assert wide.comm_sizes == (2, 3, 4, 6, 8, 12, 16) and len(wide.msg_sizes) == 44
    coarsest = every_collective_plan(500)[0]
    assert coarsest.comm_sizes == (2, 8, 16) and len(coarsest.msg_sizes) >= plan.MIN_SIZES
    assert every_collective_plan(500, (2, 3))[0].comm_sizes == (2, 3)
    assert every_collective_plan(500, (), 2)[0].comm_sizes == ()       # --nodes/--ppn: as given
    with pytest.raises(InputError, match=r"--budget 60s: too small for 14 collectives: "
                                         r"their coarsest grids \(3 communicator sizes x 4 "):
        every_collective_plan(60)


def test_refused_methods_are_those_whose_call_fails_somewhere_on_the_grid():
    from collsel.core.mpi.algorithms import Method
    methods = [Method(a, 0) for a in range(7)]
    assert [x.algorithm for x, _ in plan.refused("allgatherv", methods, (2, 3), (8,),
                                                  "openmpi")] == [5]
    assert plan.refused("allgatherv", methods, (2,), (8,), "openmpi") == []
    assert plan.refused("allgatherv", methods, (2, 3), (8,), "mpich") == []


def test_a_per_method_sweeps_time_counts_against_the_budget(tmp_path):
    # its journal has no launch lines: the table's run wall times are what it took
    from collsel.pipeline.tune import refinement
    (tmp_path / "allgatherv").mkdir()
    (tmp_path / "allgatherv" / "table.csv").write_text(
        "# run.1.wall_s=31.6\n# run.2.wall_s=2.4\ncollective,comm_size\n")
    grid = plan.Grid("allgatherv", (2, 3), (8,), 5, 2, 3, "per-method", 30.0, 0.0)
    assert refinement.coarse_seconds(str(tmp_path), grid) == pytest.approx(34.0)


def test_every_forceable_collective_has_its_rules_file_id():
    # coll_base_functions.h's COLLTYPE ids, under the catalogue's names (reduce_scatter, ...)
    for collective in algorithms.TUNED_ALGORITHMS:
        assert collective in COLLECTIVE_IDS, collective
    assert COLLECTIVE_IDS["reduce_scatter"] == 12 and COLLECTIVE_IDS["reduce_scatter_block"] == 13


# --- refusals and the dry run -----------------------------------------------------------------

def test_dry_run_prints_the_plan_and_writes_nothing(tmp_path):
    out = tmp_path / "t"
    r = collsel("tune", "--out", out, "--dry-run", "--budget", "20m", "--collectives",
                "bcast,reduce", "--comm-sizes", "2,4", timeout=60)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("collsel tune: 2 collectives (bcast, reduce), budget 20m "
                               "(coarse grids about ")
    rows = {line.split()[0]: line.split() for line in lines[3:5]}
    assert set(rows) == {"bcast", "reduce"} and rows["bcast"][1:4] == ["paired", "34", "2"]
    assert lines[5] == "bcast, reduce: P = 2,4; m = " + ",".join(map(str, sizes.default_msg_sizes()))
    assert lines[-1].startswith("estimated: coarse sweeps ")
    assert not out.exists()


def test_all_means_every_collective_the_benchmark_measures(tmp_path):
    from collsel.commands import sweep
    r = collsel("tune", "--out", tmp_path / "t", "--dry-run", timeout=60)
    assert r.returncode == 0, r.stderr
    assert f"({', '.join(sweep.collectives('openmpi'))})" in r.stdout.splitlines()[0]
    assert len(sweep.collectives("openmpi")) == 14


def test_barrier_gets_no_sizes_and_allgatherv_is_measured_per_method(tmp_path):
    # the preflight runs each sweep's own --dry-run: --msg-sizes for barrier would be refused
    r = collsel("tune", "--out", tmp_path / "t", "--dry-run", "--budget", "10m", "--collectives",
                "barrier,allgatherv,scan", "--comm-sizes", "2,3", "--msg-sizes", "8,64",
                timeout=60)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[3].split()[:2] == ["barrier", "paired"] and lines[3].split()[4] == "1"
    assert lines[4].split()[:2] == ["allgatherv", "per-method"] and lines[4].split()[-2] == "-"
    assert "allgatherv, scan: P = 2,3; m = 8,64" in lines and "barrier: P = 2,3; m = 0" in lines
    # two_proc refuses P != 2: a refused call would kill every per-method launch at P = 3
    assert lines[4].split()[2] == "5"
    assert ("left out: allgatherv's method 5:two_proc refused where P != 2 "
            "(MPI_ERR_UNSUPPORTED_OPERATION) (ompi/mca/coll/base/coll_base_allgatherv.c:"
            "510-512): the per-method mode cannot mark it unusable per cell") in lines
    assert not (tmp_path / "t").exists()


def test_allgatherv_is_left_out_of_placed_tunes_with_the_reason(tmp_path):
    hosts = tmp_path / "hosts"
    hosts.write_text("localhost slots=4\n")
    placed = ["--launcher", "hostfile", "--hostfile", hosts, "--nodes", "1", "--ppn", "2,4"]
    r = collsel("tune", "--out", tmp_path / "t", "--dry-run", *placed, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "allgatherv" not in r.stdout.splitlines()[0]
    assert ("left out: allgatherv: its per-method mode (Open MPI cannot force allgatherv per "
            "communicator through MPI_T) runs --comm-sizes only") in r.stdout
    line = one_error_line(collsel("tune", "--out", tmp_path / "t", "--collectives",
                                  "allgatherv", *placed, timeout=60))
    assert line.endswith("tune it in a separate run with --comm-sizes"), line
    assert not (tmp_path / "t").exists()


@pytest.mark.parametrize("extra, message", [
    (["--budget", "soon"], "--budget 'soon': expected a duration such as 30m"),
    (["--budget", "1m"], "--budget 1m: too small for 14 collectives"),
    (["--collectives", "bcast,frobnicate"], "--collectives: unknown collective 'frobnicate'"),
    (["--collectives", ","], "--collectives ',': empty"),
    (["--collectives", "bcast,alltoallw"], "--collectives: unknown collective 'alltoallw' "
                                           "(an MPI collective collsel has no algorithms for) (the "
                                           "sweep's benchmark, "
                                           "collsel_bench, measures"),
    (["--out=/proc/t"], "/proc"),
    (["--launches", "0"], "--launches 0 out of range [1, 100]"),
    (["--mpirun", "/nonexistent/mpirun"], "/nonexistent/mpirun"),
])
def test_bad_input_is_one_line_and_writes_nothing(tmp_path, extra, message):
    out = tmp_path / "t"
    line = one_error_line(collsel("tune", "--out", out, *extra, timeout=60))
    assert message in line, line
    assert not out.exists()


def test_launcher_options_pass_through_to_the_sweep(tmp_path):
    hosts = tmp_path / "hosts"
    hosts.write_text("localhost slots=4\n")
    r = collsel("tune", "--out", tmp_path / "t", "--dry-run", "--hostfile", hosts,
                "--comm-sizes", "2,4", timeout=60)
    assert r.returncode == 0, r.stderr
    assert "launcher hostfile" in r.stdout.splitlines()[0]
    # --comm-sizes is each collective's grid (thinned by the plan), not a passed option
    assert r.stdout.splitlines()[1] == ("sweep options: --mpi=openmpi --launcher=hostfile "
                                        f"--hostfile={hosts}")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
    line = one_error_line(collsel("tune", "--out", tmp_path / "s", "--launcher", "srun",
                                  timeout=60, env=env))
    assert "--launcher srun runs inside a Slurm allocation" in line
    assert not (tmp_path / "t").exists() and not (tmp_path / "s").exists()


def test_out_that_is_a_file_or_holds_other_files_is_left_alone(tmp_path):
    a_file = tmp_path / "file"
    a_file.write_text("keep\n")
    line = one_error_line(collsel("tune", "--out", a_file, "--dry-run", timeout=60))
    assert "exists and is not a directory" in line and a_file.read_text() == "keep\n"
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine\n")
    line = one_error_line(collsel("tune", "--out", other, timeout=60))
    assert "is not empty and holds no tune" in line
    assert snapshot(other) == {"notes.txt": b"mine\n"}


def test_another_machines_tune_is_refused_untouched(tmp_path):
    out = tmp_path / "t"
    out.mkdir()
    (out / layout.PLAN).write_text(json.dumps({"format": layout.FORMAT, "machine": "host far",
                                               "launcher": "local"}))
    before = snapshot(out)
    line = one_error_line(collsel("tune", "--out", out, "--resume", timeout=60))
    assert "holds the tune of host far, this is host " in line, line
    line = one_error_line(collsel("tune", "--out", out, timeout=60))
    assert "holds a tune (host far): pass --resume" in line, line
    assert snapshot(out) == before


def test_resume_needs_a_tune_and_takes_its_recorded_options(tmp_path):
    line = one_error_line(collsel("tune", "--out", tmp_path / "none", "--resume", timeout=60))
    assert "holds no tune (tune.json missing)" in line
    line = one_error_line(collsel("tune", "--out", tmp_path, "--resume", "--budget", "1h",
                                  timeout=60))
    assert "--resume takes the options recorded in" in line and line.endswith("drop --budget")


# --- with the fake benchmark under real mpirun ------------------------------------------------

# the sized paired collectives, barrier (no size) and allgatherv (per method)
KINDS = ["--collectives", "bcast,reduce,barrier,allgatherv"]


def tune_args(out, bench, *extra):
    return ["tune", "--out", str(out), "--bench", str(bench), "--budget", "5m", *GRID, *KINDS,
            *extra]


# The fake's fastest method changes with the size: trees with several leaves, every cell
# decided by the coarse launches (so no refinement, whose budget is wall time).
CROSS = {"FAKE_BENCH_CROSS": "1"}
# Three coarse launches under the default strategy (adaptive plans one): the kill below lands
# in a third launch, and across-launch folds keep the crossing trees (on 2 P x 4 m, the
# m folds alone choose one method everywhere).
THREE = ("--launches", "3")


def run_tune(args, env=None):
    return subprocess.run([sys.executable, "-m", "collsel.cli", *args], capture_output=True,
                          text=True, timeout=WAIT_S, env={**os.environ, **(env or {})})


def deployed(out):
    """The files a user deploys, and the trees: everything but tables, logs and reports (whose
    metadata carry dates, paths and wall times)."""
    return {path: data for path, data in snapshot(out).items()
            if path.endswith((".json", ".bin", ".c", ".h", ".conf")) and "/report/" not in path
            and not path.startswith((layout.PLAN, layout.PROGRESS)) and "stats.json" not in path}


@needs_mpirun
@pytest.mark.slow
def test_kill_9_then_resume_gives_the_uninterrupted_result(tmp_path):
    bench = write_fake_bench(tmp_path / "fake_bench.sh")
    ref = tmp_path / "ref"
    r = run_tune(tune_args(ref, bench, *THREE), CROSS)
    assert r.returncode == 0, r.stderr
    want = deployed(ref)
    collectives = json.loads((ref / layout.PLAN).read_text())["collectives"]
    assert {f"{c}/tree/tree.json" for c in collectives} | {"rules.conf"} <= set(want)
    summary = r.stdout.splitlines()
    assert summary[0].split()[:5] == ["collective", "methods", "cells", "undecided", "leaves"]
    rows = dict(zip(collectives, summary[1:]))
    assert [row.split()[0] for row in rows.values()] == collectives
    for c in ("bcast", "reduce"):
        # 2 P x 4 m, all decided; the fastest method changes with m: several leaves
        assert rows[c].split()[2:4] == ["8", "0"] and int(rows[c].split()[4]) > 1, rows[c]
    assert rows["barrier"].split()[2:4] == ["2", "0"], rows["barrier"]       # m = 0 only
    assert rows["allgatherv"].split()[2:4] == ["8", "-"], rows["allgatherv"]  # per method
    # each tree's methods by name; deploy lines with absolute paths; the blobs where
    # COLLSEL_TREES=DIR finds them; each report's deploy box names those files
    chosen = summary[summary.index("chosen methods:") + 1:][:len(collectives)]
    assert [line.split(":")[0].strip() for line in chosen] == collectives
    assert all("chain" in line for line in chosen[:2]), chosen
    assert sorted(os.listdir(ref / layout.BLOBS)) == sorted(f"{c}.bin" for c in collectives)
    assert f"coll_tuned_dynamic_rules_filename {ref / layout.RULES} ./app" in r.stdout
    assert f"COLLSEL_TREES={ref / layout.BLOBS} " in r.stdout
    box = (ref / "bcast" / "report" / "index.html").read_text()
    box = box[box.index('id="deploy"'):box.index('id="out-of-sample"')]
    assert f"{ref / layout.RULES}</code> is written already" in box
    assert f"COLLSEL_TREES={ref / layout.BLOBS} " in box and "tree-bcast" not in box

    # Killed inside the second collective's third coarse launch, its first size measured: the
    # fake benchmark waits there (FAKE_BENCH_PAUSE) until the kill, so the kill lands at that
    # moment however slow the machine is (after a sleep instead, a test process kept off the
    # CPU for a few seconds kills after the collective's sweep has ended).
    out, gate = tmp_path / "killed", tmp_path / "gate"
    gate.mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "collsel.cli",
                             *tune_args(out, bench, *THREE)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True,
                            env={**os.environ, **CROSS,
                                 "FAKE_BENCH_PAUSE": f"{collectives[1]}:3:{gate}"})
    deadline = time.monotonic() + WAIT_S
    try:
        while (not (gate / "paused").exists() and proc.poll() is None
               and time.monotonic() < deadline):
            time.sleep(0.02)
        paused = (gate / "paused").exists()
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        (gate / "release").touch()      # the paused benchmark ends (its mpirun is stopped too)
    assert paused, f"the tune never reached {collectives[1]}'s third launch"
    assert proc.returncode == -signal.SIGKILL
    second = out / collectives[1] / "table.csv.launches"
    assert second.read_text().count("# launch.") == 2      # the third was in flight
    assert not (out / layout.RULES).exists()
    assert json.loads((out / layout.PROGRESS).read_text())["done"] == [f"{collectives[0]}:coarse"]

    r = run_tune(["tune", "--out", str(out), "--resume"], CROSS)
    assert r.returncode == 0, r.stderr
    assert deployed(out) == want
    assert r.stdout == (ref / layout.SUMMARY).read_text().replace(str(ref), str(out))
    # Done is done: a second resume measures nothing and changes none of it.
    r = run_tune(["tune", "--out", str(out), "--resume"], CROSS)
    assert r.returncode == 0 and "[" not in r.stderr.split("done in")[0], r.stderr
    assert deployed(out) == want


@needs_mpirun
@pytest.mark.slow
def test_real_benchmark_three_ranks_two_sizes(tmp_path):
    out = tmp_path / "t"
    r = run_tune(["tune", "--out", str(out), "--budget", "1m", "--comm-sizes", "3",
                  "--msg-sizes", "8,64K", "--collectives", "alltoall,barrier",
                  "--progress-interval", "1000"])
    # (beyond the cores the local launcher adds --oversubscribe and mpi_yield_when_idle itself)
    assert r.returncode == 0, r.stderr
    collectives = json.loads((out / layout.PLAN).read_text())["collectives"]
    for c in collectives:
        assert (out / c / "tree" / "tree.json").is_file()
        assert (out / layout.BLOBS / f"{c}.bin").is_file()
        assert (out / c / "report" / "index.html").is_file()
    assert (out / layout.RULES).is_file()
    rows = r.stdout.splitlines()[1:1 + len(collectives)]
    assert [row.split()[0] for row in rows] == collectives
    assert [row.split()[2] for row in rows] == ["2", "1"], rows     # P=3 x 2 sizes; barrier
    # (the budget's share, without wall-clock bounds: tests/unit/pipeline/test_pipeline.py)


@pytest.mark.skipif(shutil.which("mpirun.mpich") is None,
                    reason="MPICH (mpirun.mpich) not installed; run make setup")
@pytest.mark.slow
def test_mpich_tune_writes_the_selection_file_not_rules(tmp_path):
    bench = write_fake_bench(tmp_path / "fake_bench.sh")
    out = tmp_path / "t"
    r = run_tune(tune_args(out, bench, "--mpi", "mpich", "--collectives",
                           "bcast,reduce,allreduce,allgather"),
                 {**CROSS, "FAKE_BENCH_FAMILY": "mpich"})
    assert r.returncode == 0, r.stderr
    assert (out / layout.MPICH).is_file() and not (out / layout.RULES).exists()
    selection = json.loads((out / layout.MPICH).read_text())
    for c in ("bcast", "reduce", "allreduce", "allgather"):    # generated: P blocks first
        assert list(selection[f"collective={c}"]["comm_type=intra"])[0].startswith("comm_size")
    assert "collective=gatherv" in selection                  # MPICH's own, kept
    assert "MPICH's default" in r.stdout.splitlines()[0]      # the summary's header names it


@needs_mpirun
@pytest.mark.slow
def test_undecided_cells_of_a_table_are_those_the_refinement_counts(tmp_path):
    """One rule: refine.undecided_in_table (tune's summary) finds the count the sweep's own
    --refine records."""
    from collsel.core.io import csvfile
    from collsel.sources.sweep import refine
    bench = write_fake_bench(tmp_path / "fake_bench.sh")
    out = tmp_path / "b.csv"
    r = run_tune(["sweep", "--collective", "bcast", "--out", str(out), "--bench", str(bench),
                  "--comm-sizes", "2,3", "--algorithms", "linear,binomial:0", "--msg-sizes",
                  "1,2", "--launches", "3", "--refine", "1", "--equivalence", "0",
                  "--timeout", "60", "--progress-interval", "1000"], {"FAKE_BENCH_TIE": "1"})
    assert r.returncode == 0, r.stderr
    recorded = csvfile.read(str(out)).metadata["run.1.refine"]
    found = refine.undecided_in_table(str(out))
    count = sum(map(len, found.values()))
    assert recorded.startswith(f"{4 - count}/4 cells decided, {count} undecided"), recorded
    assert count > 0 and {shape.p for shape in found} <= {2, 3}


def test_summary_counts_cells_per_shape_on_a_placed_tune():
    """On a --nodes/--ppn tune a cell is (nodes, ppn, m), as the refinement counts undecided
    ones: the allocation's tune once printed 21 cells and 26 undecided for bcast (cells per P)."""
    from collsel.pipeline.tune import summary as tune_summary
    table = os.path.join(os.path.dirname(__file__), "..", "..", "bench-data", "cluster-colls",
                         "tune-salloc", "bcast", "table.csv")
    cells, undecided = tune_summary._measured(table, "paired")
    assert cells == 5 * 7          # shapes 1x2, 2x1, 2x2, 4x1, 4x2 by 7 sizes
    assert 0 < undecided <= cells
