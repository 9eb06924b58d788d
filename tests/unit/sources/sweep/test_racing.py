"""The adaptive measuring strategy (`--strategy adaptive`, sources/sweep/racing.py): racing on a
grid measured once first, against coarse-refine, on replayed tables."""
import csv

import numpy as np

from collsel.core.mpi.algorithms import Method
from collsel.sources.sweep import racing, shapes
from collsel.sources.sweep.paired_plan import PairedPlan
from collsel.sources.sweep.plan import Config
from helpers import REPO, run_in_process

PAIRED = REPO / "bench-data" / "paired" / "bcast-mpich.csv"     # 300 rows and a journal
GRID = ("--comm-sizes", "2,4,8", "--msg-sizes", "1,64,4096,262144,4194304")


def _journal_rows(table):
    with open(str(table) + ".launches") as f:
        return [r for r in csv.DictReader(line for line in f if not line.startswith("#"))]


def _sweep(tmp_path, name, *options):
    out = tmp_path / name
    got = run_in_process("sweep", "--collective", "bcast", "--replay", PAIRED, "--out", out,
                         *GRID, *options)
    assert got.returncode == 0, got.stderr
    return out


def test_adaptive_measures_fewer_points_than_coarse_refine(tmp_path):
    # the same grid, each strategy's planned launches as collsel tune plans them, and the same
    # refinement budget (launches); points = the journal's (size, method, launch) rows
    coarse = _journal_rows(_sweep(tmp_path, "c.csv", "--launches", "3", "--refine", "12"))
    adaptive = _journal_rows(_sweep(tmp_path, "a.csv", "--launches", "1", "--refine", "12",
                                    "--strategy", "adaptive"))
    assert len(adaptive) < len(coarse)
    # and no refinement launch of the adaptive sweep measured every method everywhere
    methods = {r["algorithm"] for r in adaptive}
    later = [r for r in adaptive if int(r["launch"]) > 1]
    assert later, "the adaptive sweep refined nothing: the test shows nothing"
    per_launch = {}
    for r in later:
        per_launch.setdefault((r["comm_size"], r["launch"]), set()).add(r["algorithm"])
    assert any(len(got) < len(methods) for got in per_launch.values())


def _plan(medians_by_launch, ci=0.01):
    """A PairedPlan of one cell (P 4, m 64) of three methods and the baseline; medians_by_launch:
    {launch: {algorithm: median}}."""
    methods = [Method(0, 0), Method(1, 0), Method(2, 0), Method(3, 0)]
    cfg = Config(collective="bcast", out="x.csv", comm_sizes=[4], msg_sizes=[64],
                 methods=methods, launcher=None, bench_path="", bench_args=[],
                 silence_timeout=0, launches=1, mode="paired", strategy="adaptive")
    rows = [{"comm_size": 4, "msg_size": 64, "algorithm": a, "segsize": 0, "faninout": 0,
             "launch": k, "median_us": t, "ci_halfwidth_us": ci * t, "mean_us": t, "min_us": t,
             "max_us": t, "stdev_us": 0.0, "n": 10, "ci_met": 1}
            for k, got in medians_by_launch.items() for a, t in got.items()]
    return PairedPlan(cfg, rows, set()), shapes.plain([4])[0]


def test_a_method_far_slower_in_one_launch_leaves_the_race():
    plan, shape = _plan({1: {0: 10.0, 1: 10.0, 2: 10.5, 3: 30.0}})
    racing_now = racing.in_race(plan, shape, 64)
    assert Method(3, 0) not in racing_now            # 3x the best: dominated
    assert {Method(1, 0), Method(2, 0)} <= set(racing_now)     # 5 % apart: still racing
    assert not racing.settled(plan, shape, 64)       # one launch decides nothing close
    assert Method(3, 0) not in racing.launch_methods(plan, shape, [64])


def test_a_dominated_method_stops_being_measured(tmp_path):
    table = _sweep(tmp_path, "a.csv", "--launches", "1", "--refine", "20",
                   "--strategy", "adaptive")
    rows = _journal_rows(table)
    by_cell = {}
    for r in rows:
        by_cell.setdefault((r["comm_size"], r["msg_size"]), {}).setdefault(
            r["algorithm"], []).append(float(r["median_us"]))
    stopped = 0
    for cell, got in by_cell.items():
        launches = {a: len(t) for a, t in got.items()}
        if max(launches.values()) < 2:
            continue
        best = min(got, key=lambda a: np.mean(got[a]))
        for a, count in launches.items():
            if count == 1 and got[a][0] >= racing.DROP_RATIO * got[best][0]:
                stopped += 1
    assert stopped > 0


def test_the_tree_exists_after_the_first_round(tmp_path):
    # adaptive's cells are complete after one launch of every P: the curve's first point that
    # has measured one launch of each P has a scored tree
    out = tmp_path / "r"
    got = run_in_process("tune", "--replay", PAIRED, "--out", out, "--budget", "20%",
                         "--strategy", "adaptive", "--score", "", "--checkpoints", "4")
    assert got.returncode == 0, got.stderr
    with open(out / "bcast" / "curve.csv") as f:
        curve = list(csv.DictReader(f))
    assert curve[0]["cells"] != "0" and curve[0]["P_mean"] != ""


def _replayed_tune(tmp_path, name, seed):
    out = tmp_path / name
    got = run_in_process("tune", "--replay", PAIRED, "--out", out, "--budget", "20%",
                         "--strategy", "adaptive", "--score", "", "--checkpoints", "2",
                         "--seed", str(seed))
    assert got.returncode == 0, got.stderr
    return ((out / "bcast" / "curve.csv").read_text(),
            [{k: v for k, v in r.items()} for r in _journal_rows(out / "bcast" / "table.csv")])


def test_adaptive_is_deterministic_for_a_seed(tmp_path):
    first = _replayed_tune(tmp_path, "a", 7)
    again = _replayed_tune(tmp_path, "b", 7)
    assert first == again
    assert first[1]


def test_bad_strategy_is_one_line_exit_2(tmp_path):
    got = run_in_process("tune", "--replay", PAIRED, "--out", tmp_path / "r",
                         "--strategy", "fastest")
    assert got.returncode == 2
    assert "--strategy" in got.stderr and len(got.stderr.strip().splitlines()) <= 2


def test_per_method_sweep_refuses_adaptive(tmp_path):
    got = run_in_process("sweep", "--collective", "bcast", "--mode", "per-method",
                         "--strategy", "adaptive", "--out", tmp_path / "t.csv", "--dry-run")
    assert got.returncode == 2
    assert "--strategy adaptive needs --mode paired" in got.stderr


def test_resume_takes_the_recorded_strategy(tmp_path):
    got = run_in_process("tune", "--resume", "--out", tmp_path / "r", "--strategy", "adaptive")
    assert got.returncode == 2
    assert "drop --strategy" in got.stderr


def test_tune_records_the_strategy_and_one_seed_launch(tmp_path):
    out = tmp_path / "r"
    got = run_in_process("tune", "--replay", PAIRED, "--out", out, "--budget", "100%",
                         "--strategy", "adaptive", "--dry-run")
    assert got.returncode == 0, got.stderr
    # collective, mode, methods, P, sizes, launches: one launch of each P planned
    line = next(x for x in got.stdout.splitlines() if x.startswith("bcast "))
    assert line.split()[5] == str(racing.SEED_LAUNCHES)
    coarse = run_in_process("tune", "--replay", PAIRED, "--out", out, "--budget", "100%",
                            "--strategy", "coarse-refine", "--dry-run")
    assert coarse.returncode == 0, coarse.stderr
    line = next(x for x in coarse.stdout.splitlines() if x.startswith("bcast "))
    assert line.split()[5] == "3"
