"""A measured third axis, binned: `collsel build --z probe_us` makes the octree's z cuts
thresholds of the probe (issue 19).

Which axes: a z column whose name ends in `_us` (a time in microseconds, continuous by nature,
every launch a different value). Integer columns such as ppn keep one cell per value and text
columns are categories (core.maps.decision_map.z_axis).

The rule (`bins`, the one implementation):
  1. every value in whole microseconds, rounded down: the axis compares int64 values, as the
     emitted code and the runtime do (pass floor(probe_us) to collsel_tree_decide3);
  2. the values of the (P, m) cells: one per distinct (P, m, value) (every method of a paired
     launch shares its probe, so methods do not weigh);
  3. BINS equal-count bins at the quantiles: boundary k (k = 1 .. BINS-1) goes after the sorted
     distinct value whose share of the cells at or below it is nearest k / BINS (the lower on a
     tie), so a boundary always lies between two different whole-microsecond values (a cut the
     data supports at the axis' resolution); boundaries that land on the same place merge, so
     data with fewer distinct values give fewer bins (one value: one bin, no cut);
  4. the cut between two bins is the midpoint rule of every numeric axis
     (decision_map.midpoint_cuts) between the largest value below the boundary and the smallest
     above it; a bin's axis value is its cells' median, rounded down (a value inside the bin).
Rows of one (P, m, method) that fall into one bin are one measurement: their times' mean (as
core.maps.third_axis pools ppn); their tie columns (tied, p_best, ci_halfwidth_us) describe none of
them and are left empty, so ties there come from the times alone.
"""
from dataclasses import dataclass

import numpy as np

from collsel.core.io import values as ranges
from collsel.errors import InputError

SUFFIX = "_us"
BINS = 4
TIE_COLUMNS = ("tied", "p_best", "ci_halfwidth_us")


def binned(column):
    """Whether a z column is binned (a time: its name ends in `_us`)."""
    return column.endswith(SUFFIX)


@dataclass
class Bins:
    values: list        # each bin's axis value (whole µs), increasing
    lows: list          # per boundary: the largest value below it
    highs: list         # per boundary: the smallest value above it


def bins(cell_values, n_bins=BINS):
    """The bins of the cells' whole-µs values (ints; rule above)."""
    u, counts = np.unique(np.asarray(cell_values, dtype=np.int64), return_counts=True)
    if u.size == 0:
        raise ValueError("no values to bin")
    below = np.cumsum(counts)[:-1]                     # cells at or below u[j], j < len(u) - 1
    targets = np.arange(1, n_bins) * counts.sum() / n_bins
    after = (np.unique(np.argmin(np.abs(below[None, :] - targets[:, None]), axis=1))
             if below.size else np.zeros(0, dtype=np.int64))
    edges = np.concatenate([[0], after + 1, [u.size]])
    reps = [int(np.floor(np.median(np.repeat(u[a:b], counts[a:b]))))
            for a, b in zip(edges[:-1], edges[1:])]
    return Bins(reps, u[after].tolist(), u[after + 1].tolist())


def whole_us(table, column):
    """The column's values in whole microseconds (int64, rounded down); one located line for a
    value that is no finite number >= 0 or exceeds the z range."""
    raw = np.char.strip(np.asarray(table.column(column), dtype=str))
    out = np.empty(raw.size, dtype=np.int64)
    high = ranges.Z_VALUE[1]
    for i, text in enumerate(raw.tolist()):
        try:
            value = float(text)
        except ValueError:
            value = float("nan")
        if not 0 <= value <= high:
            raise InputError(f"{table.origin[i]}: {column} {text[:40]!r} is not a time in µs "
                             "(a number >= 0): a binned third axis needs one in every row")
        out[i] = int(np.floor(value))
    return out


def bin_table(table, column):
    """(the table with `column` holding each row's bin value and the rows of one (P, m, method)
    in one bin merged, Bins)."""
    whole = whole_us(table, column)
    cells = np.unique(np.stack([table.comm_size.astype(np.int64),
                                table.msg_size.astype(np.int64), whole], axis=1), axis=0)
    found = bins(cells[:, 2])
    which = np.searchsorted(np.asarray(found.lows, dtype=np.int64), whole, side="left")
    keys = np.stack([table.comm_size.astype(np.int64), table.msg_size.astype(np.int64),
                     table.algorithm.astype(np.int64), table.segsize.astype(np.int64),
                     table.faninout.astype(np.int64), which], axis=1)
    # (one collective per map: build_map checks that before it reads any axis)
    unique, first, group = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    group = group.reshape(-1)
    size = np.bincount(group, minlength=len(unique))
    out = table.take(first)
    out.time_us = np.bincount(group, weights=table.time_us, minlength=len(unique)) / size
    out.extra = dict(out.extra)
    merged = size > 1
    for name in TIE_COLUMNS:
        if name in out.extra and merged.any():
            column_values = np.asarray(out.extra[name], dtype=object)
            column_values[merged] = ""
            out.extra[name] = column_values
    out.extra[column] = np.asarray([str(found.values[b]) for b in which[first]], dtype=object)
    return out, found
