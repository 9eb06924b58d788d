"""Robust decisions on the map and tree: tie sets from each source, the robust leaf under a cap,
"defer to the MPI" as a candidate, tie-aware exact trees, and no dropped cells on sparse tables."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from collsel.core.maps import decision_map, table, ties
from collsel.core.trees import penalty, tree, treefile
from collsel.core.mpi.algorithms import Method
from collsel.errors import InputError
from helpers import tanjaderin_table
from test_tree import dmap_from_grid

HEADER = "collective,comm_size,msg_size,algorithm,segsize,time_us"


def write(tmp_path, rows, extra=(), name="t.csv"):
    path = tmp_path / name
    path.write_text(",".join((HEADER,) + tuple(extra)) + "\n"
                    + "".join(",".join(map(str, r)) + "\n" for r in rows))
    return table.read_table(path)


def bcast(p, m, alg, t, *extra):
    return ("bcast", p, m, alg, 0, t) + extra


# --- tie sets --------------------------------------------------------------------------------

def test_tied_column_wins_over_ci_and_confidence_is_largest_p_best(tmp_path):
    t = write(tmp_path, [bcast(2, 8, 1, 10.0, 1, 5.0, 0.7), bcast(2, 8, 6, 11.0, 0, 5.0, 0.2),
                         bcast(2, 8, 3, 30.0, "", 0.1, 0.1)],
              ("tied", "ci_halfwidth_us", "p_best"))
    dm = decision_map.build_map(t)
    names = [m.algorithm for m in dm.methods]
    tied = dict(zip(names, dm.tied[0, 0].tolist()))
    # alg 6: the column says 0 although the CIs overlap; alg 3: no verdict, CIs apart
    assert tied == {1: True, 3: False, 6: False}
    assert dm.confidence[0, 0] == pytest.approx(0.7)


def test_ci_overlap_ties(tmp_path):
    t = write(tmp_path, [bcast(2, 8, 1, 10.0, 1.0), bcast(2, 8, 6, 11.5, 0.5),
                         bcast(2, 8, 3, 11.6, 0.5)], ("ci_halfwidth_us",))
    dm = decision_map.build_map(t)
    # 11.5 - 0.5 <= 10 + 1 is tied; 11.6 - 0.5 > 11 is not
    assert dict(zip([m.algorithm for m in dm.methods], dm.tied[0, 0].tolist())) == {
        1: True, 3: False, 6: True}
    assert np.isnan(dm.confidence).all()


def test_tolerance_ties_and_union(tmp_path):
    rows = [bcast(2, 8, 1, 10.0, 0.0), bcast(2, 8, 6, 10.4, 0.0), bcast(2, 8, 3, 10.6, 1.0)]
    t = write(tmp_path, rows, ("ci_halfwidth_us",))
    tied = lambda dm: dict(zip([m.algorithm for m in dm.methods],  # noqa: E731
                               dm.tied[0, 0].tolist()))
    assert tied(decision_map.build_map(t)) == {1: True, 3: True, 6: False}   # the CI tie only
    assert tied(decision_map.build_map(t, tolerance=5)) == {1: True, 3: True, 6: True}  # union
    assert tied(decision_map.build_map(t, tolerance=3)) == {1: True, 3: True, 6: False}


def test_no_tie_source_means_the_best_only(tmp_path):
    t = write(tmp_path, [bcast(2, 8, 1, 10.0), bcast(2, 8, 6, 10.0), bcast(4, 8, 1, 3.0)])
    dm = decision_map.build_map(t)
    assert dm.tied[0, 0].tolist() == [True, False]                 # equal times, lowest index
    assert dm.tied[1, 0].tolist() == [True, False]


def test_bad_tied_value_is_located(tmp_path):
    t = write(tmp_path, [bcast(2, 8, 1, 10.0, "yes")], ("tied",))
    with pytest.raises(InputError, match=r"t\.csv:2: tied 'yes'"):
        decision_map.build_map(t)


# --- robust leaf and cap ---------------------------------------------------------------------

def capped_map(tmp_path):
    """Alg 1 is best on three cells and 60 % slower on the fourth; alg 6 is 2 % slower on those
    three and best on the fourth: majority says 1, mean penalty 6 (1.5 % against 15 %)."""
    rows = []
    for p, m, t1, t6 in ((2, 1, 1.0, 1.02), (2, 4, 1.0, 1.02), (4, 1, 1.0, 1.02), (4, 4, 1.6, 1.0)):
        rows += [bcast(p, m, 1, t1), bcast(p, m, 6, t6)]
    return decision_map.build_map(write(tmp_path, rows))


def test_robust_leaf_is_least_mean_penalty_and_respects_cap(tmp_path):
    dm = capped_map(tmp_path)
    mean = {m.algorithm: float(np.mean(dm.times[..., i] / dm.best_time - 1))
            for i, m in enumerate(dm.methods)}
    assert mean[6] < mean[1]                                       # 1.5 % vs 15 %
    free = tree.build_tree(dm, tree.BuildOptions(leaf="robust", max_depth=0))
    assert dm.methods[free.method[0]].algorithm == 6
    maj = tree.build_tree(dm, tree.BuildOptions(leaf="majority", max_depth=0))
    assert dm.methods[maj.method[0]].algorithm == 1
    # cap 1 %: neither method meets it on the root block -> split; at depth 1 every leaf does
    capped = tree.build_tree(dm, tree.BuildOptions(leaf="robust", max_penalty=1, max_depth=1))
    assert capped.node_count == 5
    assert penalty.tree_stats(dm, capped, max_penalty=1)["cells_over_cap"] == 0
    # at the depth limit the cap cannot be met: the least worst-cell penalty (6: 2 % < 60 %)
    forced = tree.build_tree(dm, tree.BuildOptions(leaf="robust", max_penalty=1, max_depth=0))
    stats = penalty.tree_stats(dm, forced, max_penalty=1)
    assert dm.methods[forced.method[0]].algorithm == 6
    assert stats["cells_over_cap"] == 3 and stats["leaves_over_cap"] == 1


def test_cap_decides_between_methods(tmp_path):
    # alg 1: 0 % on three cells, 12 % on one (mean 3 %); alg 6: 5 % on those three (3.75 %)
    rows = []
    cells = ((2, 1, 1.0, 1.05), (2, 4, 1.0, 1.05), (4, 1, 1.0, 1.05), (4, 4, 1.12, 1.0))
    for p, m, t1, t6 in cells:
        rows += [bcast(p, m, 1, t1), bcast(p, m, 6, t6)]
    dm = decision_map.build_map(write(tmp_path, rows))
    pick = lambda **kw: dm.methods[tree.build_tree(dm, tree.BuildOptions(  # noqa: E731
        leaf="robust", max_depth=0, **kw)).method[0]].algorithm
    assert pick() == 1                                   # least mean
    assert pick(max_penalty=10) == 6 and pick(max_penalty=13) == 1


def test_max_penalty_needs_robust():
    with pytest.raises(InputError, match="--leaf robust"):
        tree.BuildOptions(leaf="penalty", max_penalty=5).check()


# --- defer -----------------------------------------------------------------------------------

def defer_table(tmp_path):
    """Baseline measured at P = 2 only, where it is fastest; alg 6 best elsewhere."""
    rows = []
    for p in (2, 4, 8, 16):
        for m in (1, 64, 4096):
            rows += [bcast(p, m, 1, 10.0), bcast(p, m, 6, 5.0 + p)]
            if p == 2:
                rows.append(bcast(p, m, 0, 2.0))
    return write(tmp_path, rows)


def test_defer_is_last_method_and_chosen_only_where_measured(tmp_path):
    dm = decision_map.build_map(defer_table(tmp_path))
    assert dm.methods[-1] == Method(0, 0, 0) and dm.defer_index == 2
    assert dm.methods[:2] == decision_map.build_map(defer_table(tmp_path), defer=False).methods
    assert (dm.best[0] == 2).all() and (dm.best[1:] != 2).all()
    exact = tree.build_tree(dm)
    choice = exact.method_grid(dm.shape)
    assert np.array_equal(choice == 2, np.isfinite(dm.baseline_time))
    assert penalty.tree_stats(dm, exact)["penalty_max"] == 0
    for leaf in tree.LEAF_RULES:       # one leaf: defer is the majority, but not measured at P > 2
        root = tree.build_tree(dm, tree.BuildOptions(leaf=leaf, max_depth=0))
        assert root.method[0] != 2
        stats = penalty.tree_stats(dm, root)
        assert stats["unscored_cells"] == 0 and stats["scored_cells"] == 12
    assert penalty.baseline_stats(dm)["baseline_missing_cells"] == 9


def test_no_defer_and_tables_without_baseline_are_unchanged(tmp_path):
    dm = decision_map.build_map(defer_table(tmp_path), defer=False)
    assert dm.defer_index is None and len(dm.methods) == 2
    rows = [bcast(p, m, a, t) for p in (2, 4) for m in (1, 8)
            for a, t in ((1, 3.0 + p), (6, 2.0 + m))]
    plain = decision_map.build_map(write(tmp_path, rows, name="plain.csv"))
    assert plain.defer_index is None and not plain.imputed.any()


def test_defer_leaf_round_trips_through_tree_json(tmp_path):
    dm = decision_map.build_map(defer_table(tmp_path))
    opts = tree.BuildOptions()
    t = tree.build_tree(dm, opts)
    loaded = treefile.LoadedTree(treefile.tree_document(dm, t, opts), "tree.json")
    assert loaded.methods == dm.methods
    assert np.array_equal(loaded.tree.method, t.method)
    assert loaded.decide([[2, 4, 16], [64, 64, 64]]).tolist() == [2, 1, 0]


@pytest.mark.parametrize("opts", [tree.BuildOptions(ties=True),
                                  tree.BuildOptions(leaf="robust", max_penalty=10, max_depth=3)])
def test_tie_and_capped_trees_round_trip_through_tree_json(trieste, opts):
    dm = decision_map.build_map(trieste["bcast"], tolerance=5)
    t = tree.build_tree(dm, opts)
    loaded = treefile.LoadedTree(treefile.tree_document(dm, t, opts), "tree.json")
    assert np.array_equal(loaded.tree.method, t.method)
    assert np.array_equal(loaded.tree.split, t.split)


# --- tie-aware exact tree --------------------------------------------------------------------

@pytest.fixture(scope="module")
def trieste(tmp_path_factory):
    d = tmp_path_factory.mktemp("trieste")
    return {c: table.read_table(tanjaderin_table(c, d)) for c in ("bcast", "reduce")}


@pytest.mark.parametrize("collective", ["bcast", "reduce"])
@pytest.mark.parametrize("split", tree.SPLITS)
def test_tie_aware_exact_tree_is_smaller_and_within_tolerance(trieste, collective, split):
    dm = decision_map.build_map(trieste[collective], tolerance=5)
    exact = tree.build_tree(dm, tree.BuildOptions(split=split))
    tied = tree.build_tree(dm, tree.BuildOptions(split=split, ties=True))
    s_exact, s_tied = penalty.tree_stats(dm, exact), penalty.tree_stats(dm, tied)
    print(f"\n{collective} {split}: exact {s_exact['nodes']} nodes/{s_exact['leaves']} leaves, "
          f"tie-aware exact (5 %) {s_tied['nodes']} nodes/{s_tied['leaves']} leaves, "
          f"penalty mean {s_tied['penalty_mean']:.3f}% max {s_tied['penalty_max']:.2f}%")
    assert s_exact["penalty_max"] == 0
    assert s_tied["nodes"] < s_exact["nodes"]
    assert s_tied["penalty_max"] <= 5 + 1e-9     # every cell's choice is in its tie set
    choice = tied.method_grid(dm.shape)
    assert np.take_along_axis(dm.tied, choice[..., None], -1)[dm.measured].all()


# --- sparse table: no dropped cells ----------------------------------------------------------

def sparse_trieste(trieste, deleted):
    """The Trieste bcast table without three of its methods (algorithm ids `deleted`) at every
    odd P (the 2nd, 4th, ... comm size: 4, 16, 64, 256)."""
    t = trieste["bcast"]
    odd = np.isin(t.comm_size, sorted(set(t.comm_size.tolist()))[1::2])
    return t.take(~(odd & np.isin(t.algorithm, deleted)))


@pytest.mark.parametrize("deleted,defer,cells,partial", [
    ((1, 3, 6), True, 160, 80),      # odd P: only Open MPI's default left
    ((1, 3, 6), False, 80, 0),       # ... and without defer nothing: those cells do not count
    ((0, 1, 3), True, 160, 80),      # odd P: only binomial left
    ((0, 1, 3), False, 160, 80)])
def test_sparse_table_scores_every_measured_cell(trieste, deleted, defer, cells, partial):
    dm = decision_map.build_map(sparse_trieste(trieste, deleted), defer=defer)
    assert dm.measured.sum() == cells
    base = penalty.baseline_stats(dm)
    print(f"\ndeleted {deleted} defer={defer}: {cells} measured cells, Open MPI default "
          f"{base['baseline_penalty_mean']:.2f}% on {base['baseline_cells']} cells")
    for depth in (1, 3, None):
        for leaf in tree.LEAF_RULES:
            t = tree.build_tree(dm, tree.BuildOptions(leaf=leaf, max_depth=depth))
            s = penalty.tree_stats(dm, t)
            print(f"  depth {depth} {leaf:8}: mean {s['penalty_mean']:.2f}% max "
                  f"{s['penalty_max']:.2f}% on {s['scored_cells']} cells, imputed choices "
                  f"{s['imputed_choices']}, partial cells {s['partial_cells']}, leaves "
                  f"{s['leaves']}")
            # a cell where no forced method was measured has no reference (core.maps.cell_cost):
            # counted as unscored, never dropped silently
            no_reference = int((dm.measured & ~np.isfinite(dm.reference_time)).sum())
            assert s["unscored_cells"] == no_reference
            assert s["scored_cells"] + no_reference == dm.measured.sum()
            assert s["partial_cells"] == partial
            scored = penalty.scored_time(dm, t.method_grid(dm.shape))
            assert np.isfinite(scored[dm.measured]).all()       # none dropped
            assert s["imputed_choices"] == int((dm.measured & ~np.isfinite(
                penalty.chosen_time(dm, t.method_grid(dm.shape)))).sum())


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 6), st.integers(1, 9), st.integers(1, 4), st.floats(0, 50),
       st.sampled_from([None, 0, 1, 2]), st.sampled_from(tree.SPLITS), st.integers(0, 2**32 - 1))
def test_robust_cap_holds_unless_depth_forbids(n_p, n_m, n_methods, cap, depth, split, seed):
    rng = np.random.default_rng(seed)
    times = rng.uniform(1.0, 3.0, (n_p, n_m, n_methods))
    times[rng.random(times.shape) < 0.3] = np.nan
    dm = dmap_from_grid(np.full((n_p, n_m), n_methods - 1), times)     # n_methods methods
    dm.best = np.argmin(np.nan_to_num(times, nan=np.inf), -1)
    dm.tied = ties.tie_sets(times, dm.best)
    t = tree.build_tree(dm, tree.BuildOptions(split=split, leaf="robust", max_penalty=cap,
                                              max_depth=depth))
    s = penalty.tree_stats(dm, t, max_penalty=cap)
    assert s["scored_cells"] == s["measured_cells"] and s["unscored_cells"] == 0
    pen = penalty.penalty_pct(penalty.scored_time(dm, t.method_grid(dm.shape)), dm.best_time)
    leaf = t.leaf_grid(dm.shape)
    over = dm.measured & (pen > cap)
    assert s["cells_over_cap"] == over.sum()
    assert np.all(t.depth[leaf[over]] == depth)           # only where the depth limit forced it


@pytest.mark.parametrize("bad", [0, -3, 1001, float("nan")])
def test_tolerance_out_of_range_is_refused(tmp_path, bad):
    with pytest.raises(InputError, match="--tolerance"):
        decision_map.build_map(write(tmp_path, [bcast(2, 8, 1, 1.0)]), tolerance=bad)
