"""Densifying (pipeline/tune/densify.py): after the refinement, new P between measured P whose
decisions differ, within what the budget has left (at least the half of its part the
refinement leaves it), and a kill in a round resumed exactly."""
import csv
import json
import re

import pytest

from collsel.core.maps import table as table_io
from collsel.pipeline.tune import densify, refinement
from collsel.sources.sweep import replay
from helpers import REPO, run_in_process

SIZES = (1, 1024, 65536, 1048576)


def _switching(path, switch=20, ps=range(2, 65)):
    """A recorded bcast table, no noise: algorithm 1 fastest below P = `switch`, 2 from it on,
    at every size; 3 and the default slower everywhere."""
    rows = ["collective,comm_size,msg_size,algorithm,segsize,time_us"]
    for p in ps:
        for m in SIZES:
            base = 10 + p + m / 1000
            for alg, scale in ((0, 1.3), (1, 1.0 if p < switch else 1.4),
                               (2, 1.2 if p < switch else 1.0), (3, 1.6)):
                rows.append(f"bcast,{p},{m},{alg},0,{scale * base:.4f}")
    path.write_text("\n".join(rows) + "\n")
    return path


def test_only_neighbours_whose_decisions_differ_are_gaps_ranked_by_stake(tmp_path):
    table = table_io.read_table(_switching(tmp_path / "t.csv", ps=(2, 8, 16, 32, 64)))
    gaps = densify.changing_gaps(table)
    assert [(g.low, g.high) for g in gaps] == [(16, 32)]
    # at P 32, algorithm 1 (P 16's choice) costs 40 %; at P 16 algorithm 2 costs 20 %: the
    # larger, at each of the 4 sizes
    assert gaps[0].stake == pytest.approx(4 * 40.0)


def test_a_round_bisects_each_gap_within_its_allowance():
    gap = densify.Gap(16, 128, 1.0)
    assert densify.midpoint(gap, [20, 32, 48, 64, 100]) == 48     # 2^5.5 = 45.3
    assert densify.midpoint(gap, [8, 128, 256]) is None           # none strictly inside
    assert densify.midpoint(densify.Gap(2, 32, 1.0), [4, 16]) == 4  # equal distance: the smaller


def test_next_round_takes_as_many_gaps_as_the_allowance_pays_for(tmp_path):
    rows = ["collective,comm_size,msg_size,algorithm,segsize,time_us"]
    # decisions alternate 1, 2, 1, 2 over P 2, 8, 32, 128: three gaps, the last at most stake
    for i, p in enumerate((2, 8, 32, 128)):
        for alg in (1, 2):
            slow = 1 + 0.1 * (i + 1) if (i + alg) % 2 else 1.0
            rows.append(f"bcast,{p},1024,{alg},0,{10 * slow:.4f}")
    (tmp_path / "t.csv").write_text("\n".join(rows) + "\n")
    table = table_io.read_table(tmp_path / "t.csv")
    candidates = [4, 16, 64]
    costs = {2: 1.0, 8: 1.0, 32: 1.0, 128: 2.0}      # a new P costs its dearer neighbour's
    assert densify.next_round(table, candidates, costs, 4.0) == [4, 16, 64]
    assert densify.next_round(table, candidates, costs, 3.9) == [16, 64]   # the most at stake
    assert densify.next_round(table, candidates, costs, 1.5) == [16]   # 64's gap costs 2: skipped
    assert densify.next_round(table, candidates, costs, 0.5) == []
    assert densify.next_round(table, [], costs, 4.0) == []


def _tune(recording, out, *more):
    return run_in_process("tune", "--replay", recording, "--out", out, "--score=",
                          "--checkpoints", "1", "--strategy", "adaptive", *more)


def _measured_ps(out):
    with open(out / "bcast" / "table.csv") as f:
        return sorted({int(r["comm_size"]) for r in csv.DictReader(
            line for line in f if not line.startswith("#"))})


def test_a_replayed_tune_finds_where_the_decision_changes_within_its_budget(tmp_path):
    recording = _switching(tmp_path / "switch.csv")
    out = tmp_path / "o"
    got = _tune(recording, out, "--budget", "30%")
    assert got.returncode == 0, got.stderr
    plan = json.loads((out / "tune.json").read_text())
    coarse = plan["grids"][0]["comm_sizes"]
    measured = _measured_ps(out)
    added = sorted(set(measured) - set(coarse))
    assert added and "densify round 1: P" in got.stderr
    # every added P lies between the coarse P around the switch (16 and 32 here), and the
    # bisection ends at the switch itself: 19 and 20 measured
    low = max(p for p in coarse if p < 20)
    high = min(p for p in coarse if p >= 20)
    assert all(low < p < high for p in added) and {19, 20} <= set(measured)
    # the tree cuts there: 19 takes algorithm 1, 20 algorithm 2
    for p, alg in ((19, 1), (20, 2)):
        said = run_in_process("query", out / "bcast" / "tree" / "tree.json", "--comm-size", p,
                              "--msg-size", 1024)
        assert f"(alg {alg}, seg 0" in said.stdout, said.stdout
    # nothing beyond the budget (what a densifying round costs is estimated from the coarse
    # P's measured cost; the replay charges launches by the recorded times)
    curve = list(csv.DictReader((out / "bcast" / "curve.csv").read_text().splitlines()))
    assert float(curve[-1]["cost_s"]) <= plan["budget_s"] + replay.START_S


def test_where_every_decision_agrees_no_p_is_added(tmp_path):
    recording = _switching(tmp_path / "same.csv", switch=1000)
    out = tmp_path / "o"
    got = _tune(recording, out, "--budget", "30%")
    assert got.returncode == 0, got.stderr
    plan = json.loads((out / "tune.json").read_text())
    assert _measured_ps(out) == plan["grids"][0]["comm_sizes"]
    assert "bcast: no P added" in got.stderr


def test_a_kill_inside_a_round_resumes_to_the_uninterrupted_result(tmp_path, monkeypatch):
    recording = _switching(tmp_path / "switch.csv")
    ref = tmp_path / "ref"
    calls = []
    measure = replay.ReplayLauncher.measure

    def counted(self, p, *args, **kwargs):
        calls.append(p)
        return measure(self, p, *args, **kwargs)

    monkeypatch.setattr(replay.ReplayLauncher, "measure", counted)
    assert _tune(recording, ref, "--budget", "30%").returncode == 0
    coarse = json.loads((ref / "tune.json").read_text())["grids"][0]["comm_sizes"]
    # killed at the launch of the second densifying round: its P is in the table's grid, not
    # measured; the resumed tune completes that round first, then goes on as the reference
    added = [i for i, p in enumerate(calls) if p not in coarse]
    assert len(added) >= 3
    kill_at, killed_p = added[1], calls[added[1]]

    def killed(self, p, *args, **kwargs):
        calls.append(p)
        if len(calls) == kill_at + 1:
            raise KeyboardInterrupt
        return measure(self, p, *args, **kwargs)

    calls.clear()
    monkeypatch.setattr(replay.ReplayLauncher, "measure", killed)
    out = tmp_path / "killed"
    stopped = _tune(recording, out, "--budget", "30%")
    assert stopped.returncode != 0 and "--resume" in stopped.stderr
    assert "bcast:densify" not in json.loads((out / "progress.json").read_text())["done"]
    assert killed_p in densify.table_comm_sizes(str(out), "bcast")
    assert killed_p not in _measured_ps(out)
    monkeypatch.setattr(replay.ReplayLauncher, "measure", measure)
    resumed = run_in_process("tune", "--resume", "--out", out)
    assert resumed.returncode == 0, resumed.stderr
    for name in ("tree/tree.json", "curve.csv", "table.csv.launches"):
        assert ((out / "bcast" / name).read_text().replace(str(out), "")
                == (ref / "bcast" / name).read_text().replace(str(ref), "")), name


LAUNCH = re.compile(r"^# launch\.(\d+)\.(\d+)=.* wall_s=([\d.]+)")


def test_the_refinement_leaves_densifying_half_of_its_part(tmp_path):
    # a recording with noise (its journal's launches): the coarse cells are undecided, and
    # refining them alone would take all the coarse sweep left (it did before the reserve)
    out = tmp_path / "o"
    got = _tune(REPO / "bench-data" / "paired" / "bcast-mpich.csv", out, "--budget", "30%")
    assert got.returncode == 0, got.stderr
    plan = json.loads((out / "tune.json").read_text())
    grid = plan["grids"][0]["comm_sizes"]
    with open(out / "bcast" / "table.csv.launches") as f:
        launches = [(int(m[1]), int(m[2]), float(m[3])) for m in map(LAUNCH.match, f) if m]
    coarse = sum(w for p, k, w in launches if p in grid and k == 1)
    refined = sum(w for p, k, w in launches if k > 1)
    added = sum(w for p, k, w in launches if p not in grid and k == 1)
    left = plan["budget_s"] - coarse
    # (a launch starts when its estimate fits: it may end a little beyond, a start at most)
    assert 0 < refined <= (1 - refinement.DENSIFY_RESERVE) * left + replay.START_S, launches
    assert added > 0 and "bcast: densify round 1: P" in got.stderr
    assert coarse + refined + added <= plan["budget_s"] + replay.START_S, launches
