"""PerfTable -> DecisionMap: the fastest measured method per (P, m[, z]) cell.

Axes are the distinct measured values. Between two measured values the cut is at the midpoint
(P and numeric z linearly, m in log2 space, i.e. the geometric mean); a value exactly on the
midpoint belongs to the smaller cell. A measured time as z (a column named *_us, e.g. probe_us)
is binned first (core.maps.zbins: a few quantile bins, the same midpoint rule between them). Beyond
the measured range the edge cell extends, so every P >= 1, m >= 0 (and every z) falls in some
cell.

A method is (algorithm, segsize, faninout). Methods are sorted; when the table has baseline
(algorithm 0) rows and `defer` is on (the default), "defer to the MPI" (Method(0, 0, 0), whose
times are the baseline's) is appended as the last method, so the indexes of the other methods do
not depend on it. A method not measured in a cell is no best candidate there. Ties go to the
lowest method index, so the map is deterministic (an explicit algorithm wins an exact tie with
"defer"). Cells where no method was measured take the decision of the nearest measured cell (in
index space) and are flagged in `measured`; they never count in penalty statistics.

Beside the measured `times`, the map carries `filled_times`: the same with the unmeasured pairs of
every method but "defer" estimated by core.maps.imputation (flagged in `imputed`), so leaf rules and
statistics can score any method on every measured cell; `candidates` counts the methods measured
per cell. `tied` is each cell's tie set and `confidence` its decision confidence (core.maps.ties).
"""
import math
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from collsel.core.io import values
from collsel.core.maps import cell_cost, imputation, interpolated, ties, zbins
from collsel.core.mpi import algorithms
from collsel.core.mpi.algorithms import Method, describe
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

    @property
    def dtype(self) -> type:
        """The integers this axis' values and cuts compare as: uint64 for message sizes (they
        reach 2^64 - 1), int64 for the others."""
        return np.uint64 if self.kind == LOG2 else np.int64

    def cells_of(self, values) -> np.ndarray:
        """Cell index of each of `values` (an int array of their shape): the number of cuts at
        or below the value, i.e. strict `<` against the cuts, as the emitted C does."""
        return np.searchsorted(np.asarray(self.cuts, dtype=self.dtype),
                               np.asarray(values, dtype=self.dtype), side="right")

    def cell_of(self, value) -> int:
        """Cell index of one value (cells_of)."""
        return int(self.cells_of(value))

    def most_measured(self, items):
        """The one of `items` (one per cell of this axis) that holds at the most measured
        values; ties: the one at the smallest value. What a target that cannot tell this axis'
        values apart writes for all of them."""
        counts = {}
        for cell in self.cells_of(self.values).tolist():
            item = items[cell]
            item = item.item() if isinstance(item, np.generic) else item
            counts[item] = counts.get(item, 0) + 1
        return max(counts, key=counts.get)


def midpoint_cuts(values, kind) -> list:
    """Integer cut between consecutive measured values; the midpoint itself goes low."""
    cuts = []
    for a, b in zip(values[:-1], values[1:]):
        mid = math.isqrt(a * b) if kind == LOG2 else (a + b) // 2
        cuts.append(mid + 1)
    return cuts


def make_axis(name, kind, raw) -> Axis:
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
    # times with unmeasured pairs imputed (None: see filled())
    filled_times: Optional[np.ndarray] = None
    # bool grid + (n_methods,): tie set (default: the best only)
    tied: Optional[np.ndarray] = None
    confidence: Optional[np.ndarray] = None  # float grid: largest p_best, NaN when unknown
    family: str = "openmpi"          # whose algorithm ids the methods hold (the table's)
    # what tree building derives from this map alone, kept for the next tree of the same map
    # (core.trees.tree: model selection builds several on each training map); a copy starts empty
    cache: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self):
        if self.tied is None:
            self.tied = ties.tie_sets(self.times, self.best)
        if self.confidence is None:
            self.confidence = np.full(self.best.shape, np.nan)

    @property
    def shape(self):
        return self.best.shape

    def filled(self):
        """filled_times, imputed on first use: most maps of out-of-sample folds are held-out
        sets, which never need it (a fifth of `collsel build`)."""
        if self.filled_times is None:
            skip = () if self.defer_index is None else (self.defer_index,)
            self.filled_times = imputation.impute(self.times, self.axes, skip)[0]
        return self.filled_times

    @property
    def imputed(self):
        """Bool grid + (n_methods,): the time in filled_times is an estimate."""
        return np.isfinite(self.filled()) & ~np.isfinite(self.times)

    @property
    def candidates(self):
        """Int grid: how many methods were measured in each cell."""
        return np.isfinite(self.times).sum(axis=-1)

    def scored_times(self):
        """The time each method is scored at in each cell: measured, else imputed but never below
        the cell's best measured time (an estimate is not credited with beating a measurement);
        NaN on cells where nothing was measured, and for "defer" where the baseline was not."""
        clipped = np.where(self.imputed, np.fmax(self.filled(), self.best_time[..., None]),
                           self.filled())
        return np.where(self.measured[..., None], clipped, np.nan)

    @property
    def reference_time(self):
        """Float grid: the time penalties are relative to (core.maps.cell_cost: the fastest forced
        method measured in the cell), NaN where no forced method was measured."""
        return cell_cost.reference_time(self.times, self.defer_index)

    @property
    def inserted(self) -> bool:
        """Values were inserted between the measured ones (interpolated_map): some P or m holds
        no measured cell, which the axes of a table's own values never do."""
        rest = tuple(range(2, self.measured.ndim))
        return not (self.measured.any(axis=(1,) + rest).all()
                    and self.measured.any(axis=(0,) + rest).all())

    @property
    def has_default(self):
        """The MPI's default (algorithm 0) was measured somewhere on this map."""
        return bool(np.isfinite(self.baseline_time).any())

    @property
    def defer_index(self):
        """Index of "defer to the MPI" (Method(0, 0, 0)) among the methods, None if absent
        (kept in `cache`: scoring asks it thousands of times a recommendation)."""
        if "defer_index" not in self.cache:
            self.cache["defer_index"] = (self.methods.index(DEFER) if DEFER in self.methods
                                         else None)
        return self.cache["defer_index"]

    def method_names(self) -> list:
        return [describe(self.collective, m, self.family) for m in self.methods]

    def content_key(self) -> tuple:
        """Every field but `cache`, as a hashable value: maps with equal keys are equal, so
        what is derived from one holds for the other (core.evaluate.model_selection shares a
        training set's trees by it)."""
        arrays = (self.times, self.measured, self.best, self.best_time, self.baseline_time,
                  self.filled_times, self.tied, self.confidence)
        return (self.collective, self.family,
                tuple((a.name, a.kind, tuple(a.values), tuple(a.labels), tuple(a.cuts))
                      for a in self.axes),
                tuple(self.methods),
                tuple(None if a is None else (a.dtype.str, a.shape,
                                              np.ascontiguousarray(a).tobytes())
                      for a in arrays))


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


def binned_axis(name, found):
    """The axis of a binned z (core.maps.zbins.Bins): its bins' values, cut by the midpoint rule
    between the values either side of each boundary."""
    cuts = [midpoint_cuts([low, high], LINEAR)[0] for low, high in zip(found.lows, found.highs)]
    return Axis(name, LINEAR, list(found.values), [str(v) for v in found.values], cuts)


DEFER = Method(algorithms.BASELINE_ALGORITHM, 0, 0)


@dataclass(frozen=True)
class MapSettings:
    """How a table becomes a map, so training folds are mapped exactly as the whole table:
    the third axis column, the tie tolerance (percent) and whether "defer" is a candidate."""
    z: Optional[str] = None
    tolerance: Optional[float] = None
    defer: bool = True
    interpolate: bool = False

    def build(self, table):
        dmap = build_map(table, self.z, self.tolerance, self.defer)
        return interpolated_map(dmap) if self.interpolate else dmap

    def flags(self):
        """The command-line words that give these settings."""
        return ((["--z", self.z] if self.z else [])
                + ([] if self.tolerance is None else ["--tolerance", f"{self.tolerance:g}"])
                + ([] if self.defer else ["--no-defer"])
                + (["--interpolate"] if self.interpolate else []))


def interpolated_map(dmap):
    """The map with values inserted between its measured P and m, each inserted cell decided
    by the method of least interpolated time (core.maps.interpolated); unchanged when no gap
    holds an integer. A map's inserted values are never measured, so slicing the measured
    values out of it (core.evaluate.fold_maps) and inserting again gives the same map."""
    gaps = interpolated.with_gaps(dmap.axes, dmap.times, dmap.baseline_time, dmap.tied,
                                  make_axis)
    if gaps is None:
        return dmap
    axes, times, base, tied, guess = gaps
    out = from_times(dmap.collective, axes, dmap.methods, times, base, dmap.family, tied=tied,
                     guess=guess)
    within = cells_within(out, dmap)
    out.confidence[within] = dmap.confidence
    # the measured cells' times as the map scores them (its imputation, not one redone on the
    # longer axes, where the nearest cell in index space differs); the inserted cells are
    # unmeasured and never scored
    out.filled_times = np.full(out.times.shape, np.nan)
    out.filled_times[within] = dmap.filled()
    return out


def cells_within(larger, dmap):
    """The index (np.ix_) of `dmap`'s cells on the axes of `larger`, a map whose axes hold
    every value of dmap's (its interpolated map): larger_grid[cells_within(...)] is on dmap's
    grid."""
    return np.ix_(*[np.searchsorted(big.values, own.values)
                    for big, own in zip(larger.axes, dmap.axes)])


def build_map(table, z_column=None, tolerance=None, defer=True):
    """The decision map of a table holding one collective. `tolerance` (percent or None) widens
    every tie set (core.maps.ties); `defer` makes the baseline rows, where present, the candidate
    "defer to the MPI" (Method(0, 0, 0))."""
    if tolerance is not None and not 0 < tolerance <= 1000:
        raise InputError(f"--tolerance must be a percentage in (0, 1000], not {tolerance}")
    collectives = set(table.collective.tolist())
    if len(collectives) != 1:
        raise InputError(f"a decision map needs one collective, got {sorted(collectives)}")
    collective = collectives.pop()
    binned = None
    if z_column and zbins.binned(z_column):
        table, binned = zbins.bin_table(table, z_column)
    baseline = table.algorithm == algorithms.BASELINE_ALGORITHM
    cand = ~baseline
    if not cand.any():
        files = ", ".join(s.path for s in table.sources) or collective
        raise InputError(f"{files}: {collective} has only baseline (algorithm 0) rows; nothing "
                         "to choose from (measure the algorithms too)")
    z_raw = table.column(z_column).tolist() if z_column else None
    on_axes = cand | (baseline & bool(defer))    # with defer, baseline-only points are cells
    axes = [make_axis("comm_size", LINEAR, table.comm_size[on_axes].tolist()),
            make_axis("msg_size", LOG2, table.msg_size[on_axes].tolist())]
    if z_column:
        rows = np.flatnonzero(on_axes)
        axes.append(z_axis(z_column, [z_raw[i] for i in rows], [table.origin[i] for i in rows])
                    if binned is None else binned_axis(z_column, binned))

    # Methods sorted as Method orders them (algorithm, segsize, faninout): np.unique's row order.
    keys = np.stack([table.algorithm, table.segsize, table.faninout], axis=1).astype(np.int64)
    unique, inverse = np.unique(keys[cand], axis=0, return_inverse=True)
    methods = [Method(*map(int, k)) for k in unique]
    method_of_row = np.full(len(table), -1, dtype=np.int64)
    method_of_row[cand] = inverse.reshape(-1)
    shape = tuple(len(a.values) for a in axes)

    coords = cells_of_rows(table, axes, z_raw)
    on_grid = np.all([c >= 0 for c in coords], axis=0)
    base = np.full(shape, np.inf)
    brows = np.flatnonzero(baseline & on_grid)
    np.minimum.at(base, tuple(c[brows] for c in coords), table.time_us[brows])
    base[np.isinf(base)] = np.nan
    if defer and brows.size:
        methods.append(DEFER)
        method_of_row[baseline] = len(methods) - 1

    rows = np.flatnonzero(on_axes & on_grid)
    rows = rows[np.argsort(-table.time_us[rows], kind="stable")]   # the least of duplicates wins
    where = tuple(c[rows] for c in coords) + (method_of_row[rows],)
    times = np.full(shape + (len(methods),), np.nan)
    times[where] = table.time_us[rows]

    column = {name: _row_values(table, name, rows, where, times.shape, *limits)
              for name, limits in (("tied", (0, 1)), ("ci_halfwidth_us", (0, np.inf)),
                                   ("p_best", (0, 1)))}
    return from_times(collective, axes, methods, times, base, table.family, tolerance,
                      column["tied"], column["ci_halfwidth_us"], column["p_best"])


def from_times(collective, axes, methods, times, base, family="openmpi", tolerance=None,
               tied_column=None, ci=None, p_best=None, tied=None, guess=None):
    """The map of a grid of measured times (grid + (n_methods,), NaN = unmeasured) and baseline
    times: best method, nearest fill, tie sets, imputation. The one assembly of a map, for a
    table (build_map) and for the training maps of out-of-sample folds (core.evaluate.fold_maps),
    which slice or average a map's times instead of rebuilding a table. `tied`: tie sets known
    already (a slice of a map's), kept where still measured; `guess`: an int grid naming the
    method of unmeasured cells where it is >= 0 (interpolated_map's), the nearest measured
    cell's taken only where it is not."""
    measured = np.isfinite(times).any(axis=-1)
    filled_times = np.where(np.isfinite(times), times, np.inf)
    best = np.argmin(filled_times, axis=-1)   # first minimum: lowest method index wins ties
    best_time = np.where(measured, np.min(filled_times, axis=-1), np.nan)
    guessed = np.zeros_like(measured)
    if guess is not None:
        guessed = ~measured & (guess >= 0)
        best = np.where(guessed, guess, best)
    if (~measured & ~guessed).any() and measured.any():
        from scipy import ndimage   # imported here: SciPy costs every command ~1 s to load
        nearest = ndimage.distance_transform_edt(~measured, return_distances=False,
                                                 return_indices=True)
        best = np.where(guessed, best, best[tuple(nearest)])
    best = best.astype(np.int64)
    tie = ties.tie_sets(times, best, tied_column, ci, tolerance)
    if tied is not None:
        tie |= tied & np.isfinite(times)
    return DecisionMap(collective, axes, methods, times, measured, best, best_time, base,
                       None, tie, ties.confidence(p_best), family)


def _row_values(table, name, rows, where, shape, low, high):
    """An optional numeric column of the given rows on the grid (NaN where empty); None when the
    table lacks the column. A value that is no number in [low, high] is a located error."""
    if name not in table.extra:
        return None
    out = np.full(shape, np.nan)
    raw = np.char.strip(np.asarray(table.extra[name], dtype=str)[rows])
    try:
        parsed = np.where(raw == "", "nan", raw).astype(float)
        bad = ~np.isnan(parsed) & ~((parsed >= low) & (parsed <= high))
    except ValueError:      # some text is no number: find it below
        parsed, bad = None, None
    if parsed is None or bad.any():
        for k, text in enumerate(raw.tolist()):
            try:
                value = float(text) if text else np.nan
            except ValueError:
                value = -np.inf
            if text and not low <= value <= high:
                raise InputError(f"{table.origin[rows[k]]}: {name} {text[:40]!r} is not a "
                                 f"number in [{low}, {high}]")
    out[where] = parsed
    return out


def cells_of_rows(table, axes, z_raw):
    """Grid index of every row on each axis, -1 where the value is not an axis value."""
    raw = [table.comm_size, table.msg_size] + ([z_raw] if z_raw else [])
    out = []
    for axis, column in zip(axes, raw):
        if axis.kind == CATEGORY:
            lookup = {lab: i for i, lab in enumerate(axis.labels)}
            out.append(np.array([lookup.get(v, -1) for v in column], dtype=np.int64))
            continue
        if isinstance(column, list):        # a numeric third axis, as text
            column = np.array([int(v) for v in column], dtype=np.int64)
        known = np.asarray(axis.values, dtype=column.dtype)
        index = np.minimum(np.searchsorted(known, column), len(known) - 1)
        out.append(np.where(known[index] == column, index, -1).astype(np.int64))
    return out
