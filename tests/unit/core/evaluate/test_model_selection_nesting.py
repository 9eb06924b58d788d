"""The nesting of the recommendation's choice (core.evaluate.model_selection): each outer fold chooses
as a recommendation made on its training set would (what `collsel evaluate
--candidate=--recommend` runs directly): on that set's own folds of every kind, trained without
both folds and scored without the outer fold's cells, so nothing of the outer held-out data
reaches the choice."""
import dataclasses

import numpy as np
import pytest

from collsel.core.evaluate import (build_config, candidates, fold_maps, held_out, model_selection,
                                   out_of_sample, recommend)
from collsel.core.maps import decision_map, table as tables
from collsel.core.trees import tree


def _values(grid, removals):
    """The held-out values of removals: {(kind, value)} (indexes differ between maps)."""
    return {(kind, grid.dmap.axes[fold_maps.AXIS[kind]].values[k])
            for r in removals for kind, k in r}


@pytest.mark.parametrize("kind", ["P", "m"])
def test_inner_folds_are_those_of_the_training_set(tanjaderin, kind):
    """An outer fold's inner folds hold out the values a FoldGrid of its training map holds out
    (more than MAX_FOLDS message sizes: the evenly spaced subset moves once one is removed)."""
    table = tables.read_tables([tanjaderin["reduce"]]).select("reduce")
    grid = fold_maps.FoldGrid(decision_map.build_map(table))
    folds = {k: grid.folds(k) for k in ("P", "m")}
    assert len(np.unique(table.msg_size)) - 2 > fold_maps.MAX_FOLDS
    moved = False
    for r in folds[kind]:
        keys = model_selection._inner_keys(grid, folds, r)
        assert all(set(r) <= set(train) and excluding == r for train, _, excluding in keys)
        inner = _values(grid, [test for _, test, _ in keys])
        alone = fold_maps.FoldGrid(grid.training(r))
        assert inner == _values(alone, alone.folds("P") + alone.folds("m"))
        moved |= inner != _values(grid, [s for k in folds for s in folds[k] if s != r])
    assert moved or kind == "P"


def _launch(k, rows):
    """Launch k's table of (P, m, algorithm, time) rows."""
    n = len(rows)
    return tables.PerfTable(
        np.array(["bcast"] * n, dtype=object), np.array([r[0] for r in rows]),
        np.array([r[1] for r in rows], dtype=np.uint64), np.array([r[2] for r in rows]),
        np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64),
        np.array([r[3] for r in rows]), {}, [f"launch{k}:{i}" for i in range(n)], [])


def _fold_grid(launches):
    dmap = decision_map.build_map(out_of_sample.mean_table(list(launches.values())))
    return fold_maps.FoldGrid(dmap, launches)


def _grid():
    """A 5 x 5 map of two methods measured in three launches."""
    return _fold_grid({k: _launch(k, [(p, m, a, 1.0 + p * (a == 1) + m / 8 * (a == 2)
                                       + k * (p + m) / 100)
                                      for p in (2, 4, 6, 8, 10)
                                      for m in (1, 8, 64, 512, 4096) for a in (1, 2)])
                       for k in (1, 2, 3)})


def test_an_inner_held_out_set_lacks_the_outer_cells_and_the_outer_launch():
    grid = _grid()
    m_fold = grid.folds("m")[0]
    plain = grid.held_out(m_fold)
    without = grid.held_out(m_fold, (("P", 1),))
    p_value = grid.dmap.axes[0].values[1]
    assert (plain.query[0] == p_value).any() and not (without.query[0] == p_value).any()
    assert len(without) == len(plain) - (plain.query[0] == p_value).sum()
    # with launch 1 held out outside, the inner set is the other launches' mean, not the map's
    other = grid.held_out(m_fold, (("launches", 1),))
    assert len(other) == len(plain) and not np.allclose(other.cost, plain.cost)
    mine = fold_maps.FoldGrid(grid.dmap)
    mine.dmap = grid.training((("launches", 1),))       # the map of launches 2 and 3 alone
    again = mine.held_out(m_fold)
    assert np.allclose(other.cost, again.cost)


def test_the_printed_figure_is_the_direct_one(tanjaderin):
    """What `build --recommend` prints out of sample per kind (the nested figure: each fold's
    own pick, core.evaluate.recommend.nested_builders) is what `collsel evaluate --candidate=--recommend`
    measures directly on the same folds. Before, the chosen configuration refit on every fold
    was printed (7.94 % leave-one-P-out on this table against the direct 15.90 %)."""
    table = tables.read_tables([tanjaderin["reduce"]]).select("reduce")
    config = build_config.Config("unused", tree.BuildOptions(), out_of_sample.DEFAULT_SETTINGS,
                                 recommend=True)
    built = build_config.build(table, config)
    folds = out_of_sample.all_folds(table, None, config.settings, dmap=built.dmap)
    printed = out_of_sample.tree_figures(folds, None,
                                         recommend.nested_builders(built.figures))
    direct = held_out.evaluate(table, [config], ["P", "m"], fold_maps.MAX_FOLDS)
    for protocol, kind in (("P", "leave_one_P_out"), ("m", "leave_one_m_out")):
        assert printed[kind]["how"] == out_of_sample.NESTED
        assert printed[kind]["folds"] == direct[protocol]["folds"]
        assert printed[kind]["tree"]["cells"] == direct[protocol]["configs"][0]["cells"]
        assert printed[kind]["tree"]["mean"] == pytest.approx(
            direct[protocol]["configs"][0]["mean"], abs=1e-9), kind


def test_a_trivial_recommendation_scores_as_what_is_deployed(tanjaderin):
    """When the recommendation is to defer everywhere (or one fixed method), the deployed file
    is the MPI's default (or that method): its printed figure is the default's on every fold,
    so a deferring tree is never 'worse than doing nothing' (the tune walkthrough printed that
    for alltoall when the nested picks were trees)."""
    table = tables.read_tables([tanjaderin["bcast"]]).select("bcast")
    config = build_config.Config("unused", tree.BuildOptions(), out_of_sample.DEFAULT_SETTINGS,
                                 recommend=True)
    built = build_config.build(table, config)
    folds = out_of_sample.all_folds(table, None, config.settings, dmap=built.dmap)
    selected = built.figures.selection
    deferring = dataclasses.replace(built.figures, selection=dataclasses.replace(
        selected, fallback=None, choice=candidates.Candidate("defer")))
    assert any(c.limit != "defer" for c in selected.nested["leave_one_P_out"].picked_fields)
    printed = out_of_sample.tree_figures(folds, None, recommend.nested_builders(deferring))
    for kind in ("leave_one_P_out", "leave_one_m_out"):
        assert printed[kind]["tree"]["mean"] == pytest.approx(printed[kind]["default"]["mean"])


def test_a_launch_fold_leaving_one_p_has_no_inner_p_folds():
    """A refined or replayed sweep launches some P again: here launch 2 measured P = 8 alone.
    Without launch 1 the training data holds P = 8 only, so it has no interior P to hold out
    (holding out P = 8 would train on nothing: an IndexError in the tree builder before)."""
    grid = _fold_grid({k: _launch(k, [(p, m, a, 1.0 + p * (a == 1) + m / 8 * (a == 2) + k / 100)
                                      for p in ps for m in (1, 8, 64) for a in (1, 2)])
                       for k, ps in ((1, (2, 4, 6, 8, 10)), (2, (8,)))})
    without_first = (("launches", 1),)
    assert grid.folds("P", without=without_first) == []
    assert grid.folds("m", without=without_first) == [(("m", 1),)]   # m = 8, at P = 8
    assert len(grid.folds("P")) == 3                                 # P = 4, 6, 8
    folds = {"launches": grid.folds("launches"), "P": grid.folds("P")}
    for train, _, _ in model_selection._inner_keys(grid, folds, without_first):
        assert np.isfinite(grid.training(train).times).any()


def test_launch_folds_are_capped_like_p_and_m():
    """A refined sweep's journal of many launches gives at most MAX_FOLDS launch folds, evenly
    spaced with the first and the last, outer and inner alike (one per launch made a training
    set per pair of launches: 400 launches, 160,000 of them, and a worker of 11.7 GB)."""
    launches = {k: _launch(k, [(p, m, a, 1.0 + p * (a == 1) + m / 8 * (a == 2) + k / 100)
                               for p in (2, 4, 6) for m in (1, 8, 64) for a in (1, 2)])
                for k in range(1, 21)}
    grid = _fold_grid(launches)
    outer = grid.folds("launches")
    assert len(outer) == fold_maps.MAX_FOLDS
    held = [k for ((_, k),) in outer]
    assert held[0] == 1 and held[-1] == 20 and held == sorted(set(held))
    inner = grid.folds("launches", without=outer[0])
    assert len(inner) == fold_maps.MAX_FOLDS and ("launches", 1) not in [f[0] for f in inner]
    keys = model_selection._inner_keys(grid, {"launches": outer}, outer[0])
    assert len(keys) == fold_maps.MAX_FOLDS
    # three launches: every one is a fold, as before
    assert len(_grid().folds("launches")) == 3


def test_a_kind_no_pick_of_which_can_be_scored_has_no_nested_figure(tmp_path):
    """A live coarse-refine tune's alltoall table (P = 2, 8, 16; 3 launches): the P = 8 fold's
    pick, made on the m folds of P = 2 and 16 alone, runs a method measured at P = 2 only, so
    none of that fold's cells can be scored. Leave-one-P-out then has no nested figure (it was
    NaN, and writing stats.json failed: the tune stopped with a traceback); the combined one
    averages the other kinds."""
    import json
    from collsel.pipeline import building
    from tests.helpers import REPO
    table = REPO / "tests" / "data" / "unscorable-nested" / "alltoall.csv"
    building.build_recommended(str(table), collective="alltoall", out=str(tmp_path))
    nested = json.loads((tmp_path / "stats.json").read_text())["recommendation"]["nested"]
    assert nested["leave_one_P_out"] is None
    assert nested["combined"]["kinds"] == ["launches", "leave_one_m_out"]
    assert nested["combined"]["mean"] == pytest.approx(
        (nested["launches"]["mean"] + nested["leave_one_m_out"]["mean"]) / 2)
