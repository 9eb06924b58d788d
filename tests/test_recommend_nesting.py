"""The faithful nesting of the combined criterion (issue 30): each outer fold chooses on the
inner folds of every kind, trained without both folds and scored without the outer fold's
cells, so nothing of the outer held-out data reaches the choice."""
import numpy as np
import pytest

from collsel.core import (decision_map, fold_maps, model_selection, out_of_sample,
                          table as tables)

P = (("P", 1),)
FOLDS = {"launches": [(("launches", 1),), (("launches", 2),), (("launches", 3),)],
         "P": [(("P", 1),), (("P", 2),), (("P", 3),)], "m": [(("m", 1),), (("m", 2),)]}


def test_inner_folds_of_every_kind_leave_the_outer_fold_out():
    keys = model_selection._inner_keys(FOLDS, "P", P)
    assert {test for _, test, _ in keys} == {s for k in FOLDS for s in FOLDS[k] if s != P}
    for train, test, excluding in keys:
        assert set(P) <= set(train) and set(test) <= set(train) and excluding == P
    # an outer launch fold of a kind of three: its own kind's other two launches are inner folds
    launch = FOLDS["launches"][0]
    assert {t for _, t, _ in model_selection._inner_keys(FOLDS, "launches", launch)
            if t[0][0] == "launches"} == set(FOLDS["launches"][1:])
    # two folds of a kind give no inner folds of that kind (they would train on nothing)
    two = {**FOLDS, "launches": FOLDS["launches"][:2]}
    assert not [t for _, t, _ in model_selection._inner_keys(two, "launches", launch)
                if t[0][0] == "launches"]


def _grid():
    """A 5 x 5 map of two methods measured in three launches."""
    launches = {}
    for k in (1, 2, 3):
        rows = [(p, m, a, 1.0 + p * (a == 1) + m / 8 * (a == 2) + k * (p + m) / 100)
                for p in (2, 4, 6, 8, 10) for m in (1, 8, 64, 512, 4096) for a in (1, 2)]
        n = len(rows)
        launches[k] = tables.PerfTable(
            np.array(["bcast"] * n, dtype=object), np.array([r[0] for r in rows]),
            np.array([r[1] for r in rows], dtype=np.uint64), np.array([r[2] for r in rows]),
            np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64),
            np.array([r[3] for r in rows]), {}, [f"launch{k}:{i}" for i in range(n)], [])
    dmap = decision_map.build_map(out_of_sample.mean_table(list(launches.values())))
    return fold_maps.FoldGrid(dmap, launches)


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


@pytest.mark.slow
def test_the_faithful_figure_is_beside_the_nested_one(tanjaderin):
    table = tables.read_tables([tanjaderin["reduce"]]).select("reduce")
    grid = fold_maps.FoldGrid(decision_map.build_map(table))
    sel = model_selection.select(grid, "combined", None, faithful=True)
    fast = model_selection.select(grid, "combined")
    assert sel.nested == fast.nested and sel.chosen == fast.chosen
    assert sel.nested_faithful["combined"]["kinds"] == ["leave_one_P_out", "leave_one_m_out"]
    assert sel.nested_faithful["combined"]["capped"] != sel.nested["combined"]["capped"]
    assert fast.nested_faithful is None
