"""Out-of-sample penalties: a tree built on part of the data, scored on the rest.

A fold is (training table, held-out table). Three kinds:
- across launches: build on the mean of k-1 launches' per-launch tables (as the sweep combines
  them), score on the held-out launch's own times; one fold per launch;
- leave-one-P-out: build without the rows of one P, ask the tree at that P; one fold per
  held-out P (core.evaluate.fold_maps.held_out_positions: interior P only, the smallest and largest
  are not held out: that would be extrapolation);
- leave-one-m-out: the same for message sizes.

The tree is asked at the held-out cells by value, through its cuts (core.trees.tree.cells_of_values
and TreeArrays.leaf_of_cells, as `collsel query` and the emitted code decide). A choice is scored
by core.maps.cell_cost, the protocol `collsel evaluate` scores by: against the fastest forced method
measured at the held-out cell, "defer" at the default's time, on the cells where the default was
measured when the table has one. Beside the tree, on the same folds: the MPI's default (the
held-out algorithm-0 rows; nothing is built) and the best single fixed method chosen on the
training data (core.trees.pruning.best_fixed).

Every figure is pooled over the scored (cell, fold) pairs and carries their count (`cells`); a
choice not measured in its held-out cell is unscorable (core.maps.cell_cost.UNSCORABLE): not scored,
counted in `unmeasured_choices`.
"""
from dataclasses import dataclass, replace

import numpy as np

from collsel.core.maps import cell_cost, decision_map, table as tables, third_axis
from collsel.core.mpi import algorithms
from collsel.core.trees import penalty
from collsel.core.evaluate.fold_maps import FoldGrid, held_out_positions
from collsel.core.trees.pruning import best_fixed
from collsel.core.trees.tree import cells_of_values

DEFAULT_SETTINGS = decision_map.MapSettings()
KINDS = ("launches", "leave_one_P_out", "leave_one_m_out")
LABELS = {"launches": "cross-validated across launches", "leave_one_P_out": "leave-one-P-out",
          "leave_one_m_out": "leave-one-m-out"}


@dataclass
class Fold:
    name: str
    train: object      # DecisionMap
    test: object       # DecisionMap
    has_default: bool = True   # the whole table has a default: only its cells count


def mean_table(parts):
    """One table from per-launch tables: each point's time is the mean of its launches' times
    (rows in the order their points first appear; sums in launch order)."""
    key_index = {}
    point = np.fromiter((key_index.setdefault(key, len(key_index))
                         for part in parts for key in tables.point_keys(part)), dtype=np.int64)
    rows = _concatenate(parts)
    first = np.unique(point, return_index=True)[1]   # point ids count up in first-seen order
    out = rows.take(first)
    out.time_us = (np.bincount(point, weights=rows.time_us.astype(np.float64))
                   / np.bincount(point))
    return out


def _concatenate(parts):
    """Rows of tables with the same columns, without core.maps.table.combine's duplicate check (the
    same point in two launches has two times by nature)."""
    cat = lambda attr: np.concatenate([getattr(p, attr) for p in parts])  # noqa: E731
    return tables.PerfTable(cat("collective"), cat("comm_size"), cat("msg_size"),
                            cat("algorithm"), cat("segsize"), cat("faninout"), cat("time_us"),
                            {k: np.concatenate([p.extra[k] for p in parts])
                             for k in parts[0].extra},
                            sum((p.origin for p in parts), []), parts[0].sources)


def _fold(name, train, test, settings, pool=False, has_default=True):
    """A fold's two maps, or None when either side has no candidate to build or score. With
    `pool`, the training map is the z-oblivious one (core.maps.third_axis.pooled over settings.z,
    2-D) and is asked at the held-out cells' (P, m) whatever their z."""
    cand = lambda t: (t.algorithm != algorithms.BASELINE_ALGORITHM).any()  # noqa: E731
    if not len(train) or not len(test) or not cand(train) or not cand(test):
        return None
    if pool:
        return Fold(name, replace(settings, z=None).build(third_axis.pooled(train, settings.z)),
                    settings.build(test), has_default)
    return Fold(name, settings.build(train), settings.build(test), has_default)


def leave_one_out_folds(table, column, settings=DEFAULT_SETTINGS, pool=False):
    """One fold per held-out value of `column` (comm_size or msg_size) among the candidates
    (core.evaluate.fold_maps.held_out_positions: interior values only; a tree built without the
    smallest or largest would be asked beyond its data, which measures extrapolation, not how well
    it generalises between measured points)."""
    values = getattr(table, column)
    base = table.algorithm == algorithms.BASELINE_ALGORITHM
    known = sorted(set(values[~base].tolist()))
    has_default = bool(base.any())
    scorable = np.isin(known, values[base]) if has_default else None
    held = [known[i] for i in held_out_positions(len(known), scorable)]
    folds = (_fold(f"{column}={v}", table.take(values != v), table.take(values == v), settings,
                   pool, has_default) for v in held)
    return [f for f in folds if f is not None]


def launch_folds(launch_tables, settings=DEFAULT_SETTINGS, pool=False):
    """One fold per launch: trained on the mean of the others, scored on it."""
    if len(launch_tables) < 2:
        return []
    has_default = any(bool((t.algorithm == algorithms.BASELINE_ALGORITHM).any())
                      for t in launch_tables.values())
    folds = (_fold(f"launch={k}", mean_table([t for j, t in sorted(launch_tables.items())
                                               if j != k]), launch_tables[k], settings, pool,
                   has_default)
             for k in sorted(launch_tables))
    return [f for f in folds if f is not None]


def all_folds(table, launch_tables=None, settings=DEFAULT_SETTINGS, pool=False, dmap=None):
    """{kind: [Fold]} for the three kinds (launches only with 2+ launches). `pool`: the same
    folds with z-oblivious training maps (settings must have a z). With `dmap` (the table's
    map) and no `pool`, the maps are slices of it (core.evaluate.fold_maps: no table rebuilt)."""
    if dmap is not None and not pool:
        grid = FoldGrid(dmap, launch_tables, settings)
        names = {"launches": "launch", "P": "comm_size", "m": "msg_size"}
        out = {}
        for kind, key in (("launches", "launches"), ("leave_one_P_out", "P"),
                          ("leave_one_m_out", "m")):
            removals = grid.folds(key)
            out[kind] = [Fold(f"{names[key]}=" + ",".join(
                str(k if key == "launches" else dmap.axes[0 if key == "P" else 1].values[k])
                for _, k in r), grid.training(r), grid.held_map(r), grid.has_default)
                for r in removals]
        return out
    return {"launches": launch_folds(launch_tables or {}, settings, pool),
            "leave_one_P_out": leave_one_out_folds(table, "comm_size", settings, pool),
            "leave_one_m_out": leave_one_out_folds(table, "msg_size", settings, pool)}


def held_out_cells(fold):
    """Cell index on the training map's axes of every measured held-out cell, the held-out
    cells themselves (flat indexes), and a mask of those a category axis cannot place."""
    test = fold.test
    flat = np.flatnonzero(test.measured.reshape(-1))
    grid = np.unravel_index(flat, test.shape)
    query, placed = [], np.ones(flat.size, dtype=bool)
    # a z-oblivious (2-D) training map is asked on the held-out axes it has: P and m
    for d, (a, b) in enumerate(zip(fold.train.axes, test.axes[:len(fold.train.axes)])):
        if a.kind == decision_map.CATEGORY:
            index = {lab: i for i, lab in enumerate(a.labels)}
            v = np.array([index.get(b.labels[c], -1) for c in grid[d]], dtype=np.int64)
            placed &= v >= 0
            query.append(np.maximum(v, 0))
        else:
            query.append(np.asarray(b.values, dtype=a.dtype)[grid[d]])
    return cells_of_values(fold.train.axes, query), flat, placed


def _held_out(fold):
    """held_out_cells, plus each training method's index among the held-out map's methods
    (-1 where that map lacks it)."""
    cells, flat, placed = held_out_cells(fold)
    to_test = {m: i for i, m in enumerate(fold.test.methods)}
    lookup = np.array([to_test.get(m, -1) for m in fold.train.methods], dtype=np.int64)
    return cells, flat, placed, lookup


def _choices(t, cells, placed, lookup):
    """Tree t's choice on the held-out cells as an index of the held-out map's methods, -1 where
    that map lacks the method or cannot place the cell."""
    return np.where(placed, lookup[t.method[t.leaf_of_cells(cells)]], -1)


def fold_times(fold, trees):
    """On a fold's held-out cells: the time of each tree's choice (list of arrays; a tree, or
    (tree, map) for a tree built on another map than the fold's training one), the
    reference (core.maps.cell_cost: the fastest forced method; NaN on the cells a figure does not
    count, so penalty.score skips them), the MPI's default's and the training set's best fixed
    method's."""
    test = fold.test
    cells, flat, placed, lookup = _held_out(fold)
    times = test.times.reshape(-1, len(test.methods))[flat]
    time_of = lambda test_method: _time_of(times, test_method)  # noqa: E731
    chosen = []
    for t in trees:
        # (tree, the map it was built on: an interpolated one), asked on that map's cells
        t, on = t if isinstance(t, tuple) else (t, fold.train)
        asked = ((cells, flat, placed, lookup) if on is fold.train
                 else _held_out(replace(fold, train=on)))
        chosen.append(time_of(_choices(t, asked[0], *asked[2:])))
    fixed = best_fixed(fold.train)
    base = test.baseline_time.reshape(-1)[flat]
    return (chosen, _counted_reference(times, base, test.defer_index, fold.has_default), base,
            time_of(np.where(placed, lookup[fixed], -1)))


def _counted_reference(times, base, defer_index, has_default):
    """The reference time of each held-out cell, NaN where the cell does not count
    (core.maps.cell_cost.scored_cells)."""
    reference = cell_cost.reference_time(times, defer_index)
    return np.where(cell_cost.scored_cells(True, base, has_default), reference, np.nan)


def _time_of(times, test_method):
    """Per held-out cell (a row of `times`), the time of the held-out map's method given by
    index; NaN where the index is -1."""
    got = times[np.arange(len(times)), np.maximum(test_method, 0)]
    return np.where(test_method >= 0, got, np.nan)


def deployed_times(loaded, test):
    """A deployed tree (core.trees.treefile.LoadedTree) asked at the measured cells of map `test` by
    value, as `collsel query` asks it (its cuts, `beyond` and the refusals): the time of its
    decision, "defer" at test's algorithm-0 time, then the best and the default's times, as
    fold_times gives them, and the cells' flat indexes."""
    fold = Fold("deployed", loaded, test)
    cells, flat, placed, lookup = _held_out(fold)
    at = np.unravel_index(flat, test.shape)
    decided = loaded.decide_cells(cells, np.asarray(test.axes[0].values)[at[0]],
                                  np.asarray(test.axes[1].values)[at[1]])
    times = test.times.reshape(-1, len(test.methods))[flat]
    base = test.baseline_time.reshape(-1)[flat]
    chosen = _time_of(times, np.where(placed, lookup[decided], -1))
    if loaded.defer_index is not None:
        chosen = np.where(placed & (decided == loaded.defer_index), base, chosen)
    return chosen, _counted_reference(times, base, test.defer_index, test.has_default), base, flat


def cross_table(fold, t):
    """Tree t of the training map used on the held-out map (e.g. two sweeps of one grid): the
    penalty figures of its choices, of Open MPI's default on the same cells, and how many of
    its choices lie in the held-out cell's tie set (`in_tie_set` of `cells`)."""
    cells, flat, placed, lookup = _held_out(fold)
    idx = _choices(t, cells, placed, lookup)
    test = fold.test
    times = test.times.reshape(-1, len(test.methods))[flat]
    rows = np.arange(flat.size)
    chosen = np.where(idx >= 0, times[rows, np.maximum(idx, 0)], np.nan)
    best = _counted_reference(times, test.baseline_time.reshape(-1)[flat], test.defer_index,
                              test.has_default)
    tied = test.tied.reshape(-1, len(test.methods))[flat][rows, np.maximum(idx, 0)] & (idx >= 0)
    figures = _summary(chosen, best)
    figures["in_tie_set"] = int(tied[np.isfinite(chosen) & np.isfinite(best)].sum())
    base = test.baseline_time.reshape(-1)[flat]
    return {"tree": figures,
            "tree_on_default_cells": _summary(np.where(np.isfinite(base), chosen, np.nan), best),
            "default": _summary(base, best)}


def _summary(chosen, best):
    s = penalty.score(chosen, best)
    return {k: s[k] for k in ("cells", "mean", "median", "max", "min")}


def evaluate(folds, make_trees):
    """Out-of-sample figures of the trees `make_trees(train_map)` (a list, the same length on
    every fold), Open MPI's default and the best fixed method, pooled over `folds`. Returns
    {"folds", "trees": [figures per tree], "default", "best_fixed"}; each tree's figures also
    hold `on_default_cells` (the tree on exactly the cells where the default is measured) and
    `unmeasured_choices`."""
    parts = [fold_times(f, make_trees(f.train)) for f in folds]
    if not parts:
        return None
    cat = lambda xs: np.concatenate(xs) if xs else np.zeros(0)  # noqa: E731
    best = cat([p[1] for p in parts])
    base = cat([p[2] for p in parts])
    n_trees = len(parts[0][0])
    fixed = cat([p[3] for p in parts])
    trees = []
    for k in range(n_trees):
        chosen = cat([p[0][k] for p in parts])
        figures = _summary(chosen, best)
        figures["on_default_cells"] = _summary(np.where(np.isfinite(base), chosen, np.nan), best)
        figures["unmeasured_choices"] = int((np.isfinite(best) & ~np.isfinite(chosen)).sum())
        figures["se_vs"] = {"default": _difference_se(chosen, base, best),
                            "best_fixed": _difference_se(chosen, fixed, best)}
        trees.append(figures)
    return {"folds": len(parts), "trees": trees, "default": _summary(base, best),
            "best_fixed": _summary(fixed, best)}


def _difference_se(chosen, other, best):
    """Standard error (points) of the mean per-cell penalty difference between two choices, over
    the cells where both are scored: how far apart two mean penalties must be before one choice
    is worse rather than the same one measured with noise (core.evaluate.verdict)."""
    both = np.isfinite(chosen) & np.isfinite(other) & np.isfinite(best)
    if both.sum() < 2:
        return 0.0
    diff = penalty.penalty_pct(chosen[both], best[both]) - penalty.penalty_pct(other[both],
                                                                               best[both])
    return float(diff.std(ddof=1) / np.sqrt(diff.size))


NESTED = "nested: each fold's tree is the one the recommendation picks on its training set"
REFIT = "the tree's configuration rebuilt on each fold's training set"


def tree_figures(folds_by_kind, build, per_fold=None):
    """stats.json's `out_of_sample` block for one way of building (`build(map)` -> TreeArrays):
    per kind, the tree's, the default's and the best fixed method's figures, or None.
    `per_fold` {kind: [builder per fold]} replaces `build` fold by fold where given (the
    recommendation's nested picks, core.evaluate.recommend.nested_builders); `how` says which."""
    out = {}
    for kind in KINDS:
        folds = folds_by_kind.get(kind) or []
        makers = (per_fold or {}).get(kind)
        if makers is not None and len(makers) != len(folds):
            raise ValueError(f"{kind}: {len(makers)} fold builders for {len(folds)} folds")
        order = iter(makers or ())      # evaluate asks each fold once, in order
        result = evaluate(folds, lambda m: [next(order)(m) if makers else build(m)])
        out[kind] = None if result is None else {
            "label": LABELS[kind], "folds": result["folds"], "tree": result["trees"][0],
            "default": result["default"], "best_fixed": result["best_fixed"],
            "how": NESTED if makers else REFIT}
    return out
