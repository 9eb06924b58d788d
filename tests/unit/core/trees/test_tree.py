"""TreeArrays invariants, limits and leaf rules on small hand-made maps."""
import numpy as np
import pytest

from collsel.core.maps import decision_map, table
from collsel.core.trees import penalty, tree
from collsel.core.mpi.algorithms import Method


def dmap_from_grid(colors, times=None):
    """A DecisionMap for a colour grid: the colour's method is fastest, others 50 % slower."""
    colors = np.asarray(colors)
    n_methods = int(colors.max()) + 1
    if times is None:
        times = np.full(colors.shape + (n_methods,), 1.5)
        np.put_along_axis(times, colors[..., None], 1.0, axis=-1)
    axes = [decision_map.make_axis("comm_size", decision_map.LINEAR, range(2, 2 + colors.shape[0])),
            decision_map.make_axis("msg_size", decision_map.LOG2,
                                   [2**k for k in range(colors.shape[1])])]
    methods = [Method(a, 0, 0) for a in range(1, n_methods + 1)]
    measured = np.isfinite(times).any(-1)
    finite = np.where(np.isfinite(times), times, np.inf)    # an unmeasured cell: no warning
    return decision_map.DecisionMap("bcast", axes, methods, times, measured, finite.argmin(-1),
                                    np.where(measured, finite.min(-1), np.nan),
                                    np.full(colors.shape, np.nan))


def check_invariants(t):
    internal = np.flatnonzero(t.first_child != tree.LEAF)
    assert t.depth[0] == 0
    n_children = 1 << (t.split[internal] != tree.UNDEFINED).sum(1)
    assert np.all(t.first_child[internal] > internal)
    # children contiguous, each node the child of exactly one parent
    child_ids = np.concatenate([np.arange(f, f + n) for f, n in
                                zip(t.first_child[internal], n_children)] + [[]])
    assert sorted(child_ids.tolist()) == list(range(1, t.node_count))
    leaves = t.first_child == tree.LEAF
    assert np.all(t.method[leaves] >= 0) and np.all(t.method[~leaves] == tree.UNDEFINED)


@pytest.mark.parametrize("split", tree.SPLITS)
@pytest.mark.parametrize("shape", [(1, 1), (1, 7), (5, 3), (8, 8), (13, 29)])
def test_exact_tree_reproduces_random_maps(split, shape):
    rng = np.random.default_rng(sum(shape))
    colors = rng.integers(0, 4, shape)
    dm = dmap_from_grid(colors)
    t = tree.build_tree(dm, tree.BuildOptions(split=split))
    check_invariants(t)
    choice, _ = penalty.cell_choices(dm, t)
    assert np.array_equal(choice, colors)


def test_uniform_map_is_one_leaf():
    t = tree.build_tree(dmap_from_grid(np.zeros((6, 9), int)))
    assert t.node_count == 1 and t.method[0] == 0


def test_depth_limit_and_majority():
    colors = np.zeros((4, 4), int)
    colors[0, 0] = 1          # one odd cell in the NW quadrant
    dm = dmap_from_grid(colors)
    t1 = tree.build_tree(dm, tree.BuildOptions(max_depth=1))
    assert t1.node_count == 5 and np.all(t1.method[1:] == 0)  # as built: 4 majority leaves
    t0 = tree.build_tree(dm, tree.BuildOptions(max_depth=0))
    assert t0.node_count == 1 and t0.method[0] == 0
    exact = tree.build_tree(dm)
    assert exact.depth.max() == 2 and penalty.tree_stats(dm, exact)["penalty_max"] == 0
    s = penalty.tree_stats(dm, t0)
    assert s["penalty_max"] == pytest.approx(50.0) and s["penalty_mean"] == pytest.approx(50 / 16)


def test_threshold_stops_at_share():
    colors = np.zeros((4, 4), int)
    colors[3, 3] = 1
    dm = dmap_from_grid(colors)
    assert tree.build_tree(dm, tree.BuildOptions(threshold=90)).node_count == 1   # 15/16 >= 90 %
    assert tree.build_tree(dm, tree.BuildOptions(threshold=95)).node_count > 1    # 15/16 < 95 %


def test_penalty_leaf_rule_prefers_cheaper_method():
    # 3 cells prefer method 0 by a hair, 1 cell prefers method 1 by a mile
    times = np.array([[[1.0, 1.01], [1.0, 1.01]], [[1.0, 1.01], [10.0, 1.0]]])
    dm = dmap_from_grid(np.argmin(times, -1), times)
    maj = tree.build_tree(dm, tree.BuildOptions(max_depth=0, leaf="majority"))
    pen = tree.build_tree(dm, tree.BuildOptions(max_depth=0, leaf="penalty"))
    assert maj.method[0] == 0 and pen.method[0] == 1


def test_penalty_rule_scores_missing_methods_at_imputed_times():
    # method 1 lacks cell (0, 1): imputed from its neighbour (0.5), scored at that cell's best
    # (an estimate is never credited with beating a measurement), so it costs nothing there
    times = np.array([[[1.0, 0.5], [1.0, np.nan]]])
    dm = dmap_from_grid(np.argmin(np.nan_to_num(times, nan=9), -1), times)
    pen = tree.build_tree(dm, tree.BuildOptions(max_depth=0, leaf="penalty"))
    assert pen.method[0] == 1
    stats = penalty.tree_stats(dm, pen)
    assert stats["imputed_choices"] == 1 and stats["partial_cells"] == 1
    assert stats["penalty_max"] == stats["penalty_min"] == 0 and stats["scored_cells"] == 2


def test_unmeasured_choice_is_counted_not_scored():
    times = np.array([[[1.0, np.nan], [2.0, 1.0]], [[1.0, 3.0], [2.0, 1.0]]])
    dm = dmap_from_grid(np.argmin(np.nan_to_num(times, nan=9), -1), times)
    t = tree.build_tree(dm, tree.BuildOptions(max_depth=0))
    stats = penalty.tree_stats(dm, t)
    chosen = t.method[0]
    assert stats["unmeasured_choices"] == (1 if chosen == 1 else 0)


def test_missing_cells_are_filled_and_flagged(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("collective,comm_size,msg_size,algorithm,segsize,time_us\n"
                    "bcast,2,1,1,0,1\nbcast,2,1,6,0,2\nbcast,8,1024,6,0,1\n"
                    "bcast,2,1024,1,0,5\nbcast,2,1024,6,0,1\n")
    dm = decision_map.build_map(table.read_table(path))
    assert dm.shape == (2, 2) and dm.measured.sum() == 3 and not dm.measured[1, 0]
    stats = penalty.tree_stats(dm, tree.build_tree(dm))
    assert stats["filled_cells"] == 1 and stats["measured_cells"] == 3


def test_cuts_are_midpoints_and_edges_extend():
    ax = decision_map.make_axis("msg_size", decision_map.LOG2, [0, 4, 16, 1024])
    assert ax.cuts == [1, 9, 129]           # geometric means 0, 8, 128; the midpoint goes low
    assert [ax.cell_of(v) for v in (0, 1, 8, 9, 128, 129, 2**64 - 1)] == [0, 1, 1, 2, 2, 3, 3]
    ax = decision_map.make_axis("comm_size", decision_map.LINEAR, [2, 4, 7])
    assert ax.cuts == [4, 6] and ax.cell_of(1) == 0 and ax.cell_of(5) == 1
