"""Cost-complexity pruning path (core.trees.pruning): CART's weakest link over TreeArrays."""
import dataclasses

import numpy as np
import pytest

from collsel.core.maps import decision_map, table
from collsel.core.trees import penalty, pruning, tree, treefile


@pytest.fixture(scope="module", params=["majority", "penalty"])
def setup(request, tanjaderin):
    dmap = decision_map.build_map(table.read_table(tanjaderin["reduce"]).select("reduce"))
    opts = tree.BuildOptions(leaf=request.param)
    at = lambda d: tree.build_tree(dmap, dataclasses.replace(opts, max_depth=d))  # noqa: E731
    full = at(None)
    return dmap, opts, full, pruning.pruning_path(dmap, full, at)


def test_path_runs_from_full_tree_to_root(setup):
    dmap, opts, full, path = setup
    assert path.leaves[0] == int(full.is_leaf().sum()) and path.leaves[-1] == 1
    assert all(a > b for a, b in zip(path.leaves, path.leaves[1:]))
    assert all(a <= b for a, b in zip(path.alphas, path.alphas[1:]))


def test_subtrees_are_valid_trees_scored_as_the_path_says(setup):
    dmap, opts, full, path = setup
    for k in range(len(path)):
        sub = path.subtree(k)
        stats = penalty.tree_stats(dmap, sub)
        assert stats["leaves"] == path.leaves[k]
        assert stats["penalty_mean"] == pytest.approx(path.in_sample[k], abs=1e-9)
        doc = treefile.tree_document(dmap, sub, opts)
        treefile.LoadedTree(doc, "t.json")     # the layout `collsel build` makes


def test_first_step_collapses_the_weakest_link(setup):
    """Brute force: collapse each internal node alone, score it; the least increase in mean
    penalty per leaf removed is the path's first positive alpha."""
    dmap, opts, full, path = setup
    base = penalty.tree_stats(dmap, full)["penalty_mean"]
    gs = []
    for node in np.flatnonzero(~full.is_leaf()):
        mask = np.zeros(full.node_count, bool)
        mask[node] = True
        sub = pruning.prune(full, mask, path.collapse)
        s = penalty.tree_stats(dmap, sub)
        gs.append((s["penalty_mean"] - base) / (full.is_leaf().sum() - s["leaves"]))
    assert path.alphas[1] == pytest.approx(max(0.0, min(gs)), abs=1e-9)
