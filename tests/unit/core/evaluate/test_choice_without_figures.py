"""A recommendation wanted for its tree alone (`collsel evaluate --candidate=--recommend`, a replay's
curve: core.evaluate.held_out builds with nested=False) makes the same choice without the nested
figures, and without training the inner folds' sets those figures need."""
import numpy as np

from collsel.core.evaluate import fold_maps, model_selection
from collsel.core.maps import decision_map, table as tables


def _selected(grid, nested, monkeypatch):
    """(Selection, the training sets the study built) of select(grid, nested=nested)."""
    built = set()
    trained = model_selection.Study.trained

    def spy(study, removal):
        built.add(frozenset(removal))
        return trained(study, removal)

    monkeypatch.setattr(model_selection.Study, "trained", spy)
    sel = model_selection.select(grid, nested=nested)
    monkeypatch.undo()
    return sel, built


def test_the_tree_alone_is_the_same_choice_on_fewer_training_sets(tanjaderin, monkeypatch):
    table = tables.read_tables([tanjaderin["reduce"]]).select("reduce")
    grid = fold_maps.FoldGrid(decision_map.build_map(table))
    full, every = _selected(grid, True, monkeypatch)
    alone, few = _selected(grid, False, monkeypatch)
    assert (alone.chosen, alone.best, alone.edge) == (full.chosen, full.best, full.edge)
    np.testing.assert_array_equal(alone.score, full.score)
    assert np.array_equal(alone.trained.tree(alone.chosen).method,
                          full.trained.tree(full.chosen).method)
    assert full.nested["P"] is not None and alone.nested == {}
    outer = {frozenset(r) for k in full.kinds for r in grid.folds(k)}
    assert few <= every and outer <= few and len(few) < len(every) / 3
