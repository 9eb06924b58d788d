"""Out-of-sample folds as slices of one map, for choosing a tree (core.evaluate.model_selection) and
for the printed out-of-sample figures (core.evaluate.out_of_sample).

The table's map (P x m [x z] x methods) and every launch's times on the same grid are made once.
A training set is the map without some P or m indexes, or the mean of some launches (as the
sweep combines them), assembled by core.maps.decision_map.from_times: no table is rebuilt, so the
many training sets of cross-validation within cross-validation cost a slice each. A held-out
set is a cost matrix by core.maps.cell_cost, the one rule `collsel evaluate` scores by: the penalty
(%) of every method in every held-out cell against the fastest forced method measured there,
on the cells where the MPI's default was measured (when the table has a default at all), a
method not measured there costing the cell's worst measured penalty for selection (WORST) and
flagged `unscorable` for the figures (UNSCORABLE).

The folds are the protocol's (docs/guide/evaluate.md): one per interior value of P or m (the
smallest and largest are never held out: that is extrapolation), an evenly spaced subset of at
most MAX_FOLDS of them when there are more, always with the second and the second-to-last; one
per launch of the sweep's journal, at most MAX_FOLDS of them too.

A removal is a tuple of (kind, key) pairs: ("launches", k) drops launch k, ("P", i) and
("m", i) drop an index of that axis. The methods keep their indexes in every training map
("defer" is last, and a map without it just lacks the last one).
"""
from dataclasses import dataclass

import numpy as np

from collsel.core.maps import cell_cost, decision_map, zbins
from collsel.core.mpi.algorithms import BASELINE_ALGORITHM
from collsel.core.maps.decision_map import DEFER
from collsel.core.trees.tree import cells_of_values

AXIS = {"P": 0, "m": 1}
# held-out values per kind at most (evenly spaced): the protocol's subset. 6, not 8: the
# nesting makes a training set per pair of folds (79 instead of 116 on the 44-size bcast table,
# 2.4 s of CPU instead of 3.8), and build --recommend has 3 s.
MAX_FOLDS = 6


def held_out_positions(count, scorable=None, limit=MAX_FOLDS):
    """Which of `count` sorted values are held out one at a time: every interior one (with
    `scorable`, a bool per value, only those where some held-out cell would count), or an
    evenly spaced subset of `limit` of them always holding the first and the last."""
    interior = np.arange(1, count - 1)
    if scorable is not None:
        interior = interior[np.asarray(scorable, bool)[interior]]
    return interior[evenly_spaced(interior.size, limit)].tolist()


def evenly_spaced(count, limit):
    """Positions of an evenly spaced subset of at most `limit` of `count` items, the first and
    the last always among them (all of them when there are no more than `limit`)."""
    if count <= limit:
        return np.arange(count)
    return np.unique(np.round(np.linspace(0, count - 1, limit)).astype(int))


@dataclass
class HeldOut:
    query: list            # per axis, the held-out cells' values
    cost: np.ndarray       # (cells, methods) penalty %, unmeasured: the cell's worst (WORST)
    default: np.ndarray    # (cells,) penalty % of the MPI's default, NaN where not measured
    unscorable: np.ndarray  # (cells, methods) the method was not measured there (UNSCORABLE)

    def __len__(self):
        return self.cost.shape[0]


def _costs(times, base, defer_index, has_default):
    """The held-out costs of the cells a figure counts (core.maps.cell_cost.scored_cells, with a
    reference): (cells, methods) WORST costs, the default's penalty, the unscorable mask, and
    the grid mask of those cells."""
    reference = cell_cost.reference_time(times, defer_index)
    keep = cell_cost.scored_cells(np.isfinite(times).any(axis=-1), base, has_default) \
        & np.isfinite(reference)
    raw = cell_cost.method_costs(times[keep], defer_index, cell_cost.UNSCORABLE)
    cost = cell_cost.method_costs(times[keep], defer_index, cell_cost.WORST)
    default = cell_cost.penalty_pct(base[keep], reference[keep])
    return cost, default, ~np.isfinite(raw), keep


class FoldGrid:
    """The map, its launches on its grid, and the training and held-out sets of any fold."""

    def __init__(self, dmap, launch_tables=None, settings=decision_map.MapSettings()):
        self.dmap, self.tolerance = dmap, settings.tolerance
        self.interpolate = settings.interpolate
        self.defer = DEFER in dmap.methods
        self.has_default = dmap.has_default     # the whole table's: scored_cells of every fold
        self.launch_ids, self.launch_times, self.launch_base = [], None, None
        if launch_tables and len(launch_tables) >= 2 and not (settings.z and
                                                              zbins.binned(settings.z)):
            self._place_launches(launch_tables, settings.z)

    def _place_launches(self, launch_tables, z):
        dm = self.dmap
        index = {(m.algorithm, m.segsize, m.faninout): i for i, m in enumerate(dm.methods)}
        shape = dm.shape + (len(dm.methods),)
        times, bases, ids = [], [], []
        for k, t in sorted(launch_tables.items()):
            coords = decision_map.cells_of_rows(t, dm.axes, t.extra[z].tolist() if z else None)
            on = np.all([c >= 0 for c in coords], axis=0)
            base_row = t.algorithm == BASELINE_ALGORITHM
            keys = zip(t.algorithm.tolist(), t.segsize.tolist(), t.faninout.tolist())
            method = np.array([index.get(key, -1) for key in keys], dtype=np.int64)
            if self.defer:
                method[base_row] = dm.methods.index(DEFER)
            grid = np.full(shape, np.inf)
            rows = np.flatnonzero(on & (method >= 0))
            np.minimum.at(grid, tuple(c[rows] for c in coords) + (method[rows],), t.time_us[rows])
            base = np.full(dm.shape, np.inf)
            rows = np.flatnonzero(on & base_row)
            np.minimum.at(base, tuple(c[rows] for c in coords), t.time_us[rows])
            if np.isfinite(grid).any():
                times.append(np.where(np.isfinite(grid), grid, np.nan))
                bases.append(np.where(np.isfinite(base), base, np.nan))
                ids.append(k)
        if len(ids) >= 2:
            self.launch_ids, self.launch_times, self.launch_base = ids, np.stack(times), \
                np.stack(bases)

    # --- folds -------------------------------------------------------------------------
    def folds(self, kind, limit=MAX_FOLDS, without=()):
        """The removals of one kind's folds: one per launch (when 2+ are left; at most `limit`,
        evenly spaced with the first and the last); for P and m, one per held-out value
        (held_out_positions of the values with candidates: at most `limit`).
        `without`, a removal: the folds the data without its values would have (what a
        recommendation made on a fold's training set uses: core.evaluate.model_selection's
        nesting)."""
        if kind == "launches":
            left = [k for k in self.launch_ids if ("launches", k) not in without]
            if len(left) < 2:
                return []
            # capped like P and m: the nesting makes a training set per pair of folds, so a
            # refined sweep's 400 launches made 160,000 of them (a worker grew to 11.7 GB)
            return [(("launches", left[i]),) for i in evenly_spaced(len(left), limit)]
        axis = AXIS[kind]
        keep = np.ones(self.dmap.shape[:2], dtype=bool)
        for name, k in without:
            if name in AXIS:
                keep[(slice(None),) * AXIS[name] + (k,)] = False
        keep = keep.reshape(keep.shape + (1,) * (len(self.dmap.shape) - 2))
        # the values measured in the data without `without`: without a launch too, whose
        # cells may be all a value has (a replayed or refined sweep launches some P again)
        times, base = self._times({k for name, k in without if name == "launches"})
        cand = times[..., :len(self.dmap.methods) - self.defer]
        measured = np.isfinite(cand).any(axis=-1) & keep
        other = tuple(d for d in range(measured.ndim) if d != axis)
        present = np.flatnonzero(measured.any(axis=other))
        scorable = None
        if self.has_default:
            counted = np.isfinite(base) & measured
            scorable = counted.any(axis=other)[present]
        return [((kind, int(present[i])),)
                for i in held_out_positions(present.size, scorable, limit)]

    def edge_fold(self):
        """The removal of the largest P with candidates (asked from a map built without it)."""
        cand = self.dmap.times[..., :len(self.dmap.methods) - self.defer]
        present = np.flatnonzero(np.isfinite(cand).any(axis=tuple(range(1, cand.ndim))))
        return (("P", int(present[-1])),) if present.size >= 2 else None

    # --- training and held-out sets ----------------------------------------------------
    def _times(self, launches_out):
        if not launches_out:
            return self.dmap.times, self.dmap.baseline_time
        keep = [i for i, k in enumerate(self.launch_ids) if k not in launches_out]
        return _mean(self.launch_times[keep]), _mean(self.launch_base[keep])

    def training(self, removal, defer=True):
        """The training map of a removal (core.maps.decision_map.from_times; "defer" dropped when
        `defer` is off)."""
        launches_out = {k for kind, k in removal if kind == "launches"}
        times, base = self._times(launches_out)
        drop = {name: [k for kind, k in removal if kind == name] for name in AXIS}
        out = self._assemble(times, base, None if launches_out else self.dmap.tied, drop, defer)
        # mapped as the whole table is: _assemble keeps the measured values alone
        return decision_map.interpolated_map(out) if self.interpolate else out

    def held_map(self, removal):
        """The map of a fold's held-out cells alone (a launch's own, or the removed indexes)."""
        dm = self.dmap
        launches = [k for kind, k in removal if kind == "launches"]
        if launches:
            i = self.launch_ids.index(launches[0])
            return self._assemble(self.launch_times[i], self.launch_base[i], None, {}, True)
        drop = {}
        for name, axis in AXIS.items():
            held = [k for kind, k in removal if kind == name]
            drop[name] = [i for i in range(dm.shape[axis]) if held and i not in held]
        return self._assemble(dm.times, dm.baseline_time, dm.tied, drop, True)

    def _assemble(self, times, base, tied, drop, defer):
        dm = self.dmap
        n_methods = len(dm.methods) - (self.defer and not defer)
        times = times[..., :n_methods]
        tied = None if tied is None else tied[..., :n_methods]
        keep = []
        for name, axis in AXIS.items():
            other = tuple(d for d in range(times.ndim - 1) if d != axis)
            alive = np.isfinite(times).any(axis=other + (times.ndim - 1,))
            alive[drop.get(name, [])] = False
            keep.append(np.flatnonzero(alive))
        cut = np.ix_(*keep, *[np.arange(n) for n in dm.shape[2:]])
        axes = [decision_map.make_axis(a.name, a.kind, [a.values[i] for i in k])
                for a, k in zip(dm.axes, keep)] + list(dm.axes[2:])
        return decision_map.from_times(dm.collective, axes, dm.methods[:n_methods], times[cut],
                                       base[cut], dm.family, self.tolerance,
                                       tied=None if tied is None else tied[cut])

    def held_out(self, removal, excluding=()):
        """The held-out cells of a fold: a launch's own times, or the map's at the removed
        indexes. `excluding`, an outer fold's removal: its cells are left out, and with a
        launch held out there, the map's times are the other launches' mean (an inner fold of
        a nested cross-validation sees nothing of the outer held-out data)."""
        dm = self.dmap
        launches = [k for kind, k in removal if kind == "launches"]
        if launches:
            i = self.launch_ids.index(launches[0])
            times, base = self.launch_times[i], self.launch_base[i]
            mask = np.ones(dm.shape, dtype=bool)
        else:
            times, base = self._times({k for kind, k in excluding if kind == "launches"})
            mask = np.zeros(dm.shape, dtype=bool)
            for kind, k in removal:
                index = [slice(None)] * len(dm.shape)
                index[AXIS[kind]] = k
                mask[tuple(index)] = True
        for kind, k in excluding:
            if kind in AXIS:
                index = [slice(None)] * len(dm.shape)
                index[AXIS[kind]] = k
                mask[tuple(index)] = False
        cost, default, unscorable, kept = _costs(np.where(mask[..., None], times, np.nan),
                                                 np.where(mask, base, np.nan), dm.defer_index,
                                                 self.has_default)
        cells = np.nonzero(kept)
        query = [np.asarray(a.values, dtype=a.dtype)[c] for a, c in zip(dm.axes, cells)]
        return HeldOut(query, cost, default, unscorable)


def _mean(stack):
    """Mean over the first axis of the finite values; NaN where none is."""
    finite = np.isfinite(stack)
    count = finite.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, np.where(finite, stack, 0.0).sum(axis=0) / count, np.nan)


def query_cells(train, held):
    """The held-out cells' cell indexes on a training map's axes."""
    return cells_of_values(train.axes, held.query)
