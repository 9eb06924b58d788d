"""Replay (`collsel sweep --replay`, `collsel tune --replay`): the paired sweep engine answered
from a recorded table, charged the recorded cost on a simulated clock, and the anytime curve."""
import csv
import json
import re

import pytest

from collsel.core.io import csvfile
from collsel.sources.sweep import journal, replay
from helpers import REPO, run_in_process

PAIRED = REPO / "bench-data" / "paired" / "bcast-mpich.csv"     # 300 rows and a journal


def _table(path, rows, header="collective,comm_size,msg_size,algorithm,segsize,time_us"):
    path.write_text(header + "\n" + "\n".join(rows) + "\n")
    return path


@pytest.fixture
def plain(tmp_path):
    """A recorded table without journal or spread: bcast, P 2/4/8, 3 sizes, 3 methods and the
    default; algorithm 1 fastest at small sizes, 2 at large ones."""
    rows = []
    for p in (2, 4, 8):
        for m in (1, 1024, 1048576):
            for alg, scale in ((0, 1.3), (1, 1.0 if m < 4096 else 2.0), (2, 1.5 if m < 4096
                                                                       else 1.0), (3, 1.7)):
                rows.append(f"bcast,{p},{m},{alg},0,{scale * (10 + p + m / 1000):.4f}")
    return _table(tmp_path / "plain.csv", rows)


def _journal_launches(path):
    meta = csvfile.read(str(path) + ".launches", "a sweep journal").metadata
    return {k: dict(x.split("=", 1) for x in v.split() if "=" in x)
            for k, v in meta.items() if k.startswith("launch.")}


def test_sweep_replay_returns_recorded_times_and_charges_their_cost(tmp_path, plain):
    out = tmp_path / "t.csv"
    got = run_in_process("sweep", "--collective", "bcast", "--replay", plain, "--out", out,
                         "--launches", "3", "--time-cap", "0.001")
    assert got.returncode == 0, got.stderr
    with open(out) as f:
        rows = [r for r in csv.DictReader(line for line in f if not line.startswith("#"))]
    recorded = {(r[1], r[2], r[3]): float(r[5]) for r in
                csv.reader(plain.read_text().splitlines()[1:])}
    assert len(rows) == len(recorded)
    for r in rows:      # no spread recorded: every launch returns the recorded value itself
        assert float(r["time_us"]) == pytest.approx(recorded[(r["comm_size"], r["msg_size"],
                                                              r["algorithm"])], rel=1e-6)
        assert r["launches"] == "3"
    # each launch is charged START_S + (warm-up + repetitions) x time per point; repetitions by
    # the benchmark's rule: the per-method cap (0.001 s) spent, within [5, 300]
    launches = _journal_launches(out)
    assert len(launches) == 9
    for p in (2, 4, 8):
        times = [t for (q, _, _), t in recorded.items() if q == str(p)]
        reps = [min(300, max(5, -(-0.001 // (t * 1e-6)))) for t in times]
        cost = replay.START_S + sum((2 + n) * t * 1e-6 for n, t in zip(reps, times))
        for k in (1, 2, 3):
            assert float(launches[f"launch.{p}.{k}"]["wall_s"]) == pytest.approx(cost, abs=0.06)


def test_sweep_replay_of_a_journal_returns_recorded_launches_paired(tmp_path):
    out = tmp_path / "t.csv"
    got = run_in_process("sweep", "--collective", "bcast", "--replay", PAIRED, "--out", out,
                         "--launches", "3", "--comm-sizes", "2,8", "--msg-sizes", "1,4194304")
    assert got.returncode == 0, got.stderr
    recorded = _launch_medians(str(PAIRED) + ".launches")
    replayed = _launch_medians(str(out) + ".launches")
    for (p, k), medians in replayed.items():
        # every replayed launch is one recorded launch of its P, all methods and sizes alike
        same = [j for (q, j), rec in recorded.items() if q == p
                and all(rec[key] == value for key, value in medians.items())]
        assert len(same) == 1, (p, k)
    # the three launches of a P are three different recorded launches
    for p in ("2", "8"):
        assert len({tuple(sorted(m.items())) for (q, _), m in replayed.items() if q == p}) == 3


def _launch_medians(journal):
    out = {}
    with open(journal) as f:
        for r in csv.DictReader(line for line in f if not line.startswith("#")):
            out.setdefault((r["comm_size"], r["launch"]), {})[
                (r["msg_size"], r["algorithm"], r["segsize"])] = r["median_us"]
    return out


def _tune(out, *more):
    return run_in_process("tune", "--replay", PAIRED, "--out", out, "--score=",
                          "--checkpoints", "3", *more)


def test_tune_replay_is_deterministic_and_spends_its_percent(tmp_path):
    runs = [tmp_path / "a", tmp_path / "b", tmp_path / "c"]
    for out, seed in zip(runs, ("1", "1", "2")):
        got = _tune(out, "--budget", "60%", "--seed", seed)
        assert got.returncode == 0, got.stderr
    plan = json.loads((runs[0] / "tune.json").read_text())
    assert plan["budget_s"] == pytest.approx(0.6 * plan["full_cost_s"], rel=1e-4)
    first, again = ((r / "bcast" / "curve.csv").read_text() for r in runs[:2])
    assert first == again
    drawn = [(r / "bcast" / "curve.svg").read_bytes() for r in runs]
    assert drawn[0] == drawn[1]
    assert b"<!-- bcast, strategy adaptive: leave-one-P-out -->" in drawn[0]
    assert ((runs[0] / "bcast" / "table.csv.launches").read_text()
            == (runs[1] / "bcast" / "table.csv.launches").read_text())
    # another seed replays other recorded launches
    assert ((runs[0] / "bcast" / "table.csv.launches").read_text()
            != (runs[2] / "bcast" / "table.csv.launches").read_text())
    rows = list(csv.DictReader(first.splitlines()))
    costs = [float(r["cost_s"]) for r in rows]
    assert costs == sorted(costs) and len(rows) == 3
    # the tune's last checkpoint is all it spent: the journal's simulated wall times
    spent = sum(x.wall_s for x in journal.read_launches(
        journal.journal_path(str(runs[0] / "bcast" / "table.csv"))))
    assert costs[-1] == pytest.approx(spent, abs=0.2)
    last = rows[-1]
    assert last["exact_mean"] and last["P_mean"] and last["m_mean"]
    assert float(last["cells"]) > 0


def test_tune_replay_summary_names_budget_and_curve(tmp_path):
    got = _tune(tmp_path / "s", "--budget", "60%")
    assert got.returncode == 0, got.stderr
    assert re.search(r"budget 60% = [0-9.]+ s of its full cost [0-9.]+ s", got.stdout)
    assert "collective,launches,cost_s,cost_pct,cells,exact_mean" in got.stdout
    assert (tmp_path / "s" / "bcast" / "tree" / "tree.json").is_file()


@pytest.mark.parametrize("argv, words", [
    (("--replay", "/nonexistent/t.csv"), "cannot read it"),
    (("--replay", PAIRED, "--hostfile", "h"), "--replay with --hostfile"),
    (("--replay", PAIRED, "--collectives", "reduce"), "records bcast only"),
    (("--replay", PAIRED, "--budget", "0%"), "--budget (percent)"),
    (("--replay", PAIRED, "--score", "--max-depth x"), "--candidate"),
])
def test_tune_replay_refuses_bad_input_in_one_line(tmp_path, argv, words):
    out = tmp_path / "o"
    got = run_in_process("tune", "--out", out, *argv)
    assert got.returncode == 2
    lines = got.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0], got.stderr
    assert not out.exists()


def test_live_budget_percent_is_a_share_of_the_full_grid_estimate(tmp_path):
    small = run_in_process("tune", "--out", tmp_path / "x", "--dry-run", "--collectives",
                           "bcast", "--comm-sizes", "2,4,8", "--budget", "100%")
    assert small.returncode == 0, small.stderr
    assert "budget 100%" in small.stdout
    tiny = run_in_process("tune", "--out", tmp_path / "y", "--dry-run", "--collectives",
                          "bcast", "--comm-sizes", "2,4,8", "--budget", "0.1%")
    assert tiny.returncode == 2 and "too small" in tiny.stderr


def _copy_recording(tmp_path, edit):
    """PAIRED and its journal copied, the journal's data lines passed through `edit`."""
    table = tmp_path / PAIRED.name
    table.write_text(PAIRED.read_text())
    lines = (PAIRED.parent / (PAIRED.name + ".launches")).read_text().splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("collective,"))
    body = [edit(line) for line in lines[header + 1:]]
    (tmp_path / (PAIRED.name + ".launches")).write_text(
        "\n".join(lines[:header + 1] + body) + "\n")
    return table


def _quote_collective(line):
    return '"bcast"' + line[5:] if line.startswith("bcast,") else line


def test_a_journal_read_row_by_row_replays_as_one_read_column_wise(tmp_path):
    """A quoted field makes csvfile read the journal row by row (no NumPy columns): the
    recording is the same, launch for launch."""
    plain = replay.Recording(str(PAIRED))
    quoted = replay.Recording(str(_copy_recording(tmp_path, _quote_collective)))
    assert quoted.launch_ids == plain.launch_ids and list(quoted.points) == list(plain.points)
    for key, (launches, stats) in plain.points.items():
        assert quoted.points[key][0].tolist() == launches.tolist()
        assert quoted.points[key][1].tolist() == stats.tolist()


@pytest.mark.parametrize("column, value, words", [
    (2, "1k", "column msg_size: not an integer"), (9, "fast", "column median_us: not a number"),
    (20, "x", ":7: 17 fields, header has 16")])
def test_a_bad_journal_line_is_refused_in_one_line(tmp_path, column, value, words):
    def edit(line):
        if line.startswith("#"):
            return line
        fields = line.split(",")
        return ",".join(fields[:column] + [value] + fields[column + 1:])
    table = _copy_recording(tmp_path, edit)
    got = run_in_process("tune", "--out", tmp_path / "o", "--replay", table)
    assert got.returncode == 2
    lines = got.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0] and ".launches" in lines[0], got.stderr


def test_a_table_without_journal_was_recorded_a_launch_per_method(tmp_path, plain):
    """Without a journal the full cost charges a start per method at each P (each was its own
    run of a benchmark forcing one algorithm); with one, the journal's launches, each measuring
    every method. What the points cost is the same either way."""
    recording = replay.load(str(plain))
    assert recording.recorded_starts == 3 * 4           # 3 P x (3 methods + the default)
    # a method missing at P = 8: one start fewer there
    rows = [r for r in plain.read_text().splitlines()[1:] if not r.startswith("bcast,8,")
            or r.split(",")[3] != "3"]
    ragged = replay.load(str(_table(tmp_path / "ragged.csv", rows)))
    assert ragged.recorded_starts == 3 * 4 - 1
    options = dict(time_cap=0.001, min_reps=2, max_reps=50, warmup=2)
    points_s = recording.full_cost(**options) - replay.START_S * recording.recorded_starts
    assert points_s > 0
    assert recording.mean_point_seconds(**options) == pytest.approx(points_s / (3 * 3 * 4))
    paired = replay.load(str(PAIRED))
    assert paired.recorded_starts == len(journal.read_launches(
        journal.journal_path(str(PAIRED))))
