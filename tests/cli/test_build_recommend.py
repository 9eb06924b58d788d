"""`collsel build --recommend`: deterministic, reproducible from its recorded command."""
import json
import pathlib
import shlex
import subprocess
import sys

import numpy as np
import pytest

from collsel.sources import launch_tables
from collsel.core.evaluate import candidates, fold_maps, model_selection
from collsel.core.maps import decision_map, table as tables
from helpers import REPO, collsel, recommendation_with


def test_recommend_same_bytes_and_recorded_command(tmp_path, tanjaderin):
    outs = []
    for name in ("a", "b"):
        r = collsel("build", tanjaderin["reduce"], "--collective", "reduce", "--recommend",
                    "--leaf", "penalty", "--out", tmp_path / name)
        assert r.returncode == 0, r.stderr
        assert "recommended:" in r.stdout and "out-of-sample" in r.stdout
        outs.append((tmp_path / name / "tree.json").read_bytes())
    assert outs[0] == outs[1]
    stats = json.loads((tmp_path / "a" / "stats.json").read_text())
    rec = stats["recommendation"]
    words = shlex.split(rec["command"])
    assert words[:2] == ["collsel", "build"] and "--recommend" in words
    again = collsel(*words[1:-1], tmp_path / "c")
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "c" / "tree.json").read_bytes() == outs[0]
    chosen = rec["chosen"]
    assert chosen["leaves"] == stats["leaves"]
    assert rec["criterion"] == "combined" and rec["kinds"] == ["leave_one_P_out",
                                                               "leave_one_m_out"]
    # the one-SE rule: within one SE of the best, and never worse than the obvious
    assert chosen["criterion_capped"] <= rec["best"]["criterion_capped"] + chosen["se"] + 1e-9
    for name in ("default", "best_fixed"):
        assert chosen["criterion_capped"] <= rec["compared"][name]["criterion_capped"] + 1e-9
    assert rec["nested"]["combined"]["capped"] is not None
    assert "nested out-of-sample" in rec["why"]
    # the largest P held out decides whether the edge decision or deferring serves beyond it
    assert rec["edge"]["comm_size"] == 256 and rec["edge"]["beyond"] in (
        "keep the edge decision", "defer beyond the measured P")
    assert f"largest P=256 held out: this tree {rec['edge']['tree_capped']:.2f}%" in rec["why"]
    assert stats["out_of_sample"]["leave_one_P_out"]["tree"]["cells"] > 0


def test_recommend_refuses_limits(tmp_path, tanjaderin):
    r = collsel("build", tanjaderin["reduce"], "--collective", "reduce", "--recommend",
                "--max-depth", "3", "--out", tmp_path / "x")
    assert r.returncode == 2 and "--recommend" in r.stderr


@pytest.mark.parametrize("command", [("build", "--recommend"), ("report", "--quiet")])
def test_criterion_needs_its_data(tmp_path, tanjaderin, command):
    r = collsel(command[0], tanjaderin["reduce"], "--collective", "reduce", command[1],
                "--criterion", "launches", "--out", tmp_path / "x")
    assert r.returncode == 2 and r.stderr.strip().splitlines() == [
        "collsel: error: --criterion launches: needs the sweep's journal of 2+ launches "
        "(TABLE.launches beside the table, or --launches)"]
    assert not (tmp_path / "x").exists()


def test_budget_is_deprecated(tmp_path, tanjaderin):
    r = collsel("build", tanjaderin["reduce"], "--collective", "reduce", "--recommend",
                "--criterion", "P", "--budget", "2", "--out", tmp_path / "x")
    assert r.returncode == 0, r.stderr
    assert "--budget is deprecated" in r.stderr
    assert "criterion leave-P-out" in r.stdout


def _default_wins_table(path):
    """The MPI's default is the fastest everywhere: nothing may beat it."""
    rng = np.random.default_rng(3)
    with open(path, "w") as f:
        f.write("collective,comm_size,msg_size,algorithm,segsize,time_us\n")
        for p in (2, 4, 8, 16, 32):
            for m in (1, 8, 64, 512, 4096, 32768):
                f.write(f"bcast,{p},{m},0,0,{10.0:.3f}\n")
                for alg in (1, 2, 3):
                    f.write(f"bcast,{p},{m},{alg},0,{10.0 * (1.05 + rng.random()):.3f}\n")
    return path


def test_never_worse_than_the_default(tmp_path):
    table = _default_wins_table(tmp_path / "t.csv")
    r = collsel("build", table, "--collective", "bcast", "--recommend", "--out", tmp_path / "o")
    assert r.returncode == 0, r.stderr
    rec = json.loads((tmp_path / "o" / "stats.json").read_text())["recommendation"]
    assert rec["deferred"] and rec["chosen"]["fields"]["limit"] == "defer"
    assert "defer to the MPI everywhere" in r.stdout
    doc = json.loads((tmp_path / "o" / "tree.json").read_text())
    assert len(doc["nodes"]["first_child"]) == 1


def _selection(table_path, collective, launches=None, transform=None):
    table = tables.read_tables([table_path]).select(collective)
    if transform:
        table = transform(table)
    dmap = decision_map.build_map(table)
    return model_selection.select(fold_maps.FoldGrid(dmap, launches or {}))


@pytest.mark.parametrize("cap, defers", [(model_selection.CAP, False), (100.0, True)])
def test_a_default_wild_at_a_few_cells_is_not_recommended(tanjaderin, monkeypatch, cap, defers):
    """The selection statistic is the plain mean (CAP = inf), the figure a user is judged by. A
    default 10 % faster than every forced method except at three scattered cells where it is
    1,000x slower (a pathology at a few points, as on valentinisalessio-bcast-socket): a tree
    that avoids those cells is recommended. With the old 100 % cap each of them counted as a
    mere doubling, and deferring everywhere was recommended."""
    def wild(table):
        t = table.take(np.arange(len(table)))
        forced = t.algorithm != 0
        key = t.comm_size.astype(np.int64) * 2**40 + t.msg_size.astype(np.int64)
        best = {}
        for k, v in zip(key[forced], t.time_us[forced]):
            best[k] = min(best.get(k, np.inf), v)
        times = np.where(forced, t.time_us, [0.9 * best.get(k, np.inf) for k in key])
        cells = sorted(best)
        for k in (cells[len(cells) // 5], cells[len(cells) // 2], cells[4 * len(cells) // 5]):
            times = np.where(~forced & (key == k), times * 1000, times)
        t.time_us = times
        return t
    monkeypatch.setattr(model_selection, "CAP", cap)
    sel = _selection(tanjaderin["bcast"], "bcast", transform=wild)
    assert (sel.candidates[sel.chosen].limit == "defer") == defers


SHIPPED = [("bench-data/paired/bcast-openmpi.csv", "bcast"),
           ("bench-data/paired/reduce-openmpi.csv", "reduce"),
           ("bench-data/paired/bcast-mpich.csv", "bcast"),
           ("bench-data/paired/reduce-mpich.csv", "reduce"),
           ("bench-data/bcast-sweep.csv", "bcast"), ("bench-data/reduce-sweep.csv", "reduce")]


def _launches(path, collective):
    journal = pathlib.Path(str(path) + ".launches")
    return launch_tables.read_launch_tables(journal, collective) if journal.exists() else {}


# Known misses of the Generalize issue's target, kept visible: strict xfail, so each fails once
# met. (Paired bcast-mpich was one under the one-SE rule alone: nested 7.67 % against taking the
# best's 6.61 %; met since the interpolated exact tree is preferred, 2026-12-01.)
MISSES: dict = {}
TABLES = [*(pytest.param(w, marks=pytest.mark.xfail(strict=True, reason=MISSES[w]))
            if w in MISSES else w for w in SHIPPED), ("trieste", "bcast"), ("trieste", "reduce"),
          ("bench-data/cluster/bcast-nodes-ppn.csv", "bcast"),
          ("bench-data/cluster/reduce-nodes-ppn.csv", "reduce"),
          ("bench-data/lmo/bcast-sweep.csv", "bcast"), ("bench-data/load/bcast-load.csv", "bcast")]


@pytest.mark.slow
@pytest.mark.parametrize("which", TABLES)
def test_recommended_is_near_the_best_candidate(which, tanjaderin):
    """Every candidate enumerated on each shipped table: the procedure's nested figure is within
    0.5 points of the best candidate's, like with like. "The best candidate" is itself a choice
    among ~250 noisy cross-validated figures, so its honest figure is the nested one of taking
    the best (no one-SE rule): the minimum of the plain figures is optimistic by construction
    (by 3.35 points on the Trieste bcast table, 2.16 on paired bcast-mpich)."""
    path, collective = which
    path = tanjaderin[collective] if path == "trieste" else REPO / path
    sel = _selection(path, collective, _launches(path, collective))
    nested = sel.nested["combined"].capped
    best = sel.nested_best["combined"].capped
    assert nested <= best + 0.5, (sel.candidates[sel.chosen].label(), nested, best)


def test_near_the_best_can_fail(monkeypatch, tanjaderin):
    """The comparison above catches a rule that is too conservative: four standard errors
    (where the one-SE rule decides: no interpolated exact tree to prefer)."""
    monkeypatch.setattr(candidates, "interpolable", lambda dmap: False)
    monkeypatch.setattr(model_selection, "SE_RULE", 4.0)
    sel = _selection(tanjaderin["bcast"], "bcast")
    assert sel.nested["combined"].capped > sel.nested_best["combined"].capped + 0.5


def test_without_folds_the_exact_tree_and_why(tmp_path):
    table = tmp_path / "tiny.csv"
    table.write_text("collective,comm_size,msg_size,algorithm,segsize,time_us\n"
                     "bcast,2,1,1,0,1\nbcast,2,1,2,0,2\nbcast,4,1,1,0,3\nbcast,4,1,2,0,2\n")
    r = collsel("build", table, "--collective", "bcast", "--recommend", "--out", tmp_path / "o")
    assert r.returncode == 0, r.stderr
    assert "recommended: no out-of-sample data (fewer than 3 communicator sizes" in r.stdout
    assert json.loads((tmp_path / "o" / "stats.json").read_text())["leaves"] == 2


def test_commands_load_without_matplotlib():
    """Building the parser (every command does) must not import matplotlib: ~1 s each time."""
    r = subprocess.run([sys.executable, "-c", "import sys, collsel.cli; collsel.cli.parser(); "
                        "print('matplotlib' in sys.modules)"], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.strip() == "False", r.stderr


def test_two_launches_nest_on_the_other_kinds_folds():
    """With two launches, a launch fold's training set is one launch: it has no launch folds of
    its own (they would train on nothing), so its choice is made on its P and m folds, as a
    recommendation made on that one launch would (a traceback before the nesting existed)."""
    path = REPO / "bench-data/paired/reduce-mpich.csv"
    two = dict(list(_launches(path, "reduce").items())[:2])
    assert len(two) == 2
    sel = _selection(path, "reduce", two)
    table = tables.read_tables([path]).select("reduce")
    grid = fold_maps.FoldGrid(decision_map.build_map(table), two)
    outer = grid.folds("launches")[0]
    assert grid.folds("launches", without=outer) == []
    assert sel.nested["launches"].cells > 0 and len(sel.nested["launches"].picked) == 2
    assert "launches" in sel.per_kind and 0 <= sel.chosen < len(sel.candidates)


def test_report_takes_the_criterion(tmp_path, tanjaderin):
    """`collsel report --criterion` chooses the recommended tree as `build --criterion` does
    and says which criterion it used (a criterion without its data: test above)."""
    r = collsel("report", tanjaderin["reduce"], "--collective", "reduce", "--criterion", "m",
                "--quiet", "--out", tmp_path / "r")
    assert r.returncode == 0, r.stderr
    assert "chosen by criterion leave-m-out" in r.stdout
    rec = json.loads((tmp_path / "r" / "report.json").read_text())["recommendation"]
    assert "--criterion m" in rec["build_command"] and "criterion leave-m-out" in rec["why"]


def test_selection_with_two_workers_is_the_selection_of_one_process(tanjaderin, monkeypatch):
    """core.evaluate.parallel's two processes compute every fold's costs (none left to the parent) and
    the selection, its figures and the edge experiment are those of one process."""
    from collsel.core.evaluate import candidates, parallel
    dmap = decision_map.build_map(tables.read_table(tanjaderin["reduce"]).select("reduce"))
    alone = model_selection.select(fold_maps.FoldGrid(dmap))
    calls = []
    real = candidates.Trained.costs
    monkeypatch.setattr(candidates.Trained, "costs",
                        lambda self, *a: calls.append(1) or real(self, *a))
    with parallel.pool() as workers:
        assert workers is not None                  # the test machines have two cores
        pooled = model_selection.select(fold_maps.FoldGrid(dmap), "combined", workers)
    assert calls == []                              # the workers' calls are not counted here
    assert pooled.chosen == alone.chosen and (pooled.score == alone.score).all()
    assert (pooled.se == alone.se).all() and pooled.nested == alone.nested
    assert pooled.nested_best == alone.nested_best and pooled.edge == alone.edge


def test_one_core_allowed_means_no_worker_processes(monkeypatch):
    """On one allowed core (a batch job's allocation) the work stays in this process."""
    from collsel.core.evaluate import parallel
    monkeypatch.setattr(parallel, "_cores", lambda: 1)
    with parallel.pool() as workers:
        assert workers is None


def test_the_default_beside_the_nested_figure_is_on_the_same_folds():
    """The nested combined figure can average fewer fold kinds than the criterion (no nested
    leave-one-P-out with 4 P): the default shown beside it averages the same kinds (the
    reduce_scatter figures of bench-data/tune-vm: 10.20 % there, not the all-kinds 9.18 %)."""
    from collsel.core.evaluate.recommendation import baseline_on_nested_folds
    from collsel.core.evaluate.recommendation_figures import (CandidateRow, KindFigures,
                                                              NestedFigures, Recommendation)
    kinds = {k: KindFigures(v, v, v, 10) for k, v in (
        ("launches", 12.89), ("leave_one_P_out", 7.13), ("leave_one_m_out", 7.51))}
    compared = {"default": CandidateRow("defer to the MPI everywhere", 1, 9.18, kinds)}
    figures = recommendation_with({"combined": NestedFigures(
        10.37, 10.37, 20.0, kinds=("launches", "leave_one_m_out"))}, compared)
    assert baseline_on_nested_folds(figures) == pytest.approx((12.89 + 7.51) / 2)
    one = recommendation_with({"launches": NestedFigures(9.23, 9.23, 20.0, 10)}, compared,
                              "launches")
    assert baseline_on_nested_folds(one) == pytest.approx(12.89)
    assert baseline_on_nested_folds(Recommendation("combined", (), "no folds")) is None
