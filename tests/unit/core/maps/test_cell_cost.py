"""The one cost rule (core.maps.cell_cost), and that selection, the printed out-of-sample figures and
`collsel evaluate` score by it on ragged tables (methods and the default missing at some P):
before the rule was one, the selection's leave-one-P-out figure for the default was 50.15 %
where the direct evaluation on the same folds gave 10.07 % (a ragged Trieste-like table)."""
import csv
import json

import numpy as np
import pytest

from collsel.core.evaluate import fold_maps, model_selection
from collsel.core.maps import cell_cost, decision_map, table as tables
from helpers import collsel

NAN = np.nan


def test_reference_is_the_fastest_forced_method():
    # methods: forced 1, forced 2, defer (last); the default beats both at the second cell
    times = np.array([[10.0, 12.0, 11.0], [10.0, NAN, 5.0], [NAN, NAN, 7.0]])
    ref = cell_cost.reference_time(times, 2)
    assert ref[:2].tolist() == [10.0, 10.0] and np.isnan(ref[2])
    pen = cell_cost.method_costs(times, 2, cell_cost.UNSCORABLE)
    assert pen[0].tolist() == pytest.approx([0.0, 20.0, 10.0])
    assert pen[1, 2] == pytest.approx(-50.0) and np.isnan(pen[1, 1])    # unscorable
    assert np.isnan(pen[2]).all()                                      # no reference
    worst = cell_cost.method_costs(times, 2, cell_cost.WORST)
    assert worst[1, 1] == pytest.approx(0.0)       # the cell's worst measured penalty (10 = 0 %)


def test_scored_cells_follow_the_default():
    measured = np.array([True, True, False])
    default = np.array([1.0, NAN, 1.0])
    assert cell_cost.scored_cells(measured, default, True).tolist() == [True, False, False]
    assert cell_cost.scored_cells(measured, default, False).tolist() == [True, True, False]


def test_unknown_policy_is_refused():
    with pytest.raises(ValueError):
        cell_cost.method_costs(np.ones((1, 2)), None, "free")


def test_held_out_positions_keep_the_ends_and_skip_unscorable():
    assert fold_maps.held_out_positions(5) == [1, 2, 3]
    assert fold_maps.held_out_positions(20, limit=4) == [1, 7, 12, 18]
    scorable = [i % 2 == 0 for i in range(10)]          # odd positions have no default
    assert fold_maps.held_out_positions(10, scorable) == [2, 4, 6, 8]


def ragged(tanjaderin, path):
    """The Trieste bcast table with the default and two forced methods removed at every odd
    communicator size (3rd, 5th, ...: the table's own P are powers of two)."""
    rows = list(csv.reader(open(tanjaderin["bcast"])))
    head = [r for r in rows if r and r[0].startswith("#")]
    body = [r for r in rows if r and not r[0].startswith("#")]
    ps = sorted({int(r[1]) for r in body[1:]})
    odd = set(ps[1::2])
    keep = [r for r in body[1:] if not (int(r[1]) in odd and r[3] in ("0", "2", "3"))]
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerows(head + [body[0]] + keep)
    return path


def test_selection_scores_the_default_as_evaluate_does(tanjaderin, tmp_path):
    """On the ragged table the selection's leave-one-P-out figure of deferring everywhere is
    the direct one: the same folds, the same cells, the same reference."""
    path = ragged(tanjaderin, tmp_path / "ragged.csv")
    dmap = decision_map.build_map(tables.read_tables([path]).select("bcast"))
    sel = model_selection.select(fold_maps.FoldGrid(dmap), criterion="P")
    defer = model_selection.index_of(sel, limit="defer")
    internal = sel.per_kind["P"]["mean"][defer]
    r = collsel("evaluate", path, "--protocol", "P", "--candidate=", "--json",
                tmp_path / "e.json", "--quiet")
    assert r.returncode == 0, r.stderr
    direct = json.loads((tmp_path / "e.json").read_text())["protocols"]["P"]["default"]
    assert direct["cells"] == sel.per_kind["P"]["cells"]
    assert internal == pytest.approx(direct["mean"], abs=1e-9)


def test_evaluate_counts_unscorable_and_is_deterministic(tanjaderin, tmp_path):
    path = ragged(tanjaderin, tmp_path / "ragged.csv")
    outs = []
    for k in range(2):
        out = tmp_path / f"e{k}.csv"
        r = collsel("evaluate", path, "--protocol", "P,m,edge", "--candidate=--max-depth 1",
                    "--candidate=", "--csv", out, "--quiet")
        assert r.returncode == 0, r.stderr
        outs.append(out.read_text())
    assert outs[0] == outs[1]
    rows = list(csv.DictReader(outs[0].splitlines()))
    assert {r["protocol"] for r in rows} == {"P", "m", "edge"}
    assert {r["chooser"] for r in rows} >= {"exact", "default", "best fixed method"}
    assert all(int(r["cells"]) > 0 for r in rows)


@pytest.mark.parametrize("args,says", [
    (["--protocol", "Q"], "--protocol Q"),
    (["--candidate=--max-depth x"], "--candidate"),
    (["--candidate=--recommend --max-depth 2"], "--recommend chooses"),
    (["--max-folds", "0"], "--max-folds")])
def test_evaluate_bad_input_is_one_line_exit_2(tanjaderin, args, says):
    r = collsel("evaluate", tanjaderin["bcast"], *args, "--quiet")
    assert r.returncode == 2 and says in r.stderr and len(r.stderr.strip().splitlines()) == 1
