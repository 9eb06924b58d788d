"""`build --recommend` is never worse than the MPI nor the obvious out of sample: a tree whose
nested figure does not beat deferring everywhere (or the best fixed method) by more than one
standard error on the same held-out cells gives way to it (issue 30)."""
import json

import numpy as np
import pytest

from collsel.core.evaluate import candidates as cands, model_selection
from collsel.core.evaluate.recommendation_figures import Fallback, NestedFigures, Recommendation
from helpers import REPO, collsel, recommendation_with

TRIVIAL = [cands.Candidate("defer"), cands.Candidate("fixed"),
           cands.Candidate("exact", None, "balanced", "majority")]


def _nested(tree_costs):
    return {"P": {"capped": float(np.mean(tree_costs)), "costs": np.asarray(tree_costs, float)}}


def test_a_tree_no_better_than_the_default_gives_way_to_it():
    cells = np.array([[5.0, 7.0, 4.0, 9.0], [7.0, 7.0, 7.0, 7.0], [4.0, 8.0, 5.0, 8.0]])
    outer = {"P": [cells[:, :2], cells[:, 2:]]}
    nested = _nested([4.0, 8.0, 5.0, 8.0])      # the tree's picks: as good as the default
    index, got = model_selection._fallback(nested, outer, [0, 1], TRIVIAL, 2)
    assert got.to == "default" and index == 0
    assert got.capped == 6.25 and got.tree_capped == 6.25
    assert got.instead_of == TRIVIAL[2].label()


def test_a_tree_better_beyond_noise_stays():
    cells = np.array([[20.0, 30.0, 25.0, 21.0], [22.0, 28.0, 26.0, 24.0], [1.0, 2.0, 1.0, 2.0]])
    outer = {"P": [cells[:, :2], cells[:, 2:]]}
    assert model_selection._fallback(_nested([1.0, 2.0, 1.0, 2.0]), outer, [0, 1], TRIVIAL,
                                     2) is None


def test_the_best_fixed_method_when_it_is_the_lower_of_the_two():
    cells = np.array([[30.0, 30.0, 30.0, 30.0], [3.0, 5.0, 4.0, 4.0], [3.0, 5.0, 4.0, 5.0]])
    outer = {"P": [cells[:, :2], cells[:, 2:]]}
    index, got = model_selection._fallback(_nested([3.0, 5.0, 4.0, 5.0]), outer, [0, 1],
                                           TRIVIAL, 2)
    assert got.to == "best_fixed" and index == 1


@pytest.mark.slow
def test_reduce_scatter_of_the_tune_vm_keeps_only_a_tree_that_beats_the_default(tmp_path):
    """Whatever is recommended on a real table either beats the default's nested figure on the
    same folds or is the default (or the best fixed method) itself, said in stats.json. Under the
    one cost rule (core.maps.cell_cost) the tune-vm reduce_scatter tree's nested figure is 7.21 %
    capped against the default's 8.31 %, so it stays (before, scored against the best of every
    method including the default, it was 10.37 % against 10.20 % and gave way)."""
    from collsel.core.evaluate.recommendation import (baseline_on_nested_folds,
                                                      recommended_on_nested_folds)
    r = collsel("build", REPO / "bench-data/tune-vm/reduce_scatter.csv", "--collective",
                "reduce_scatter", "--recommend", "--out", tmp_path / "o")
    assert r.returncode == 0, r.stderr
    rec = Recommendation.from_json(
        json.loads((tmp_path / "o" / "stats.json").read_text())["recommendation"])
    assert rec.selection is not None
    if rec.selection.fallback:
        assert rec.selection.choice.limit in ("defer", "fixed")
    else:
        assert recommended_on_nested_folds(rec) < baseline_on_nested_folds(rec, "default")


def test_the_figure_of_what_is_recommended():
    """A tune summary shows the recommendation's figure: the default's when it gave way."""
    from collsel.core.evaluate.recommendation import recommended_on_nested_folds
    nested = {"combined": NestedFigures(10.37, 10.37, 20.0)}
    assert recommended_on_nested_folds(recommendation_with(nested)) == 10.37
    fallen = Fallback("default", "exact", 10.37, 10.20, 0.1, ("launches",))
    assert recommended_on_nested_folds(recommendation_with(nested, fallback=fallen)) == 10.20
    assert recommended_on_nested_folds(Recommendation("combined", (), "no folds")) is None
