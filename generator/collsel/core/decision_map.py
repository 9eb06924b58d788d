"""PerfTable -> DecisionMap: the fastest measured method per (P, m[, z]) cell.

Axes are the distinct measured values. Between two measured values the cut is at the midpoint
(P and numeric z linearly, m in log2 space, i.e. the geometric mean); a value exactly on the
midpoint belongs to the smaller cell. Beyond the measured range the edge cell extends, so every
P >= 1, m >= 0 (and every z) falls in some cell.

A method is (algorithm, segsize, faninout). A method not measured in a cell is no candidate there.
Ties go to the lowest method index (methods are sorted), so the map is deterministic. Cells where
no method was measured take the decision of the nearest measured cell (in index space) and are
flagged in `measured`; they never count in penalty statistics.
"""
import math
from dataclasses import dataclass

import numpy as np

from collsel.core import algorithms, values
from collsel.core.algorithms import Method, describe
from collsel.errors import InputError

LINEAR, LOG2, CATEGORY = "linear", "log2", "category"


@dataclass
class Axis:
    """One dimension of the map. `cuts[k-1]` is the smallest value that falls in cell k."""
    name: str
    kind: str
    values: list      # measured values (ints), ascending; for CATEGORY the indexes 0..n-1
    labels: list      # text of each value as it appears in the table
    cuts: list        # len(values) - 1 integer thresholds

    def cell_of(self, value):
        """Cell index of one value (strict `<` against the cuts, as the emitted C does)."""
        return int(np.searchsorted(np.asarray(self.cuts, dtype=object), value, side="right"))


def midpoint_cuts(values, kind):
    """Integer cut between consecutive measured values; the midpoint itself goes low."""
    cuts = []
    for a, b in zip(values[:-1], values[1:]):
        mid = math.isqrt(a * b) if kind == LOG2 else (a + b) // 2
        cuts.append(mid + 1)
    return cuts


def make_axis(name, kind, raw):
    """An axis from the values seen in the table (ints, or text labels for CATEGORY)."""
    if kind == CATEGORY:
        labels = list(dict.fromkeys(raw))   # ordered as given
        values = list(range(len(labels)))
    else:
        values = sorted({int(v) for v in raw})
        labels = [str(v) for v in values]
    return Axis(name, kind, values, labels, midpoint_cuts(values, kind))


@dataclass
class DecisionMap:
    collective: str
    axes: list            # Axis per dimension: comm_size, msg_size[, z]
    methods: list         # Method per index, sorted
    times: np.ndarray     # grid + (n_methods,), NaN where not measured
    measured: np.ndarray  # bool grid: some candidate was measured in the cell
    best: np.ndarray      # int grid: fastest method (filled cells: nearest measured cell's)
    best_time: np.ndarray  # float grid, NaN where not measured
    baseline_time: np.ndarray  # float grid: Open MPI's own decision (algorithm 0), NaN if absent

    @property
    def shape(self):
        return self.best.shape

    def method_names(self):
        return [describe(self.collective, m) for m in self.methods]


def z_axis(name, raw, origin=None):
    """A third axis: numeric when every value is an integer, else categories in table order.
    A numeric z must fit the int64_t emitted code compares it as (`origin[i]` names row i)."""
    try:
        numbers = [int(v) for v in raw]
    except ValueError:
        return make_axis(name, CATEGORY, raw)
    low, high = values.Z_VALUE
    for i, v in enumerate(numbers):
        if not low <= v <= high:
            where = f"{origin[i]}: " if origin else ""
            raise InputError(f"{where}{name} {v} out of range [{low}, {high}] (a numeric third "
                             "axis is a 64-bit integer)")
    return make_axis(name, LINEAR, raw)


def build_map(table, z_column=None):
    """The decision map of a table holding one collective."""
    collectives = set(table.collective.tolist())
    if len(collectives) != 1:
        raise InputError(f"a decision map needs one collective, got {sorted(collectives)}")
    collective = collectives.pop()
    baseline = table.algorithm == algorithms.BASELINE_ALGORITHM
    cand = ~baseline
    if not cand.any():
        files = ", ".join(s.path for s in table.sources) or collective
        raise InputError(f"{files}: {collective} has only baseline (algorithm 0) rows; nothing "
                         "to choose from (measure the algorithms too)")
    z_raw = table.column(z_column).tolist() if z_column else None
    axes = [make_axis("comm_size", LINEAR, table.comm_size[cand].tolist()),
            make_axis("msg_size", LOG2, table.msg_size[cand].tolist())]
    if z_column:
        rows = np.flatnonzero(cand)
        axes.append(z_axis(z_column, [z_raw[i] for i in rows], [table.origin[i] for i in rows]))

    keys = list(zip(table.algorithm.tolist(), table.segsize.tolist(), table.faninout.tolist()))
    methods = sorted({Method(*k) for k, c in zip(keys, cand) if c})
    method_index = {m: i for i, m in enumerate(methods)}
    shape = tuple(len(a.values) for a in axes)

    coords = _cells(table, axes, z_raw)
    on_grid = np.all([c >= 0 for c in coords], axis=0)
    times = np.full(shape + (len(methods),), np.nan)
    rows = np.flatnonzero(cand & on_grid)
    mi = np.array([method_index[Method(*keys[i])] for i in rows], dtype=np.int64)
    times[tuple(c[rows] for c in coords) + (mi,)] = table.time_us[rows]

    base = np.full(shape, np.inf)
    brows = np.flatnonzero(baseline & on_grid)
    np.minimum.at(base, tuple(c[brows] for c in coords), table.time_us[brows])
    base[np.isinf(base)] = np.nan

    measured = np.isfinite(times).any(axis=-1)
    filled_times = np.where(np.isfinite(times), times, np.inf)
    best = np.argmin(filled_times, axis=-1)   # first minimum: lowest method index wins ties
    best_time = np.where(measured, np.min(filled_times, axis=-1), np.nan)
    if not measured.all():
        from scipy import ndimage   # imported here: SciPy costs every command ~1 s to load
        nearest = ndimage.distance_transform_edt(~measured, return_distances=False,
                                                 return_indices=True)
        best = best[tuple(nearest)]
    return DecisionMap(collective, axes, methods, times, measured, best.astype(np.int64),
                       best_time, base)


def _cells(table, axes, z_raw):
    """Grid index of every row on each axis, -1 where the value is not an axis value."""
    raw = [table.comm_size.tolist(), table.msg_size.tolist()] + ([z_raw] if z_raw else [])
    out = []
    for axis, column in zip(axes, raw):
        if axis.kind == CATEGORY:
            lookup = {lab: i for i, lab in enumerate(axis.labels)}
        else:
            lookup = {v: i for i, v in enumerate(axis.values)}
            column = [int(v) for v in column]
        out.append(np.array([lookup.get(v, -1) for v in column], dtype=np.int64))
    return out
