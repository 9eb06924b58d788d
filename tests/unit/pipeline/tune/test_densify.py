"""Densifying (pipeline/tune/densify.py): after the refinement, new P (and sizes) between
measured P (and sizes) whose decisions differ, within what the budget has left, and a kill in a
round resumed exactly."""
import csv
import json

import pytest

from collsel.core.maps import table as table_io
from collsel.pipeline.tune import densify
from collsel.sources.sweep import replay
from helpers import run_in_process

SIZES = (1, 1024, 65536, 1048576)
MANY_SIZES = tuple(2 ** i for i in range(21))       # 1 B to 1 MiB, a coarse grid thins them


def _switching(path, switch=20, ps=range(2, 65), sizes=SIZES, switch_m=None):
    """A recorded bcast table, no noise: algorithm 1 fastest below P = `switch` (or, with
    `switch_m`, below that size at every P), 2 from it on; 3 and the default slower
    everywhere."""
    rows = ["collective,comm_size,msg_size,algorithm,segsize,time_us"]
    for p in ps:
        for m in sizes:
            base = 10 + p + m / 1000
            first = p < switch if switch_m is None else m < switch_m
            for alg, scale in ((0, 1.3), (1, 1.0 if first else 1.4),
                               (2, 1.2 if first else 1.0), (3, 1.6)):
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
    candidates = ([4, 16, 64], [])
    # a new P costs its dearer neighbour's
    cost = densify.RoundCost({2: 1.0, 8: 1.0, 32: 1.0, 128: 2.0}, {}, 1, 0.0)
    assert densify.next_round(table, candidates, cost, 4.0) == ([4, 16, 64], [])
    assert densify.next_round(table, candidates, cost, 3.9) == ([16, 64], [])  # most at stake
    assert densify.next_round(table, candidates, cost, 1.5) == ([16], [])  # 64's costs 2: skipped
    assert densify.next_round(table, candidates, cost, 0.5) == ([], [])
    assert densify.next_round(table, ([], []), cost, 4.0) == ([], [])


def test_sizes_between_measured_sizes_whose_decisions_differ_cost_a_start_up_once(tmp_path):
    """Along m as along P: algorithm 1 fastest up to 1024 bytes, 2 from 65536 on, at both P."""
    rows = ["collective,comm_size,msg_size,algorithm,segsize,time_us"]
    for p in (2, 8):
        for m in (1, 1024, 65536, 1048576):
            for alg in (1, 2):
                slow = 1.5 if (alg == 1) == (m >= 65536) else 1.0
                rows.append(f"bcast,{p},{m},{alg},0,{10 * slow:.4f}")
    (tmp_path / "t.csv").write_text("\n".join(rows) + "\n")
    table = table_io.read_table(tmp_path / "t.csv")
    assert densify.changing_gaps(table, densify.P) == []
    gaps = densify.changing_gaps(table, densify.M)
    assert [(g.low, g.high, g.axis) for g in gaps] == [(1024, 65536, densify.M)]
    assert gaps[0].stake == pytest.approx(2 * 50.0)       # 1's choice costs 50 % at both P
    # 3 launches of 1 s start-up each; a launch measured 1024 in 1 s at P 2 and 1.5 s at P 8,
    # 65536 in 2 s and 3 s: a new size between them costs, in each launch, the dearer of the
    # two at each P, and the round's first new size a start-up per launch at each P
    cell_s = {(2, 1024): 1.0, (2, 65536): 2.0, (8, 1024): 1.5, (8, 65536): 3.0}
    cost = densify.RoundCost({2: 12.0, 8: 18.0}, cell_s, 3, 1.0)
    assert cost.new_size(gaps[0], first=True) == pytest.approx(3 * (2.0 + 3.0 + 2 * 1.0))
    assert cost.new_size(gaps[0], first=False) == pytest.approx(3 * (2.0 + 3.0))
    candidates = ([4], [4096, 8192, 16384])
    assert densify.next_round(table, candidates, cost, 21.0) == ([], [8192])  # 2^13: midpoint
    assert densify.next_round(table, candidates, cost, 20.9) == ([], [])


def _tune(recording, out, *more):
    return run_in_process("tune", "--replay", recording, "--out", out, "--score=",
                          "--checkpoints", "1", "--strategy", "adaptive", *more)


def _measured(out, column):
    with open(out / "bcast" / "table.csv") as f:
        return sorted({int(r[column]) for r in csv.DictReader(
            line for line in f if not line.startswith("#"))})


def _measured_ps(out):
    return _measured(out, "comm_size")


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


def test_a_replayed_tune_finds_the_size_where_the_decision_changes(tmp_path):
    recording = _switching(tmp_path / "switch.csv", sizes=MANY_SIZES,
                           switch_m=3000)
    out = tmp_path / "o"
    got = _tune(recording, out, "--budget", "15%")
    assert got.returncode == 0, got.stderr
    grid = json.loads((out / "tune.json").read_text())["grids"][0]
    assert grid["candidate_msg_sizes"] == list(MANY_SIZES)
    measured = set(_measured(out, "msg_size"))
    assert set(grid["msg_sizes"]) < measured and "densify round 1: m" in got.stderr
    assert {2048, 4096} <= measured       # the bisection ends at the switch
    for m, alg in ((2048, 1), (4096, 2)):
        said = run_in_process("query", out / "bcast" / "tree" / "tree.json", "--comm-size", 4,
                              "--msg-size", m)
        assert f"(alg {alg}, seg 0" in said.stdout, said.stdout


def test_where_every_decision_agrees_nothing_is_added(tmp_path):
    recording = _switching(tmp_path / "same.csv", switch=1000)
    out = tmp_path / "o"
    got = _tune(recording, out, "--budget", "30%")
    assert got.returncode == 0, got.stderr
    plan = json.loads((out / "tune.json").read_text())
    assert _measured_ps(out) == plan["grids"][0]["comm_sizes"]
    assert "bcast: nothing added" in got.stderr


@pytest.mark.parametrize("axis", ["P", "m"])
def test_a_kill_inside_a_round_resumes_to_the_uninterrupted_result(tmp_path, monkeypatch, axis):
    """Killed at the second launch that measures a value densifying added (a new P, or a new
    size at a coarse P: launch K run again): the round's values are in the table's grid, not
    all measured; the resumed tune completes that round first, then goes on as the reference."""
    recording = (_switching(tmp_path / "switch.csv") if axis == "P" else
                 _switching(tmp_path / "switch.csv", sizes=MANY_SIZES, switch_m=3000))
    budget = "30%" if axis == "P" else "15%"
    ref = tmp_path / "ref"
    calls = []
    measure = replay.ReplayLauncher.measure

    def counted(self, p, k, seed, sizes, *args, **kwargs):
        calls.append((p, tuple(sizes)))
        return measure(self, p, k, seed, sizes, *args, **kwargs)

    monkeypatch.setattr(replay.ReplayLauncher, "measure", counted)
    assert _tune(recording, ref, "--budget", budget).returncode == 0
    grid = json.loads((ref / "tune.json").read_text())["grids"][0]
    added = [i for i, (p, sizes) in enumerate(calls)
             if (p not in grid["comm_sizes"] if axis == "P"
                 else not set(sizes) & set(grid["msg_sizes"]))]
    assert len(added) >= 3
    kill_at = added[1]
    killed_p, killed_sizes = calls[kill_at]

    def killed(self, p, *args, **kwargs):
        calls.append(p)
        if len(calls) == kill_at + 1:
            raise KeyboardInterrupt
        return measure(self, p, *args, **kwargs)

    calls.clear()
    monkeypatch.setattr(replay.ReplayLauncher, "measure", killed)
    out = tmp_path / "killed"
    stopped = _tune(recording, out, "--budget", budget)
    assert stopped.returncode != 0 and "--resume" in stopped.stderr
    assert "bcast:densify" not in json.loads((out / "progress.json").read_text())["done"]
    asked = densify.table_grid(str(out), "bcast")
    if axis == "P":
        assert killed_p in asked[densify.P] and killed_p not in _measured_ps(out)
    else:
        assert set(killed_sizes) <= set(asked[densify.M])
    monkeypatch.setattr(replay.ReplayLauncher, "measure", measure)
    resumed = run_in_process("tune", "--resume", "--out", out)
    assert resumed.returncode == 0, resumed.stderr
    for name in ("tree/tree.json", "curve.csv", "table.csv.launches"):
        assert ((out / "bcast" / name).read_text().replace(str(out), "")
                == (ref / "bcast" / name).read_text().replace(str(ref), "")), name
